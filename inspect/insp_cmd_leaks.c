/*
** insp_cmd_leaks.c — `inspect leaks DB` and `inspect leaks --pid PID`:
** memcheck's leak classes of a checked snapshot (libmeminst's reachability
** scan, alloc_leak.c), as memcheck's LEAK SUMMARY and its loss records:
** bytes and blocks per class, then per class and allocation site, biggest
** first, a definitely lost site with the indirectly lost bytes hanging
** from its blocks (memcheck's "N (D direct, I indirect) bytes").  The sums
** and the suppressions are the reader's (rd_leak.c): glibc's and the
** loader's own blocks by default, counted on one line; the user adds
** names (--suppress NAME, a glob; --suppressions FILE, one a line).
** With --from N --to M: what grew between two leak checks of one file
** (leak_check=on's snapshots of a server), by class and site; sites are
** matched by name, as inspect diff matches types.
*/
#include "insp_int.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

enum { LEAKS_SUPPRESS = RD_ID_OWN, LEAKS_SUPPRESSIONS, LEAKS_NO_DEFAULT };

static const struct rd_option leaks_options[] = {
	RD_OPTION_PID("check the live process PID now (MEMINST=mim,control=on)"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest with a leak check)"),
	{"from", 0, RD_OT_INT, "N", "what grew since the leak check of snapshot N\n"
	 "(default with --to: the check before M)", RD_ID_FROM, 1, RD_INT_MAX, NULL},
	{"to", 0, RD_OT_INT, "M", "what grew up to the leak check of snapshot M\n"
	 "(default with --from: the latest)", RD_ID_TO, 1, RD_INT_MAX, NULL},
	{"all", 0, RD_OT_FLAG, NULL, "list the still reachable and the suppressed sites too", RD_ID_ALL, 0, 0,
	 NULL},
	RD_OPTION_LIMIT("at most N sites per class"),
	{"suppress", 0, RD_OT_STR, "NAME", "suppress the blocks of the site NAME, or of the function\n"
	 "NAME in any frame of a site's stack (a glob; repeatable)", LEAKS_SUPPRESS, 0, 0, NULL},
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
	"summary, then the sites of the lost blocks, biggest first (definitely\n"
	"lost: with the indirectly lost bytes hanging from them).  With --from\n"
	"and --to: what grew between two leak checks, by class and site.\n",
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

static const char *leaks_kind(int slot)
{
	return slot < RD_LEAK_CLASSES ? leaks_names[slot] : "suppressed";
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
	{"indirect_bytes", "+ indirect", RD_K_SIZE, RD_C_OPTIONAL},
	{"indirect_blocks", "in blocks", RD_K_INT, RD_C_OPTIONAL},
	{"type", "", RD_K_INT, RD_C_DATA_ONLY},
	{"site", "allocated at", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

static const struct rd_col scan_cols[] = {
	{"scanned_bytes", "scanned", RD_K_SIZE, 0},
	{"threads", "threads", RD_K_INT, 0},
	{"threads_unstopped", "threads not stopped (stack only)", RD_K_INT, 0},
	{"scan_ns", "scan", RD_K_DUR, 0},
	{"scan_cpu_ns", "scan CPU", RD_K_DUR, RD_C_OPTIONAL},
};

static void leaks_summary(rd_doc_t *d, const struct rd_leak_sum *m, const struct rd_leak_check *k)
{
	rd_table_t *t = rd_doc_table(d, "summary", summary_cols, NCOLS(summary_cols), 0);
	rd_table_title(t, "leak summary:");
	for (int i = 0; i <= RD_LEAK_CLASSES; i++) {
		int c = i < RD_LEAK_CLASSES ? leaks_order[i] : RD_LEAK_SUPPRESSED;
		rd_row(t);
		rd_put_const(t, leaks_kind(c));
		rd_put_uint(t, m->bytes[c]);
		rd_put_uint(t, m->blocks[c]);
	}
	t = rd_doc_table(d, "scan", scan_cols, NCOLS(scan_cols), RD_T_SINGLE | RD_T_DATA);
	rd_row(t);
	rd_put_uint(t, k->scanned_bytes);
	rd_put_int(t, k->threads);
	rd_put_int(t, k->threads_unstopped);
	rd_put_int(t, k->scan_ns);
	if (k->scan_cpu_ns >= 0)
		rd_put_int(t, k->scan_cpu_ns);
	else
		rd_put_null(t);
}

static void leaks_sites(rd_doc_t *d, struct rd_session *s, const struct rd_leak_sum *m, const struct rd_args *a)
{
	rd_table_t *t = rd_doc_table(d, "sites", site_cols, NCOLS(site_cols), 0);
	rd_table_title(t, "by site, biggest first:");
	for (int i = 0; i <= RD_LEAK_CLASSES; i++) {
		int c = i < RD_LEAK_CLASSES ? leaks_order[i] : RD_LEAK_SUPPRESSED;
		if ((c == RD_LEAK_REACHABLE || c == RD_LEAK_SUPPRESSED) && !a->all)
			continue;
		size_t n;
		struct rd_leak_site *v = rd_leak_sites(m, c, &n);
		size_t limit = a->limit >= 0 ? (size_t)a->limit : n;
		for (size_t j = 0; j < n && j < limit; j++) {
			const char *where = NULL;
			rd_row(t);
			rd_put_const(t, leaks_kind(c));
			rd_put_uint(t, v[j].bytes);
			rd_put_uint(t, v[j].blocks);
			if (c == RD_LEAK_DEFINITE) {
				rd_put_uint(t, v[j].ind_bytes);
				rd_put_uint(t, v[j].ind_blocks);
			} else {
				rd_put_null(t);
				rd_put_null(t);
			}
			rd_put_int(t, v[j].type);
			rd_put_str(t, rd_type_label(s->db, &s->tags, v[j].type, &where));
			rd_put_str(t, where);
		}
		if (n > limit)
			rd_table_note(t, "(%zu more %s sites)", n - limit, leaks_kind(c));
		free(v);
	}
}

/* The latest checked snapshot (of any process) unless want: 0 or an
** exit code after one line. */
static int leaks_pick(struct rd_session *s, const struct rd_opts *o, const char *path, int64_t *want)
{
	int r = rd_leak_latest(s->db, 0, want);
	if (!r && !*want) {
		rd_errf(o->err, "inspect: %s: no snapshot has a leak check (run in mim mode with an exit "
				"snapshot, or leak_check=on)\n", path);
		r = RD_EXIT_NOTFOUND;
	}
	return r;
}

static int leaks_show(const struct rd_opts *o, struct rd_args *a, const struct leaks_ctx *c, const char *path,
		      const char *label)
{
	struct rd_session s = {0};
	struct rd_leak_check check = {0};
	struct rd_leak_sum m = {0};
	struct rd_leak_suppress sup = {c->names, c->n, c->no_default};
	int64_t want = a->snapshot;
	int r = rd_db_open(path, o, &s.db);
	if (!r && !want)
		r = leaks_pick(&s, o, path, &want);
	if (!r)
		r = rd_leak_read(&s, o, a, want, &sup, &check, &m);
	if (!r) {
		rd_doc_t *d = rd_doc_new(o, a);
		rd_doc_snapshot(d, "snapshot", label, rd_db_snap(s.db));
		leaks_summary(d, &m, &check);
		leaks_sites(d, &s, &m, a);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_leak_sum_free(&m);
	rd_leak_free(&check);
	rd_session_close(&s);
	return r;
}

/* --------------------------------------------- what grew: --from --to --- */

/* One (class, site) of one side; sites are matched by name. */
struct leaks_row {
	int slot;
	char *label, *where;
	uint64_t bytes[2], blocks[2];
};

struct leaks_growth {
	struct leaks_row *v;
	size_t n, cap;
	uint64_t bytes[2][RD_LEAK_SUPPRESSED + 1], blocks[2][RD_LEAK_SUPPRESSED + 1];
	int64_t snap[2];
};

static void leaks_side(struct leaks_growth *g, int side, struct rd_session *s, const struct rd_leak_sum *m)
{
	for (int c = 0; c <= RD_LEAK_SUPPRESSED; c++) {
		g->bytes[side][c] = m->bytes[c];
		g->blocks[side][c] = m->blocks[c];
		size_t n;
		struct rd_leak_site *v = rd_leak_sites(m, c, &n);
		for (size_t j = 0; j < n; j++) {
			if (g->n == g->cap) {
				g->cap = g->cap ? 2 * g->cap : 256;
				g->v = rd_xrealloc(g->v, g->cap * sizeof *g->v);
			}
			const char *where = NULL;
			const char *label = rd_type_label(s->db, &s->tags, v[j].type, &where);
			struct leaks_row *r = &g->v[g->n++];
			*r = (struct leaks_row){c, rd_xstrdup(label), where ? rd_xstrdup(where) : NULL, {0, 0}, {0, 0}};
			r->bytes[side] = v[j].bytes;
			r->blocks[side] = v[j].blocks;
		}
		free(v);
	}
}

static int leaks_row_cmp(const void *x, const void *y)
{
	const struct leaks_row *a = x, *b = y;
	return a->slot != b->slot ? a->slot - b->slot : strcmp(a->label, b->label);
}

static int64_t leaks_delta(const struct leaks_row *r)
{
	return (int64_t)(r->bytes[1] - r->bytes[0]);
}

static int leaks_by_growth(const void *x, const void *y)
{
	int64_t a = leaks_delta(x), b = leaks_delta(y);
	return a != b ? (a < b ? 1 : -1) : leaks_row_cmp(x, y);
}

/* The rows of both sides merged by (class, site): the growth, biggest first. */
static void leaks_merge(struct leaks_growth *g)
{
	qsort(g->v, g->n, sizeof *g->v, leaks_row_cmp);
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (k && !leaks_row_cmp(&g->v[k - 1], &g->v[i])) {
			for (int side = 0; side < 2; side++) {
				g->v[k - 1].bytes[side] += g->v[i].bytes[side];
				g->v[k - 1].blocks[side] += g->v[i].blocks[side];
			}
			free(g->v[i].label);
			free(g->v[i].where);
		} else {
			g->v[k++] = g->v[i];
		}
	}
	g->n = k;
	qsort(g->v, g->n, sizeof *g->v, leaks_by_growth);
}

static const struct rd_col growth_sum_cols[] = {
	{"kind", "", RD_K_STR, 0},
	{"delta_bytes", "growth", RD_K_DELTA, 0},
	{"delta_blocks", "blocks", RD_K_INT, 0},
	{"bytes_a", "bytes in A", RD_K_SIZE, 0},
	{"bytes_b", "bytes in B", RD_K_SIZE, 0},
	{"blocks_a", "blocks in A", RD_K_INT, 0},
	{"blocks_b", "blocks in B", RD_K_INT, 0},
};

static const struct rd_col growth_cols[] = {
	{"kind", "kind", RD_K_STR, 0},
	{"delta_bytes", "growth", RD_K_DELTA, 0},
	{"delta_blocks", "blocks", RD_K_INT, 0},
	{"bytes_a", "bytes in A", RD_K_SIZE, 0},
	{"bytes_b", "bytes in B", RD_K_SIZE, 0},
	{"site", "allocated at", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

static void leaks_growth_print(rd_doc_t *d, const struct leaks_growth *g, const struct rd_args *a)
{
	rd_table_t *t = rd_doc_table(d, "summary", growth_sum_cols, NCOLS(growth_sum_cols), 0);
	rd_table_title(t, "leak summary, snapshot %lld (A) to %lld (B):", (long long)g->snap[0],
		       (long long)g->snap[1]);
	for (int i = 0; i <= RD_LEAK_CLASSES; i++) {
		int c = i < RD_LEAK_CLASSES ? leaks_order[i] : RD_LEAK_SUPPRESSED;
		rd_row(t);
		rd_put_const(t, leaks_kind(c));
		rd_put_int(t, (int64_t)(g->bytes[1][c] - g->bytes[0][c]));
		rd_put_int(t, (int64_t)(g->blocks[1][c] - g->blocks[0][c]));
		rd_put_uint(t, g->bytes[0][c]);
		rd_put_uint(t, g->bytes[1][c]);
		rd_put_uint(t, g->blocks[0][c]);
		rd_put_uint(t, g->blocks[1][c]);
	}
	t = rd_doc_table(d, "growth", growth_cols, NCOLS(growth_cols), 0);
	rd_table_title(t, "what grew, by site, biggest first:");
	size_t shown = 0, grew = 0, limit = a->limit >= 0 ? (size_t)a->limit : SIZE_MAX;
	for (size_t i = 0; i < g->n; i++) {
		const struct leaks_row *r = &g->v[i];
		bool show = r->slot != RD_LEAK_REACHABLE && r->slot != RD_LEAK_SUPPRESSED ? true : a->all;
		if (!show || (leaks_delta(r) <= 0 && r->blocks[1] <= r->blocks[0]))
			continue;
		if (grew++ >= limit)
			continue;
		shown++;
		rd_row(t);
		rd_put_const(t, leaks_kind(r->slot));
		rd_put_int(t, leaks_delta(r));
		rd_put_int(t, (int64_t)(r->blocks[1] - r->blocks[0]));
		rd_put_uint(t, r->bytes[0]);
		rd_put_uint(t, r->bytes[1]);
		rd_put_str(t, r->label);
		rd_put_str(t, r->where);
	}
	if (grew > shown)
		rd_table_note(t, "(%zu more sites grew)", grew - shown);
	if (!grew)
		rd_table_note(t, "(no %ssite grew)", a->all ? "" : "lost ");
}

/* Snapshot to (default: the latest check) and from (default: the check
** before it): each side's sums by (class, site). */
static int leaks_growth_read(struct leaks_growth *g, const struct rd_opts *o, struct rd_args *a,
			     const struct leaks_ctx *c, const char *path)
{
	struct rd_session s = {0};
	struct rd_leak_suppress sup = {c->names, c->n, c->no_default};
	int r = rd_db_open(path, o, &s.db);
	g->snap[1] = a->to;
	if (!r && !g->snap[1])
		r = leaks_pick(&s, o, path, &g->snap[1]);
	g->snap[0] = a->from;
	if (!r && !g->snap[0] && !(r = rd_leak_previous(s.db, g->snap[1], &g->snap[0])) && !g->snap[0]) {
		rd_errf(o->err, "inspect: %s: no leak check before snapshot %lld to compare with\n", path,
			(long long)g->snap[1]);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r && g->snap[0] >= g->snap[1]) {
		rd_errf(o->err, "inspect: leaks: --from %lld is not before --to %lld\n", (long long)g->snap[0],
			(long long)g->snap[1]);
		r = RD_EXIT_USAGE;
	}
	for (int side = 0; side < 2 && !r; side++) {
		struct rd_leak_check check = {0};
		struct rd_leak_sum m = {0};
		if (!(r = rd_leak_read(&s, o, a, g->snap[side], &sup, &check, &m)))
			leaks_side(g, side, &s, &m);
		rd_leak_sum_free(&m);
		rd_leak_free(&check);
	}
	rd_session_close(&s);
	return r;
}

static int leaks_growth(const struct rd_opts *o, struct rd_args *a, const struct leaks_ctx *c, const char *path)
{
	struct leaks_growth g = {0};
	int r = leaks_growth_read(&g, o, a, c, path);
	if (!r) {
		leaks_merge(&g);
		rd_doc_t *d = rd_doc_new(o, a);
		leaks_growth_print(d, &g, a);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	for (size_t i = 0; i < g.n; i++) {
		free(g.v[i].label);
		free(g.v[i].where);
	}
	free(g.v);
	return r;
}

int insp_cmd_leaks(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	struct leaks_ctx c = {.o = o};
	int r = rd_args_parse_own(&leaks_spec, argc, argv, o, &a, leaks_own, &c);
	bool growth = a.from || a.to;
	if (r == RD_CONTINUE) {
		if (a.pid && a.npos)
			r = rd_cmd_error(o, &leaks_spec, "give a database or --pid, not both");
		else if (a.pid && (a.snapshot || growth))
			r = rd_cmd_error(o, &leaks_spec, "--snapshot, --from and --to do not apply to --pid");
		else if (!a.pid && !a.npos)
			r = rd_cmd_error(o, &leaks_spec, "missing argument: a database or --pid PID");
		else if (growth && a.snapshot)
			r = rd_cmd_error(o, &leaks_spec, "--snapshot does not go with --from and --to");
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
		r = growth ? leaks_growth(o, &a, &c, a.pos[0]) : leaks_show(o, &a, &c, a.pos[0], a.pos[0]);
	}
	for (size_t i = 0; i < c.n; i++)
		free((void *)c.names[i]);
	free(c.names);
	return r;
}
