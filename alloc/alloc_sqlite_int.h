/*
** alloc_sqlite_int.h — shared by the snapshot store (alloc_sqlite.c) and the
** rows it writes (alloc_sqlite_rows.c): the writer a store passes round,
** the kept connection it may come from, and the statement helpers.  Kept
** out of alloc_int.h so that only these two files see <sqlite3.h>.
*/
#ifndef ALLOC_SQLITE_INT_H
#define ALLOC_SQLITE_INT_H

#include "alloc_int.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <sys/types.h>
#include "meminst-hash.h"

#pragma GCC visibility push(hidden)

/* A file's identity (fstat's device and inode). */
typedef struct sq_ident_s {
	dev_t dev;
	ino_t ino;
} sq_ident_t;

/* A statement: SQLite's own (sqlite3_stmt *), or through a link its number
** (alloc_sqlite_link.c), as a pointer; only alloc_sqlite.c looks inside. */
typedef struct sq_stmt_s sq_stmt_t;

/* A connection to the launcher's store service (alloc_sqlite_link.c). */
typedef struct sq_link_s {
	int fd;          /* -1: none */
	uint32_t stmts;  /* statements numbered so far */
	int rc, ext;     /* the last reply's result codes (SQLite's) */
	bool held;       /* it reported an earlier row's failure */
	bool broken;     /* the connection failed */
	char msg[256];   /* the last reply's message */
} sq_link_t;

#define SQ_KEPT_STMTS 48
/* Rows stored once while they do not change (segment, module): a reader
** takes a snapshot without them from the latest earlier snapshot of the
** same process that has them (meminst-snapshot(5)). */
typedef struct sq_same_s {
	int64_t id;     /* the snapshot that has them (0: none yet) */
	uint64_t hash;  /* modules: a hash of them */
	/* segments: the mappings as a reader rebuilds them at id, in
	** sq_segs_kept[buf][0..n) of alloc_sqlite_segs.c (n 0: none kept, no
	** room for them: the next store stores them all) */
	size_t n;
	unsigned buf;
	/* segments: the stored rows' resident bytes, added up */
	int64_t resident;
} sq_same_t;

/* FNV-1a, folded into h. */
#define sq_hash meminst_fnv
#define SQ_HASH_START MEMINST_FNV_START

/* The status and name rows stored as their changes (alloc_sqlite_carry.c):
** the units a snapshot stores rows of, per entry. */
enum { SQ_U_STATUS, SQ_U_EVENT, SQ_U_NAME, SQ_U_HIST, SQ_U_FRAMES, SQ_U_LOAD, SQ_UNITS };
typedef struct sq_carry_s {
	int64_t id;         /* the snapshot stored (0: nothing kept to compare with) */
	int64_t base;       /* its chain's base: the latest snapshot stored whole */
	uint64_t proc;      /* the base's exe and cmdline, hashed */
	uint64_t base_units, rows; /* units the base stored; units stored since */
	uint64_t length;    /* snapshots of the chain after the base */
	uint32_t n[ALLOC_K_COUNT]; /* entries of each kind at id */
	unsigned buf;       /* the units' hashes at id (alloc_sqlite_carry.c) */
	bool delta;         /* a writer's: this store stores the changes */
} sq_carry_t;

typedef struct sq_kept_s {
	sqlite3 *db;      /* or, with `linked`, the launcher's through link */
	bool linked;
	sq_link_t link;
	char path[4096];
	sq_ident_t ident;
	pid_t pid;
	bool frames_made, class_load_made, events_made; /* the optional tables exist */
	bool segment_rss_made; /* segment has the smaps columns */
	bool regions_made;     /* the region table exists */
	/* the last snapshot whose segment and module rows this connection
	** stored, and what they were: an unchanged map is not stored again,
	** a changed one as its changes (segment_delta) */
	sq_same_t segments, modules;
	int64_t smaps_ns; /* when a store last read smaps (CLOCK_MONOTONIC) */
	/* the /proc/self/maps text last found to list segments.id's mappings
	** (alloc_sqlite_segs.c): the same text again is not parsed again */
	char *maps_text;
	size_t maps_cap, maps_len;
	int64_t maps_id;
	/* a store's read of maps or smaps and the rows parsed from it, kept
	** for the next store (alloc_sqlite_segs.c) */
	char *read_buf;
	size_t read_cap;
	void *segs;
	size_t segs_bytes;
	/* the loader's counts of loads and unloads (dl_phdr_info) when the
	** modules last hashed to loads_hash: the same counts, the same list */
	unsigned long long loads_adds, loads_subs;
	uint64_t loads_hash;
	bool loads_known;
	sq_carry_t carry; /* the status and name rows it stored last */
	const char *sql[SQ_KEPT_STMTS];
	sq_stmt_t *st[SQ_KEPT_STMTS];
} sq_kept_t;

/* Queries a store through a kept link asks with its BEGIN, their values
** taken when the store asks them (alloc_sqlite.c, sq_begin): the latest
** snapshot with segment rows, with module rows. */
#define SQ_SQL_LATEST_SEGMENT "SELECT coalesce(max(snapshot), 0) FROM segment"
#define SQ_SQL_LATEST_MODULE "SELECT coalesce(max(snapshot), 0) FROM module"
enum { SQ_PREFETCH = 2 };

typedef struct sq_writer_s {
	sqlite3 *db;     /* the process's own SQLite, or */
	sq_link_t *link; /* the launcher's (then db is NULL) */
	int64_t id;
	char *err;
	size_t errlen;
	const char *path;
	sq_kept_t *kept; /* the kept connection's statements, or NULL */
	sq_same_t segments, modules; /* stored by this write, once committed */
	sq_carry_t carry;
	struct {
		const char *sql; /* NULL: taken, or none */
		int64_t value;
	} prefetched[SQ_PREFETCH];
} sq_writer_t;

/* "alloc_sqlite.c": statements (from the kept connection's cache, when
** there is one) and their errors, in the writer's err. */
int alloc_sqlite_fail(sq_writer_t *w, const char *what);
int alloc_sqlite_exec(sq_writer_t *w, const char *sql);
void alloc_sqlite_release(sq_writer_t *w, sq_stmt_t *st);

/* "alloc_sqlite_heap.c": SQLite's memory (SQLITE_CONFIG_MALLOC) */
extern const sqlite3_mem_methods alloc_sqlite_heap_methods;
/* Bind from a format ('i' int64, 's' string or NULL, 'b' pointer and size_t),
** step and reset: 0, or -1 with err set (through a link, a failure may
** come out at a later call instead: the store fails there). */
int alloc_sqlite_row(sq_writer_t *w, sq_stmt_t *st, const char *fmt, ...);
sq_stmt_t *alloc_sqlite_prepare(sq_writer_t *w, const char *sql);
int64_t alloc_sqlite_query_int(sq_writer_t *w, const char *sql); /* -1: failed */

/* "alloc_sqlite_segs.c": the resident bytes by /proc/self/statm, -1 if unread. */
int64_t alloc_sqlite_resident(void);
void alloc_sqlite_segs_forget(sq_kept_t *kept); /* its connection closes */

/* "alloc_sqlite_rows.c": each table's rows; 0, or -1 with err set. */
int alloc_sqlite_write_process(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_rss(sq_writer_t *w);
int alloc_sqlite_write_since(sq_writer_t *w);
int alloc_sqlite_write_tables(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_frames(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_class_load(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_leaks(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_segments(sq_writer_t *w);
int alloc_sqlite_write_regions(sq_writer_t *w, const alloc_snap_t *im);
int alloc_sqlite_write_modules(sq_writer_t *w);
int alloc_sqlite_write_blocks(sq_writer_t *w, alloc_snap_t *im);

/* "alloc_sqlite_link.c": the launcher's store service.  Results are
** SQLite's codes, or -1 when the connection failed (l->msg says so). */
int alloc_sqlite_link_connect(sq_link_t *l); /* 0, or -1: store in the process */
void alloc_sqlite_link_close(sq_link_t *l);
bool alloc_sqlite_link_lost(void); /* a connection failed since the last call */
/* a request and its reply (OPEN, EXEC, QUERY, PREPARE) */
int alloc_sqlite_link_call(sq_link_t *l, uint32_t op, uint32_t stmt, const char *text, int64_t *value);
int alloc_sqlite_link_send(sq_link_t *l, uint32_t op, uint32_t stmt, const char *text); /* no reply read */
int alloc_sqlite_link_read(sq_link_t *l, int64_t *value); /* the next reply */
uint32_t alloc_sqlite_link_prepare(sq_link_t *l, const char *sql); /* 0: failed */
int alloc_sqlite_link_row(sq_link_t *l, uint32_t stmt, const char *fmt, va_list ap);
void alloc_sqlite_link_journal(sq_link_t *l, char *buf, size_t len);

/* "alloc_sqlite_carry.c" */
int alloc_sqlite_carry_begin(sq_writer_t *w, const alloc_snap_t *im, const char *exe, const char *cmd,
			     bool *same_proc);
bool alloc_sqlite_carry_store(sq_writer_t *w, unsigned k, uint32_t id, unsigned u);

#pragma GCC visibility pop

#endif /* ALLOC_SQLITE_INT_H */
