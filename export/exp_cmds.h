/*
** exp_cmds.h — the commands export/ gives `inspect`'s command table
** (inspect/inspect.c).  They return an exit code (RD_EXIT_*).
*/
#ifndef EXP_CMDS_H
#define EXP_CMDS_H

#include "rd_int.h"

/* "exp_cmd.c" */
int exp_cmd_export(int argc, char **argv, const struct rd_opts *o);
/* Go's heap profile (runtime/pprof's) of snapshot snap of the database at
** path, gzipped protocol buffers on f: per allocation site alloc_objects,
** alloc_space, inuse_objects and inuse_space, the default type alloc_space
** with allocs (Go's /debug/pprof/allocs).  `inspect serve` answers with it.
** 0, or an exit code after one line on o->err. */
int exp_heap_write(const char *path, int64_t snap, bool allocs, const struct rd_opts *o, FILE *f);
/* Go's CPU profile (/debug/pprof/profile) of the timer samples in the
** trace at path (those after its last SAMPLE_RESET), sampled at hz for
** duration_ns from start_ns (wall clock): samples/count and cpu/nanoseconds,
** a thread label on each sample.  `inspect serve` answers with it. */
int exp_cpu_write(const char *path, unsigned hz, uint64_t start_ns, uint64_t duration_ns,
		  const struct rd_opts *o, FILE *f);
/* "exp_html.c" */
int exp_cmd_html(int argc, char **argv, const struct rd_opts *o);

#endif /* EXP_CMDS_H */
