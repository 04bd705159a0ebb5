/*
** rd_strace.c — trace files kept in a session database.
**
** `meminst` stores each process's trace file whole, in pieces, in the
** session's session_trace table (pid, seq, data; see meminst(1)).  The
** trace reader takes a stdio stream, so a stored trace is handed to it as
** one: fopencookie over the pieces in seq order, read one row at a time,
** so memory stays at one piece (1 MiB) whatever the trace's size.
** A process that exec'd has a trace of each program it ran (its images,
** numbered in the order they ran): the one read has the most samples, else
** ran longest (strace_image), or is the one --image asked for.
** Also here: the check of a session's run row, which report and html print.
*/
#include "rd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "meminst-snapshot.h"

struct strace {
	sqlite3 *db;
	sqlite3_stmt *st;
	const unsigned char *piece;
	size_t len, pos;
	off64_t at;      /* bytes handed out so far */
	bool done;
};

static ssize_t strace_read(void *cookie, char *buf, size_t size)
{
	struct strace *s = cookie;
	size_t got = 0;
	while (got < size && !s->done) {
		if (s->pos == s->len) {
			if (sqlite3_step(s->st) != SQLITE_ROW) {
				s->done = true;
				break;
			}
			s->piece = sqlite3_column_blob(s->st, 0);
			s->len = (size_t)sqlite3_column_bytes(s->st, 0);
			s->pos = 0;
			continue;
		}
		size_t n = s->len - s->pos < size - got ? s->len - s->pos : size - got;
		if (buf)
			memcpy(buf + got, s->piece + s->pos, n);
		s->pos += n;
		got += n;
	}
	s->at += (off64_t)got;
	return (ssize_t)got;
}

/* The reader seeks once, past the file header; stdio may seek back into
** what it buffered.  Forward: read and drop; backward: start over. */
static int strace_seek(void *cookie, off64_t *off, int whence)
{
	struct strace *s = cookie;
	off64_t to = whence == SEEK_SET ? *off : whence == SEEK_CUR ? s->at + *off : -1;
	if (to < 0) {
		errno = EINVAL;
		return -1;
	}
	if (to < s->at) {
		sqlite3_reset(s->st);
		s->at = 0;
		s->len = s->pos = 0;
		s->done = false;
	}
	while (s->at < to && strace_read(s, NULL, (size_t)(to - s->at)) > 0)
		;
	*off = s->at;
	return s->at == to ? 0 : -1;
}

static int strace_close(void *cookie)
{
	struct strace *s = cookie;
	sqlite3_finalize(s->st);
	sqlite3_close(s->db);
	free(s);
	return 0;
}

/* One integer from a query on db (its parameter, if any, bound to arg), or
** `dflt` when there is no row or it is NULL. */
static int64_t strace_int(sqlite3 *db, const char *sql, int64_t arg, int64_t dflt)
{
	sqlite3_stmt *st = NULL;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, arg);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

/*
** The image of pid to read: of a process that ran several programs (it
** exec'd; session_image), the one with the most samples, else the one
** that ran longest, the later of equals (the program a shell's fork child
** became, not the copy of the shell that called exec).  -1 for a session
** made before images (no such column).  (SQLite puts NULL last in DESC.)
*/
static int64_t strace_image(sqlite3 *db, int64_t pid)
{
	if (!strace_int(db, "SELECT count(*) FROM pragma_table_info('session_trace') WHERE name = 'image'", 0, 0))
		return -1;
	return strace_int(db, "SELECT image FROM session_trace t WHERE pid = ?1 GROUP BY image ORDER BY "
			      "(SELECT sample_bytes FROM session_image i WHERE i.pid = ?1 AND i.image = t.image) DESC, "
			      "(SELECT end_ns - start_ns FROM session_image i WHERE i.pid = ?1 AND i.image = t.image) "
			      "DESC, image DESC LIMIT 1", pid, 0);
}

/* The same with two parameters, ?1 and ?2 (one not in sql is left). */
static int64_t strace_int2(sqlite3 *db, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, a);
		if (sqlite3_bind_parameter_count(st) > 1)
			sqlite3_bind_int64(st, 2, b);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

static int64_t strace_wanted = -1; /* --image N, -1: not given */
static struct rd_strace_read strace_last; /* for the line on the other images */

int64_t rd_strace_want_image(int64_t image)
{
	int64_t was = strace_wanted;
	strace_wanted = image;
	return was;
}

int64_t rd_strace_wanted(void)
{
	return strace_wanted;
}

struct rd_strace_read rd_strace_last(void)
{
	return strace_last;
}

/* How many images pid has: 1 in a session made before images. */
static int64_t strace_images(sqlite3 *db, int64_t pid)
{
	return strace_int(db, "SELECT count(*) FROM pragma_table_info('session_trace') WHERE name = 'image'", 0, 0)
		       ? strace_int(db, "SELECT count(DISTINCT image) FROM session_trace WHERE pid = ?", pid, 0)
		       : 1;
}

/* The image --image asked for, if pid has it; else -2 after one line. */
static int64_t strace_wanted_image(sqlite3 *db, const char *path, const struct rd_opts *o, int64_t pid)
{
	int64_t n = strace_images(db, pid);
	if (n == 0) /* no trace: said as before */
		return -1;
	if (strace_wanted < n)
		return n > 1 ? strace_wanted : -1; /* one image: the whole of it, as before images */
	rd_errf(o->err, "inspect: %s: process %lld ran %lld program%s: --image %lld is not one of them (0 to %lld)\n",
		path, (long long)pid, (long long)n, n == 1 ? "" : "s", (long long)strace_wanted, (long long)n - 1);
	return -2;
}

int rd_is_session(const char *path)
{
	sqlite3 *db = NULL;
	int yes = 0;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a FIFO would block SQLite's open */
		return 0;
	if ((db = rd_sqlite_connect(path)) && sqlite3_errcode(db) == SQLITE_OK)
		yes = strace_int(db, "PRAGMA application_id", 0, 0) == MEMINST_SNAPSHOT_APP_ID &&
		      strace_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
				     "name IN ('session_run', 'session_trace')", 0, 0) == 2;
	sqlite3_close(db);
	return yes;
}

FILE *rd_strace_open(const char *path, const struct rd_opts *o, int64_t *pid, uint64_t *size,
		       int *code)
{
	struct strace *s = rd_xcalloc(1, sizeof *s);
	*code = RD_EXIT_DB;
	if (rd_sqlite_open(o, path, &s->db))
		goto fail;
	if (!*pid) /* the program's first process, else the first traced one */
		*pid = strace_int(s->db, "SELECT pid FROM session_run WHERE pid IN "
					 "(SELECT pid FROM session_trace)", 0, 0);
	if (!*pid)
		*pid = strace_int(s->db, "SELECT min(pid) FROM session_trace", 0, 0);
	int64_t image = !*pid ? -1 : strace_wanted >= 0 ? strace_wanted_image(s->db, path, o, *pid)
							: strace_image(s->db, *pid);
	if (image == -2) {
		strace_last = (struct rd_strace_read){*pid, -1, 0, true};
		*code = RD_EXIT_NOTFOUND;
		goto fail;
	}
	const char *where = image < 0 ? "pid = ?1" : "pid = ?1 AND image = ?2";
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT sum(length(data)) FROM session_trace WHERE %s", where);
	*size = (uint64_t)strace_int2(s->db, sql, *pid, image);
	if (*pid && !*size && strace_int(s->db, "SELECT count(*) FROM session_trace", 0, 0) &&
	    strace_int(s->db, "SELECT count(*) FROM session_process WHERE pid = ?", *pid, 0)) {
		rd_errf(o->err, "inspect: %s: no trace of process %lld in this session (it recorded no event "
			"before it ended; inspect report lists the processes)\n", path, (long long)*pid);
		*code = RD_EXIT_NOTFOUND;
		goto fail;
	}
	if (*pid && !*size && strace_int(s->db, "SELECT count(*) FROM session_trace", 0, 0)) {
		/* traces of other processes: not a run without tracing */
		rd_errf(o->err, "inspect: %s: no process %lld in this session (inspect report lists the "
			"processes)\n", path, (long long)*pid);
		*code = RD_EXIT_NOTFOUND;
		goto fail;
	}
	if (!*pid || !*size) {
		rd_errf(o->err, "inspect: %s: no trace%s in this session (run meminst with --trace or "
			"--sample)\n", path, *pid ? " of that process" : "");
		*code = RD_EXIT_NOTFOUND;
		goto fail;
	}
	snprintf(sql, sizeof sql, "SELECT data FROM session_trace WHERE %s ORDER BY seq", where);
	if (sqlite3_prepare_v2(s->db, sql, -1, &s->st, NULL) != SQLITE_OK) {
		rd_errf(o->err, "inspect: %s: %s\n", path, rd_sql_msg(s->db));
		goto fail;
	}
	sqlite3_bind_int64(s->st, 1, *pid);
	if (image >= 0)
		sqlite3_bind_int64(s->st, 2, image);
	FILE *f = fopencookie(s, "r", (cookie_io_functions_t){.read = strace_read, .seek = strace_seek,
							     .close = strace_close});
	if (f) {
		strace_last = (struct rd_strace_read){*pid, image, strace_images(s->db, *pid), false};
		return f;
	}
	rd_errf(o->err, "inspect: %s: cannot read the stored trace\n", path);
fail:
	strace_close(s);
	return NULL;
}

/* A run row (session_run) no meminst writes: printed as it is, it would be
** wrong without a word (a duration of -5 ns, an exit code 'abc' shown as
** 0, signal 999).  Names the first bad column. */
int rd_session_run_check(rd_db_t *db)
{
	static const char sql[] =
		"SELECT CASE WHEN (SELECT count(*) FROM session_run) <> 1 THEN 'not one run row' ELSE "
		"(SELECT CASE "
		"WHEN typeof(pid) <> 'integer' OR pid <= 0 THEN 'pid' "
		"WHEN typeof(start_ns) <> 'integer' OR typeof(duration_ns) <> 'integer' OR duration_ns < 0 "
		"THEN 'duration_ns' "
		"WHEN (exit_code IS NULL) = (exit_signal IS NULL) THEN 'exit_code and exit_signal' "
		"WHEN exit_code IS NOT NULL AND (typeof(exit_code) <> 'integer' OR exit_code NOT BETWEEN 0 AND 255) "
		"THEN 'exit_code' "
		"WHEN exit_signal IS NOT NULL AND (typeof(exit_signal) <> 'integer' OR exit_signal NOT BETWEEN 1 AND 64) "
		"THEN 'exit_signal' "
		"WHEN coalesce(mode, '') NOT IN ('off', 'mis', 'mim') THEN 'mode' "
		"WHEN coalesce(backend, '') NOT IN ('system', 'jemalloc') THEN 'backend' "
		"WHEN trace_clock IS NOT NULL AND trace_clock NOT IN ('wall', 'cpu') THEN 'trace_clock' "
		"WHEN sample_hz IS NOT NULL AND (typeof(sample_hz) <> 'integer' OR sample_hz NOT BETWEEN 1 AND 10000) "
		"THEN 'sample_hz' "
		"WHEN alloc_sample IS NOT NULL AND (typeof(alloc_sample) <> 'integer' OR alloc_sample <= 0) "
		"THEN 'alloc_sample' "
		"WHEN interval_ns IS NOT NULL AND (typeof(interval_ns) <> 'integer' OR interval_ns < 0) "
		"THEN 'interval_ns' END FROM session_run) END";
	static char why[64];
	sqlite3_stmt *st = NULL;
	const char *r = "its columns";
	if (sqlite3_prepare_v2(rd_db_sqlite(db), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		r = NULL;
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			snprintf(why, sizeof why, "%s", (const char *)sqlite3_column_text(st, 0));
			r = why;
		}
	}
	sqlite3_finalize(st);
	if (!r)
		return 0;
	rd_errf(rd_db_opts(db)->err, "inspect: %s: the session's run is damaged (%s)\n", rd_db_path(db), r);
	return RD_EXIT_DB;
}
