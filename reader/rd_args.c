/*
** rd_args.c — the one command-line parser every command uses: each
** command of inspect, and the launcher meminst (a program of its own whose
** options end at the program it runs: spec->prog, spec->options_first).
** It needs nothing else of the toolkit, so that the launcher links it alone.
**
** Each command has one table of options (struct rd_option): their names,
** the kind of value each takes and its range or words, and their help.
** From it come the parsing, the checks of values, --help, and through
** --help the bash completion.  The options every command shares are one
** vocabulary (INSP_OPTION_* in rd_int.h); rd_args_parse reads them
** into struct rd_args for the memory commands and report, and the other
** commands read their own ids from rd_getopt.  A mistake is one line
** naming the command, with a hint to --help, and exit status 2, worded the
** same for every command.
*/
#include "rd_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "meminst-nearest.h"

/* Names of the shared vocabulary: one of them given to a command that does
** not take it "does not apply here" rather than being unknown. */
static const char *const args_vocabulary[] = {
	"snapshot", "json", "csv", "table", "type", "class", "thread", "allocator", "limit", "min",
	"all", "total", "allocators", "classes", "types", "threads", "pid", "output", "append",
	"from", "to", "by", "no-symbols", "full-names", "live-at-exit", "force",
};

int rd_usage_error(const struct rd_opts *o, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rd_errf(o->err, "inspect: %s: %s (see 'inspect %s --help')\n", cmd, msg, cmd);
	return RD_EXIT_USAGE;
}

static void args_verror(const struct rd_opts *o, const struct rd_cmd_spec *spec, const char *fmt,
			va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (spec->prog)
		rd_errf(o->err, "%s: %s (see '%s --help')\n", spec->prog, msg, spec->prog);
	else
		rd_errf(o->err, "inspect: %s: %s (see 'inspect %s --help')\n", spec->name, msg, spec->name);
}

int rd_cmd_error(const struct rd_opts *o, const struct rd_cmd_spec *spec, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	args_verror(o, spec, fmt, ap);
	va_end(ap);
	return RD_EXIT_USAGE;
}

static bool args_full_names;

void rd_set_full_names(bool on)
{
	args_full_names = on;
}

bool rd_full_names(void)
{
	return args_full_names;
}

/* ------------------------------------------------------------- numbers -- */

bool rd_parse_int(const char *s, int64_t *out)
{
	if (!s || !*s)
		return false;
	bool neg = *s == '-';
	const char *p = s + neg;
	if (!*p || *p == '-' || *p == '+' || *p == ' ')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10);
	if (*end || errno || v > (unsigned long long)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* The decimal number s starts with, and where it ends: false unless s
** starts with a digit (strtoull takes " -1" as 2^64-1) and the number
** fits. */
static bool args_leading_uint(const char *s, unsigned long long *v, char **end)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, end, 10);
	return !errno;
}

bool rd_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	if (!args_leading_uint(s, &v, &end))
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	default: break;
	}
	if (shift && *++end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

bool rd_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t mul; } units[] = {
		{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000ull}};
	unsigned long long v;
	char *end;
	if (!args_leading_uint(s, &v, &end))
		return false;
	if (!*end && v == 0)
		return *ns = 0, true;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end, units[i].unit))
			return !__builtin_mul_overflow(v, units[i].mul, ns);
	return false;
}

/* ---------------------------------------------------------------- help -- */

/* The value's name in --help: arg, or a WORD's words as a|b|c. */
static void args_value_name(const struct rd_option *op, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	if (op->arg || op->type != RD_OT_WORD) {
		snprintf(buf, len, "%s", op->arg ? op->arg : "");
		return;
	}
	for (int k = 0; op->words[k] && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? "|" : "", op->words[k]);
}

static void args_help_line(const struct rd_option *op, FILE *f)
{
	char left[160], val[120];
	args_value_name(op, val, sizeof val);
	const char *fmt_val = op->optional ? "[=%s]" : op->type == RD_OT_MAYBE ? " [%s]" : *val ? " %s" : "%s";
	int n = op->short_name ? snprintf(left, sizeof left, "-%c, --%s", op->short_name, op->name)
			       : snprintf(left, sizeof left, "--%s", op->name);
	snprintf(left + n, sizeof left - (size_t)n, fmt_val, val);
	const char *h = op->help ? op->help : "";
	size_t first = strcspn(h, "\n");
	if (strlen(left) <= 17)
		fprintf(f, "  %-17s  %.*s\n", left, (int)first, h);
	else /* its help under it, in the column of the others */
		fprintf(f, "  %s\n%21s%.*s\n", left, "", (int)first, h);
	for (h += first; *h == '\n'; h += first) {
		h++;
		first = strcspn(h, "\n");
		fprintf(f, "%21s%.*s\n", "", (int)first, h);
	}
}

void rd_args_help(const struct rd_cmd_spec *spec, FILE *f)
{
	if (spec->prog)
		fprintf(f, "Usage: %s %s\n\n%s\n", spec->prog, spec->synopsis, spec->help);
	else
		fprintf(f, "Usage: inspect %s %s\n\n%s\n", spec->name, spec->synopsis, spec->help);
	/* a table that begins with a heading of its own needs none */
	if (!spec->options || !spec->options->name || *spec->options->name)
		fputs("Options:\n", f);
	for (const struct rd_option *op = spec->options; op && op->name; op++) {
		if (!*op->name)
			fprintf(f, "%s\n", op->help);
		else
			args_help_line(op, f);
	}
	fputs("  -h, --help         this text\n", f);
	if (spec->epilog)
		fprintf(f, "\n%s", spec->epilog);
}

/* --------------------------------------------------------------- parse -- */

void rd_getopt_init(struct rd_getopt *g, const struct rd_cmd_spec *spec, int argc, char **argv,
		      const struct rd_opts *o)
{
	*g = (struct rd_getopt){.spec = spec, .o = o, .argc = argc, .argv = argv, .i = 1, .maybe = -1};
	rd_set_full_names(false);
}

static int args_error(struct rd_getopt *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int args_error(struct rd_getopt *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	args_verror(g->o, g->spec, fmt, ap);
	va_end(ap);
	return RD_EXIT_USAGE;
}

int rd_bad_value(struct rd_getopt *g, const char *expected)
{
	return args_error(g, "--%s takes %s, not '%s'", g->opt->name, expected, g->value);
}

/* name (len bytes, without "--") is no option of this command. */
static int args_unknown(struct rd_getopt *g, const char *given, const char *name, size_t len)
{
	const char *names[128];
	size_t n = 0;
	for (const struct rd_option *op = g->spec->options; op && op->name && n < 127; op++)
		if (*op->name)
			names[n++] = op->name;
	names[n++] = "help";
	if (name) {
		for (size_t k = 0; !g->spec->prog && k < sizeof args_vocabulary / sizeof args_vocabulary[0]; k++)
			if (strlen(args_vocabulary[k]) == len && !strncmp(args_vocabulary[k], name, len))
				return args_error(g, "option '--%.*s' does not apply here", (int)len, name);
		const char *near = meminst_nearest(name, len, names, n);
		if (near)
			return args_error(g, "unknown option '--%.*s' (did you mean '--%s'?)", (int)len, name, near);
		return args_error(g, "unknown option '--%.*s'", (int)len, name);
	}
	return args_error(g, "unknown option '%s'", given);
}

/* What a value of op must look like, for the message on a bad one. */
static int args_bad_value(struct rd_getopt *g, const struct rd_option *op, const char *v)
{
	char words[120];
	switch (op->type) {
	case RD_OT_INT:
	case RD_OT_REAL:
		if (op->hi == RD_INT_MAX)
			return args_error(g, "--%s needs a number%s, not '%s'", op->name,
					  op->lo > 0 ? " above 0" : " (0 or more)", v);
		return args_error(g, "--%s needs a number from %lld to %lld, not '%s'", op->name,
				  (long long)op->lo, (long long)op->hi, v);
	case RD_OT_SIZE:
		return args_error(g, "--%s needs a size%s like 4096, 4K or 1MiB, not '%s'", op->name,
				  op->lo > 0 ? " above 0" : "", v);
	case RD_OT_DURATION:
		return args_error(g, "--%s needs a duration like 100ms or 1s (or 0)%s%s, not '%s'", op->name,
				  op->words ? ", or " : "", op->words ? op->words[0] : "", v);
	default: {
		size_t n = 0;
		int k, last;
		for (last = 0; op->words[last + 1]; last++)
			;
		for (k = 0; k <= last && n < sizeof words; k++)
			n += (size_t)snprintf(words + n, sizeof words - n, "%s%s", k == 0 ? "" : k == last ? " or " : ", ",
					      op->words[k]);
		return args_error(g, "--%s takes %s, not '%s'", op->name, words, v);
	}
	}
}

/* Check and convert g->value for g->opt. */
/* V read as OP's value into g's num, size, real or word; false when it is
** not one. */
static bool args_parse(struct rd_getopt *g, const struct rd_option *op, const char *v)
{
	char *end;
	switch (op->type) {
	case RD_OT_INT:
		return rd_parse_int(v, &g->num) && g->num >= op->lo && g->num <= op->hi;
	case RD_OT_SIZE:
		return rd_parse_size(v, &g->size) && g->size >= (uint64_t)op->lo;
	case RD_OT_DURATION:
		if (op->words && !strcmp(v, op->words[0])) { /* the word: num -1 */
			g->num = -1;
			return true;
		}
		if (!rd_parse_duration(v, &g->size) || g->size > INT64_MAX)
			return false;
		g->num = (int64_t)g->size;
		return true;
	case RD_OT_REAL:
		errno = 0;
		g->real = strtod(v, &end);
		return !errno && end != v && !*end && isfinite(g->real) && g->real >= (double)op->lo &&
		       (op->hi == RD_INT_MAX || g->real <= (double)op->hi);
	case RD_OT_WORD:
		for (g->word = 0; op->words[g->word] && strcmp(op->words[g->word], v); g->word++)
			;
		return op->words[g->word] != NULL;
	default:
		return true;
	}
}

static int args_value(struct rd_getopt *g)
{
	if (!args_parse(g, g->opt, g->value))
		return args_bad_value(g, g->opt, g->value);
	return RD_OPTION;
}

static const struct rd_option *args_find(const struct rd_getopt *g, const char *name, size_t len,
					   char short_name)
{
	for (const struct rd_option *op = g->spec->options; op && op->name; op++)
		if (*op->name && (short_name ? op->short_name == short_name
					     : strlen(op->name) == len && !strncmp(op->name, name, len)))
			return op;
	return NULL;
}

/* A word "-5" is a value of op, not an option: op takes negative numbers. */
static bool args_negative_ok(const struct rd_option *op, const char *word)
{
	return (op->type == RD_OT_INT || op->type == RD_OT_REAL) && op->lo < 0 && word[1] >= '0' &&
	       word[1] <= '9';
}

/* The value of an option that takes one: attached, or the next word. */
static int args_take(struct rd_getopt *g, const char *attached, const char *shown)
{
	const struct rd_option *op = g->opt;
	g->value = attached;
	if (op->type == RD_OT_FLAG) {
		if (attached)
			return args_error(g, "option '%s' takes no value", shown);
		if (op->id == RD_ID_FULL_NAMES) /* for every command, before any name is made */
			rd_set_full_names(true);
		return RD_OPTION;
	}
	if (!attached && op->type == RD_OT_MAYBE) {
		/* the next word, unless it is an option: given back at the end
		** when the positional arguments need it */
		if (g->i < g->argc && (g->argv[g->i][0] != '-' || !strcmp(g->argv[g->i], "-"))) {
			g->maybe = g->npos;
			g->value = g->maybe_value = g->argv[g->i];
			g->pos[g->npos++] = g->argv[g->i++];
		}
		return RD_OPTION;
	}
	if (op->type == RD_OT_MAYBE) {
		g->maybe_value = attached;
		return RD_OPTION;
	}
	if (op->optional && !attached) {
		/* --trace: the next word is not its value; but "--sample 1000
		** ./prog" would run a program named 1000: a word that is a value
		** of the option, before any "--", is taken for the mistake */
		struct rd_getopt scratch = *g;
		const char *w = g->i < g->argc ? g->argv[g->i] : NULL;
		if (!g->dashdash && w && strcmp(w, "--") &&
		    (args_parse(&scratch, op, w) || (op->type == RD_OT_INT && rd_parse_int(w, &scratch.num))))
			return args_error(g, "option '%s' takes its value with '=': %s=%s (or '%s --' before a "
					     "program named '%s')", shown, shown, w, shown, w);
		return RD_OPTION;
	}
	if (!attached) {
		if (g->i >= g->argc)
			return args_error(g, "option '%s' needs a value", shown);
		const char *next = g->argv[g->i];
		/* "-o -x": a value that looks like an option is the user's
		** mistake far more often than a file named "-x" (argparse's rule,
		** not getopt's); "-" (standard output) and a negative number an
		** option takes stay values, and "--output=-x" gives any. */
		if (next[0] == '-' && next[1] && !args_negative_ok(op, next))
			return args_error(g, "option '%s' needs a value, not the option '%s'", shown, next);
		g->value = g->argv[g->i++];
	}
	return args_value(g);
}

static int args_positional(struct rd_getopt *g, const char *arg)
{
	if (g->npos == (int)(sizeof g->pos / sizeof g->pos[0]) ||
	    g->npos - (g->maybe >= 0) >= g->spec->max_pos)
		return args_error(g, "unexpected argument '%s'", arg);
	g->pos[g->npos++] = arg;
	return RD_CONTINUE;
}

/* All read: a MAYBE value the positional arguments can spare is the
** option's; then their number is checked. */
static int args_end(struct rd_getopt *g)
{
	if (g->maybe >= 0 && g->npos > g->spec->min_pos) {
		for (int k = g->maybe; k + 1 < g->npos; k++)
			g->pos[k] = g->pos[k + 1];
		g->npos--;
	} else if (g->maybe >= 0) {
		g->maybe_value = NULL;
	}
	if (g->npos > g->spec->max_pos)
		return args_error(g, "unexpected argument '%s'", g->pos[g->npos - 1]);
	if (g->npos < g->spec->min_pos)
		return args_error(g, "missing argument: inspect %s %s", g->spec->name, g->spec->synopsis);
	return RD_CONTINUE;
}

static int args_next(struct rd_getopt *g);

/* The next option (RD_OPTION), or the end.  --json and --csv name the
** one format of the output, -o its one file: both formats, or two files,
** given is a mistake, not "the last wins" (the first file would be left
** as it was while the user reads it as the run's). */
int rd_getopt(struct rd_getopt *g)
{
	int r = args_next(g);
	if (r == RD_OPTION && (g->opt->id == RD_ID_JSON || g->opt->id == RD_ID_CSV)) {
		if (g->format_id && g->format_id != g->opt->id)
			return args_error(g, "--json and --csv: give one of them");
		g->format_id = g->opt->id;
	}
	if (r == RD_OPTION && g->opt->id == RD_ID_OUTPUT) {
		if (g->output_given)
			return args_error(g, "-o given twice ('%s' and '%s'): give one output file",
					  g->output_given, g->value);
		g->output_given = g->value;
	}
	return r;
}

/* The short option at p ("-o FILE", "-oFILE", "-fq": a flag's letters
** may be followed by others). */
static int args_short(struct rd_getopt *g, const char *p)
{
	char shown[3] = {'-', *p, 0};
	g->cluster = NULL;
	if (*p == 'h') {
		rd_args_help(g->spec, g->o->out);
		return RD_EXIT_OK;
	}
	if (!(g->opt = args_find(g, NULL, 0, *p)))
		return args_unknown(g, shown, NULL, 0);
	if (g->opt->type == RD_OT_FLAG) {
		g->cluster = p[1] ? p + 1 : NULL;
		return args_take(g, NULL, shown);
	}
	return args_take(g, p[1] ? p + 1 : NULL, shown);
}

/* The end of the options of an options_first command, at argument g->i:
** the rest is another program's. */
static int args_stop(struct rd_getopt *g)
{
	g->npos = g->argc - g->i;
	if (g->npos < g->spec->min_pos)
		return args_error(g, "missing argument: %s %s", g->spec->prog ? g->spec->prog : g->spec->name,
				  g->spec->synopsis);
	return RD_CONTINUE;
}

static int args_next(struct rd_getopt *g)
{
	if (g->cluster)
		return args_short(g, g->cluster);
	while (g->i < g->argc) {
		const char *arg = g->argv[g->i++];
		if (g->dashdash || arg[0] != '-' || !strcmp(arg, "-")) {
			if (g->spec->options_first) {
				g->i--;
				return args_stop(g);
			}
			int r = args_positional(g, arg);
			if (r != RD_CONTINUE)
				return r;
			continue;
		}
		if (!strcmp(arg, "--")) {
			if (g->spec->options_first)
				return args_stop(g);
			g->dashdash = true;
			continue;
		}
		if (!strcmp(arg, "--help")) {
			rd_args_help(g->spec, g->o->out);
			return RD_EXIT_OK;
		}
		if (arg[1] != '-')
			return args_short(g, arg + 1);
		const char *name = arg + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		if (!(g->opt = args_find(g, name, len, 0)))
			return args_unknown(g, arg, name, len);
		char shown[80];
		snprintf(shown, sizeof shown, "--%s", g->opt->name);
		return args_take(g, eq ? eq + 1 : NULL, shown);
	}
	if (g->spec->options_first)
		return args_stop(g);
	return args_end(g);
}

/* ------------------------------------------------- the shared vocabulary -- */

static void args_shared(const struct rd_getopt *g, struct rd_args *a)
{
	int id = g->opt->id;
	if (id >= RD_ID_KIND && id < RD_ID_KIND + RD_KIND_COUNT) {
		a->kinds |= 1u << (id - RD_ID_KIND);
		return;
	}
	switch (id) {
	case RD_ID_SNAPSHOT: a->snapshot = g->num; break;
	case RD_ID_JSON: a->format = RD_FMT_JSON; break;
	case RD_ID_CSV: a->format = RD_FMT_CSV; break;
	case RD_ID_TABLE: a->table = g->value; break;
	case RD_ID_TYPE: a->filter.type = g->value; break;
	case RD_ID_CLASS: a->filter.class_ = g->value; break;
	case RD_ID_THREAD: a->filter.thread = g->value; break;
	case RD_ID_ALLOCATOR: a->filter.allocator = g->value; break;
	case RD_ID_LIMIT: a->limit = g->num; break;
	case RD_ID_MIN: a->min = g->size; break;
	case RD_ID_ALL: a->all = true; break;
	case RD_ID_PID: a->pid = g->num; break;
	case RD_ID_IMAGE: a->image = g->num + 1; break;
	case RD_ID_OUTPUT: a->output = g->value; break;
	case RD_ID_FROM: a->from = g->num; break;
	case RD_ID_TO: a->to = g->num; break;
	case RD_ID_BY: a->by = g->value; break;
	case RD_ID_NO_SYMBOLS: a->no_symbols = true; break;
	case RD_ID_LIVE_AT_EXIT: a->live_at_exit = true; break;
	case RD_ID_STACKS:
		if (strcmp(g->value, "none") == 0)
			a->stacks = 0;
		else if (!rd_parse_int(g->value, &a->stacks) || a->stacks < 1 || a->stacks > INT32_MAX)
			a->stacks = -2; /* refused once the options are read */
		break;
	default: break; /* --full-names: set by the parser */
	}
}

int rd_args_parse(const struct rd_cmd_spec *spec, int argc, char **argv,
		    const struct rd_opts *o, struct rd_args *a)
{
	return rd_args_parse_own(spec, argc, argv, o, a, NULL, NULL);
}

int rd_args_parse_own(const struct rd_cmd_spec *spec, int argc, char **argv, const struct rd_opts *o,
			struct rd_args *a, int (*own)(struct rd_getopt *g, void *ctx), void *ctx)
{
	*a = (struct rd_args){.cmd = spec->name, .limit = -1, .stacks = -1};
	struct rd_getopt g;
	rd_getopt_init(&g, spec, argc, argv, o);
	int r;
	while ((r = rd_getopt(&g)) == RD_OPTION) {
		if (own && g.opt->id >= RD_ID_OWN) {
			if ((r = own(&g, ctx)) != RD_CONTINUE)
				return r;
		} else {
			args_shared(&g, a);
		}
	}
	if (r != RD_CONTINUE)
		return r;
	if (a->stacks == -2)
		return rd_usage_error(o, spec->name ? spec->name : "inspect", "--stacks takes a number of rows (1 or more) or none");
	for (int k = 0; k < g.npos && k < 2; k++)
		a->pos[a->npos++] = g.pos[k];
	return RD_CONTINUE;
}
