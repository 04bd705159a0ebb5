/*
** rd_leak.c — reading a snapshot's leak check (meminst-snapshot.h:
** leak_check, one row per checked snapshot, and leak_block, the class of
** each block that is not still reachable).  Files from before the leak
** check have neither table: they hold no checked snapshot.
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

static bool leak_tables(rd_db_t *db)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT count(*) FROM sqlite_master WHERE name IN "
					       "('leak_check', 'leak_block')");
	bool there = st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 2;
	sqlite3_finalize(st);
	return there;
}

int rd_leak_latest(rd_db_t *db, int64_t *snap)
{
	*snap = 0;
	if (!leak_tables(db))
		return 0;
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT coalesce(max(snapshot), 0) FROM leak_check");
	if (!st)
		return RD_EXIT_DB;
	if (sqlite3_step(st) == SQLITE_ROW)
		*snap = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int leak_row(rd_db_t *db, struct rd_leak_check *c)
{
	sqlite3_stmt *st = rd_db_prepare(
		db, "SELECT definite_bytes, definite_blocks, indirect_bytes, indirect_blocks, possible_bytes,"
		    " possible_blocks, reachable_bytes, reachable_blocks, scanned_bytes, threads,"
		    " threads_unstopped, scan_ns FROM leak_check WHERE snapshot = ?");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		static const int order[] = {RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE,
					    RD_LEAK_REACHABLE};
		for (int i = 0; i < 4; i++) {
			c->bytes[order[i]] = (uint64_t)sqlite3_column_int64(st, 2 * i);
			c->blocks[order[i]] = (uint64_t)sqlite3_column_int64(st, 2 * i + 1);
		}
		c->scanned_bytes = (uint64_t)sqlite3_column_int64(st, 8);
		c->threads = sqlite3_column_int64(st, 9);
		c->threads_unstopped = sqlite3_column_int64(st, 10);
		c->scan_ns = sqlite3_column_int64(st, 11);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? RD_EXIT_NOTFOUND : rd_db_fail(db, "cannot read the leak check");
}

/* Each block's class, from leak_block, in address order. */
static int leak_blocks(rd_db_t *db, struct rd_leak_check *c)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT addr, class FROM leak_block WHERE snapshot = ? ORDER BY addr");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cls = sqlite3_column_int64(st, 1);
		if (cls < RD_LEAK_DEFINITE || cls > RD_LEAK_POSSIBLE) {
			sqlite3_finalize(st);
			fprintf(rd_db_opts(db)->err, "inspect: %s: leak_block: class %lld is none of 1..3 (damaged)\n",
				rd_db_path(db), (long long)cls);
			return RD_EXIT_DB;
		}
		if (c->n == cap) {
			cap = cap ? 2 * cap : 256;
			c->addr = rd_xrealloc(c->addr, cap * sizeof *c->addr);
			c->cls = rd_xrealloc(c->cls, cap);
		}
		c->addr[c->n] = (uint64_t)sqlite3_column_int64(st, 0);
		c->cls[c->n++] = (unsigned char)cls;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read leak_block");
}

int rd_leak_load(rd_db_t *db, struct rd_leak_check *c)
{
	memset(c, 0, sizeof *c);
	int r = leak_tables(db) ? leak_row(db, c) : RD_EXIT_NOTFOUND;
	if (r == RD_EXIT_NOTFOUND)
		fprintf(rd_db_opts(db)->err,
			"inspect: %s: snapshot %lld has no leak check (mis mode, leak_check=off, or a snapshot "
			"other than the exit one without leak_check=on)\n",
			rd_db_path(db), (long long)rd_db_snap(db)->id);
	return r ? r : leak_blocks(db, c);
}

int rd_leak_class(const struct rd_leak_check *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->addr[lo] == addr ? c->cls[lo] : RD_LEAK_REACHABLE;
}

void rd_leak_free(struct rd_leak_check *c)
{
	free(c->addr);
	free(c->cls);
	memset(c, 0, sizeof *c);
}
