/*
** meminst-session.h — the SQLite schema of meminst session databases.
**
** A session database is what `meminst -o FILE -- PROGRAM` leaves: one file
** per run, holding every process the program started (fork and exec
** included).  It is a snapshot database first (meminst-snapshot.h: the same
** application_id, user_version and tables, so every `inspect` command that
** reads snapshots reads a session), with the snapshots of all processes
** numbered in the order they were stored, plus the tables below: the run's
** facts and one row per process.  Time profiles and allocation samples are
** added by the profile part (meminst-profile.h) when the run recorded them.
**
** The memory timeline is the snapshots with trigger 'interval' (status
** only, every kind), ordered by pid and elapsed_ns.
*/
#ifndef MEMINST_SESSION_H
#define MEMINST_SESSION_H

#define MEMINST_SESSION_SCHEMA                                                     \
	/* one row: the run */                                                     \
	"CREATE TABLE IF NOT EXISTS session_run(\n"                                \
	"  id INTEGER PRIMARY KEY CHECK (id = 1),\n"                               \
	"  command TEXT NOT NULL,\n"          /* the program as given           */ \
	"  argv TEXT NOT NULL,\n"             /* arguments joined by spaces     */ \
	"  cwd TEXT NOT NULL,\n"                                                   \
	"  pid INTEGER NOT NULL,\n"           /* of the program's first process */ \
	"  start_ns INTEGER NOT NULL,\n"      /* CLOCK_REALTIME at the start    */ \
	"  duration_ns INTEGER NOT NULL,\n"   /* start to the program's exit    */ \
	"  exit_code INTEGER,\n"              /* NULL when killed by a signal   */ \
	"  exit_signal INTEGER,\n"            /* NULL when it exited            */ \
	"  mode TEXT NOT NULL,\n"             /* off, mis or mim                */ \
	"  backend TEXT NOT NULL,\n"          /* system or jemalloc             */ \
	"  trace_clock TEXT,\n"               /* wall, cpu or NULL (no tracing) */ \
	"  sample_hz INTEGER,\n"              /* NULL: no timer sampling        */ \
	"  sample_clock TEXT,\n"                                                   \
	"  alloc_sample INTEGER,\n"           /* mean bytes, NULL: none         */ \
	"  interval_ns INTEGER,\n"            /* timeline period, NULL: none, 0: auto */ \
	"  meminst_env TEXT NOT NULL,\n"      /* the MEMINST value the program got */ \
	"  writer TEXT NOT NULL\n"            /* 'meminst VERSION'              */ \
	");\n"                                                                     \
	/* one row per process of the run that left data */                        \
	"CREATE TABLE IF NOT EXISTS session_process(\n"                            \
	"  pid INTEGER PRIMARY KEY,\n"                                             \
	"  ppid INTEGER NOT NULL,\n"                                               \
	"  exe TEXT NOT NULL,\n"                                                   \
	"  cmdline TEXT NOT NULL,\n"                                               \
	"  snapshots INTEGER NOT NULL,\n"     /* how many it stored             */ \
	"  traced INTEGER NOT NULL\n"         /* 1 when it left a trace file    */ \
	");\n"                                                                     \
	/* lines libmeminst could not write to the program's stderr (closed or \
	** replaced): a failed snapshot, a seccomp filter; `inspect report`     \
	** shows them */                                                          \
	"CREATE TABLE IF NOT EXISTS session_note(\n"                               \
	"  pid INTEGER NOT NULL,\n"                                                \
	"  seq INTEGER NOT NULL,\n"                                                \
	"  line TEXT NOT NULL,\n"                                                  \
	"  PRIMARY KEY(pid, seq)\n"                                               \
	");\n"

#endif
