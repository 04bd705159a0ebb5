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
#define MEMINST_SNAPSHOT_VERSION 1
#define MEMINST_SNAPSHOT_MIN_READABLE 1

/* The status kinds as stored in status.kind. */
#define MEMINST_SNAPSHOT_KINDS "total", "allocators", "classes", "types", "threads"

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
	"  exe TEXT NOT NULL,\n"                                                  \
	"  cmdline TEXT NOT NULL,\n"           /* arguments joined by spaces   */ \
	"  mode TEXT NOT NULL,\n"              /* 'mis' or 'mim'               */ \
	"  backend TEXT NOT NULL,\n"           /* 'system' or 'jemalloc'       */ \
	"  header_size INTEGER NOT NULL,\n"    /* block_header_size            */ \
	"  time_ns INTEGER NOT NULL,\n"        /* CLOCK_REALTIME at capture    */ \
	"  elapsed_ns INTEGER NOT NULL,\n"     /* since libmeminst started     */ \
	"  pause_ns INTEGER NOT NULL,\n"       /* the program was stopped this long */ \
	"  seq INTEGER NOT NULL,\n"            /* allocations counted so far   */ \
	"  blocks INTEGER NOT NULL,\n"         /* rows in block for it (0 for status) */ \
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
	/* the process's mappings (/proc/PID/maps) */                             \
	"CREATE TABLE IF NOT EXISTS segment(\n"                                   \
	"  snapshot INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,\n" \
	"  perms TEXT NOT NULL, offset INTEGER NOT NULL, path TEXT NOT NULL,\n"   \
	"  PRIMARY KEY(snapshot, start)) WITHOUT ROWID;\n"                        \
	/* loaded modules, for offline symbolisation: load bias and build-id */   \
	"CREATE TABLE IF NOT EXISTS module(\n"                                    \
	"  snapshot INTEGER NOT NULL, base INTEGER NOT NULL, path TEXT NOT NULL,\n" \
	"  build_id TEXT,\n"                                                      \
	"  PRIMARY KEY(snapshot, base)) WITHOUT ROWID;\n"                         \
	/* the live blocks ('map' snapshots only); seq: the block's allocation   \
	   number, so smaller is older */                                         \
	"CREATE TABLE IF NOT EXISTS block(\n"                                     \
	"  snapshot INTEGER NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL,\n" \
	"  type INTEGER NOT NULL, thread INTEGER NOT NULL, allocator INTEGER NOT NULL,\n" \
	"  seq INTEGER NOT NULL,\n"                                               \
	"  PRIMARY KEY(snapshot, addr)) WITHOUT ROWID;\n"

#endif /* MEMINST_SNAPSHOT_H */
