/*
** snap_sqconfig.c — a program that configures SQLite for itself, as the
** sqlite3 shell and embedded programs do, and uses it, for
** tests/integration/snap_sqconfig.sh.
**
** Usage: snap_sqconfig DIR
**
** Before its first SQLite call it sets SQLITE_CONFIG_SINGLETHREAD, its
** own malloc methods (SQLITE_CONFIG_MALLOC, counting calls), a log
** callback whose argument is a wrapper of a FILE on main's stack (the
** shell's shape: a log line after main returned would go through a dead
** frame), and sqlite3_temp_directory (DIR); it prints what each returned.
** Then it fills a table in DIR/own.db (20,000 rows, in a large page cache
** so that the heap climbs past a few MiB and comes down: peaks), reads it
** back with a temporary table, and prints the figures and how many log
** lines it received.  It returns from main with status 0.
**
** Every call of its malloc methods and of its log callback that is not the
** program's own (made outside its SQLite calls, from another thread, or
** after main returned) is said on stderr, as one line
** "snap_sqconfig: foreign …", at once, with write(2): the test greps for
** them.  With meminst storing through this process's libsqlite3, its stores
** called these methods and this callback.
*/
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_t main_thread;
static atomic_int inside;    /* main is inside one of its SQLite calls */
static atomic_long own_calls; /* malloc-method calls of its own */

static void say_foreign(const char *what, const char *detail)
{
	char line[400];
	int n = snprintf(line, sizeof line, "snap_sqconfig: foreign %s%s%s\n", what, detail ? ": " : "",
			 detail ? detail : "");
	if (n > (int)sizeof line - 1)
		n = sizeof line - 1;
	if (write(2, line, (size_t)n) < 0) {
		/* stderr closed: nothing to say it with */
	}
}

/* The program's own call, or a foreign one (said). */
static void count_call(const char *what)
{
	if (atomic_load(&inside) && pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&own_calls, 1);
	else
		say_foreign(what, NULL);
}

static void *m_malloc(int n)
{
	count_call("xMalloc");
	return malloc((size_t)n);
}

static void m_free(void *p)
{
	count_call("xFree");
	free(p);
}

static void *m_realloc(void *p, int n)
{
	count_call("xRealloc");
	return realloc(p, (size_t)n);
}

static int m_size(void *p)
{
	return p ? (int)malloc_usable_size(p) : 0;
}

static int m_roundup(int n)
{
	return (n + 7) & ~7;
}

static int m_init(void *arg)
{
	(void)arg;
	return SQLITE_OK;
}

static void m_shutdown(void *arg)
{
	(void)arg;
}

/* The shell's ShellState, in short: the log's FILE, on main's stack. */
struct log_wrapper {
	FILE *out;
	int lines;
};

static void on_log(void *arg, int code, const char *msg)
{
	if (!atomic_load(&inside) || !pthread_equal(pthread_self(), main_thread)) {
		say_foreign("log line", msg); /* arg may point into a dead frame */
		return;
	}
	struct log_wrapper *w = arg;
	w->lines++;
	fprintf(w->out, "log (%d) %s\n", code, msg);
}

static int exec_print(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("prepare failed: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++)
			printf("%s%s", i ? " " : "", (const char *)sqlite3_column_text(st, i));
		printf("\n");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int use_sqlite(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/own.db", dir);
	unlink(path);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		printf("open failed\n");
		return -1;
	}
	int rc = sqlite3_exec(db,
			      "PRAGMA cache_size=-65536; PRAGMA temp_store=FILE;"
			      "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, val REAL);"
			      "BEGIN;"
			      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)"
			      "  INSERT INTO t SELECT i, printf('row %06d %s', i, hex(randomblob(60))), i * 0.5 FROM n;"
			      "COMMIT;"
			      "CREATE TEMP TABLE g AS SELECT id % 7 AS k, count(*) AS c, sum(val) AS s FROM t GROUP BY 1;",
			      NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		printf("exec failed: %s\n", sqlite3_errmsg(db));
	else
		rc = exec_print(db, "SELECT count(*), sum(val), min(substr(name, 1, 10)) FROM t") |
		     exec_print(db, "SELECT k, c, s FROM g ORDER BY k");
	sqlite3_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: snap_sqconfig DIR\n");
		return 2;
	}
	main_thread = pthread_self();
	static const sqlite3_mem_methods mem = {m_malloc, m_free,  m_realloc,  m_size,
						m_roundup, m_init, m_shutdown, NULL};
	struct log_wrapper log = {stdout, 0};
	atomic_store(&inside, 1);
	printf("config singlethread %d\n", sqlite3_config(SQLITE_CONFIG_SINGLETHREAD));
	printf("config malloc %d\n", sqlite3_config(SQLITE_CONFIG_MALLOC, &mem));
	printf("config log %d\n", sqlite3_config(SQLITE_CONFIG_LOG, on_log, &log));
	printf("initialize %d\n", sqlite3_initialize());
	sqlite3_temp_directory = sqlite3_mprintf("%s", argv[1]);
	int rc = use_sqlite(argv[1]);
	atomic_store(&inside, 0);
	printf("log lines %d, own malloc calls %s\n", log.lines, atomic_load(&own_calls) > 0 ? "some" : "none");
	/* blocks that come and go outside SQLite: more peaks */
	for (int round = 0; round < 3; round++) {
		void *b[64];
		for (int i = 0; i < 64; i++)
			memset(b[i] = malloc(65536), round, 65536);
		for (int i = 0; i < 64; i++)
			free(b[i]);
	}
	return rc == 0 ? 0 : 1;
}
