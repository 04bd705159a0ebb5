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
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_int.h"

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

/* ------------------------------------------------------ command line -- */

/* The launcher's options: one table, read by the parser every command of
** inspect uses (reader/rd_args.c), which makes --help from it, checks
** the values it can (words, ranges, sizes, durations) and words every
** mistake the same way; the bash completion reads that --help. */
enum { OPT_MIS = RD_ID_OWN, OPT_MIM, OPT_NO_MEMORY, OPT_BACKEND, OPT_CONTROL, OPT_INTERVAL,
       OPT_SNAPSHOT_AT, OPT_SITE_DEPTH, OPT_SITE_SKIP, OPT_TRACE, OPT_SAMPLE, OPT_SAMPLE_CLOCK,
       OPT_ALLOC_SAMPLE, OPT_SAMPLE_DEPTH, OPT_NO_TIME, OPT_FORCE, OPT_QUIET, OPT_LIBRARY, OPT_VERSION,
       OPT_TRACE_SITES, OPT_LEAK_CHECK, OPT_LEAK_EXIT_CODE, OPT_LEAK_THRESHOLD, OPT_DORMANT };

static const char *const backend_words[] = {"system", "jemalloc", NULL};
static const char *const clock_words[] = {"wall", "cpu", NULL};
static const char *const sample_clock_words[] = {"cpu", "wall", NULL};
static const char *const interval_words[] = {"auto", NULL};

static const struct rd_option launcher_options[] = {
	{"", 0, RD_OT_FLAG, NULL, "Memory:"},
	{"mis", 0, RD_OT_FLAG, NULL, "status only: 16-byte headers, every kind's figures\n(the default)", OPT_MIS},
	{"mim", 0, RD_OT_FLAG, NULL, "also the live block map: snapshots list every block", OPT_MIM},
	{"no-memory", 0, RD_OT_FLAG, NULL, "no memory instrumentation (time profiling only)", OPT_NO_MEMORY},
	{"dormant", 0, RD_OT_FLAG, NULL, "off, at off's cost, until 'inspect start --pid PID'\n"
	 "switches it on (and 'inspect stop' off); no time\n"
	 "profiling unless asked for (--sample, --trace)", OPT_DORMANT},
	{"backend", 0, RD_OT_WORD, NULL, "the allocator underneath (default system)", OPT_BACKEND, 0, 0,
	 backend_words},
	{"control", 0, RD_OT_FLAG, NULL, "every process listens on a control channel (forked children\n"
	 "too): 'inspect status --pid PID' while it runs", OPT_CONTROL},
	{"interval", 0, RD_OT_DURATION, "DURATION|auto", "memory timeline period, e.g. 100ms, 1s; 0 for none;\n"
	 "auto (the default): 10ms, doubled every 16 snapshots up\n"
	 "to 10s, so that short and long runs get enough points", OPT_INTERVAL, 0, 0, interval_words},
	{"snapshot-at", 0, RD_OT_STR, "WHEN", "which events store a snapshot: exit, peak, signal,\n"
	 "rss:LIMIT, cgroup:LIMIT joined by '+', or none (default\n"
	 "exit+peak+signal); rss:90% or cgroup:90% of the memory\n"
	 "cgroup's limit, rss:2G: a map stored with fsync before\n"
	 "the OOM killer or SIGKILL can end the program", OPT_SNAPSHOT_AT},
	{"site-depth", 0, RD_OT_STR, "N|user", "key allocation sites by N return addresses (1 to 32), or\n"
	 "up to the first frame in the program's own code (C++: the\n"
	 "line that filled the std:: container); default user", OPT_SITE_DEPTH},
	{"site-skip", 0, RD_OT_STR, "NAMES", "allocation wrappers to see through when naming sites,\n"
	 "besides the built-in list (g_malloc, xmalloc, …), e.g.\n"
	 "my_alloc,pool_get* (NAME* matches a prefix); none: not even\n"
	 "the built-in ones", OPT_SITE_SKIP},
	{"leak-check", 0, RD_OT_FLAG, NULL, "with --mim: memcheck's leak classes in every map snapshot\n"
	 "(the exit snapshot has them without it): 'inspect leaks'", OPT_LEAK_CHECK},
	{"leak-exit-code", 0, RD_OT_INT, "N", "with --mim: end with status N when more bytes than\n"
	 "--leak-threshold are definitely lost at exit (for CI)", OPT_LEAK_EXIT_CODE, 1, 255},
	{"leak-threshold", 0, RD_OT_SIZE, "BYTES", "definitely lost bytes allowed by --leak-exit-code\n"
	 "(default 0)", OPT_LEAK_THRESHOLD, 0},
	{"", 0, RD_OT_FLAG, NULL, "Time:"},
	{"trace", 0, RD_OT_WORD, NULL, "exact tracing of code built with -finstrument-functions\n(default wall)",
	 OPT_TRACE, 0, 0, clock_words, true},
	{"trace-sites", 0, RD_OT_FLAG, NULL, "with --trace: record each call's call site too (callgrind\n"
	 "exports put calls on their lines; 24 bytes a call, not 8)", OPT_TRACE_SITES},
	{"sample", 0, RD_OT_INT, "HZ", "statistical sampling, HZ per second, 1 to 10000\n(default 100)",
	 OPT_SAMPLE, 1, 10000, NULL, true},
	{"sample-clock", 0, RD_OT_WORD, NULL, "cpu (default: CPU time only) or wall (also while blocked)", OPT_SAMPLE_CLOCK, 0, 0, sample_clock_words},
	{"alloc-sample", 0, RD_OT_SIZE, "BYTES", "a stack every BYTES allocated on average, e.g. 512k",
	 OPT_ALLOC_SAMPLE, 1},
	{"sample-depth", 0, RD_OT_INT, "N", "frames kept per stack, 1 to 1024 (default 64); deeper\n"
	 "stacks end in a [truncated] frame", OPT_SAMPLE_DEPTH, 1, 1024},
	{"no-time", 0, RD_OT_FLAG, NULL, "no time profiling (without --trace or --sample the default\n"
	 "is --sample=100)", OPT_NO_TIME},
	{"", 0, RD_OT_FLAG, NULL, "Output:"},
	RD_OPTION_OUTPUT("the session database (default meminst.PROGRAM.PID.db)"),
	{"force", 'f', RD_OT_FLAG, NULL, "replace FILE if it exists", OPT_FORCE},
	{"quiet", 'q', RD_OT_FLAG, NULL, "no summary line", OPT_QUIET},
	{"library", 0, RD_OT_FILE, "PATH", "the libmeminst.so to preload (default: $MEMINST_LIBRARY,\n"
	 "else the one installed with meminst, named by --version)", OPT_LIBRARY},
	{"version", 'V', RD_OT_FLAG, NULL, "the version and the library preloaded by default",
	 OPT_VERSION},
	RD_OPTION_END,
};

static const struct rd_cmd_spec launcher_spec = {
	NULL, "[OPTION]... [--] PROGRAM [ARGUMENT]...",
	"Run PROGRAM under libmeminst and write one session database with its memory\n"
	"timeline, snapshots (exit, peak, signal) and time profile.  The options end\n"
	"at PROGRAM: what follows it is the program's.\n",
	launcher_options, 0, INT_MAX,
	.prog = "meminst", .options_first = true,
	.epilog = "Every process the program starts (fork, exec) writes into the same session,\n"
		  "told apart by pid.  The exit status is the program's.  See meminst(1).\n",
};

/* LIMIT of rss:LIMIT and cgroup:LIMIT: 1% to 100%, or a size above zero
** with a unit MEMINST takes there (alloc_options.c: k, K, KiB, m, M, MiB,
** g, G, GiB, b, B; a bare number is refused). */
static bool valid_watch_limit(const char *s, size_t n)
{
	static const char *const units[] = {"b", "B", "k", "K", "KiB", "m", "M", "MiB", "g", "G", "GiB"};
	size_t digits = 0;
	uint64_t v = 0;
	while (digits < n && isdigit((unsigned char)s[digits]) && v < (1ull << 40))
		v = v * 10 + (uint64_t)(s[digits++] - '0');
	if (!digits || !v || (digits < n && isdigit((unsigned char)s[digits])))
		return false;
	if (n - digits == 1 && s[digits] == '%')
		return v <= 100;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i]) == n - digits && !strncmp(s + digits, units[i], n - digits))
			return true;
	return false;
}

/* WHEN of --snapshot-at: "none", or exit, peak, signal, rss:LIMIT and
** cgroup:LIMIT joined by '+', each at most once (MEMINST's snapshot_at=
** takes the same). */
static bool valid_snapshot_at(const char *s)
{
	if (!strcmp(s, "none"))
		return true;
	static const char *const words[] = {"exit", "peak", "signal", "rss:", "cgroup:"};
	unsigned seen = 0;
	for (;;) {
		size_t n = strcspn(s, "+");
		unsigned i = 0;
		for (; i < 5; i++) {
			size_t w = strlen(words[i]);
			if (i < 3 ? w == n && !strncmp(s, words[i], n)
				  : n > w && !strncmp(s, words[i], w) && valid_watch_limit(s + w, n - w))
				break;
		}
		if (i == 5 || (seen & 1u << i))
			return false;
		seen |= 1u << i;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

/* N|user of --site-depth: "user" or 1 to 32. */
static bool valid_site_depth(const char *s)
{
	int64_t n;
	return !strcmp(s, "user") || (rd_parse_int(s, &n) && n >= 1 && n <= 32);
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

/* What the command line says, before the checks between options. */
struct launcher_args {
	struct sess_opts *o;
	const char *library;
	bool no_time;
	int mode_opt; /* the one of --mis, --mim, --no-memory given */
};

/* One option, its value checked by the parser (or here, for those whose
** values no table can say): 0, or an exit status. */
static int take_option(struct rd_getopt *g, struct launcher_args *la)
{
	struct sess_opts *o = la->o;
	int id = g->opt->id;
	if (id == OPT_MIS || id == OPT_MIM || id == OPT_NO_MEMORY || id == OPT_DORMANT) {
		if (la->mode_opt && la->mode_opt != id)
			return rd_cmd_error(g->o, g->spec, "--mis, --mim, --dormant and --no-memory: give one of them");
		la->mode_opt = id;
		o->mode = id == OPT_MIS ? "mis" : id == OPT_MIM ? "mim" : "off";
		o->dormant = id == OPT_DORMANT;
		o->control |= o->dormant; /* the channel is how it is switched on */
	}
	switch (id) {
	case OPT_BACKEND: o->backend = g->value; break;
	case OPT_CONTROL: o->control = true; break;
	case OPT_LEAK_CHECK: o->leak_check = true; break;
	case OPT_LEAK_EXIT_CODE: o->leak_exit_code = g->num; break;
	case OPT_LEAK_THRESHOLD: o->leak_threshold = g->size; break;
	case OPT_INTERVAL:
		o->interval_auto = g->num < 0;
		o->interval_ns = g->num < 0 ? 0 : (uint64_t)g->num, o->interval_text = g->value;
		break;
	case OPT_SNAPSHOT_AT:
		if (!valid_snapshot_at(g->value))
			return rd_bad_value(g, "exit, peak, signal, rss:LIMIT and cgroup:LIMIT (LIMIT: 1% to "
					      "100%, or a size such as 2G) joined by '+', or none");
		o->snapshot_at = g->value;
		break;
	case OPT_SITE_DEPTH:
		if (!valid_site_depth(g->value))
			return rd_bad_value(g, "user or a number of frames from 1 to 32");
		o->site_depth = g->value;
		break;
	case OPT_SITE_SKIP:
		if (!(o->site_skip = site_skip_value(g->value)))
			return rd_bad_value(g, "function names joined by ',' (NAME* matches the names it "
					      "begins), at most 32");
		break;
	case OPT_TRACE: o->trace_clock = g->value ? g->value : "wall"; break;
	case OPT_TRACE_SITES: o->trace_sites = true; break;
	case OPT_SAMPLE: o->sample_hz = g->value ? (unsigned)g->num : 100; break;
	case OPT_SAMPLE_CLOCK: o->sample_clock = g->value; break;
	case OPT_ALLOC_SAMPLE: o->alloc_sample = g->size; break;
	case OPT_SAMPLE_DEPTH: o->sample_depth = (unsigned)g->num; break;
	case OPT_NO_TIME: la->no_time = true; break;
	case RD_ID_OUTPUT: o->output = g->value; break;
	case OPT_FORCE: o->force = true; break;
	case OPT_QUIET: o->quiet = true; break;
	case OPT_LIBRARY: la->library = g->value; break;
	case OPT_VERSION:
		printf("meminst %s\nlibrary: %s/%s\n", PACKAGE_VERSION, MEMINST_LIBDIR, MEMINST_SONAME);
		exit(0);
	default: break;
	}
	return 0;
}

/* What contradicts itself across options: 0 or 2 after one line. */
static int check_options(const struct rd_opts *io, struct launcher_args *la)
{
	struct sess_opts *o = la->o;
	if (la->no_time && (o->trace_clock || o->sample_hz))
		return rd_cmd_error(io, &launcher_spec, "--no-time contradicts --trace and --sample");
	if (!la->no_time && !o->trace_clock && !o->sample_hz && !o->dormant)
		o->sample_hz = 100;
	if (o->trace_sites && !o->trace_clock)
		return rd_cmd_error(io, &launcher_spec, "--trace-sites needs --trace (it records the call sites "
				      "of traced calls)");
	if (o->sample_clock && !o->sample_hz)
		return rd_cmd_error(io, &launcher_spec, "--sample-clock needs sampling; this run has none "
				      "(--trace without --sample, or --no-time)");
	if (o->control && !strcmp(o->mode, "off") && !o->dormant)
		return rd_cmd_error(io, &launcher_spec, "--control contradicts --no-memory (the channel "
				      "stores memory snapshots)");
	if ((o->leak_check || o->leak_exit_code) && strcmp(o->mode, "mim"))
		return rd_cmd_error(io, &launcher_spec, "--leak-check and --leak-exit-code need --mim (the scan "
				      "reads the map of live blocks)");
	if (o->leak_threshold && !o->leak_exit_code)
		return rd_cmd_error(io, &launcher_spec, "--leak-threshold needs --leak-exit-code");
	if (o->output && !*o->output)
		return rd_cmd_error(io, &launcher_spec, "-o: an empty file name");
	return 0;
}

/* Read the command line into o; returns the library given (or NULL), or
** exits: 0 after --help or --version, 2 after a usage error. */
static const char *parse_args(int argc, char **argv, struct sess_opts *o)
{
	struct rd_opts io = {.out = stdout, .err = stderr};
	struct launcher_args la = {.o = o, .library = getenv("MEMINST_LIBRARY")};
	struct rd_getopt g;
	int r;
	o->mode = "mis";
	o->interval_auto = true;
	o->interval_text = "auto";
	o->snapshot_at = "exit+peak+signal";
	o->site_depth = "user"; /* sites the user can act on: see meminst(1) */
	rd_getopt_init(&g, &launcher_spec, argc, argv, &io);
	while ((r = rd_getopt(&g)) == RD_OPTION)
		if ((r = take_option(&g, &la)) != 0)
			exit(r);
	if (r != RD_CONTINUE)
		exit(r);
	if (g.i >= argc)
		exit(rd_cmd_error(&io, &launcher_spec, "no program to run"));
	if ((r = check_options(&io, &la)) != 0)
		exit(r);
	o->argv = argv + g.i;
	return la.library;
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
	ADD("%s,run_dir=%s", o->mode, parts); /* its processes share it: alloc_snap_route */
	struct stat ns; /* the pid namespace whose pids name the parts (alloc_ids.c) */
	if (stat("/proc/self/ns/pid", &ns) == 0)
		ADD(",run_pidns=%llu", (unsigned long long)ns.st_ino);
	if (o->quiet)
		ADD(",quiet=notes");
	if (o->backend)
		ADD(",backend=%s", o->backend);
	if (strcmp(o->mode, "off") || o->dormant) {
		ADD(",snapshot=%s/mem.%%p.db,snapshot_at=%s", parts, o->snapshot_at);
		if (o->interval_ns || o->interval_auto)
			ADD(",interval=%s,interval_content=status", o->interval_text);
		if (o->site_depth)
			ADD(",site_depth=%s", o->site_depth);
		if (o->control)
			ADD(",control=on");
		if (o->leak_check)
			ADD(",leak_check=on");
		if (o->leak_exit_code)
			ADD(",leak_exit_code=%lld,leak_threshold=%llu", (long long)o->leak_exit_code,
			    (unsigned long long)o->leak_threshold);
		if (o->site_skip)
			ADD(",site_skip=%s", o->site_skip);
	}
	if (o->trace_clock)
		ADD(",trace=%s%s", o->trace_clock, o->trace_sites ? ",trace_sites=on" : "");
	if (o->sample_hz)
		ADD(",sample=%u", o->sample_hz);
	if (o->sample_clock)
		ADD(",sample_clock=%s", o->sample_clock);
	if (o->alloc_sample)
		ADD(",alloc_sample=%llu", (unsigned long long)o->alloc_sample);
	if (o->sample_depth)
		ADD(",sample_depth=%u", o->sample_depth);
	if (o->trace_clock || o->sample_hz || o->alloc_sample || o->dormant) /* dormant: inspect start --sample's */
		ADD(",trace_file=%s/trace.%%p", parts);
#undef ADD
	if (n >= sizeof v) {
		sess_error("the paths are too long for MEMINST");
		exit(2);
	}
	return v;
}

/* A path MEMINST and LD_PRELOAD carry as it is: MEMINST splits items at
** ',' and expands '%p' in paths, LD_PRELOAD splits at ' ' and ':'. */
static bool path_passes(const char *p)
{
	return !strpbrk(p, ",=%: \t\n");
}

/* A private directory for the processes' parts: beside the output when its
** absolute path can go into MEMINST and LD_PRELOAD, else in $TMPDIR or
** /tmp (a directory named 'a,b' or 'x%p' broke MEMINST: the program was not
** started). */
static char *make_parts_dir(const char *output)
{
	static char dir[PATH_MAX];
	const char *slash = output ? strrchr(output, '/') : NULL;
	int len = slash ? (int)(slash - output) : 1;
	const char *base = slash ? output : ".";
	char cwd[PATH_MAX], abs[PATH_MAX];
	if (slash == output)
		len = 1;
	if (base[0] != '/') { /* the program may change directory */
		bool dot = len == 1 && base[0] == '.'; /* the directory itself */
		if (getcwd(cwd, sizeof cwd) && (size_t)snprintf(abs, sizeof abs, "%s%s%.*s", cwd, dot ? "" : "/",
								 dot ? 0 : len, base) < sizeof abs)
			base = abs, len = (int)strlen(abs);
	}
	snprintf(dir, sizeof dir, "%.*s", len, base);
	if (!path_passes(dir) || dir[0] != '/') {
		const char *tmp = getenv("TMPDIR");
		base = tmp && tmp[0] == '/' && path_passes(tmp) ? tmp : "/tmp";
		len = (int)strlen(base);
	}
	snprintf(dir, sizeof dir, "%.*s/.meminst-parts.XXXXXX", len, base);
	if (!mkdtemp(dir)) {
		sess_error("cannot create a directory for the run's data in %.*s: %s", len, base,
			   strerror(errno));
		exit(2);
	}
	return dir;
}

/* The directory and its files; one level of users' directories (uid.N,
** made by a process that switched users: alloc_ids.c), whose names are
** that user's: removed without following any link. */
static void remove_parts(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0 || errno != EISDIR || strncmp(e->d_name, "uid.", 4))
			continue;
		int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
		for (struct dirent *f; sd && (f = readdir(sd));)
			if (strcmp(f->d_name, ".") && strcmp(f->d_name, ".."))
				unlinkat(sub, f->d_name, 0);
		if (sd)
			closedir(sd);
		else if (sub >= 0)
			close(sub);
		unlinkat(fd, e->d_name, AT_REMOVEDIR);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	rmdir(dir);
}

/* The library goes into LD_PRELOAD by its full path (a relative one is not
** found by a program that changed directory), through a link in the parts
** directory when that path holds a space or ':' (LD_PRELOAD's separators:
** it was split, the program ran uninstrumented with two lines of ld.so's). */
static void set_preload(const char *library, const char *parts)
{
	static char full[PATH_MAX], link[PATH_MAX];
	char cwd[PATH_MAX];
	if (library[0] != '/' && getcwd(cwd, sizeof cwd) &&
	    (size_t)snprintf(full, sizeof full, "%s/%s", cwd, library) < sizeof full)
		library = full;
	if (!path_passes(library) &&
	    (size_t)snprintf(link, sizeof link, "%s/%s", parts, MEMINST_SONAME) < sizeof link &&
	    symlink(library, link) == 0)
		library = link;
	const char *old = getenv("LD_PRELOAD");
	static char v[PATH_MAX * 2];
	snprintf(v, sizeof v, "%s%s%s", library, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", v, 1);
}

/* The program died of SIGKILL while its memory cgroup's oom_kill count
** rose: said, and noted among its process's notes (the notes file of its
** snapshot part), where inspect report and status find it (RD_OOM_NOTE). */
static void note_oom_kill(const struct sess_opts *o, const char *parts, const struct sess_result *r)
{
	char file[PATH_MAX + 32];
	snprintf(file, sizeof file, "%s/mem.%ld.db.log", parts, (long)r->pid);
	FILE *f = strcmp(o->mode, "off") ? fopen(file, "a") : NULL;
	if (f) {
		fprintf(f, "meminst: " RD_OOM_NOTE " (its memory cgroup's oom_kill count went from %ld to %ld)\n",
			r->oom_before, r->oom_after);
		fclose(f);
	}
	if (!o->quiet)
		sess_error("%s was " RD_OOM_NOTE "; 'inspect report' shows its last snapshot", o->argv[0]);
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
	/* lstat: a symbolic link to nowhere is there too (the program ran,
	** then the session could not be put in its place) */
	if (o.output && !o.force && lstat(o.output, &st) == 0) {
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
	set_preload(library, parts);

	struct sess_result res = {0};
	sess_storer_start(parts);
	int ran = sess_run(o.argv, &res);
	sess_storer_stop();
	unsetenv("LD_PRELOAD");
	if (ran < 0) {
		remove_parts(parts);
		return res.exit_code ? res.exit_code : 127;
	}
	if (res.exit_signal == SIGKILL && res.oom_before >= 0 && res.oom_after > res.oom_before)
		note_oom_kill(&o, parts, &res);
	char name[PATH_MAX];
	if (!o.output) {
		const char *base = strrchr(o.argv[0], '/') ? strrchr(o.argv[0], '/') + 1 : o.argv[0];
		snprintf(name, sizeof name, "meminst.%s.%ld.db", base, (long)res.pid);
		o.output = name;
	}
	struct sess_summary sum = {0};
	/* Past the file size limit (ulimit -f) the session's write fails with
	** EFBIG and the parts are kept, as for any failed write; SIGXFSZ's
	** default would kill the launcher instead, the program's exit status
	** lost.  (The program has been started: it keeps its own disposition.) */
	signal(SIGXFSZ, SIG_IGN);
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
			sess_error("the trace of process %ld is cut after %s (it has no end: a write failed, "
				   "the process was killed or still runs, it ended by the exit_group system "
				   "call itself, as Go programs do, or it executed a program while other threads "
				   "ran); the session holds what was written%s",
				   sum.cut_pid, sum.cut_text,
				   sum.traces_cut > 1 ? " (and so for other processes)" : "");
		/* the loader ignores LD_PRELOAD in secure-execution mode */
		const char *secure = sum.processes ? NULL : sess_secure_exec(o.argv[0]);
		if (secure)
			sess_error("no process of the run loaded %s: %s is %s, which the loader runs in "
				   "secure-execution mode, ignoring LD_PRELOAD; it is not instrumented",
				   library, o.argv[0], secure);
		/* with time profiling every process that loads the library writes a trace */
		else if (!sum.processes && (o.trace_clock || o.sample_hz || o.alloc_sample))
			sess_error("no process of the run loaded %s (a statically linked program is not "
				   "instrumented)", library);
	} else {
		sess_error("the run's data is kept in %s", parts);
	}
	exit_like(&res);
	return 0;
}
