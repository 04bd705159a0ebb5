/*
** rd_check.c — the stored figures of a snapshot database checked once,
** when rd_db_open opens it, before any command prints one.
**
** SQLite's column types are affinities: a status row of a crafted file
** may hold text, -5, 1e300 or NULL where meminst writes a count, and a
** table made without its primary key may hold one id twice.  Printed,
** these are wrong figures with exit status 0.  Each table below is checked
** in one statement (a scan of a small table: the blocks, the large one,
** are checked block by block as they are decoded, in rd_db.c): the first
** bad row is one line naming the file, the table, the row and the column,
** and exit status 3, as damage elsewhere.
*/
#include "rd_int.h"

#include <string.h>

/* A column and what it must hold. */
enum check_kind {
	CK_INT,       /* an integer, not NULL                     */
	CK_COUNT,     /* an integer from 0 on, not NULL            */
	CK_TEXT,      /* text, not NULL                           */
	CK_INT_NULL,  /* an integer or NULL                       */
	CK_TEXT_NULL, /* text or NULL                             */
};

struct check_col {
	const char *name;
	enum check_kind kind;
};

struct check_table {
	const char *name;
	const char *key;               /* the columns naming a row, and unique */
	struct check_col cols[10];
};

static const struct check_table check_tables[] = {
	{"snapshot", "id", {{"id", CK_COUNT}, {"content", CK_TEXT}, {"trigger", CK_TEXT}, {"exe", CK_TEXT},
			    {"cmdline", CK_TEXT}, {"mode", CK_TEXT}, {"backend", CK_TEXT}, {"seq", CK_COUNT}}},
	{"allocator", "snapshot, id", {{"snapshot", CK_INT}, {"id", CK_INT}, {"name", CK_TEXT}}},
	{"class", "snapshot, id",
	 {{"snapshot", CK_INT}, {"id", CK_INT}, {"name", CK_TEXT}, {"module", CK_TEXT_NULL}}},
	{"type", "snapshot, id",
	 {{"snapshot", CK_INT}, {"id", CK_INT}, {"name", CK_TEXT}, {"class", CK_INT}, {"site", CK_INT_NULL}}},
	{"thread", "snapshot, id", {{"snapshot", CK_INT}, {"id", CK_INT}, {"tid", CK_INT}, {"name", CK_TEXT}}},
	{"status", "snapshot, kind, id",
	 {{"snapshot", CK_INT}, {"kind", CK_TEXT}, {"id", CK_INT}, {"sizes_current", CK_COUNT},
	  {"sizes_max_since_last", CK_COUNT}, {"sizes_max_ever", CK_COUNT}, {"blocks_current", CK_COUNT},
	  {"blocks_max_since_last", CK_COUNT}, {"blocks_max_ever", CK_COUNT}}},
};

/* The SQL test that col breaks its kind, and what to say then. */
static void check_col_sql(char *sql, size_t len, const struct check_col *c)
{
	const char *n = c->name;
	char want[160];
	switch (c->kind) {
	case CK_TEXT:
	case CK_TEXT_NULL:
		snprintf(want, sizeof want, "typeof(\"%s\") <> 'text'%s", n,
			 c->kind == CK_TEXT_NULL ? " AND \"%s\" IS NOT NULL" : "");
		break;
	default:
		snprintf(want, sizeof want, "typeof(\"%s\") <> 'integer'%s", n,
			 c->kind == CK_INT_NULL ? " AND \"%s\" IS NOT NULL" : "");
	}
	char test[256];
	snprintf(test, sizeof test, want, n);
	size_t o = strlen(sql);
	snprintf(sql + o, len - o,
		 " WHEN %s THEN '%s ' || CASE WHEN \"%s\" IS NULL THEN 'is NULL' ELSE 'holds a value of type ' || "
		 "typeof(\"%s\") || ', not %s' END",
		 test, n, n, n, c->kind == CK_TEXT || c->kind == CK_TEXT_NULL ? "text" : "an integer");
	if (c->kind == CK_COUNT) {
		o = strlen(sql);
		snprintf(sql + o, len - o, " WHEN \"%s\" < 0 THEN '%s is negative (' || \"%s\" || ')'", n, n, n);
	}
}

/* The key of the current row as "snapshot 2, kind total, id 0". */
static void check_key_sql(char *sql, size_t len, const char *key)
{
	char cols[128];
	snprintf(cols, sizeof cols, "%s", key);
	size_t o = strlen(sql);
	bool first = true;
	for (char *c = strtok(cols, ", "); c; c = strtok(NULL, ", ")) {
		snprintf(sql + o, len - o, "%s'%s ' || quote(\"%s\")", first ? "" : " || ', ' || ", c, c);
		o = strlen(sql);
		first = false;
	}
}

/* One table: its first bad row, then its first key held twice.  The rows
** as stored (main.): those a schema-3 file left out are taken from these
** by the views (rd_carry.c), which would check each many times over; the
** snapshot rows as read (their exe and cmdline may be the chain base's). */
static int check_table(rd_db_t *db, const struct check_table *t)
{
	const char *schema = strcmp(t->name, "snapshot") ? "main." : "";
	char sql[4096] = "SELECT ";
	check_key_sql(sql, sizeof sql, t->key);
	size_t o = strlen(sql);
	snprintf(sql + o, sizeof sql - o, ", CASE");
	for (const struct check_col *c = t->cols; c->name; c++)
		check_col_sql(sql, sizeof sql, c);
	o = strlen(sql);
	snprintf(sql + o, sizeof sql - o,
		 " END AS bad FROM %s\"%s\" WHERE bad IS NOT NULL UNION ALL SELECT * FROM (SELECT ", schema, t->name);
	check_key_sql(sql, sizeof sql, t->key);
	o = strlen(sql);
	snprintf(sql + o, sizeof sql - o, ", 'the row is there twice' FROM %s\"%s\" GROUP BY %s HAVING count(*) > 1) "
		 "LIMIT 1", schema, t->name, t->key);
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	if (!st)
		return RD_EXIT_DB;
	int rc = sqlite3_step(st), r = 0;
	if (rc == SQLITE_ROW) {
		const unsigned char *key = sqlite3_column_text(st, 0), *bad = sqlite3_column_text(st, 1);
		rd_errf(rd_db_opts(db)->err, "inspect: %s: table %s, row (%s): %s\n", rd_db_path(db), t->name,
			  key ? (const char *)key : "?", bad ? (const char *)bad : "?");
		r = RD_EXIT_DB;
	} else if (rc != SQLITE_DONE) {
		r = rd_db_fail(db, "cannot read the tables");
	}
	sqlite3_finalize(st);
	return r;
}

int rd_check_figures(rd_db_t *db)
{
	for (size_t i = 0; i < sizeof check_tables / sizeof check_tables[0]; i++) {
		int r = check_table(db, &check_tables[i]);
		if (r)
			return r;
	}
	return 0;
}
