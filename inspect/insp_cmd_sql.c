/*
** insp_cmd_sql.c — `inspect sql DB QUERY`: the user's own SQL on a
** snapshot database, read-only, with the meminst_blocks() table of the
** SQLite extension (meminst_sqlite.c) registered, so that the blocks of a
** schema 2 file are a table again.  Rows print as the sqlite3 shell's
** list mode does: values separated by '|', NULL as nothing.
*/
#include "insp_int.h"

#include <ctype.h>
#include <string.h>

#include <sqlite3ext.h>

int sqlite3_meminstsqlite_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

static const struct insp_cmd_spec sql_spec = {
	"sql", "DB QUERY",
	"Run one SQL statement on DB (opened read-only) and print its rows, the\n"
	"values separated by '|'.  The blocks of a snapshot are the table-valued\n"
	"function meminst_blocks(SNAPSHOT) with the columns addr, size, type,\n"
	"thread, allocator and seq; the other tables are described in\n"
	"meminst-snapshot(5), with worked queries.  Example:\n"
	"  inspect sql app.db \"SELECT count(*), sum(size) FROM meminst_blocks(1)\"\n",
	NULL, 2, 2,
};

static void sql_value(FILE *out, sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_NULL:
		break;
	case SQLITE_BLOB: {
		const unsigned char *p = sqlite3_column_blob(st, col);
		int n = sqlite3_column_bytes(st, col);
		fputs("x'", out);
		for (int i = 0; i < n; i++)
			fprintf(out, "%02x", p[i]);
		fputc('\'', out);
		break;
	}
	default:
		fputs((const char *)sqlite3_column_text(st, col), out);
	}
}

int insp_cmd_sql(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&sql_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	insp_db_t *db;
	if ((r = insp_db_open(a.pos[0], o, &db)))
		return r;
	sqlite3 *h = insp_db_sqlite(db);
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int rc;
	if (sqlite3_meminstsqlite_init(h, NULL, NULL) != SQLITE_OK) {
		r = insp_db_fail(db, "cannot register meminst_blocks");
	} else if ((rc = sqlite3_prepare_v2(h, a.pos[1], -1, &st, &tail)) != SQLITE_OK &&
		   (rc & 0xff) != SQLITE_ERROR) {
		r = insp_db_fail(db, "cannot read it"); /* the file, not the query */
	} else if (rc != SQLITE_OK || !st) {
		insp_errf(o->err, "inspect: sql: %s\n", st || rc != SQLITE_OK ? insp_sql_msg(h) : "the query is empty");
		r = INSP_EXIT_USAGE;
	} else if (tail[strspn(tail, " \t\r\n;")]) {
		insp_errf(o->err, "inspect: sql: one statement at a time (more after \"%.*s\")\n",
			(int)(tail - a.pos[1]), a.pos[1]);
		r = INSP_EXIT_USAGE;
	} else {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++) {
				if (c)
					fputc('|', o->out);
				sql_value(o->out, st, c);
			}
			fputc('\n', o->out);
		}
		if (rc != SQLITE_DONE) {
			const char *msg = insp_sql_msg(h);
			insp_errf(o->err, "inspect: %s: %s\n", a.pos[0], msg);
			r = INSP_EXIT_DB;
		}
	}
	sqlite3_finalize(st);
	insp_db_close(db);
	return r;
}
