/*
** trace_sampler.h — what the sampling files of trace/ share among
** themselves (trace_sample.c, trace_unwind.c, trace_asample.c,
** trace_counts.c).  The rest of the runtime sees only trace_int.h.
*/
#ifndef TRACE_SAMPLER_H
#define TRACE_SAMPLER_H

#include "trace_int.h"

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#define TRACE_FRAMES_MAX 64    /* frames per sample by default (sample_depth=) */
#define TRACE_DEPTH_MAX 1024   /* the largest sample_depth= */
/* Frames a sample keeps (MEMINST sample_depth=, TRACE_FRAMES_MAX by default);
** a deeper stack is cut at the root side and marked by one more frame,
** MEMINST_TRACE_FRAME_TRUNCATED. */
extern unsigned trace_sample_depth;

/* ------------------------------------------------------------ unwind --- */
/* "trace_unwind.c" */

/* Prepare libunwind (its one-time set-up, our own code range) outside of
** malloc and signal handlers.  0, or -1 logged. */
int trace_unwind_init(void);
/* Make the calling thread's cache of the fast walk (256 KiB) now, in
** normal context: for a thread that signal handlers will walk. */
void trace_unwind_warm(void);
/* The calling thread is ending: no handler makes its trace cache any more. */
void trace_unwind_thread_end(void);

/* The stack of the thread a signal interrupted, from the handler's
** ucontext: frames[0] is the interrupted pc, then return addresses.
** Async-signal-safe.  Returns the number of frames (0: none, e.g. the
** thread was already unwinding when the signal came). */
unsigned trace_unwind_signal(void *ucontext, uint64_t *frames, unsigned max);
unsigned trace_unwind_signal_whole(void *ucontext, uint64_t *frames, unsigned max, bool *whole);

/* The caller's stack from normal context (inside malloc), leaving out the
** leading frames that are libmeminst's own: frames[0] is the return
** address into the code that called the allocator.  Never allocates.
** may_wait: the caller holds no lock and is not a signal handler, so it may
** wait while a fork copies the process (else 0 frames then). */
unsigned trace_unwind_here(uint64_t *frames, unsigned max, bool may_wait);

/* The stack from the call into the allocator at `site` (a return address
** into the program) on: frames[0] == site, then up to max - 1 callers.
** Walks only as deep as asked (site_depth keys types by a few frames);
** returns 0 when site is not among the first frames of the walk. */
unsigned trace_unwind_from(uint64_t site, uint64_t *frames, unsigned max);

/* The same walk, step by step (slower), also giving where each return
** address is stored: slots[k] is the stack address holding frames[k].
** site_depth learns these once per caller chain and then only compares
** the words there (alloc_stack.c).  Both wait while a fork copies the
** process (they run inside malloc with no lock held). */
unsigned trace_unwind_slots(uint64_t site, uint64_t *frames, uint64_t *slots, unsigned max);
/* The start of the function holding addr, from its unwind tables (normal
** context): false when unknown. */
bool trace_unwind_proc_entry(uint64_t addr, uint64_t *start);

/* True while this thread is inside libunwind from normal context: a signal
** handler must not unwind then (the per-thread cache is being updated). */
bool trace_unwind_busy(void);
/* Is pc in libunwind's code?  (trace_sigwrap.c's pipe2) */
bool trace_unwind_is_libunwind(uintptr_t pc);
/* Is pc in libmeminst's code? */
bool trace_unwind_in_self(uintptr_t pc);

/* ------------------------------------------------------------ sample --- */
/* Shared by the handler's file (trace_sample.c, which defines these
** variables) and the timers' (trace_sample_timer.c). */
#define SAMPLE_SIGNAL SIGPROF
#define SAMPLE_TIMERS_MAX 2048 /* threads sampled at once */
#define SAMPLE_COOKIE ((void *)trace_sample_timers) /* sigev_value of our timers */
#define SAMPLE_FD_WALL (-2) /* a slot of trace_wall.c's sampler thread */
/* meminst's own threads (the snapshot service): never sampled */
#define SAMPLE_INTERNAL_MAX 4
struct sample_timer_s {
	pid_t tid; /* 0: free slot */
	int fd;    /* the perf event, -1: the POSIX timer id, or SAMPLE_FD_WALL */
	timer_t id;
	uint64_t perf_id; /* the perf event's PERF_EVENT_IOC_ID: still ours? */
};
/* "trace_sample_timer.c" */
extern struct sample_timer_s trace_sample_timers[SAMPLE_TIMERS_MAX] TRACE_INTERNAL;
extern _Atomic unsigned trace_sample_timers_top TRACE_INTERNAL; /* slots ever used */
#define SAMPLE_TIMERS_TOP() atomic_load_explicit(&trace_sample_timers_top, memory_order_acquire)
void trace_sample_timers_disarm(void) TRACE_INTERNAL;
bool trace_sample_perf_ours(const struct sample_timer_s *t) TRACE_INTERNAL;
void trace_sample_timer_add(pid_t tid, bool replace) TRACE_INTERNAL;
void trace_sample_timer_remove(pid_t tid) TRACE_INTERNAL;
void trace_sample_timers_clear(void) TRACE_INTERNAL;
void trace_sample_timers_existing(void) TRACE_INTERNAL;
/* "trace_sample.c" (see there) */
extern _Atomic bool trace_sample_running TRACE_INTERNAL;
extern uint64_t trace_sample_period_ns TRACE_INTERNAL;
extern pthread_mutex_t trace_sample_lock TRACE_INTERNAL;
extern _Atomic bool trace_sample_halted TRACE_INTERNAL;
extern _Atomic int trace_sample_slots_busy TRACE_INTERNAL;
extern _Atomic pid_t trace_sample_internal[SAMPLE_INTERNAL_MAX] TRACE_INTERNAL;

/* "trace_sample.c" */

struct sigaction;
/* The program's sigaction(SIGPROF, act, old) while our handler is in place:
** true when handled here (the program's action is kept apart), false: pass
** it to libc. */
bool trace_sample_sigaction(const struct sigaction *act, struct sigaction *old);

/* The stack of the thread a signal interrupted, cut to trace_sample_depth
** frames and marked when deeper (the handler's walk; async-signal-safe).
** `frames` has room for trace_sample_depth + 1. */
unsigned trace_sample_walk(void *ucontext, uint64_t *frames);
/* The same from normal context (trace_unwind_here), after `first` frames
** the caller has put in already. */
unsigned trace_sample_walk_here(uint64_t *frames, unsigned first);

/* ------------------------------------------------------------- wall --- */
/* "trace_wall.c": sample_clock=wall by a sampler thread (see its top). */

int trace_wall_start(uint64_t period_ns, uint64_t weight);
void trace_wall_stop(void);
void trace_wall_halt(void); /* from a signal handler: no more ticks, no join */
int trace_wall_thread_add(int tid);
void trace_wall_thread_remove(int tid);
void trace_wall_after_fork_child(void);
/* From the SIGPROF handler: true when `si` is a wall tick; then *periods
** and frames (trace_sample_depth + 1 at most) are set, *nframes 0 when
** there is nothing to record. */
bool trace_wall_signal(const void *si, void *uc, uint64_t *periods, uint64_t *frames,
		       unsigned *nframes);
/* A wall tick the program's sigwait family took: the thread's slot is
** ready for the next one; false when `si` is not a wall tick. */
bool trace_wall_tick_drop(const void *si);
bool trace_wall_masked(bool blocked);

/* A SIGPROF the program's sigwait, sigwaitinfo or sigtimedwait took (a
** thread that blocks it and waits for signals): true when it is a tick of
** ours, which is then dropped (trace_sigwrap.c waits on). */
bool trace_sample_tick_drop(const void *si);

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
