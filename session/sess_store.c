/*
** sess_store.c — gather a run's parts into one session database.
**
** The parts directory holds, per process, `mem.PID.db` (its snapshots,
** written by libmeminst) and `trace.PID` (its trace file).  The session is
** written to a temporary file beside the output and moved into place only
** when complete, so an existing file is never half overwritten, and a
** session is never left half written under the name the user asked for.
**
** Snapshots of all processes are renumbered 1, 2, … in the order they were
** taken (their time_ns), so the session reads like one snapshot database.
** Processes of the run may outlive the program (a daemon, a child nobody
** waited for) and still be storing a snapshot: each part is settled first
** (store_settle: its writer is waited for, a store cut short by exec, exit
** or a signal is rolled back), a part whose first store never completed is
** said as such, once, and a process still running is named with what its
** data lacks.  A part that SQLite cannot read is reported and skipped: the
** other processes' data is kept.
** Trace files are stored whole, in pieces, in session_trace, so the session
** is the one file to keep; the profile part reads them from there.  A
** process that exec'd left a trace of each program it ran (trace.PID, then
** trace.PID.execN, trace_file_image; uid.N/trace.PID after a switch of
** user): each is an image of the pid, numbered 0, 1 ... in the order they
** began.
*/
#include "sess_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "meminst-session.h"
#include "meminst-snapshot.h"
#include "meminst-trace.h"

#define STORE_PIECE (1u << 20) /* bytes of trace per session_trace row */
#define STORE_WAIT_MS 10000    /* for a process still storing a snapshot */

/* The snapshot tables whose rows carry a `snapshot` column. */
static const char *const store_tables[] = {"allocator", "class", "class_load", "type", "type_frame", "thread",
					   "status", "status_event", "size_hist", "snapshot_rss", "snapshot_since",
					   "segment", "segment_delta", "snapshot_delta", "region", "module", "block_chunk", "leak_check", "leak_block", "leak_clique", "leak_cpu"};

struct store {
	sqlite3 *db;
	const char *path; /* the session, for the progress line */
	const char *dir;
	int parts;      /* snapshot parts attached so far (their number) */
	int processes;  /* rows in session_process                      */
	int snapshots;  /* rows in snapshot                             */
	int64_t trace_bytes;
	int traces_cut;   /* traces without their END record            */
	long cut_pid;     /* the first of them, and its bytes           */
	int64_t cut_bytes;
	char adopted[4096]; /* the part that became the session (store_adopt) */
};

static int store_exec(struct store *s, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		sess_error("cannot write the session: %s", msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *store_prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sess_error("cannot write the session: %s", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* The columns of part.TABLE with `snapshot` (and snapshot_delta.base) replaced by the new number. */
static char *store_columns(struct store *s, const char *table, bool for_select)
{
	char *sql = sqlite3_mprintf("PRAGMA part.table_info(%Q)", table);
	sqlite3_stmt *st = store_prepare(s, sql);
	sqlite3_free(sql);
	if (!st)
		return NULL;
	char *cols = sqlite3_mprintf("%s", "");
	while (cols && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sep = *cols ? ", " : "";
		char *next;
		if (for_select && strcmp(name, "snapshot") == 0)
			next = sqlite3_mprintf("%s%sm.new_id", cols, sep);
		else if (for_select && !strcmp(table, "snapshot_delta") && !strcmp(name, "base")) /* a snapshot too */
			next = sqlite3_mprintf("%s%s(SELECT b.new_id FROM temp.idmap b WHERE b.old_id = t.base)", cols, sep);
		else
			next = sqlite3_mprintf("%s%s%s\"%w\"", cols, sep, for_select ? "t." : "", name);
		sqlite3_free(cols);
		cols = next;
	}
	sqlite3_finalize(st);
	return cols;
}

/* Copy one attached part: its snapshots get the numbers in temp.idmap. */
static int store_copy_part(struct store *s)
{
	static const char snap_cols[] =
	    "content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, time_ns, "
	    "elapsed_ns, pause_ns, seq, blocks, bytes";
	char *sql = sqlite3_mprintf("INSERT INTO main.snapshot(id, %s) SELECT m.new_id, %s FROM "
				    "part.snapshot p JOIN temp.idmap m ON m.old_id = p.id ORDER BY m.new_id",
				    snap_cols, snap_cols);
	int rc = store_exec(s, sql);
	sqlite3_free(sql);
	for (size_t i = 0; rc == 0 && i < sizeof store_tables / sizeof store_tables[0]; i++) {
		char *ins = store_columns(s, store_tables[i], false);
		char *sel = store_columns(s, store_tables[i], true);
		if (ins && sel && !*ins) { /* a part without the table (type_frame, status_event… are optional) */
			sqlite3_free(ins);
			sqlite3_free(sel);
			continue;
		}
		sql = ins && sel ? sqlite3_mprintf("INSERT INTO main.\"%w\"(%s) SELECT %s FROM part.\"%w\" t "
						   "JOIN temp.idmap m ON m.old_id = t.snapshot",
						   store_tables[i], ins, sel, store_tables[i])
				 : NULL;
		rc = sql ? store_exec(s, sql) : -1;
		sqlite3_free(sql);
		sqlite3_free(ins);
		sqlite3_free(sel);
	}
	return rc;
}

/* Attach one process's snapshot database if it is ours; 0 or -1 (reported
** when `report`: each part is attached in two passes, said once). */
static int store_attach(struct store *s, const char *file, bool report)
{
	char *sql = sqlite3_mprintf("ATTACH %Q AS part", file);
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) { /* a damaged or foreign part, not a write error */
		if (report)
			sess_error("%s: %s; skipped", file, sqlite3_errmsg(s->db));
		return -1;
	}
	/* ours, and a schema this build writes (a foreign file fails the
	** prepare: said below, not as a write error) */
	bool ours = false;
	sqlite3_stmt *st = NULL;
	sqlite3_prepare_v2(s->db, "PRAGMA part.application_id", -1, &st, NULL);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		ours = sqlite3_column_int64(st, 0) == MEMINST_SNAPSHOT_APP_ID;
	sqlite3_finalize(st);
	st = NULL;
	sqlite3_prepare_v2(s->db, "PRAGMA part.user_version", -1, &st, NULL);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		ours = ours && sqlite3_column_int(st, 0) == MEMINST_SNAPSHOT_VERSION;
	sqlite3_finalize(st);
	if (!ours) {
		if (report)
			sess_error("%s: not a meminst snapshot database; skipped", file);
		store_exec(s, "DETACH part");
		return -1;
	}
	return 0;
}

/* What store_settle found a snapshot part to be. */
enum store_state { PART_OK, PART_UNFINISHED, PART_BUSY, PART_OTHER };

/*
** Wait until no process is storing into the part (its writer's lock, for
** at most STORE_WAIT_MS), rolling back a store cut short (SQLite does so
** when it finds the hot journal), then say what the part holds.
** PART_UNFINISHED: no snapshot was ever completed in it (the process
** exec'd, exited or was killed while storing its first one); PART_OTHER:
** anything SQLite cannot take, left to store_attach to report.
*/
static enum store_state store_settle(const char *file)
{
	sqlite3 *db = NULL;
	enum store_state state = PART_OTHER;
	if (sqlite3_open_v2(file, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(db, STORE_WAIT_MS);
		int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		sqlite3_stmt *st = NULL;
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			state = PART_BUSY;
		else if (rc == SQLITE_OK &&
			 sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM sqlite_schema), "
						"(SELECT application_id FROM pragma_application_id)",
					    -1, &st, NULL) == SQLITE_OK &&
			 sqlite3_step(st) == SQLITE_ROW)
			state = sqlite3_column_int(st, 0) == 0 && sqlite3_column_int(st, 1) == 0 ? PART_UNFINISHED
												   : PART_OK;
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return state;
}

/* A pid of the run still alive with the library loaded (a daemon, a child
** the program did not wait for): not a zombie, libmeminst in its maps. */
static bool store_still_running(long pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] != ' ' || strchr("ZX", close_paren[2]))
		return false;
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	if (!(f = fopen(path, "r")))
		return false;
	bool ours = false;
	while (!ours && fgets(buf, sizeof buf, f))
		ours = strstr(buf, "/libmeminst") != NULL;
	fclose(f);
	return ours;
}

/*
** One part, in one of two passes.  Pass 1 notes the time of each of its
** snapshots; between the passes every snapshot gets its number in time
** order (store_number); pass 2 copies the part under those numbers.  A
** damaged part is reported and left out (returns 0): the rest is kept.
*/
static int store_part(struct store *s, const char *file, int part_no, int pass)
{
	if (store_attach(s, file, pass == 1) < 0)
		return 0;
	char *sql = pass == 1
	    ? sqlite3_mprintf("INSERT INTO temp.times SELECT %d, id, time_ns FROM part.snapshot", part_no)
	    : sqlite3_mprintf("DELETE FROM temp.idmap; INSERT INTO temp.idmap(old_id, new_id) "
			      "SELECT old_id, new_id FROM temp.numbers WHERE part = %d", part_no);
	int rc = store_exec(s, sql);
	sqlite3_free(sql);
	if (rc == 0 && pass == 2 && store_exec(s, "BEGIN") == 0) {
		if (store_copy_part(s) == 0 && store_exec(s, "COMMIT") == 0) {
			sqlite3_stmt *st = store_prepare(s, "SELECT count(*) FROM temp.idmap");
			if (st && sqlite3_step(st) == SQLITE_ROW)
				s->snapshots += sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		} else {
			sess_error("%s: cannot be read; its snapshots are left out", file);
			store_exec(s, "ROLLBACK");
		}
	}
	store_exec(s, "DETACH part");
	return 0;
}

/* Between the passes: snapshot numbers in the order the snapshots were
** taken, after an adopted part's (store_adopt): a process of the run may
** make its part only after the adoption, an orphan that was still running
** (`sh -c 'sleep 1 & exit 0'`: its numbers from 1 were the adopted ones,
** "UNIQUE constraint failed: snapshot.id", its snapshots left out). */
static int store_number(struct store *s)
{
	return store_exec(s, "INSERT INTO temp.numbers SELECT part, old_id, (SELECT coalesce(max(id), 0) FROM "
			     "main.snapshot) + row_number() OVER (ORDER BY time_ns, part, old_id) FROM temp.times");
}

/* One image in session_image: the bytes of its samples, and its span,
** from its header's t0_realtime_ns to the file's last write (the END
** before its exec, or at exit), so that readers take the program that
** did the most: the most samples, else (exact tracing, whose events an
** allocator's make many: echo's 268 outweighed a traced program's calls)
** the longest. */
static int store_image(struct store *s, int fd, long pid, int image)
{
	struct meminst_trace_header h;
	struct stat st;
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) != 0 ||
	    fstat(fd, &st) != 0)
		return 0;
	sqlite3_stmt *st_ins = store_prepare(s, "INSERT OR IGNORE INTO session_image VALUES(?, ?, ?, ?, ?)");
	int rc = st_ins ? 0 : -1;
	int64_t end = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	sqlite3_bind_int64(st_ins, 1, pid);
	sqlite3_bind_int(st_ins, 2, image);
	sqlite3_bind_int64(st_ins, 3, (int64_t)h.t0_realtime_ns);
	sqlite3_bind_int64(st_ins, 4, end > (int64_t)h.t0_realtime_ns ? end : (int64_t)h.t0_realtime_ns);
	sqlite3_bind_int64(st_ins, 5, sess_trace_sample_bytes(fd));
	if (st_ins && sqlite3_step(st_ins) != SQLITE_DONE) {
		sess_error("cannot write the session: %s", sqlite3_errmsg(s->db));
		rc = -1;
	}
	sqlite3_finalize(st_ins);
	return rc;
}

/* Store a trace file in pieces under its pid and image. */
static int store_trace(struct store *s, const char *file, long pid, int image)
{
	int fd = sess_open_part(file);
	if (fd < 0)
		return 0;
	if (store_exec(s, "BEGIN") < 0)
		return close(fd), -1;
	sqlite3_stmt *st = store_prepare(s, "INSERT INTO session_trace(pid, seq, data, image) VALUES(?, ?, ?, ?)");
	char *buf = malloc(STORE_PIECE);
	int rc = st && buf ? 0 : -1;
	for (int seq = 0; rc == 0; seq++) {
		ssize_t n = 0, got;
		while (n < STORE_PIECE && (got = read(fd, buf + n, STORE_PIECE - n)) > 0)
			n += got;
		if (n == 0)
			break;
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_int(st, 2, seq);
		sqlite3_bind_blob(st, 3, buf, (int)n, SQLITE_STATIC);
		sqlite3_bind_int(st, 4, image);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sess_error("cannot write the session: %s", sqlite3_errmsg(s->db));
			rc = -1;
		}
		sqlite3_reset(st);
		s->trace_bytes += n;
	}
	sqlite3_finalize(st);
	free(buf);
	if (rc == 0)
		rc = store_image(s, fd, pid, image);
	int64_t whole = 0;
	/* a process still running is said as such, with its trace (store_say_running) */
	if (rc == 0 && !sess_trace_ended(fd, &whole) && !store_still_running(pid) && s->traces_cut++ == 0)
		s->cut_pid = pid, s->cut_bytes = whole;
	close(fd);
	return store_exec(s, rc == 0 ? "COMMIT" : "ROLLBACK") < 0 ? -1 : rc;
}

/* The progress line on a terminal's stderr: the pass (snapshots are read
** twice, then the traces are stored) and the part; the closing line, or an
** error, writes over it. */
static void store_progress(struct store *s, int pass, size_t i, size_t n)
{
	static const char *const what[] = {"", "reading snapshots", "copying snapshots", "storing traces"};
	if (sess_progress)
		fprintf(stderr, "\rmeminst: writing %s: %s, part %zu of %zu\033[K", s->path, what[pass],
			i + 1, n);
}

/* Is name a part of this kind, "mem.PID.db", "mem.PID.db.log" (note) or
** "trace.PID" (or "trace.PID.execN", an exec'd program's)?  Its pid. */
static bool store_name(const char *name, const char *kind, long *pid)
{
	char tail[8];
	if (!strncmp(name, "uid.", 4) && strchr(name, '/')) /* a user's directory (store_list) */
		name = strchr(name, '/') + 1;
	if (!strcmp(kind, "mem"))
		return sscanf(name, "mem.%ld.d%7s", pid, tail) == 2 && !strcmp(tail, "b");
	if (!strcmp(kind, "note"))
		return sscanf(name, "mem.%ld.d%7s", pid, tail) == 2 && !strcmp(tail, "b.log");
	unsigned image;
	return sscanf(name, "trace.%ld%1s", pid, tail) == 1 ||
	       (sscanf(name, "trace.%ld.exec%u%1s", pid, &image, tail) == 2 && image > 0);
}

/* The notes of a process (alloc_snap_store.c, alloc_snap_note): its lines
** meminst could not write to the program's stderr, one row each. */
static int store_note(struct store *s, const char *file, long pid)
{
	int fd = sess_open_part(file);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	sqlite3_stmt *st = store_prepare(s, "INSERT OR IGNORE INTO session_note VALUES(?1, ?2, ?3)");
	char line[1024];
	for (int seq = 1; st && fgets(line, sizeof line, f); seq++) {
		line[strcspn(line, "\n")] = 0;
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_int(st, 2, seq);
		const char *text = strncmp(line, "meminst: ", 9) ? line : line + 9;
		sqlite3_bind_text(st, 3, text, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sess_error("cannot write the session: %s", sqlite3_errmsg(s->db));
			sqlite3_finalize(st);
			fclose(f);
			return -1;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	fclose(f);
	return st ? 0 : -1;
}

/* Settle a snapshot part (store_settle) and say, once, why one is left
** out; false when it is.  Other names pass. */
static bool store_part_settled(struct store *s, const char *name)
{
	long pid;
	char path[4096];
	if (!store_name(name, "mem", &pid))
		return true;
	snprintf(path, sizeof path, "%s/%s", s->dir, name);
	switch (store_settle(path)) {
	case PART_UNFINISHED:
		if (!store_still_running(pid))
			sess_error("%s: process %ld left no complete snapshot: it exec'd, ended or was killed "
				   "while storing its first one, which is lost", path, pid);
		return false; /* a process still running is said at the end */
	case PART_BUSY:
		sess_error("%s: process %ld was still storing a snapshot %d s after the program ended; its "
			   "snapshots are left out", path, pid, STORE_WAIT_MS / 1000);
		return false;
	default:
		return true;
	}
}

/* The processes of the run that outlived the program: what they lack. */
static void store_say_running(char **names, size_t n)
{
	long last = 0;
	for (size_t i = 0; i < n; i++) {
		long pid;
		if (!(store_name(names[i], "mem", &pid) || store_name(names[i], "trace", &pid)) || pid == last ||
		    !store_still_running(pid))
			continue;
		last = pid;
		bool traced = false;
		for (size_t j = 0; j < n; j++) {
			long other;
			traced |= store_name(names[j], "trace", &other) && other == pid;
		}
		char path[64], comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		for (char *c = comm; *c; c++) /* the program names itself: no escapes reach the terminal */
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (f)
			fclose(f);
		sess_error("process %ld (%s) was still running when the session was written (a daemon, or a "
			   "child the program did not wait for): what it stored until then is kept; its exit "
			   "snapshot%s missing", pid, comm, traced ? " and the end of its trace are" : " is");
	}
}

/* When the trace at name in the parts directory began (sess_trace_t0). */
static uint64_t store_trace_t0(const struct store *s, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", s->dir, name);
	return sess_trace_t0(path);
}

/* The image of names[i], a trace of pid: its place among pid's traces by
** the time each began, then by name.  The programs of a process that
** exec'd (trace.PID, trace.PID.exec1 ...; one that switched users and
** then exec'd, setpriv or su, left trace.PID and uid.N/trace.PID) are each
** kept, in the order they ran. */
static int store_trace_image(const struct store *s, char **names, size_t n, size_t i, long pid)
{
	uint64_t t = store_trace_t0(s, names[i]);
	int image = 0;
	for (size_t j = 0; j < n; j++) {
		long other;
		if (j == i || !store_name(names[j], "trace", &other) || other != pid)
			continue;
		uint64_t u = store_trace_t0(s, names[j]);
		image += u < t || (u == t && j < i);
	}
	return image;
}

static int store_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir (under `sub`, a user's directory uid.N, as
** "uid.N/NAME"), added to *names; the users' directories too (one level:
** a process that switched users writes there, alloc_ids.c). */
static int store_list(const char *dir, const char *sub, char ***names, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		if (!sub)
			sess_error("%s: %s", dir, strerror(errno));
		return sub ? 0 : -1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		struct stat st;
		bool is_dir = e->d_type == DT_DIR || (e->d_type == DT_UNKNOWN && /* some file systems */
						       fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						       S_ISDIR(st.st_mode));
		if (!sub && !strncmp(e->d_name, "uid.", 4) && is_dir) {
			store_list(dir, e->d_name, names, n);
			continue;
		}
		char **grown = realloc(*names, (*n + 1) * sizeof **names);
		if (!grown)
			break;
		*names = grown;
		char name[600];
		snprintf(name, sizeof name, "%s%s%s", sub ? sub : "", sub ? "/" : "", e->d_name);
		if (!(grown[*n] = strdup(name)))
			break;
		(*n)++;
	}
	closedir(d);
	return 0;
}

/* Every part of the directory, in name order (so, stable). */
static int store_parts(struct store *s)
{
	char **names = NULL;
	size_t n = 0;
	if (store_list(s->dir, NULL, &names, &n) < 0)
		return -1;
	qsort(names, n, sizeof *names, store_cmp);
	bool *skip = calloc(n ? n : 1, sizeof *skip);
	int rc = skip ? 0 : -1;
	for (size_t i = 0; i < n && rc == 0; i++)
		skip[i] = !store_part_settled(s, names[i]);
	for (int pass = 1; pass <= 3 && rc == 0; pass++) {
		if (pass == 2)
			rc = store_number(s);
		for (size_t i = 0; i < n && rc == 0; i++) {
			char path[4096];
			long pid;
			store_progress(s, pass, i, n);
			snprintf(path, sizeof path, "%s/%s", s->dir, names[i]);
			if (pass < 3 && store_name(names[i], "mem", &pid) && !skip[i])
				rc = store_part(s, path, (int)i, pass);
			else if (pass == 3 && store_name(names[i], "trace", &pid))
				rc = store_trace(s, path, pid, store_trace_image(s, names, n, i, pid));
			else if (pass == 3 && store_name(names[i], "note", &pid))
				rc = store_note(s, path, pid);
		}
	}
	if (rc == 0)
		store_say_running(names, n);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(skip);
	return rc;
}

/* Bind an integer, or NULL when absent. */
static void store_bind_opt(sqlite3_stmt *st, int col, bool present, int64_t v)
{
	if (present)
		sqlite3_bind_int64(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static int store_facts(struct store *s, const struct sess_opts *o, const struct sess_result *r,
		       const char *meminst_env)
{
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		strcpy(cwd, "?");
	char *args = sqlite3_mprintf("%s", "");
	for (char **a = o->argv; *a && args; a++) {
		char *next = sqlite3_mprintf("%s%s%s", args, a == o->argv ? "" : " ", *a);
		sqlite3_free(args);
		args = next;
	}
	sqlite3_stmt *st = store_prepare(s, "INSERT INTO session_run VALUES(1, ?, ?, ?, ?, ?, ?, ?, ?, "
					    "?, ?, ?, ?, ?, ?, ?, ?, ?)");
	int rc = st && args ? 0 : -1;
	if (rc == 0) {
		sqlite3_bind_text(st, 1, o->argv[0], -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, args, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, cwd, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, r->pid);
		sqlite3_bind_int64(st, 5, r->start_ns);
		sqlite3_bind_int64(st, 6, r->duration_ns);
		store_bind_opt(st, 7, !r->exit_signal, r->exit_code);
		store_bind_opt(st, 8, r->exit_signal, r->exit_signal);
		sqlite3_bind_text(st, 9, o->mode, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 10, o->backend ? o->backend : "system", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 11, o->trace_clock, -1, SQLITE_STATIC);
		store_bind_opt(st, 12, o->sample_hz, o->sample_hz);
		sqlite3_bind_text(st, 13, o->sample_hz ? (o->sample_clock ? o->sample_clock : "cpu") : NULL,
				  -1, SQLITE_STATIC);
		store_bind_opt(st, 14, o->alloc_sample, (int64_t)o->alloc_sample);
		store_bind_opt(st, 15, o->interval_ns || o->interval_auto, (int64_t)o->interval_ns);
		sqlite3_bind_text(st, 16, meminst_env, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 17, "meminst " PACKAGE_VERSION, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sess_error("cannot write the session: %s", sqlite3_errmsg(s->db));
			rc = -1;
		}
	}
	sqlite3_finalize(st);
	sqlite3_free(args);
	/* a process that exec'd is named by the last program it ran (it was
	** the alphabetically first: /usr/bin/dash for a shell that became ls);
	** a snapshot whose exe or cmdline is NULL has its process's last one */
	if (rc == 0)
		rc = store_exec(s,
		    "INSERT OR IGNORE INTO session_process SELECT pid, min(ppid), "
		    "(SELECT x.exe FROM snapshot x WHERE x.pid = s.pid AND x.exe IS NOT NULL "
		    " ORDER BY x.time_ns DESC, x.id DESC LIMIT 1), "
		    "(SELECT x.cmdline FROM snapshot x WHERE x.pid = s.pid AND x.cmdline IS NOT NULL "
		    " ORDER BY x.time_ns DESC, x.id DESC LIMIT 1), count(*), 0 FROM snapshot s GROUP BY pid;"
		    "INSERT OR IGNORE INTO session_process SELECT DISTINCT pid, 0, '', '', 0, 1 FROM session_trace;"
		    "UPDATE session_process SET traced = 1 WHERE pid IN (SELECT pid FROM session_trace);");
	return rc;
}

/* Create the database at tmp with the schemas, or NULL.  The file is made
** by us, 0600 (it holds the command line, the environment's MEMINST and
** the memory map), and never through a symbolic link left at its name. */
static int store_create(struct store *s, const char *tmp, bool adopted)
{
	int fd = adopted ? -2 : open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1) {
		sess_error("%s: cannot create: %s", tmp, strerror(errno));
		return -1;
	}
	if (fd >= 0)
		close(fd);
	if (sqlite3_open_v2(tmp, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		sess_error("%s: %s", tmp, s->db ? sqlite3_errmsg(s->db) : "cannot create");
		return -1;
	}
	sqlite3_busy_timeout(s->db, STORE_WAIT_MS); /* a part a live process is storing into */
	char pragmas[200];
	snprintf(pragmas, sizeof pragmas,
		 "PRAGMA application_id=%d; PRAGMA user_version=%d; PRAGMA journal_mode=MEMORY; "
		 "PRAGMA synchronous=OFF;", MEMINST_SNAPSHOT_APP_ID, MEMINST_SNAPSHOT_VERSION);
	return store_exec(s, pragmas) < 0 || store_exec(s, MEMINST_SNAPSHOT_SCHEMA) < 0 ||
		       store_exec(s, MEMINST_SNAPSHOT_LEAK_TABLES) < 0 ||
		       store_exec(s, MEMINST_SESSION_SCHEMA) < 0 ||
		       store_exec(s, "CREATE TABLE IF NOT EXISTS session_trace(pid INTEGER NOT NULL, "
				     "seq INTEGER NOT NULL, data BLOB NOT NULL, image INTEGER NOT NULL DEFAULT 0, "
				     "PRIMARY KEY(pid, image, seq));"
				     "CREATE TABLE IF NOT EXISTS session_image(pid INTEGER NOT NULL, image INTEGER NOT NULL, "
				     "start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, sample_bytes INTEGER NOT NULL, "
				     "PRIMARY KEY(pid, image));"
				     "DELETE FROM meminst_meta;" /* an adopted part's */
				     "INSERT INTO meminst_meta VALUES('writer', 'meminst " PACKAGE_VERSION "');"
				     "CREATE TEMP TABLE idmap(old_id INTEGER PRIMARY KEY, new_id INTEGER);"
				     "CREATE TEMP TABLE times(part INTEGER, old_id INTEGER, time_ns INTEGER);"
				     "CREATE TEMP TABLE numbers(part INTEGER, old_id INTEGER, new_id INTEGER);") < 0
		   ? -1
		   : 0;
}

/* Move the finished file into place: over an old one only with -f. */
static int store_publish(const char *tmp, const char *path, bool force)
{
	if (force ? rename(tmp, path) == 0 : link(tmp, path) == 0 && unlink(tmp) == 0)
		return 0;
	sess_error("%s: %s%s; the session is in %s", path, strerror(errno),
		   errno == EEXIST ? " (it appeared while the program ran; -f replaces it)" : "", tmp);
	return -1;
}

static void store_bytes_text(double b, char *out, size_t len)
{
	snprintf(out, len, b >= 1e9 ? "%.1f GB" : b >= 1e6 ? "%.1f MB" : "%.0f kB",
		 b >= 1e9 ? b / 1e9 : b >= 1e6 ? b / 1e6 : b / 1e3);
}

static void store_summary(struct store *s, struct sess_summary *sum)
{
	sqlite3_stmt *st = store_prepare(s, "SELECT count(*) FROM session_process");
	if (st && sqlite3_step(st) == SQLITE_ROW)
		sum->processes = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sum->snapshots = s->snapshots;
	sum->trace_bytes = s->trace_bytes;
	store_bytes_text((double)s->trace_bytes, sum->trace_text, sizeof sum->trace_text);
	sum->traces_cut = s->traces_cut;
	sum->cut_pid = s->cut_pid;
	store_bytes_text((double)s->cut_bytes, sum->cut_text, sizeof sum->cut_text);
}

/*
** A run whose one process stored snapshots (the usual case) needs no copy:
** its part becomes the session (renamed to tmp, the session's tables added
** by store_create), when its process is gone (nothing can store into it
** any more) and its snapshots are numbered 1, 2, ... in the order they were
** taken already, as the copy would number them.  The copy of a part holding
** peak maps read and wrote every block again: 60-70 ms of the launcher's
** CPU for 3 M blocks.  True when adopted; otherwise the parts are copied.
*/
static bool store_adopt(struct store *s, const char *tmp)
{
	DIR *d = opendir(s->dir);
	char name[256] = "", path[4096];
	int parts = 0;
	long pid = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strncmp(e->d_name, "uid.", 4)) /* a user's parts too: copied */
			parts += 2;
		if (store_name(e->d_name, "mem", &pid) && ++parts == 1 && strlen(e->d_name) < sizeof name)
			strcpy(name, e->d_name);
	}
	if (d)
		closedir(d);
	if (parts != 1 || !*name || !store_name(name, "mem", &pid))
		return false;
	snprintf(path, sizeof path, "%s/%s", s->dir, name);
	if (store_settle(path) != PART_OK || store_still_running(pid))
		return false;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool in_order = false;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT (SELECT application_id FROM pragma_application_id), "
				   "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM "
				   "(SELECT id, row_number() OVER (ORDER BY time_ns, id) AS n FROM snapshot) "
				   "WHERE id != n)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		in_order = sqlite3_column_int64(st, 0) == MEMINST_SNAPSHOT_APP_ID &&
			   sqlite3_column_int(st, 1) == MEMINST_SNAPSHOT_VERSION && sqlite3_column_int(st, 2) == 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (!in_order || rename(path, tmp) != 0)
		return false;
	strcpy(s->adopted, path);
	return true;
}

/* How many snapshots an adopted part brought. */
static void store_count_adopted(struct store *s)
{
	sqlite3_stmt *st = store_prepare(s, "SELECT count(*) FROM snapshot");
	if (st && sqlite3_step(st) == SQLITE_ROW)
		s->snapshots = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
}

int sess_store(const char *path, const char *dir, const struct sess_opts *o,
	       const struct sess_result *res, const char *meminst_env, struct sess_summary *sum)
{
	struct store s = {.path = path, .dir = dir};
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
	unlink(tmp);
	bool adopted = store_adopt(&s, tmp);
	int rc = store_create(&s, tmp, adopted);
	if (rc == 0 && adopted)
		store_count_adopted(&s);
	if (rc == 0)
		rc = store_parts(&s);
	if (rc == 0)
		rc = store_facts(&s, o, res, meminst_env);
	if (rc == 0)
		store_summary(&s, sum);
	if (sqlite3_close(s.db) != SQLITE_OK && rc == 0) {
		sess_error("%s: cannot close the session database", tmp);
		rc = -1;
	}
	if (rc == 0)
		rc = store_publish(tmp, path, o->force);
	else if (!adopted || rename(tmp, s.adopted) != 0) /* else back where the run's data is kept */
		unlink(tmp);
	return rc;
}
