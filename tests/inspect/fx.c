/*
** fx.c — see fx.h.  Used by the test programs only; the databases it
** makes are what libmeminst writes as far as the schema goes, with rows
** whose figures the tests know.
*/
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "meminst-snapshot.h"
#include "fx.h"

static char *fx_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t k;
	while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n - 1 == 0) {
			char *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

static int fx_run(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

static int fx_header(sqlite3 *db, const struct fx_opts *o, char *err, size_t errlen)
{
	char sql[256];
	int r = 0;
	if (o->page_size) {
		snprintf(sql, sizeof sql, "PRAGMA page_size = %d", o->page_size);
		r = fx_run(db, sql, "page size", err, errlen);
	}
	snprintf(sql, sizeof sql, "PRAGMA application_id = %" PRId64 "; PRAGMA user_version = %" PRId64,
		 o->app_id, o->user_version);
	if (!r)
		r = fx_run(db, sql, "pragmas", err, errlen);
	if (!r && !o->no_schema)
		r = fx_run(db, MEMINST_SNAPSHOT_SCHEMA, "schema", err, errlen);
	/* The fixtures give blocks one row each, as schema 1 stored them: in a
	** temporary table for schema 2, encoded into block_chunk at the end. */
	if (!r && !o->no_schema)
		r = fx_run(db, o->user_version >= 2 ? FX_TEMP_BLOCK_TABLE : MEMINST_SNAPSHOT_V1_BLOCK_TABLE,
			   "block table", err, errlen);
	return r;
}

static int fx_put_chunk(sqlite3_stmt *put, int64_t snap, int64_t first, int n, const unsigned char *buf,
			size_t len)
{
	sqlite3_bind_int64(put, 1, snap);
	sqlite3_bind_int64(put, 2, first);
	sqlite3_bind_int(put, 3, n);
	sqlite3_bind_blob(put, 4, buf, (int)len, SQLITE_TRANSIENT);
	int rc = sqlite3_step(put);
	sqlite3_reset(put);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The block rows into block_chunk, with the encoder libmeminst uses, in
** chunks of MEMINST_SNAPSHOT_CHUNK blocks in address order, then drop them
** (a fixture may have replaced the temporary table by one of its own). */
int fx_encode_blocks(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *get = NULL, *put = NULL;
	static unsigned char buf[MEMINST_SNAPSHOT_CHUNK * MEMINST_SNAPSHOT_BLOCK_MAX_BYTES];
	int r = sqlite3_prepare_v2(db, "SELECT snapshot, addr, size, type, thread, allocator, seq FROM block "
				   "ORDER BY snapshot, addr", -1, &get, NULL) != SQLITE_OK ||
		sqlite3_prepare_v2(db, "INSERT INTO block_chunk VALUES(?, ?, ?, ?)", -1, &put, NULL) != SQLITE_OK;
	int64_t snap = 0, first = 0;
	int n = 0;
	unsigned char *p = buf;
	struct meminst_snapshot_block prev = {0};
	while (!r && sqlite3_step(get) == SQLITE_ROW) {
		struct meminst_snapshot_block b = {
			(uint64_t)sqlite3_column_int64(get, 1), (uint64_t)sqlite3_column_int64(get, 2),
			(uint64_t)sqlite3_column_int64(get, 3), (uint64_t)sqlite3_column_int64(get, 4),
			(uint64_t)sqlite3_column_int64(get, 5), (uint64_t)sqlite3_column_int64(get, 6)};
		if (n && (snap != sqlite3_column_int64(get, 0) || n == MEMINST_SNAPSHOT_CHUNK)) {
			r = fx_put_chunk(put, snap, first, n, buf, (size_t)(p - buf));
			n = 0;
		}
		if (!n) {
			snap = sqlite3_column_int64(get, 0);
			first = (int64_t)b.addr;
			prev = (struct meminst_snapshot_block){.addr = b.addr};
			p = buf;
		}
		p = meminst_snapshot_put_block(p, &prev, &b);
		n++;
	}
	if (!r && n)
		r = fx_put_chunk(put, snap, first, n, buf, (size_t)(p - buf));
	if (r)
		snprintf(err, errlen, "block chunks: %s", sqlite3_errmsg(db));
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	return r ? r : fx_run(db, "DROP TABLE block", "block chunks", err, errlen);
}

static int fx_files(sqlite3 *db, const char *const *files, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		char *sql = fx_slurp(files[i]);
		if (!sql) {
			snprintf(err, errlen, "%s: %s", files[i], strerror(errno));
			return -1;
		}
		int r = fx_run(db, sql, files[i], err, errlen);
		free(sql);
		if (r)
			return r;
	}
	return 0;
}

int fx_create(const char *path, const struct fx_opts *o, const char *const *sql_files, int n,
	      char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	int r = fx_header(db, o, err, errlen);
	if (!r)
		r = fx_run(db, "BEGIN", "begin", err, errlen);
	if (!r)
		r = fx_files(db, sql_files, n, err, errlen);
	if (!r && !o->no_schema && o->user_version >= 2)
		r = fx_encode_blocks(db, err, errlen);
	if (!r)
		r = fx_run(db, "COMMIT", "commit", err, errlen);
	sqlite3_close(db);
	return r;
}

int fx_exec(const char *path, const char *sql, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	int r = fx_run(db, sql, path, err, errlen);
	sqlite3_close(db);
	return r;
}
