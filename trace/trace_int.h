/*
** trace_int.h — internal interfaces of libmeminst's time-profiling runtime.
**
** The runtime is built into libmeminst (it shares the library's start-up,
** MEMINST options and allocation hooks) and writes the trace files described
** in <meminst-trace.h> and meminst-trace(5).
**
**   trace_buf.c      the file, per-thread buffers, flushing
**   trace_chunk.c    the file's header, chunks, thread 0's records
**                    (PROCESS, MODULE: the module map, TRACE_COST)
**   trace_write.c    the writer thread: full events chunks are written
**                    off the traced threads
**   trace_call.c     exact tracing: __cyg_profile_func_enter/exit, thread
**                    start/exit, <alloc> events, start/stop/apply
**   trace_suspend.c  `suspend`: blocking calls wrapped while tracing
**   trace_sample.c   timer sampling (signal handler, start/stop)
**   trace_sample_timer.c  its per-thread timers
**   trace_unwind.c   stack walks for samples
**   trace_asample.c  allocation sampling (a stack every N bytes)
**
** Two streams per thread (MEMINST_TRACE_STREAM_*): the events stream is
** written only in normal context, the signal stream only by the sampling
** signal handler, so a sample never lands in the middle of an event.  Each
** buffer is flushed as one chunk by one write(2) on an O_APPEND descriptor:
** events chunks by the writer thread (trace_write.c), signal chunks by the
** handler itself (write is async-signal-safe).
*/
#ifndef TRACE_INT_H
#define TRACE_INT_H

#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "meminst-trace.h"

#define TRACE_INTERNAL __attribute__((visibility("hidden")))

/* ------------------------------------------------------------ writer ---- */
/* "trace_buf.c" */

/* Open the trace file (MEMINST trace_file=, %p expanded) and write its
** header, the PROCESS record and the module map, if not done yet.  Normal
** context only (not from malloc, not from a signal handler).  0 or -1 with a
** one-line message already logged. */
int trace_file_ensure(void);

/* Start fn(arg) on a bare thread (clone, its own stack, every signal
** blocked, no libc thread state): the death and exit watchdogs.  0 or -1. */
int trace_bare_thread(int (*fn)(void *), void *arg);

/* Time stamp now, in the file's clock (ticks since t0).  Async-signal-safe. */
uint64_t trace_now(void);

/* Append one record (n words, the first being its head) to the calling
** thread's events stream; normal context.  Starts the thread's buffers on
** first use (THREAD_START).  Never allocates through malloc. */
void trace_ev_append(const uint64_t *words, unsigned n);

/* The same for the signal stream: async-signal-safe, never blocks, drops
** the record (counting it as LOST) rather than re-enter itself. */
void trace_sig_append(const uint64_t *words, unsigned n);
/* The same into another thread's signal stream (the wall-clock sampler),
** if `t` is still the record of thread `tid`; dropped if it is busy. */
struct trace_thr_s;
void trace_sig_append_to(struct trace_thr_s *t, int tid, const uint64_t *words, unsigned n);

/* Write every thread's buffered records (at exit; after fork in the child the
** parent's records are discarded).  The writer thread is stopped first
** (its queue written): later chunks are written by their flushers. */
void trace_flush_all(void);
/* While the program runs: the caller's records and every thread's signal
** stream (other threads' events streams cannot be taken safely). */
void trace_flush_running(void);
/* Before an exec: END after every record when the caller is the program's
** last thread, so that a new program without the library leaves the trace
** whole (trace_buf.c). */
void trace_end_before_exec(void);

/* At death by a signal or _exit (trace_death.c): every thread's buffers
** out, async-signal-safe, waiting for no lock.  trace_flush_owner: false in
** a vfork child, whose buffers are its parent's. */
void trace_flush_at_death(void);
bool trace_flush_owner(void);

/* "trace_death.c": once the file is open, the fatal signals the program
** left at their default get a handler that flushes, then dies by the same
** signal; trace_death_sigaction keeps the program's view (trace_sigwrap.c). */
void trace_death_arm(void);
/* The same for the exit snapshot (the constructor). */
void trace_death_arm_memory(void);
void trace_death_flush(void);               /* also from the _exit wrapper */
struct sigaction;
bool trace_death_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* Stop sampling from a signal handler (no lock, no join): nothing more is
** recorded by timers or the wall sampler. */
void trace_sampler_halt(void);
/* A write of the trace file failed: sampling stops for good, timers
** disarmed (no more signals to the program).  Any context.  True if
** anything was sampling. */
bool trace_sampler_fail(void);

/* Ticks per second of the file's clock (calibrated once for the TSC; 1e9
** for the others), 0 before the clock is set up.  The sampler's weights
** use it: no second calibration. */
double trace_ticks_per_second(void);

/* Make spare records for the threads that exist now, so that the sampling
** handler can give one to a thread that has none (threads made before
** sampling started) without a lock.  trace_file_ensure calls it when
** alloc_opts.sample_hz is set; normal context. */
void trace_records_prepare(void);

/* Stop every kind of sampling (timers, allocation sampling, counts, which
** go out now).  The writer's exit path calls it before its last flush, so
** the order does not depend on the order of destructors. */
void trace_sampler_stop(void);

/* ------------------------------------------- between tracer and sampler -- */

/* "trace_call.c": the allocation hooks call these when trace_alloc_watch is
** set (exact tracing is on: <alloc> events, and allocation sampling when
** it is on too).  With allocation sampling alone, the allocating hooks call
** trace_asample_note directly, without time stamps. */
extern bool trace_alloc_watch;
uint64_t trace_alloc_begin(void);
/* block: what an allocation returned (NULL for frees and failures); site:
** the allocator's caller's return address; backend_tsc: the TSC ticks of
** the backend's calls inside (UINT64_MAX: not measured) */
void trace_alloc_end(uint64_t begin, unsigned op, size_t size, const void *block, uintptr_t site,
		     uint64_t backend_tsc);

/* "trace_sample.c": called by trace_call.c's pthread_create wrapper in each
** new thread before its start routine, and when it ends; normal context. */
void trace_sample_thread_begin(void);
void trace_sample_thread_end(void);
void trace_sample_thread_internal(void); /* instead of begin: meminst's own */

/* "trace_asample.c": called for every allocation of `size` bytes while
** allocation sampling is on (from trace_alloc_end, or straight from the
** allocation hooks when exact tracing is off). */
extern bool trace_asample_on;
void trace_asample_note(size_t size);
/* The same, inlined into the allocation hooks: the thread's countdown of
** bytes to the next sample, and the function that takes it. */
extern __thread int64_t trace_asample_left ALLOC_TLS_MODEL;
void trace_asample_take(size_t size);
static inline void trace_asample_count(size_t size)
{
	if (__builtin_expect((trace_asample_left -= (int64_t)size) <= 0, 0))
		trace_asample_take(size);
}

/* "trace_wall.c": the blocking-call wrappers of trace_suspend.c tell the
** wall-clock sampler when a sampled thread blocks, so that it is sampled
** without a signal (no EINTR, no short sleep).  `fn` is the real function,
** the innermost frame of the samples taken meanwhile; begin returns what
** end takes (NULL: the thread is not sampled). */
extern _Atomic bool trace_wall_on;
void *trace_wall_block_begin(void *fn);
void trace_wall_block_end(void *slot);
/* Around an exec (trace_sigwrap.c): the calling thread's CPU-time timer
** stops, and a tick of it still pending is taken off; begin says whether
** there was one, which end starts again (the exec failed). */
bool trace_sample_exec_begin(void);
void trace_sample_exec_end(bool stopped);
void trace_sample_masked(bool blocked);
bool trace_sample_alt_too_small(const stack_t *ss);
void trace_sample_alt_stack(bool small);
void trace_sample_no_room(void);
/* The calling thread's own stack (trace_thread.c, trace_unwind.c);
** whether this frame is on another (a coroutine's): then no walk. */
void trace_unwind_home(uintptr_t lo, uintptr_t hi);
bool trace_unwind_off_home(void);
/* Whether a is on the calling thread's own stack (true when that is not
** known); the main thread's stack noted if it was not (tracing starts). */
bool trace_unwind_on_home(uintptr_t a);
void trace_unwind_main_home(void);
void trace_sample_mask_sync(void);
/* System calls that a handler installed with SA_RESTART does not cut short
** (the kernel restarts them, or they do not sleep): nanosleep, poll, select,
** epoll_wait, futex with a time-out … are not among them (trace_wall.c;
** the leak scan's thread stop, alloc_leak_stop.c, uses it too). */
bool trace_syscall_restartable(long nr);

/* ====================================================== writer internals == */
/* Shared by trace_buf.c, trace_call.c and trace_suspend.c (the writer and
** exact tracing); the sampler needs only the functions above. */

#define TRACE_TLS_MODEL ALLOC_TLS_MODEL
#define trace_likely(x) __builtin_expect(!!(x), 1)
#define trace_unlikely(x) __builtin_expect(!!(x), 0)

/* records per events chunk: with its header and the padding chunk after
** it (trace_fio.c), a full one fills its 64 KiB buffer */
#define TRACE_EV_WORDS 8182
#define TRACE_SIG_WORDS 2048    /* 16 KiB per signal chunk              */
#define TRACE_RESERVE_WORDS 4   /* kept free for the CLOCK record of a flush */
#define TRACE_CHUNK_WORDS (sizeof(struct meminst_trace_chunk) / 8)

/* One stream of one thread: records go at pos, up to end; the chunk header
** is written into the TRACE_CHUNK_WORDS words just before base, so a chunk
** leaves by one write(2) without a copy. */
extern uint64_t trace_t0;           /* raw reading that is time stamp 0   */
extern uint64_t trace_tsc_mult;     /* ticks per TSC tick, 32.32; 0: none */

typedef struct trace_stream_s {
	uint64_t *pos, *end;
	/* events: the words from floor to pos are one-word calls and returns
	** the hooks wrote (CALL32, RET32, LEAF32), so that a return may turn
	** the CALL32 just before it into a LEAF32; every other record moves
	** floor past itself (trace_stream_wrote) */
	uint64_t *floor;
	/* events: the raw clock reading (time stamp + trace_t0) of the chunk's
	** last call or return, and the high half of the last full address (the
	** base of CALL32 and RET32) */
	uint64_t last, hi;
	uint64_t *base;
	uint64_t seq;   /* chunks written */
	uint64_t lost;  /* records dropped since the last chunk, told by LOST */
} trace_stream_t;

/* The stream starts a chunk: empty, and CALL32/RET32 from 0 again. */
static inline void trace_stream_restart(trace_stream_t *s)
{
	s->pos = s->floor = s->base;
	s->last = trace_t0;
	s->hi = 0;
}

/* Records other than the hooks' one-word ones were written up to pos. */
static inline void trace_stream_wrote(trace_stream_t *s)
{
	s->floor = s->pos;
}

/* What trace_preempt.c knows of a thread's time off the CPU (trace=wall
** with the TSC clock).  Times are time stamps (ticks from trace_t0). */
typedef struct trace_preempt_s {
	uint64_t at;          /* when the CPU clock was last read; 0: not yet */
	uint64_t cpu_ns;      /* the thread's CPU time then                   */
	uint64_t waited;      /* ticks in SUSPEND records since `at`          */
	uint64_t mark;        /* end of the last SUSPEND or ALLOC record      */
	uint64_t run_last;    /* raw TSC of the last call or return of the
	                      ** chunks before the current one                */
	long nivcsw, nvcsw;   /* context switches at the last getrusage       */
	uint32_t waits;       /* SUSPEND records since that getrusage         */
	bool counted;         /* nivcsw/nvcsw hold a reading                  */
} trace_preempt_t;

/* An open frame (trace_frames.c): the stack pointer of the hooks' caller
** (the hook's CFA: the same at a function's call and return hooks, below
** its callers' and above its callees') and the function. */
typedef struct trace_frame_s {
	uintptr_t sp;
	uintptr_t fn;
} trace_frame_t;

/* A thread's buffers (mmap'd, never malloc'd; recycled at thread exit).
** gen, the open frames' top and ev first: the hot path reads gen, fr_top,
** fr_lim, ev.pos, ev.end, ev.floor, ev.last and ev.hi, all in the first
** 64 bytes. */
typedef struct trace_thr_s {
	/* gen and in_hook side by side: the hooks test both at once (gen_hook
	** equal to the generation means in_hook is 0) */
	union {
		struct {
			uint32_t gen;     /* the tracing generation it records for */
			/* non-zero while code of the thread writes its events
			** stream: trace_ev_claim's mark (trace_sp_mark) */
			uint32_t in_hook;
		};
		uint64_t gen_hook;
	};
	/* the innermost open frame and the last slot of the array (both a
	** static sentinel until the array is made); trace_frames.c */
	trace_frame_t *fr_top, *fr_lim;
	trace_stream_t ev;
	uint32_t thread_no;      /* trace thread number (1 = first seen)    */
	uint32_t parent_no;
	int tid;
	bool started;            /* THREAD_START written                    */
	bool dead;               /* THREAD_EXIT written, in the pool, or spare */
	bool key_pending;        /* taken by a signal handler: thread key unset */
	bool internal;           /* meminst's own thread (trace_tls.internal) */
	_Atomic int flushing;    /* one flusher at a time (owner or exit)   */
	_Atomic int sig_busy;    /* the signal stream is being written      */
	trace_stream_t sig;
	struct trace_thr_s *next;      /* every record ever made             */
	struct trace_thr_s *pool_next; /* retired records                    */
	size_t map_bytes;
	trace_preempt_t pre;           /* <preempted> (trace_preempt.c)       */
	_Atomic uint32_t hook_dropped; /* records of signal handlers that came
	                               ** in while the stream was being written:
	                               ** LOST at the next flush             */
	trace_frame_t *fr_base;        /* the open frames' array: [0] a sentinel */
	size_t fr_bytes;               /* its size (mmap'd; kept with the record) */
	uint32_t fr_over;              /* frames open past its end            */
} trace_thr_t;

/*
** Open frames (trace_frames.c): the hooks follow the stack pointer, so that
** frames left by longjmp are closed at the next call or return.  All on
** the claimed record.  reset: none open (a thread starts recording);
** push: a call written; gone: how many innermost frames a hook at sp finds
** gone (a call's of fn whose hook returns to ret; ret 0: a return's of
** fn, sp less 1 when reached by a tail call), whose returns are then
** written and popped;
** pop: a return of fn written.
*/
/* a call hook returning further than this past fn's address is an inlined
** copy's (in its container's code); nearer, fn's own prologue's */
#define TRACE_PROLOGUE_MAX 256
void trace_frames_reset(trace_thr_t *t);
void trace_frames_push(trace_thr_t *t, uintptr_t sp, uintptr_t fn);
size_t trace_frames_gone(const trace_thr_t *t, uintptr_t sp, uintptr_t fn, uintptr_t ret);
void trace_frames_pop(trace_thr_t *t, uintptr_t fn);

/* The calling thread's record while its calls are being traced (NULL
** otherwise).  Set it with trace_cur_set: the hooks read a copy that is
** never NULL (trace_call.c). */
extern __thread trace_thr_t *trace_cur TRACE_TLS_MODEL;
void trace_cur_set(trace_thr_t *t);         /* trace_cur, and the hooks' copy */

/*
** Re-entrancy.  A signal handler of the program runs on the thread it
** interrupted, and its instrumented calls go through the same hooks: if it
** came in while the thread was writing its events stream (in a hook, or a
** record of the runtime), its records would go into the same words and
** overwrite, or be overwritten.  So every writer of the stream claims it
** first (in_hook), and a writer that finds it claimed by the code it
** interrupted drops its record and counts it (hook_dropped, told by LOST);
** a handler's calls are then all dropped, or all kept, and the stream stays
** well formed.  A claim is marked with the writer's stack position: a
** handler runs deeper on the same stack (or on the alternate signal stack),
** while a mark at the same depth or above belongs to a writer abandoned by
** a handler that left with longjmp, and is taken over.
*/
static inline __attribute__((always_inline)) uint32_t trace_sp_low(void)
{
	uintptr_t sp;
#if defined(__x86_64__)
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#else
	sp = (uintptr_t)__builtin_frame_address(0);
#endif
	return (uint32_t)sp;
}
/* The mark: never 0.  (The hooks store trace_sp_low as it is: at a
** function's entry the stack pointer is 8 past a multiple of 16.) */
static inline __attribute__((always_inline)) uint32_t trace_sp_mark(void)
{
	return trace_sp_low() | 1;
}
/* "trace_call.c": t is claimed: true when by code this call interrupted
** (the record is dropped and counted), false when by an abandoned writer. */
bool trace_ev_interrupted(trace_thr_t *t, uint32_t mark);
static inline __attribute__((always_inline)) bool trace_ev_claim(trace_thr_t *t, uint32_t mark)
{
	if (trace_unlikely(t->in_hook != 0) && trace_ev_interrupted(t, mark))
		return false;
	t->in_hook = mark;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}
/* in_hook cleared by a store of gen_hook whole: the hooks' next test loads
** 8 bytes, and a load that a narrower store only partly covers waits for
** that store to reach the cache (about 10 ns a call when it was 4 bytes). */
static inline __attribute__((always_inline)) void trace_ev_release(trace_thr_t *t)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->gen_hook = t->gen;
}
/* The records dropped so, into the stream's LOST count (before a flush). */
static inline void trace_ev_fold_dropped(trace_thr_t *t)
{
	if (trace_unlikely(atomic_load_explicit(&t->hook_dropped, memory_order_relaxed)))
		t->ev.lost += atomic_exchange(&t->hook_dropped, 0);
}

/* Slower per-thread state. */
typedef struct trace_tls_s {
	trace_thr_t *rec;     /* this thread's record, active or not        */
	uint32_t seen_gen;    /* generation already decided for             */
	uint32_t member_gen;  /* in the traced family of this generation    */
	uint32_t parent_no;   /* trace thread number of the creator         */
	int busy;             /* >0: inside the runtime, record nothing     */
	bool internal;        /* meminst's own thread (the snapshot service) */
} trace_tls_t;
extern __thread trace_tls_t trace_tls TRACE_TLS_MODEL;

/* Tracing generation: changes at every start and stop.  A record whose
** gen differs is stale: its thread writes TRACE_OFF and stops. */
extern _Atomic uint32_t trace_gen;
extern _Atomic int trace_on;        /* exact call tracing is on           */
extern bool trace_all_threads;      /* else only the starter's family     */
extern bool trace_sites;            /* trace_sites=on: CALL with call site */

/* The file's clock (enum meminst_trace_clock; 0 before the file is set). */
extern int trace_clock;

/* Settings for the next trace_file_ensure (from MEMINST or the API). */
extern int trace_want_clock;        /* 1 wall, 2 cpu (MEMINST trace=)      */
extern char trace_path[4096];       /* unexpanded trace_file              */

/* Where chunks go: NULL = the trace file.  Otherwise called with each
** complete chunk (header + words) instead of write(2), in the context of
** the flushing thread (async-signal-safe for the signal stream); returns
** 0 or -1 (the chunk's records then count as lost).  For the in-process
** profiler. */
extern int (*trace_sink)(const void *chunk, size_t bytes);

/* Called by __cyg_profile_func_enter for every call made by a thread that
** is not being traced, while set (precise call counts for the sampler). */
extern void (*trace_call_hook)(void *fn);
/* Set or clear trace_call_hook (arms the hooks while set). */
void trace_call_hook_set(void (*fn)(void *));

/* Non-zero while the instrumentation hooks have anything to do: the count
** of reasons (tracing on, a call hook, threads still holding trace_cur).
** The hooks test it first, so that with nothing armed they cost about as
** much as empty hooks. */
extern _Atomic int trace_armed;
void trace_arm(int delta);

/* "trace_buf.c" */
void trace_spin_lock(_Atomic int *l);       /* our own: pthread's are wrapped */
void trace_spin_unlock(_Atomic int *l);
trace_thr_t *trace_thread_record(void);     /* this thread's, made on demand */
void trace_thread_exit(void);               /* THREAD_EXIT, flush, retire     */
void trace_ev_flush(trace_thr_t *t);        /* owner, normal context          */
void trace_ev_append_to(trace_thr_t *t, const uint64_t *words, unsigned n);
bool trace_wall_pause(void);               /* unshare/setns: the wall sampler's threads end */
void trace_wall_resume(void);              /* and start again (alloc_service_single_threaded) */
void trace_writer_close(void);              /* at exit: flush all, stop writing */
bool trace_file_is_open(void);
bool trace_file_close_idle(void);   /* a profile's end: file closed, writer ended */
int trace_path_expand(const char *in, int pid, char *out, size_t len);

/* "trace_chunk.c": the file header, chunks, thread 0's records */
void trace_header_fill(struct meminst_trace_header *h); /* from the settings */
void trace_modules_check(void);             /* MODULE records if the map moved */
void trace_stream_rebase(trace_stream_t *s, uint64_t *base, unsigned words, unsigned reserve);
/* (for trace_buf.c) */
int trace_chunk_write_header(int fd);        /* with F_ENDS */
/* Seal the stream's words into a chunk and write it (with `owner`: an
** events chunk through the writer thread); see there. */
void trace_chunk_out(uint32_t thread_no, trace_stream_t *s, unsigned stream, trace_thr_t *owner);
void trace_chunk_write(uint32_t thread_no, trace_stream_t *s, unsigned stream);
void trace_chunk_stream_init(trace_stream_t *s, uint64_t *region, unsigned words, unsigned reserve);
/* Thread 0: the process's own records (PROCESS, MODULE, TRACE_COST),
** appended and flushed under its lock. */
typedef struct trace_chunk_proc_s {
	_Atomic int lock;
	uint64_t words[TRACE_CHUNK_WORDS + 8192];
	trace_stream_t s;
	unsigned long long adds, subs;   /* dl_iterate_phdr counters at the last scan */
	bool scanned;
} trace_chunk_proc_t;
extern trace_chunk_proc_t trace_chunk_proc TRACE_INTERNAL;
void trace_chunk_proc_flush_locked(void);
void trace_chunk_proc_end_locked(void);      /* END after every record; async-signal-safe */
void trace_chunk_proc_begin(void);           /* PROCESS (and TRACE_COST) first */

/* "trace_fio.c": the file's writes (see there) */
extern _Atomic int trace_fio_fd;             /* the trace file, or -1       */
extern char trace_fio_path[4096];            /* its path as opened          */
int trace_file_create(const char *path);    /* O_EXCL, or replace our own file */
const char *trace_file_refuse(const char *path); /* NULL: may be replaced, else why not */
uint64_t trace_proc_start(void);                /* the header's proc_start */
int trace_file_image(char *path, size_t len);   /* an exec'd program's name: PATH.execN */
int trace_write_all(int fd, const void *p, size_t n);
int trace_fd_write(int fd, const void *p, size_t n, size_t *done); /* SIGXFSZ-safe */
void trace_fio_start(int fd, size_t header); /* fd is the file, header written */
bool trace_fio_close(bool wait);             /* true if it was open         */
/* Checksum a sealed chunk (not for the sink) and write it; 0 or -1.  A
** write error is reported once, the file cut back to its last complete
** chunk, and nothing more is written.  Async-signal-safe. */
int trace_chunk_emit(struct meminst_trace_chunk *h);
/* The writer thread checks that the descriptor is still the file's (the
** program may have closed it, or closed it and reused the number). */
void trace_file_check(void);
bool trace_fio_direct(void);                 /* the writer pads for O_DIRECT */
bool trace_fio_failed(void);                 /* a write failed: nothing more */
bool trace_stop_after_failure(void);         /* trace_call.c: tracing and sampling off, any
                                             ** context; true if sampling was on */
size_t trace_pad_bytes(uint64_t bytes);      /* padding to the next 4 KiB   */
void trace_pad_chunk(struct meminst_trace_chunk *h, uint64_t *words, size_t bytes);
struct iovec;
int trace_fio_batch(const struct iovec *v, int n, size_t bytes, bool aligned);

/* The tracer's own cost in picoseconds (TRACE_COST, MEMINST_TCOST_*);
** 0 until measured (trace_call.c, at the first start).
** trace_cost_record writes it into thread 0's stream (and every forked
** child's file gets it again). */
extern uint64_t trace_cost_ps[MEMINST_TCOST_N];
void trace_cost_record(void);
/* "trace_clock.c": measure trace_cost_ps once (the first start, on the
** starting thread, tracing on) and write the TRACE_COST record. */
void trace_calibrate(void);

/* "trace_write.c": the writer thread (see there) */
uint64_t *trace_wbuf_new(void);              /* an empty events buffer    */
int trace_writer_handoff(trace_thr_t *t);    /* 0, or -1: write it yourself */
void trace_writer_drain(void);               /* queued chunks are written */
void trace_writer_stop(void);                /* exit: drain, end the thread */
void trace_writer_end_closed(void);          /* the file closed: the thread ends */
bool trace_writer_stop_at_death(void);       /* the same from a signal handler, bounded */
void trace_writer_after_fork_child(void);

/* "trace_clock.c" */
void trace_clock_setup(int want);            /* before the header: calibrate */
uint64_t trace_clock_ns(clockid_t id);       /* clock_gettime in ns            */
uint64_t trace_now_thread(void);             /* trace_now, normal context: trace=cpu mostly without a system call */
void trace_clock_after_fork_child(void);
void trace_clock_origin(uint64_t *realtime_ns, uint64_t *mono_ns); /* at t0 */
void trace_after_fork_child(void);

/* fork (see trace_sample.c): no walk inside libunwind and no call of ours
** inside dl_iterate_phdr while a fork copies the process ("trace_unwind.c"),
** and the sampler's reset in the child, which alloc_thread.c's child
** handler runs before any other of ours. */
struct dl_phdr_info;
/* dl_iterate_phdr(cb, arg) counted for fork: false when not called (a fork
** under way and !may_wait, or waited too long).  may_wait: normal context,
** no lock of ours held that a prepare handler takes. */
bool trace_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg, bool may_wait);
/* Around a libunwind walk of the caller's own: false when it must not walk. */
bool trace_unwind_enter(bool may_wait);
void trace_unwind_leave(void);
void trace_unwind_prefork(void);
void trace_unwind_postfork(bool child);
bool trace_unwind_clone_child(bool loader_held); /* a walk copied under way: walks off */
void trace_sample_postfork_child(void);
/* After a clone without fork (alloc_clone_adopt): the child handlers of the
** trace buffers ("trace_buf.c") and of the death handlers ("trace_death.c"). */
void trace_child_reset(void);
void trace_death_postfork_child(void);

/* "trace_preempt.c": <preempted> in wall time.  The hooks' fast path
** leaves every gap of at least 2^TRACE_GAP_BITS ticks between a thread's
** calls and returns (about 50 us) to call_slow, which passes it here. */
#define TRACE_GAP_BITS 17
void trace_preempt_start(trace_thr_t *t, uint64_t now);   /* TRACE_ON: a first reading */
void trace_preempt_gap(trace_thr_t *t, uint64_t prev, uint64_t now); /* a gap: SUSPEND(PREEMPT)? */
uint64_t trace_preempt_off(trace_thr_t *t, uint64_t prev, uint64_t now); /* its ticks, not written */
static inline void trace_preempt_waited(trace_thr_t *t, uint64_t begin, uint64_t end)
{
	t->pre.waited += end - begin;
	t->pre.waits++;
	t->pre.mark = end;
}

/* "trace_call.c" */
void trace_thread_begin(uint32_t parent_no, uint32_t member_gen); /* new thread */
void trace_thread_parent(uint32_t *parent_no, uint32_t *member_gen); /* creator */
uint64_t trace_suspend_begin(void);          /* UINT64_MAX: not traced   */
void trace_suspend_end(uint64_t begin, unsigned reason);
int trace_start_from_env(void);             /* constructor: MEMINST trace= */
void trace_at_exit(void);                   /* destructor                  */

/* "trace_prof.c": the in-process profiler (trace_output=profile).  Chunks
** go to trace_prof_sink, which feeds them to the simulation engine of
** engine/eng_sim.c; trace_prof_write writes the PROFILE file. */
extern bool trace_prof_on;
int trace_prof_start(void);                 /* set the sink; -1 logged  */
void trace_prof_write(void);                /* flushed first by the caller */
void trace_prof_after_fork_child(void);

/* Time stamp now, inlined for the hot paths. */
static inline __attribute__((always_inline)) uint64_t trace_now_inline(void)
{
	if (trace_likely(trace_clock == MEMINST_TRACE_CLOCK_TSC))
		return __builtin_ia32_rdtsc() - trace_t0;
	return trace_now_thread();
}

#endif
