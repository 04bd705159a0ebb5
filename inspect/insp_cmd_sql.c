/*
** insp_cmd_sql.c — `inspect sql DB QUERY`: the user's own SQL on a
** snapshot database, read-only, with the meminst_blocks() table of the
** SQLite extension (tool_sqlite_ext.c) registered, so that the blocks of a
** schema 2 file are a table again.  Rows print as the sqlite3 shell's
** list mode does: values separated by '|', NULL as nothing, text with its
** controls as \xNN (rd_text_str).
**
** The query is a way to read, never to write or to reach past the file:
** the file is opened read-only and never created (rd_db_open); only a
** statement that writes nothing is run (sqlite3_stmt_readonly: no VACUUM
** INTO, no temporary table); the authorizer refuses ATTACH and DETACH,
** a pragma that sets or does something, and fts3_tokenizer (its one-argument
** form hands out a code address); extension loading stays off; and the
** query stops after --time-limit of CPU time (a progress handler) or when
** SQLite's heap would pass --memory-limit (sqlite3_hard_heap_limit64).
** Each is one line and exit status 3.
*/
#include "insp_int.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

#include <sqlite3ext.h>

int sqlite3_meminstsqlite_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

enum { SQL_O_TIME = RD_ID_OWN, SQL_O_MEMORY };

#define SQL_TIME_LIMIT_NS (10 * 1000000000LL)
#define SQL_MEMORY_LIMIT (1ULL << 30)

static const struct rd_option sql_options[] = {
	{"time-limit", 0, RD_OT_DURATION, "DURATION", "stop the query after this much CPU time\n"
	 "(default 10s; 0: no limit)", SQL_O_TIME, 0, 0, NULL},
	{"memory-limit", 0, RD_OT_SIZE, "SIZE", "stop the query when SQLite would hold more\n"
	 "memory than SIZE (default 1G; 0: no limit)", SQL_O_MEMORY, 0, 0, NULL},
	RD_OPTION_END,
};

static const struct rd_cmd_spec sql_spec = {
	"sql", "[options] DB QUERY",
	"Run one SQL statement on DB (opened read-only) and print its rows, the\n"
	"values separated by '|'.  The blocks of a snapshot are the table-valued\n"
	"function meminst_blocks(SNAPSHOT) with the columns addr, size, type,\n"
	"thread, allocator and seq; the other tables are described in\n"
	"meminst-snapshot(5), with worked queries.  Only statements that read\n"
	"are run: no ATTACH, no VACUUM INTO, no pragma that sets something.\n"
	"Example:\n"
	"  inspect sql app.db \"SELECT count(*), sum(size) FROM meminst_blocks(1)\"\n",
	sql_options, 2, 2,
};

/* Pragmas that only read: asked without a value, or these with one (the
** table or index to describe). */
static const char *const sql_pragma_reads[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
	"foreign_key_list", "foreign_key_check", "integrity_check", "quick_check", "function_list",
	"pragma_list", "module_list", "collation_list", "database_list", NULL};
/* Pragmas that do something even when asked without a value. */
static const char *const sql_pragma_acts[] = {
	"optimize", "wal_checkpoint", "incremental_vacuum", "shrink_memory", "writable_schema", NULL};

static bool sql_word_in(const char *w, const char *const *list)
{
	for (; w && *list; list++)
		if (!sqlite3_stricmp(w, *list))
			return true;
	return false;
}

struct sql_guard {
	const char *refused; /* what the authorizer refused, for the message */
	char what[128];
	int64_t cpu_end;     /* CPU time (ns) past which the query stops; 0: none */
	bool timed_out;
};

static int sql_authorize(void *ctx, int action, const char *a, const char *b, const char *db, const char *trig)
{
	struct sql_guard *g = ctx;
	const char *why = NULL;
	if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
		why = action == SQLITE_ATTACH ? "ATTACH" : "DETACH";
	else if (action == SQLITE_PRAGMA && (b ? !sql_word_in(a, sql_pragma_reads) : sql_word_in(a, sql_pragma_acts)))
		why = "a pragma that sets or does something";
	else if (action == SQLITE_FUNCTION && b && (!sqlite3_stricmp(b, "fts3_tokenizer") ||
						  !sqlite3_stricmp(b, "load_extension")))
		why = "a function that hands out addresses or loads code";
	if (!why)
		return SQLITE_OK;
	if (!g->refused) {
		g->refused = why;
		snprintf(g->what, sizeof g->what, "%s%s%s", why, action == SQLITE_PRAGMA || action == SQLITE_FUNCTION
								     ? ": " : "",
			 action == SQLITE_PRAGMA ? a : action == SQLITE_FUNCTION ? b : "");
	}
	return SQLITE_DENY;
}

static int64_t sql_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int sql_progress(void *ctx)
{
	struct sql_guard *g = ctx;
	if (g->cpu_end && sql_cpu_ns() > g->cpu_end)
		g->timed_out = true;
	return g->timed_out;
}

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
		rd_text_put(out, (const char *)sqlite3_column_text(st, col));
	}
}

/* The query's failure: a limit or a refusal said as such, else SQLite's
** message on one line. */
static int sql_failed(const struct rd_opts *o, const char *path, sqlite3 *h, const struct sql_guard *g,
		      int64_t time_ns, uint64_t memory)
{
	int rc = sqlite3_errcode(h) & 0xff;
	if (g->timed_out)
		rd_errf(o->err, "inspect: sql: the query took more than %.3g s of CPU time (--time-limit)\n",
			  (double)time_ns / 1e9);
	else if (g->refused)
		rd_errf(o->err, "inspect: sql: refused (%s; inspect sql only reads the file)\n", g->what);
	else if (rc == SQLITE_NOMEM && memory)
		rd_errf(o->err, "inspect: sql: the query needs more than %llu MiB of memory (--memory-limit)\n",
			  (unsigned long long)(memory >> 20));
	else
		rd_errf(o->err, "inspect: %s: %s\n", path, rd_sql_msg(h));
	return RD_EXIT_DB;
}

static int sql_refuse_write(const struct rd_opts *o)
{
	rd_errf(o->err, "inspect: sql: refused (a statement that writes; inspect sql only reads the file)\n");
	return RD_EXIT_DB;
}

static int sql_run(const struct rd_opts *o, const char *path, const char *query, sqlite3 *h,
		   struct sql_guard *g, int64_t time_ns, uint64_t memory)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int r = 0, rc = sqlite3_prepare_v2(h, query, -1, &st, &tail);
	if (rc != SQLITE_OK && (g->refused || g->timed_out || (rc & 0xff) == SQLITE_NOMEM))
		r = sql_failed(o, path, h, g, time_ns, memory);
	else if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_ERROR)
		r = rd_sqlite_fail(o, path, h, "cannot read it"); /* the file, not the query */
	else if (rc != SQLITE_OK && strstr(sqlite3_errmsg(h), "because it is a view"))
		r = sql_refuse_write(o); /* a table of a schema-3 file is a view of ours (rd_carry.c) */
	else if (rc != SQLITE_OK || !st) {
		rd_errf(o->err, "inspect: sql: %s\n", st || rc != SQLITE_OK ? rd_sql_msg(h) : "the query is empty");
		r = RD_EXIT_USAGE;
	} else if (tail[strspn(tail, " \t\r\n;")]) {
		rd_errf(o->err, "inspect: sql: one statement at a time (more after \"%.*s\")\n",
			  (int)(tail - query), query);
		r = RD_EXIT_USAGE;
	} else if (!sqlite3_stmt_readonly(st)) {
		r = sql_refuse_write(o);
	} else {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++) {
				if (c)
					fputc('|', o->out);
				sql_value(o->out, st, c);
			}
			fputc('\n', o->out);
		}
		if (rc != SQLITE_DONE)
			r = sql_failed(o, path, h, g, time_ns, memory);
	}
	sqlite3_finalize(st);
	return r;
}

int insp_cmd_sql(int argc, char **argv, const struct rd_opts *o)
{
	int64_t time_ns = SQL_TIME_LIMIT_NS;
	uint64_t memory = SQL_MEMORY_LIMIT;
	struct rd_getopt go;
	rd_getopt_init(&go, &sql_spec, argc, argv, o);
	int r;
	while ((r = rd_getopt(&go)) == RD_OPTION) {
		if (go.opt->id == SQL_O_TIME)
			time_ns = go.num;
		else if (go.opt->id == SQL_O_MEMORY)
			memory = go.size;
	}
	if (r != RD_CONTINUE)
		return r;
	rd_db_t *db;
	if ((r = rd_db_open(go.pos[0], o, &db)))
		return r;
	sqlite3 *h = rd_db_sqlite(db);
	struct sql_guard g = {.cpu_end = time_ns ? sql_cpu_ns() + time_ns : 0};
	if (sqlite3_meminstsqlite_init(h, NULL, NULL) != SQLITE_OK) {
		r = rd_db_fail(db, "cannot register meminst_blocks");
	} else {
		sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
		sqlite3_set_authorizer(h, sql_authorize, &g);
		sqlite3_progress_handler(h, 10000, sql_progress, &g);
		sqlite3_hard_heap_limit64(memory ? (sqlite3_int64)memory : 0);
		r = sql_run(o, go.pos[0], go.pos[1], h, &g, time_ns, memory);
		sqlite3_hard_heap_limit64(0);
	}
	rd_db_close(db);
	return r;
}
