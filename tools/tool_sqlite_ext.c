/*
** tool_sqlite_ext.c — the SQLite extension that reads the blocks of a
** snapshot database as a table, for the sqlite3 shell or any program:
**
**   .load /usr/local/lib/meminst/meminst_sqlite
**   SELECT addr, size, type, thread, allocator, seq FROM meminst_blocks(1);
**
** meminst_blocks(SNAPSHOT [, SCHEMA]) is an eponymous virtual table (a
** table-valued function): the blocks of snapshot SNAPSHOT (all snapshots
** when left out; the hidden column `snapshot` says which) of the database
** SCHEMA ('main' by default, or the name of an ATTACHed file), in address
** order.  Schema 2 files (user_version 2) are decoded chunk by chunk with
** rd_chunk.c, the decoder inspect uses; schema 1 files are read from
** their block table.  A damaged chunk ends the query with an error naming
** it.  Loaded on a schema-3 file, it also gives the status and name
** tables every row (reader/rd_carry.c's TEMP views, as inspect reads them).
**
** Built twice: as the loadable module (libtool -module) installed in
** $(pkglibdir), and into inspect with SQLITE_CORE defined, where
** `inspect sql` registers it on its own connection.
*/
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "rd_carry.h"
#include "rd_chunk.h"

enum { COL_ADDR, COL_SIZE, COL_TYPE, COL_THREAD, COL_ALLOCATOR, COL_SEQ, COL_SNAPSHOT, COL_SCHEMA };

typedef struct {
	sqlite3_vtab base;
	sqlite3 *db;
} mb_vtab;

typedef struct {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *st;
	bool chunked, in_chunk, eof;
	struct rd_chunk chunk;
	int64_t snapshot, first;
	struct meminst_snapshot_block b;
	sqlite3_int64 rowid;
} mb_cursor;

static int mb_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
		      char **err)
{
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(addr INTEGER, size INTEGER, type INTEGER, "
					  "thread INTEGER, allocator INTEGER, seq INTEGER, "
					  "snapshot INTEGER HIDDEN, schema TEXT HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	mb_vtab *v = sqlite3_malloc(sizeof *v);
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof *v);
	v->db = db;
	*out = &v->base;
	return SQLITE_OK;
}

static int mb_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

/* idxNum bit 1: snapshot given (argv[0]), bit 2: schema given (next). */
static int mb_best_index(sqlite3_vtab *v, sqlite3_index_info *ix)
{
	int snap = -1, schema = -1;
	for (int i = 0; i < ix->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (c->iColumn == COL_SCHEMA && !c->usable)
			return SQLITE_CONSTRAINT;
		if (!c->usable)
			continue;
		if (c->iColumn == COL_SNAPSHOT)
			snap = i;
		else if (c->iColumn == COL_SCHEMA)
			schema = i;
	}
	int n = 0;
	ix->idxNum = 0;
	if (snap >= 0) {
		ix->aConstraintUsage[snap].argvIndex = ++n;
		ix->aConstraintUsage[snap].omit = 1;
		ix->idxNum |= 1;
	}
	if (schema >= 0) {
		ix->aConstraintUsage[schema].argvIndex = ++n;
		ix->aConstraintUsage[schema].omit = 1;
		ix->idxNum |= 2;
	}
	if (ix->nOrderBy == 1 && ix->aOrderBy[0].iColumn == COL_ADDR && !ix->aOrderBy[0].desc && snap >= 0)
		ix->orderByConsumed = 1;
	ix->estimatedCost = snap >= 0 ? 1e4 : 1e6;
	return SQLITE_OK;
}

static int mb_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	mb_cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	*out = &c->base;
	return SQLITE_OK;
}

static int mb_close(sqlite3_vtab_cursor *cur)
{
	mb_cursor *c = (mb_cursor *)cur;
	sqlite3_finalize(c->st);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int mb_error(mb_cursor *c, const char *fmt, const char *a, const char *b)
{
	sqlite3_vtab *v = c->base.pVtab;
	sqlite3_free(v->zErrMsg);
	v->zErrMsg = sqlite3_mprintf(fmt, a, b);
	return SQLITE_ERROR;
}

/* The next block into c->b, or c->eof. */
static int mb_step(mb_cursor *c)
{
	for (;;) {
		if (c->in_chunk) {
			const char *why = NULL;
			int r = rd_chunk_next(&c->chunk, &c->b, &why);
			if (r > 0)
				return SQLITE_OK;
			if (r < 0) {
				char at[64];
				sqlite3_snprintf(sizeof at, at, "%lld: the block chunk at 0x%llx",
						 (long long)c->snapshot, (unsigned long long)c->first);
				return mb_error(c, "meminst_blocks: snapshot %s is damaged (%s)", at, why);
			}
			c->in_chunk = false;
		}
		int rc = sqlite3_step(c->st);
		if (rc == SQLITE_DONE) {
			c->eof = true;
			return SQLITE_OK;
		}
		if (rc != SQLITE_ROW)
			return mb_error(c, "meminst_blocks: %s%s", sqlite3_errmsg(((mb_vtab *)c->base.pVtab)->db), "");
		c->snapshot = sqlite3_column_int64(c->st, 0);
		if (!c->chunked) {
			c->b = (struct meminst_snapshot_block){
				(uint64_t)sqlite3_column_int64(c->st, 1), (uint64_t)sqlite3_column_int64(c->st, 2),
				(uint64_t)sqlite3_column_int64(c->st, 3), (uint64_t)sqlite3_column_int64(c->st, 4),
				(uint64_t)sqlite3_column_int64(c->st, 5), (uint64_t)sqlite3_column_int64(c->st, 6)};
			return SQLITE_OK;
		}
		c->first = sqlite3_column_int64(c->st, 1);
		const void *data = sqlite3_column_blob(c->st, 3);
		const char *why = rd_chunk_start(&c->chunk, c->first, sqlite3_column_int64(c->st, 2), data,
						   (size_t)sqlite3_column_bytes(c->st, 3));
		if (why) {
			char at[64];
			sqlite3_snprintf(sizeof at, at, "%lld: the block chunk at 0x%llx", (long long)c->snapshot,
					 (unsigned long long)c->first);
			return mb_error(c, "meminst_blocks: snapshot %s is damaged (%s)", at, why);
		}
		c->in_chunk = true;
	}
}

/* Schema 2 (PRAGMA user_version) has block_chunk, schema 1 block. */
static int mb_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc, sqlite3_value **argv)
{
	mb_cursor *c = (mb_cursor *)cur;
	sqlite3 *db = ((mb_vtab *)cur->pVtab)->db;
	const char *schema = "main";
	if (idx & 2) {
		const unsigned char *t = sqlite3_value_text(argv[(idx & 1) ? 1 : 0]);
		schema = t ? (const char *)t : "main";
	}
	sqlite3_finalize(c->st);
	c->st = NULL;
	c->in_chunk = c->eof = false;
	c->rowid = 0;
	char *sql = sqlite3_mprintf("PRAGMA \"%w\".user_version", schema);
	sqlite3_stmt *probe = NULL;
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &probe, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(probe);
		return mb_error(c, "meminst_blocks: no database '%s'%s", schema, "");
	}
	c->chunked = sqlite3_step(probe) == SQLITE_ROW && sqlite3_column_int(probe, 0) >= 2;
	sqlite3_finalize(probe);
	const char *where = (idx & 1) ? " WHERE snapshot = ?1" : "";
	sql = c->chunked ? sqlite3_mprintf("SELECT snapshot, first, count, data FROM \"%w\".block_chunk%s "
					   "ORDER BY snapshot, first", schema, where)
			 : sqlite3_mprintf("SELECT snapshot, addr, size, type, thread, allocator, seq FROM "
					   "\"%w\".block%s ORDER BY snapshot, addr", schema, where);
	rc = sql ? sqlite3_prepare_v2(db, sql, -1, &c->st, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return mb_error(c, "meminst_blocks: '%s' is not a meminst snapshot database (%s)", schema,
				sqlite3_errmsg(db));
	if (idx & 1)
		sqlite3_bind_value(c->st, 1, argv[0]);
	return mb_step(c);
}

static int mb_next(sqlite3_vtab_cursor *cur)
{
	mb_cursor *c = (mb_cursor *)cur;
	c->rowid++;
	return mb_step(c);
}

static int mb_eof(sqlite3_vtab_cursor *cur)
{
	return ((mb_cursor *)cur)->eof;
}

static int mb_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	mb_cursor *c = (mb_cursor *)cur;
	const uint64_t v[] = {c->b.addr, c->b.size, c->b.type, c->b.thread, c->b.allocator, c->b.seq};
	if (col < COL_SNAPSHOT)
		sqlite3_result_int64(ctx, (sqlite3_int64)v[col]);
	else if (col == COL_SNAPSHOT)
		sqlite3_result_int64(ctx, c->snapshot);
	else
		sqlite3_result_null(ctx);
	return SQLITE_OK;
}

static int mb_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((mb_cursor *)cur)->rowid;
	return SQLITE_OK;
}

static sqlite3_module mb_module = {
	.xConnect = mb_connect,
	.xBestIndex = mb_best_index,
	.xDisconnect = mb_disconnect,
	.xOpen = mb_open,
	.xClose = mb_close,
	.xFilter = mb_filter,
	.xNext = mb_next,
	.xEof = mb_eof,
	.xColumn = mb_column,
	.xRowid = mb_rowid,
};

/* The entry point .load finds from the file name meminst_sqlite.so. */
#ifndef SQLITE_CORE
__attribute__((visibility("default")))
#endif
int sqlite3_meminstsqlite_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	SQLITE_EXTENSION_INIT2(api);
	int rc = sqlite3_create_module(db, "meminst_blocks", &mb_module, NULL);
	/* a schema-3 file's rows left out as unchanged, rebuilt (as inspect does) */
	return rc == SQLITE_OK ? rd_carry_views(db) : rc;
}
