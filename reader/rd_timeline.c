/*
** rd_timeline.c — the memory of one process over time, from every snapshot
** it stored (`inspect timeline`, the HTML report's memory charts): the
** points (each snapshot's total), and the series of `--by type|class|thread`:
** the N entries of that kind whose current bytes rose highest at any point
** (the status rows every snapshot holds), each on its own, the rest added
** up as "other" (heaptrack's "Consumed" chart, from the status snapshots).
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

const char *const rd_tl_kinds[] = {"types", "classes", "threads"};

int rd_timeline_points(rd_db_t *db, int64_t pid, struct rd_vec *pts)
{
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT s.id, s.elapsed_ns, s.trigger, t.sizes_current, t.blocks_current, t.sizes_max_ever "
	    "FROM snapshot s JOIN status t ON t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 "
	    "WHERE s.pid = ? ORDER BY s.elapsed_ns, s.id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rd_tl_point *p = rd_vec_push(pts);
		p->id = sqlite3_column_int64(st, 0);
		p->elapsed_ns = sqlite3_column_int64(st, 1);
		p->trigger = rd_col_text(db, st, 2);
		p->bytes = (uint64_t)sqlite3_column_int64(st, 3);
		p->blocks = (uint64_t)sqlite3_column_int64(st, 4);
		p->max_ever = (uint64_t)sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the timeline");
}

/* The series: the entries of the kind with bytes at some point, largest
** highest first (ties by number), at most `limit` of them. */
static int tl_rank(rd_db_t *db, int64_t pid, struct rd_tl_by *b, int limit)
{
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT t.id, max(t.sizes_current) AS m FROM snapshot s JOIN status t ON t.snapshot = s.id "
	    "AND t.kind = ?2 WHERE s.pid = ?1 GROUP BY t.id HAVING m > 0 ORDER BY m DESC, t.id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_text(st, 2, rd_tl_kinds[b->kind], -1, SQLITE_STATIC);
	b->s = rd_xcalloc((size_t)limit + 1, sizeof *b->s);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (b->ns == limit) {
			b->rest++;
			continue;
		}
		b->s[b->ns++].id = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	b->k = b->ns + (b->rest > 0);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the status of the timeline");
}

/* An entry's column, found by id (sorted by id for rd_find_id). */
struct tl_col {
	int64_t id;
	int col;
};

static int tl_col_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct tl_col *)a)->id, y = ((const struct tl_col *)b)->id;
	return (x > y) - (x < y);
}

/* Every point's bytes and blocks of each series, from the status rows of
** its snapshot (an entry without a row there had none). */
static int tl_values(rd_db_t *db, int64_t pid, const struct rd_tl_point *p, size_t n, struct rd_tl_by *b)
{
	struct tl_col *cols = rd_xcalloc((size_t)b->ns + 1, sizeof *cols);
	for (int j = 0; j < b->ns; j++)
		cols[j] = (struct tl_col){b->s[j].id, j};
	qsort(cols, (size_t)b->ns, sizeof *cols, tl_col_cmp);
	b->bytes = rd_xcalloc(n * (size_t)b->k + 1, sizeof *b->bytes);
	b->blocks = rd_xcalloc(n * (size_t)b->k + 1, sizeof *b->blocks);
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT s.id, t.id, t.sizes_current, t.blocks_current FROM snapshot s JOIN status t "
	    "ON t.snapshot = s.id AND t.kind = ?2 WHERE s.pid = ?1 ORDER BY s.elapsed_ns, s.id");
	int rc = SQLITE_ERROR;
	if (st) {
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_text(st, 2, rd_tl_kinds[b->kind], -1, SQLITE_STATIC);
	}
	size_t at = 0; /* the rows come in the points' order */
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t snap = sqlite3_column_int64(st, 0);
		size_t i = at;
		while (i < n && p[i].id != snap)
			i++;
		if (i == n) /* a snapshot without a total: not a point */
			continue;
		at = i;
		const struct tl_col *c = rd_find_id(cols, (size_t)b->ns, sizeof *cols, sqlite3_column_int64(st, 1));
		if (!c && !b->rest)
			continue; /* an entry that never had bytes */
		size_t cell = i * (size_t)b->k + (size_t)(c ? c->col : b->ns);
		b->bytes[cell] += (uint64_t)sqlite3_column_int64(st, 2);
		b->blocks[cell] += (uint64_t)sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	free(cols);
	if (!st)
		return RD_EXIT_DB;
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the status of the timeline");
}

/* The series' names, from the process's last snapshot (its tables hold
** every entry the process made). */
static int tl_names(rd_db_t *db, int64_t last, bool no_symbols, struct rd_tl_by *b)
{
	int r = rd_db_select(db, last, RD_NEED_ANY);
	if (!r) {
		r = rd_tags_load(db, &b->tags);
		b->tags_loaded = true;
	}
	b->tags.no_symbols = b->tags.no_symbols || no_symbols;
	for (int j = 0; j < b->ns && !r; j++) {
		int64_t id = b->s[j].id;
		b->s[j].name = b->kind == RD_TL_TYPE ? rd_type_label(db, &b->tags, id, &b->s[j].where)
			     : b->kind == RD_TL_CLASS ? rd_tag_name(db, &b->tags, RD_TAG_CLASS, id)
						      : rd_thread_label(db, &b->tags, id);
	}
	if (b->rest)
		b->s[b->ns].name = rd_pool_fmt(rd_db_pool(db), "%zu more %s added up", b->rest, rd_tl_kinds[b->kind]);
	return r;
}

int rd_timeline_by(rd_db_t *db, int64_t pid, const struct rd_tl_point *p, size_t n, int limit, bool no_symbols,
		   struct rd_tl_by *b)
{
	int r = tl_rank(db, pid, b, limit);
	if (!r)
		r = tl_values(db, pid, p, n, b);
	if (!r && n)
		r = tl_names(db, p[n - 1].id, no_symbols, b);
	return r;
}

void rd_timeline_by_free(struct rd_tl_by *b)
{
	if (b->tags_loaded)
		rd_tags_free(&b->tags);
	free(b->s);
	free(b->bytes);
	free(b->blocks);
	b->s = NULL;
	b->bytes = b->blocks = NULL;
	b->tags_loaded = false;
}
