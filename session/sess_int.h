/*
** sess_int.h — internal interfaces of the `meminst` launcher.
**
**   meminst.c     the command line, the program's environment, the run
**   sess_run.c    starting the program, forwarding signals, waiting
**   sess_lib.c    checking that the library to preload is a libmeminst
**   sess_store.c  the session database: run facts, processes, snapshots
**   sess_storer.c running the processes' snapshot stores while they run
**   sess_parts.c  reading the parts' files: opened safely, trace headers
**                 gathered from the parts directory the processes wrote to
**
** The program and every process it starts write their parts (a snapshot
** database and a trace file per process, named by pid) into a private
** directory beside the output file; when the program has ended the launcher
** gathers them into the one session database and removes the directory.
*/
#ifndef SESS_INT_H
#define SESS_INT_H

#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the command line asked for. */
struct sess_opts {
	const char *output;      /* -o FILE                                  */
	bool force;              /* -f: replace an existing session file      */
	bool quiet;              /* -q: no summary line                      */
	const char *mode;        /* "off", "mis", "mim"                      */
	const char *backend;     /* NULL: the library's default              */
	const char *trace_clock; /* NULL, "wall", "cpu"                      */
	bool trace_sites;        /* --trace-sites: MEMINST trace_sites=on     */
	unsigned sample_hz;      /* 0: none                                  */
	const char *sample_clock;
	unsigned sample_depth;     /* --sample-depth; 0: the library's default */
	const char *site_depth;    /* --site-depth=N|user, or NULL             */
	const char *site_skip;     /* --site-skip: MEMINST site_skip= value    */
	uint64_t alloc_sample;   /* 0: none                                  */
	uint64_t interval_ns;    /* timeline period, 0: none or auto         */
	bool interval_auto;      /* interval=auto (meminst(7))               */
	const char *interval_text;
	const char *snapshot_at;   /* --snapshot-at: MEMINST snapshot_at= words */
	bool control;              /* --control: MEMINST control=on            */
	bool dormant;              /* --dormant: off until inspect start       */
	bool leak_check;           /* --leak-check: leak_check=on              */
	int64_t leak_exit_code;    /* --leak-exit-code=N (0: none)             */
	uint64_t leak_threshold;   /* --leak-threshold=BYTES                   */
	char **argv;             /* the program and its arguments            */
};

/* How the program ended. */
struct sess_result {
	pid_t pid;
	int exit_code;      /* -1 when killed */
	int exit_signal;    /* 0 when it exited */
	long oom_before, oom_after; /* its memory cgroup's oom_kill count, -1: unknown */
	int64_t start_ns;   /* CLOCK_REALTIME */
	int64_t duration_ns;
};

/* "sess_storer.c": the processes' snapshot stores run in the launcher while
** the program runs (<meminst-store.h>). */
void sess_storer_start(const char *parts);
void sess_storer_stop(void);

/* "sess_run.c": run argv with the given environment additions; returns 0
** and fills *res, or -1 (the program could not be started: message said). */
int sess_run(char **argv, struct sess_result *res);
/* Why the loader ignores LD_PRELOAD for prog (setuid, setgid, file
** capabilities), or NULL. */
const char *sess_secure_exec(const char *prog);

/* What went into a session, for the closing line. */
struct sess_summary {
	int processes, snapshots;
	int64_t trace_bytes;
	char trace_text[32]; /* trace_bytes for people: "12.3 MB" */
	int traces_cut;      /* traces with no END record (cut short)      */
	long cut_pid;        /* the first one's process, and its size      */
	char cut_text[32];
};

/* "sess_store.c": gather the parts in `dir` into the session database
** `path` (replaced only with o->force).  0 or -1 with a message said. */
int sess_store(const char *path, const char *dir, const struct sess_opts *o,
	       const struct sess_result *res, const char *meminst_env, struct sess_summary *sum);

/* "sess_parts.c": a part's file opened for reading (a regular file, no
** link followed), -1 if not; whether a trace ended (*whole: its bytes up
** to the last complete chunk); when it began (UINT64_MAX: unreadable);
** the bytes of its samples. */
int sess_open_part(const char *file);
bool sess_trace_ended(int fd, int64_t *whole);
uint64_t sess_trace_t0(const char *path);
int64_t sess_trace_sample_bytes(int fd);

/* "sess_lib.c": is path a libmeminst (an ELF shared object of this
** machine named libmeminst.so.N)?  0, or -1 with the reason in why. */
int sess_check_library(const char *path, char *why, size_t len);

/* "meminst.c" */
void sess_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool sess_progress; /* stderr is a terminal: show progress */

#endif
