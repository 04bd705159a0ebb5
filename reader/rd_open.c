/*
** rd_open.c — the one way a reader opens an SQLite file: snapshot
** databases (rd_db.c), sessions, profiles and the probes that tell them
** apart.
**
** The file is opened read-only, never created, with views and triggers
** switched off and the schema not trusted, so that a hostile file cannot
** make a read run code or loop; a relative name gets "./" so that SQLite
** never reads it as ":memory:" or a URI.  rd_sqlite_open then checks the
** schema: meminst writes tables and their indexes only, so a view, a
** trigger or a virtual table is a file meminst did not write (a
** "snapshot" that is an endless recursive view hung `inspect analyse`).
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RD_BUSY_MS 5000

sqlite3 *rd_sqlite_connect(const char *path)
{
	char *name = rd_xmalloc(strlen(path) + 3);
	strcpy(name, path[0] == '/' ? "" : "./");
	strcat(name, path);
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(name, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	free(name);
	if (rc != SQLITE_OK && !db)
		return NULL;
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
#endif
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
#endif
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_busy_timeout(db, RD_BUSY_MS);
	sqlite3_exec(db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
	return db;
}

/* The first schema entry meminst never writes: a view, a trigger or a
** virtual table (what it is in *kind), or NULL. */
static const char *open_foreign_entry(sqlite3 *db, const char **kind, int *rc)
{
	static char name[256];
	sqlite3_stmt *st = NULL;
	const char *r = NULL;
	*rc = sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_schema WHERE type IN ('view', 'trigger') OR "
				 "(type = 'table' AND sql LIKE 'CREATE VIRTUAL%') ORDER BY rowid LIMIT 1",
				 -1, &st, NULL);
	if (*rc == SQLITE_OK && (*rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		*kind = t && !strcmp(t, "table") ? "a virtual table" : t && !strcmp(t, "view") ? "a view" : "a trigger";
		const char *n = (const char *)sqlite3_column_text(st, 1);
		snprintf(name, sizeof name, "%s", n ? n : "");
		r = name;
		*rc = SQLITE_OK;
	} else if (*rc == SQLITE_DONE) {
		*rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return r;
}

int rd_sqlite_check(const struct rd_opts *o, const char *path, sqlite3 *db)
{
	const char *kind = NULL;
	int rc;
	const char *name = open_foreign_entry(db, &kind, &rc);
	if (name) {
		rd_errf(o->err, "inspect: %s: not a database meminst wrote ('%s' is %s; meminst writes "
			  "tables only)\n", path, name, kind);
		return RD_EXIT_DB;
	}
	if (rc != SQLITE_OK)
		return rd_sqlite_fail(o, path, db, "cannot read the schema");
	if (rd_carry_views(db) != SQLITE_OK)
		return rd_sqlite_fail(o, path, db, "cannot rebuild the rows stored as changes");
	return 0;
}

int rd_sqlite_open(const struct rd_opts *o, const char *path, sqlite3 **out)
{
	*out = rd_sqlite_connect(path);
	if (!*out) {
		rd_errf(o->err, "inspect: %s: cannot open (out of memory)\n", path);
		return RD_EXIT_DB;
	}
	int r = sqlite3_errcode(*out) != SQLITE_OK ? rd_sqlite_fail(o, path, *out, "cannot open")
						   : rd_sqlite_check(o, path, *out);
	if (r) {
		sqlite3_close(*out);
		*out = NULL;
	}
	return r;
}

/* A journal or WAL file beside path that a store left (a writer killed
** mid-store): its name, or NULL. */
static const char *open_left_journal(const char *path)
{
	static char name[4096];
	static const char *const ends[] = {"-journal", "-wal"};
	for (size_t i = 0; i < 2; i++) {
		struct stat st;
		snprintf(name, sizeof name, "%s%s", path, ends[i]);
		if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
			return name;
	}
	return NULL;
}

int rd_sqlite_interrupted(const struct rd_opts *o, const char *path)
{
	const char *journal = open_left_journal(path);
	if (!journal)
		return 0;
	rd_errf(o->err, "inspect: %s: a store was interrupted (hot journal %s); the file holds no complete "
		  "snapshot\n", path, journal);
	return RD_EXIT_DB;
}

int rd_sqlite_fail(const struct rd_opts *o, const char *path, sqlite3 *db, const char *what)
{
	int code = sqlite3_errcode(db) & 0xff;
	const char *msg = rd_sql_msg(db);
	/* A writer died mid-transaction: only a read-write open rolls back. */
	if (sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK)
		rd_errf(o->err, "inspect: %s: an interrupted write left a hot journal beside it; open it once "
			  "read-write (sqlite3 FILE 'PRAGMA quick_check') to roll that back\n", path);
	else if (code == SQLITE_CORRUPT)
		rd_errf(o->err, "inspect: %s: the database is damaged (%s)\n", path, msg);
	else if (code == SQLITE_NOTADB)
		rd_errf(o->err, "inspect: %s: not an SQLite database\n", path);
	else if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		rd_errf(o->err, "inspect: %s: %s\n", path, RD_LOCKED_MSG);
	else
		rd_errf(o->err, "inspect: %s: %s: %s\n", path, what, msg);
	return RD_EXIT_DB;
}
