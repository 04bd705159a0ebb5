/*
** exp_cmd.c — `inspect export`: a profile in the formats of the viewers
** people already use (callgrind, folded stacks, Chrome trace JSON), and the
** reading of a session, trace or profile database shared with `inspect
** html`.
**
** What each format is made from:
**   callgrind  the exact profile (CNT, ACC, OWN and bytes per function and
**              per caller->called pair, and per call site when the trace
**              has them): a trace, a session or a profile database; else
**              the samples (exp_cg_samples.c)
**   folded     whole stacks: from an exact trace (prof_stacks.c), else from
**              the timer samples (--metric time) or the allocation samples
**              (--metric bytes)
**   chrome     every call of an exact trace, and the samples as tracks
**   pprof      whole stacks (exp_pprof.c): from an exact trace, else from
**              the samples
** and both, with --metric calls|allocated|temporary|peak|leaked, the
** sites of the event counters with their stacks (exp_sites.c), from any
** session or snapshot database.
*/
#include "exp_pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The default bound of a Chrome trace: what Perfetto and chrome://tracing
** still open in a browser tab. */
#define EXP_CHROME_MAX (100ull << 20)

enum exp_format { EXP_CALLGRIND, EXP_FOLDED, EXP_CHROME, EXP_PPROF };

struct exp_args {
	const char *pos, *output;
	struct rd_outfile *of; /* the output, once open                    */
	int format;              /* -1: not given */
	int metric;
	double min_us;
	uint64_t max_size;       /* chrome: the file's bound (0: none)        */
	int64_t pid;
	int64_t snapshot;        /* pprof: the memory of this snapshot (0: none) */
	bool max_size_given, metric_given;
	bool no_symbols, force, raw_times;
};

enum { EXP_O_FORMAT = RD_ID_OWN, EXP_O_METRIC, EXP_O_MIN_DURATION, EXP_O_MAX_SIZE, EXP_O_NO_COMPENSATE };

static const char *const exp_formats[] = {"callgrind", "folded", "chrome", "pprof", NULL};
/* time and bytes: the stacks of a trace (PROF_STK_*); then the event
** counters' metrics (RD_EV_* + EXP_M_EVENTS) */
static const char *const exp_metrics[] = {"time", "bytes", "calls", "allocated", "temporary", "peak", "leaked",
					  NULL};
enum { EXP_M_EVENTS = 2 };
_Static_assert(PROF_STK_TIME == 0 && PROF_STK_BYTES == 1 && RD_EV_CALLS == 0 && RD_EV_LEAKED == 4,
	       "exp_metrics is in the order of both");

static const struct rd_option export_options[] = {
	{"format", 0, RD_OT_WORD, NULL, "the format (see above)", EXP_O_FORMAT, 0, 0, exp_formats},
	{"metric", 0, RD_OT_WORD, NULL, "folded: own time (default) or bytes allocated (the\n"
	 "default for allocation samples alone) of a trace;\n"
	 "folded and pprof: per allocation site, from the event\n"
	 "counters of a session or snapshot database: calls,\n"
	 "allocated (bytes), temporary, peak (live bytes at the\n"
	 "peak) or leaked (live at exit)", EXP_O_METRIC, 0, 0, exp_metrics},
	RD_OPTION_OUTPUT("write to FILE (default: standard output)"),
	RD_OPTION_FORCE,
	RD_OPTION_PID("sessions: the process (default: the program's)"),
	RD_OPTION_IMAGE,
	{"min-duration", 0, RD_OT_REAL, "US", "chrome: leave out events shorter than US microseconds",
	 EXP_O_MIN_DURATION, 0, RD_INT_MAX, NULL},
	{"max-size", 0, RD_OT_SIZE, "SIZE", "chrome: leave out the shortest events to keep the file\n"
	 "under SIZE (default 100M; 0: every event)", EXP_O_MAX_SIZE, 0, 0, NULL},
	RD_OPTION_SNAPSHOT("pprof: Go's heap profile of snapshot N by allocation\n"
			     "site (alloc_objects, alloc_space, inuse_objects,\n"
			     "inuse_space; the default for a database without a trace:\n"
			     "its process's latest snapshot); with --metric\n"
			     "calls...leaked: the counters of snapshot N"),
	RD_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	RD_OPTION_FULL_NAMES,
	{"no-compensate", 0, RD_OT_FLAG, NULL, "exact traces: raw times, the tracer's calibrated cost\n"
	 "left in them (default: taken off; chrome's events are\nalways the raw time stamps)", EXP_O_NO_COMPENSATE, 0, 0,
	 NULL},
	RD_OPTION_END,
};

static const struct rd_cmd_spec export_spec = {
	"export", "--format FORMAT [options] SESSION|TRACE|PROFILE",
	"Write a profile in a format that other viewers read:\n"
	"  callgrind  KCachegrind, QCachegrind, callgrind_annotate: functions with\n"
	"             their own cost and their calls, events Time (ns) and Bytes\n"
	"             (allocated); from an exact trace or a profile database (calls\n"
	"             at their source lines when traced with meminst --trace-sites),\n"
	"             else from the samples with costs per source line (events\n"
	"             Time, Samples, Bytes, Allocs)\n"
	"  folded     folded stacks \"main;f;g N\" for flamegraph.pl, inferno,\n"
	"             speedscope: own time in ns or bytes allocated per stack; from\n"
	"             an exact trace, else from the samples; or with --metric\n"
	"             calls|allocated|temporary|peak|leaked, per allocation site's\n"
	"             stack from the event counters of any session\n"
	"  chrome     Chrome Trace Event JSON for Perfetto and chrome://tracing:\n"
	"             one event per call, the allocator's calls and suspensions,\n"
	"             allocations as instant events, counters of the memory, and\n"
	"             a track of samples per thread\n"
	"  pprof      gzipped profile.proto for go tool pprof, Pyroscope, Parca:\n"
	"             from an exact trace, own time (ns), alloc_space and\n"
	"             alloc_objects per stack; else from the samples, samples and\n"
	"             their time (ns) with alloc_objects and alloc_space estimates;\n"
	"             or Go's heap profile of a snapshot (--snapshot; the default\n"
	"             without a trace): alloc_objects, alloc_space, inuse_objects\n"
	"             and inuse_space per site, by thread in a map; or with\n"
	"             --metric calls|allocated|temporary|peak|leaked, per site's\n"
	"             stack: alloc_objects, alloc_space, temp_objects, inuse_space\n"
	"             (at the peak) and leaked_space (live at exit), the one\n"
	"             named the default\n",
	export_options, 1, 1,
};

static const struct rd_option html_options[] = {
	RD_OPTION_OUTPUT("the HTML file to write"),
	RD_OPTION_FORCE,
	RD_OPTION_PID("the process (default: the session's program)"),
	RD_OPTION_IMAGE,
	RD_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	RD_OPTION_FULL_NAMES,
	RD_OPTION_END,
};

static const struct rd_cmd_spec html_spec = {
	"html", "[options] SESSION -o FILE",
	"Write one self-contained HTML file (no network needed to view it) with the\n"
	"run, the memory over time in total and stacked by the top allocation sites,\n"
	"an interactive flame graph of the time and one of the bytes allocated\n"
	"(click a frame to zoom, hover for figures, search, bottom-up, a thread\n"
	"filter), one of the allocation sites by heaptrack's metrics (calls,\n"
	"allocated, temporary, peak, leaked), the functions by own time with the\n"
	"bytes they allocate, what was live at the peak by class and type, and what\n"
	"was still live at exit by allocation site.\n",
	html_options, 1, 1,
};

/* ------------------------------------------------------------ parsing -- */

static void exp_option(const struct rd_getopt *g, struct exp_args *a)
{
	switch (g->opt->id) {
	case EXP_O_FORMAT: a->format = g->word; break;
	case EXP_O_METRIC: a->metric = g->word, a->metric_given = true; break;
	case EXP_O_MIN_DURATION: a->min_us = g->real; break;
	case EXP_O_MAX_SIZE: a->max_size = g->size, a->max_size_given = true; break;
	case EXP_O_NO_COMPENSATE: a->raw_times = true; break;
	case RD_ID_OUTPUT: a->output = g->value; break;
	case RD_ID_FORCE: a->force = true; break;
	case RD_ID_PID: a->pid = g->num; break;
	case RD_ID_IMAGE: rd_strace_want_image(g->num); break;
	case RD_ID_SNAPSHOT: a->snapshot = g->num; break;
	case RD_ID_NO_SYMBOLS: a->no_symbols = true; break;
	}
}

static int exp_parse(const struct rd_opts *o, bool html, int argc, char **argv, struct exp_args *a)
{
	const char *cmd = html ? "html" : "export";
	*a = (struct exp_args){.format = -1, .max_size = EXP_CHROME_MAX};
	struct rd_getopt g;
	rd_getopt_init(&g, html ? &html_spec : &export_spec, argc, argv, o);
	int r;
	while ((r = rd_getopt(&g)) == RD_OPTION)
		exp_option(&g, a);
	if (r != RD_CONTINUE)
		return r;
	a->pos = g.pos[0];
	if (!html && a->format < 0)
		return rd_usage_error(o, cmd, "--format callgrind, folded, chrome or pprof is needed");
	if (html && !a->output)
		return rd_usage_error(o, cmd, "-o FILE is needed (the HTML file to write)");
	bool events = a->metric >= EXP_M_EVENTS;
	if (!html && a->metric_given && a->format != EXP_FOLDED && !(events && a->format == EXP_PPROF))
		return rd_usage_error(o, cmd, "--metric %s is for --format folded%s", exp_metrics[a->metric],
				      events ? " or pprof" : " (callgrind has both events)");
	if (!html && a->min_us > 0 && a->format != EXP_CHROME)
		return rd_usage_error(o, cmd, "--min-duration is for --format chrome");
	if (!html && a->max_size_given && a->format != EXP_CHROME)
		return rd_usage_error(o, cmd, "--max-size is for --format chrome");
	if (!html && a->snapshot && a->format != EXP_PPROF && !events)
		return rd_usage_error(o, cmd, "--snapshot is for --format pprof, or --metric calls...leaked");
	int r2 = rd_outfile_refused(o, a->output, a->force, false, &a->pos, 1); /* before the reading */
	return r2 ? r2 : RD_CONTINUE;
}

/* ------------------------------------------------------------ command -- */

static FILE *exp_out(const struct rd_opts *o, const struct exp_args *a)
{
	return rd_outfile_open(o, a->of, a->output, a->force, false, &a->pos, 1) ? NULL : a->of->f;
}

/* pprof is gzipped binary: not on a terminal (one line, true). */
static bool exp_pprof_tty(const struct rd_opts *o, const struct exp_args *a)
{
	return (!a->output || !strcmp(a->output, "-")) && isatty(fileno(o->out)) &&
	       rd_usage_error(o, "export", "--format pprof writes gzipped binary: give -o FILE");
}

static int exp_no_stacks(const struct rd_opts *o, const char *path)
{
	rd_errf(o->err, "inspect: %s: no function calls and no samples in the trace (record them with "
		"meminst --trace or --sample)\n", path);
	return RD_EXIT_NOTFOUND;
}

static int exp_folded(const struct rd_opts *o, const struct exp_args *a, struct prof_input *in, FILE **f)
{
	if (!in->have_stacks && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if (!in->have_stacks) {
		prof_stacks_free(&in->stacks);
		prof_stacks_init(&in->stacks);
		prof_stacks_from_samples(&in->stacks, &in->sm);
		in->have_stacks = true;
	}
	/* allocation samples alone have no time: their bytes by default, as analyse */
	int metric = a->metric;
	if (!a->metric_given && in->stacks.total[PROF_STK_TIME] == 0 && in->stacks.total[PROF_STK_BYTES] > 0)
		metric = PROF_STK_BYTES;
	if (in->stacks.total[metric] == 0) { /* no empty file that looks like a success */
		bool samples = in->sm.s && !prof_trace_calls(&in->tr);
		rd_errf(o->err, "inspect: %s: no %s in the %s%s\n", a->pos,
			metric == PROF_STK_BYTES ? "bytes allocated" : "time", samples ? "samples" : "trace",
			metric == PROF_STK_BYTES ? "" : samples ? " (timer samples need meminst --sample)" : "");
		return RD_EXIT_NOTFOUND;
	}
	if (!(*f = exp_out(o, a)))
		return RD_EXIT_USAGE;
	exp_folded_write(&in->stacks, metric, *f);
	prof_images_say(&in->images, a->pos, o); /* folded stacks have no place for text */
	return 0;
}

/* pprof: the exact stacks when the trace has calls, else its samples. */
static int exp_pprof(const struct rd_opts *o, const struct exp_args *a, struct prof_input *in, FILE **f)
{
	if (!in->have_stacks && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if (exp_pprof_tty(o, a))
		return RD_EXIT_USAGE;
	struct pprof pp;
	pprof_init(&pp);
	if (in->have_stacks)
		pprof_from_stacks(&pp, &in->stacks, &in->tr);
	else
		pprof_from_samples(&pp, &in->sm, &in->tr);
	char line[1024];
	prof_images_line(&in->images, line, sizeof line);
	if (*line) /* the other programs of the process, where pprof keeps text */
		pprof_comment(&pp, line);
	int r = 0;
	if (!(*f = exp_out(o, a)))
		r = RD_EXIT_USAGE;
	else if (pprof_write(&pp, *f) != 0)
		r = RD_EXIT_DB; /* rd_outfile_close says it */
	pprof_free(&pp);
	return r;
}

/* Is path a trace, or a session that stores one?  (A snapshot file, or a
** session run with --no-time, has snapshots only.) */
static bool exp_has_trace(const char *path)
{
	if (prof_is_trace(path) == 1)
		return true;
	if (rd_is_session(path) != 1)
		return false;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool yes = (db = rd_sqlite_connect(path)) && sqlite3_errcode(db) == SQLITE_OK &&
		   sqlite3_prepare_v2(db, "SELECT count(*) FROM session_trace", -1, &st, NULL) == SQLITE_OK &&
		   sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return yes;
}

/* pprof of a snapshot's memory (--snapshot, or a database without a trace). */
static int exp_pprof_memory(const struct rd_opts *o, const struct exp_args *a, FILE **f)
{
	if (exp_pprof_tty(o, a))
		return RD_EXIT_USAGE;
	int r = prof_input_damaged(o, a->pos); /* a trace or a session cut short: not "not an SQLite file" */
	if (r)
		return r;
	if (prof_db_is_profile(a->pos) == 1) { /* the same application id as snapshots: not "newer schema" */
		rd_errf(o->err, "inspect: %s: a profile database has no stacks and no memory: give the session or "
			"the trace\n", a->pos);
		return RD_EXIT_DB;
	}
	struct pprof pp;
	pprof_init(&pp);
	r = pprof_from_heap(&pp, a->pos, a->pid, a->snapshot, false, o);
	if (!r && !(*f = exp_out(o, a)))
		r = RD_EXIT_USAGE;
	else if (!r && pprof_write(&pp, *f) != 0)
		r = RD_EXIT_DB; /* rd_outfile_close says it */
	pprof_free(&pp);
	return r;
}

int exp_heap_write(const char *path, int64_t snap, bool allocs, const struct rd_opts *o, FILE *f)
{
	struct pprof pp;
	pprof_init(&pp);
	int r = pprof_from_heap(&pp, path, 0, snap, allocs, o);
	if (!r && (pprof_write(&pp, f) != 0 || fflush(f) != 0)) {
		rd_errf(o->err, "inspect: %s: cannot write the profile\n", path);
		r = RD_EXIT_DB;
	}
	pprof_free(&pp);
	return r;
}

int exp_cpu_write(const char *path, unsigned hz, uint64_t start_ns, uint64_t duration_ns,
		  const struct rd_opts *o, FILE *f)
{
	struct prof_input in = {.path = path, .no_files = o->no_symbols};
	int r = prof_input_read(&in, o, PROF_IN_SAMPLES);
	if (!r && !in.have_tr) {
		rd_errf(o->err, "inspect: %s: no trace was read\n", path);
		r = RD_EXIT_DB;
	}
	if (!r) {
		struct pprof pp;
		pprof_init(&pp);
		pprof_from_cpu_samples(&pp, in.have_sm ? &in.sm : NULL, &in.tr, hz, start_ns, duration_ns);
		if (pprof_write(&pp, f) != 0 || fflush(f) != 0) {
			rd_errf(o->err, "inspect: %s: cannot write the profile\n", path);
			r = RD_EXIT_DB;
		}
		pprof_free(&pp);
	}
	prof_input_free(&in);
	return r;
}

/* --metric calls...leaked: the sites of the event counters with their
** stacks (exp_sites.c), from a session or snapshot database. */
static int exp_events(const struct rd_opts *o, const struct exp_args *a, FILE **f)
{
	int trace = prof_is_trace(a->pos) == 1, profile = !trace && prof_db_is_profile(a->pos) == 1;
	if (trace || profile)
		return rd_usage_error(o, "export", "--metric %s reads the event counters of a session or snapshot "
				      "database, and %s is a %s", exp_metrics[a->metric], a->pos,
				      trace ? "trace file" : "profile database");
	if (a->format == EXP_PPROF && exp_pprof_tty(o, a))
		return RD_EXIT_USAGE;
	int r = prof_input_damaged(o, a->pos); /* a session cut short: not "not an SQLite file" */
	if (r)
		return r;
	struct exp_sites es;
	r = exp_sites_read(&es, a->pos, a->pid, a->snapshot, a->metric - EXP_M_EVENTS, o);
	if (!r && !(*f = exp_out(o, a))) {
		r = RD_EXIT_USAGE;
	} else if (!r && a->format == EXP_FOLDED) {
		exp_sites_folded(&es, *f);
	} else if (!r) {
		struct pprof pp;
		pprof_init(&pp);
		r = pprof_from_sites(&pp, &es);
		if (!r && pprof_write(&pp, *f) != 0)
			r = RD_EXIT_DB; /* rd_outfile_close says it */
		pprof_free(&pp);
	}
	exp_sites_free(&es);
	return r;
}

static int exp_chrome(const struct rd_opts *o, const struct exp_args *a, struct prof_input *in, FILE **f)
{
	if (!prof_trace_calls(&in->tr) && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if (!(*f = exp_out(o, a)))
		return RD_EXIT_USAGE;
	struct exp_chrome_opts co = {a->min_us, a->max_size, in->session ? a->pos : NULL, in->tr.h.pid,
				     in->have_sm ? &in->sm : NULL, &in->images};
	struct exp_chrome_result res;
	int r = exp_chrome_write(&in->tr, o, &co, prof_input_reopen, in, *f, &res);
	char max[32];
	rd_fmt_size(a->max_size, max, sizeof max);
	if (res.capped)
		rd_errf(o->err, "inspect: %s: %llu events shorter than %.3g us left out to keep the file under %s, "
			"%llu written (--max-size 0 writes every event; --min-duration US sets the cut)\n", a->pos,
			(unsigned long long)res.dropped, res.cut_us, max, (unsigned long long)res.written);
	else if (res.dropped)
		rd_errf(o->err, "inspect: %s: %llu events shorter than %g us left out, %llu written\n", a->pos,
			(unsigned long long)res.dropped, a->min_us, (unsigned long long)res.written);
	else if (res.written > 1000000)
		rd_errf(o->err, "inspect: %s: %llu events written (--min-duration US leaves out the short ones)\n",
			a->pos, (unsigned long long)res.written);
	return r;
}

int exp_cmd_export(int argc, char **argv, const struct rd_opts *o)
{
	struct exp_args a;
	int r = exp_parse(o, false, argc, argv, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_opts so = *o;
	so.no_symbols = o->no_symbols || a.no_symbols;
	FILE *f = NULL;
	struct rd_outfile of = {0};
	a.of = &of;
	if (a.metric >= EXP_M_EVENTS || (a.format == EXP_PPROF && (a.snapshot || !exp_has_trace(a.pos)))) {
		r = a.metric >= EXP_M_EVENTS ? exp_events(&so, &a, &f) : exp_pprof_memory(&so, &a, &f);
		int w = rd_outfile_close(o, &of, r == 0);
		return r ? r : w;
	}
	struct prof_input in = {.path = a.pos, .pid = a.pid, .no_files = so.no_symbols, .raw_times = a.raw_times};
	unsigned want = PROF_IN_IMAGES | (a.format == EXP_CALLGRIND ? PROF_IN_MODEL | PROF_IN_SAMPLES
					  : a.format == EXP_FOLDED || a.format == EXP_PPROF ? PROF_IN_STACKS | PROF_IN_SAMPLES
											      : PROF_IN_SAMPLES);
	r = prof_input_read(&in, &so, want);
	char line[1024]; /* the other programs of the process, among callgrind's header comments */
	prof_images_line(&in.images, line, sizeof line);
	if (!r && a.format == EXP_CALLGRIND) {
		if (!in.have_model && !in.have_sm)
			r = exp_no_stacks(o, a.pos);
		else if (!(f = exp_out(o, &a)))
			r = RD_EXIT_USAGE;
		else if (in.have_model)
			exp_callgrind_write(&in.model, line, f);
		else
			exp_callgrind_samples(&in.sm, line, f);
	} else if (!r && a.format == EXP_FOLDED) {
		r = exp_folded(&so, &a, &in, &f);
	} else if (!r && a.format == EXP_PPROF) {
		r = exp_pprof(&so, &a, &in, &f);
	} else if (!r) {
		r = exp_chrome(&so, &a, &in, &f);
	}
	int w = rd_outfile_close(o, &of, r == 0);
	r = r ? r : w;
	prof_input_free(&in);
	return r;
}

/* The parser for `inspect html` (exp_html.c). */
int exp_html_args(int argc, char **argv, const struct rd_opts *o, const char **pos, const char **output,
		  int64_t *pid, bool *no_symbols, bool *force)
{
	struct exp_args a;
	int r = exp_parse(o, true, argc, argv, &a);
	*pos = a.pos, *output = a.output, *pid = a.pid, *no_symbols = a.no_symbols, *force = a.force;
	return r;
}
