/*
** prof_cmd.c — the commands `inspect profile` and `inspect analyse`.
**
** Their options do not fit the snapshot commands' shared table (--dump
** takes an optional file, --sort a key, --cols a width), so they are parsed
** here, with the same conventions: options before or after the positional
** argument, `--opt=value` or `--opt value`, one usage line and exit 2 on a
** mistake.
*/
#include "prof_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "meminst-nearest.h"

#define PROF_STYLES "fprof, flat, tree, callers, anomalies"

static const char profile_help[] =
	"Usage: inspect profile [options] TRACE|SESSION\n\n"
	"Read a trace file (MEMINST=trace=wall|cpu) or the trace kept in a session\n"
	"database (meminst --trace), simulate each thread's call stack and compute\n"
	"CNT, ACC and OWN per function and per caller->called pair (fprof's step 2).\n"
	"Without -o or --dump, print a one-line summary.\n\n"
	"  -o, --output FILE  write the profile database FILE (meminst-profile(5));\n"
	"                     an existing FILE is replaced only if it is a profile\n"
	"  --dump [FILE]      write every record as a line of text to FILE\n"
	"                     (default: standard output)\n"
	"  --append           append to the --dump FILE instead of replacing it\n"
	"  --pid PID          sessions: the process whose trace to read (default:\n"
	"                     the program's)\n"
	"  --no-symbols       name functions module+offset, without reading module files\n"
	"  --full-names       keep C++ template arguments (std::map<>::… by default)\n"
	"  --help             this text\n";

static const char analyse_help[] =
	"Usage: inspect analyse [options] PROFILE|TRACE|SESSION [TRACE2]\n\n"
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
	"             TRACE2, and estimates resting on too few samples\n\n"
	"  --style NAME       fprof, flat, tree, callers or anomalies\n"
	"  -o, --output FILE  write the analysis to FILE instead of standard output\n"
	"                     (--dest FILE is the older spelling)\n"
	"  --append           append to the -o FILE\n"
	"  --json             one JSON document\n"
	"  --csv              comma-separated values (fprof: functions, then caller->\n"
	"                     called pairs; flat: the functions)\n"
	"  --no-symbols       traces: name functions module+offset only\n"
	"  --full-names       keep C++ template arguments (std::map<>::… by default)\n"
	"  --pid PID          sessions: the process whose trace to read\n"
	"fprof style:\n"
	"  --sort acc|own     order paragraphs and rows by ACC (default) or OWN\n"
	"  --no-callers       only the marked rows, no callers or called\n"
	"  --totals           also one set of paragraphs over all threads\n"
	"  --no-details       only the totals and the thread headers\n"
	"  --cols N           line width, 80 or more, names cut to fit (default: the\n"
	"                     terminal's or $COLUMNS; to a file or pipe, never cut)\n"
	"sampling styles:\n"
	"  --top N            the first N functions (default 25; 0: all)\n"
	"  --cumulative       order by cumulative figures instead of self\n"
	"  --hide FUNC        leave FUNC out of every stack: its time goes to its\n"
	"                     caller (repeatable)\n"
	"  --time seconds|samples|percent   how times are shown (default seconds)\n"
	"  --metric time|bytes|count        timer samples (default), or the bytes or\n"
	"                     allocations estimated from allocation samples (the\n"
	"                     default for a trace of allocation samples only)\n"
	"  --thread N         only trace thread N\n"
	"  --cutoff PCT       tree: fold nodes below PCT% of the total (default 0.5)\n"
	"  --help             this text\n";

struct pc_args {
	const char *pos, *pos2;
	const char *output, *dump, *dest, *style;
	bool dump_on, dump_maybe_pos, append, no_symbols, json;
	bool metric_given;
	int64_t pid;
	struct prof_aopts ao;
	struct prof_sopts so;
	const char *hide[64];
};

/* ------------------------------------------------------------ parsing -- */

/* An option neither command knows: name the nearest one of CMD's. */
static int pc_unknown(const struct insp_opts *o, const char *cmd, const char *name)
{
	static const char *const analyse_opts[] = {
		"style", "output", "dest", "append", "json", "csv", "no-symbols", "full-names", "pid",
		"sort", "no-callers", "totals", "no-details", "cols", "top", "cumulative", "hide", "time",
		"metric", "thread", "cutoff", "help"};
	static const char *const profile_opts[] = {"output", "dump", "append", "pid",
						   "no-symbols", "full-names", "help"};
	bool analyse = !strcmp(cmd, "analyse");
	const char *near = NULL;
	if (!strncmp(name, "--", 2))
		near = analyse ? meminst_nearest(name + 2, strlen(name + 2), analyse_opts,
						 sizeof analyse_opts / sizeof analyse_opts[0])
			       : meminst_nearest(name + 2, strlen(name + 2), profile_opts,
						 sizeof profile_opts / sizeof profile_opts[0]);
	if (near)
		return insp_usage_error(o, cmd, "unknown option '%s' (did you mean '--%s'?)", name, near);
	return insp_usage_error(o, cmd, "unknown option '%s'", name);
}

static int pc_value(const struct insp_opts *o, const char *cmd, const char *name, const char *eq,
		    int argc, char **argv, int *i, const char **out)
{
	if (eq) {
		*out = eq + 1;
		return INSP_CONTINUE;
	}
	if (*i + 1 >= argc)
		return insp_usage_error(o, cmd, "option '%s' needs a value", name);
	*out = argv[++*i];
	return INSP_CONTINUE;
}

static int pc_number(const struct insp_opts *o, const char *name, const char *eq, int argc, char **argv,
		     int *i, int64_t lo, int64_t hi, int64_t *out)
{
	const char *v = NULL;
	int r = pc_value(o, "analyse", name, eq, argc, argv, i, &v);
	if (r != INSP_CONTINUE)
		return r;
	if (!insp_parse_int(v, out) || *out < lo || *out > hi)
		return insp_usage_error(o, "analyse", "%s needs a number from %lld to %lld, not '%s'", name,
					(long long)lo, (long long)hi, v);
	return INSP_CONTINUE;
}

/* One of words[] (NULL-terminated) for option name: its index in *out. */
static int pc_word(const struct insp_opts *o, const char *name, const char *eq, int argc, char **argv, int *i,
		   const char *const *words, int *out)
{
	const char *v = NULL;
	int r = pc_value(o, "analyse", name, eq, argc, argv, i, &v);
	if (r != INSP_CONTINUE)
		return r;
	for (int k = 0; words[k]; k++)
		if (!strcmp(v, words[k])) {
			*out = k;
			return INSP_CONTINUE;
		}
	return insp_usage_error(o, "analyse", "%s takes %s%s%s%s%s, not '%s'", name, words[0],
				words[2] ? ", " : " or ", words[1], words[2] ? " or " : "", words[2] ? words[2] : "", v);
}

/* The options of the sampling styles; INSP_EXIT_NOTFOUND: not one of them. */
static int pc_sampling_opt(const struct insp_opts *o, struct pc_args *a, const char *name, const char *eq,
			   int argc, char **argv, int *i)
{
	static const char *const times[] = {"seconds", "samples", "percent", NULL};
	static const char *const metrics[] = {"time", "bytes", "count", NULL};
	int64_t n;
	int k, r;
	if (!strcmp(name, "--cumulative")) {
		a->so.cumulative = true;
		return INSP_CONTINUE;
	}
	if (!strcmp(name, "--top")) {
		if ((r = pc_number(o, name, eq, argc, argv, i, 0, 1000000, &n)) == INSP_CONTINUE)
			a->so.top = (int)n;
		return r;
	}
	if (!strcmp(name, "--thread")) {
		if ((r = pc_number(o, name, eq, argc, argv, i, 1, UINT32_MAX, &n)) == INSP_CONTINUE)
			a->so.thread = (uint32_t)n;
		return r;
	}
	if (!strcmp(name, "--cutoff")) {
		if ((r = pc_number(o, name, eq, argc, argv, i, 0, 100, &n)) == INSP_CONTINUE)
			a->so.cutoff = (double)n;
		return r;
	}
	if (!strcmp(name, "--time")) {
		if ((r = pc_word(o, name, eq, argc, argv, i, times, &k)) == INSP_CONTINUE)
			a->so.time = (enum prof_tunit)k;
		return r;
	}
	if (!strcmp(name, "--metric")) {
		if ((r = pc_word(o, name, eq, argc, argv, i, metrics, &k)) == INSP_CONTINUE)
			a->so.metric = (enum prof_smetric)k, a->metric_given = true;
		return r;
	}
	if (!strcmp(name, "--hide")) {
		const char *v = NULL;
		if ((r = pc_value(o, "analyse", name, eq, argc, argv, i, &v)) != INSP_CONTINUE)
			return r;
		if (a->so.nhide == sizeof a->hide / sizeof a->hide[0])
			return insp_usage_error(o, "analyse", "too many --hide options");
		a->hide[a->so.nhide++] = v;
		return INSP_CONTINUE;
	}
	return INSP_EXIT_NOTFOUND;
}

static int pc_analyse_opt(const struct insp_opts *o, struct pc_args *a, const char *name,
			  const char *eq, int argc, char **argv, int *i)
{
	const char *v = NULL;
	int r = INSP_CONTINUE;
	if ((r = pc_sampling_opt(o, a, name, eq, argc, argv, i)) != INSP_EXIT_NOTFOUND)
		return r;
	r = INSP_CONTINUE;
	if (!strcmp(name, "--no-callers")) a->ao.callers = false;
	else if (!strcmp(name, "--totals")) a->ao.totals = true;
	else if (!strcmp(name, "--no-details")) a->ao.details = false;
	else if (!strcmp(name, "--json")) a->json = true;
	else if (!strcmp(name, "--csv")) a->ao.csv = true;
	else if (!strcmp(name, "--dest") || !strcmp(name, "-o") || !strcmp(name, "--output"))
		r = pc_value(o, "analyse", name, eq, argc, argv, i, &a->dest);
	else if (!strcmp(name, "--style")) r = pc_value(o, "analyse", name, eq, argc, argv, i, &a->style);
	else if (!strcmp(name, "--sort")) {
		if ((r = pc_value(o, "analyse", name, eq, argc, argv, i, &v)) != INSP_CONTINUE)
			return r;
		if (strcmp(v, "acc") && strcmp(v, "own"))
			return insp_usage_error(o, "analyse", "--sort takes acc or own, not '%s'", v);
		a->ao.sort = strcmp(v, "own") ? PROF_SORT_ACC : PROF_SORT_OWN;
	} else if (!strcmp(name, "--cols")) {
		int64_t n;
		if ((r = pc_value(o, "analyse", name, eq, argc, argv, i, &v)) != INSP_CONTINUE)
			return r;
		if (!insp_parse_int(v, &n) || n < 80 || n > 10000)
			return insp_usage_error(o, "analyse", "--cols needs a width of 80 or more, not '%s'", v);
		a->ao.cols = (int)n;
	} else
		return pc_unknown(o, "analyse", name);
	return r;
}

static int pc_profile_opt(const struct insp_opts *o, struct pc_args *a, const char *name,
			  const char *eq, int argc, char **argv, int *i)
{
	if (!strcmp(name, "-o") || !strcmp(name, "--output"))
		return pc_value(o, "profile", name, eq, argc, argv, i, &a->output);
	if (!strcmp(name, "--dump")) {
		a->dump_on = true;
		if (eq)
			a->dump = eq + 1;
		else if (*i + 1 < argc && (argv[*i + 1][0] != '-' || !strcmp(argv[*i + 1], "-")))
			a->dump_maybe_pos = true; /* FILE, or the trace: decided at the end */
		return INSP_CONTINUE;
	}
	return pc_unknown(o, "profile", name);
}

static int pc_parse(const struct insp_opts *o, bool analyse, int argc, char **argv, struct pc_args *a)
{
	const char *cmd = analyse ? "analyse" : "profile";
	const char *pos[3];
	int npos = 0, dump_pos = -1;
	/* cols -1 until --cols or the end of parsing decides it */
	*a = (struct pc_args){.ao = {.sort = PROF_SORT_ACC, .callers = true, .details = true, .cols = -1}};
	a->so = (struct prof_sopts){.top = 25, .cutoff = 0.5, .hide = a->hide};
	insp_set_full_names(false);
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *arg = argv[i], *eq = strchr(arg, '=');
		if (arg[0] != '-' || !strcmp(arg, "-")) {
			if (npos == 3)
				return insp_usage_error(o, cmd, "unexpected argument '%s'", arg);
			pos[npos++] = arg;
			continue;
		}
		snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
		int r = INSP_CONTINUE;
		if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
			fputs(analyse ? analyse_help : profile_help, o->out);
			return INSP_EXIT_OK;
		} else if (!strcmp(name, "--append")) a->append = true;
		else if (!strcmp(name, "--no-symbols")) a->no_symbols = true;
		else if (!strcmp(name, "--full-names")) insp_set_full_names(true);
		else if (!strcmp(name, "--pid")) {
			const char *v = NULL;
			if ((r = pc_value(o, cmd, name, eq, argc, argv, &i, &v)) == INSP_CONTINUE &&
			    (!insp_parse_int(v, &a->pid) || a->pid <= 0))
				r = insp_usage_error(o, cmd, "--pid needs a process id, not '%s'", v);
		} else if (analyse) r = pc_analyse_opt(o, a, name, eq, argc, argv, &i);
		else {
			r = pc_profile_opt(o, a, name, eq, argc, argv, &i);
			if (a->dump_maybe_pos && dump_pos < 0)
				dump_pos = npos;
		}
		if (r != INSP_CONTINUE)
			return r;
	}
	/* Width: --cols, else the terminal's (at least 80) when the analysis goes
	** to standard output, else no cutting. */
	if (a->ao.cols < 0)
		a->ao.cols = a->dest || !o->columns ? 0 : o->columns < 80 ? 80 : o->columns;
	/* `--dump FILE TRACE`: the word after --dump is FILE when another follows */
	if (dump_pos >= 0 && npos == 2) {
		a->dump = pos[dump_pos];
		pos[dump_pos] = pos[1 - dump_pos];
		npos = 1;
	}
	if (npos == 0)
		return insp_usage_error(o, cmd, "missing argument: inspect %s [options] %s", cmd,
					analyse ? "PROFILE|TRACE" : "TRACE");
	a->so.style = PROF_ST_FPROF;
	if (a->style) {
		static const char *const styles[] = {"fprof", "flat", "tree", "callers", "anomalies", NULL};
		int k;
		for (k = 0; styles[k] && strcmp(styles[k], a->style); k++)
			;
		if (!styles[k])
			return insp_usage_error(o, cmd, "--style '%s' is not available; styles: %s", a->style,
						PROF_STYLES);
		a->so.style = (enum prof_style)k;
	}
	if (npos > 2 || (npos == 2 && a->so.style != PROF_ST_ANOMALIES))
		return insp_usage_error(o, cmd, "unexpected argument '%s'%s", pos[npos - 1],
					analyse && npos == 2 ? " (two traces are for --style anomalies)" : "");
	a->pos = pos[0];
	a->pos2 = npos == 2 ? pos[1] : NULL;
	if (a->append && !(analyse ? a->dest != NULL : a->dump != NULL))
		return insp_usage_error(o, cmd, "--append needs %s", analyse ? "-o FILE" : "--dump FILE");
	if (a->json && a->ao.csv)
		return insp_usage_error(o, cmd, "--json and --csv: choose one");
	if (a->ao.csv && a->so.style != PROF_ST_FPROF && a->so.style != PROF_ST_FLAT)
		return insp_usage_error(o, cmd, "--csv is for the fprof and flat styles; --json gives every style");
	a->so.json = a->json;
	a->so.csv = a->ao.csv;
	return INSP_CONTINUE;
}

/* ------------------------------------------------------------ reading -- */


/* ------------------------------------------------------------ profile -- */

static FILE *pc_open_out(const struct insp_opts *o, const char *path, bool append)
{
	if (!path || !strcmp(path, "-"))
		return o->out;
	FILE *f = fopen(path, append ? "a" : "w");
	if (!f)
		fprintf(o->err, "inspect: %s: %s\n", path, strerror(errno));
	return f;
}

static int pc_close_out(const struct insp_opts *o, const char *path, FILE *f)
{
	if (f == o->out)
		return 0;
	if (ferror(f) | fclose(f)) {
		fprintf(o->err, "inspect: %s: write error\n", path);
		return INSP_EXIT_DB;
	}
	return 0;
}

static int pc_dump(const struct insp_opts *o, const struct pc_args *a, struct prof_trace *tr)
{
	FILE *f = pc_open_out(o, a->dump, a->append);
	if (!f)
		return INSP_EXIT_USAGE;
	struct insp_pool pool = {0};
	struct prof_dump d = {f, prof_symtab_new(tr, o, a->no_symbols || o->no_symbols, &pool),
			      prof_ns_per_tick(tr), tr};
	struct insp_opts quiet = *o;
	quiet.err = fopen("/dev/null", "w");
	struct prof_trace again;
	/* the second pass repeats the first one's messages: silence them */
	int r = prof_source_read(tr->path, a->pid, quiet.err ? &quiet : o, &again, prof_dump_record, &d, NULL, NULL);
	if (quiet.err)
		fclose(quiet.err);
	prof_trace_free(&again);
	prof_symtab_free(d.syms);
	insp_pool_free(&pool);
	int w = pc_close_out(o, a->dump, f);
	return r ? r : w;
}

static void pc_summary(const struct insp_opts *o, const struct prof_model *m, const char *path)
{
	size_t nf = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		nf += m->funcs[i].addr > PROF_FN_PSEUDO_MAX;
	fprintf(o->out, "%s: %zu thread%s, %llu records, %zu functions, %.3f ms (%s clock)", path,
		m->nthreads, m->nthreads == 1 ? "" : "s", (unsigned long long)m->events, nf,
		(double)m->acc / 1e6, prof_clock_name(m->clock));
	if (m->lost)
		fprintf(o->out, ", %llu records lost", (unsigned long long)m->lost);
	if (m->untraced)
		fprintf(o->out, ", %llu returns from untraced entries", (unsigned long long)m->untraced);
	fputc('\n', o->out);
}

int insp_cmd_profile(int argc, char **argv, const struct insp_opts *o)
{
	struct pc_args a;
	int r = pc_parse(o, false, argc, argv, &a);
	if (r != INSP_CONTINUE)
		return r;
	if ((r = insp_input_check(o, a.pos)))
		return r;
	struct prof_trace tr;
	r = prof_source_read(a.pos, a.pid, o, &tr, NULL, NULL, NULL, NULL);
	if (!r && a.dump_on)
		r = pc_dump(o, &a, &tr);
	bool dump_stdout = a.dump_on && (!a.dump || !strcmp(a.dump, "-"));
	if (!r && (a.output || !dump_stdout)) {
		struct prof_model m;
		prof_model_from_trace(&m, &tr, o, a.no_symbols || o->no_symbols);
		if (a.output)
			r = prof_db_write(&m, a.output, o);
		if (!r && !dump_stdout)
			pc_summary(o, &m, a.pos);
		prof_model_free(&m);
	}
	prof_trace_free(&tr);
	return r;
}

/* ------------------------------------------------------------ analyse -- */

/* Calls in the trace (exact tracing). */
static uint64_t pc_calls(const struct prof_trace *tr)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		n += tr->sim.threads[i]->calls;
	return n;
}

/* The samples of one trace as a display model. */
static int pc_smodel(const struct insp_opts *o, const struct pc_args *a, const char *path,
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
		fprintf(o->err, "inspect: %s: no samples of process %u: it ran too briefly for them (other processes "
			"of a session: --pid)\n", path, tr->h.pid);
		return INSP_EXIT_NOTFOUND;
	}
	if (!prof_samples_count(s)) {
		fprintf(o->err, "inspect: %s: no samples in this trace (record them with MEMINST=sample=HZ or "
			"alloc_sample=BYTES); --style fprof analyses exact traces\n", path);
		return INSP_EXIT_NOTFOUND;
	}
	return prof_smodel_build(m, s, tr, o, a->no_symbols || o->no_symbols, &a->so);
}

static int pc_sampled(const struct insp_opts *o, struct pc_args *a, struct prof_samples *s,
		      struct prof_trace *tr)
{
	struct prof_smodel m, m2;
	struct prof_samples *s2 = a->pos2 ? prof_samples_new() : NULL;
	bool have2 = false;
	int r = pc_smodel(o, a, a->pos, s, tr, &m);
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
	FILE *f = r ? NULL : pc_open_out(o, a->dest, a->append);
	if (!r && !f)
		r = INSP_EXIT_USAGE;
	if (f) {
		prof_display(&m, have2 ? &m2 : NULL, &a->so, f);
		r = pc_close_out(o, a->dest, f);
	}
	if (have2)
		prof_smodel_free(&m2);
	prof_samples_free(s2);
	prof_smodel_free(&m);
	return r;
}

static int pc_output_fprof(const struct insp_opts *o, const struct pc_args *a, struct prof_model *m)
{
	FILE *f = pc_open_out(o, a->dest, a->append);
	if (!f) {
		prof_model_free(m);
		return INSP_EXIT_USAGE;
	}
	if (a->json)
		prof_analyse_json(m, &a->ao, f);
	else if (a->ao.csv)
		prof_analyse_csv(m, &a->ao, f);
	else
		prof_analyse_text(m, &a->ao, f);
	int r = pc_close_out(o, a->dest, f);
	prof_model_free(m);
	return r;
}

int insp_cmd_analyse(int argc, char **argv, const struct insp_opts *o)
{
	struct pc_args a;
	int r = pc_parse(o, true, argc, argv, &a);
	if (r != INSP_CONTINUE)
		return r;
	if ((r = insp_input_check(o, a.pos)))
		return r;
	struct prof_model m;
	if (prof_is_trace(a.pos) == 1 || insp_is_session(a.pos)) {
		struct prof_trace tr;
		struct prof_samples *s = prof_samples_new();
		r = prof_source_read(a.pos, a.pid, o, &tr, NULL, NULL, NULL, s);
		/* a sampled profile; a sampled process with no sample (too brief,
		** or a shell whose children did the work) says so, no empty fprof */
		if (!r && !a.style && !pc_calls(&tr) &&
		    (prof_samples_count(s) || tr.h.sample_hz || tr.h.alloc_sample))
			a.so.style = PROF_ST_FLAT;
		if (!r && !a.metric_given && !tr.h.sample_hz && tr.h.alloc_sample)
			a.so.metric = PROF_MT_BYTES; /* --alloc-sample alone: no timer sample to show */
		if (!r && a.so.style != PROF_ST_FPROF)
			r = pc_sampled(o, &a, s, &tr);
		else if (!r)
			prof_model_from_trace(&m, &tr, o, a.no_symbols || o->no_symbols);
		bool fprof = !r && a.so.style == PROF_ST_FPROF;
		prof_trace_free(&tr);
		prof_samples_free(s);
		return fprof ? pc_output_fprof(o, &a, &m) : r;
	}
	if (a.pid)
		return insp_usage_error(o, "analyse", "--pid is for session databases");
	if (a.so.style != PROF_ST_FPROF) {
		if (prof_is_trace(a.pos) < 0)
			fprintf(o->err, "inspect: %s: %s\n", a.pos, strerror(errno));
		else
			fprintf(o->err, "inspect: %s: --style %s needs a trace with samples (or a session), not a "
				"profile database\n", a.pos, a.style);
		return prof_is_trace(a.pos) < 0 ? INSP_EXIT_DB : INSP_EXIT_USAGE;
	}
	if ((r = prof_db_read(a.pos, o, &m)) != 0) {
		prof_model_free(&m);
		return r;
	}
	return pc_output_fprof(o, &a, &m);
}
