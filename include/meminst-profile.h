/*
** meminst-profile.h — the SQLite schema of meminst profile databases.
**
** `inspect profile TRACE -o FILE` writes the raw profile of a trace (fprof's
** step 2): per thread, per function and per caller->called pair the count
** of calls (CNT), the accumulated time (ACC) and the own time (OWN), with
** the functions already named, so that `inspect analyse FILE` needs neither
** the trace nor the module files.  The layout is described in
** meminst-profile(5).
**
** Versioning: PRAGMA application_id is MEMINST_PROFILE_APP_ID, the same as
** snapshot databases ("MEMI"); a file that holds only a profile has PRAGMA
** user_version MEMINST_PROFILE_USER_VERSION, a family apart from the
** snapshot schema versions.  The version of the profile tables themselves
** is profile_meta 'schema': the tables are all named profile_* so that they
** can live in a combined session database too.  A reader accepts schema
** MEMINST_PROFILE_MIN_READABLE up to MEMINST_PROFILE_VERSION.
**
** Units: times in nanoseconds (of the trace's clock: wall or thread CPU
** time), addresses as integers.  Function ids 0, 1 and 2 are the pseudo
** functions `undefined` (the caller of calls whose entry was not traced),
** `suspend` and `<alloc>`.
*/
#ifndef MEMINST_PROFILE_H
#define MEMINST_PROFILE_H

#define MEMINST_PROFILE_APP_ID 0x4d454d49 /* "MEMI", as snapshots */
#define MEMINST_PROFILE_VERSION 1
#define MEMINST_PROFILE_MIN_READABLE 1
/* user_version of a profile-only file: "PR" and the schema version */
#define MEMINST_PROFILE_USER_VERSION (0x50520000 | MEMINST_PROFILE_VERSION)
#define MEMINST_PROFILE_USER_FAMILY(v) (((unsigned)(v) & 0xffff0000u) == 0x50520000u)

/* Memory allocated, from the trace's <alloc> events: requested bytes and
** blocks while the function was on top of the stack (own) or anywhere on it
** (acc, counted once however many instances were on the stack). */
#define MEMINST_PROFILE_MEM_COLUMNS                                             \
	"  own_bytes INTEGER NOT NULL DEFAULT 0,\n"                              \
	"  own_blocks INTEGER NOT NULL DEFAULT 0,\n"                             \
	"  acc_bytes INTEGER NOT NULL DEFAULT 0,\n"                              \
	"  acc_blocks INTEGER NOT NULL DEFAULT 0,\n"

#define MEMINST_PROFILE_SCHEMA                                                  \
	/* key/value: schema, source, clock (wall|cpu), pid, exe, cmdline,        \
	** ns_per_tick, events, lost, untraced, threads, cnt, acc_ns, own_ns */  \
	"CREATE TABLE profile_meta(\n"                                            \
	"  key TEXT PRIMARY KEY,\n"                                               \
	"  value\n"                                                               \
	") WITHOUT ROWID;\n"                                                      \
	"CREATE TABLE profile_function(\n"                                        \
	"  id INTEGER PRIMARY KEY,\n"          /* 0 1 2: the pseudo functions  */ \
	"  addr INTEGER NOT NULL,\n"           /* in the traced process        */ \
	"  name TEXT NOT NULL,\n"              /* demangled, or module+0xOFF   */ \
	"  file TEXT,\n"                                                          \
	"  line INTEGER,\n"                                                       \
	"  module TEXT\n"                      /* basename of the module file  */ \
	");\n"                                                                    \
	"CREATE TABLE profile_thread(\n"                                          \
	"  thread INTEGER PRIMARY KEY,\n"      /* trace thread number          */ \
	"  tid INTEGER NOT NULL,\n"                                               \
	"  parent INTEGER NOT NULL,\n"         /* creating thread, 0 unknown   */ \
	"  name TEXT,\n"                                                          \
	"  cnt INTEGER NOT NULL,\n"            /* sum of the functions' CNT    */ \
	"  acc_ns INTEGER NOT NULL,\n"         /* first to last time stamp     */ \
	"  own_ns INTEGER NOT NULL\n"          /* sum of the functions' OWN    */ \
	");\n"                                                                    \
	/* per thread and function: the function's totals */                      \
	"CREATE TABLE profile_stat(\n"                                            \
	"  thread INTEGER NOT NULL,\n"                                            \
	"  function INTEGER NOT NULL,\n"                                          \
	"  cnt INTEGER NOT NULL,\n"                                               \
	"  acc_ns INTEGER NOT NULL,\n"                                            \
	"  own_ns INTEGER NOT NULL,\n"                                            \
	MEMINST_PROFILE_MEM_COLUMNS                                               \
	"  PRIMARY KEY(thread, function)\n"                                       \
	") WITHOUT ROWID;\n"                                                      \
	/* per thread and caller->called pair: the called function's figures   \
	** while called from that caller */                                       \
	"CREATE TABLE profile_pair(\n"                                            \
	"  thread INTEGER NOT NULL,\n"                                            \
	"  caller INTEGER NOT NULL,\n"                                            \
	"  called INTEGER NOT NULL,\n"                                            \
	"  cnt INTEGER NOT NULL,\n"                                               \
	"  acc_ns INTEGER NOT NULL,\n"                                            \
	"  own_ns INTEGER NOT NULL,\n"                                            \
	MEMINST_PROFILE_MEM_COLUMNS                                               \
	"  PRIMARY KEY(thread, caller, called)\n"                                 \
	") WITHOUT ROWID;\n"

#endif
