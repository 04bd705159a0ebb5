/*
** alloc_sqlite.c — storing a captured snapshot with SQLite (the rows of
** each table: alloc_sqlite_rows.c).
**
** The SQLite here is meminst's own: Debian's static libsqlite3.a linked into
** libmeminst, every name of it hidden (alloc/libmeminst.map), so it shares
** nothing with a libsqlite3 the program uses — not its global
** configuration (a log callback, SQLITE_CONFIG_SINGLETHREAD, mutex, malloc
** or page-cache methods, sqlite3_temp_directory, a default VFS), not its
** static mutexes.  When the stores went through the program's libsqlite3
** (loaded with dlopen), the sqlite3 shell's log callback, which writes to a
** FILE on main's stack, got meminst's messages after main had returned
** (SIGSEGV), and the service thread's first store initialised SQLite before
** the shell's main could configure it ("attempt to configure SQLite after
** initialization").
**
** sq_init configures the copy at the first store, so that a process that
** never stores pays nothing for it: single-threaded (every call into it is
** made under sq_store_lock, which fork's prepare handler takes too, so no
** mutex of SQLite's is needed nor can be left held in a child), its memory
** from a heap of meminst's own (alloc_sqlite_heap.c: no header of the
** interposed malloc's, not counted, no glibc arena for the service
** thread), no log callback, statistics off.  Files
** go through its own unix VFS; temporary data (statement journals) stays
** in memory, so TMPDIR and the program's descriptors are not involved.
** Everything here still runs guarded: libc calls of ours (dl_iterate_phdr,
** stdio) may allocate.  It runs on an ordinary thread with none of our
** locks held (see alloc_snapshot.c).
**
** Files: a missing file is created with mode 0600; an existing file (a
** regular file of our effective uid, not a symbolic link) gets a new
** snapshot added, numbered after the last, in one transaction.  A file
** that is not SQLite, is SQLite but not ours (application_id), or holds
** another schema version is left untouched and reported.  The schema is in
** <meminst-snapshot.h>, shared with inspect.
*/
#include "alloc_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "meminst-store.h"
#include "alloc_sqlite_int.h"

/* ------------------------------------------------- the private SQLite -- */

/*
** Configure and initialise the private copy, once (under sq_store_lock).
** 0, or -1 with the reason in err.
*/
static int sq_init(char *err, size_t errlen)
{
	static bool done;
	if (done)
		return 0;
	int rc = sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	if (rc == SQLITE_OK)
		rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &alloc_sqlite_heap_methods);
	if (rc == SQLITE_OK)
		rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (rc == SQLITE_OK)
		rc = sqlite3_config(SQLITE_CONFIG_LOG, (void (*)(void *, int, const char *))NULL, (void *)NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_initialize();
	if (rc != SQLITE_OK) {
		alloc_fmt(err, errlen, "cannot store snapshots: SQLite cannot be initialised: %s",
			  sqlite3_errstr(rc));
		return -1;
	}
	done = true;
	return 0;
}

/* ---------------------------------------------------------- writing ---- */

/*
** The service thread's connection to its snapshot file, kept open from one
** store to the next with its statements prepared: an interval status
** snapshot every 100 ms opened the file, checked the schema, created and
** deleted the journal and parsed a dozen statements each time (1.5-2.5 ms
** of CPU a snapshot, more than the status itself).  Only a thread with a
** descriptor table of its own keeps one (the program never sees the
** descriptor), and only for snapshot=PATH: the name is checked to lead to
** the same file before each store; otherwise it is closed and the store
** opens the file as before.  It holds no lock between stores, so other
** writers (the exit snapshot, a control request) and readers go on as
** before.  A child of fork forgets it (its descriptors are not in the
** child's table).
*/
static sq_kept_t sq_kept;
static __thread bool sq_keep_here ALLOC_TLS_MODEL;

int alloc_sqlite_fail(sq_writer_t *w, const char *what)
{
	/* A write to the file that failed (a full disk, ulimit -f) is said as
	** one, whichever statement met it: with a page cache smaller than the
	** store, SQLite writes pages out in the middle of an insert. */
	sq_link_t *l = w->link;
	bool open = w->db || l;
	int ext = l ? l->ext : w->db ? sqlite3_extended_errcode(w->db) : SQLITE_OK;
	if (l && l->held) /* an earlier row's failure, come out here */
		what = "cannot insert";
	if (ext == SQLITE_FULL || ((ext & 0xff) == SQLITE_IOERR && ext != SQLITE_IOERR_READ &&
				   ext != SQLITE_IOERR_SHORT_READ && ext != SQLITE_IOERR_NOMEM))
		what = "cannot write";
	if (open && ext == SQLITE_OK) /* meminst's own failure (its memory): SQLite's
					 message would be "not an error" */
		alloc_fmt(w->err, w->errlen, "snapshot %s: %s", w->path, what);
	else
		alloc_fmt(w->err, w->errlen, "snapshot %s: %s: %s", w->path, what,
			  l ? l->msg : w->db ? sqlite3_errmsg(w->db) : "cannot open");
	return -1;
}

/* SQL run to its end, by the process's SQLite or the launcher's: SQLite's
** result code (-1: the launcher's connection failed). */
static int sq_exec(sq_writer_t *w, const char *sql)
{
	if (w->link)
		return alloc_sqlite_link_call(w->link, MEMINST_STORE_EXEC, 0, sql, NULL);
	return sqlite3_exec(w->db, sql, NULL, NULL, NULL);
}

static void sq_busy_timeout(sq_writer_t *w, int ms)
{
	if (w->link)
		alloc_sqlite_link_send(w->link, MEMINST_STORE_BUSY, (uint32_t)ms, NULL);
	else
		sqlite3_busy_timeout(w->db, ms);
}

int alloc_sqlite_exec(sq_writer_t *w, const char *sql)
{
	return sq_exec(w, sql) == SQLITE_OK ? 0 : alloc_sqlite_fail(w, "cannot write");
}

/* A statement of the process's SQLite, or a link's number, as sq_stmt_t. */
static sqlite3_stmt *sq_own(sq_stmt_t *st)
{
	return (sqlite3_stmt *)st;
}

static uint32_t sq_number(sq_stmt_t *st)
{
	return (uint32_t)(uintptr_t)st;
}

static sq_stmt_t *sq_prepare_new(sq_writer_t *w, const char *sql)
{
	if (w->link)
		return (sq_stmt_t *)(uintptr_t)alloc_sqlite_link_prepare(w->link, sql);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return (sq_stmt_t *)st;
}

/*
** A statement: with a kept connection, the one prepared at an earlier
** store (statements are told apart by their text's address: the texts
** here are constants); alloc_sqlite_release resets it for the next store.
*/
static sq_stmt_t *sq_statement(sq_writer_t *w, const char *sql)
{
	sq_kept_t *k = w->kept;
	unsigned i = 0;
	while (k && i < SQ_KEPT_STMTS && k->sql[i] && k->sql[i] != sql)
		i++;
	if (k && i < SQ_KEPT_STMTS && k->sql[i])
		return k->st[i];
	sq_stmt_t *st = sq_prepare_new(w, sql);
	if (!st)
		return NULL;
	if (k && i < SQ_KEPT_STMTS)
		k->sql[i] = sql, k->st[i] = st;
	return st;
}

void alloc_sqlite_release(sq_writer_t *w, sq_stmt_t *st)
{
	sq_kept_t *k = w->kept;
	bool kept = false;
	for (unsigned i = 0; k && st && i < SQ_KEPT_STMTS && k->sql[i] && !kept; i++)
		kept = k->st[i] == st;
	if (w->link) {
		alloc_sqlite_link_send(w->link, kept ? MEMINST_STORE_RESET : MEMINST_STORE_FINALIZE, sq_number(st), NULL);
	} else if (kept) {
		sqlite3_reset(sq_own(st));
		sqlite3_clear_bindings(sq_own(st)); /* a blob bound SQLITE_STATIC is unmapped */
	} else {
		sqlite3_finalize(sq_own(st));
	}
}

int64_t alloc_sqlite_query_int(sq_writer_t *w, const char *sql)
{
	for (unsigned i = 0; i < SQ_PREFETCH; i++)
		if (w->prefetched[i].sql && !strcmp(w->prefetched[i].sql, sql)) {
			w->prefetched[i].sql = NULL; /* once: the store's own rows come after */
			return w->prefetched[i].value;
		}
	sq_stmt_t *st = sq_statement(w, sql);
	int64_t v = -1, got;
	if (!st)
		return -1;
	if (w->link ? alloc_sqlite_link_call(w->link, MEMINST_STORE_QUERY, sq_number(st), NULL, &got) == SQLITE_ROW
		    : sqlite3_step(sq_own(st)) == SQLITE_ROW)
		v = w->link ? got : sqlite3_column_int64(sq_own(st), 0);
	alloc_sqlite_release(w, st);
	return v;
}

int alloc_sqlite_row(sq_writer_t *w, sq_stmt_t *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (w->link) {
		int rc = alloc_sqlite_link_row(w->link, sq_number(st), fmt, ap);
		va_end(ap);
		return rc < 0 ? alloc_sqlite_fail(w, "cannot insert") : 0;
	}
	sqlite3_stmt *s = sq_own(st);
	for (int i = 0; fmt[i]; i++) {
		if (fmt[i] == 'i') {
			sqlite3_bind_int64(s, i + 1, va_arg(ap, int64_t));
		} else if (fmt[i] == 'b') { /* bound until the next row or the release */
			const void *p = va_arg(ap, const void *);
			sqlite3_bind_blob(s, i + 1, p, (int)va_arg(ap, size_t), SQLITE_STATIC);
		} else {
			const char *t = va_arg(ap, const char *);
			t ? sqlite3_bind_text(s, i + 1, t, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i + 1);
		}
	}
	va_end(ap);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : alloc_sqlite_fail(w, "cannot insert");
}

sq_stmt_t *alloc_sqlite_prepare(sq_writer_t *w, const char *sql)
{
	sq_stmt_t *st = sq_statement(w, sql);
	if (!st)
		alloc_sqlite_fail(w, "cannot prepare");
	return st;
}

/*
** A new file gets the schema; an old one must be ours, of our version.  A
** database without tables counts as new only if nothing claims it: another
** application may have set its application_id or user_version already.
*/
enum { SQ_F_TABLES, SQ_F_APP, SQ_F_VERSION, SQ_F_NEXT_ID, SQ_FACTS };
static const char *const sq_facts_sql[SQ_FACTS + SQ_PREFETCH] = {
	"SELECT count(*) FROM sqlite_master", "PRAGMA application_id", "PRAGMA user_version",
	"SELECT coalesce(max(id), 0) + 1 FROM snapshot", SQ_SQL_LATEST_SEGMENT, SQ_SQL_LATEST_MODULE};

/*
** BEGIN IMMEDIATE, then what a store needs to know of the file first (its
** tables, application_id, user_version, the next snapshot's number; -1: the
** query failed, as the last one does in a file without tables): SQLite's
** result code of the BEGIN.  Through a link all go in one exchange (the
** queries run whatever the BEGIN's result, which then decides), with a kept
** link the queries the store makes later before it writes segment and
** module rows too (w->prefetched; within the transaction only this store
** writes, and it writes those tables after asking): a status snapshot
** every 10 ms made eight exchanges, each a wake-up of the launcher's
** thread and of ours, now two.
*/
static int sq_begin(sq_writer_t *w, int64_t facts[SQ_FACTS])
{
	sq_stmt_t *st[SQ_FACTS + SQ_PREFETCH];
	unsigned n = SQ_FACTS + (w->kept ? SQ_PREFETCH : 0);
	if (!w->link) {
		int rc = sq_exec(w, "BEGIN IMMEDIATE");
		for (unsigned i = 0; i < SQ_FACTS; i++)
			facts[i] = rc == SQLITE_OK ? alloc_sqlite_query_int(w, sq_facts_sql[i]) : -1;
		return rc;
	}
	for (unsigned i = 0; i < n; i++)
		st[i] = sq_statement(w, sq_facts_sql[i]);
	alloc_sqlite_link_send(w->link, MEMINST_STORE_EXEC, 0, "BEGIN IMMEDIATE");
	for (unsigned i = 0; i < n; i++)
		if (st[i])
			alloc_sqlite_link_send(w->link, MEMINST_STORE_QUERY, sq_number(st[i]), NULL);
	int rc = alloc_sqlite_link_read(w->link, NULL);
	sq_link_t said = *w->link; /* the BEGIN's result, for the error line */
	for (unsigned i = 0; i < n; i++) {
		int64_t v = -1;
		v = st[i] && alloc_sqlite_link_read(w->link, &v) == SQLITE_ROW ? v : -1;
		if (i < SQ_FACTS)
			facts[i] = v;
		else if (rc == SQLITE_OK)
			w->prefetched[i - SQ_FACTS].sql = sq_facts_sql[i], w->prefetched[i - SQ_FACTS].value = v;
		if (st[i])
			alloc_sqlite_release(w, st[i]);
	}
	if (rc != SQLITE_OK) {
		w->link->rc = said.rc, w->link->ext = said.ext, w->link->held = said.held;
		memcpy(w->link->msg, said.msg, sizeof said.msg);
	}
	return rc;
}

static int sq_check_or_create(sq_writer_t *w, const int64_t facts[SQ_FACTS])
{
	int64_t tables = facts[SQ_F_TABLES], app = facts[SQ_F_APP], version = facts[SQ_F_VERSION];
	if (tables < 0)
		return alloc_sqlite_fail(w, "not an SQLite database; left untouched");
	if (tables == 0 && app == 0 && version == 0) {
		char pragmas[160];
		alloc_fmt(pragmas, sizeof pragmas, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
			  MEMINST_SNAPSHOT_APP_ID, MEMINST_SNAPSHOT_VERSION);
		if (alloc_sqlite_exec(w, MEMINST_SNAPSHOT_SCHEMA) < 0 || alloc_sqlite_exec(w, pragmas) < 0)
			return -1;
		return alloc_sqlite_exec(w, "INSERT INTO meminst_meta VALUES('writer','libmeminst " PACKAGE_VERSION "'),"
				  "('schema_version','3'),('min_reader_version','3')");
	}
	if (app != MEMINST_SNAPSHOT_APP_ID) {
		alloc_fmt(w->err, w->errlen, "snapshot %s: not a meminst snapshot database; left untouched",
			  w->path);
		return -1;
	}
	if (version != MEMINST_SNAPSHOT_VERSION) {
		alloc_fmt(w->err, w->errlen, "snapshot %s: schema version %d, this libmeminst writes %d; "
					     "left untouched", w->path, (int)version, MEMINST_SNAPSHOT_VERSION);
		return -1;
	}
	return 0;
}

/*
** Where the snapshot goes, judged before SQLite opens it.  The directory
** may be shared (/tmp, a project directory) and the process may run as
** root, so a name another user prepared must not be written through:
**   - a missing file is created 0600 by us (*created tells), without
**     following a symbolic link left at its name (O_EXCL);
**   - an existing name is used only if it is a regular file, not a symbolic
**     link, owned by our effective uid; its content (empty, or a meminst
**     database of our version) is then SQLite's to judge, under its lock,
**     because a file another writer is still filling must not be read
**     before that writer is done.
** *id gets the file's identity, checked again once SQLite has it open.
** The open is O_NONBLOCK so that a FIFO at the name cannot stop us.
*/
static int sq_prepare_file(const char *path, bool *created, sq_ident_t *id, char *err, size_t errlen)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path,
			      O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	*created = fd >= 0;
	if (fd < 0 && errno != EEXIST) {
		int e = errno;
		alloc_seccomp_enosys("openat", e); /* said there, once: the store says nothing */
		alloc_fmt(err, errlen, "snapshot %s: cannot create: %s", path, strerror(e));
		return -1;
	}
	if (fd < 0)
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		alloc_fmt(err, errlen, "snapshot %s: %s; left untouched", path,
			  errno == ELOOP ? "a symbolic link, not followed" : strerror(errno));
		return -1;
	}
	struct stat st;
	const char *bad = NULL;
	if (fstat(fd, &st) < 0)
		bad = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if (st.st_uid != geteuid())
		bad = "owned by another user";
	syscall(SYS_close, fd);
	if (bad) {
		alloc_fmt(err, errlen, "snapshot %s: %s; left untouched", path, bad);
		return -1;
	}
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* SQLite opened the file we judged: the name still leads to it. */
static bool sq_same_file(const char *path, const sq_ident_t *id)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == id->dev &&
	       st.st_ino == id->ino;
}

/*
** The file's write lock is taken without waiting: when another process is
** storing into the same file, SQ_BUSY comes back at once, nothing done,
** and alloc_sqlite_store waits outside the store lock (or not at all, for
** the service thread), so that a fork in the program never waits for
** another process's store.  Once the lock is ours, the statements wait
** (busy timeout) only for readers' momentary shared locks.
*/
#define SQ_BUSY (-3)
static int sq_store_transaction(sq_writer_t *w, alloc_snap_t *im);

/* The rollback journal beside the connection's file (SQLite's own name for
** it: the one it looks for when it opens the file). */
static const char *sq_journal(sq_writer_t *w)
{
	static char name[4200]; /* under the store lock */
	if (!w->link)
		return sqlite3_filename_journal(sqlite3_db_filename(w->db, "main"));
	alloc_sqlite_link_journal(w->link, name, sizeof name);
	return name[0] ? name : NULL;
}

/*
** After a failed store.  A write that failed after SQLite had written pages
** of the store into the file (a store larger than its page cache spills
** pages before COMMIT) leaves its pager in the error state: ROLLBACK then
** plays nothing back and leaves the journal hot, for the next open of the
** file to roll back (the file past ulimit -f or on a full disk kept half a
** store, and inspect refused it).  SQLite does that roll-back at the
** connection's next read: read now, so that the file is as it was and the
** journal gone (SQLite deletes it once the roll-back is complete) before
** the store returns.  When the roll-back cannot write either, the journal
** stays beside an existing file: it is what repairs the file at its next
** open, never ours to remove; the error line says so.  A file this store
** created is removed (nothing of the user's was there: leave nothing), with
** a journal that could not be played back (it would repair a file now
** gone).  `opened`: SQLite had the file (w->db is its connection).
*/
static void sq_after_failure(sq_writer_t *w, bool created, bool opened)
{
	if (!opened) {
		if (created)
			unlink(w->path);
		return;
	}
	bool read = sq_exec(w, "PRAGMA schema_version") == SQLITE_OK;
	const char *journal = sq_journal(w);
	struct stat st;
	if (created) {
		unlink(w->path);
		if (journal)
			unlink(journal);
	} else if (!read && journal && lstat(journal, &st) == 0 && st.st_size > 0) {
		size_t n = strlen(w->err);
		alloc_fmt(w->err + n, w->errlen - n, "; its next open rolls the store back (%s)", journal);
	}
}

static int sq_store_locked(sq_writer_t *w, alloc_snap_t *im)
{
	sq_busy_timeout(w, 0);
	/* a snapshot the process may not outlive: on the disk at COMMIT */
	if (im->durable)
		sq_exec(w, "PRAGMA synchronous=FULL");
	int rc = sq_store_transaction(w, im);
	if (im->durable)
		sq_exec(w, "PRAGMA synchronous=OFF");
	return rc;
}

static int sq_store_transaction(sq_writer_t *w, alloc_snap_t *im)
{
	int64_t facts[SQ_FACTS];
	int rc = sq_begin(w, facts);
	sq_busy_timeout(w, 10000);
	if (rc == SQLITE_BUSY)
		return SQ_BUSY;
	if (rc == SQLITE_NOTADB) {
		alloc_fmt(w->err, w->errlen, "snapshot %s: not an SQLite database; left untouched", w->path);
		return -1;
	}
	if (rc != SQLITE_OK)
		return alloc_sqlite_fail(w, "cannot start a transaction");
	rc = sq_check_or_create(w, facts);
	if (rc == 0) { /* a file just made has no snapshot yet */
		w->id = facts[SQ_F_NEXT_ID] > 0 ? facts[SQ_F_NEXT_ID] : alloc_sqlite_query_int(w, sq_facts_sql[SQ_F_NEXT_ID]);
		rc = w->id > 0 ? 0 : alloc_sqlite_fail(w, "cannot number the snapshot");
	}
	if (rc == 0)
		rc = alloc_sqlite_write_process(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_tables(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_since(w);
	if (rc == 0)
		rc = alloc_sqlite_write_frames(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_class_load(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_segments(w);
	if (rc == 0) /* right after smaps: inspect rss sets one against the other */
		rc = alloc_sqlite_write_rss(w);
	if (rc == 0)
		rc = alloc_sqlite_write_regions(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_modules(w);
	if (rc == 0)
		rc = alloc_sqlite_write_blocks(w, im);
	if (rc == 0)
		rc = alloc_sqlite_write_leaks(w, im);
	if (rc == 0 && alloc_sqlite_exec(w, "COMMIT") == 0) {
		if (w->kept && w->segments.id)
			w->kept->segments = w->segments;
		if (w->kept && w->modules.id)
			w->kept->modules = w->modules;
		if (w->kept && w->carry.id)
			w->kept->carry = w->carry;
		return (int)w->id;
	}
	sq_exec(w, "ROLLBACK"); /* and sq_after_failure */
	return -1;
}

/*
** One store at a time, and no fork(2) during one: every call into the
** private SQLite is made under sq_store_lock (it is configured single-
** threaded), so a child made while another thread was inside it would find
** its state half changed.  fork waits for a store under way (the prepare
** handler, registered from the library's constructor, after the
** allocator's, so that it runs before they take the locks a store needs;
** it was registered at the first store, and a fork racing with the first
** store of a process left its child with the store lock held for ever: 1
** run in 40 of a thread storing while another forks).  A fork from a
** signal handler that interrupted this thread's own store does not wait
** for itself: that child finds SQLite in the middle of the store and
** stores nothing (said when it tries).  The program's own SQLite, if it
** has one, is another copy whose locks are none of meminst's business.
*/
static pthread_mutex_t sq_store_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread bool sq_storing ALLOC_TLS_MODEL, sq_fork_skipped ALLOC_TLS_MODEL;
static bool sq_forked_mid_store; /* this process: such a child */

/* Lock order at fork: the store lock, then the allocator's (alloc_thread.c's
** handler runs after this one); released the other way round. */
static void sq_prefork(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	sq_fork_skipped = sq_storing;
	if (!sq_fork_skipped)
		pthread_mutex_lock(&sq_store_lock);
	errno = saved_errno;
}

static void sq_postfork_parent(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	if (!sq_fork_skipped)
		pthread_mutex_unlock(&sq_store_lock);
	errno = saved_errno;
}

static void sq_postfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	memset(&sq_kept, 0, sizeof sq_kept); /* its descriptors are the service thread's */
	if (sq_fork_skipped)
		sq_forked_mid_store = true;
	pthread_mutex_init(&sq_store_lock, NULL);
	errno = saved_errno;
}

/*
** Before an exec (trace_sigwrap.c).  An exec ends every other thread, so a
** store the service thread had under way was cut where it was, and a cut
** first store left a part with no snapshot in it: under load the launcher
** said "process N left no complete snapshot" of unshare --pid --fork's
** child, whose first interval store its exec of the shell cut (pidns.sh;
** under --mount-proc the shell's own snapshots are numbered otherwise, so
** nothing made the part whole).  So an exec waits for a store under way,
** as fork does (sq_prefork), and none begins until the exec has replaced
** the program or failed (alloc_sqlite_exec_end).  Not in a vfork child (the
** lock and the stores are its parent's, which its exec does not end), nor
** in a signal handler that interrupted this thread's own store.  True when
** the lock was taken.
*/
bool alloc_sqlite_exec_begin(void)
{
	if (sq_storing || !alloc_exit_own_process())
		return false;
	int saved_errno = errno;
	pthread_mutex_lock(&sq_store_lock);
	errno = saved_errno;
	return true;
}

void alloc_sqlite_exec_end(bool held)
{
	int saved_errno = errno; /* the exec's */
	if (held)
		pthread_mutex_unlock(&sq_store_lock);
	errno = saved_errno;
}

/* A child of clone without fork: no prepare handler ran, so SQLite's
** mutexes were not taken by us (a thread that held one is gone: the store
** may then find it held; meminst(7) BUGS). */
void alloc_sqlite_child_reset(void)
{
	memset(&sq_kept, 0, sizeof sq_kept);
	pthread_mutex_init(&sq_store_lock, NULL);
}

static void sq_fork_register(void)
{
	pthread_atfork(sq_prefork, sq_postfork_parent, sq_postfork_child);
}

static pthread_once_t sq_fork_once = PTHREAD_ONCE_INIT;

/* Register the fork handlers now (the constructor: before any thread of
** the program can store or fork): the service thread's come after them,
** so that in a child the store lock is made anew before a service thread
** of the child's own can store (alloc_service.c). */
void alloc_sqlite_fork_init(void)
{
	pthread_once(&sq_fork_once, sq_fork_register);
}

/* Open the file sq_prepare_file judged, with SQLite, and check that the
** name still leads to it; 0, or -1 with the reason in w->err (-2: the
** name leads to another file now, not ours to remove). */
static int sq_open(sq_writer_t *w, const sq_ident_t *ident, sq_link_t *link)
{
	if (link) { /* the launcher opens it as below (sess_storer.c) */
		w->link = link;
		if (alloc_sqlite_link_call(link, MEMINST_STORE_OPEN, 0, w->path, NULL) != SQLITE_OK)
			return alloc_sqlite_fail(w, "cannot open");
	} else if (sq_init(w->err, w->errlen) < 0) {
		return -1;
	} else if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, "unix") !=
		   SQLITE_OK) { /* the private copy's unix VFS, by name (the only one it
				   has: a VFS the program registers goes into its own SQLite) */
		return alloc_sqlite_fail(w, "cannot open");
	}
	if (!sq_same_file(w->path, ident)) {
		alloc_fmt(w->err, w->errlen, "snapshot %s: replaced by another file while opening; left untouched",
			  w->path);
		return -2;
	}
	sq_busy_timeout(w, 10000);
	/* No fsync: a snapshot file is a record of the run, as heaptrack's
	** and massif's files are (neither syncs).  A process killed in the
	** middle of a store still leaves the file whole (the journal rolls
	** it back); only a crash of the system could lose the last stores.
	** A page cache of 64 KiB, not SQLite's 2 MiB: a store appends, so its
	** pages are written about once either way (2,210 writes for 1 M blocks,
	** 2,184 with 2 MiB), and the cache is in the program's resident set
	** while the heap is at its peak (issue 29: bench/launcher_rss.sh).
	** SQLite then writes pages into the file before COMMIT; a store that
	** fails after that is rolled back by sq_after_failure. */
	int rc = sq_exec(w, "PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-64");
	if (rc == SQLITE_NOTADB) /* it reads the schema */
		alloc_fmt(w->err, w->errlen, "snapshot %s: not an SQLite database; left untouched", w->path);
	return rc == SQLITE_OK ? 0 : rc == SQLITE_NOTADB ? -1 : alloc_sqlite_fail(w, "cannot write");
}

static bool sq_kept_open(void)
{
	return sq_kept.db || sq_kept.linked;
}

static void sq_kept_close(void)
{
	if (sq_kept.linked) /* the launcher closes its connection */
		alloc_sqlite_link_close(&sq_kept.link);
	for (unsigned i = 0; !sq_kept.linked && i < SQ_KEPT_STMTS && sq_kept.sql[i]; i++)
		sqlite3_finalize(sq_own(sq_kept.st[i]));
	if (sq_kept.db)
		sqlite3_close(sq_kept.db);
	alloc_sqlite_segs_forget(&sq_kept);
	memset(&sq_kept, 0, sizeof sq_kept);
}

/* The calling thread (the service thread, with a descriptor table of its
** own) keeps its connection to snapshot=PATH open between stores. */
void alloc_sqlite_keep_here(void)
{
	sq_keep_here = true;
}

/* The calling thread keeps it no more and is about to end (the service
** thread stopped for a seccomp filter, an unshare or a setns): the
** connection is closed here, in the table its descriptors are in, not
** left for a later store whose table has none of them (it failed with
** "disk I/O error"). */
void alloc_sqlite_kept_release(void)
{
	if (!sq_keep_here)
		return;
	sq_keep_here = false;
	pthread_mutex_lock(&sq_store_lock);
	if (sq_kept_open() && sq_kept.pid == getpid())
		sq_kept_close();
	pthread_mutex_unlock(&sq_store_lock);
}

/* Store into the kept connection when it is still PATH's (0: not kept,
** w->db NULL), else open PATH (and keep it when `keep`). */
static int sq_store_file(sq_writer_t *w, alloc_snap_t *im, bool keep)
{
	static sq_link_t own; /* a store's own link to the launcher (not kept) */
	if (sq_kept_open() && sq_kept.pid != getpid())
		memset(&sq_kept, 0, sizeof sq_kept); /* a child's copy: not in its table */
	if (sq_kept.linked && alloc_seccomp_refuses(ALLOC_SC_STORE_LINK))
		sq_kept_close(); /* a filter holds this thread now: stores run here */
	if (keep && sq_kept_open() && !strcmp(sq_kept.path, w->path) && sq_same_file(w->path, &sq_kept.ident)) {
		w->db = sq_kept.db;
		w->link = sq_kept.linked ? &sq_kept.link : NULL;
		w->kept = &sq_kept;
		int id = sq_store_locked(w, im);
		if (id < 0 && id != SQ_BUSY) {
			sq_after_failure(w, false, true);
			sq_kept_close();
		}
		return id;
	}
	if (keep && sq_kept_open())
		sq_kept_close(); /* another file now */
	bool created = false;
	sq_ident_t ident;
	if (sq_prepare_file(w->path, &created, &ident, w->err, w->errlen) < 0)
		return -1;
	/* the launcher stores it when it listens, else the process's SQLite */
	sq_link_t *link = keep ? &sq_kept.link : &own;
	bool linked = alloc_sqlite_link_connect(link) == 0;
	int id = sq_open(w, &ident, linked ? link : NULL);
	if (id == -2)
		created = false, id = -1;
	keep = keep && id == 0 && strlen(w->path) < sizeof sq_kept.path;
	if (keep) {
		sq_kept.db = w->db;
		sq_kept.linked = linked;
		strcpy(sq_kept.path, w->path);
		sq_kept.ident = ident;
		sq_kept.pid = getpid();
		w->kept = &sq_kept;
	}
	bool opened = id == 0;
	if (opened)
		id = sq_store_locked(w, im);
	if (id < 0 && id != SQ_BUSY) /* busy: another process is filling it */
		sq_after_failure(w, created, opened);
	if (keep && id < 0 && id != SQ_BUSY)
		sq_kept_close();
	else if (!keep && linked)
		alloc_sqlite_link_close(link);
	else if (!keep && w->db)
		sqlite3_close(w->db);
	return id;
}

/* One attempt, under the store lock. */
static int sq_store_once(sq_writer_t *w, alloc_snap_t *im, bool keep)
{
	int id = -1;
	pthread_mutex_lock(&sq_store_lock);
	sq_storing = true;
	if (sq_forked_mid_store)
		alloc_fmt(w->err, w->errlen, "snapshot %s: not stored: this process was forked by a signal "
					     "handler in the middle of a snapshot store, SQLite's state is not whole",
			  w->path);
	else
		id = sq_store_file(w, im, keep);
	if (id < 0 && id != SQ_BUSY && w->link && alloc_sqlite_link_lost()) {
		/* the launcher ended in the middle of the store (killed): its
		** transaction is gone, the process stores it itself */
		*w = (sq_writer_t){.err = w->err, .errlen = w->errlen, .path = w->path};
		id = sq_store_file(w, im, keep);
	}
	sq_storing = false;
	pthread_mutex_unlock(&sq_store_lock);
	return id;
}

/* The service thread: a file another process is storing into is not
** waited for (ALLOC_SQ_BUSY); it tries again later. */
static __thread bool sq_no_wait ALLOC_TLS_MODEL;

void alloc_sqlite_no_wait(bool on)
{
	sq_no_wait = on;
}

#define SQ_WAIT_NS 10000000000LL   /* another process's stores, at most */
#define SQ_NAP_MAX_NS 5000000L     /* between two attempts, at most */

int alloc_sqlite_store(const char *path, alloc_snap_t *im, bool keep, char *err, size_t errlen)
{
	sq_writer_t w = {.err = err, .errlen = errlen, .path = path};
	int saved_errno = errno, id = -1;
	alloc_xfsz_t mask;
	alloc_guard_enter();
	alloc_sys_xfsz_block(&mask); /* SQLite sees EFBIG and the store is rolled back */
	pthread_once(&sq_fork_once, sq_fork_register);
	int64_t deadline = 0;
	long nap = 100000;
	bool sorted = !im->with_map || alloc_snap_sort_unique(im); /* before the totals are written */
	if (!sorted)
		alloc_fmt(err, errlen, "snapshot %s: not stored: cannot sort the capture in its temporary file: %s",
			  path, strerror(errno));
	while (sorted && (id = sq_store_once(&w, im, keep && sq_keep_here)) == SQ_BUSY) {
		int64_t now = alloc_snap_now(CLOCK_MONOTONIC);
		if (sq_no_wait) {
			id = ALLOC_SQ_BUSY;
			break;
		}
		if (!deadline) {
			deadline = now + SQ_WAIT_NS;
		} else if (now > deadline) {
			alloc_fmt(err, errlen, "snapshot %s: cannot start a transaction: another process kept "
					       "the file locked for 10 s", path);
			id = -1;
			break;
		}
		struct timespec t = {0, nap};
		syscall(SYS_nanosleep, &t, NULL); /* no lock held: a fork goes on meanwhile */
		nap = nap * 2 < SQ_NAP_MAX_NS ? nap * 2 : SQ_NAP_MAX_NS;
	}
	alloc_snap_spill_detach(im); /* this thread's descriptor; a retry opens it again */
	/* not only after a failed store: SQLite may meet EFBIG and still
	** commit (a journal it could not grow), leaving our SIGXFSZ pending */
	alloc_sys_xfsz_restore(&mask);
	alloc_guard_exit();
	errno = saved_errno;
	return id;
}
