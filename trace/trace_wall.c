/*
** trace_wall.c — wall-clock sampling (sample_clock=wall) that never
** interrupts a blocked thread.
**
** Why not a wall-clock timer per thread, as cpu mode has: its signal ends
** any wait the thread is in.  nanosleep, clock_nanosleep, poll, select and
** epoll_wait are never restarted after a handler ran, SA_RESTART or not,
** so the program saw EINTR and short sleeps, and the blocked time that wall
** mode exists to show was cut short.
**
** Instead one sampler thread of ours wakes every period and looks at each
** sampled thread:
**   - inside a blocking call that libmeminst wraps (trace_suspend.c): the
**     wrapper took the thread's stack on the way in, with the real
**     function as its innermost frame, and marked its slot BLOCKED; the
**     sampler writes the sample itself, into that thread's signal stream.
**     No signal at all.
**   - otherwise, the kernel says (/proc/self/task/TID/syscall) whether it
**     runs, or waits in a system call that SA_RESTART restarts (read on a
**     pipe, waitpid …): then it gets a SIGPROF (rt_tgsigqueueinfo, SI_QUEUE
**     with our cookie) and its handler walks the stack, as in cpu mode.
**     Any other system call is a wait that a handler would end (nanosleep,
**     poll, futex with a time-out …) that meminst does not wrap (a raw
**     system call, libc calling itself): no signal either, and the sample
**     carries the thread's last stack (from its last signalled sample, at
**     most one period of running before the wait began) if it has one
**     since its last wrapped wait.
** A slot goes RUN -> SIGNALLED (sampler, compare-and-swap) -> RUN (handler),
** or RUN -> BLOCKED (wrapper, compare-and-swap) -> RUN.  A wrapper that finds
** its slot SIGNALLED lets the tick land first (it yields until the handler
** has run: a signal is delivered when a system call returns, and the
** sampler may mark the slot a moment before it sends), so no tick can
** reach the real call.  Periods a thread owes (its signal not handled yet: not
** scheduled, or SIGPROF blocked) add up in `pending` and weigh in the next
** sample: a thread that blocks SIGPROF is sampled when it unblocks it.
**
** What is left: a thread that starts a raw, unwrapped wait in the few
** microseconds between the sampler's look and its signal sees that one
** signal (see meminst(7)).
*/
#define _GNU_SOURCE
#include "trace_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "../alloc/alloc_int.h"

enum { WALL_FREE, WALL_RUN, WALL_SIGNALLED, WALL_BLOCKED };

typedef struct wall_slot_s {
	_Atomic int tid;           /* 0: free */
	_Atomic int state;         /* WALL_* */
	_Atomic uint32_t pending;  /* periods owed to the next signalled sample */
	_Atomic bool masked;       /* the program blocks SIGPROF: no signal */
	trace_thr_t *_Atomic rec;  /* the thread's trace record, once known */
	_Atomic unsigned nblocked, nlast;
	uint64_t *blocked;         /* its stack at the wrapped call's entry */
	uint64_t *last;            /* its stack at its last signalled sample */
} wall_slot_t;

#define WALL_SLOTS 2048
#define WALL_STACK ((size_t)256 << 10) /* each of its two threads' */
#define WALL_COOKIE ((void *)wall_slots)

static wall_slot_t wall_slots[WALL_SLOTS];
static _Atomic int wall_lock;        /* slots added, removed, or ticked */
static uint64_t *wall_frames;        /* 2 x (depth + 1) words per slot (mmap) */
static size_t wall_frames_bytes;
static unsigned wall_depth;          /* frames per stack, the mark included */
static uint64_t wall_period_ns, wall_weight;
static pthread_t wall_thread;
static _Atomic bool wall_run;
static _Atomic int wall_thread_tid;

/* The probe thread (see "probe" below): asked and done count the ticks. */
static pthread_t wall_probe_thread;
static _Atomic int wall_probe_tid;    /* 0: none, the sampler reads itself */
static _Atomic int wall_probe_ready;  /* 0: starting, 1: private table, -1: none */
static _Atomic bool wall_probe_quit;
static _Atomic uint32_t wall_probe_asked, wall_probe_done;
static unsigned wall_probe_n;         /* tids asked about this tick */
static pid_t wall_probe_tids[WALL_SLOTS];
static char wall_probe_states[WALL_SLOTS];
_Atomic bool trace_wall_on;          /* the wrappers' one test */

static __thread int wall_my_slot ALLOC_TLS_MODEL; /* index + 1, 0: unknown */
static __thread int wall_my_tid ALLOC_TLS_MODEL;

/* ------------------------------------------------------------- slots --- */

static wall_slot_t *wall_self(void)
{
	if (!wall_my_tid)
		wall_my_tid = alloc_sys_gettid();
	int i = wall_my_slot - 1;
	if (i >= 0 && atomic_load_explicit(&wall_slots[i].tid, memory_order_acquire) == wall_my_tid)
		return &wall_slots[i];
	for (i = 0; i < WALL_SLOTS; i++) /* async-signal-safe: plain loads */
		if (atomic_load_explicit(&wall_slots[i].tid, memory_order_acquire) == wall_my_tid) {
			wall_my_slot = i + 1;
			return &wall_slots[i];
		}
	return NULL;
}

/* `tid` is sampled from now on.  Normal context. */
int trace_wall_thread_add(int tid)
{
	if (!wall_frames || tid == atomic_load(&wall_thread_tid) || tid == atomic_load(&wall_probe_tid))
		return -1;
	int rc = -1;
	trace_spin_lock(&wall_lock);
	for (unsigned i = 0; i < WALL_SLOTS; i++) {
		wall_slot_t *s = &wall_slots[i];
		if (atomic_load(&s->tid))
			continue;
		s->blocked = wall_frames + (size_t)i * 2 * wall_depth;
		s->last = s->blocked + wall_depth;
		s->nblocked = s->nlast = 0;
		s->pending = 0;
		s->masked = false;
		s->rec = tid == alloc_sys_gettid() ? trace_thread_record() : NULL;
		atomic_store(&s->state, WALL_RUN);
		atomic_store_explicit(&s->tid, tid, memory_order_release);
		rc = 0;
		break;
	}
	trace_spin_unlock(&wall_lock);
	return rc;
}

void trace_wall_thread_remove(int tid)
{
	trace_spin_lock(&wall_lock);
	for (unsigned i = 0; i < WALL_SLOTS; i++)
		if (atomic_load(&wall_slots[i].tid) == tid) {
			atomic_store(&wall_slots[i].tid, 0);
			atomic_store(&wall_slots[i].state, WALL_FREE);
			wall_slots[i].rec = NULL;
		}
	trace_spin_unlock(&wall_lock);
}

/* ---------------------------------------------------------- wrappers --- */

/* A wrapped blocking call begins: remember the stack, `fn` (the real
** function) innermost, and let the sampler take it without a signal.
** Returns the slot for trace_wall_block_end, or NULL. */
void *trace_wall_block_begin(void *fn)
{
	/* not from inside our own stack walk: libunwind takes locks, and a
	** contended one would walk again, and again, to a stack overflow */
	wall_slot_t *s = trace_unwind_busy() ? NULL : wall_self();
	if (!s)
		return NULL;
	int old = atomic_load(&s->state);
	if (old == WALL_BLOCKED) /* a wrapped call inside another (libc's own) */
		return NULL;
	s->blocked[0] = (uint64_t)(uintptr_t)fn;
	atomic_store_explicit(&s->nblocked, trace_sample_walk_here(s->blocked, 1), memory_order_release);
	int want = WALL_RUN;
	struct timespec t0 = {0, 0}, t;
	while (!atomic_compare_exchange_strong(&s->state, &want, WALL_BLOCKED)) {
		if (want != WALL_SIGNALLED)
			return NULL;
		/* A tick is on its way: it must land here, not in the call,
		** where it would cut the wait short.  The sampler may not have
		** sent it yet (it marks the slot first), so yield until its
		** handler has run (the slot is RUN again): a sent signal lands
		** when a system call returns.  Unless this thread blocks
		** SIGPROF: then the tick stays pending through the call, which
		** it cannot cut short either. */
		sigset_t cur;
		alloc_sys_sigmask(SIG_BLOCK, NULL, &cur);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!t0.tv_sec && !t0.tv_nsec)
			t0 = t;
		/* 20 ms at most: a SIGPROF handler of the program's own in place
		** of ours would never mark the slot RUN again */
		bool late = (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > 20000000L;
		if (sigismember(&cur, SIGPROF) || late) {
			atomic_store(&s->state, WALL_BLOCKED);
			return s;
		}
		alloc_sys_yield();
		want = WALL_RUN;
	}
	return s;
}

void trace_wall_block_end(void *slot)
{
	wall_slot_t *s = slot;
	if (!s)
		return;
	/* it runs on from here: its last signalled stack is older than the
	** wait, no stack for a raw wait that may follow */
	atomic_store_explicit(&s->nlast, 0, memory_order_relaxed);
	atomic_store_explicit(&s->state, WALL_RUN, memory_order_release);
}

/* ----------------------------------------------------------- handler --- */

/* In the SIGPROF handler: was it our tick?  Then fill the periods it
** stands for and the frames (n words at most), and return true with
** *nframes set (0: nothing to record). */
bool trace_wall_tick_drop(const void *info)
{
	const siginfo_t *si = info;
	if (si->si_code != SI_QUEUE || si->si_value.sival_ptr != WALL_COOKIE)
		return false;
	wall_slot_t *s = wall_self();
	if (s) {
		atomic_exchange(&s->pending, 0);
		int want = WALL_SIGNALLED;
		atomic_compare_exchange_strong(&s->state, &want, WALL_RUN);
	}
	return true;
}

bool trace_wall_signal(const void *info, void *uc, uint64_t *periods, uint64_t *frames,
		       unsigned *nframes)
{
	const siginfo_t *si = info;
	if (si->si_code != SI_QUEUE || si->si_value.sival_ptr != WALL_COOKIE)
		return false;
	*nframes = 0;
	wall_slot_t *s = wall_self();
	if (!s)
		return true;
	if (!atomic_load(&wall_run)) { /* stopped meanwhile: the slot is RUN again */
		int want = WALL_SIGNALLED;
		atomic_compare_exchange_strong(&s->state, &want, WALL_RUN);
		return true;
	}
	*periods = atomic_exchange(&s->pending, 0);
	if (atomic_load(&s->state) == WALL_BLOCKED) { /* came late, in a wrapper */
		unsigned n = atomic_load(&s->nblocked);
		memcpy(frames, s->blocked, n * 8u);
		*nframes = n;
	} else {
		unsigned n = trace_sample_walk(uc, frames);
		memcpy(s->last, frames, n * 8u);
		atomic_store_explicit(&s->nlast, n, memory_order_release);
		*nframes = n;
		int want = WALL_SIGNALLED;
		atomic_compare_exchange_strong(&s->state, &want, WALL_RUN);
	}
	if (!s->rec) /* made by now, or a spare taken by the record before */
		s->rec = trace_tls.rec;
	if (!*periods)
		*periods = 1;
	return true;
}

/* ------------------------------------------------------------ sampler --- */

/* System calls that a SIGPROF handler with SA_RESTART does not cut short
** (the kernel restarts them, or they do not sleep): a thread inside one is
** signalled like a running one, for its exact stack.  Others (nanosleep,
** poll, select, epoll_wait, futex with a time-out, pause …) end with EINTR
** after any handler, SA_RESTART or not. */
bool trace_syscall_restartable(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_pread64: case SYS_pwrite64: case SYS_preadv: case SYS_pwritev:
	case SYS_open: case SYS_openat: case SYS_wait4: case SYS_waitid:
	case SYS_accept: case SYS_accept4: case SYS_connect: case SYS_recvfrom:
	case SYS_recvmsg: case SYS_sendto: case SYS_sendmsg: case SYS_flock:
	case SYS_fsync: case SYS_fdatasync:
		return true;
	default:
		return false;
	}
}

/* What the thread does now, from /proc/self/task/TID/syscall: 'R' running
** (or in a system call a signal does not cut short), 'S' sleeping where a
** signal would end the wait, '?' unreadable (the thread is gone). */
static char wall_proc_state(pid_t tid)
{
	char path[64], buf[256];
	alloc_fmt(path, sizeof path, "/proc/self/task/%d/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	if (buf[0] == 'r') /* "running" */
		return 'R';
	long nr = strtol(buf, NULL, 10); /* -1: blocked outside a system call */
	return nr < 0 || trace_syscall_restartable(nr) ? 'R' : 'S';
}

/* ------------------------------------------------------------ probe --- */

static uint64_t wall_mono_ns(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* wall_proc_state opens /proc/self/task/TID/syscall.  In the program's
** table of descriptors each open took the lowest free number for a moment,
** and a program thread opening a file just then got the next number
** (tests/integration/fd_numbers.sh, make distcheck).  So the opens are made
** by a thread of ours with a table of its own (unshare CLONE_FILES),
** emptied at once (holding the program's descriptors would keep, say, a
** pipe's write end open behind its back).  The sampler thread cannot be that
** thread: it writes full signal streams to the trace file, a descriptor of
** the shared table.  Each tick the sampler asks once for every thread it
** looks at and waits (futex) for the answer.  Where unshare is refused, no
** probe thread: the sampler reads itself, as before. */
static void wall_futex_wait(_Atomic uint32_t *word, uint32_t seen, const struct timespec *limit)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, limit, NULL, 0);
}

static void wall_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static bool wall_private_descriptors(void)
{
	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		return false;
	if (syscall(SYS_close_range, 0u, ~0u, 0u) != 0) { /* kernels before 5.9 */
		struct rlimit r;
		long max = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (1u << 20) ? (long)r.rlim_cur
											: 1 << 20;
		for (long fd = 0; fd < max; fd++)
			(void)close((int)fd);
	}
	return true;
}

/*
** Once a second, whether the program is gone: its main thread ended by the
** bare exit system call and no thread of it is left, where the sampler and
** this probe would keep the process alive for ever (alloc_exit.c; the
** snapshot service looks too when it runs).  Its reads of /proc open files:
** in the probe's own table, they take no number of the program's (the
** sampler looks itself only where there is no probe).
*/
static const struct timespec wall_recheck = {1, 0};

static void wall_probe_recheck(uint64_t *checked)
{
	uint64_t now = wall_mono_ns();
	if (now - *checked < 1000000000u || atomic_load(&wall_probe_quit))
		return;
	*checked = now;
	alloc_exit_if_program_gone();
}

/* After an answer: the clock read every 16th (a system call; at up to
** 10,000 ticks a second). */
static void wall_probe_recheck_some(uint64_t *checked, unsigned *answers)
{
	if ((++*answers & 15) == 0)
		wall_probe_recheck(checked);
}

static void *wall_probe_main(void *arg)
{
	(void)arg;
	alloc_own_thread_enter(); /* not a program thread (alloc_exit.c) */
	trace_tls.busy = 1 << 20;
	atomic_store(&wall_probe_tid, alloc_sys_gettid());
	if (!wall_private_descriptors()) {
		pthread_detach(pthread_self()); /* no one joins a probe that never ran */
		atomic_store(&wall_probe_tid, 0);
		atomic_store(&wall_probe_ready, -1);
		alloc_own_thread_leave();
		return NULL;
	}
	atomic_store(&wall_probe_ready, 1);
	uint32_t seen = 0;
	uint64_t checked = wall_mono_ns();
	unsigned answers = 0;
	for (;;) {
		uint32_t asked;
		while ((asked = atomic_load(&wall_probe_asked)) == seen) {
			wall_futex_wait(&wall_probe_asked, seen, &wall_recheck);
			wall_probe_recheck(&checked);
		}
		seen = asked;
		if (atomic_load(&wall_probe_quit))
			break;
		for (unsigned i = 0; i < wall_probe_n; i++)
			wall_probe_states[i] = wall_proc_state(wall_probe_tids[i]);
		atomic_store(&wall_probe_done, asked);
		wall_futex_wake(&wall_probe_done);
		wall_probe_recheck_some(&checked, &answers);
	}
	alloc_own_thread_leave();
	return NULL;
}

/* The states of wall_probe_tids[0 .. wall_probe_n): the sampler thread,
** wall_lock held. */
static void wall_probe_all(void)
{
	if (atomic_load(&wall_probe_ready) != 1) {
		for (unsigned i = 0; i < wall_probe_n; i++)
			wall_probe_states[i] = wall_proc_state(wall_probe_tids[i]);
		return;
	}
	uint32_t asked = atomic_fetch_add(&wall_probe_asked, 1) + 1;
	wall_futex_wake(&wall_probe_asked);
	uint32_t done;
	while ((done = atomic_load(&wall_probe_done)) != asked)
		wall_futex_wait(&wall_probe_done, done, NULL);
}

/* A sample of a thread that is not running, written by the sampler into
** its signal stream: its stack at the wrapped call, or its last one. */
static void wall_record_blocked(wall_slot_t *s, pid_t tid, bool wrapped, uint64_t periods)
{
	trace_thr_t *t = s->rec;
	unsigned n = atomic_load_explicit(wrapped ? &s->nblocked : &s->nlast, memory_order_acquire);
	if (!t || !n)
		return;
	uint64_t rec[3 + TRACE_DEPTH_MAX + 1];
	memcpy(rec + 3, wrapped ? s->blocked : s->last, n * 8u);
	uint64_t now = trace_clock == MEMINST_TRACE_CLOCK_CPU
			       ? trace_clock_ns((clockid_t)((~(unsigned)tid) << 3 | 6)) /* its CPU clock */
			       : trace_now();
	rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE, now);
	rec[1] = MEMINST_TREC_SIZE_WORD(3 + n, n);
	rec[2] = periods * wall_weight;
	trace_sig_append_to(t, tid, rec, 3 + n);
}

static void wall_signal(wall_slot_t *s, pid_t tid, uint64_t periods)
{
	atomic_fetch_add(&s->pending, (uint32_t)periods);
	int want = WALL_RUN;
	if (!atomic_compare_exchange_strong(&s->state, &want, WALL_SIGNALLED))
		return; /* SIGNALLED: not handled yet, it owes one more; BLOCKED: next tick */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = SIGPROF;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = WALL_COOKIE;
	/* masked since the look: no signal (trace_wall_masked waits for this) */
	if (atomic_load(&s->masked) || syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGPROF, &si) < 0)
		atomic_store(&s->state, WALL_RUN);
}

/* The calling thread blocks SIGPROF (true) or unblocks it: the sampler
** sends it no signal meanwhile (its periods wait for the next one).  A
** signal the sampler decided on before it saw the flag is pending when
** this returns true (yields until then, 20 ms at most): the caller takes
** it off. */
bool trace_wall_masked(bool blocked)
{
	wall_slot_t *s = wall_self();
	if (!s)
		return false;
	atomic_store(&s->masked, blocked);
	if (!blocked)
		return false;
	sigset_t pending;
	for (int i = 0; i < 2000 && atomic_load(&s->state) == WALL_SIGNALLED; i++) {
		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPROF))
			break;
		alloc_sys_yield();
	}
	return true;
}

static void wall_tick(uint64_t periods)
{
	trace_spin_lock(&wall_lock);
	/* halted (trace_wall_halt) since the loop looked: no signal after
	** the halt saw the lock free */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load(&wall_run)) {
		trace_spin_unlock(&wall_lock);
		return;
	}
	/* the threads the kernel is asked about: those not in a wrapped wait */
	unsigned slot_of[WALL_SLOTS];
	wall_probe_n = 0;
	for (unsigned i = 0; i < WALL_SLOTS; i++) {
		pid_t tid = atomic_load(&wall_slots[i].tid);
		if (tid && atomic_load(&wall_slots[i].state) != WALL_BLOCKED) {
			slot_of[wall_probe_n] = i;
			wall_probe_tids[wall_probe_n++] = tid;
		}
	}
	if (wall_probe_n)
		wall_probe_all();
	for (unsigned i = 0, asked = 0; i < WALL_SLOTS; i++) {
		wall_slot_t *s = &wall_slots[i];
		pid_t tid = atomic_load(&s->tid);
		bool probed = asked < wall_probe_n && slot_of[asked] == i;
		char st = probed ? wall_probe_states[asked] : '?';
		asked += probed;
		if (!tid || (probed && tid != wall_probe_tids[asked - 1]))
			continue; /* gone, or its slot taken again, since the look */
		if (atomic_load(&s->state) == WALL_BLOCKED) {
			wall_record_blocked(s, tid, true, periods);
			continue;
		}
		if (st == 'R' && atomic_load(&s->masked)) {
			atomic_fetch_add(&s->pending, (uint32_t)periods); /* when it unblocks */
		} else if (st == 'R') {
			wall_signal(s, tid, periods);
		} else if (st == 'S') {
			/* waiting where no wrapper sees it; BLOCKED meanwhile
			** is the wrapper's stack, better still */
			wall_record_blocked(s, tid, atomic_load(&s->state) == WALL_BLOCKED, periods);
		}
	}
	trace_spin_unlock(&wall_lock);
}

/* Wakes at every period boundary (absolute times: no drift); periods it
** slept through on a busy machine weigh in the next samples. */
static void *wall_main(void *arg)
{
	(void)arg;
	alloc_own_thread_enter(); /* not a program thread (alloc_exit.c) */
	atomic_store(&wall_thread_tid, alloc_sys_gettid());
	trace_tls.busy = 1 << 20; /* nothing of ours is ever recorded here */
	uint64_t next = wall_mono_ns() + wall_period_ns, checked = next;
	while (atomic_load(&wall_run)) {
		struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		/* the system call: the wrapped name would look for our slot */
		if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0 &&
		    errno == EINTR)
			continue;
		if (!atomic_load(&wall_run))
			break;
		uint64_t now = wall_mono_ns(), periods = 1;
		if (now >= next + wall_period_ns)
			periods += (now - next) / wall_period_ns;
		next += periods * wall_period_ns;
		wall_tick(periods);
		/* no probe (unshare refused): the sampler reads /proc itself, in
		** the program's table, for its ticks and for this look */
		if (atomic_load(&wall_probe_ready) != 1)
			wall_probe_recheck(&checked);
	}
	alloc_own_thread_leave();
	return NULL;
}

/* ----------------------------------------------------- start / stop --- */

typedef int join_fn(pthread_t, void **);

static join_fn *wall_real_join(void)
{
	void *fn = dlsym(RTLD_NEXT, "pthread_join");
	join_fn *join;
	memcpy(&join, &fn, sizeof fn);
	return join;
}

/* The probe thread ends (the sampler thread has, or never started). */
static void wall_probe_end(void)
{
	int ready = atomic_exchange(&wall_probe_ready, -1);
	if (ready == -1 && !atomic_load(&wall_probe_tid))
		return; /* never ran, or ended by itself (joined below) */
	atomic_store(&wall_probe_quit, true);
	atomic_fetch_add(&wall_probe_asked, 1);
	wall_futex_wake(&wall_probe_asked);
	join_fn *join = wall_real_join();
	if (join)
		join(wall_probe_thread, NULL);
	atomic_store(&wall_probe_tid, 0);
}

/* Start the sampler thread.  sample_lock held. */
int trace_wall_start(uint64_t period_ns, uint64_t weight)
{
	unsigned depth = trace_sample_depth;
	wall_period_ns = period_ns;
	wall_weight = weight;
	if (!wall_frames || wall_depth != depth + 1) {
		if (wall_frames)
			alloc_sys_unmap(wall_frames, wall_frames_bytes);
		wall_depth = depth + 1; /* room for the [truncated] mark */
		wall_frames_bytes = (size_t)WALL_SLOTS * 2 * wall_depth * 8;
		if (!(wall_frames = alloc_sys_map(wall_frames_bytes))) {
			alloc_log("cannot start wall-clock sampling: out of memory");
			return -1;
		}
	}
	/* not program threads: the real pthread_create, every signal blocked */
	alloc_create_fn *create = trace_real_pthread_create();
	sigset_t all, old;
	sigfillset(&all);
	alloc_sys_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&wall_run, true);
	/* glibc's default stack is 8 MiB of address space each; they were
	** seen to touch 16 KiB */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, WALL_STACK);
	alloc_guard_enter(); /* their stacks and TLS are not the program's */
	atomic_store(&wall_probe_quit, false);
	atomic_store(&wall_probe_ready, 0);
	if (!create || alloc_own_thread_create(create, &wall_probe_thread, &at, wall_probe_main, NULL) != 0)
		atomic_store(&wall_probe_ready, -1);
	while (!atomic_load(&wall_probe_ready))
		alloc_sys_yield();
	int rc = create ? alloc_own_thread_create(create, &wall_thread, &at, wall_main, NULL) : ENOSYS;
	alloc_guard_exit();
	pthread_attr_destroy(&at);
	alloc_sys_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		atomic_store(&wall_run, false);
		wall_probe_end();
		if (!alloc_own_threads_refused())
			alloc_log("cannot start the wall-clock sampler thread: %s", strerror(rc));
		return -1;
	}
	while (!atomic_load(&wall_thread_tid)) /* its tid, never a slot's */
		alloc_sys_yield();
	atomic_store(&trace_wall_on, true);
	return 0;
}

/* Stop the sampler thread and wait for it (its last tick may be writing).
** sample_lock held. */
void trace_wall_stop(void)
{
	if (!atomic_exchange(&wall_run, false))
		return;
	atomic_store(&trace_wall_on, false);
	join_fn *join = wall_real_join();
	if (join)
		join(wall_thread, NULL);
	atomic_store(&wall_thread_tid, 0);
	wall_probe_end();
}

/* unshare or setns that needs a process of one thread: the sampler and
** its probe end for the call (alloc_service_single_threaded), then start
** again.  True if they were running. */
bool trace_wall_pause(void)
{
	pthread_mutex_lock(&trace_sample_lock);
	bool was = atomic_load(&wall_run);
	if (was)
		trace_wall_stop();
	pthread_mutex_unlock(&trace_sample_lock);
	return was;
}

void trace_wall_resume(void)
{
	pthread_mutex_lock(&trace_sample_lock);
	if (!atomic_load(&wall_run))
		(void)trace_wall_start(wall_period_ns, wall_weight);
	pthread_mutex_unlock(&trace_sample_lock);
}

/*
** A tick under way ends before the flush takes the streams, and sends
** nothing after the halt returns.  It waits for the probe thread, and on a
** loaded machine either thread can be switched out for milliseconds: the
** wait is bounded by time (WALL_HALT_WAIT_NS), not by a count of yields
** (1,000 were ~1 ms, and a tick's SIGPROF came after a failed write had
** halted the sampler: tests/trace/diskfull.sh in CI).  Bounded, because
** the holder can be this very thread (a fatal signal inside
** trace_wall_thread_add).  Any context (clock_gettime is the vDSO's).
*/
#define WALL_HALT_WAIT_NS 250000000u
void trace_wall_halt(void)
{
	atomic_store(&trace_wall_on, false);
	atomic_store(&wall_run, false);
	if (!atomic_load(&wall_lock))
		return;
	uint64_t until = trace_clock_ns(CLOCK_MONOTONIC) + WALL_HALT_WAIT_NS;
	while (atomic_load(&wall_lock) && trace_clock_ns(CLOCK_MONOTONIC) < until)
		alloc_sys_yield();
}

/* A child of fork has no sampler thread, and its one thread's TLS is the
** forking thread's. */
void trace_wall_after_fork_child(void)
{
	atomic_store(&wall_run, false);
	atomic_store(&trace_wall_on, false);
	atomic_store(&wall_lock, 0);
	atomic_store(&wall_thread_tid, 0);
	atomic_store(&wall_probe_tid, 0);
	atomic_store(&wall_probe_ready, -1);
	for (unsigned i = 0; i < WALL_SLOTS; i++)
		atomic_store(&wall_slots[i].tid, 0);
	wall_my_slot = 0;
	wall_my_tid = 0;
}
