/*
** alloc_options.c — the MEMINST parser.
**
** MEMINST is a comma-separated list of items; an item is a mode word
** (off, mis, mim) or key=value.  The value is parsed in place, as pointer and
** length pairs, with no copy and no allocation, because this runs on the
** first malloc of the process, possibly before libc has finished starting.
** A malformed item yields one line naming it and saying what is wrong.
** The whole value is checked before anything is applied.
*/
#include "alloc_int.h"

#include <signal.h>
#include <string.h>

#include "meminst-nearest.h"

typedef struct opt_span_s {
	const char *p;
	size_t n;
} opt_span_t;

static bool opt_is(opt_span_t s, const char *word)
{
	return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

/* The message quotes the item (cut at 92 characters) and says why. */
#define OPT_FAIL(why) opt_fail(err, errlen, "item", item, why)

/*
** Quote the text in at most 92 characters (then "..."), with control
** bytes written as \xNN so that the message stays on one line and cannot
** drive the terminal.
*/
static void opt_quote(opt_span_t text, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < text.n && o + 5 < len; i++) {
		unsigned char c = (unsigned char)text.p[i];
		if (o >= 92) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f)
			o += (size_t)alloc_fmt(out + o, len - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
}

static int opt_fail(char *err, size_t errlen, const char *what, opt_span_t text, const char *why)
{
	char quoted[92 + 8];
	opt_quote(text, quoted, sizeof quoted);
	alloc_fmt(err, errlen, "bad MEMINST %s '%s': %s", what, quoted, why);
	return -1;
}

/* Leading decimal digits of s as a number; *used = how many were read. */
static int opt_number(opt_span_t s, uint64_t *out, size_t *used)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) {
		uint64_t digit = (uint64_t)(s.p[i] - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	*used = i;
	*out = v;
	return i ? 0 : -1;
}

static const char opt_no_duration[] = "expected a duration such as 100ms or 1s";

static const char *opt_duration(opt_span_t v, uint64_t *ns)
{
	uint64_t n;
	size_t used;
	if (opt_number(v, &n, &used) < 0)
		return opt_no_duration;
	opt_span_t unit = {v.p + used, v.n - used};
	static const struct { const char *u; uint64_t mul; } units[] = {
		{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull},
		{"m", 60000000000ull}};
	if (unit.n == 0)
		return "missing unit (use ns, us, ms, s or m)";
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (opt_is(unit, units[i].u)) {
			if (n > UINT64_MAX / units[i].mul)
				return "duration too large";
			*ns = n * units[i].mul;
			return *ns ? NULL : "duration must be above zero";
		}
	return "unknown unit (use ns, us, ms, s or m)";
}

static const char *opt_bytes(opt_span_t v, uint64_t *bytes)
{
	uint64_t n;
	size_t used;
	if (opt_number(v, &n, &used) < 0)
		return "expected a size such as 524288, 512k or 1M";
	opt_span_t unit = {v.p + used, v.n - used};
	static const struct { const char *u; unsigned shift; } units[] = {
		{"", 0}, {"b", 0}, {"B", 0}, {"k", 10}, {"K", 10}, {"KiB", 10},
		{"m", 20}, {"M", 20}, {"MiB", 20}, {"g", 30}, {"G", 30}, {"GiB", 30}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (opt_is(unit, units[i].u)) {
			if (n > (UINT64_MAX >> units[i].shift))
				return "size too large";
			*bytes = n << units[i].shift;
			return *bytes ? NULL : "size must be above zero";
		}
	return "unknown size unit (use k, M or G)";
}

/* WORD+WORD…: a bit set, bit i for names[i].  NULL or what is wrong. */
static const char *opt_words(opt_span_t v, const char *const *names, unsigned count,
			     unsigned *set, const char *why)
{
	*set = 0;
	for (size_t i = 0; i <= v.n;) {
		size_t j = i;
		while (j < v.n && v.p[j] != '+')
			j++;
		opt_span_t w = {v.p + i, j - i};
		unsigned k = 0;
		while (k < count && !opt_is(w, names[k]))
			k++;
		if (k == count)
			return why;
		*set |= 1u << k;
		i = j + 1;
	}
	return NULL;
}

/* rss:LIMIT or cgroup:LIMIT of snapshot_at: N% (1 to 100) of the limit
** meminst(7) names, or a size; into *pct or *bytes (the other is 0). */
static const char *opt_watch(opt_span_t v, uint8_t *pct, uint64_t *bytes)
{
	uint64_t n;
	size_t used;
	*pct = 0, *bytes = 0;
	if (v.n > 1 && v.p[v.n - 1] == '%') {
		if (opt_number(v, &n, &used) < 0 || used != v.n - 1 || n < 1 || n > 100)
			return "rss: and cgroup: take a percentage from 1% to 100%, or a size such as 2G";
		*pct = (uint8_t)n;
		return NULL;
	}
	/* a bare number is refused: cgroup:90 meant 90% rather than 90 bytes */
	bool unit = opt_number(v, &n, &used) == 0 && used < v.n;
	const char *why = unit ? opt_bytes(v, bytes) : "";
	return why ? "rss: and cgroup: take a percentage from 1% to 100%, or a size such as 2G" : NULL;
}

/* snapshot_at=exit+peak+signal+rss:LIMIT+cgroup:LIMIT, or none. */
static const char *opt_snapshot_at(opt_span_t v, alloc_options_t *o)
{
	static const char *const triggers[] = {"exit", "peak", "signal"};
	static const char why[] = "expected triggers joined by '+': exit, peak, signal, rss:LIMIT, "
				  "cgroup:LIMIT or none";
	unsigned set = 0;
	o->snapshot_at = 0;
	if (opt_is(v, "none"))
		return NULL;
	for (size_t i = 0; i <= v.n;) {
		size_t j = i;
		while (j < v.n && v.p[j] != '+')
			j++;
		opt_span_t w = {v.p + i, j - i};
		bool rss = w.n > 4 && !memcmp(w.p, "rss:", 4), cg = w.n > 7 && !memcmp(w.p, "cgroup:", 7);
		unsigned bit = rss ? ALLOC_SNAP_RSS : ALLOC_SNAP_CGROUP;
		if ((rss || cg) && (set & bit))
			return "rss: and cgroup: each at most once";
		if (rss || cg) {
			opt_span_t lim = {w.p + (rss ? 4 : 7), w.n - (rss ? 4 : 7)};
			const char *bad = opt_watch(lim, rss ? &o->watch_rss_pct : &o->watch_cgroup_pct,
						    rss ? &o->watch_rss_bytes : &o->watch_cgroup_bytes);
			if (bad)
				return bad;
		} else if (opt_words(w, triggers, 3, &bit, why)) {
			return why;
		}
		set |= bit;
		i = j + 1;
	}
	o->snapshot_at = set;
	return NULL;
}

/* print=KIND+KIND…: status kinds to print on stderr at exit. */
static const char *opt_print(opt_span_t v, unsigned *set)
{
	static const char *const kinds[] = {"total", "allocators", "classes", "types", "threads"};
	return opt_words(v, kinds, 5, set,
			 "expected kinds joined by '+': total, allocators, classes, types, threads");
}

/*
** snapshot_signal=USR1|USR2|HUP|RTMIN+N|number.  The number is compared as
** read (64 bits) before any cast, so 2^32+9 is not SIGKILL.  A number must
** be a signal the program may own: not one that cannot be caught, not one
** that reports a fault (a crash would loop storing snapshots), and not one
** of the real-time signals below SIGRTMIN that glibc keeps for itself.
*/
static const char *opt_signal(opt_span_t v, int *sig)
{
	uint64_t n;
	size_t used;
	if (v.n > 3 && memcmp(v.p, "SIG", 3) == 0)
		v.p += 3, v.n -= 3;
	if (opt_is(v, "USR1"))
		*sig = SIGUSR1;
	else if (opt_is(v, "USR2"))
		*sig = SIGUSR2;
	else if (opt_is(v, "HUP"))
		*sig = SIGHUP;
	else if (v.n > 6 && memcmp(v.p, "RTMIN+", 6) == 0 &&
		 opt_number((opt_span_t){v.p + 6, v.n - 6}, &n, &used) == 0 && used == v.n - 6) {
		if (n > (uint64_t)(SIGRTMAX - SIGRTMIN))
			return "RTMIN+N needs N from 0 to SIGRTMAX-SIGRTMIN";
		*sig = SIGRTMIN + (int)n;
	} else if (opt_number(v, &n, &used) == 0 && used == v.n) {
		if (n < 1 || n > (uint64_t)SIGRTMAX)
			return "no such signal number";
		if (n == SIGKILL || n == SIGSTOP)
			return "a signal that cannot be caught cannot be used";
		if (n == SIGSEGV || n == SIGBUS || n == SIGFPE || n == SIGILL)
			return "a signal that reports a fault cannot be used";
		if (n > SIGSYS && n < (uint64_t)SIGRTMIN)
			return "a signal glibc reserves for itself cannot be used";
		*sig = (int)n;
	} else
		return "expected USR1, USR2, HUP, RTMIN+N or a signal number";
	return NULL;
}

static const char *opt_switch(opt_span_t v, bool *out)
{
	if (opt_is(v, "on") || opt_is(v, "1") || opt_is(v, "yes") || opt_is(v, "true"))
		*out = true;
	else if (opt_is(v, "off") || opt_is(v, "0") || opt_is(v, "no") || opt_is(v, "false"))
		*out = false;
	else
		return "expected on/off, yes/no, true/false or 1/0";
	return NULL;
}

/*
** site_skip=NAME+NAME…: allocation wrappers whose frames are skipped when
** naming a site, besides the built-in list (meminst-wrappers.h: GLib's
** g_malloc, xmalloc, zmalloc …); site_skip=none: not even those.  A name
** is a symbol as the object file has it (C++: mangled), of letters,
** digits, '_', '.' and '$'; a trailing '*' matches every name it begins.
*/
#define OPT_SITE_SKIP_MAX 32
static const char *opt_site_skip(opt_span_t v, alloc_options_t *o)
{
	static const char why[] = "expected function names joined by '+' (a trailing * matches the names "
				  "it begins), at most 32";
	unsigned names = 0;
	o->site_skip_none = opt_is(v, "none");
	if (o->site_skip_none) {
		o->site_skip_len = 0;
		return NULL;
	}
	for (size_t at = 0; at <= v.n; names++) {
		size_t len = 0;
		while (at + len < v.n && v.p[at + len] != '+')
			len++;
		bool star = len > 0 && v.p[at + len - 1] == '*';
		if (len == star || names == OPT_SITE_SKIP_MAX) /* empty, or '*' alone */
			return why;
		for (size_t i = at; i < at + len - star; i++) {
			char c = v.p[i];
			if (c != '_' && c != '.' && c != '$' && !(c >= '0' && c <= '9') &&
			    !((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
				return why;
		}
		at += len + 1;
	}
	o->site_skip = v.p;
	o->site_skip_len = v.n;
	return NULL;
}

/* Every key, for the "did you mean" hint and the list of known keys. */
#define OPT_KEYS "backend", "snapshot", "snapshot_at", "run_dir", "run_pidns", "snapshot_signal", "peak_growth", "site_depth", "site_skip", \
	"interval", "interval_content", "trace", "sample", "sample_clock", "alloc_sample", \
	"sample_counts", "sample_depth", "trace_file", "trace_threads", "trace_output", "trace_sites", "control", \
	"switch_signal", "print", "on_error", "quiet", "leak_check", "leak_exit_code", "leak_threshold"
static const char OPT_UNKNOWN_KEY[] = "unknown key";

/* leak_check=on|off|exit, leak_exit_code=N, leak_threshold=BYTES; NULL
** when fine, OPT_UNKNOWN_KEY when k is none of them. */
static const char *opt_leak(opt_span_t k, opt_span_t v, alloc_options_t *o)
{
	uint64_t n;
	size_t used;
	if (opt_is(k, "leak_check")) {
		if (opt_is(v, "on"))
			o->leak_check = ALLOC_LEAK_CHECK_ON;
		else if (opt_is(v, "off"))
			o->leak_check = ALLOC_LEAK_CHECK_OFF;
		else if (opt_is(v, "exit"))
			o->leak_check = ALLOC_LEAK_CHECK_EXIT;
		else
			return "expected on, off or exit";
	} else if (opt_is(k, "leak_exit_code")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n || n == 0 || n > 255)
			return "expected an exit status from 1 to 255";
		o->leak_exit_code = (int)n;
	} else if (opt_is(k, "leak_threshold")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n)
			return "expected a number of bytes";
		o->leak_threshold = n;
	} else {
		return OPT_UNKNOWN_KEY;
	}
	return NULL;
}

/* Apply one key=value item.  Returns NULL or what is wrong with it. */
static const char *opt_keyvalue(opt_span_t k, opt_span_t v, alloc_options_t *o)
{
	uint64_t n;
	size_t used;
	if (v.n == 0)
		return "empty value";
	if (opt_is(k, "backend")) {
		if (opt_is(v, "system"))
			o->backend = ALLOC_BACKEND_SYSTEM;
		else if (opt_is(v, "jemalloc"))
			o->backend = ALLOC_BACKEND_JEMALLOC;
		else
			return "expected system or jemalloc";
	} else if (opt_is(k, "snapshot")) {
		o->snapshot = v.p;
		o->snapshot_len = v.n;
	} else if (opt_is(k, "run_dir")) {
		o->run_dir = v.p;
		o->run_dir_len = v.n;
	} else if (opt_is(k, "run_pidns")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n)
			return "expected a number (the inode of a pid namespace)";
		o->run_pidns = n;
	} else if (opt_is(k, "snapshot_at")) {
		o->snapshot_at_given = true;
		return opt_snapshot_at(v, o);
	} else if (opt_is(k, "interval")) {
		o->interval_auto = opt_is(v, "auto");
		if (o->interval_auto) {
			o->interval_ns = ALLOC_INTERVAL_AUTO_FIRST_NS;
			return NULL;
		}
		const char *why = opt_duration(v, &o->interval_ns);
		/* a word that is no number may have meant the keyword */
		return why == opt_no_duration
			? "expected a duration such as 100ms or 1s, or auto" : why;
	} else if (opt_is(k, "interval_content")) {
		if (opt_is(v, "status"))
			o->interval_status = true;
		else if (opt_is(v, "map"))
			o->interval_status = false;
		else
			return "expected status or map";
	} else if (opt_is(k, "trace")) {
		if (opt_is(v, "wall"))
			o->trace_clock = 1;
		else if (opt_is(v, "cpu"))
			o->trace_clock = 2;
		else
			return "expected wall or cpu";
	} else if (opt_is(k, "sample")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n || n == 0 || n > 10000)
			return "expected a rate in Hz from 1 to 10000";
		o->sample_hz = (unsigned)n;
	} else if (opt_is(k, "sample_clock")) {
		if (opt_is(v, "wall"))
			o->sample_clock = 1;
		else if (opt_is(v, "cpu"))
			o->sample_clock = 2;
		else
			return "expected cpu or wall";
	} else if (opt_is(k, "alloc_sample")) {
		return opt_bytes(v, &o->alloc_sample);
	} else if (opt_is(k, "sample_counts")) {
		return opt_switch(v, &o->sample_counts);
	} else if (opt_is(k, "sample_depth")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n || n == 0 || n > 1024)
			return "expected a number of frames from 1 to 1024";
		o->sample_depth = (unsigned)n;
	} else if (opt_is(k, "site_depth")) {
		if (opt_is(v, "user"))
			o->site_depth = ALLOC_SITE_DEPTH_USER;
		else if (opt_number(v, &n, &used) < 0 || used != v.n || n == 0 || n > ALLOC_SITE_DEPTH_MAX)
			return "expected user or a number of frames from 1 to 32";
		else
			o->site_depth = n == 1 ? 0 : (int)n;
	} else if (opt_is(k, "site_skip")) {
		return opt_site_skip(v, o);
	} else if (opt_is(k, "trace_file")) {
		o->trace_file = v.p;
		o->trace_file_len = v.n;
	} else if (opt_is(k, "trace_threads")) {
		if (opt_is(v, "all"))
			o->trace_threads = 1;
		else if (opt_is(v, "family"))
			o->trace_threads = 2;
		else
			return "expected all or family";
	} else if (opt_is(k, "trace_output")) {
		if (opt_is(v, "events"))
			o->trace_output = 1;
		else if (opt_is(v, "profile"))
			o->trace_output = 2;
		else
			return "expected events or profile";
	} else if (opt_is(k, "trace_sites")) {
		bool on;
		const char *why = opt_switch(v, &on);
		o->trace_sites = why ? 0 : on ? 2 : 1;
		return why;
	} else if (opt_is(k, "control")) {
		return opt_switch(v, &o->control);
	} else if (opt_is(k, "snapshot_signal")) {
		return opt_signal(v, &o->snapshot_signal);
	} else if (opt_is(k, "switch_signal")) {
		if (opt_is(v, "none"))
			return o->switch_signal = 0, NULL;
		return opt_signal(v, &o->switch_signal);
	} else if (opt_is(k, "peak_growth")) {
		if (opt_number(v, &n, &used) < 0 || used != v.n || n == 0 || n > 10000)
			return "expected a percentage from 1 to 10000";
		o->peak_growth = (unsigned)n;
	} else if (opt_is(k, "on_error")) {
		if (opt_is(v, "report"))
			o->on_error_abort = false;
		else if (opt_is(v, "abort"))
			o->on_error_abort = true;
		else
			return "expected report or abort";
	} else if (opt_is(k, "print")) {
		return opt_print(v, &o->print_kinds);
	} else if (opt_is(k, "quiet")) { /* notes: the notes only, for meminst -q */
		bool notes = opt_is(v, "notes");
		const char *why = notes ? (o->quiet = false, NULL) : opt_switch(v, &o->quiet);
		o->quiet_notes = notes || o->quiet;
		return why ? "expected on/off, yes/no, true/false or 1/0, or notes" : NULL;
	} else {
		return opt_leak(k, v, o);
	}
	return NULL;
}

/*
** An unknown key or mode: name the nearest known word when the item looks
** like a typo of one ("did you mean"), else list them all.
*/
static int opt_fail_unknown(char *err, size_t errlen, opt_span_t item, opt_span_t word, bool key)
{
	static const char *const keys[] = {OPT_KEYS};
	static const char *const modes[] = {"off", "mis", "mim"};
	const char *near = key ? meminst_nearest(word.p, word.n, keys, sizeof keys / sizeof keys[0])
			       : meminst_nearest(word.p, word.n, modes, 3);
	char why[400];
	if (near) {
		alloc_fmt(why, sizeof why, "unknown %s (did you mean '%s'?)", key ? "key" : "mode", near);
	} else if (key) {
		size_t n = (size_t)alloc_fmt(why, sizeof why, "unknown key (known:");
		for (size_t i = 0; i < sizeof keys / sizeof keys[0] && n < sizeof why; i++)
			n += (size_t)alloc_fmt(why + n, sizeof why - n, "%s %s", i ? "," : "", keys[i]);
		if (n + 1 < sizeof why)
			strcpy(why + n, ")");
	} else
		alloc_fmt(why, sizeof why, "unknown mode (use off, mis or mim, or key=value)");
	return opt_fail(err, errlen, "item", item, why);
}

int alloc_options_parse(const char *value, alloc_options_t *out, char *err, size_t errlen)
{
	alloc_options_t o;
	memset(&o, 0, sizeof o);
	o.mode = MEMINST_MODE_OFF;
	o.snapshot_signal = SIGUSR2;
	o.switch_signal = SIGRTMAX - 5; /* dormant's toggle: far from glibc's and the leak scan's */
	o.peak_growth = 10;
	size_t len = value ? strlen(value) : 0;
	for (size_t i = 0; value && i <= len;) {
		size_t j = i;
		while (j < len && value[j] != ',')
			j++;
		opt_span_t item = {value + i, j - i};
		i = j + 1;
		if (item.n == 0) {
			if (len == 0)
				break;
			return opt_fail(err, errlen, "value", (opt_span_t){value, len}, "empty item");
		}
		const char *eq = memchr(item.p, '=', item.n);
		if (!eq) {
			if (opt_is(item, "off"))
				o.mode = MEMINST_MODE_OFF;
			else if (opt_is(item, "mis"))
				o.mode = MEMINST_MODE_MIS;
			else if (opt_is(item, "mim"))
				o.mode = MEMINST_MODE_MIM;
			else
				return opt_fail_unknown(err, errlen, item, item, false);
			continue;
		}
		opt_span_t k = {item.p, (size_t)(eq - item.p)}, v = {eq + 1, item.n - k.n - 1};
		const char *why = opt_keyvalue(k, v, &o);
		if (why == OPT_UNKNOWN_KEY)
			return opt_fail_unknown(err, errlen, item, k, true);
		if (why)
			return OPT_FAIL(why);
	}
	if (o.trace_output == 2 && (o.sample_hz || o.sample_clock || o.alloc_sample || o.sample_counts)) {
		alloc_fmt(err, errlen, "bad MEMINST value: trace_output=profile keeps the exact profile "
				       "only; sampling needs trace_output=events");
		return -1;
	}
	if (!o.snapshot && ((o.snapshot_at_given && o.snapshot_at) || o.interval_ns)) {
		o.snapshot = "meminst.%p.db"; /* triggers without a path */
		o.snapshot_len = strlen(o.snapshot);
	}
	if (o.snapshot && !o.snapshot_at_given) /* snapshot=PATH alone: at exit */
		o.snapshot_at = ALLOC_SNAP_EXIT;
	*out = o;
	return 0;
}

/*
** The items that parse but whose feature is not part of this build yet.
** Running without them would leave the user silently without what they
** asked for, so the library refuses to start instead.
*/
int alloc_options_unsupported(const alloc_options_t *o, char *err, size_t errlen)
{
	const char *what = NULL;
	if (o->mode == MEMINST_MODE_OFF && o->snapshot && !o->control) {
		alloc_fmt(err, errlen, "MEMINST items snapshot, snapshot_at and interval need mode mis or mim, "
				       "or control=on (dormant: switched on by inspect start)");
		return -1;
	}
	if (o->mode == MEMINST_MODE_OFF && o->control && o->backend != ALLOC_BACKEND_SYSTEM) {
		alloc_fmt(err, errlen, "MEMINST off,control=on (dormant) needs backend=system: blocks made "
				       "while off must be glibc's to be freed after a switch on");
		return -1;
	}
	if (o->mode != MEMINST_MODE_MIM && (o->leak_check == ALLOC_LEAK_CHECK_ON || o->leak_exit_code)) {
		alloc_fmt(err, errlen, "MEMINST items leak_check=on and leak_exit_code need mode mim "
				       "(the leak scan reads the map of live blocks)");
		return -1;
	}
	if (!what)
		return 0;
	alloc_fmt(err, errlen, "MEMINST item '%s' is not yet supported by this build", what);
	return -1;
}
