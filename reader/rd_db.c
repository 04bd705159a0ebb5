/*
** rd_db.c — the one reader of snapshot databases.
**
** Opening checks, in this order, that the file exists and is a regular
** file, that SQLite can read it, that PRAGMA application_id says it is
** ours, that PRAGMA user_version is a schema this build reads, that
** PRAGMA quick_check finds it intact and that every table of the schema
** is there (as a table: views and triggers are switched off, so a hostile
** file cannot make a read run code or loop).  Each failure is one line,
** "inspect: FILE: reason", and exit status 3.
**
** The file is opened with SQLITE_OPEN_READONLY and never created: inspect
** does not write to a database, not even a journal.  Values are read
** defensively (a NULL where text is expected reads as ""), since the
** fuzzer and damaged files supply any values the column types allow.
*/
#include "rd_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meminst-snapshot.h"

struct rd_db {
	sqlite3 *db;
	char *path;
	const struct rd_opts *o;
	struct rd_pool pool;
	struct rd_snap snap;
	int64_t version; /* user_version: the schema */
};

/* Every table of the schema; the blocks are in block_chunk from schema 2
** on, in block before. */

static const char *const db_tables[] = {"meminst_meta", "snapshot", "allocator", "class", "type",
					"thread", "status", "segment", "module", "block_chunk"};

static int db_error(const struct rd_opts *o, const char *path, const char *fmt, const char *arg)
{
	char what[1024];
	snprintf(what, sizeof what, fmt, arg);
	rd_errf(o->err, "inspect: %s: %s\n", path, what);
	return RD_EXIT_DB;
}

const char *rd_db_path(const rd_db_t *db) { return db->path; }
sqlite3 *rd_db_sqlite(rd_db_t *db) { return db->db; }
const struct rd_opts *rd_db_opts(const rd_db_t *db) { return db->o; }
struct rd_pool *rd_db_pool(rd_db_t *db) { return &db->pool; }
const struct rd_snap *rd_db_snap(const rd_db_t *db) { return &db->snap; }

/* since_ns of the snapshot_since rows `where` (with ?1 = key) picks, the
** earliest; 0 for none or a file without the table. */
static int64_t rd_since_of(sqlite3 *db, const char *where, int64_t key)
{
	sqlite3_stmt *q = NULL;
	char sql[256];
	int64_t since = 0;
	snprintf(sql, sizeof sql, "SELECT min(since_ns) FROM snapshot_since WHERE %s", where);
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'snapshot_since'",
			       -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
		sqlite3_finalize(q);
		q = NULL;
		if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
			sqlite3_bind_int64(q, 1, key);
			if (sqlite3_step(q) == SQLITE_ROW)
				since = sqlite3_column_int64(q, 0);
		}
	}
	sqlite3_finalize(q);
	return since;
}

int64_t rd_since_of_pid(sqlite3 *db, int64_t pid)
{
	return rd_since_of(db, "snapshot IN (SELECT id FROM snapshot WHERE pid = ?1)", pid);
}

const char *rd_sql_msg(sqlite3 *db)
{
	static char buf[512];
	rd_text_str(db ? sqlite3_errmsg(db) : "out of memory", buf, sizeof buf, NULL);
	return buf;
}

int rd_db_fail(rd_db_t *db, const char *what)
{
	return rd_sqlite_fail(db->o, db->path, db->db, what);
}

sqlite3_stmt *rd_db_prepare(rd_db_t *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rd_db_fail(db, "not a valid snapshot database");
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

int64_t rd_db_int(rd_db_t *db, const char *sql, int64_t arg, int64_t none)
{
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	int64_t v = none;
	if (st) {
		if (sqlite3_bind_parameter_count(st) > 0)
			sqlite3_bind_int64(st, 1, arg);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

const char *rd_col_text(rd_db_t *db, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? rd_pool_str(&db->pool, (const char *)t) : "";
}

/* ------------------------------------------------------------- opening -- */

/* The file must exist, be a regular file and be readable: SQLite's own
** messages for these cases are vaguer ("unable to open database file"). */
static int db_check_file(const struct rd_opts *o, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return db_error(o, path, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return db_error(o, path, "is a directory, not a snapshot database%s", "");
	if (!S_ISREG(st.st_mode))
		return db_error(o, path, "not a regular file%s", "");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return db_error(o, path, "%s", strerror(errno));
	close(fd);
	return 0;
}

/*
** SQLite answers a reader of a file a writer holds locked with
** SQLITE_BUSY; every reading command says so in these words rather than
** taking the file for something else.
*/
static bool db_locked(const char *path)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = rd_sqlite_connect(path);
	int rc = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
	if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &st,
							  NULL)) == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

int rd_input_check(const struct rd_opts *o, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return db_error(o, path, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return db_error(o, path, "not a regular file (a directory)%s", "");
	if (!S_ISREG(st.st_mode))
		return db_error(o, path, "not a regular file%s", "");
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return db_error(o, path, "%s", strerror(errno));
	char head[16];
	bool sqlite = read(fd, head, sizeof head) == sizeof head && !memcmp(head, "SQLite format 3", 16);
	close(fd);
	if (sqlite && db_locked(path))
		return db_error(o, path, "%s", RD_LOCKED_MSG);
	return 0;
}

/* One integer from a PRAGMA or query; -1 on error (reported). */
static int db_int(rd_db_t *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return rd_db_fail(db, "cannot read it");
	return 0;
}

static int db_check_id(rd_db_t *db)
{
	int64_t app, ver;
	if (db_int(db, "PRAGMA application_id", &app) || db_int(db, "PRAGMA user_version", &ver))
		return RD_EXIT_DB;
	if ((uint32_t)app != MEMINST_SNAPSHOT_APP_ID) {
		if (rd_sqlite_interrupted(db->o, db->path))
			return RD_EXIT_DB;
		struct stat st;
		if (app == 0 && stat(db->path, &st) == 0 && st.st_size == 0) {
			/* what a process stopped during its first store leaves */
			rd_errf(db->o->err, "inspect: %s: an empty file: no snapshot was stored in it "
				"(a process that was writing its first one stopped, or it is still writing)\n",
				db->path);
			return RD_EXIT_DB;
		}
		rd_errf(db->o->err, "inspect: %s: not a meminst snapshot database "
			"(application_id 0x%08x, expected 0x%08x)\n", db->path,
			(unsigned)app, (unsigned)MEMINST_SNAPSHOT_APP_ID);
		return RD_EXIT_DB;
	}
	if (ver > MEMINST_SNAPSHOT_VERSION || ver < MEMINST_SNAPSHOT_MIN_READABLE) {
		rd_errf(db->o->err, "inspect: %s: %s (schema %lld, this inspect reads %d up to %d)\n",
			db->path, ver > MEMINST_SNAPSHOT_VERSION ? "written by a newer meminst"
								 : "schema version not readable",
			(long long)ver, MEMINST_SNAPSHOT_MIN_READABLE, MEMINST_SNAPSHOT_VERSION);
		return RD_EXIT_DB;
	}
	db->version = ver;
	return 0;
}

/* quick_check's report on one line, without its "*** in database main ***"
** banner. */
static const char *db_one_line(rd_db_t *db, const char *res)
{
	if (!res)
		return "?";
	const char *banner = "*** in database main ***";
	if (strncmp(res, banner, strlen(banner)) == 0)
		res += strlen(banner);
	char *s = (char *)rd_pool_str(&db->pool, res + strspn(res, " \n"));
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return s;
}

static int db_quick_check(rd_db_t *db)
{
	sqlite3_stmt *st = rd_db_prepare(db, "PRAGMA quick_check(1)");
	if (!st)
		return RD_EXIT_DB;
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rd_db_fail(db, "integrity check failed");
	}
	const char *res = (const char *)sqlite3_column_text(st, 0);
	int r = 0;
	if (!res || strcmp(res, "ok") != 0)
		r = db_error(db->o, db->path, "the database is damaged (%s)", db_one_line(db, res));
	sqlite3_finalize(st);
	return r;
}

static int db_check_tables(rd_db_t *db)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
	if (!st)
		return RD_EXIT_DB;
	int r = 0;
	for (size_t i = 0; i < sizeof db_tables / sizeof db_tables[0] && !r; i++) {
		const char *name = i == 9 && db->version < 2 ? "block" : db_tables[i];
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			r = db_error(db->o, db->path, "not a valid snapshot database (no table '%s')", name);
		else if (rc != SQLITE_ROW)
			r = rd_db_fail(db, "cannot read the schema");
	}
	sqlite3_finalize(st);
	return r;
}

static int db_connect(rd_db_t *db)
{
	db->db = rd_sqlite_connect(db->path);
	if (!db->db)
		return db_error(db->o, db->path, "%s", "cannot open");
	return sqlite3_errcode(db->db) != SQLITE_OK ? rd_db_fail(db, "cannot open") : 0;
}

int rd_db_open(const char *path, const struct rd_opts *o, rd_db_t **out)
{
	*out = NULL;
	int r = db_check_file(o, path);
	if (r)
		return r;
	rd_db_t *db = rd_xcalloc(1, sizeof *db);
	db->path = rd_xstrdup(path);
	db->o = o;
	r = db_connect(db);
	if (!r)
		r = db_check_id(db);
	if (!r)
		r = db_quick_check(db);
	if (!r)
		r = rd_sqlite_check(db->o, db->path, db->db);
	if (!r)
		r = db_check_tables(db);
	if (!r)
		r = rd_check_figures(db);
	if (r) {
		rd_db_close(db);
		return r;
	}
	*out = db;
	return 0;
}

void rd_db_close(rd_db_t *db)
{
	if (!db)
		return;
	sqlite3_close(db->db);
	rd_pool_free(&db->pool);
	free(db->path);
	free(db);
}

/* ----------------------------------------------------------- snapshots -- */

/* A status snapshot stores no blocks (its blocks and bytes columns are 0):
** its live blocks and bytes are the total's current figures.  `snap`: the
** snapshot's number, ?1 when the query picks one (a view of a schema-3
** file, rd_carry.c, is then rebuilt for that snapshot only). */
#define DB_SNAP_STATUS_TOTAL(col, snap)                                                  \
	"coalesce((SELECT " col " FROM status WHERE snapshot = " snap " AND kind = 'total' " \
	"AND id = 0), 0)"
#define DB_SNAP_COLS_OF(snap)                                                        \
	"id, content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, " \
	"time_ns, elapsed_ns, pause_ns, seq, "                                        \
	"CASE WHEN content = 'status' THEN " DB_SNAP_STATUS_TOTAL("blocks_current", snap) " ELSE blocks END, " \
	"CASE WHEN content = 'status' THEN " DB_SNAP_STATUS_TOTAL("sizes_current", snap) " ELSE bytes END"
#define DB_SNAP_COLS DB_SNAP_COLS_OF("snapshot.id")

/* A snapshot row no writer makes (a number of another type, a negative
** count, a header no mode has): the figures from it would be wrong
** without a word.  Returns what is wrong, or NULL. */
static const char *db_snap_damage(sqlite3_stmt *st, const struct rd_snap *s)
{
	static const int cols[] = {0, 3, 4, 9, 10, 11, 12, 13, 14, 15};
	static const char *const names[] = {"id", "", "", "pid", "ppid", "", "", "", "", "header_size",
					    "time_ns", "elapsed_ns", "pause_ns", "seq", "blocks", "bytes"};
	static char why[64];
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		if (sqlite3_column_type(st, cols[i]) != SQLITE_INTEGER) {
			snprintf(why, sizeof why, "%s is not an integer", names[cols[i]]);
			return why;
		}
	if (s->header_size < 0 || s->header_size > 4096)
		return "header_size out of range";
	if (s->pid <= 0 || s->ppid < 0)
		return "pid out of range";
	if (s->blocks < 0 || s->bytes < 0)
		return "negative blocks or bytes";
	if (s->time_ns < 0 || s->elapsed_ns < 0 || s->pause_ns < 0)
		return "negative time";
	return NULL;
}

static int db_snap_damaged(rd_db_t *db, const struct rd_snap *s, const char *why)
{
	rd_errf(db->o->err, "inspect: %s: snapshot %lld is damaged (%s)\n", db->path, (long long)s->id, why);
	return RD_EXIT_DB;
}

static void db_snap_row(rd_db_t *db, sqlite3_stmt *st, struct rd_snap *s)
{
	s->id = sqlite3_column_int64(st, 0);
	s->content = rd_col_text(db, st, 1);
	s->trigger = rd_col_text(db, st, 2);
	s->pid = sqlite3_column_int64(st, 3);
	s->ppid = sqlite3_column_int64(st, 4);
	s->exe = rd_col_text(db, st, 5);
	s->cmdline = rd_col_text(db, st, 6);
	s->mode = rd_col_text(db, st, 7);
	s->backend = rd_col_text(db, st, 8);
	s->header_size = sqlite3_column_int64(st, 9);
	s->time_ns = sqlite3_column_int64(st, 10);
	s->elapsed_ns = sqlite3_column_int64(st, 11);
	s->pause_ns = sqlite3_column_int64(st, 12);
	s->seq = sqlite3_column_int64(st, 13);
	s->blocks = sqlite3_column_int64(st, 14);
	s->bytes = sqlite3_column_int64(st, 15);
	s->since_ns = rd_since_of(db->db, "snapshot = ?1", s->id);
}

/* "the file has 3 snapshots, 1 to 3" for the not-found messages. */
static void db_what_is_there(rd_db_t *db, char *buf, size_t len)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT count(*), min(id), max(id) FROM snapshot");
	snprintf(buf, len, "the file has no snapshot");
	if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		snprintf(buf, len, "the file has %lld snapshot%s, numbered %lld to %lld",
			 (long long)sqlite3_column_int64(st, 0),
			 sqlite3_column_int64(st, 0) == 1 ? "" : "s",
			 (long long)sqlite3_column_int64(st, 1), (long long)sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
}

static int db_not_found(rd_db_t *db, int64_t want, enum rd_need need)
{
	char there[128];
	db_what_is_there(db, there, sizeof there);
	if (want)
		rd_errf(db->o->err, "inspect: %s: no snapshot %lld (%s)\n", db->path, (long long)want, there);
	else if (need == RD_NEED_MAP)
		rd_errf(db->o->err, "inspect: %s: no map snapshot (%s, none of them a block map)\n",
			db->path, there);
	else if (need == RD_NEED_STATUS)
		rd_errf(db->o->err, "inspect: %s: no snapshot with status counters (%s)\n", db->path, there);
	else
		rd_errf(db->o->err, "inspect: %s: %s\n", db->path, there);
	return RD_EXIT_NOTFOUND;
}

int rd_db_select(rd_db_t *db, int64_t want, enum rd_need need)
{
	sqlite3_stmt *st = rd_db_prepare(db, want ? "SELECT " DB_SNAP_COLS_OF("?1") " FROM snapshot WHERE id = ?1"
		: "SELECT " DB_SNAP_COLS " FROM snapshot WHERE ?2 = 0 OR (?2 = 1 AND content = 'map') OR "
		  "(?2 = 2 AND EXISTS (SELECT 1 FROM status WHERE status.snapshot = snapshot.id)) "
		  "ORDER BY id DESC LIMIT 1");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, want);
	sqlite3_bind_int(st, 2, (int)need);
	int rc = sqlite3_step(st);
	const char *damage = NULL;
	if (rc == SQLITE_ROW) {
		db_snap_row(db, st, &db->snap);
		damage = db_snap_damage(st, &db->snap);
	}
	sqlite3_finalize(st);
	if (damage)
		return db_snap_damaged(db, &db->snap, damage);
	if (rc == SQLITE_DONE)
		return db_not_found(db, want, need);
	if (rc != SQLITE_ROW)
		return rd_db_fail(db, "cannot read the snapshot table");
	if (need == RD_NEED_MAP && strcmp(db->snap.content, "map") != 0) {
		rd_errf(db->o->err, "inspect: %s: snapshot %lld holds '%s' only, not a block map\n",
			db->path, (long long)db->snap.id, db->snap.content);
		return RD_EXIT_NOTFOUND;
	}
	return 0;
}

int rd_db_exit_map(rd_db_t *db, int64_t pid, int64_t *out)
{
	sqlite3_stmt *st = rd_db_prepare(
		db, "SELECT max(id) FROM snapshot WHERE trigger = 'exit' AND content = 'map' AND (?1 = 0 OR pid = ?1)");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return rd_db_fail(db, "cannot read the snapshot table");
	if (*out)
		return 0;
	rd_errf(db->o->err, "inspect: %s: no exit snapshot with a block map%s (MEMINST=mim,snapshot=… or "
		"meminst --mim store one unless --snapshot-at leaves exit out)\n", db->path,
		pid ? " of that process" : "");
	return RD_EXIT_NOTFOUND;
}

int rd_db_previous_map(rd_db_t *db, int64_t before, int64_t *out)
{
	sqlite3_stmt *st = rd_db_prepare(
		db, "SELECT max(id) FROM snapshot WHERE id < ?1 AND content = 'map'");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, before);
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rd_db_fail(db, "cannot read the snapshot table");
}

int rd_db_list(rd_db_t *db, struct rd_snap **out, size_t *n)
{
	struct rd_vec v;
	rd_vec_init(&v, sizeof(struct rd_snap));
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT " DB_SNAP_COLS " FROM snapshot ORDER BY id");
	if (!st)
		return RD_EXIT_DB;
	int rc;
	const char *damage = NULL;
	while (!damage && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rd_snap *s = rd_vec_push(&v);
		db_snap_row(db, st, s);
		damage = db_snap_damage(st, s);
	}
	sqlite3_finalize(st);
	*out = v.v;
	*n = v.n;
	if (damage || rc != SQLITE_DONE) {
		int r = damage ? db_snap_damaged(db, (struct rd_snap *)v.v + v.n - 1, damage)
			       : rd_db_fail(db, "cannot read the snapshot table");
		rd_vec_free(&v);
		*out = NULL;
		return r;
	}
	return 0;
}

/* By start as an unsigned address: SQLite's integers are signed, so a
** mapping of the top half ([vsyscall], 0xffffffffff600000) is stored
** negative and goes last, where the kernel lists it; every cursor and
** binary search over the segments takes them sorted. */
#define SEG_ORDER "start < 0, start"

/* The columns a segment is read with, figures or not. */
#define SEG_COLS "start, end, offset, perms, path"
#define SEG_FIG_COLS SEG_COLS ", rss, pss, private, shared, swap, anon_huge"

/* Snapshot ?1's segment rows where some snapshots hold only the changes
** (segment_delta, meminst-snapshot(5)): from the latest snapshot of the
** process with rows (n) back to the latest one with them all (f), the
** latest row at each start, less the mappings gone (end = start). */
#define SEG_CHAIN(cols)                                                                                     \
	"WITH n(id) AS (SELECT " RD_SQL_SNAP_WITH("segment") "), "                                        \
	"f(id) AS (SELECT s.id FROM snapshot s, n WHERE s.id <= n.id AND s.pid = (SELECT pid FROM snapshot "  \
	"WHERE id = ?1) AND EXISTS (SELECT 1 FROM segment g WHERE g.snapshot = s.id) AND s.id NOT IN "        \
	"(SELECT snapshot FROM segment_delta) ORDER BY s.id DESC LIMIT 1), "                                   \
	"c(id) AS (SELECT s.id FROM snapshot s, n, f WHERE s.id BETWEEN f.id AND n.id AND s.pid = "           \
	"(SELECT pid FROM snapshot WHERE id = ?1)) "                                                           \
	"SELECT " cols " FROM (SELECT g.*, row_number() OVER (PARTITION BY g.start ORDER BY g.snapshot DESC) " \
	"AS latest FROM segment g WHERE g.snapshot IN c) WHERE latest = 1 AND end != start ORDER BY " SEG_ORDER

int rd_db_segments_of(rd_db_t *db, int64_t snap, struct rd_seg **out, size_t *n)
{
	struct rd_vec v;
	rd_vec_init(&v, sizeof(struct rd_seg));
	/* the kernel's figures: columns of files from after them; the changes
	** only: files from after segment_delta (meminst-snapshot.h) */
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT (SELECT count(*) FROM pragma_table_info('segment') WHERE name = "
					     "'rss'), (SELECT count(*) FROM sqlite_schema WHERE name = 'segment_delta')");
	bool ok = st && sqlite3_step(st) == SQLITE_ROW;
	bool figs = ok && sqlite3_column_int64(st, 0) > 0, delta = ok && sqlite3_column_int64(st, 1) > 0;
	sqlite3_finalize(st);
	static const char *const sql[2][2] = {
	    {"SELECT " SEG_COLS " FROM segment WHERE snapshot = " RD_SQL_SNAP_WITH("segment") " ORDER BY " SEG_ORDER,
	     "SELECT " SEG_FIG_COLS " FROM segment WHERE snapshot = " RD_SQL_SNAP_WITH("segment") " ORDER BY " SEG_ORDER},
	    {SEG_CHAIN(SEG_COLS), SEG_CHAIN(SEG_FIG_COLS)}};
	st = rd_db_prepare(db, sql[delta][figs]);
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rd_seg *s = rd_vec_push(&v);
		s->start = (uint64_t)sqlite3_column_int64(st, 0);
		s->end = (uint64_t)sqlite3_column_int64(st, 1);
		s->offset = (uint64_t)sqlite3_column_int64(st, 2);
		s->perms = rd_col_text(db, st, 3);
		s->path = rd_col_text(db, st, 4);
		for (int f = 0; f < RD_SEG_FIGS; f++)
			s->fig[f] = figs && sqlite3_column_type(st, 5 + f) == SQLITE_INTEGER ? sqlite3_column_int64(st, 5 + f)
											       : -1;
	}
	sqlite3_finalize(st);
	*out = v.v;
	*n = v.n;
	if (rc != SQLITE_DONE) {
		rd_vec_free(&v);
		*out = NULL;
		return rd_db_fail(db, "cannot read the segment table");
	}
	return 0;
}

int rd_db_segments(rd_db_t *db, struct rd_seg **out, size_t *n)
{
	return rd_db_segments_of(db, db->snap.id, out, n);
}

/* -------------------------------------------------------------- blocks -- */

/* The types of class f->class_, sorted, for a --class filter. */
static int blocks_class_types(rd_blocks_t *it)
{
	struct rd_vec v;
	rd_vec_init(&v, sizeof(int64_t));
	sqlite3_stmt *st = rd_db_prepare(it->db, "SELECT id FROM type WHERE snapshot = ?1 AND class = ?2 "
						   "ORDER BY id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, it->db->snap.id);
	sqlite3_bind_int64(st, 2, it->f.class_);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*(int64_t *)rd_vec_push(&v) = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	it->class_types = v.v;
	it->nclass_types = v.n;
	return rc == SQLITE_DONE ? 0 : rd_db_fail(it->db, "cannot read the type table");
}

/*
** The one way to the blocks.  Schema 2: the block_chunk rows in address
** order, each decoded by rd_chunk.c a block at a time (memory does not
** grow with the snapshot).  Schema 1: the block rows.  The filters are
** applied here, on the decoded numbers, the same way for both.
*/
int rd_blocks_open(rd_db_t *db, const struct rd_filter_ids *f, rd_blocks_t *it)
{
	memset(it, 0, sizeof *it);
	it->db = db;
	it->chunked = db->version >= 2;
	if (f)
		it->f = *f;
	if (it->f.has_class && blocks_class_types(it))
		return RD_EXIT_DB;
	it->st = rd_db_prepare(db, it->chunked
		? "SELECT first, count, data FROM block_chunk WHERE snapshot = ?1 ORDER BY first"
		: "SELECT addr, size, type, thread, allocator, seq FROM block WHERE snapshot = ?1 ORDER BY addr");
	if (!it->st) {
		rd_blocks_close(it);
		return RD_EXIT_DB;
	}
	sqlite3_bind_int64(it->st, 1, db->snap.id);
	return 0;
}

static int blocks_damaged(rd_blocks_t *it, const char *why)
{
	rd_errf(it->db->o->err, "inspect: %s: snapshot %lld: the block chunk at 0x%llx is damaged (%s)\n",
		it->db->path, (long long)it->db->snap.id, (unsigned long long)it->chunk_first, why);
	return RD_EXIT_DB;
}

/*
** A block no process can have (a size over MEMINST_SNAPSHOT_SIZE_MAX, say
** -1 read as 16 EiB; a block past the end of the address space; one that
** overlaps the block before it) is damage, reported with the block, not a
** figure to add up: 0 holes or 16 EiB would be wrong answers.
*/
static int blocks_check(rd_blocks_t *it, const struct rd_block *b)
{
	const char *why = NULL;
	if (b->size > MEMINST_SNAPSHOT_SIZE_MAX)
		why = "an impossible size";
	else if (b->addr + b->size < b->addr)
		why = "it runs past the end of the address space";
	else if (b->addr < it->end)
		why = "it overlaps the block before it";
	it->end = b->addr + b->size;
	if (!why)
		return 1;
	rd_errf(it->db->o->err, "inspect: %s: snapshot %lld: the block at 0x%llx of size %llu is damaged (%s)\n",
		it->db->path, (long long)it->db->snap.id, (unsigned long long)b->addr,
		(unsigned long long)b->size, why);
	return RD_EXIT_DB;
}

/* The next block, unfiltered: 1, 0 at the end, or an exit status. */
static int blocks_step(rd_blocks_t *it, struct rd_block *b)
{
	for (;;) {
		if (it->in_chunk) {
			struct meminst_snapshot_block d;
			const char *why = NULL;
			int r = rd_chunk_next(&it->chunk, &d, &why);
			if (r < 0)
				return blocks_damaged(it, why);
			if (r > 0) {
				*b = (struct rd_block){d.addr, d.size, (int64_t)d.type, (int64_t)d.thread,
							 (int64_t)d.allocator, (int64_t)d.seq};
				return blocks_check(it, b);
			}
			it->in_chunk = false;
		}
		int rc = sqlite3_step(it->st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return rd_db_fail(it->db, it->chunked ? "cannot read the block_chunk table"
								: "cannot read the block table");
		if (!it->chunked) {
			*b = (struct rd_block){(uint64_t)sqlite3_column_int64(it->st, 0),
						 (uint64_t)sqlite3_column_int64(it->st, 1),
						 sqlite3_column_int64(it->st, 2), sqlite3_column_int64(it->st, 3),
						 sqlite3_column_int64(it->st, 4), sqlite3_column_int64(it->st, 5)};
			return blocks_check(it, b);
		}
		it->chunk_first = sqlite3_column_int64(it->st, 0);
		const void *data = sqlite3_column_blob(it->st, 2);
		const char *why = rd_chunk_start(&it->chunk, it->chunk_first, sqlite3_column_int64(it->st, 1),
						   data, (size_t)sqlite3_column_bytes(it->st, 2));
		if (why)
			return blocks_damaged(it, why);
		it->in_chunk = true;
	}
}

static int blocks_cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static bool blocks_pass(const rd_blocks_t *it, const struct rd_block *b)
{
	const struct rd_filter_ids *f = &it->f;
	return (!f->has_type || b->type == f->type) && (!f->has_thread || b->thread == f->thread) &&
	       (!f->has_allocator || b->allocator == f->allocator) &&
	       (!f->has_class || (it->nclass_types && /* a class with no types: bsearch wants a base */
				  bsearch(&b->type, it->class_types, it->nclass_types, sizeof(int64_t),
					  blocks_cmp_id)));
}

int rd_blocks_next(rd_blocks_t *it, struct rd_block *b)
{
	int r;
	while ((r = blocks_step(it, b)) == 1 && !blocks_pass(it, b))
		;
	return r;
}

void rd_blocks_close(rd_blocks_t *it)
{
	sqlite3_finalize(it->st);
	it->st = NULL;
	free(it->class_types);
	it->class_types = NULL;
}

int rd_blocks_each(rd_db_t *db, const struct rd_opts *o, const struct rd_filter_ids *f,
		     rd_block_fn *fn, void *ctx)
{
	rd_blocks_t it;
	int r = rd_blocks_open(db, f, &it);
	if (r)
		return r;
	struct rd_progress p;
	rd_progress_start(&p, o, "reading blocks", (uint64_t)db->snap.blocks);
	struct rd_block b;
	uint64_t n = 0;
	while ((r = rd_blocks_next(&it, &b)) == 1) {
		fn(ctx, &b);
		rd_progress_step(&p, ++n);
	}
	rd_progress_end(&p);
	rd_blocks_close(&it);
	return r;
}

int rd_db_main_pid(rd_db_t *db, int64_t given, int64_t *pid)
{
	if (given) {
		*pid = given;
		return 0;
	}
	static const char *const ask[] = {
	    "SELECT pid FROM session_run WHERE pid IN (SELECT pid FROM snapshot)",
	    "SELECT pid FROM snapshot GROUP BY pid ORDER BY count(*) DESC, min(id) LIMIT 1"};
	for (int i = 0; i < 2; i++) {
		if (i == 0) { /* a plain snapshot file has no session_run */
			sqlite3_stmt *probe = rd_db_prepare(db, "SELECT count(*) FROM sqlite_schema "
							      "WHERE type = 'table' AND name = 'session_run'");
			bool has = probe && sqlite3_step(probe) == SQLITE_ROW && sqlite3_column_int(probe, 0);
			sqlite3_finalize(probe);
			if (!has)
				continue;
		}
		sqlite3_stmt *st = rd_db_prepare(db, ask[i]);
		if (!st)
			return RD_EXIT_DB;
		int found = sqlite3_step(st) == SQLITE_ROW;
		if (found)
			*pid = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (found)
			return 0;
	}
	return RD_EXIT_NOTFOUND;
}
