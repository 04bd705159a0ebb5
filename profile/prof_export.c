/*
** prof_export.c — `inspect export`: a profile in the formats of the viewers
** people already use (callgrind, folded stacks, Chrome trace JSON), and the
** reading of a session, trace or profile database shared with `inspect
** html`.
**
** What each format is made from:
**   callgrind  the exact profile (CNT, ACC, OWN and bytes per function and
**              per caller->called pair, and per call site when the trace
**              has them): a trace, a session or a profile database; else
**              the samples (prof_cg_samples.c)
**   folded     whole stacks: from an exact trace (prof_stacks.c), else from
**              the timer samples (--metric time) or the allocation samples
**              (--metric bytes)
**   chrome     every call of an exact trace, and the samples as tracks
**   pprof      whole stacks (prof_pprof.c): from an exact trace, else from
**              the samples
*/
#include "prof_pprof.h"

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
	struct insp_outfile *of; /* the output, once open                    */
	int format;              /* -1: not given */
	int metric;
	double min_us;
	uint64_t max_size;       /* chrome: the file's bound (0: none)        */
	int64_t pid;
	int64_t snapshot;        /* pprof: the memory of this snapshot (0: none) */
	bool max_size_given, metric_given;
	bool no_symbols, force, raw_times;
};

enum { EXP_O_FORMAT = INSP_ID_OWN, EXP_O_METRIC, EXP_O_MIN_DURATION, EXP_O_MAX_SIZE, EXP_O_NO_COMPENSATE };

static const char *const exp_formats[] = {"callgrind", "folded", "chrome", "pprof", NULL};
static const char *const exp_metrics[] = {"time", "bytes", NULL};

static const struct insp_option export_options[] = {
	{"format", 0, INSP_OT_WORD, NULL, "the format (see above)", EXP_O_FORMAT, 0, 0, exp_formats},
	{"metric", 0, INSP_OT_WORD, NULL, "folded: own time (default) or bytes allocated (the\n"
	 "default for allocation samples alone)", EXP_O_METRIC, 0, 0, exp_metrics},
	INSP_OPTION_OUTPUT("write to FILE (default: standard output)"),
	INSP_OPTION_FORCE,
	INSP_OPTION_PID("sessions: the process (default: the program's)"),
	{"min-duration", 0, INSP_OT_REAL, "US", "chrome: leave out events shorter than US microseconds",
	 EXP_O_MIN_DURATION, 0, INSP_INT_MAX, NULL},
	{"max-size", 0, INSP_OT_SIZE, "SIZE", "chrome: leave out the shortest events to keep the file\n"
	 "under SIZE (default 100M; 0: every event)", EXP_O_MAX_SIZE, 0, 0, NULL},
	INSP_OPTION_SNAPSHOT("pprof: the live memory of snapshot N by allocation site\n"
			     "(inuse_space, inuse_objects; the default for a database\n"
			     "without a trace: its process's latest snapshot)"),
	INSP_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	INSP_OPTION_FULL_NAMES,
	{"no-compensate", 0, INSP_OT_FLAG, NULL, "exact traces: raw times, the tracer's calibrated cost\n"
	 "left in them (default: taken off; chrome's events are\nalways the raw time stamps)", EXP_O_NO_COMPENSATE, 0, 0,
	 NULL},
	INSP_OPTION_END,
};

static const struct insp_cmd_spec export_spec = {
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
	"             an exact trace, else from the samples\n"
	"  chrome     Chrome Trace Event JSON for Perfetto and chrome://tracing:\n"
	"             one event per call, the allocator's calls and suspensions,\n"
	"             allocations as instant events, counters of the memory, and\n"
	"             a track of samples per thread\n"
	"  pprof      gzipped profile.proto for go tool pprof, Pyroscope, Parca:\n"
	"             from an exact trace, own time (ns), alloc_space and\n"
	"             alloc_objects per stack; else from the samples, samples and\n"
	"             their time (ns) with alloc_objects and alloc_space estimates;\n"
	"             or the live memory of a snapshot (--snapshot)\n",
	export_options, 1, 1,
};

static const struct insp_option html_options[] = {
	INSP_OPTION_OUTPUT("the HTML file to write"),
	INSP_OPTION_FORCE,
	INSP_OPTION_PID("the process (default: the session's program)"),
	INSP_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	INSP_OPTION_FULL_NAMES,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec html_spec = {
	"html", "[options] SESSION -o FILE",
	"Write one self-contained HTML file (no network needed to view it) with the\n"
	"run, the memory over time, an interactive flame graph of the time and one\n"
	"of the bytes allocated (click a frame to zoom, hover for figures, search,\n"
	"bottom-up, a thread filter), the functions by own time with the bytes they\n"
	"allocate, what was live at the peak by class and type, and what was still\n"
	"live at exit by allocation site.\n",
	html_options, 1, 1,
};

/* ------------------------------------------------------------ parsing -- */

static void exp_option(const struct insp_getopt *g, struct exp_args *a)
{
	switch (g->opt->id) {
	case EXP_O_FORMAT: a->format = g->word; break;
	case EXP_O_METRIC: a->metric = g->word, a->metric_given = true; break;
	case EXP_O_MIN_DURATION: a->min_us = g->real; break;
	case EXP_O_MAX_SIZE: a->max_size = g->size, a->max_size_given = true; break;
	case EXP_O_NO_COMPENSATE: a->raw_times = true; break;
	case INSP_ID_OUTPUT: a->output = g->value; break;
	case INSP_ID_FORCE: a->force = true; break;
	case INSP_ID_PID: a->pid = g->num; break;
	case INSP_ID_SNAPSHOT: a->snapshot = g->num; break;
	case INSP_ID_NO_SYMBOLS: a->no_symbols = true; break;
	}
}

static int exp_parse(const struct insp_opts *o, bool html, int argc, char **argv, struct exp_args *a)
{
	const char *cmd = html ? "html" : "export";
	*a = (struct exp_args){.format = -1, .max_size = EXP_CHROME_MAX};
	struct insp_getopt g;
	insp_getopt_init(&g, html ? &html_spec : &export_spec, argc, argv, o);
	int r;
	while ((r = insp_getopt(&g)) == INSP_OPTION)
		exp_option(&g, a);
	if (r != INSP_CONTINUE)
		return r;
	a->pos = g.pos[0];
	if (!html && a->format < 0)
		return insp_usage_error(o, cmd, "--format callgrind, folded, chrome or pprof is needed");
	if (html && !a->output)
		return insp_usage_error(o, cmd, "-o FILE is needed (the HTML file to write)");
	if (!html && a->metric_given && a->format != EXP_FOLDED)
		return insp_usage_error(o, cmd, "--metric is for --format folded (callgrind has both events)");
	if (!html && a->min_us > 0 && a->format != EXP_CHROME)
		return insp_usage_error(o, cmd, "--min-duration is for --format chrome");
	if (!html && a->max_size_given && a->format != EXP_CHROME)
		return insp_usage_error(o, cmd, "--max-size is for --format chrome");
	if (!html && a->snapshot && a->format != EXP_PPROF)
		return insp_usage_error(o, cmd, "--snapshot is for --format pprof");
	int r2 = insp_outfile_refused(o, a->output, a->force, false, &a->pos, 1); /* before the reading */
	return r2 ? r2 : INSP_CONTINUE;
}

/* ------------------------------------------------------------- input -- */

uint64_t exp_trace_calls(const struct prof_trace *tr)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		n += tr->sim.threads[i]->calls;
	return n;
}

FILE *exp_input_reopen(void *ctx, uint64_t *size)
{
	const struct exp_input *in = ctx;
	int code;
	return prof_source_open(in->path, in->pid, in->o, size, &code);
}

/* Between two readings of the trace (the samples need a second): the
** stacks start afresh. */
static void exp_stacks_restart(void *ctx)
{
	exp_stacks_free(ctx);
	exp_stacks_init(ctx);
}

static int exp_read_trace(struct exp_input *in, const struct insp_opts *o, unsigned want)
{
	bool stacks = want & EXP_IN_STACKS;
	if (stacks)
		exp_stacks_init(&in->stacks);
	in->have_tr = true;
	return prof_source_read_live(in->path, in->pid, o, &in->tr, stacks ? exp_stacks_record : NULL, &in->stacks,
				     stacks ? exp_stacks_restart : NULL, in->samples, in->live);
}

int exp_input_read(struct exp_input *in, const struct insp_opts *o, unsigned want)
{
	in->o = o;
	int r = insp_input_check(o, in->path);
	if (r)
		return r;
	in->session = insp_is_session(in->path);
	int is_trace = prof_is_trace(in->path);
	if (!in->session && is_trace != 1) {
		if (is_trace < 0) {
			insp_errf(o->err, "inspect: %s: %s\n", in->path, strerror(errno));
			return INSP_EXIT_DB;
		}
		if (!(want & EXP_IN_MODEL))
			return prof_input_fail(o, in->path, "not a session or a trace file (a profile database has "
					       "no stacks: give the trace)");
		if (in->pid)
			return insp_usage_error(o, "export", "--pid is for session databases");
		r = prof_db_read(in->path, o, &in->model);
		in->have_model = true; /* freed even when half read */
		return r;
	}
	if (!in->session && in->pid)
		return insp_usage_error(o, "export", "--pid is for session databases");
	if (want & EXP_IN_SAMPLES)
		in->samples = prof_samples_new();
	r = exp_read_trace(in, o, want);
	if (r)
		return r;
	in->tr.raw_times = in->raw_times;
	bool calls = exp_trace_calls(&in->tr) > 0;
	if ((want & EXP_IN_STACKS) && calls) {
		exp_stacks_finish(&in->stacks, &in->tr, o, in->no_files);
		in->have_stacks = true;
	}
	if ((want & EXP_IN_SAMPLES) && prof_samples_count(in->samples)) {
		struct prof_sopts so = {.style = PROF_ST_FLAT, .cutoff = 0.5};
		if ((r = prof_smodel_build(&in->sm, in->samples, &in->tr, o, in->no_files, &so)))
			return r;
		in->have_sm = true;
	}
	bool rows = false; /* an in-process profile: PROF_PAIR rows, no calls */
	for (size_t i = 0; i < in->tr.sim.nthreads; i++)
		rows |= in->tr.sim.threads[i]->has_profile;
	if ((want & EXP_IN_MODEL) && (calls || rows)) {
		prof_model_from_trace(&in->model, &in->tr, o, in->no_files);
		in->have_model = true;
	}
	return 0;
}

void exp_input_free(struct exp_input *in)
{
	if (in->have_model)
		prof_model_free(&in->model);
	if (in->have_sm)
		prof_smodel_free(&in->sm);
	prof_samples_free(in->samples);
	exp_stacks_free(&in->stacks);
	if (in->have_tr)
		prof_trace_free(&in->tr);
	memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------ command -- */

static FILE *exp_out(const struct insp_opts *o, const struct exp_args *a)
{
	return insp_outfile_open(o, a->of, a->output, a->force, false, &a->pos, 1) ? NULL : a->of->f;
}

static int exp_no_stacks(const struct insp_opts *o, const char *path)
{
	insp_errf(o->err, "inspect: %s: no function calls and no samples in the trace (record them with "
		"meminst --trace or --sample)\n", path);
	return INSP_EXIT_NOTFOUND;
}

static int exp_folded(const struct insp_opts *o, const struct exp_args *a, struct exp_input *in, FILE **f)
{
	if (!in->have_stacks && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if (!in->have_stacks) {
		exp_stacks_free(&in->stacks);
		exp_stacks_init(&in->stacks);
		exp_stacks_from_samples(&in->stacks, &in->sm);
		in->have_stacks = true;
	}
	/* allocation samples alone have no time: their bytes by default, as analyse */
	int metric = a->metric;
	if (!a->metric_given && in->stacks.total[EXP_TIME] == 0 && in->stacks.total[EXP_BYTES] > 0)
		metric = EXP_BYTES;
	if (in->stacks.total[metric] == 0) { /* no empty file that looks like a success */
		bool samples = in->sm.s && !exp_trace_calls(&in->tr);
		insp_errf(o->err, "inspect: %s: no %s in the %s%s\n", a->pos,
			metric == EXP_BYTES ? "bytes allocated" : "time", samples ? "samples" : "trace",
			metric == EXP_BYTES ? "" : samples ? " (timer samples need meminst --sample)" : "");
		return INSP_EXIT_NOTFOUND;
	}
	if (!(*f = exp_out(o, a)))
		return INSP_EXIT_USAGE;
	exp_folded_write(&in->stacks, metric, *f);
	return 0;
}

/* pprof: the exact stacks when the trace has calls, else its samples. */
static int exp_pprof(const struct insp_opts *o, const struct exp_args *a, struct exp_input *in, FILE **f)
{
	if (!in->have_stacks && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if ((!a->output || !strcmp(a->output, "-")) && isatty(fileno(o->out)))
		return insp_usage_error(o, "export", "--format pprof writes gzipped binary: give -o FILE");
	struct pprof pp;
	pprof_init(&pp);
	if (in->have_stacks)
		pprof_from_stacks(&pp, &in->stacks, &in->tr);
	else
		pprof_from_samples(&pp, &in->sm, &in->tr);
	int r = 0;
	if (!(*f = exp_out(o, a)))
		r = INSP_EXIT_USAGE;
	else if (pprof_write(&pp, *f) != 0)
		r = INSP_EXIT_DB; /* insp_outfile_close says it */
	pprof_free(&pp);
	return r;
}

/* Is path a trace, or a session that stores one?  (A snapshot file, or a
** session run with --no-time, has snapshots only.) */
static bool exp_has_trace(const char *path)
{
	if (prof_is_trace(path) == 1)
		return true;
	if (insp_is_session(path) != 1)
		return false;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool yes = (db = insp_sqlite_connect(path)) && sqlite3_errcode(db) == SQLITE_OK &&
		   sqlite3_prepare_v2(db, "SELECT count(*) FROM session_trace", -1, &st, NULL) == SQLITE_OK &&
		   sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return yes;
}

/* pprof of a snapshot's memory (--snapshot, or a database without a trace). */
static int exp_pprof_memory(const struct insp_opts *o, const struct exp_args *a, FILE **f)
{
	if ((!a->output || !strcmp(a->output, "-")) && isatty(fileno(o->out)))
		return insp_usage_error(o, "export", "--format pprof writes gzipped binary: give -o FILE");
	int r = prof_input_damaged(o, a->pos); /* a trace or a session cut short: not "not an SQLite file" */
	if (r)
		return r;
	if (prof_db_is_profile(a->pos) == 1) { /* the same application id as snapshots: not "newer schema" */
		insp_errf(o->err, "inspect: %s: a profile database has no stacks and no memory: give the session or "
			"the trace\n", a->pos);
		return INSP_EXIT_DB;
	}
	struct pprof pp;
	pprof_init(&pp);
	r = pprof_from_snapshot(&pp, a->pos, a->pid, a->snapshot, o->no_symbols, o);
	if (!r && !(*f = exp_out(o, a)))
		r = INSP_EXIT_USAGE;
	else if (!r && pprof_write(&pp, *f) != 0)
		r = INSP_EXIT_DB; /* insp_outfile_close says it */
	pprof_free(&pp);
	return r;
}

static int exp_chrome(const struct insp_opts *o, const struct exp_args *a, struct exp_input *in, FILE **f)
{
	if (!exp_trace_calls(&in->tr) && !in->have_sm)
		return exp_no_stacks(o, a->pos);
	if (!(*f = exp_out(o, a)))
		return INSP_EXIT_USAGE;
	struct exp_chrome_opts co = {a->min_us, a->max_size, in->session ? a->pos : NULL, in->tr.h.pid,
				     in->have_sm ? &in->sm : NULL};
	struct exp_chrome_result res;
	int r = exp_chrome_write(&in->tr, o, &co, exp_input_reopen, in, *f, &res);
	char max[32];
	insp_fmt_size(a->max_size, max, sizeof max);
	if (res.capped)
		insp_errf(o->err, "inspect: %s: %llu events shorter than %.3g us left out to keep the file under %s, "
			"%llu written (--max-size 0 writes every event; --min-duration US sets the cut)\n", a->pos,
			(unsigned long long)res.dropped, res.cut_us, max, (unsigned long long)res.written);
	else if (res.dropped)
		insp_errf(o->err, "inspect: %s: %llu events shorter than %g us left out, %llu written\n", a->pos,
			(unsigned long long)res.dropped, a->min_us, (unsigned long long)res.written);
	else if (res.written > 1000000)
		insp_errf(o->err, "inspect: %s: %llu events written (--min-duration US leaves out the short ones)\n",
			a->pos, (unsigned long long)res.written);
	return r;
}

int insp_cmd_export(int argc, char **argv, const struct insp_opts *o)
{
	struct exp_args a;
	int r = exp_parse(o, false, argc, argv, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_opts so = *o;
	so.no_symbols = o->no_symbols || a.no_symbols;
	FILE *f = NULL;
	struct insp_outfile of = {0};
	a.of = &of;
	if (a.format == EXP_PPROF && (a.snapshot || !exp_has_trace(a.pos))) {
		r = exp_pprof_memory(&so, &a, &f);
		int w = insp_outfile_close(o, &of, r == 0);
		return r ? r : w;
	}
	struct exp_input in = {.path = a.pos, .pid = a.pid, .no_files = so.no_symbols, .raw_times = a.raw_times};
	unsigned want = a.format == EXP_CALLGRIND ? EXP_IN_MODEL | EXP_IN_SAMPLES
			: a.format == EXP_FOLDED || a.format == EXP_PPROF ? EXP_IN_STACKS | EXP_IN_SAMPLES
									      : EXP_IN_SAMPLES;
	r = exp_input_read(&in, &so, want);
	if (!r && a.format == EXP_CALLGRIND) {
		if (!in.have_model && !in.have_sm)
			r = exp_no_stacks(o, a.pos);
		else if (!(f = exp_out(o, &a)))
			r = INSP_EXIT_USAGE;
		else if (in.have_model)
			exp_callgrind_write(&in.model, f);
		else
			exp_callgrind_samples(&in.sm, f);
	} else if (!r && a.format == EXP_FOLDED) {
		r = exp_folded(&so, &a, &in, &f);
	} else if (!r && a.format == EXP_PPROF) {
		r = exp_pprof(&so, &a, &in, &f);
	} else if (!r) {
		r = exp_chrome(&so, &a, &in, &f);
	}
	int w = insp_outfile_close(o, &of, r == 0);
	r = r ? r : w;
	exp_input_free(&in);
	return r;
}

/* The parser for `inspect html` (prof_html.c). */
int exp_html_args(int argc, char **argv, const struct insp_opts *o, const char **pos, const char **output,
		  int64_t *pid, bool *no_symbols, bool *force)
{
	struct exp_args a;
	int r = exp_parse(o, true, argc, argv, &a);
	*pos = a.pos, *output = a.output, *pid = a.pid, *no_symbols = a.no_symbols, *force = a.force;
	return r;
}
