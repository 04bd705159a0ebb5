/*
** trace_sample.c — statistical sampling: the SIGPROF handler, and
** start/stop/reset/active (MEMINST sample=, sample_clock=, alloc_sample=,
** sample_counts=, and the meminst_sample_* calls of <meminst.h>); the
** per-thread timers are trace_sample_timer.c's.
**
** Timers.  Every thread gets its own timer that sends SIGPROF to that
** thread alone:
**   cpu   on the thread's CPU time: a thread is sampled in exact proportion
**         to the CPU it uses, and never while blocked.  Preferably a
**         perf_event task-clock counter (an hrtimer: the asked rate, 1000 Hz
**         and more), owned by the thread (F_SETOWN_EX) with SIGPROF as its
**         signal; where perf events are not allowed (perf_event_paranoid
**         above 2, seccomp), a POSIX timer on the thread's CPU-time clock,
**         which the kernel only checks at its scheduler tick (CONFIG_HZ,
**         often 250 Hz): faster rates then come as fewer samples carrying
**         the overruns in their weight.  Both are chosen over the
**         process-wide ITIMER_PROF, whose one signal goes to whichever
**         thread the kernel picks, which skews the split between busy
**         threads, and which programs use themselves (setitimer).
**   wall  no timer: trace_wall.c's sampler thread signals the threads that
**         run and samples those that wait without a signal (a signal
**         would end nanosleep, poll and the like early, EINTR).
** A thread's timer is made when sampling starts (every thread listed in
** /proc/self/task, targeted by tid) and in each thread created later
** (trace_sample_thread_begin, from the pthread_create wrapper); it is
** deleted when the thread ends or sampling stops.  Timers are not inherited
** by fork: the child samples nothing (it may call meminst_sample_start);
** exec discards them with the rest of the process.
**
** The signal is SIGPROF, shared with the program: once our handler is
** installed it stays (a pending tick must never meet SIGPROF's default
** action, which kills the process), and the program's sigaction and signal
** calls for SIGPROF are interposed (trace_sigwrap.c) so that they set and
** report the program's own action, kept here, without replacing ours.  Our
** handler takes the ticks of our timers (SI_TIMER with our cookie, or
** POLL_IN from our perf events) and hands every other SIGPROF (kill, the
** program's own setitimer or timers) to the program's action, the default
** one included.  A program that sets SIGPROF by a raw system call escapes
** this: the next thread start or stop notices and stops our timers.
*/
#include "trace_sampler.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"

/* libc's own sigaction: the exported name is interposed by trace_sigwrap.c,
** also for calls from inside this library. */

unsigned trace_sample_hz;
unsigned trace_sample_clock;
unsigned trace_sample_depth = TRACE_FRAMES_MAX;

/* Read by the handler: set after every timer exists' settings are written. */
_Atomic bool trace_sample_running;
static uint64_t sample_weight; /* one period in file ticks */
/* What the handler cost since start or reset (SAMPLE_COST at stop): ticks
** from its entry to its exit, and runs; all threads, lock-free adds. */
static _Atomic uint64_t sample_cost_ticks, sample_cost_runs;
uint64_t trace_sample_period_ns;

pthread_mutex_t trace_sample_lock = PTHREAD_MUTEX_INITIALIZER;
/* A write of the trace file failed (trace_sampler_fail): every timer is
** disarmed and no new one is made.  The slots change only with
** trace_sample_slots_busy set (trace_sample_lock held as well), so that a
** failure in any context (the writer thread, a handler flushing its
** stream) can disarm them without a lock: if a slot is changing, its
** changer disarms them all when done. */
_Atomic bool trace_sample_halted;
_Atomic int trace_sample_slots_busy;
static bool sample_handler_set, sample_warned_handler;
/* The program's SIGPROF action while ours is installed (what it set last
** through sigaction or signal); the handler reads it, the wrapper writes it
** with SIGPROF blocked. */
static struct sigaction sample_prog;
/* meminst's own threads (the snapshot service): never sampled */
_Atomic pid_t trace_sample_internal[SAMPLE_INTERNAL_MAX];

/* ----------------------------------------------------------- handler --- */

/* A SIGPROF that is not our tick: what the program asked for. */
static void sample_forward(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = sample_prog;
	if (a.sa_flags & SA_RESETHAND) {
		sample_prog.sa_handler = SIG_DFL;
		sample_prog.sa_flags &= ~(SA_SIGINFO | SA_RESETHAND);
	}
	if (a.sa_flags & SA_SIGINFO) {
		if (a.sa_sigaction)
			a.sa_sigaction(sig, si, uc);
	} else if (a.sa_handler == SIG_DFL) {
		/* SIGPROF's default action ends the process: let it */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		__sigaction(sig, &dfl, NULL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		alloc_sys_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	} else if (a.sa_handler != SIG_IGN) {
		a.sa_handler(sig);
	}
}

/* A stack of n frames walked with room for one more than the depth: cut
** to the depth, the mark in the last place.  Returns the frames kept. */
static unsigned sample_cut(uint64_t *frames, unsigned n)
{
	if (n <= trace_sample_depth)
		return n;
	frames[trace_sample_depth] = MEMINST_TRACE_FRAME_TRUNCATED;
	return trace_sample_depth + 1;
}

/* The handler runs on the thread's alternate signal stack when it has one
** (SA_ONSTACK, for Go's goroutines); libunwind's walk needs about 10 KiB of
** it, and a program's own may be 8 KiB (SIGSTKSZ): on one under 16 KiB the
** sample is the interrupted pc alone (Python's faulthandler, which pytest
** turns on, has 18160 bytes: walked). */
#define SAMPLE_ALT_STACK_MIN (16 * 1024)

/* Whether the handler may walk: on the thread's alternate stack, one of
** SAMPLE_ALT_STACK_MIN or more; else on the thread's own stack, not a
** coroutine's (trace_unwind_off_home). */
static bool sample_room_to_walk(const ucontext_t *u)
{
	char here;
	uintptr_t lo = (uintptr_t)u->uc_stack.ss_sp, sp = (uintptr_t)&here;
	if (!(u->uc_stack.ss_flags & SS_DISABLE) && sp >= lo && sp < lo + u->uc_stack.ss_size)
		return u->uc_stack.ss_size >= SAMPLE_ALT_STACK_MIN;
	return !trace_unwind_off_home();
}

unsigned trace_sample_walk(void *uc, uint64_t *frames)
{
	unsigned n = !sample_room_to_walk(uc) ? 0 : trace_unwind_signal(uc, frames, trace_sample_depth + 1);
	if (n == 0) { /* the thread was unwinding itself: keep the pc at least */
		frames[0] = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
		n = 1;
	}
	return sample_cut(frames, n);
}

unsigned trace_sample_walk_here(uint64_t *frames, unsigned first)
{
	return sample_cut(frames, first + trace_unwind_here(frames + first, trace_sample_depth + 1 - first, false));
}

static void sample_handler(int sig, siginfo_t *si, void *uc)
{
	bool ours = si->si_code == SI_TIMER ? si->si_value.sival_ptr == SAMPLE_COOKIE
		    : si->si_code == POLL_IN || si->si_code == SI_QUEUE;
	if (!ours) {
		sample_forward(sig, si, uc);
		return;
	}
	int saved_errno = errno;
	uint64_t t0 = trace_now();
	uint64_t rec[3 + trace_sample_depth + 1];
	uint64_t periods = 1;
	unsigned n;
	if (si->si_code == SI_QUEUE) {
		if (!trace_wall_signal(si, uc, &periods, rec + 3, &n)) {
			sample_forward(sig, si, uc); /* sigqueue by the program */
			errno = saved_errno;
			return;
		}
	} else {
		if (!atomic_load_explicit(&trace_sample_running, memory_order_relaxed)) {
			errno = saved_errno;
			return; /* a tick that outlived stop */
		}
		n = trace_sample_walk(uc, rec + 3);
		/* Ticks that came while this one was pending are merged by the
		** kernel into overruns: they weigh in, so the total stays right. */
		if (si->si_code == SI_TIMER && si->si_overrun > 0)
			periods += (uint64_t)si->si_overrun;
	}
	/* a tick that outlived stop, or nothing to record */
	if (!atomic_load_explicit(&trace_sample_running, memory_order_relaxed) || n == 0) {
		errno = saved_errno;
		return;
	}
	rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE, t0);
	rec[1] = MEMINST_TREC_SIZE_WORD(3 + n, n);
	rec[2] = periods * sample_weight;
	trace_sig_append(rec, 3 + n);
	uint64_t t1 = trace_now();
	/* the profiler's own share (distortion); a per-thread CPU clock makes
	** t1 - t0 this thread's time, which is what the handler took too */
	atomic_fetch_add_explicit(&sample_cost_ticks, t1 > t0 ? t1 - t0 : 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&sample_cost_runs, 1, memory_order_relaxed);
	errno = saved_errno;
}

bool trace_sample_tick_drop(const void *info)
{
	const siginfo_t *si = info;
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_ptr == SAMPLE_COOKIE;
	return si->si_code == POLL_IN || trace_wall_tick_drop(si);
}

/* Is the installed SIGPROF action ours?  (false: the program took it by
** a raw system call.)  When the action cannot be read (a seccomp filter
** that refuses rt_sigaction), the program is not blamed: true. */
static bool sample_handler_is_ours(void)
{
	struct sigaction cur;
	if (__sigaction(SAMPLE_SIGNAL, NULL, &cur) < 0)
		return true;
	return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sample_handler;
}

static int sample_install_handler(void)
{
	struct sigaction sa;
	if (sample_handler_set) {
		if (sample_handler_is_ours())
			return 0;
		alloc_log("the program set SIGPROF by a system call; sampling not started");
		return -1;
	}
	/* the program's action so far (its own handler, if any) is kept and
	** gets every SIGPROF that is not our tick */
	if (__sigaction(SAMPLE_SIGNAL, NULL, &sample_prog) < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sample_handler;
	/* on the thread's alternate stack when it has one: a Go program's
	** goroutine stacks are a few KiB, and our walk would overflow them */
	sa.sa_flags = SA_RESTART | SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (__sigaction(SAMPLE_SIGNAL, &sa, NULL) < 0) {
		alloc_log("cannot install the SIGPROF handler: %s", strerror(errno));
		return -1;
	}
	__atomic_store_n(&sample_handler_set, true, __ATOMIC_RELEASE);
	return 0;
}

/* sigaction(SIGPROF, …) of the program while our handler is installed:
** set and report the program's action, keep ours.  (trace_sigwrap.c) */
bool trace_sample_sigaction(const struct sigaction *act, struct sigaction *old)
{
	if (!__atomic_load_n(&sample_handler_set, __ATOMIC_ACQUIRE))
		return false;
	sigset_t block, saved;
	sigemptyset(&block);
	sigaddset(&block, SAMPLE_SIGNAL);
	alloc_sys_sigmask(SIG_BLOCK, &block, &saved); /* the handler reads it */
	if (old)
		*old = sample_prog;
	if (act)
		sample_prog = *act;
	alloc_sys_sigmask(SIG_SETMASK, &saved, NULL);
	return true;
}

/* ------------------------------------------------ thread begin / end --- */

/* The program took SIGPROF: stop ticking at it.  trace_sample_lock held. */
static bool sample_check_handler(void)
{
	if (sample_handler_is_ours())
		return true;
	atomic_store(&trace_sample_running, false);
	trace_sample_timers_clear();
	if (!sample_warned_handler) {
		sample_warned_handler = true;
		alloc_log("the program set SIGPROF by a system call; timer sampling stopped");
	}
	return false;
}

void trace_sample_thread_begin(void)
{
	if (!atomic_load(&trace_sample_running))
		return;
	pthread_mutex_lock(&trace_sample_lock);
	if (atomic_load(&trace_sample_running) && sample_check_handler()) {
		(void)trace_thread_record(); /* the handler writes into it */
		trace_sample_timer_add(alloc_sys_gettid(), true);
	}
	pthread_mutex_unlock(&trace_sample_lock);
	trace_sample_mask_sync(); /* born with SIGPROF blocked (its creator's mask) */
}

/* The calling thread is meminst's own (made by the runtime, instead of
** trace_sample_thread_begin): not the program's, never sampled. */
void trace_sample_thread_internal(void)
{
	pid_t tid = alloc_sys_gettid();
	for (unsigned i = 0; i < SAMPLE_INTERNAL_MAX; i++) {
		pid_t none = 0;
		if (atomic_compare_exchange_strong(&trace_sample_internal[i], &none, tid))
			break;
	}
	pthread_mutex_lock(&trace_sample_lock);
	trace_sample_timer_remove(tid); /* listed when sampling started */
	pthread_mutex_unlock(&trace_sample_lock);
}

void trace_sample_thread_end(void)
{
	trace_unwind_thread_end();
	if (trace_counts_on)
		trace_counts_flush_thread();
	if (!atomic_load(&trace_sample_running))
		return;
	pthread_mutex_lock(&trace_sample_lock);
	trace_sample_timer_remove(alloc_sys_gettid());
	pthread_mutex_unlock(&trace_sample_lock);
}

/* ------------------------------------------------------ start / stop --- */

/* The settings of one start, from MEMINST or meminst_sample_start. */
typedef struct sample_settings_s {
	unsigned hz, clock; /* hz 0: no timers */
	uint64_t alloc_mean;
	unsigned depth;     /* frames per stack; 0: TRACE_FRAMES_MAX */
	bool counts;
	const char *file;   /* trace_file=, not terminated; NULL: as it is */
	size_t file_len;
} sample_settings_t;

/* trace_file= for the writer's next open; once the file is open, only the
** same path is accepted. */
static int sample_set_path(const sample_settings_t *s)
{
	char path[sizeof trace_path];
	if (!s->file)
		return 0;
	if (s->file_len >= sizeof path) {
		alloc_log("trace_file: path too long");
		return -1;
	}
	memcpy(path, s->file, s->file_len);
	path[s->file_len] = 0;
	if (!trace_file_is_open()) {
		memcpy(trace_path, path, s->file_len + 1);
		return 0;
	}
	if (strcmp(path, trace_path) == 0)
		return 0;
	alloc_log("trace_file=%s: the trace file is already open as %s", path,
		  trace_path[0] ? trace_path : "meminst.%p.trace");
	return -1;
}

/* Ticks of the file's clock per second (the writer's calibration). */
static double sample_tick_hz(void)
{
	return trace_ticks_per_second();
}

static int sample_timers_start(const sample_settings_t *s)
{
	if (sample_install_handler() < 0)
		return -1;
	trace_sample_hz = s->hz;
	trace_sample_clock = s->clock;
	trace_sample_period_ns = 1000000000u / s->hz;
	sample_weight = (uint64_t)((double)trace_sample_period_ns * sample_tick_hz() / 1e9 + 0.5);
	/* The handler writes into the thread's record and may not make one
	** (not async-signal-safe): the caller's is made here, and threads that
	** existed before start take a spare the writer keeps ready
	** (trace_sig_append). */
	(void)trace_thread_record();
	if (s->clock == MEMINST_TRACE_SAMPLE_WALL && trace_wall_start(trace_sample_period_ns, sample_weight) < 0)
		return -1;
	atomic_store(&trace_sample_running, true);
	trace_sample_timers_existing();
	trace_sample_mask_sync(); /* SIGPROF blocked through the exec */
	return 0;
}

/* Start what `s` asks for.  trace_sample_lock held. */
static int sample_start_locked(const sample_settings_t *s)
{
	if (atomic_load(&trace_sample_running) || trace_asample_on || trace_counts_on) {
		alloc_log("sampling is already running (meminst_sample_stop first)");
		return -1;
	}
	/* The writer's header tells readers what the run samples, from
	** alloc_opts: an API start (file not open yet) must show there too. */
	trace_sample_hz = s->hz;
	trace_sample_clock = s->hz ? s->clock : 0;
	trace_asample_mean = s->alloc_mean;
	trace_sample_depth = s->depth ? s->depth : TRACE_FRAMES_MAX; /* nothing samples now */
	alloc_opts.sample_hz = s->hz;
	alloc_opts.sample_clock = s->clock == MEMINST_TRACE_SAMPLE_WALL ? 1 : 2;
	alloc_opts.alloc_sample = s->alloc_mean;
	if (sample_set_path(s) < 0 || trace_file_ensure() < 0 || trace_unwind_init() < 0)
		return -1;
	trace_unwind_warm();
	if (trace_fio_failed()) { /* said when it failed (the constructor goes on) */
		alloc_log("sampling not started: a write of the trace file failed");
		return -1;
	}
	if (s->hz && sample_timers_start(s) < 0)
		return -1;
	if (s->alloc_mean)
		trace_asample_start(s->alloc_mean);
	if (s->counts)
		trace_counts_start();
	return 0;
}

/* The handler's cost so far as a SAMPLE_COST record; the sums restart. */
static void sample_cost_record(void)
{
	uint64_t ticks = atomic_exchange(&sample_cost_ticks, 0), runs = atomic_exchange(&sample_cost_runs, 0);
	if (!runs)
		return;
	uint64_t rec[4] = {MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE_COST, trace_now()),
			   MEMINST_TREC_SIZE_WORD(4, 0), ticks, runs};
	trace_ev_append(rec, 4);
}

static void sample_stop_locked(void)
{
	bool was = atomic_load(&trace_sample_running);
	atomic_store(&trace_sample_running, false);
	if (was)
		sample_cost_record();
	trace_sample_timers_clear();
	trace_wall_stop();
	if (sample_handler_set && !sample_handler_is_ours() && !sample_warned_handler) {
		sample_warned_handler = true;
		alloc_log("the program set SIGPROF by a system call while sampling");
	}
	trace_asample_stop();
	if (trace_counts_on) {
		trace_counts_flush_thread();
		trace_counts_stop();
	}
}

void trace_sampler_halt(void)
{
	atomic_store(&trace_sample_running, false);
	trace_wall_halt();
}

/* A write of the trace file failed: nothing sampled could be written, so
** nothing more is sampled, and the program gets no more ticks (timers
** disarmed, the wall sampler halted, allocation sampling and counts off).
** Any context, no lock.  True if anything was sampling. */
bool trace_sampler_fail(void)
{
	bool was = atomic_exchange(&trace_sample_running, false);
	atomic_store(&trace_sample_halted, true);
	trace_wall_halt();
	if (!atomic_exchange(&trace_sample_slots_busy, 1)) {
		trace_sample_timers_disarm();
		atomic_store(&trace_sample_slots_busy, 0);
	}
	if (trace_asample_on) {
		was = true;
		trace_asample_stop();
	}
	if (trace_counts_on) {
		was = true;
		__atomic_store_n(&trace_counts_on, false, __ATOMIC_RELEASE);
		trace_call_hook_set(NULL);
	}
	return was;
}

/* At exit, first thing in trace_at_exit (alloc_api.c's destructor), so
** that timers stop and counts go out before the writer's last flush,
** whatever order the library's destructors run in. */
void trace_sampler_stop(void)
{
	pthread_mutex_lock(&trace_sample_lock);
	sample_stop_locked();
	pthread_mutex_unlock(&trace_sample_lock);
}

/* The sampling part of parsed MEMINST options.  false: nothing asked. */
static bool sample_settings_of(const alloc_options_t *o, sample_settings_t *s)
{
	memset(s, 0, sizeof *s);
	s->hz = o->sample_hz ? o->sample_hz : o->sample_clock ? 100 : 0;
	s->clock = o->sample_clock == 1 ? MEMINST_TRACE_SAMPLE_WALL : MEMINST_TRACE_SAMPLE_CPU;
	s->alloc_mean = o->alloc_sample;
	s->counts = o->sample_counts;
	s->depth = o->sample_depth;
	s->file = o->trace_file;
	s->file_len = o->trace_file_len;
	return s->hz || s->alloc_mean || s->counts;
}

/*
** fork: the sampling lock is held across the copy, so that the child finds
** the timer slots whole (it closes their descriptors), and no thread is
** inside libunwind or one of our dl_iterate_phdr calls (trace_unwind.c).
** The lock first: a thread holding it may walk (trace_sample_thread_begin)
** or allocate, which the later prepare handlers (alloc_thread.c's counting
** gate) would hold up.  The child's
** reset must come before any handler that starts a thread in the child
** (alloc_service.c's, with control=on: the new thread registers with the
** sampler), so alloc_thread.c's child handler, registered first, calls it;
** the sampler's own registration covers mode=off.  Twice is harmless.
*/
static void sample_prefork(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	pthread_mutex_lock(&trace_sample_lock);
	trace_unwind_prefork();
	errno = saved_errno;
}

static void sample_postfork_parent(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	trace_unwind_postfork(false);
	pthread_mutex_unlock(&trace_sample_lock);
	errno = saved_errno;
}

/* A child of fork: no timers came with it; it samples nothing more. */
void trace_sample_postfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	trace_unwind_postfork(true);
	pthread_mutex_init(&trace_sample_lock, NULL);
	atomic_store(&trace_sample_running, false);
	unsigned top = SAMPLE_TIMERS_TOP();
	for (unsigned i = 0; i < top; i++)
		if (trace_sample_timers[i].tid && trace_sample_timers[i].fd >= 0 &&
		    trace_sample_perf_ours(&trace_sample_timers[i]))
			close(trace_sample_timers[i].fd); /* the parent's threads' events */
	memset(trace_sample_timers, 0, top * sizeof trace_sample_timers[0]);
	atomic_store(&trace_sample_timers_top, 0);
	atomic_store(&trace_sample_slots_busy, 0);
	atomic_store(&trace_sample_halted, false); /* the child's file is its own */
	trace_wall_after_fork_child();
	trace_asample_on = false;
	alloc_route_flag(ALLOC_ROUTE_ASAMPLE, false);
	trace_counts_on = false;
	errno = saved_errno;
}

/* MEMINST asked for sampling: start with the program, after the
** allocation layer (constructor 101) and before main. */
static void sample_start_from_env(void)
{
	alloc_init();
	sample_settings_t s;
	if (!sample_settings_of(&alloc_opts, &s))
		return;
	pthread_mutex_lock(&trace_sample_lock);
	int rc = sample_start_locked(&s);
	if (rc < 0)
		sample_stop_locked();
	pthread_mutex_unlock(&trace_sample_lock);
	/* Said, never silent; and the program runs, as with a trace file that
	** cannot be made under trace=: a process that switched to another user
	** cannot create its file in the launcher's private directory, and
	** `meminst -- su -c CMD nobody` ended with status 2, CMD never run. */
	if (rc < 0 && !trace_fio_failed() && !alloc_seccomp_refuses(ALLOC_SC_FILES)) /* else said */
		alloc_log_run(NULL, "sampling is off");
}

/* (main starts with its own errno: see api_constructor) */
__attribute__((constructor(102))) static void sample_constructor(void)
{
	int saved_errno = errno;
	pthread_atfork(sample_prefork, sample_postfork_parent, trace_sample_postfork_child);
	sample_start_from_env();
	errno = saved_errno;
}

/* ---------------------------------------------------------- the API --- */

ALLOC_EXPORT int meminst_sample_start(const char *options)
{
	alloc_options_t o;
	char err[ALLOC_OPTIONS_ERRMAX];
	if (alloc_options_parse(options ? options : "", &o, err, sizeof err) < 0) {
		alloc_log("meminst_sample_start: %s", err);
		return -1;
	}
	if (o.mode != MEMINST_MODE_OFF || o.snapshot || o.interval_ns || o.trace_clock ||
	    o.control || o.print_kinds) {
		alloc_log("meminst_sample_start: only sample, sample_clock, alloc_sample, "
			  "sample_counts, sample_depth and trace_file are accepted");
		return -1;
	}
	sample_settings_t s;
	if (!sample_settings_of(&o, &s)) {
		s.hz = 100; /* no sampling item: the default, 100 Hz of CPU time */
		s.clock = MEMINST_TRACE_SAMPLE_CPU;
	}
	alloc_guard_enter(); /* what libc allocates for us is not the program's */
	pthread_mutex_lock(&trace_sample_lock);
	int rc = sample_start_locked(&s);
	pthread_mutex_unlock(&trace_sample_lock);
	alloc_guard_exit();
	return rc;
}

ALLOC_EXPORT int meminst_sample_stop(void)
{
	int active = meminst_sample_active();
	pthread_mutex_lock(&trace_sample_lock);
	sample_stop_locked();
	pthread_mutex_unlock(&trace_sample_lock);
	return active ? 0 : -1;
}

/* Readers drop every sample, allocation sample and count recorded before
** the SAMPLE_RESET record (see meminst-trace.h). */
ALLOC_EXPORT int meminst_sample_reset(void)
{
	if (!meminst_sample_active())
		return -1;
	pthread_mutex_lock(&trace_sample_lock);
	if (trace_counts_on)
		trace_counts_reset();
	atomic_store(&sample_cost_ticks, 0);
	atomic_store(&sample_cost_runs, 0);
	uint64_t rec[2] = {MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE_RESET, trace_now()),
			   MEMINST_TREC_SIZE_WORD(2, 0)};
	trace_ev_append(rec, 2);
	pthread_mutex_unlock(&trace_sample_lock);
	return 0;
}

ALLOC_EXPORT int meminst_sample_active(void)
{
	return (atomic_load(&trace_sample_running) ? MEMINST_SAMPLE_TIMER : 0) |
	       (trace_asample_on ? MEMINST_SAMPLE_ALLOC : 0) |
	       (trace_counts_on ? MEMINST_SAMPLE_COUNTS : 0);
}
