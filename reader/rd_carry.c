/*
** rd_carry.c — the whole rows of a schema-3 file, whose interval snapshots
** store only the status and name rows that changed (snapshot_delta,
** meminst-snapshot(5)).
**
** Every reader reads them as before: each carried table, and snapshot
** (whose exe and cmdline a listed snapshot leaves NULL), gets a TEMP view
** of its name, which SQLite takes before the file's table, rebuilding what
** the writer left out: for each unit (the table's MEMINST_SNAPSHOT_CARRIED
** columns) the rows of the latest snapshot of the chain that has some.  A
** query names the tables as before, and `inspect sql` sees the same rows.
** A file of schema 1 or 2, or without snapshot_delta, gets no view.
**
** The SQLite extension (tools/tool_sqlite_ext.c) makes the same views when
** it is loaded, so that the sqlite3 shell sees every row too.
**
** The views are ours (the file's own views and triggers are refused before,
** rd_open.c); on SQLite before 3.35, where switching views off switched off
** TEMP views too, views are switched on again for them.
*/
#include <stdbool.h>
#include <string.h>

#ifdef RD_CARRY_EXTENSION /* built into meminst_sqlite.so: SQLite's calls through its table */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include "meminst-snapshot.h"
#include "rd_carry.h"

/* The snapshots whose rows make snapshot id's: itself, and for a listed
** one its base and the snapshots listed after it with the same base. */
#define CARRY_CHAIN                                                                                  \
	"CREATE TEMP VIEW carry_chain(carry_id, carry_member) AS SELECT id, id FROM main.snapshot "                  \
	"UNION ALL SELECT snapshot, base FROM main.snapshot_delta WHERE base < snapshot "               \
	"UNION ALL SELECT c.snapshot, d.snapshot FROM main.snapshot_delta c JOIN main.snapshot_delta d " \
	"ON d.snapshot > c.base AND d.snapshot < c.snapshot AND d.base = c.base WHERE c.base < c.snapshot;"

/* exe or cmdline of snapshot s: its own, or its chain base's. */
#define CARRY_PROC(col)                                                                                     \
	"coalesce(s." col ", (SELECT b." col " FROM main.snapshot_delta c JOIN main.snapshot b ON b.id = c.base " \
	"WHERE c.snapshot = s.id))"

/* The columns of main.TABLE, each as `fmt` makes it (%s: the name), joined
** by commas; NULL when the table is not there. */
static char *carry_columns(sqlite3 *db, const char *table, const char *fmt, const char *snapshot_as)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, 'main')", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	char *cols = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		char *col = snapshot_as && name && !strcmp(name, "snapshot") ? sqlite3_mprintf("%s", snapshot_as)
									      : sqlite3_mprintf(fmt, name ? name : "", name ? name : "");
		char *next = sqlite3_mprintf("%s%s%s", cols ? cols : "", cols ? ", " : "", col);
		sqlite3_free(col);
		sqlite3_free(cols);
		cols = next;
	}
	sqlite3_finalize(st);
	return cols;
}

static int carry_exec(sqlite3 *db, char *sql)
{
	int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	return rc;
}

/* TABLE's view: each unit's rows from the latest snapshot of the chain
** that has some (rank 1: all the rows of that snapshot's unit). */
static int carry_view(sqlite3 *db, const char *table, const char *unit)
{
	char *names = carry_columns(db, table, "\"%w\"", NULL);
	char *inner = carry_columns(db, table, "r.\"%w\" AS \"%w\"", "m.carry_id AS snapshot");
	int rc = !names ? SQLITE_OK
		: carry_exec(db, sqlite3_mprintf("CREATE TEMP VIEW \"%w\"(%s) AS SELECT %s FROM (SELECT %s, rank() "
						 "OVER (PARTITION BY m.carry_id, %s ORDER BY m.carry_member DESC) AS carry_rank "
						 "FROM temp.carry_chain m JOIN main.\"%w\" r ON r.snapshot = m.carry_member) "
						 "WHERE carry_rank = 1",
						 table, names, names, inner, unit, table));
	sqlite3_free(names);
	sqlite3_free(inner);
	return rc;
}

int rd_carry_views(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	bool carried = false;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT application_id FROM pragma_application_id) = ?1 AND "
			       "(SELECT user_version FROM pragma_user_version) >= 3 AND EXISTS (SELECT 1 FROM "
			       "main.sqlite_schema WHERE type = 'table' AND name = 'snapshot_delta') AND NOT EXISTS "
			       "(SELECT 1 FROM temp.sqlite_schema WHERE name = 'carry_chain')",
			       -1, &st, NULL) != SQLITE_OK)
		return SQLITE_OK; /* said by the checks that follow */
	sqlite3_bind_int64(st, 1, MEMINST_SNAPSHOT_APP_ID);
	carried = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (!carried)
		return SQLITE_OK;
#if defined(SQLITE_DBCONFIG_ENABLE_VIEW)
	if (sqlite3_libversion_number() < 3035000)
		sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 1, NULL);
#endif
	static const char *const carried_tables[] = {MEMINST_SNAPSHOT_CARRIED};
	int rc = sqlite3_exec(db, CARRY_CHAIN, NULL, NULL, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof carried_tables / sizeof carried_tables[0]; i += 2)
		rc = carry_view(db, carried_tables[i], carried_tables[i + 1]);
	char *names = rc == SQLITE_OK ? carry_columns(db, "snapshot", "\"%w\"", NULL) : NULL;
	char *cols = names ? carry_columns(db, "snapshot", "s.\"%w\"", NULL) : NULL;
	if (cols) { /* exe and cmdline from the base when NULL */
		char *exe = strstr(cols, "s.\"exe\""), *cmd;
		char *with = exe ? sqlite3_mprintf("%.*s" CARRY_PROC("exe") "%s", (int)(exe - cols), cols, exe + 7) : NULL;
		cmd = with ? strstr(with, "s.\"cmdline\"") : NULL;
		char *both = cmd ? sqlite3_mprintf("%.*s" CARRY_PROC("cmdline") "%s", (int)(cmd - with), with, cmd + 11)
				 : NULL;
		rc = both ? carry_exec(db, sqlite3_mprintf("CREATE TEMP VIEW snapshot(%s) AS SELECT %s FROM main.snapshot s",
							   names, both))
			  : SQLITE_CORRUPT;
		sqlite3_free(with);
		sqlite3_free(both);
	}
	sqlite3_free(names);
	sqlite3_free(cols);
	return rc;
}
