/*
** fx.h — building snapshot databases for the inspect tests, the fuzzer's
** seeds and the fake control server: the schema from <meminst-snapshot.h>,
** the identification pragmas (which a test may set wrong on purpose) and
** rows from SQL fixture files (the .sql files in tests/inspect/fixtures).
*/
#ifndef FX_H
#define FX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fx_opts {
	int64_t app_id;        /* PRAGMA application_id                 */
	int64_t user_version;  /* PRAGMA user_version                   */
	bool no_schema;        /* leave the tables out                  */
	int page_size;         /* 0: SQLite's default                   */
};

/* The right identification and the schema. */
#define FX_OPTS_DEFAULT {MEMINST_SNAPSHOT_APP_ID, MEMINST_SNAPSHOT_VERSION, false, 0}

/* Create (or replace) the database at path and run each SQL file on it,
** in one transaction.  Returns 0, or -1 with a message in err. */
int fx_create(const char *path, const struct fx_opts *o, const char *const *sql_files, int n,
	      char *err, size_t errlen);

/* Blocks one row each, as the fixtures give them (schema 1's columns): a
** temporary table that fx_encode_blocks turns into block_chunk rows. */
#define FX_TEMP_BLOCK_TABLE                                                              \
	"CREATE TEMP TABLE block(snapshot INTEGER NOT NULL, addr INTEGER NOT NULL, "     \
	"size INTEGER NOT NULL, type INTEGER NOT NULL, thread INTEGER NOT NULL, "        \
	"allocator INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(snapshot, addr))"

struct sqlite3;
/* The rows of table block into block_chunk (encoded as libmeminst does, in
** chunks of MEMINST_SNAPSHOT_CHUNK in address order), then drop it. */
int fx_encode_blocks(struct sqlite3 *db, char *err, size_t errlen);

/* Run SQL text on an existing database file (which must exist). */
int fx_exec(const char *path, const char *sql, char *err, size_t errlen);

#endif /* FX_H */
