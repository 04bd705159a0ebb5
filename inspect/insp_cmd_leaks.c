/*
** insp_cmd_leaks.c — `inspect leaks DB` and `inspect leaks --pid PID`:
** memcheck's leak classes of a checked snapshot (libmeminst's reachability
** scan, alloc_leak.c), as memcheck's LEAK SUMMARY and its loss records:
** bytes and blocks per class, then per class and allocation site, biggest
** first.  Blocks that glibc and the loader keep for the life of the process
** (locale, name service, stdio buffers, the loader's and the threads'
** DTVs: sites in ld.so, or in libc's functions of those families) are
** suppressed by default, as memcheck's default suppressions and glibc's
** __libc_freeres hide them from memcheck, and counted on one line; the
** user adds suppressions by function name or site (--suppress NAME, a
** glob; --suppressions FILE, one a line).
*/
#include "insp_int.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

enum { LEAKS_SUPPRESS = RD_ID_OWN, LEAKS_SUPPRESSIONS, LEAKS_NO_DEFAULT };

static const struct rd_option leaks_options[] = {
	RD_OPTION_PID("check the live process PID now (MEMINST=mim,control=on)"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest with a leak check)"),
	{"all", 0, RD_OT_FLAG, NULL, "list the still reachable and the suppressed sites too", RD_ID_ALL, 0, 0,
	 NULL},
	RD_OPTION_LIMIT("at most N sites per class"),
	{"suppress", 0, RD_OT_STR, "NAME", "suppress the blocks of the function or site NAME (a glob;\n"
	 "may be repeated)", LEAKS_SUPPRESS, 0, 0, NULL},
	{"suppressions", 0, RD_OT_FILE, "FILE", "suppress the names in FILE (one a line, # comments)",
	 LEAKS_SUPPRESSIONS, 0, 0, NULL},
	{"no-default-suppressions", 0, RD_OT_FLAG, NULL, "show glibc's and the loader's own blocks too",
	 LEAKS_NO_DEFAULT, 0, 0, NULL},
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec leaks_spec = {
	"leaks", "[options] DB | --pid PID",
	"Memcheck's leak classes of the blocks of a snapshot that libmeminst\n"
	"checked (in mim mode: the exit snapshot; with leak_check=on every map\n"
	"snapshot; --pid PID: the live process now): definitely lost (no pointer\n"
	"to the block), indirectly lost (reachable only from lost blocks),\n"
	"possibly lost (only pointers into its middle), still reachable.  The\n"
	"summary, then the sites of the lost blocks, biggest first.\n",
	leaks_options, 0, 1,
};

static const char *const leaks_names[] = {MEMINST_LEAK_CLASS_NAMES};
static const int leaks_order[] = {RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE,
				  RD_LEAK_REACHABLE};

struct leaks_ctx {
	const char **names; /* --suppress and --suppressions */
	size_t n, cap;
	bool no_default;
	const struct rd_opts *o;
};

static void leaks_add_name(struct leaks_ctx *c, const char *name)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->names = rd_xrealloc(c->names, c->cap * sizeof *c->names);
	}
	c->names[c->n++] = rd_xstrdup(name);
}

static int leaks_read_file(struct leaks_ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(c->o->err, "inspect: leaks: --suppressions %s: cannot read it\n", path);
		return RD_EXIT_USAGE;
	}
	char line[4096];
	while (fgets(line, sizeof line, f)) {
		char *p = line + strspn(line, " \t"), *e = p + strcspn(p, "\r\n");
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = 0;
		if (*p && *p != '#')
			leaks_add_name(c, p);
	}
	fclose(f);
	return RD_CONTINUE;
}

static int leaks_own(struct rd_getopt *g, void *ctx)
{
	struct leaks_ctx *c = ctx;
	if (g->opt->id == LEAKS_SUPPRESS)
		leaks_add_name(c, g->value);
	else if (g->opt->id == LEAKS_NO_DEFAULT)
		c->no_default = true;
	else
		return leaks_read_file(c, g->value);
	return RD_CONTINUE;
}

/* "func+0x13 (module)": the function (without the offset) and the module. */
static void leaks_split(const char *label, char *func, size_t flen, char *mod, size_t mlen)
{
	const char *open = strrchr(label, '(');
	size_t n = open && open > label ? (size_t)(open - label - 1) : strlen(label);
	const char *plus = strstr(label, "+0x");
	if (plus && (size_t)(plus - label) < n)
		n = (size_t)(plus - label);
	snprintf(func, flen, "%.*s", (int)n, label);
	mod[0] = 0;
	if (open)
		snprintf(mod, mlen, "%.*s", (int)strcspn(open + 1, ")"), open + 1);
}

/* glibc's and the loader's blocks for the life of the process. */
static bool leaks_default_suppressed(const char *func, const char *mod)
{
	static const char *const libc_funcs[] = {"setlocale", "_nl_*", "__nl_*", "nss_*", "__nss_*", "_nss_*",
						 "*_dl_*", "dl_*", "_IO_*", "__libc_*", "tzset*", "__tz*",
						 "new_composite_name", "__gconv*", "_dlerror_run", NULL};
	if (!strncmp(mod, "ld-linux", 8) || !strncmp(mod, "ld.so", 5) || !strncmp(mod, "ld-2.", 5))
		return true;
	if (strncmp(mod, "libc.so", 7) && strncmp(mod, "libc-", 5))
		return false;
	for (int i = 0; libc_funcs[i]; i++)
		if (!fnmatch(libc_funcs[i], func, 0))
			return true;
	return false;
}

/* Per type: suppressed (1) or not (0); -1 not yet decided. */
static bool leaks_suppressed(struct rd_session *s, const struct leaks_ctx *c, signed char *memo, int64_t type)
{
	if (memo[type] >= 0)
		return memo[type];
	const char *where;
	const char *label = rd_type_label(s->db, &s->tags, type, &where);
	char func[1024], mod[256];
	leaks_split(label, func, sizeof func, mod, sizeof mod);
	bool sup = !c->no_default && leaks_default_suppressed(func, mod);
	for (size_t i = 0; !sup && i < c->n; i++)
		sup = !fnmatch(c->names[i], func, 0) || !fnmatch(c->names[i], label, 0);
	memo[type] = sup;
	return sup;
}

struct leaks_sum {
	struct rd_session *s;
	const struct leaks_ctx *c;
	const struct rd_leak_check *check;
	signed char *memo;           /* by type */
	int64_t ntypes;
	struct insp_aggmap by_site[RD_LEAK_CLASSES + 1]; /* the last: suppressed */
	uint64_t bytes[RD_LEAK_CLASSES + 1], blocks[RD_LEAK_CLASSES + 1];
};

static void leaks_add(void *ctx, const struct rd_block *b)
{
	struct leaks_sum *m = ctx;
	int cls = rd_leak_class(m->check, b->addr);
	bool sup = b->type >= 0 && b->type < m->ntypes && leaks_suppressed(m->s, m->c, m->memo, b->type);
	int slot = sup ? RD_LEAK_CLASSES : cls;
	struct insp_agg *g = insp_aggmap_get(&m->by_site[slot], b->type);
	g->bytes += b->size;
	g->blocks++;
	m->bytes[slot] += b->size;
	m->blocks[slot]++;
}

static const struct rd_col summary_cols[] = {
	{"kind", "", RD_K_STR, 0},
	{"bytes", "bytes", RD_K_INT, 0},
	{"blocks", "blocks", RD_K_INT, 0},
};

static const struct rd_col site_cols[] = {
	{"kind", "kind", RD_K_STR, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"type", "", RD_K_INT, RD_C_DATA_ONLY},
	{"site", "allocated at", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

static const struct rd_col scan_cols[] = {
	{"scanned_bytes", "scanned", RD_K_SIZE, 0},
	{"threads", "threads", RD_K_INT, 0},
	{"threads_unstopped", "threads not stopped (stack only)", RD_K_INT, 0},
	{"scan_ns", "scan", RD_K_DUR, 0},
};

static void leaks_summary(rd_doc_t *d, const struct leaks_sum *m)
{
	rd_table_t *t = rd_doc_table(d, "summary", summary_cols, NCOLS(summary_cols), 0);
	rd_table_title(t, "leak summary:");
	for (int i = 0; i < RD_LEAK_CLASSES + 1; i++) {
		int c = i < RD_LEAK_CLASSES ? leaks_order[i] : RD_LEAK_CLASSES;
		rd_row(t);
		rd_put_const(t, c < RD_LEAK_CLASSES ? leaks_names[c] : "suppressed");
		rd_put_uint(t, m->bytes[c]);
		rd_put_uint(t, m->blocks[c]);
	}
	const struct rd_leak_check *k = m->check;
	t = rd_doc_table(d, "scan", scan_cols, NCOLS(scan_cols), RD_T_SINGLE | RD_T_DATA);
	rd_row(t);
	rd_put_uint(t, k->scanned_bytes);
	rd_put_int(t, k->threads);
	rd_put_int(t, k->threads_unstopped);
	rd_put_int(t, k->scan_ns);
}

static void leaks_sites(rd_doc_t *d, struct leaks_sum *m, const struct rd_args *a)
{
	rd_table_t *t = rd_doc_table(d, "sites", site_cols, NCOLS(site_cols), 0);
	rd_table_title(t, "by site, biggest first:");
	for (int i = 0; i < RD_LEAK_CLASSES + 1; i++) {
		int c = i < RD_LEAK_CLASSES ? leaks_order[i] : RD_LEAK_CLASSES;
		if ((c == RD_LEAK_REACHABLE || c == RD_LEAK_CLASSES) && !a->all)
			continue;
		size_t n;
		struct insp_agg *v = insp_aggmap_sorted(&m->by_site[c], &n);
		size_t limit = a->limit >= 0 ? (size_t)a->limit : n;
		for (size_t j = 0; j < n && j < limit; j++) {
			const char *where = NULL;
			rd_row(t);
			rd_put_const(t, c < RD_LEAK_CLASSES ? leaks_names[c] : "suppressed");
			rd_put_uint(t, v[j].bytes);
			rd_put_uint(t, v[j].blocks);
			rd_put_int(t, v[j].key);
			rd_put_str(t, rd_type_label(m->s->db, &m->s->tags, v[j].key, &where));
			rd_put_str(t, where);
		}
		if (n > limit)
			rd_table_note(t, "(%zu more %s sites)", n - limit,
					c < RD_LEAK_CLASSES ? leaks_names[c] : "suppressed");
		free(v);
	}
}

/* Select the snapshot (the latest checked one unless --snapshot), load its
** classes and add its blocks up. */
static int leaks_read(struct rd_session *s, const struct rd_opts *o, struct rd_args *a,
		      const char *path, struct leaks_sum *m, struct rd_leak_check *check)
{
	*s = (struct rd_session){0};
	int r = rd_db_open(path, o, &s->db);
	int64_t want = a->snapshot;
	if (!r && !want && !(r = rd_leak_latest(s->db, &want)) && !want) {
		rd_errf(o->err, "inspect: %s: no snapshot has a leak check (run in mim mode with an exit "
				"snapshot, or leak_check=on)\n", path);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r)
		r = rd_db_select(s->db, want, RD_NEED_MAP);
	if (!r)
		r = rd_leak_load(s->db, check);
	if (!r)
		r = rd_session_tags(s, a);
	if (r)
		return r;
	int64_t ntypes = 0;
	for (size_t i = 0; i < s->tags.types.n; i++)
		if (s->tags.types.v[i].id >= ntypes)
			ntypes = s->tags.types.v[i].id + 1;
	m->s = s, m->check = check, m->ntypes = ntypes;
	m->memo = rd_xmalloc((size_t)ntypes + 1);
	memset(m->memo, -1, (size_t)ntypes + 1);
	for (int i = 0; i < RD_LEAK_CLASSES + 1; i++)
		insp_aggmap_init(&m->by_site[i]);
	return rd_blocks_each(s->db, o, NULL, leaks_add, m);
}

static int leaks_show(const struct rd_opts *o, struct rd_args *a, const struct leaks_ctx *c, const char *path,
		      const char *label)
{
	struct rd_session s;
	struct rd_leak_check check = {0};
	struct leaks_sum m = {.c = c};
	int r = leaks_read(&s, o, a, path, &m, &check);
	if (!r) {
		rd_doc_t *d = rd_doc_new(o, a);
		rd_doc_snapshot(d, "snapshot", label, rd_db_snap(s.db));
		leaks_summary(d, &m);
		leaks_sites(d, &m, a);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	for (int i = 0; m.memo && i < RD_LEAK_CLASSES + 1; i++)
		insp_aggmap_free(&m.by_site[i]);
	free(m.memo);
	rd_leak_free(&check);
	rd_session_close(&s);
	return r;
}

int insp_cmd_leaks(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	struct leaks_ctx c = {.o = o};
	int r = rd_args_parse_own(&leaks_spec, argc, argv, o, &a, leaks_own, &c);
	if (r == RD_CONTINUE) {
		if (a.pid && a.npos)
			r = rd_cmd_error(o, &leaks_spec, "give a database or --pid, not both");
		else if (a.pid && a.snapshot)
			r = rd_cmd_error(o, &leaks_spec, "--snapshot does not apply to --pid");
		else if (!a.pid && !a.npos)
			r = rd_cmd_error(o, &leaks_spec, "missing argument: a database or --pid PID");
	}
	if (r == RD_CONTINUE && a.pid) {
		char path[PATH_MAX], label[64];
		int64_t id = 0;
		if (!(r = insp_control_tempfile(o, path, sizeof path))) {
			if (!(r = insp_control_snapshot(o, a.pid, path, "leaks", &id))) {
				snprintf(label, sizeof label, "process %lld", (long long)a.pid);
				a.snapshot = id;
				r = leaks_show(o, &a, &c, path, label);
			}
			insp_control_tempfile_remove(path);
		}
	} else if (r == RD_CONTINUE) {
		r = leaks_show(o, &a, &c, a.pos[0], a.pos[0]);
	}
	for (size_t i = 0; i < c.n; i++)
		free((void *)c.names[i]);
	free(c.names);
	return r;
}
