/*
** insp_cmd_diff.c — `inspect diff`: what changed between two map snapshots.
**
** Both maps are read in address order and merged (insp_merge): a block of
** B with the same address and allocation number (seq) as a block of A is
** the same block; any other block of B was allocated after A was taken
** and is a leak candidate if it stays.  Candidates are listed oldest first
** (smallest seq): a block that survived longest is the likeliest leak.
**
** Growth is given by type, class and thread (B minus A, bytes and blocks).
** Numbers are only meaningful within one snapshot, so types and classes
** are matched by name and threads by number.
**
** Two files from two processes (two runs) are not compared block by block:
** their addresses mean nothing to each other (two snapshots of one file
** are, as they always were, with a note when their pids differ).  insp_cmd_runs.c compares
** their event counters site by site instead.
*/
#include "insp_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define DIFF_DEFAULT_LIMIT 20

static const char *const diff_by_words[] = {"calls", "allocated", "temporary", "peak", "leaked", NULL};

static const struct rd_option diff_options[] = {
	{"from", 0, RD_OT_INT, "N", "with one DB: the older snapshot", RD_ID_FROM, 1, RD_INT_MAX, NULL},
	{"to", 0, RD_OT_INT, "M", "with one DB: the newer snapshot", RD_ID_TO, 1, RD_INT_MAX, NULL},
	{"by", 0, RD_OT_WORD, NULL, "two runs: sites by the change of calls, allocated\n"
	 "(default), temporary, peak or leaked", RD_ID_BY, 0, 0, diff_by_words},
	RD_OPTION_LIMIT("at most N rows per table (default 20; 0: none)"),
	RD_OPTION_STACKS("the frames of the first N types of the growth (two\n"
			   "runs: sites) under them (text default none; JSON\n"
			   "and CSV: every row)"),
	RD_OPTIONS_FILTER,
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec diff_spec = {
	"diff", "[options] A B | --from N --to M DB | DB",
	"Compare two map snapshots of one process: A and B are FILE or FILE:N\n"
	"(snapshot N of FILE, default its latest map).  With one DB, --from and\n"
	"--to pick the two snapshots (default: the latest map and the map before).\n"
	"\n"
	"Printed: the totals of both, the growth (B minus A) by type, class and\n"
	"thread, and the blocks of B that A does not have (same address and\n"
	"allocation number = same block) as leak candidates, oldest first.\n"
	"The filters keep the blocks that pass them in each snapshot, by that\n"
	"snapshot's names and numbers.\n"
	"\n"
	"When A and B are two files from two processes (two runs), their\n"
	"event counters are compared instead, site by site (matched by function,\n"
	"source line and stack) and in total: calls, allocated, temporary, peak\n"
	"(live at each run's peak) and leaked (live at exit); new and gone sites\n"
	"marked.  Of a session of several processes, its main process is\n"
	"compared (said in the output); FILE:N picks the snapshot of counters\n"
	"and with it the process.  No filters.\n",
	diff_options, 1, 2,
};

struct diff_side {
	struct rd_session s;
	struct insp_aggmap types, threads;
	uint64_t blocks, bytes;
	const char *file;
};

struct diff_ctx {
	struct diff_side a, b;
	uint64_t fresh, fresh_bytes, gone, gone_bytes, kept;
	struct insp_oldest oldest;
};

static void diff_count(struct diff_side *s, const struct rd_block *b)
{
	struct insp_agg *g = insp_aggmap_get(&s->types, b->type);
	g->bytes += b->size;
	g->blocks++;
	g = insp_aggmap_get(&s->threads, b->thread);
	g->bytes += b->size;
	g->blocks++;
	s->blocks++;
	s->bytes += b->size;
}

static void diff_only_a(void *ctx, const struct rd_block *x)
{
	struct diff_ctx *c = ctx;
	diff_count(&c->a, x);
	c->gone++;
	c->gone_bytes += x->size;
}

static void diff_only_b(void *ctx, const struct rd_block *y)
{
	struct diff_ctx *c = ctx;
	diff_count(&c->b, y);
	c->fresh++;
	c->fresh_bytes += y->size;
	insp_oldest_add(&c->oldest, y);
}

static void diff_both(void *ctx, const struct rd_block *x, const struct rd_block *y)
{
	struct diff_ctx *c = ctx;
	diff_count(&c->a, x);
	diff_count(&c->b, y);
	c->kept++;
}

/* ------------------------------------------------------------- growth -- */

struct diff_row {
	const char *key, *label, *stack;
	int64_t bytes[2], blocks[2];
};

enum diff_by { DIFF_TYPE, DIFF_CLASS, DIFF_THREAD };

/* The matching key and the label of one aggregate of one side. */
static void diff_key(struct diff_side *s, enum diff_by by, int64_t id, const char **key,
		     const char **label, const char **stack)
{
	struct rd_pool *p = rd_db_pool(s->s.db);
	const struct rd_name *ty = rd_name_find(&s->s.tags.types, id);
	switch (by) {
	case DIFF_TYPE:
		*key = ty ? ty->name : rd_pool_fmt(p, "#%lld", (long long)id);
		*label = rd_type_label(s->s.db, &s->s.tags, id, NULL);
		*stack = rd_type_stack(s->s.db, &s->s.tags, id);
		break;
	case DIFF_CLASS:
		*key = *label = ty ? rd_tag_name(s->s.db, &s->s.tags, RD_TAG_CLASS, ty->class_) : "#?";
		break;
	case DIFF_THREAD:
		*key = rd_pool_fmt(p, "%lld", (long long)id);
		*label = rd_thread_label(s->s.db, &s->s.tags, id);
		break;
	}
}

static void diff_collect(struct rd_vec *rows, struct diff_side *s, int side, enum diff_by by)
{
	const struct insp_aggmap *m = by == DIFF_THREAD ? &s->threads : &s->types;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		struct diff_row *r = rd_vec_push(rows);
		r->stack = NULL;
		diff_key(s, by, m->slot[i].key, &r->key, &r->label, &r->stack);
		r->bytes[side] = (int64_t)m->slot[i].bytes;
		r->blocks[side] = (int64_t)m->slot[i].blocks;
	}
}

static int row_by_key(const void *x, const void *y)
{
	return strcmp(((const struct diff_row *)x)->key, ((const struct diff_row *)y)->key);
}

/* b - a, saturated: the figures of a damaged file can be anything. */
static int64_t diff_sub(int64_t b, int64_t a)
{
	int64_t d;
	return __builtin_sub_overflow(b, a, &d) ? (b > a ? INT64_MAX : INT64_MIN) : d;
}

static int64_t diff_add(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_add_overflow(a, b, &s) ? (b > 0 ? INT64_MAX : INT64_MIN) : s;
}

/* |b - a|, exact in unsigned arithmetic. */
static uint64_t diff_dist(int64_t b, int64_t a)
{
	return b >= a ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
}

static int row_by_change(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	uint64_t da = diff_dist(a->bytes[1], a->bytes[0]), db = diff_dist(b->bytes[1], b->bytes[0]);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Rows of both sides with the same key added up; unchanged ones dropped. */
static size_t diff_fold(struct diff_row *v, size_t n)
{
	if (!n)
		return 0; /* v may be NULL, which qsort must not see */
	qsort(v, n, sizeof *v, row_by_key);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(v[k - 1].key, v[i].key) == 0) {
			for (int s = 0; s < 2; s++) {
				v[k - 1].bytes[s] = diff_add(v[k - 1].bytes[s], v[i].bytes[s]);
				v[k - 1].blocks[s] = diff_add(v[k - 1].blocks[s], v[i].blocks[s]);
			}
			if (v[i].bytes[1] || v[i].blocks[1]) /* prefer B's label */
				v[k - 1].label = v[i].label, v[k - 1].stack = v[i].stack;
		} else {
			v[k++] = v[i];
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (v[i].bytes[0] != v[i].bytes[1] || v[i].blocks[0] != v[i].blocks[1])
			v[m++] = v[i];
	qsort(v, m, sizeof *v, row_by_change);
	return m;
}

static const struct rd_col growth_cols[] = {
	{"key", "", RD_K_STR, RD_C_DATA_ONLY},
	{"delta_bytes", "growth", RD_K_DELTA, 0},
	{"delta_blocks", "blocks", RD_K_INT, 0},
	{"bytes_a", "bytes in A", RD_K_SIZE, 0},
	{"bytes_b", "bytes in B", RD_K_SIZE, 0},
	{"blocks_a", "blocks in A", RD_K_INT, 0},
	{"blocks_b", "blocks in B", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"stack", "stack", RD_K_STACK, 0},
};

static void diff_growth(rd_doc_t *d, struct diff_ctx *c, enum diff_by by, const struct rd_args *a,
			size_t limit)
{
	static const char *const keys[] = {"types", "classes", "threads"};
	struct rd_vec rows;
	rd_vec_init(&rows, sizeof(struct diff_row));
	diff_collect(&rows, &c->a, 0, by);
	diff_collect(&rows, &c->b, 1, by);
	size_t n = diff_fold(rows.v, rows.n);
	rd_table_t *t = rd_doc_table(d, keys[by], growth_cols, NCOLS(growth_cols), 0);
	rd_table_title(t, "growth by %s:", by == DIFF_TYPE ? "type" : by == DIFF_CLASS ? "class" : "thread");
	const struct diff_row *v = rows.v;
	for (size_t i = 0; i < n && i < limit; i++) {
		rd_row(t);
		rd_put_str(t, v[i].key);
		rd_put_int(t, diff_sub(v[i].bytes[1], v[i].bytes[0]));
		rd_put_int(t, diff_sub(v[i].blocks[1], v[i].blocks[0]));
		rd_put_int(t, v[i].bytes[0]);
		rd_put_int(t, v[i].bytes[1]);
		rd_put_int(t, v[i].blocks[0]);
		rd_put_int(t, v[i].blocks[1]);
		rd_put_str(t, v[i].label);
		rd_put_str(t, rd_stack_row(a, i, 0) ? v[i].stack : NULL);
	}
	if (n > limit)
		rd_table_note(t, "(%zu more)", n - limit);
	rd_vec_free(&rows);
}

/* -------------------------------------------------------------- output -- */

static const struct rd_col diff_sum_cols[] = {
	{"blocks_a", "blocks in A", RD_K_INT, 0},
	{"bytes_a", "bytes in A", RD_K_SIZE, 0},
	{"blocks_b", "blocks in B", RD_K_INT, 0},
	{"bytes_b", "bytes in B", RD_K_SIZE, 0},
	{"delta_blocks", "block growth", RD_K_INT, 0},
	{"delta_bytes", "growth", RD_K_DELTA, 0},
	{"kept_blocks", "blocks in both", RD_K_INT, 0},
	{"new_blocks", "new blocks (in B only)", RD_K_INT, 0},
	{"new_bytes", "new bytes", RD_K_SIZE, 0},
	{"gone_blocks", "freed blocks (in A only)", RD_K_INT, 0},
	{"gone_bytes", "freed bytes", RD_K_SIZE, 0},
	{"same_process", "same process", RD_K_BOOL, 0},
};

static void diff_summary(rd_doc_t *d, const struct diff_ctx *c)
{
	rd_table_t *t = rd_doc_table(d, "summary", diff_sum_cols, NCOLS(diff_sum_cols), RD_T_SINGLE);
	const struct rd_snap *a = rd_db_snap(c->a.s.db), *b = rd_db_snap(c->b.s.db);
	rd_row(t);
	rd_put_uint(t, c->a.blocks);
	rd_put_uint(t, c->a.bytes);
	rd_put_uint(t, c->b.blocks);
	rd_put_uint(t, c->b.bytes);
	rd_put_int(t, (int64_t)(c->b.blocks - c->a.blocks));
	rd_put_int(t, (int64_t)(c->b.bytes - c->a.bytes));
	rd_put_uint(t, c->kept);
	rd_put_uint(t, c->fresh);
	rd_put_uint(t, c->fresh_bytes);
	rd_put_uint(t, c->gone);
	rd_put_uint(t, c->gone_bytes);
	rd_put_int(t, a->pid == b->pid);
	if (a->pid != b->pid)
		rd_table_note(t, "note: A and B come from different processes (pid %lld, %lld): "
				"their addresses do not compare, so the new blocks are not leak candidates",
				(long long)a->pid, (long long)b->pid);
}

static const struct rd_col leak_cols[] = {
	{"addr", "address", RD_K_ADDR, 0},
	{"bytes", "size", RD_K_SIZE, 0},
	{"seq", "seq", RD_K_INT, 0},
	{"allocator", "allocator", RD_K_STR, 0},
	{"thread", "", RD_K_INT, RD_C_DATA_ONLY},
	{"thread_name", "thread", RD_K_STR, 0},
	{"type", "", RD_K_INT, RD_C_DATA_ONLY},
	{"type_name", "type", RD_K_STR, 0},
	{"location", "", RD_K_LOC, RD_C_DATA_ONLY},
};

static void diff_leaks(rd_doc_t *d, struct diff_ctx *c)
{
	struct rd_session *s = &c->b.s;
	rd_table_t *t = rd_doc_table(d, "new_blocks", leak_cols, NCOLS(leak_cols), 0);
	rd_table_title(t, "blocks in B only, oldest first (leak candidates):");
	const struct rd_block *v = insp_oldest_sorted(&c->oldest);
	for (size_t i = 0; i < c->oldest.n; i++) {
		const char *where;
		const char *label = rd_type_label(s->db, &s->tags, v[i].type, &where);
		rd_row(t);
		rd_put_uint(t, v[i].addr);
		rd_put_uint(t, v[i].size);
		rd_put_int(t, v[i].seq);
		rd_put_str(t, rd_tag_name(s->db, &s->tags, RD_TAG_ALLOCATOR, v[i].allocator));
		rd_put_int(t, v[i].thread);
		rd_put_str(t, rd_thread_label(s->db, &s->tags, v[i].thread));
		rd_put_int(t, v[i].type);
		rd_put_str(t, label);
		rd_put_str(t, where);
	}
	if (c->fresh > c->oldest.n)
		rd_table_note(t, "(%llu more)", (unsigned long long)(c->fresh - c->oldest.n));
}

/* ------------------------------------------------------------- opening -- */

/* "FILE:N" is snapshot N of FILE unless a file has that whole name. */
static const char *diff_split(const char *arg, char *file, size_t len, int64_t *snap)
{
	const char *colon = strrchr(arg, ':');
	*snap = 0;
	snprintf(file, len, "%s", arg);
	if (colon && access(arg, F_OK) != 0 && rd_parse_int(colon + 1, snap) && *snap > 0)
		file[colon - arg < (ptrdiff_t)len ? colon - arg : (ptrdiff_t)len - 1] = 0;
	else
		*snap = 0;
	return file;
}

static int diff_open_side(struct diff_side *side, const struct rd_opts *o,
			  const struct rd_args *a, const char *file, int64_t snap)
{
	struct rd_args sa = *a;
	sa.snapshot = snap;
	side->file = file;
	insp_aggmap_init(&side->types);
	insp_aggmap_init(&side->threads);
	int r = rd_session_open(&side->s, o, &sa, file, RD_NEED_MAP);
	return r ? r : rd_session_tags(&side->s, &sa);
}

static int diff_open(struct diff_ctx *c, const struct rd_opts *o, const struct rd_args *a,
		     char files[2][4096])
{
	int64_t na = 0, nb = 0;
	if (a->npos == 2) {
		if (a->from || a->to)
			return rd_usage_error(o, "diff", "--from and --to go with one database");
		diff_split(a->pos[0], files[0], 4096, &na);
		diff_split(a->pos[1], files[1], 4096, &nb);
	} else {
		snprintf(files[0], 4096, "%s", a->pos[0]);
		snprintf(files[1], 4096, "%s", a->pos[0]);
		na = a->from;
		nb = a->to;
	}
	int r = diff_open_side(&c->b, o, a, files[1], nb);
	if (!r && a->npos == 1 && !na) {
		if ((r = rd_db_previous_map(c->b.s.db, rd_db_snap(c->b.s.db)->id, &na)))
			return r;
		if (!na) {
			rd_errf(o->err, "inspect: %s: no map snapshot before %lld to compare with\n",
				files[0], (long long)rd_db_snap(c->b.s.db)->id);
			return RD_EXIT_NOTFOUND;
		}
	}
	return r ? r : diff_open_side(&c->a, o, a, files[0], na);
}

static void diff_close(struct diff_ctx *c)
{
	struct diff_side *sides[] = {&c->a, &c->b};
	for (int i = 0; i < 2; i++) {
		rd_session_close(&sides[i]->s);
		insp_aggmap_free(&sides[i]->types);
		insp_aggmap_free(&sides[i]->threads);
	}
	insp_oldest_free(&c->oldest);
}

/* The filters of each side, by that side's names: one that names nothing
** in a side (a type that appeared after A) selects no block there; it is
** an error only when it names nothing in either. */
static int diff_filters(struct diff_ctx *c, const struct rd_filter *f, struct rd_filter_ids ids[2])
{
	struct diff_side *sides[] = {&c->a, &c->b};
	const char *what, *given;
	int missing = 0;
	for (int i = 0; i < 2; i++) {
		if (rd_filter_lookup(&sides[i]->s.tags, f, &ids[i], &what, &given) != 0) {
			/* an id no table row has: nothing passes */
			ids[i] = (struct rd_filter_ids){.has_type = true, .type = INT64_MIN};
			missing++;
		}
	}
	return missing == 2 ? rd_filter_resolve(c->b.s.db, &c->b.s.tags, f, &ids[1]) : 0;
}

static int diff_run(struct diff_ctx *c, const struct rd_opts *o, const struct rd_filter *f)
{
	rd_blocks_t ia, ib;
	struct rd_filter_ids ids[2];
	int r = diff_filters(c, f, ids);
	if (!r)
		r = rd_blocks_open(c->a.s.db, &ids[0], &ia);
	if (r)
		return r;
	if ((r = rd_blocks_open(c->b.s.db, &ids[1], &ib))) {
		rd_blocks_close(&ia);
		return r;
	}
	struct insp_merge_cb cb = {diff_only_a, diff_only_b, diff_both, c};
	struct rd_progress p;
	rd_progress_start(&p, o, "comparing",
			    (uint64_t)(rd_db_snap(c->a.s.db)->blocks + rd_db_snap(c->b.s.db)->blocks) / 2);
	r = insp_merge(&ia, &ib, &cb, &p);
	rd_progress_end(&p);
	rd_blocks_close(&ia);
	rd_blocks_close(&ib);
	return r;
}

int insp_cmd_diff(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&diff_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	char files[2][4096];
	if (a.npos == 2 && !a.from && !a.to) { /* two runs, or one process */
		int64_t snaps[2];
		const char *const names[2] = {diff_split(a.pos[0], files[0], 4096, &snaps[0]),
					      diff_split(a.pos[1], files[1], 4096, &snaps[1])};
		if ((r = insp_diff_runs(o, &a, names, snaps)) != RD_CONTINUE)
			return r;
	}
	if (a.by)
		return rd_usage_error(o, "diff", "--by sorts the sites of two runs; these are snapshots of "
					"one process, compared block by block");
	struct diff_ctx c = {0};
	size_t limit = a.limit >= 0 ? (size_t)a.limit : DIFF_DEFAULT_LIMIT;
	insp_oldest_init(&c.oldest, limit);
	if (!(r = diff_open(&c, o, &a, files)) && !(r = diff_run(&c, o, &a.filter))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "a", c.a.file, rd_db_snap(c.a.s.db));
		rd_doc_snapshot(d, "b", c.b.file, rd_db_snap(c.b.s.db));
		diff_summary(d, &c);
		diff_growth(d, &c, DIFF_TYPE, &a, limit);
		diff_growth(d, &c, DIFF_CLASS, &a, limit);
		diff_growth(d, &c, DIFF_THREAD, &a, limit);
		diff_leaks(d, &c);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	diff_close(&c);
	return r;
}
