/*
** insp_args.c — the one command-line parser every command uses.
**
** All commands share one option table; a command's spec says which of the
** options apply to it (INSP_O_*), how many positional arguments it takes
** and what its --help says.  Options may come before or after the
** positional arguments.  An option that exists but does not apply, a bad
** number or a missing argument is a usage error: one line naming the
** command, a hint to --help, and exit status 2.
*/
#include "reader_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "meminst-nearest.h"

enum {
	OPT_SNAPSHOT = 256, OPT_JSON, OPT_CSV, OPT_TABLE, OPT_TYPE, OPT_CLASS,
	OPT_THREAD, OPT_ALLOCATOR, OPT_LIMIT, OPT_MIN, OPT_ALL, OPT_KIND, OPT_PID,
	OPT_OUTPUT, OPT_FROM, OPT_TO, OPT_BY, OPT_NO_SYMBOLS, OPT_FULL_NAMES, OPT_LIVE_AT_EXIT, OPT_HELP,
};

/* The kind options set 1 << INSP_KIND_* through flag values 0..4 below. */
static const struct option args_long[] = {
	{"snapshot", required_argument, NULL, OPT_SNAPSHOT},
	{"json", no_argument, NULL, OPT_JSON},
	{"csv", no_argument, NULL, OPT_CSV},
	{"table", required_argument, NULL, OPT_TABLE},
	{"type", required_argument, NULL, OPT_TYPE},
	{"class", required_argument, NULL, OPT_CLASS},
	{"thread", required_argument, NULL, OPT_THREAD},
	{"allocator", required_argument, NULL, OPT_ALLOCATOR},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"min", required_argument, NULL, OPT_MIN},
	{"all", no_argument, NULL, OPT_ALL},
	{"total", no_argument, NULL, OPT_KIND},
	{"allocators", no_argument, NULL, OPT_KIND},
	{"classes", no_argument, NULL, OPT_KIND},
	{"types", no_argument, NULL, OPT_KIND},
	{"threads", no_argument, NULL, OPT_KIND},
	{"pid", required_argument, NULL, OPT_PID},
	{"output", required_argument, NULL, OPT_OUTPUT},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},
	{"by", required_argument, NULL, OPT_BY},
	{"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
	{"full-names", no_argument, NULL, OPT_FULL_NAMES},
	{"live-at-exit", no_argument, NULL, OPT_LIVE_AT_EXIT},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

/* Which INSP_O_* bit an option needs (0: always allowed). */
static unsigned args_needs(int c)
{
	switch (c) {
	case OPT_SNAPSHOT: return INSP_O_SNAPSHOT;
	case OPT_JSON: case OPT_CSV: case OPT_TABLE: return INSP_O_FORMAT;
	case OPT_TYPE: case OPT_CLASS: case OPT_THREAD: case OPT_ALLOCATOR: return INSP_O_FILTER;
	case OPT_LIMIT: return INSP_O_LIMIT;
	case OPT_MIN: return INSP_O_MIN;
	case OPT_ALL: return INSP_O_ALL;
	case OPT_KIND: return INSP_O_KINDS;
	case OPT_PID: return INSP_O_PID;
	case 'o': case OPT_OUTPUT: return INSP_O_OUTPUT;
	case OPT_FROM: case OPT_TO: return INSP_O_FROMTO;
	case OPT_BY: return INSP_O_BY;
	case OPT_NO_SYMBOLS: case OPT_FULL_NAMES: return INSP_O_SYMBOLS;
	case OPT_LIVE_AT_EXIT: return INSP_O_EXIT;
	default: return 0;
	}
}

int insp_usage_error(const struct insp_opts *o, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(o->err, "inspect: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(o->err, fmt, ap);
	va_end(ap);
	fprintf(o->err, " (see 'inspect %s --help')\n", cmd);
	return INSP_EXIT_USAGE;
}

/* ------------------------------------------------------------- numbers -- */

bool insp_parse_int(const char *s, int64_t *out)
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

bool insp_parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *u; unsigned shift; } units[] = {
		{"", 0}, {"B", 0}, {"k", 10}, {"K", 10}, {"KiB", 10}, {"m", 20}, {"M", 20},
		{"MiB", 20}, {"g", 30}, {"G", 30}, {"GiB", 30}};
	if (!s || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].u) == 0) {
			if (v > (UINT64_MAX >> units[i].shift))
				return false;
			*out = (uint64_t)v << units[i].shift;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------- help -- */

static void args_help(const struct insp_cmd_spec *spec, FILE *f)
{
	fprintf(f, "Usage: inspect %s %s\n\n%s", spec->name, spec->synopsis, spec->help);
	unsigned m = spec->opts;
	fputs("\nCommon options:\n", f);
	if (m & INSP_O_SNAPSHOT)
		fputs("  --snapshot N      read snapshot N (default: the latest that fits)\n", f);
	if (m & INSP_O_FILTER)
		fputs("  --type N|NAME     only blocks of this type\n"
		      "  --class N|NAME    only blocks whose type is in this class\n"
		      "  --thread N        only blocks allocated by meminst thread N\n"
		      "  --allocator N|NAME  only blocks from this allocator (malloc, new…)\n", f);
	if (m & INSP_O_FORMAT)
		fputs("  --json            one JSON document on stdout (sizes in bytes, times in ms)\n"
		      "  --csv             comma-separated values, one table after another\n"
		      "  --table NAME      print only the table NAME of the result\n", f);
	if (m & INSP_O_SYMBOLS)
		fputs("  --no-symbols      show call sites as stored, without reading module files\n"
		      "  --full-names      keep C++ template arguments (std::map<>::… by default)\n", f);
	fputs("  --help            this text\n", f);
}

/* --------------------------------------------------------------- parse -- */

static int args_number(const struct insp_cmd_spec *spec, const struct insp_opts *o,
		       const char *opt, const char *v, int64_t lo, int64_t *out)
{
	if (!insp_parse_int(v, out) || *out < lo)
		return insp_usage_error(o, spec->name, "%s needs a number%s, not '%s'", opt,
					lo > 0 ? " above 0" : " (0 or more)", v);
	return INSP_CONTINUE;
}

static int args_kind(const char *name)
{
	static const char *const kinds[] = {"total", "allocators", "classes", "types", "threads"};
	for (int i = 0; i < INSP_KIND_COUNT; i++)
		if (strcmp(name, kinds[i]) == 0)
			return i;
	return 0;
}

static int args_one(const struct insp_cmd_spec *spec, const struct insp_opts *o,
		    struct insp_args *a, int c, const char *name)
{
	switch (c) {
	case OPT_SNAPSHOT: return args_number(spec, o, "--snapshot", optarg, 1, &a->snapshot);
	case OPT_JSON: a->format = INSP_FMT_JSON; break;
	case OPT_CSV: a->format = INSP_FMT_CSV; break;
	case OPT_TABLE: a->table = optarg; break;
	case OPT_TYPE: a->filter.type = optarg; break;
	case OPT_CLASS: a->filter.class_ = optarg; break;
	case OPT_THREAD: a->filter.thread = optarg; break;
	case OPT_ALLOCATOR: a->filter.allocator = optarg; break;
	case OPT_LIMIT: return args_number(spec, o, "--limit", optarg, 0, &a->limit);
	case OPT_MIN:
		if (!insp_parse_size(optarg, &a->min))
			return insp_usage_error(o, spec->name, "--min needs a size like 4096, 4K or 1MiB, not '%s'", optarg);
		break;
	case OPT_ALL: a->all = true; break;
	case OPT_KIND: a->kinds |= 1u << args_kind(name); break;
	case OPT_PID: return args_number(spec, o, "--pid", optarg, 1, &a->pid);
	case 'o': case OPT_OUTPUT: a->output = optarg; break;
	case OPT_FROM: return args_number(spec, o, "--from", optarg, 1, &a->from);
	case OPT_TO: return args_number(spec, o, "--to", optarg, 1, &a->to);
	case OPT_BY: a->by = optarg; break;
	case OPT_NO_SYMBOLS: a->no_symbols = true; break;
	case OPT_FULL_NAMES: insp_set_full_names(true); break;
	case OPT_LIVE_AT_EXIT: a->live_at_exit = true; break;
	}
	return INSP_CONTINUE;
}

static int args_bad_option(const struct insp_cmd_spec *spec, const struct insp_opts *o,
			   char **argv, int c)
{
	const char *bad = argv[optind - 1];
	if (c == ':')
		return insp_usage_error(o, spec->name, "option '%s' needs a value", bad);
	if (optopt && optopt != '?')
		return insp_usage_error(o, spec->name, "unknown option '-%c'", optopt);
	if (strncmp(bad, "--", 2) == 0) {
		const char *names[sizeof args_long / sizeof args_long[0]];
		size_t n = 0;
		for (const struct option *l = args_long; l->name; l++)
			if ((args_needs(l->val) & spec->opts) == args_needs(l->val))
				names[n++] = l->name;
		size_t len = strcspn(bad + 2, "=");
		const char *near = meminst_nearest(bad + 2, len, names, n);
		if (near)
			return insp_usage_error(o, spec->name, "unknown option '%.*s' (did you mean '--%s'?)",
						(int)len + 2, bad, near);
	}
	return insp_usage_error(o, spec->name, "unknown option '%s'", bad);
}

int insp_args_parse(const struct insp_cmd_spec *spec, int argc, char **argv,
		    const struct insp_opts *o, struct insp_args *a)
{
	*a = (struct insp_args){.limit = -1};
	insp_set_full_names(false);
	optind = 0; /* GNU: full re-initialisation, each command parses afresh */
	opterr = 0;
	int c, idx;
	while ((c = getopt_long(argc, argv, ":ho:", args_long, &idx)) != -1) {
		if (c == '?' || c == ':')
			return args_bad_option(spec, o, argv, c);
		if (c == 'h' || c == OPT_HELP) {
			args_help(spec, o->out);
			return INSP_EXIT_OK;
		}
		const char *name = c == 'o' ? "-o" : args_long[idx].name;
		if ((args_needs(c) & spec->opts) != args_needs(c))
			return insp_usage_error(o, spec->name, "option '%s%s' does not apply here",
						c == 'o' ? "" : "--", name);
		int r = args_one(spec, o, a, c, name);
		if (r != INSP_CONTINUE)
			return r;
	}
	for (int i = optind; i < argc; i++) {
		if (a->npos == spec->max_pos)
			return insp_usage_error(o, spec->name, "unexpected argument '%s'", argv[i]);
		a->pos[a->npos++] = argv[i];
	}
	if (a->npos < spec->min_pos)
		return insp_usage_error(o, spec->name, "missing argument: inspect %s %s", spec->name,
					spec->synopsis);
	return INSP_CONTINUE;
}
