/*
** prof_cmd.c — the commands `inspect profile` and `inspect analyse`.
**
** Their options are tables for the one parser (rd_args.c): --help, the
** checks of values and the usage errors come from there.
*/
#include "prof_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


enum {
	PC_STYLE = RD_ID_OWN, PC_DEST, PC_SORT, PC_NO_CALLERS, PC_TOTALS, PC_NO_DETAILS, PC_COLS,
	PC_CUMULATIVE, PC_HIDE, PC_TIME, PC_METRIC, PC_THREAD, PC_CUTOFF, PC_DUMP, PC_NO_COMPENSATE, PC_FOCUS,
};

#define PC_OPTION_NO_COMPENSATE \
	{"no-compensate", 0, RD_OT_FLAG, NULL, "exact traces: raw times, the tracer's calibrated cost\n" \
	 "left in them (default: taken off)", PC_NO_COMPENSATE, 0, 0, NULL}

static const struct rd_option profile_options[] = {
	RD_OPTION_OUTPUT("write the profile database FILE (meminst-profile(5));\n"
			   "an existing FILE is replaced only if it is a profile\n"
			   "(or with -f)"),
	{"dump", 0, RD_OT_MAYBE, "FILE", "write every record as a line of text to FILE\n"
	 "(default: standard output)", PC_DUMP, 0, 0, NULL},
	RD_OPTION_FORCE,
	RD_OPTION_APPEND("append to the --dump FILE instead of replacing it"),
	RD_OPTION_PID("sessions: the process whose trace to read (default:\nthe program's)"),
	RD_OPTION_IMAGE,
	RD_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	RD_OPTION_FULL_NAMES,
	PC_OPTION_NO_COMPENSATE,
	RD_OPTION_END,
};

static const struct rd_cmd_spec profile_spec = {
	"profile", "[options] TRACE|SESSION",
	"Read a trace file (MEMINST=trace=wall|cpu) or the trace kept in a session\n"
	"database (meminst --trace), simulate each thread's call stack and compute\n"
	"CNT, ACC and OWN per function and per caller->called pair (fprof's step 2).\n"
	"Without -o or --dump, print a one-line summary.\n",
	profile_options, 1, 1,
};

static const char *const pc_styles[] = {"fprof", "flat", "tree", "callers", "anomalies", NULL};
static const char *const pc_sorts[] = {"acc", "own", NULL};
static const char *const pc_times[] = {"seconds", "samples", "percent", NULL};
static const char *const pc_metrics[] = {"time", "bytes", "count", NULL};

static const struct rd_option analyse_options[] = {
	{"style", 0, RD_OT_WORD, NULL, "the style (see above)", PC_STYLE, 0, 0, pc_styles},
	RD_OPTION_OUTPUT("write the analysis to FILE instead of standard output"),
	{"dest", 0, RD_OT_FILE, "FILE", "the older spelling of -o FILE", PC_DEST, 0, 0, NULL},
	RD_OPTION_FORCE,
	RD_OPTION_APPEND("append to the -o FILE"),
	RD_OPTION_JSON,
	RD_OPTION_CSV("comma-separated values (fprof: functions, then caller->\n"
			"called pairs; flat: the functions)"),
	RD_OPTION_NO_SYMBOLS("traces: name functions module+offset only"),
	RD_OPTION_FULL_NAMES,
	RD_OPTION_PID("sessions: the process whose trace to read (default: the\nprogram's; of several traced, the one with most samples)"),
	RD_OPTION_IMAGE,
	PC_OPTION_NO_COMPENSATE,
	{"cols", 0, RD_OT_INT, "N", "line width, 80 or more, names cut to fit in every style\n"
	 "(default: the terminal's or $COLUMNS; to a file or\npipe, never cut)", PC_COLS, 80, 10000, NULL},
	{"focus", 0, RD_OT_STR, "FUNC", "only FUNC with its callers and callees (as pprof\n"
	 "-peek); the sampling styles show it as --style callers", PC_FOCUS, 0, 0, NULL},
	{"", 0, RD_OT_FLAG, NULL, "fprof style:", 0, 0, 0, NULL},
	{"sort", 0, RD_OT_WORD, NULL, "order paragraphs and rows by ACC (default) or OWN", PC_SORT, 0, 0, pc_sorts},
	{"no-callers", 0, RD_OT_FLAG, NULL, "only the marked rows, no callers or called", PC_NO_CALLERS, 0, 0, NULL},
	{"totals", 0, RD_OT_FLAG, NULL, "also one set of paragraphs over all threads", PC_TOTALS, 0, 0, NULL},
	{"no-details", 0, RD_OT_FLAG, NULL, "only the totals and the thread headers", PC_NO_DETAILS, 0, 0, NULL},
	{"", 0, RD_OT_FLAG, NULL, "sampling styles:", 0, 0, 0, NULL},
	RD_OPTION_LIMIT("the first N functions (default 25; 0: all)"),
	{"top", 0, RD_OT_INT, "N", "the older spelling of --limit N", RD_ID_LIMIT, 0, RD_INT_MAX, NULL},
	{"cumulative", 0, RD_OT_FLAG, NULL, "order by cumulative figures instead of self", PC_CUMULATIVE, 0, 0,
	 NULL},
	{"hide", 0, RD_OT_STR, "FUNC", "leave FUNC out of every stack: its time goes to its\n"
	 "caller (repeatable)", PC_HIDE, 0, 0, NULL},
	{"time", 0, RD_OT_WORD, NULL, "how times are shown (default seconds)", PC_TIME, 0, 0, pc_times},
	{"metric", 0, RD_OT_WORD, NULL, "timer samples (default), or the bytes or allocations\n"
	 "estimated from allocation samples (the default for a\n"
	 "trace of allocation samples only)", PC_METRIC, 0, 0, pc_metrics},
	{"thread", 0, RD_OT_INT, "N", "only trace thread N", PC_THREAD, 1, UINT32_MAX, NULL},
	{"cutoff", 0, RD_OT_REAL, "PCT", "tree: fold nodes below PCT% of the total (default 0.5)", PC_CUTOFF, 0,
	 100, NULL},
	RD_OPTION_END,
};

static const struct rd_cmd_spec analyse_spec = {
	"analyse", "[options] PROFILE|TRACE|SESSION [TRACE2]",
	"Analyse a profile database (inspect profile -o), a trace file or the trace\n"
	"kept in a session database (meminst).  Styles:\n"
	"  fprof      fprof's analysis of exact traces (the default when the trace\n"
	"             has CALL records): totals, then per thread one paragraph per\n"
	"             function with its callers and called functions; CNT, ACC, OWN\n"
	"  flat       sampled profiles (the default when the trace has samples and\n"
	"             no CALL records): % self, cumulative and self time, calls\n"
	"  tree       the call tree of the samples, recursion collapsed\n"
	"  callers    per function: its callers above, its callees below\n"
	"  anomalies  shares that differ between threads, or between TRACE and\n"
	"             TRACE2, and estimates resting on too few samples\n",
	analyse_options, 1, 2,
};

struct pc_args {
	const char *pos, *pos2;
	const char *output, *dump, *dest, *style;
	bool dump_on, append, force, no_symbols, json, raw_times;
	bool metric_given;
	int64_t pid;
	const struct prof_procs *procs; /* a session of several: said first in text */
	struct prof_aopts ao;
	struct prof_sopts so;
	const char *hide[64];
	const char *fprof_only, *sampling_only; /* the first option of each given */
};

/* ------------------------------------------------------------ parsing -- */

/* One option of profile or analyse (g->opt, its value checked). */
static int pc_option(const struct rd_getopt *g, struct pc_args *a, const struct rd_opts *o)
{
	switch (g->opt->id) {
	case PC_SORT: case PC_NO_CALLERS: case PC_TOTALS: case PC_NO_DETAILS:
		a->fprof_only = a->fprof_only ? a->fprof_only : g->opt->name;
		break;
	case RD_ID_LIMIT: case PC_CUMULATIVE: case PC_HIDE: case PC_TIME: case PC_METRIC: case PC_THREAD:
	case PC_CUTOFF:
		a->sampling_only = a->sampling_only ? a->sampling_only : g->opt->name;
		break;
	}
	switch (g->opt->id) {
	case RD_ID_OUTPUT: case PC_DEST: *(g->spec == &profile_spec ? &a->output : &a->dest) = g->value; break;
	case RD_ID_APPEND: a->append = true; break;
	case RD_ID_FORCE: a->force = true; break;
	case RD_ID_JSON: a->json = true; break;
	case RD_ID_CSV: a->ao.csv = true; break;
	case RD_ID_NO_SYMBOLS: a->no_symbols = true; break;
	case RD_ID_PID: a->pid = g->num; break;
	case RD_ID_IMAGE: rd_strace_want_image(g->num); break;
	case PC_DUMP: a->dump_on = true; break;
	case PC_NO_COMPENSATE: a->raw_times = true; break;
	case PC_STYLE: a->style = g->value, a->so.style = (enum prof_style)g->word; break;
	case PC_SORT: a->ao.sort = g->word ? PROF_SORT_OWN : PROF_SORT_ACC; break;
	case PC_NO_CALLERS: a->ao.callers = false; break;
	case PC_TOTALS: a->ao.totals = true; break;
	case PC_NO_DETAILS: a->ao.details = false; break;
	case PC_COLS: a->ao.cols = (int)g->num; break;
	case PC_FOCUS: a->ao.focus = a->so.focus = g->value; break;
	case RD_ID_LIMIT: a->so.top = g->num > INT_MAX ? INT_MAX : (int)g->num; break;
	case PC_CUMULATIVE: a->so.cumulative = true; break;
	case PC_TIME: a->so.time = (enum prof_tunit)g->word; break;
	case PC_METRIC: a->so.metric = (enum prof_smetric)g->word, a->metric_given = true; break;
	case PC_THREAD: a->so.thread = (uint32_t)g->num; break;
	case PC_CUTOFF: a->so.cutoff = g->real; break;
	case PC_HIDE:
		if (a->so.nhide == sizeof a->hide / sizeof a->hide[0])
			return rd_usage_error(o, g->spec->name, "too many --hide options");
		a->hide[a->so.nhide++] = g->value;
		break;
	}
	return RD_CONTINUE;
}

/* What only the whole command line can tell. */
static int pc_check(const struct rd_opts *o, bool analyse, struct pc_args *a)
{
	const char *cmd = analyse ? "analyse" : "profile";
	if (a->pos2 && a->so.style != PROF_ST_ANOMALIES)
		return rd_usage_error(o, cmd, "unexpected argument '%s' (two traces are for --style anomalies)",
					a->pos2);
	if (a->append && !(analyse ? a->dest != NULL : a->dump != NULL))
		return rd_usage_error(o, cmd, "--append needs %s", analyse ? "-o FILE" : "--dump FILE");
	if (a->json && a->ao.csv)
		return rd_usage_error(o, cmd, "--json and --csv: choose one");
	const char *ins[] = {a->pos, a->pos2};
	int r = rd_outfile_refused(o, analyse ? a->dest : a->dump, a->force, a->append, ins, 2); /* before the reading */
	if (r)
		return r;
	if (a->so.focus && (a->so.style == PROF_ST_TREE || a->so.style == PROF_ST_ANOMALIES))
		return rd_usage_error(o, cmd, "--focus is for the fprof, flat and callers styles");
	if (a->ao.csv && a->so.style != PROF_ST_FPROF && a->so.style != PROF_ST_FLAT)
		return rd_usage_error(o, cmd, "--csv is for the fprof and flat styles; --json gives every style");
	return RD_CONTINUE;
}

static int pc_parse(const struct rd_opts *o, bool analyse, int argc, char **argv, struct pc_args *a)
{
	/* cols -1 until --cols or the end of parsing decides it */
	*a = (struct pc_args){.ao = {.sort = PROF_SORT_ACC, .callers = true, .details = true, .cols = -1}};
	a->so = (struct prof_sopts){.top = 25, .cutoff = 0.5, .hide = a->hide, .style = PROF_ST_FPROF};
	struct rd_getopt g;
	rd_getopt_init(&g, analyse ? &analyse_spec : &profile_spec, argc, argv, o);
	int r;
	while ((r = rd_getopt(&g)) == RD_OPTION)
		if ((r = pc_option(&g, a, o)) != RD_CONTINUE)
			return r;
	if (r != RD_CONTINUE)
		return r;
	a->dump = g.maybe_value;
	a->pos = g.pos[0];
	a->pos2 = g.npos == 2 ? g.pos[1] : NULL;
	/* Width: --cols, else the terminal's (at least 80) when the analysis goes
	** to standard output, else no cutting. */
	if (a->ao.cols < 0)
		a->ao.cols = a->dest || !o->columns ? 0 : o->columns < 80 ? 80 : o->columns;
	if ((r = pc_check(o, analyse, a)) != RD_CONTINUE)
		return r;
	a->so.json = a->json;
	a->so.csv = a->ao.csv;
	a->so.cols = a->ao.cols;
	return RD_CONTINUE;
}

/* ------------------------------------------------------------ reading -- */


/* ------------------------------------------------------------ profile -- */

static int pc_open_out(const struct rd_opts *o, const struct pc_args *a, const char *path,
		       struct rd_outfile *of)
{
	const char *ins[] = {a->pos, a->pos2};
	return rd_outfile_open(o, of, path, a->force, a->append, ins, 2);
}

static int pc_dump(const struct rd_opts *o, const struct pc_args *a, struct prof_trace *tr)
{
	struct rd_outfile of;
	int r = pc_open_out(o, a, a->dump, &of);
	if (r)
		return r;
	struct rd_pool pool = {0};
	struct prof_dump d = {of.f, prof_symtab_new(tr, o, a->no_symbols || o->no_symbols, &pool),
			      prof_ns_per_tick(tr), tr};
	struct rd_opts quiet = *o;
	quiet.err = fopen("/dev/null", "w");
	struct prof_trace again;
	/* the second pass repeats the first one's messages: silence them */
	r = prof_source_read(tr->path, a->pid, quiet.err ? &quiet : o, &again, prof_dump_record, &d, NULL, NULL);
	if (quiet.err)
		fclose(quiet.err);
	prof_trace_free(&again);
	prof_symtab_free(d.syms);
	rd_pool_free(&pool);
	int w = rd_outfile_close(o, &of, r == 0);
	return r ? r : w;
}

static void pc_summary(const struct rd_opts *o, const struct prof_model *m, const char *path)
{
	size_t nf = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		nf += m->funcs[i].addr > ENG_FN_PSEUDO_MAX;
	fprintf(o->out, "%s: %zu thread%s, %llu records, %zu functions, %.3f ms (%s clock)", path,
		m->nthreads, m->nthreads == 1 ? "" : "s", (unsigned long long)m->events, nf,
		(double)m->acc / 1e6, prof_clock_name(m->clock));
	if (m->lost)
		fprintf(o->out, ", %llu records lost", (unsigned long long)m->lost);
	if (m->untraced)
		fprintf(o->out, ", %llu returns from untraced entries", (unsigned long long)m->untraced);
	fputc('\n', o->out);
}

int prof_cmd_profile(int argc, char **argv, const struct rd_opts *o)
{
	struct pc_args a;
	int r = pc_parse(o, false, argc, argv, &a);
	if (r != RD_CONTINUE)
		return r;
	if ((r = rd_input_check(o, a.pos)))
		return r;
	struct prof_trace tr;
	struct prof_images im = {0};
	r = prof_source_read(a.pos, a.pid, o, &tr, NULL, NULL, NULL, NULL);
	if (!r && rd_is_session(a.pos))
		r = prof_images_read(&im, a.pos, o, &tr, 0);
	if (!r && a.dump_on)
		r = pc_dump(o, &a, &tr);
	bool dump_stdout = a.dump_on && (!a.dump || !strcmp(a.dump, "-"));
	if (!r && dump_stdout) /* the records on stdout: no place for the line there */
		prof_images_say(&im, a.pos, o);
	if (!r && (a.output || !dump_stdout)) {
		struct prof_model m;
		tr.raw_times = a.raw_times;
		prof_model_from_trace(&m, &tr, o, a.no_symbols || o->no_symbols);
		if (a.output)
			r = prof_db_write(&m, a.output, a.force, o);
		if (!r && !dump_stdout)
			pc_summary(o, &m, a.pos);
		if (!r && !dump_stdout)
			prof_images_text(&im, o->out);
		prof_model_free(&m);
	}
	prof_trace_free(&tr);
	prof_images_free(&im);
	return r;
}

/* ------------------------------------------------------------ analyse -- */

/* Text output of a session of several processes: the processes by samples
** and which one follows, before the analysis. */
static void pc_preamble(const struct rd_opts *o, const struct pc_args *a, FILE *f)
{
	if (!a->procs || a->json || a->ao.csv)
		return;
	struct rd_opts to = *o;
	to.out = f;
	rd_doc_t *d = rd_doc_new(&to, NULL);
	rd_table_t *t = prof_procs_table(d, a->procs, true, 15);
	rd_table_note(t, "analysed below: pid %lld, the heaviest; --pid PID for another", (long long)a->pid);
	static const struct prof_images none;
	prof_procs_images(d, a->so.images ? a->so.images : &none, a->procs); /* the programs of those that exec'd */
	rd_doc_print(d);
	rd_doc_free(d);
	fputc('\n', f);
}

/*
** A session of several traced processes, no --pid: the one with the most
** samples (else exact calls) is analysed, not the program's first process
** (a shell or make whose children did the work).  Fills a->pid and
** a->procs (freed by the caller); 0 or an exit code.
*/
static int pc_pick_process(const struct rd_opts *o, struct pc_args *a, struct prof_procs *ps)
{
	if (a->pid || !rd_is_session(a->pos))
		return 0;
	int r = prof_procs_read(a->pos, o, ps);
	if (r)
		return r;
	size_t traced = 0;
	for (size_t i = 0; i < ps->n; i++)
		traced += ps->p[i].trace_read;
	const struct prof_proc *p = prof_procs_heaviest(ps, true);
	if (traced > 1 && p) {
		a->pid = p->pid;
		a->procs = ps;
	}
	return 0;
}

/* Calls in the trace (exact tracing). */
static uint64_t pc_calls(const struct prof_trace *tr)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		n += tr->sim.threads[i]->calls;
	return n;
}

/* The samples of one trace as a display model. */
static int pc_smodel(const struct rd_opts *o, const struct pc_args *a, const char *path,
		     struct prof_samples *s, struct prof_trace *tr, struct prof_smodel *m)
{
	int r = 0;
	memset(m, 0, sizeof *m);
	if (!tr) {
		struct prof_trace t2;
		r = prof_source_read(path, a->pid, o, &t2, NULL, NULL, NULL, s);
		if (!r)
			r = pc_smodel(o, a, path, s, &t2, m);
		prof_trace_free(&t2);
		return r;
	}
	if (!prof_samples_count(s) && (tr->h.sample_hz || tr->h.alloc_sample)) {
		rd_errf(o->err, "inspect: %s: no samples of process %u: it ran too briefly for them, or its threads "
			"kept SIGPROF blocked (other processes of a session: --pid)\n", path, tr->h.pid);
		return RD_EXIT_NOTFOUND;
	}
	if (!prof_samples_count(s)) {
		rd_errf(o->err, "inspect: %s: no samples in this trace (record them with MEMINST=sample=HZ or "
			"alloc_sample=BYTES); --style fprof analyses exact traces\n", path);
		return RD_EXIT_NOTFOUND;
	}
	return prof_smodel_build(m, s, tr, o, a->no_symbols || o->no_symbols, &a->so);
}

/* An option of the other kind of display would be ignored without a word
** (analyse --thread 2 of an exact trace printed every thread): known only
** once the style is, which the trace decides when --style is not given. */
static int pc_option_misplaced(const struct rd_opts *o, const struct pc_args *a, bool fprof)
{
	if (fprof && a->sampling_only)
		return rd_usage_error(o, "analyse", "--%s is for the sampling styles (flat, tree, callers, "
					"anomalies), not fprof's analysis of an exact trace", a->sampling_only);
	if (!fprof && a->fprof_only)
		return rd_usage_error(o, "analyse", "--%s is for the fprof style (exact traces), not --style %s",
					a->fprof_only, pc_styles[a->so.style]);
	return 0;
}

static int pc_sampled(const struct rd_opts *o, struct pc_args *a, struct prof_samples *s,
		      struct prof_trace *tr)
{
	int bad = pc_option_misplaced(o, a, false);
	if (bad)
		return bad;
	struct prof_smodel m, m2;
	struct prof_samples *s2 = a->pos2 ? prof_samples_new() : NULL;
	bool have2 = false;
	int r = pc_smodel(o, a, a->pos, s, tr, &m);
	if (!r && a->so.focus) {
		if (a->so.style == PROF_ST_FLAT) /* one function: its callers and callees */
			a->so.style = PROF_ST_CALLERS;
		bool known = false;
		for (size_t i = 0; i < m.nfuncs && !known; i++)
			known = !strcmp(m.funcs[i].name, a->so.focus);
		if (!known) {
			rd_errf(o->err, "inspect: %s: no function '%s' in the samples\n", a->pos, a->so.focus);
			prof_smodel_free(&m);
			prof_samples_free(s2);
			return RD_EXIT_NOTFOUND;
		}
	}
	if (!r && s2) {
		struct prof_sopts so2 = a->so;
		so2.thread = 0;
		so2.nhide = a->so.nhide;
		struct pc_args a2 = *a;
		a2.so = so2;
		a2.pid = 0;
		r = pc_smodel(o, &a2, a->pos2, s2, NULL, &m2);
		have2 = r == 0;
	}
	struct rd_outfile of;
	if (!r && !(r = pc_open_out(o, a, a->dest, &of))) {
		pc_preamble(o, a, of.f);
		prof_display(&m, have2 ? &m2 : NULL, &a->so, of.f);
		r = rd_outfile_close(o, &of, true);
	}
	if (have2)
		prof_smodel_free(&m2);
	prof_samples_free(s2);
	prof_smodel_free(&m);
	return r;
}

static int pc_output_fprof(const struct rd_opts *o, const struct pc_args *a, struct prof_model *m)
{
	struct rd_outfile of;
	int r = pc_option_misplaced(o, a, true);
	bool known = !a->ao.focus;
	for (size_t i = 0; i < m->nfuncs && !known; i++)
		known = !strcmp(m->funcs[i].name, a->ao.focus);
	if (!r && !known)
		r = (rd_errf(o->err, "inspect: %s: no function '%s' in the profile\n", a->pos, a->ao.focus),
		     RD_EXIT_NOTFOUND);
	if (r || (r = pc_open_out(o, a, a->dest, &of))) {
		prof_model_free(m);
		return r;
	}
	pc_preamble(o, a, of.f);
	if (a->json)
		prof_analyse_json(m, &a->ao, of.f);
	else if (a->ao.csv)
		prof_analyse_csv(m, &a->ao, of.f);
	else
		prof_analyse_text(m, &a->ao, of.f);
	r = rd_outfile_close(o, &of, true);
	prof_model_free(m);
	return r;
}

int prof_cmd_analyse(int argc, char **argv, const struct rd_opts *o)
{
	struct pc_args a;
	int r = pc_parse(o, true, argc, argv, &a);
	if (r != RD_CONTINUE)
		return r;
	if ((r = rd_input_check(o, a.pos)))
		return r;
	struct prof_model m;
	if (prof_is_trace(a.pos) == 1 || rd_is_session(a.pos)) {
		struct prof_procs ps = {0};
		if ((r = pc_pick_process(o, &a, &ps))) {
			prof_procs_free(&ps);
			return r;
		}
		struct prof_trace tr;
		struct prof_samples *s = prof_samples_new();
		r = prof_source_read(a.pos, a.pid, o, &tr, NULL, NULL, NULL, s);
		struct prof_images im = {0}; /* the other programs of the process (it exec'd) */
		if (!r && rd_is_session(a.pos) && !(r = prof_images_read(&im, a.pos, o, &tr, prof_samples_count(s)))) {
			if (a.ao.csv) /* CSV has no place for the line */
				prof_images_say(&im, a.pos, o);
			else
				a.so.images = a.ao.images = &im;
		}
		/* a sampled profile; a sampled process with no sample (too brief,
		** or a shell whose children did the work) says so, no empty fprof */
		if (!r && !a.style && !pc_calls(&tr) &&
		    (prof_samples_count(s) || tr.h.sample_hz || tr.h.alloc_sample))
			a.so.style = PROF_ST_FLAT;
		if (!r && !a.metric_given && !tr.h.sample_hz && tr.h.alloc_sample)
			a.so.metric = PROF_MT_BYTES; /* --alloc-sample alone: no timer sample to show */
		if (!r && a.so.style != PROF_ST_FPROF)
			r = pc_sampled(o, &a, s, &tr);
		else if (!r) {
			tr.raw_times = a.raw_times;
			prof_model_from_trace(&m, &tr, o, a.no_symbols || o->no_symbols);
		}
		bool fprof = !r && a.so.style == PROF_ST_FPROF;
		prof_trace_free(&tr);
		prof_samples_free(s);
		if (fprof)
			r = pc_output_fprof(o, &a, &m);
		prof_images_free(&im);
		prof_procs_free(&ps);
		return r;
	}
	if (a.pid)
		return rd_usage_error(o, "analyse", "--pid is for session databases");
	if (a.so.style != PROF_ST_FPROF) {
		if (prof_is_trace(a.pos) < 0)
			rd_errf(o->err, "inspect: %s: %s\n", a.pos, strerror(errno));
		else
			rd_errf(o->err, "inspect: %s: --style %s needs a trace with samples (or a session), not a "
				"profile database\n", a.pos, a.style);
		return prof_is_trace(a.pos) < 0 ? RD_EXIT_DB : RD_EXIT_USAGE;
	}
	if ((r = prof_db_read(a.pos, o, &m)) != 0) {
		prof_model_free(&m);
		return r;
	}
	return pc_output_fprof(o, &a, &m);
}
