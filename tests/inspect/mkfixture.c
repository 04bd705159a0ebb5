/*
** mkfixture.c — make a snapshot database for the shell tests:
**
**   mkfixture [--app-id N] [--user-version N] [--no-schema] [--page-size N]
**             OUT.db [FIXTURE.sql ...]
**   mkfixture --exec SQL OUT.db      (run SQL on an existing database)
**   mkfixture --hot OUT.db           (die in the middle of a write to an
**                                     existing database, leaving a hot
**                                     journal, as a crashed writer does)
**
** Without options the database is a valid one of the current schema; the
** options make it wrong on purpose for the bad-input tests.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "meminst-snapshot.h"
#include "fx.h"

/* A transaction big enough to spill to the file, then _exit: SQLite leaves
** OUT.db-journal hot, to be rolled back by the next read-write open. */
static int hot(const char *path)
{
	sqlite3 *db;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return 1;
	sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN", NULL, NULL, NULL);
	for (int i = 0; i < 2000; i++) {
		char sql[128];
		snprintf(sql, sizeof sql, "INSERT INTO block_chunk VALUES (99, %d, 1, zeroblob(64))", i);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	_exit(0);
}

static int usage(void)
{
	fputs("usage: mkfixture [--app-id N] [--user-version N] [--no-schema] [--page-size N] "
	      "OUT.db [FIXTURE.sql ...]\n       mkfixture --exec SQL OUT.db\n"
	      "       mkfixture --hot OUT.db\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	const char *exec = NULL;
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--no-schema") == 0)
			o.no_schema = true;
		else if (strcmp(argv[i], "--hot") == 0 && i + 1 < argc)
			return hot(argv[i + 1]);
		else if (i + 1 >= argc)
			return usage();
		else if (strcmp(argv[i], "--app-id") == 0)
			o.app_id = strtoll(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--user-version") == 0)
			o.user_version = strtoll(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--page-size") == 0)
			o.page_size = atoi(argv[++i]);
		else if (strcmp(argv[i], "--exec") == 0)
			exec = argv[++i];
		else
			return usage();
	}
	if (i >= argc)
		return usage();
	char err[512];
	int r = exec ? fx_exec(argv[i], exec, err, sizeof err)
		     : fx_create(argv[i], &o, (const char *const *)argv + i + 1, argc - i - 1, err, sizeof err);
	if (r) {
		fprintf(stderr, "mkfixture: %s\n", err);
		return 1;
	}
	return 0;
}
