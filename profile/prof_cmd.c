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

#define PROF_STYLES "fprof"

static const char profile_help[] =
	"Usage: inspect profile [options] TRACE\n\n"
	"Read a trace file (MEMINST=trace=wall|cpu), simulate each thread's call\n"
	"stack and compute CNT, ACC and OWN per function and per caller->called\n"
	"pair (fprof's step 2).  Without -o or --dump, print a one-line summary.\n\n"
	"  -o, --output FILE  write the profile database FILE (meminst-profile(5));\n"
	"                     an existing FILE is replaced only if it is a profile\n"
	"  --dump [FILE]      write every record as a line of text to FILE\n"
	"                     (default: standard output)\n"
	"  --append           append to the --dump FILE instead of replacing it\n"
	"  --no-symbols       name functions module+offset, without reading module files\n"
	"  --help             this text\n";

static const char analyse_help[] =
	"Usage: inspect analyse [options] PROFILE|TRACE\n\n"
	"The fprof analysis of a profile database (inspect profile -o) or of a\n"
	"trace file (profiled on the fly): the totals, then per thread a header\n"
	"and one paragraph per function: its callers, the function marked '*',\n"
	"the functions it called.  Columns CNT, ACC and OWN; times in ms.\n\n"
	"  --sort acc|own     order paragraphs and rows by ACC (default) or OWN\n"
	"  --no-callers       only the marked rows, no callers or called\n"
	"  --totals           also one set of paragraphs over all threads\n"
	"  --no-details       only the totals and the thread headers\n"
	"  --cols N           line width, 80 or more (default 80)\n"
	"  --dest FILE        write the analysis to FILE instead of standard output\n"
	"  --append           append to the --dest FILE\n"
	"  --json             one JSON document (times in ms)\n"
	"  --style NAME       the display; only 'fprof' for now\n"
	"  --no-symbols       traces: name functions module+offset only\n"
	"  --help             this text\n";

struct pc_args {
	const char *pos;
	const char *output, *dump, *dest, *style;
	bool dump_on, dump_maybe_pos, append, no_symbols, json;
	struct prof_aopts ao;
};

/* ------------------------------------------------------------ parsing -- */

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

static int pc_analyse_opt(const struct insp_opts *o, struct pc_args *a, const char *name,
			  const char *eq, int argc, char **argv, int *i)
{
	const char *v = NULL;
	int r = INSP_CONTINUE;
	if (!strcmp(name, "--no-callers")) a->ao.callers = false;
	else if (!strcmp(name, "--totals")) a->ao.totals = true;
	else if (!strcmp(name, "--no-details")) a->ao.details = false;
	else if (!strcmp(name, "--json")) a->json = true;
	else if (!strcmp(name, "--dest")) r = pc_value(o, "analyse", name, eq, argc, argv, i, &a->dest);
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
		return insp_usage_error(o, "analyse", "unknown option '%s'", name);
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
	return insp_usage_error(o, "profile", "unknown option '%s'", name);
}

static int pc_parse(const struct insp_opts *o, bool analyse, int argc, char **argv, struct pc_args *a)
{
	const char *cmd = analyse ? "analyse" : "profile";
	const char *pos[3];
	int npos = 0, dump_pos = -1;
	*a = (struct pc_args){.ao = {PROF_SORT_ACC, true, false, true, false, 80}};
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
		else if (analyse) r = pc_analyse_opt(o, a, name, eq, argc, argv, &i);
		else {
			r = pc_profile_opt(o, a, name, eq, argc, argv, &i);
			if (a->dump_maybe_pos && dump_pos < 0)
				dump_pos = npos;
		}
		if (r != INSP_CONTINUE)
			return r;
	}
	/* `--dump FILE TRACE`: the word after --dump is FILE when another follows */
	if (dump_pos >= 0 && npos == 2) {
		a->dump = pos[dump_pos];
		pos[dump_pos] = pos[1 - dump_pos];
		npos = 1;
	}
	if (npos == 0)
		return insp_usage_error(o, cmd, "missing argument: inspect %s [options] %s", cmd,
					analyse ? "PROFILE|TRACE" : "TRACE");
	if (npos > 1)
		return insp_usage_error(o, cmd, "unexpected argument '%s'", pos[1]);
	a->pos = pos[0];
	if (a->append && !(analyse ? a->dest != NULL : a->dump != NULL))
		return insp_usage_error(o, cmd, "--append needs %s", analyse ? "--dest FILE" : "--dump FILE");
	if (a->style && strcmp(a->style, "fprof"))
		return insp_usage_error(o, cmd, "--style '%s' is not available; styles: %s", a->style, PROF_STYLES);
	return INSP_CONTINUE;
}

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
	int r = prof_trace_read(tr->path, quiet.err ? &quiet : o, &again, prof_dump_record, &d);
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
	for (size_t i = 3; i < m->nfuncs; i++)
		nf++;
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
	struct prof_trace tr;
	r = prof_trace_read(a.pos, o, &tr, NULL, NULL);
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

int insp_cmd_analyse(int argc, char **argv, const struct insp_opts *o)
{
	struct pc_args a;
	int r = pc_parse(o, true, argc, argv, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct prof_model m;
	int kind = prof_is_trace(a.pos);
	if (kind == 1) {
		struct prof_trace tr;
		r = prof_trace_read(a.pos, o, &tr, NULL, NULL);
		if (!r)
			prof_model_from_trace(&m, &tr, o, a.no_symbols || o->no_symbols);
		prof_trace_free(&tr);
		if (r)
			return r;
	} else if ((r = prof_db_read(a.pos, o, &m)) != 0) {
		prof_model_free(&m);
		return r;
	}
	FILE *f = pc_open_out(o, a.dest, a.append);
	if (!f) {
		prof_model_free(&m);
		return INSP_EXIT_USAGE;
	}
	if (a.json)
		prof_analyse_json(&m, &a.ao, f);
	else
		prof_analyse_text(&m, &a.ao, f);
	r = pc_close_out(o, a.dest, f);
	prof_model_free(&m);
	return r;
}
