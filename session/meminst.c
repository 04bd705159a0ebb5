/*
** meminst.c — the `meminst` launcher: run a program under libmeminst and
** leave one session database with everything the run recorded.
**
**   meminst [--mis|--mim] [--trace[=wall|cpu]] [--sample[=HZ]] ... -- PROGRAM ARGS
**
** The launcher turns its options into a MEMINST value, preloads the
** library, runs the program (sess_run.c) and gathers what every process of
** the run left in a private parts directory into the session database
** (sess_store.c).  It exits with the program's status; a program killed by
** a signal has the launcher end by the same signal, after the session is
** written.
*/
#include "sess_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meminst-nearest.h"

#ifndef MEMINST_LIBDIR
#define MEMINST_LIBDIR "/usr/local/lib"
#endif
#define MEMINST_SONAME "libmeminst.so.0"

bool sess_progress;

void sess_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(sess_progress ? "\r\033[Kmeminst: " : "meminst: ", stderr); /* over a progress line */
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *to)
{
	fputs("usage: meminst [OPTION]... [--] PROGRAM [ARGUMENT]...\n"
	      "Run PROGRAM under libmeminst and write one session database with its memory\n"
	      "timeline, snapshots (exit, peak, signal) and time profile.\n"
	      "\n"
	      "Memory:\n"
	      "  --mis                  status only: 16-byte headers, every kind's figures (default)\n"
	      "  --mim                  also the live block map: snapshots list every block\n"
	      "  --no-memory            no memory instrumentation (time profiling only)\n"
	      "  --backend=NAME         system (default) or jemalloc\n"
	      "  --control              every process listens on a control channel (forked\n"
	      "                         children too): 'inspect status --pid PID' while it runs\n"
	      "  --interval=DURATION    memory timeline period, e.g. 100ms, 1s (default 100ms;\n"
	      "                         0 for none)\n"
	      "  --snapshot-at=WHEN     which events store a snapshot: exit, peak, signal joined\n"
	      "                         by '+', or none (default exit+peak+signal)\n"
	      "  --site-depth=N|user    key allocation sites by N return addresses, or up to the\n"
	      "                         first frame in the program's own code (C++: the line\n"
	      "                         that filled the std:: container); default 1\n"
	      "  --site-skip=NAMES      allocation wrappers to see through when naming sites,\n"
	      "                         e.g. zmalloc,ngx_alloc (NAME* matches a prefix)\n"
	      "Time:\n"
	      "  --trace[=wall|cpu]     exact tracing of -finstrument-functions code (default wall)\n"
	      "  --sample[=HZ]          statistical sampling, HZ per second (default 100)\n"
	      "  --sample-clock=CLOCK   cpu (default: CPU time only) or wall (also while blocked)\n"
	      "  --alloc-sample=BYTES   a stack every BYTES allocated on average, e.g. 512k\n"
	      "  --sample-depth=N       frames kept per stack, 1 to 1024 (default 64); deeper\n"
	      "                         stacks end in a [truncated] frame\n"
	      "  --no-time              no time profiling (the default without --trace/--sample is\n"
	      "                         --sample=100)\n"
	      "Output:\n"
	      "  -o, --output=FILE      the session database (default meminst.PROGRAM.PID.db)\n"
	      "  -f, --force            replace FILE if it exists\n"
	      "  -q, --quiet            no summary line\n"
	      "  --library=PATH         the libmeminst.so to preload (default: $MEMINST_LIBRARY,\n"
	      "                         else " MEMINST_LIBDIR "/" MEMINST_SONAME ")\n"
	      "  -h, --help             this text\n"
	      "  -V, --version          the version\n"
	      "\n"
	      "Every process the program starts (fork, exec) writes into the same session,\n"
	      "told apart by pid.  The exit status is the program's.  See meminst(1).\n",
	      to);
}

/* DURATION: a decimal number and a unit (ns, us, ms, s, m), or 0. */
static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !isdigit((unsigned char)*s)) /* strtoull takes " -1" as 2^64-1 */
		return -1;
	static const struct { const char *unit; uint64_t mul; } units[] = {
	    {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000ull}};
	if (!*end && v == 0)
		return *ns = 0, 0;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end, units[i].unit) && !__builtin_mul_overflow(v, units[i].mul, ns))
			return 0;
	return -1;
}

/* BYTES: a number with an optional k, M, G (powers of 1024). */
static int parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !isdigit((unsigned char)*s) || v == 0)
		return -1;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024 * 1024 * 1024, end++;
	if (*end == 'i' && mul > 1)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	return *end || __builtin_mul_overflow(v, mul, out) ? -1 : 0;
}

/* A bad value: one line worded as inspect's ("--by takes type, class, …,
** not 'x'"), and exit 2. */
static void bad_value(const char *opt, const char *value, const char *expected)
{
	sess_error("--%s takes %s, not '%s' (see 'meminst --help')", opt, expected, value);
	exit(2);
}

enum { OPT_MIS = 256, OPT_MIM, OPT_NO_MEMORY, OPT_BACKEND, OPT_INTERVAL, OPT_TRACE, OPT_SAMPLE,
       OPT_SAMPLE_CLOCK, OPT_SAMPLE_DEPTH, OPT_ALLOC_SAMPLE, OPT_NO_TIME, OPT_LIBRARY, OPT_SNAPSHOT_AT,
       OPT_SITE_DEPTH, OPT_CONTROL, OPT_SITE_SKIP };

static const struct option long_opts[] = {
    {"mis", no_argument, NULL, OPT_MIS},
    {"mim", no_argument, NULL, OPT_MIM},
    {"no-memory", no_argument, NULL, OPT_NO_MEMORY},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"trace", optional_argument, NULL, OPT_TRACE},
    {"sample", optional_argument, NULL, OPT_SAMPLE},
    {"sample-clock", required_argument, NULL, OPT_SAMPLE_CLOCK},
    {"sample-depth", required_argument, NULL, OPT_SAMPLE_DEPTH},
    {"alloc-sample", required_argument, NULL, OPT_ALLOC_SAMPLE},
    {"no-time", no_argument, NULL, OPT_NO_TIME},
    {"snapshot-at", required_argument, NULL, OPT_SNAPSHOT_AT},
    {"site-depth", required_argument, NULL, OPT_SITE_DEPTH},
    {"control", no_argument, NULL, OPT_CONTROL},
    {"site-skip", required_argument, NULL, OPT_SITE_SKIP},
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"quiet", no_argument, NULL, 'q'},
    {"library", required_argument, NULL, OPT_LIBRARY},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* WHEN of --snapshot-at: "none", or exit, peak and signal joined by '+',
** each at most once (MEMINST's snapshot_at= takes the same words). */
static bool valid_snapshot_at(const char *s)
{
	if (!strcmp(s, "none"))
		return true;
	static const char *const words[] = {"exit", "peak", "signal"};
	unsigned seen = 0;
	for (;;) {
		size_t n = strcspn(s, "+");
		unsigned i = 0;
		while (i < 3 && !(strlen(words[i]) == n && !strncmp(s, words[i], n)))
			i++;
		if (i == 3 || (seen & 1u << i))
			return false;
		seen |= 1u << i;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

/* NAMES of --site-skip, joined by ',' or '+', as MEMINST's site_skip=
** value (joined by '+'), or NULL if a name is not a symbol name (letters,
** digits, '_', '.', '$', and a '*' at its end) or there are more than 32.
** The library checks the same. */
static const char *site_skip_value(const char *arg)
{
	static char v[2048];
	size_t n = strlen(arg), names = 1;
	if (n == 0 || n >= sizeof v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = arg[i];
		bool end = i + 1 == n || arg[i + 1] == ',' || arg[i + 1] == '+';
		bool sep = c == ',' || c == '+';
		if (sep && (i == 0 || end || ++names > 32))
			return NULL; /* an empty name */
		if (!sep && !isalnum((unsigned char)c) && !strchr("_.$", c) && !(c == '*' && end &&
		    i > 0 && arg[i - 1] != ',' && arg[i - 1] != '+'))
			return NULL;
		v[i] = sep ? '+' : c;
	}
	v[n] = 0;
	return v;
}

/* One option of the memory or time group. */
static void parse_one(int c, const char *arg, struct sess_opts *o, bool *no_time)
{
	static int mode_opt; /* the one of --mis, --mim, --no-memory given */
	uint64_t n;
	if (c == OPT_MIS || c == OPT_MIM || c == OPT_NO_MEMORY) {
		if (mode_opt && mode_opt != c) {
			sess_error("--mis, --mim and --no-memory: give one of them (see 'meminst --help')");
			exit(2);
		}
		mode_opt = c;
	}
	switch (c) {
	case OPT_MIS: o->mode = "mis"; break;
	case OPT_MIM: o->mode = "mim"; break;
	case OPT_NO_MEMORY: o->mode = "off"; break;
	case OPT_BACKEND:
		if (strcmp(arg, "system") && strcmp(arg, "jemalloc"))
			bad_value("backend", arg, "system or jemalloc");
		o->backend = arg;
		break;
	case OPT_INTERVAL:
		if (parse_duration(arg, &o->interval_ns) < 0)
			bad_value("interval", arg, "a duration such as 100ms or 1s, or 0");
		o->interval_text = arg;
		break;
	case OPT_TRACE:
		if (arg && strcmp(arg, "wall") && strcmp(arg, "cpu"))
			bad_value("trace", arg, "wall or cpu");
		o->trace_clock = arg ? arg : "wall";
		break;
	case OPT_SAMPLE:
		n = 100;
		if (arg && (parse_bytes(arg, &n) < 0 || strspn(arg, "0123456789") != strlen(arg) ||
			    n > 10000))
			bad_value("sample", arg, "a rate in Hz from 1 to 10000");
		o->sample_hz = (unsigned)n;
		break;
	case OPT_SAMPLE_CLOCK:
		if (strcmp(arg, "cpu") && strcmp(arg, "wall"))
			bad_value("sample-clock", arg, "cpu or wall");
		o->sample_clock = arg;
		break;
	case OPT_SAMPLE_DEPTH:
		if (parse_bytes(arg, &n) < 0 || strspn(arg, "0123456789") != strlen(arg) || n == 0 ||
		    n > 1024)
			bad_value("sample-depth", arg, "a number of frames from 1 to 1024");
		o->sample_depth = (unsigned)n;
		break;
	case OPT_ALLOC_SAMPLE:
		if (parse_bytes(arg, &o->alloc_sample) < 0)
			bad_value("alloc-sample", arg, "a size in bytes such as 524288 or 512k");
		break;
	case OPT_SNAPSHOT_AT:
		if (!valid_snapshot_at(arg))
			bad_value("snapshot-at", arg, "exit, peak and signal joined by '+', or none");
		o->snapshot_at = arg;
		break;
	case OPT_SITE_DEPTH:
		if (strcmp(arg, "user") && (parse_bytes(arg, &n) < 0 || strspn(arg, "0123456789") != strlen(arg) ||
					    n == 0 || n > 32))
			bad_value("site-depth", arg, "user or a number of frames from 1 to 32");
		o->site_depth = arg;
		break;
	case OPT_SITE_SKIP:
		if (!(o->site_skip = site_skip_value(arg)))
			bad_value("site-skip", arg, "expected function names joined by ',' (NAME* matches the "
				  "names it begins), at most 32");
		break;
	case OPT_CONTROL: o->control = true; break;
	case OPT_NO_TIME: *no_time = true; break;
	}
}

/* A mistyped option: one line, with the nearest option when it is a typo. */
static void bad_option(const char *arg, int c)
{
	const char *names[sizeof long_opts / sizeof long_opts[0]];
	size_t n = 0;
	for (const struct option *l = long_opts; l->name; l++)
		names[n++] = l->name;
	size_t len = strcspn(arg + 2, "=");
	const char *near = strncmp(arg, "--", 2) ? NULL : meminst_nearest(arg + 2, len, names, n);
	if (c == ':')
		sess_error("option '%s' needs a value (see 'meminst --help')", arg);
	else if (near)
		sess_error("unknown option '%.*s' (did you mean '--%s'?) (see 'meminst --help')", (int)len + 2, arg,
			   near);
	else if (strncmp(arg, "--", 2) && optopt)
		sess_error("unknown option '-%c' (see 'meminst --help')", optopt);
	else
		sess_error("unknown option '%s' (see 'meminst --help')", arg);
	exit(2);
}

static const char *parse_args(int argc, char **argv, struct sess_opts *o)
{
	const char *library = getenv("MEMINST_LIBRARY");
	bool no_time = false;
	int c;
	o->mode = "mis";
	o->interval_ns = 100000000;
	o->interval_text = "100ms";
	o->snapshot_at = "exit+peak+signal";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:fqhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'f': o->force = true; break;
		case 'q': o->quiet = true; break;
		case OPT_LIBRARY: library = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts("meminst " PACKAGE_VERSION); exit(0);
		case '?': case ':': bad_option(argv[optind - 1], c); break;
		default: parse_one(c, optarg, o, &no_time);
		}
	}
	if (optind >= argc) {
		sess_error("no program to run (meminst [OPTION]... -- PROGRAM [ARGUMENT]...)");
		exit(2);
	}
	o->argv = argv + optind;
	if (no_time && (o->trace_clock || o->sample_hz)) {
		sess_error("--no-time contradicts --trace and --sample");
		exit(2);
	}
	if (!no_time && !o->trace_clock && !o->sample_hz)
		o->sample_hz = 100;
	if (o->sample_clock && !o->sample_hz) {
		sess_error("--sample-clock needs sampling; this run has none (--trace without --sample, or --no-time)");
		exit(2);
	}
	if (o->control && !strcmp(o->mode, "off")) {
		sess_error("--control contradicts --no-memory (the channel stores memory snapshots)");
		exit(2);
	}
	return library;
}

/* The library to preload: an existing libmeminst, or exit. */
static const char *find_library(const char *given)
{
	static char path[PATH_MAX];
	char why[160];
	if (!given) {
		snprintf(path, sizeof path, "%s/%s", MEMINST_LIBDIR, MEMINST_SONAME);
		if (access(path, R_OK) < 0) {
			sess_error("%s not found: install meminst, or give --library=PATH or "
				   "MEMINST_LIBRARY", path);
			exit(2);
		}
		given = path;
	}
	if (sess_check_library(given, why, sizeof why) < 0) {
		sess_error("library %s: %s; the program was not started", given, why);
		exit(2);
	}
	return given;
}

/* The MEMINST value for the program: the options, with the parts paths. */
static char *build_meminst(const struct sess_opts *o, const char *parts)
{
	static char v[8192];
	size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(v + n, n < sizeof v ? sizeof v - n : 0, __VA_ARGS__))
	ADD("%s", o->mode);
	if (o->backend)
		ADD(",backend=%s", o->backend);
	if (strcmp(o->mode, "off")) {
		ADD(",snapshot=%s/mem.%%p.db,snapshot_at=%s", parts, o->snapshot_at);
		if (o->interval_ns)
			ADD(",interval=%s,interval_content=status", o->interval_text);
		if (o->site_depth)
			ADD(",site_depth=%s", o->site_depth);
		if (o->control)
			ADD(",control=on");
		if (o->site_skip)
			ADD(",site_skip=%s", o->site_skip);
	}
	if (o->trace_clock)
		ADD(",trace=%s", o->trace_clock);
	if (o->sample_hz)
		ADD(",sample=%u", o->sample_hz);
	if (o->sample_clock)
		ADD(",sample_clock=%s", o->sample_clock);
	if (o->alloc_sample)
		ADD(",alloc_sample=%llu", (unsigned long long)o->alloc_sample);
	if (o->sample_depth)
		ADD(",sample_depth=%u", o->sample_depth);
	if (o->trace_clock || o->sample_hz || o->alloc_sample)
		ADD(",trace_file=%s/trace.%%p", parts);
#undef ADD
	if (n >= sizeof v) {
		sess_error("the paths are too long for MEMINST");
		exit(2);
	}
	return v;
}

/* A private directory for the processes' parts: beside the output when its
** path can go into MEMINST (no comma), else in $TMPDIR. */
static char *make_parts_dir(const char *output)
{
	static char dir[PATH_MAX];
	const char *slash = output ? strrchr(output, '/') : NULL;
	int len = slash ? (int)(slash - output) : 1;
	const char *base = slash ? output : ".";
	if (slash == output)
		len = 1;
	const char *tmp = getenv("TMPDIR");
	if (memchr(base, ',', (size_t)len) || memchr(base, '=', (size_t)len))
		base = tmp && *tmp && !strchr(tmp, ',') ? tmp : "/tmp", len = (int)strlen(base);
	snprintf(dir, sizeof dir, "%.*s/.meminst-parts.XXXXXX", len, base);
	if (!mkdtemp(dir)) {
		sess_error("cannot create a directory for the run's data in %.*s: %s", len, base,
			   strerror(errno));
		exit(2);
	}
	if (dir[0] != '/') { /* the program may change directory */
		char cwd[PATH_MAX], abs[PATH_MAX];
		if (getcwd(cwd, sizeof cwd) && (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, dir) < sizeof abs)
			strcpy(dir, abs);
	}
	return dir;
}

static void remove_parts(const char *dir)
{
	char cmd[PATH_MAX + 32];
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(cmd, sizeof cmd, "%s/%s", dir, e->d_name);
		unlink(cmd);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void set_preload(const char *library)
{
	const char *old = getenv("LD_PRELOAD");
	static char v[PATH_MAX * 2];
	snprintf(v, sizeof v, "%s%s%s", library, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", v, 1);
}

/* End as the program did: its exit status, or its signal (no core dump of
** ours: the program's, if any, is the one that matters). */
static void exit_like(const struct sess_result *r)
{
	if (!r->exit_signal)
		exit(r->exit_code);
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	signal(r->exit_signal, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, r->exit_signal);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(r->exit_signal);
	exit(128 + r->exit_signal);
}

/* The progress line is redrawn with "\r" and ESC [K: not on a terminal
** that cannot erase a line (TERM unset, empty or dumb: an editor's shell
** buffer would show the escapes). */
static bool term_can_erase(void)
{
	const char *term = getenv("TERM");
	return term && *term && strcmp(term, "dumb") != 0;
}

int main(int argc, char **argv)
{
	struct sess_opts o = {0};
	const char *library = find_library(parse_args(argc, argv, &o));
	sess_progress = isatty(2) && term_can_erase();
	struct stat st;
	if (o.output && !*o.output) {
		sess_error("-o: an empty file name (see 'meminst --help')");
		return 2;
	}
	if (o.output && !o.force && stat(o.output, &st) == 0) {
		sess_error("%s exists; give another -o FILE, or -f to replace it", o.output);
		return 2;
	}
	/* -f replaces an old session, never a directory, device or FIFO */
	if (o.output && stat(o.output, &st) == 0 && !S_ISREG(st.st_mode)) {
		sess_error("%s is not a regular file; -f replaces only a file", o.output);
		return 2;
	}
	const char *parts = make_parts_dir(o.output);
	const char *env = build_meminst(&o, parts);
	if (getenv("MEMINST") && !o.quiet)
		sess_error("MEMINST in the environment is replaced by the options of meminst");
	setenv("MEMINST", env, 1);
	set_preload(library);

	struct sess_result res = {0};
	int ran = sess_run(o.argv, &res);
	unsetenv("LD_PRELOAD");
	if (ran < 0) {
		remove_parts(parts);
		return res.exit_code ? res.exit_code : 127;
	}
	char name[PATH_MAX];
	if (!o.output) {
		const char *base = strrchr(o.argv[0], '/') ? strrchr(o.argv[0], '/') + 1 : o.argv[0];
		snprintf(name, sizeof name, "meminst.%s.%ld.db", base, (long)res.pid);
		o.output = name;
	}
	struct sess_summary sum = {0};
	int stored = sess_store(o.output, parts, &o, &res, env, &sum);
	if (sess_progress) /* the progress line goes: the closing line or an error follows */
		fputs("\r\033[K", stderr);
	if (stored == 0) {
		remove_parts(parts);
		if (!o.quiet)
			fprintf(stderr, "meminst: %s: %d process%s, %d snapshot%s%s%s; read it with "
				"'inspect report %s'\n", o.output, sum.processes, sum.processes == 1 ? "" : "es",
				sum.snapshots, sum.snapshots == 1 ? "" : "s",
				sum.trace_bytes ? ", trace " : "", sum.trace_bytes ? sum.trace_text : "",
				o.output);
		/* said with -q too: part of the data is missing */
		if (sum.traces_cut)
			sess_error("the trace of process %ld is cut after %s (it has no end: a write failed, or "
				   "the process was killed or still runs); the session holds what was written%s",
				   sum.cut_pid, sum.cut_text,
				   sum.traces_cut > 1 ? " (and so for other processes)" : "");
		/* with time profiling every process that loads the library writes a trace */
		if (!sum.processes && (o.trace_clock || o.sample_hz || o.alloc_sample))
			sess_error("no process of the run loaded %s (a statically linked program is not "
				   "instrumented)", library);
	} else {
		sess_error("the run's data is kept in %s", parts);
	}
	exit_like(&res);
	return 0;
}
