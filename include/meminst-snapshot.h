/*
** meminst-snapshot.h — the SQLite schema of meminst snapshot databases.
**
** A snapshot database holds any number of snapshots of one or more
** processes, numbered 1, 2, … in the order they were stored.  Every row of
** every table but meminst_meta carries the number of its snapshot, so a
** snapshot can be read alone.  libmeminst writes these files and `inspect`
** reads them; the layout is described in meminst-snapshot(5).
**
** Versioning: PRAGMA application_id is MEMINST_SNAPSHOT_APP_ID (so `file`
** and our readers can tell a meminst database from another SQLite file),
** and PRAGMA user_version is the schema version.  A reader accepts any
** version from MEMINST_SNAPSHOT_MIN_READABLE up to the version it knows;
** a writer adds snapshots only to a database of exactly its version.
**
** Units: sizes in bytes (requested sizes, headers not counted), addresses
** and sites as integers (SQLite stores 64-bit signed: addresses of user
** space fit), times in nanoseconds.
*/
#ifndef MEMINST_SNAPSHOT_H
#define MEMINST_SNAPSHOT_H

#define MEMINST_SNAPSHOT_APP_ID 0x4d454d49 /* "MEMI" */
#define MEMINST_SNAPSHOT_VERSION 3
#define MEMINST_SNAPSHOT_MIN_READABLE 1

/* The status kinds as stored in status.kind. */
#define MEMINST_SNAPSHOT_KINDS "total", "allocators", "classes", "types", "threads"

/* The stack of a type made by MEMINST=site_depth=N|user: its return
** addresses, depth 0 (the call into the allocator, the type's site) first.
** Added to schema 2 without a new version: a writer creates the table in
** an older file when it has a row to put there, and a reader treats a
** missing table as no stacks. */
#define MEMINST_SNAPSHOT_TYPE_FRAME_TABLE                                         \
	"CREATE TABLE IF NOT EXISTS type_frame(\n"                                \
	"  snapshot INTEGER NOT NULL, type INTEGER NOT NULL, depth INTEGER NOT NULL,\n" \
	"  addr INTEGER NOT NULL,\n"                                              \
	"  PRIMARY KEY(snapshot, type, depth)) WITHOUT ROWID;\n"

/* The load bias each automatic class's module had when its sites were
** named, so that a reader finds the sites of a module unloaded
** (dlclose) before the snapshot, which the module table no longer lists,
** in the file (class.module) at site - bias.  Added to schema 2 without a
** new version, as type_frame. */
#define MEMINST_SNAPSHOT_CLASS_LOAD_TABLE                                         \
	"CREATE TABLE IF NOT EXISTS class_load(\n"                               \
	"  snapshot INTEGER NOT NULL, class INTEGER NOT NULL, bias INTEGER NOT NULL,\n" \
	"  PRIMARY KEY(snapshot, class)) WITHOUT ROWID;\n"

/* A leak check (mim: at exit, with leak_check=on at every map snapshot but
** peaks, on request through the control channel): one leak_check row per
** checked snapshot with the bytes and blocks of each of memcheck's classes
** and what the scan saw, and one leak_block row per block that is not
** still reachable (class 1 definitely lost, 2 indirectly lost, 3 possibly
** lost; MEMINST_LEAK_CLASS_NAMES).  A block of a checked snapshot without a
** row is still reachable.  Added to schema 2 without a new version, as
** type_frame: a snapshot without a leak_check row was not checked.
** Added after them, the same way (a file without them: not known):
** leak_clique, one row per definitely lost block from which indirectly
** lost blocks hang (memcheck's "(D direct, I indirect)": their bytes and
** blocks; each indirectly lost block counts once, in the clique of the
** lost block that reached it first), and leak_cpu, the CPU time of the
** thread that made the scan. */
#define MEMINST_LEAK_CLASS_NAMES "still reachable", "definitely lost", "indirectly lost", "possibly lost"
#define MEMINST_SNAPSHOT_LEAK_TABLES                                              \
	"CREATE TABLE IF NOT EXISTS leak_check(\n"                               \
	"  snapshot INTEGER PRIMARY KEY,\n"                                      \
	"  definite_bytes INTEGER NOT NULL, definite_blocks INTEGER NOT NULL,\n" \
	"  indirect_bytes INTEGER NOT NULL, indirect_blocks INTEGER NOT NULL,\n" \
	"  possible_bytes INTEGER NOT NULL, possible_blocks INTEGER NOT NULL,\n" \
	"  reachable_bytes INTEGER NOT NULL, reachable_blocks INTEGER NOT NULL,\n" \
	"  scanned_bytes INTEGER NOT NULL,\n"  /* roots and blocks read */       \
	"  threads INTEGER NOT NULL,\n"        /* the process's, meminst's not counted */ \
	"  threads_unstopped INTEGER NOT NULL,\n" /* stack only: registers not seen */ \
	"  scan_ns INTEGER NOT NULL);\n"                                         \
	"CREATE TABLE IF NOT EXISTS leak_block(\n"                               \
	"  snapshot INTEGER NOT NULL, addr INTEGER NOT NULL, class INTEGER NOT NULL,\n" \
	"  PRIMARY KEY(snapshot, addr)) WITHOUT ROWID;\n"                        \
	"CREATE TABLE IF NOT EXISTS leak_clique(\n"                              \
	"  snapshot INTEGER NOT NULL, addr INTEGER NOT NULL,\n"                  \
	"  indirect_bytes INTEGER NOT NULL, indirect_blocks INTEGER NOT NULL,\n" \
	"  PRIMARY KEY(snapshot, addr)) WITHOUT ROWID;\n"                        \
	"CREATE TABLE IF NOT EXISTS leak_cpu(\n"                                 \
	"  snapshot INTEGER PRIMARY KEY, scan_cpu_ns INTEGER NOT NULL);\n"

/* Event counters (status_event: one row per entry of every kind with an
** allocation) and each type's log2 histogram of requested sizes
** (size_hist: bucket b counts requests of 2^b up to 2^(b+1)-1 bytes,
** bucket 0 also those of 0 bytes; buckets with no request have no row).
** Cumulative since the program started.  Added to schema 2 without a new
** version, as type_frame: a reader treats a missing table as a snapshot
** without events (older libmeminst). */
#define MEMINST_SNAPSHOT_EVENT_TABLES                                             \
	"CREATE TABLE IF NOT EXISTS status_event(\n"                              \
	"  snapshot INTEGER NOT NULL, kind TEXT NOT NULL, id INTEGER NOT NULL,\n" \
	"  calls INTEGER NOT NULL, allocated INTEGER NOT NULL,\n"                 \
	"  frees INTEGER NOT NULL, temporary INTEGER NOT NULL,\n"                 \
	"  reallocs INTEGER NOT NULL,\n"                                          \
	"  PRIMARY KEY(snapshot, kind, id)) WITHOUT ROWID;\n"                     \
	"CREATE TABLE IF NOT EXISTS size_hist(\n"                                 \
	"  snapshot INTEGER NOT NULL, type INTEGER NOT NULL, bucket INTEGER NOT NULL,\n" \
	"  count INTEGER NOT NULL,\n"                                             \
	"  PRIMARY KEY(snapshot, type, bucket)) WITHOUT ROWID;\n"                 \
	/* the process's resident set when the snapshot was stored, and its    \
	   highest so far (getrusage's ru_maxrss), in bytes */                  \
	"CREATE TABLE IF NOT EXISTS snapshot_rss(\n"                              \
	"  snapshot INTEGER PRIMARY KEY, rss INTEGER NOT NULL, max_rss INTEGER NOT NULL);\n" \
	/* a process started dormant: when it was first switched on (CLOCK_REALTIME \
	   ns), where its counting starts; no row: counted from its start */     \
	"CREATE TABLE IF NOT EXISTS snapshot_since(\n"                            \
	"  snapshot INTEGER PRIMARY KEY, since_ns INTEGER NOT NULL);\n"
#define MEMINST_SNAPSHOT_HIST_BUCKETS 48

/* The kernel's figures of each mapping, in bytes, from /proc/PID/smaps:
** rss (Rss), pss (Pss), private (Private_Clean + Private_Dirty), shared
** (Shared_Clean + Shared_Dirty), swap (Swap), anon_huge (AnonHugePages).
** Columns added to segment in schema 2 without a new version: a writer
** adds them to an older file's table (ALTER TABLE ... ADD COLUMN), and a
** reader takes a table without them, or a row with NULL in them, as
** mappings without the kernel's figures.  Segment rows are stored only
** when the mappings or their figures changed (meminst-snapshot(5)): a
** snapshot without rows has those of the latest earlier snapshot of the
** same process that has some, whose resident figures differ from its own
** by at most 1/256 of the process's resident set. */
#define MEMINST_SNAPSHOT_SEGMENT_RSS "rss", "pss", "private", "shared", "swap", "anon_huge"

/* The snapshots whose segment rows are only the mappings that changed
** since the previous snapshot of the same process with segment rows: a
** row replaces the mapping at its start, a row with end = start says the
** mapping there is gone; the list starts at the latest earlier snapshot
** of the process with rows and not in this table, which has them all
** (meminst-snapshot(5)).  Added to schema 2 without a new version: a
** file without it has every snapshot's rows whole. */
#define MEMINST_SNAPSHOT_SEGMENT_DELTA_TABLE                                      \
	"CREATE TABLE IF NOT EXISTS segment_delta(snapshot INTEGER PRIMARY KEY);\n"

/* Schema 3: the snapshots whose status and name rows are only those that
** changed since the previous snapshot of their chain, which starts at
** `base`, the latest earlier snapshot of the same process stored whole.
** Carried, per unit (rows keyed as below, without snapshot): status and
** status_event (kind, id), allocator, class, type and thread (id),
** size_hist and type_frame (type: a type's rows together), class_load
** (class); snapshot.exe and cmdline are NULL when they are the base's.
** A unit of a listed snapshot N is that of the latest snapshot of N's
** chain (base, and the snapshots listed with the same base, up to N) that
** has rows of it (meminst-snapshot(5)).  A snapshot not listed has all its
** rows. */
#define MEMINST_SNAPSHOT_DELTA_TABLE                                              \
	"CREATE TABLE IF NOT EXISTS snapshot_delta(snapshot INTEGER PRIMARY KEY,\n" \
	"  base INTEGER NOT NULL);\n"
/* The tables the units are carried in, each with its unit's columns. */
#define MEMINST_SNAPSHOT_CARRIED                                                  \
	"status", "kind, id", "status_event", "kind, id", "allocator", "id", "class", "id", "type", "id", \
	"thread", "id", "size_hist", "type", "type_frame", "type", "class_load", "class"

/* The mappings the program made itself through mmap, mmap64 and mremap
** (calls that reach libmeminst's exported names: not glibc's malloc, which
** maps inside libc), and the stacks glibc gave the threads the program's
** pthread_create made (kind MEMINST_REGION_STACK, the pthread_create call
** as site, while the thread runs), as they stand at a map snapshot: [start, end), the call site, the thread's tid, the kind
** (MEMINST_REGION_* bits) and the site's name, "function+0xoff (module)"
** or "0xoff (module)" (dladdr; "" when no module holds it).  munmap of
** part of a region leaves the rest; mremap moves it with its site.  Added
** to schema 2 without a new version, as type_frame; the program's own
** sbrk and brk move the break in regions of kind MEMINST_REGION_BRK
** (glibc's malloc grows its heap inside libc: none).  A file without it, or
** a snapshot without rows, has no regions known. */
#define MEMINST_REGION_FILE 1   /* a file mapped (else anonymous)  */
#define MEMINST_REGION_SHARED 2 /* MAP_SHARED                      */
#define MEMINST_REGION_STACK 4  /* MAP_STACK, or a thread's stack  */
#define MEMINST_REGION_BRK 8    /* the program's sbrk or brk: the break
				   (not in whole pages)            */
#define MEMINST_SNAPSHOT_REGION_TABLE                                             \
	"CREATE TABLE IF NOT EXISTS region(\n"                                   \
	"  snapshot INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,\n" \
	"  site INTEGER NOT NULL, tid INTEGER NOT NULL, kind INTEGER NOT NULL,\n" \
	"  name TEXT NOT NULL,\n"                                                \
	"  PRIMARY KEY(snapshot, start)) WITHOUT ROWID;\n"

#define MEMINST_SNAPSHOT_SCHEMA                                                   \
	"CREATE TABLE IF NOT EXISTS meminst_meta(\n"                              \
	"  key TEXT PRIMARY KEY,\n"                                               \
	"  value TEXT NOT NULL\n"                                                 \
	") WITHOUT ROWID;\n"                                                      \
	/* one row per stored snapshot */                                         \
	"CREATE TABLE IF NOT EXISTS snapshot(\n"                                  \
	"  id INTEGER PRIMARY KEY,\n"          /* 1, 2, …                      */ \
	"  content TEXT NOT NULL,\n"           /* 'map' or 'status'            */ \
	"  trigger TEXT NOT NULL,\n"           /* api exit signal interval peak control */ \
	"  pid INTEGER NOT NULL,\n"                                               \
	"  ppid INTEGER NOT NULL,\n"                                              \
	"  exe TEXT,\n"                        /* NULL: the chain base's (schema 3) */ \
	"  cmdline TEXT,\n"                    /* arguments joined by spaces   */ \
	"  mode TEXT NOT NULL,\n"              /* 'mis' or 'mim'               */ \
	"  backend TEXT NOT NULL,\n"           /* 'system' or 'jemalloc'       */ \
	"  header_size INTEGER NOT NULL,\n"    /* block_header_size            */ \
	"  time_ns INTEGER NOT NULL,\n"        /* CLOCK_REALTIME at capture    */ \
	"  elapsed_ns INTEGER NOT NULL,\n"     /* since libmeminst started     */ \
	"  pause_ns INTEGER NOT NULL,\n"       /* the program was stopped this long */ \
	"  seq INTEGER NOT NULL,\n"            /* allocations counted so far   */ \
	"  blocks INTEGER NOT NULL,\n"         /* live blocks (0 for status)   */ \
	"  bytes INTEGER NOT NULL\n"           /* their sizes added up         */ \
	");\n"                                                                    \
	"CREATE TABLE IF NOT EXISTS allocator(\n"                                 \
	"  snapshot INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,\n" \
	"  PRIMARY KEY(snapshot, id)) WITHOUT ROWID;\n"                           \
	/* module: the module path of an automatic class, NULL if registered */   \
	"CREATE TABLE IF NOT EXISTS class(\n"                                     \
	"  snapshot INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,\n" \
	"  module TEXT,\n"                                                        \
	"  PRIMARY KEY(snapshot, id)) WITHOUT ROWID;\n"                           \
	/* site: the call site of an automatic type, NULL if registered; name:   \
	   "function+0xoff (module)" or "0xoff (module)" for automatic types */  \
	"CREATE TABLE IF NOT EXISTS type(\n"                                      \
	"  snapshot INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,\n" \
	"  class INTEGER NOT NULL, site INTEGER,\n"                               \
	"  PRIMARY KEY(snapshot, id)) WITHOUT ROWID;\n"                           \
	MEMINST_SNAPSHOT_TYPE_FRAME_TABLE                                         \
	MEMINST_SNAPSHOT_CLASS_LOAD_TABLE                                         \
	MEMINST_SNAPSHOT_EVENT_TABLES                                             \
	MEMINST_SNAPSHOT_REGION_TABLE                                             \
	MEMINST_SNAPSHOT_SEGMENT_DELTA_TABLE                                      \
	MEMINST_SNAPSHOT_DELTA_TABLE                                              \
	"CREATE TABLE IF NOT EXISTS thread(\n"                                    \
	"  snapshot INTEGER NOT NULL, id INTEGER NOT NULL, tid INTEGER NOT NULL,\n" \
	"  name TEXT NOT NULL,\n"                                                 \
	"  PRIMARY KEY(snapshot, id)) WITHOUT ROWID;\n"                           \
	/* every entry of every kind, as meminst_status_read gives it */          \
	"CREATE TABLE IF NOT EXISTS status(\n"                                    \
	"  snapshot INTEGER NOT NULL, kind TEXT NOT NULL, id INTEGER NOT NULL,\n" \
	"  sizes_current INTEGER NOT NULL, sizes_max_since_last INTEGER NOT NULL,\n" \
	"  sizes_max_ever INTEGER NOT NULL,\n"                                    \
	"  blocks_current INTEGER NOT NULL, blocks_max_since_last INTEGER NOT NULL,\n" \
	"  blocks_max_ever INTEGER NOT NULL,\n"                                   \
	"  PRIMARY KEY(snapshot, kind, id)) WITHOUT ROWID;\n"                     \
	/* the process's mappings (/proc/PID/maps), with the kernel's         \
	   figures of each (/proc/PID/smaps; MEMINST_SNAPSHOT_SEGMENT_RSS) */   \
	"CREATE TABLE IF NOT EXISTS segment(\n"                                   \
	"  snapshot INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,\n" \
	"  perms TEXT NOT NULL, offset INTEGER NOT NULL, path TEXT NOT NULL,\n"   \
	"  rss INTEGER, pss INTEGER, private INTEGER, shared INTEGER,\n"          \
	"  swap INTEGER, anon_huge INTEGER,\n"                                    \
	"  PRIMARY KEY(snapshot, start)) WITHOUT ROWID;\n"                        \
	/* loaded modules, for offline symbolisation: load bias and build-id */   \
	"CREATE TABLE IF NOT EXISTS module(\n"                                    \
	"  snapshot INTEGER NOT NULL, base INTEGER NOT NULL, path TEXT NOT NULL,\n" \
	"  build_id TEXT,\n"                                                      \
	"  PRIMARY KEY(snapshot, base)) WITHOUT ROWID;\n"                         \
	/* the live blocks ('map' snapshots only), in chunks: one row per run  \
	   of up to MEMINST_SNAPSHOT_CHUNK blocks in address order; first: the  \
	   first block's address, count: blocks in data, data: the blocks     \
	   encoded as below.  Read them with the meminst_blocks() function of   \
	   the SQLite extension, or a decoder of the encoding below. */          \
	"CREATE TABLE IF NOT EXISTS block_chunk(\n"                               \
	"  snapshot INTEGER NOT NULL, first INTEGER NOT NULL, count INTEGER NOT NULL,\n" \
	"  data BLOB NOT NULL,\n"                                                \
	"  PRIMARY KEY(snapshot, first));\n"

/* Schema 1 kept the blocks one row each, in this table instead of
** block_chunk (readers still read it; seq: the block's allocation number,
** so smaller is older). */
#define MEMINST_SNAPSHOT_V1_BLOCK_TABLE                                           \
	"CREATE TABLE IF NOT EXISTS block(\n"                                     \
	"  snapshot INTEGER NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL,\n" \
	"  type INTEGER NOT NULL, thread INTEGER NOT NULL, allocator INTEGER NOT NULL,\n" \
	"  seq INTEGER NOT NULL,\n"                                               \
	"  PRIMARY KEY(snapshot, addr)) WITHOUT ROWID;\n"

/*
** The encoding of block_chunk.data (schema 2).  Each block is six unsigned
** LEB128 varints (7 bits a byte, low bits first, the top bit set on every
** byte but the last; at most 10 bytes):
**
**   addr - previous addr     (the previous of the first block is `first`,
**                             so its delta is 0; modulo 2^64)
**   size                     requested bytes
**   type, thread, allocator  the numbers of the type, thread and allocator tables
**   zigzag(seq - previous seq)  allocation number (the previous of the
**                             first block is 0); zigzag maps 0,-1,1,-2…
**                             to 0,1,2,3… (modulo 2^64)
**
** A chunk holds exactly `count` blocks and nothing after them.  A reader
** refuses (as damage) a count outside 1..MEMINST_SNAPSHOT_CHUNK_MAX, a
** varint longer than 10 bytes or cut short, and bytes left over.
*/
#define MEMINST_SNAPSHOT_CHUNK 1024       /* blocks per chunk libmeminst writes */
#define MEMINST_SNAPSHOT_CHUNK_MAX 65536  /* most blocks a reader accepts in one */
#define MEMINST_SNAPSHOT_BLOCK_MAX_BYTES 60 /* one block's encoding at most */

#include <stdint.h>

/* No block is larger: libmeminst refuses bigger requests (the size field
** of its headers).  A reader takes a larger size as damage. */
#define MEMINST_SNAPSHOT_SIZE_MAX (1ull << 47)

/* One block as the encoding carries it. */
struct meminst_snapshot_block {
	uint64_t addr, size, type, thread, allocator, seq;
};

static inline unsigned char *meminst_snapshot_put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* Append block b after *prev (addr and seq of the previous block, or
** {first, 0} at the start of a chunk); returns the end of what was written
** (at most MEMINST_SNAPSHOT_BLOCK_MAX_BYTES). */
static inline unsigned char *meminst_snapshot_put_block(unsigned char *p, struct meminst_snapshot_block *prev,
							const struct meminst_snapshot_block *b)
{
	uint64_t dseq = b->seq - prev->seq;
	p = meminst_snapshot_put_varint(p, b->addr - prev->addr);
	p = meminst_snapshot_put_varint(p, b->size);
	p = meminst_snapshot_put_varint(p, b->type);
	p = meminst_snapshot_put_varint(p, b->thread);
	p = meminst_snapshot_put_varint(p, b->allocator);
	p = meminst_snapshot_put_varint(p, (dseq << 1) ^ (uint64_t)-(int64_t)(dseq >> 63));
	prev->addr = b->addr;
	prev->seq = b->seq;
	return p;
}

#endif /* MEMINST_SNAPSHOT_H */
