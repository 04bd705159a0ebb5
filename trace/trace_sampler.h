/*
** trace_sampler.h — what the sampling files of trace/ share among
** themselves (trace_sample.c, trace_unwind.c, trace_asample.c,
** trace_counts.c).  The rest of the runtime sees only trace_int.h.
*/
#ifndef TRACE_SAMPLER_H
#define TRACE_SAMPLER_H

#include "trace_int.h"

#define TRACE_FRAMES_MAX 64 /* deepest stack recorded per sample */

/* ------------------------------------------------------------ unwind --- */
/* "trace_unwind.c" */

/* Prepare libunwind (per-thread caches, its one-time set-up, our own code
** range) outside of malloc and signal handlers.  0, or -1 logged. */
int trace_unwind_init(void);

/* The stack of the thread a signal interrupted, from the handler's
** ucontext: frames[0] is the interrupted pc, then return addresses.
** Async-signal-safe.  Returns the number of frames (0: none, e.g. the
** thread was already unwinding when the signal came). */
unsigned trace_unwind_signal(void *ucontext, uint64_t *frames, unsigned max);

/* The caller's stack from normal context (inside malloc), leaving out the
** leading frames that are libmeminst's own: frames[0] is the return
** address into the code that called the allocator.  Never allocates. */
unsigned trace_unwind_here(uint64_t *frames, unsigned max);

/* True while this thread is inside libunwind from normal context: a signal
** handler must not unwind then (the per-thread cache is being updated). */
bool trace_unwind_busy(void);

/* ------------------------------------------------------------ sample --- */
/* "trace_sample.c" */

struct sigaction;
/* The program's sigaction(SIGPROF, act, old) while our handler is in place:
** true when handled here (the program's action is kept apart), false: pass
** it to libc. */
bool trace_sample_sigaction(const struct sigaction *act, struct sigaction *old);

/* Current settings, read by the writer for the file header. */
extern unsigned trace_sample_hz;     /* 0: no timer sampling            */
extern unsigned trace_sample_clock;  /* MEMINST_TRACE_SAMPLE_*, 0 if none */

/* ----------------------------------------------------------- asample --- */
/* "trace_asample.c" */

extern uint64_t trace_asample_mean; /* bytes; 0: off */
int trace_asample_start(uint64_t mean_bytes);
void trace_asample_stop(void);

/* ------------------------------------------------------------ counts --- */
/* "trace_counts.c" */

extern bool trace_counts_on;
int trace_counts_start(void);
void trace_counts_stop(void);
void trace_counts_flush_thread(void); /* this thread's COUNTS records */
void trace_counts_note(void *fn);      /* one call of fn (trace_call_hook) */
void trace_counts_reset(void);         /* every thread starts from zero */

#endif
