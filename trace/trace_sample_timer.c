/*
** trace_sample_timer.c — the sampling timers, one per thread: a perf_event
** task-clock counter or a POSIX CPU-time timer (SIGPROF to that thread
** alone), their slots, made for the threads listed in /proc/self/task and
** for each thread created later, removed when a thread ends or sampling
** stops (see trace_sample.c's head comment for why per thread).
**
** Separate from trace_sample.c, which keeps the SIGPROF handler, the
** thread hooks and start/stop: the timers are the kernel-facing half (perf
** events, timer_create, their fallbacks), read and changed apart from the
** handler.  The slots change only with trace_sample_slots_busy raised and
** trace_sample_lock held (trace_sampler.h).
*/
#include "trace_sampler.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"

struct sample_timer_s trace_sample_timers[SAMPLE_TIMERS_MAX];
/* The slots from this one on were never used: every scan stops here.  The
** table is 48 kB of .bss, and a kernel may give each page of it that is
** only read a page of its own (this VM's does: bench/RESULTS.md, issue 29),
** where a scan of the whole table took 48 kB of the program's resident set
** at the first thread's start.  Grows with slots held; set back to 0 in a
** fork's child. */
_Atomic unsigned trace_sample_timers_top;
static bool sample_no_perf; /* perf_event_open refused once: POSIX timers */
/* This thread's timer is stopped while the program blocks SIGPROF in it
** (trace_sample_masked). */
static __thread bool sample_paused ALLOC_TLS_MODEL;
/* Why: the program blocks SIGPROF, or its alternate signal stack has no
** room for a tick (trace_sample_alt_stack). */
static __thread bool sample_blocked ALLOC_TLS_MODEL, sample_alt_small ALLOC_TLS_MODEL;
static __thread bool sample_own_small ALLOC_TLS_MODEL; /* trace_sample_no_room */

/* ------------------------------------------------------------ timers --- */

/* The CPU-time clock of any thread of the process, by tid: the kernel's
** encoding (what pthread_getcpuclockid builds), CPUCLOCK_SCHED | PERTHREAD. */
static clockid_t sample_thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid) << 3 | 6);
}

/* A task-clock perf event of thread `tid` that signals it every period of
** its CPU time, user and system: with exclude_kernel a period that ended in
** the kernel was dropped, not delivered on the way out, so a program in
** system calls (I/O loops, futexes) kept a sample for its user time only
** (a loop of clock_gettime system calls: 557 ms of samples for 1515 ms of
** CPU).  Counting the kernel needs perf_event_paranoid <= 1 or the
** capability: where it is refused, the caller falls back to the POSIX
** timer on the thread's CPU clock, which counts both.  The descriptor, or
** -1; *id its PERF_EVENT_IOC_ID (trace_sample_perf_ours). */
static int sample_perf_make(pid_t tid, uint64_t *id)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = trace_sample_period_ns;
	a.exclude_hv = 1;
	a.disabled = 1;
	a.wakeup_events = 1;
	int fd = alloc_sys_fd_high((int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
	if (fd < 0)
		return -1;
	struct f_owner_ex owner = {F_OWNER_TID, tid};
	if (fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, SAMPLE_SIGNAL) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ID, id) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
** Is the slot's descriptor still its perf event?  The number is high but
** the program may have put a file of its own on it (dup2(fd, 1000); bash's
** exec 1000>file): then closing it when the thread ends, or its
** ENABLE/DISABLE ioctls, hit the program's file (a program that put files
** on 990 to 1023 while its threads sampled found writes to some failing
** with EBADF).  A perf event's id is unique in the system; another file
** answers PERF_EVENT_IOC_ID with an error.  A system call: any context.
*/
bool trace_sample_perf_ours(const struct sample_timer_s *t)
{
	uint64_t id;
	return ioctl(t->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->perf_id;
}

/* Make and arm the timer of thread `tid`.  trace_sample_lock held. */
static int sample_timer_make(pid_t tid, timer_t *out, int *fd, uint64_t *perf_id)
{
	*fd = -1;
	if (trace_sample_clock == MEMINST_TRACE_SAMPLE_WALL) { /* the sampler thread's */
		*fd = SAMPLE_FD_WALL;
		return trace_wall_thread_add(tid);
	}
	if (trace_sample_clock == MEMINST_TRACE_SAMPLE_CPU && !sample_no_perf) {
		if ((*fd = sample_perf_make(tid, perf_id)) >= 0)
			return 0;
		if (errno == EACCES || errno == EPERM || errno == ENOSYS || errno == ENOENT)
			sample_no_perf = true; /* not allowed here: timers from now on */
	}
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SAMPLE_SIGNAL;
	ev.sigev_value.sival_ptr = SAMPLE_COOKIE;
	ev._sigev_un._tid = tid;
	clockid_t clk = trace_sample_clock == MEMINST_TRACE_SAMPLE_WALL
			    ? CLOCK_MONOTONIC : sample_thread_cpu_clock(tid);
	if (timer_create(clk, &ev, out) < 0)
		return -1;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(trace_sample_period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(trace_sample_period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(*out, 0, &its, NULL) < 0) {
		timer_delete(*out);
		return -1;
	}
	return 0;
}

/* Arm (period) or disarm (0) the timer of one slot.  A system call. */
static void sample_timer_arm(const struct sample_timer_s *t, uint64_t period_ns)
{
	if (t->fd >= 0) {
		if (trace_sample_perf_ours(t))
			ioctl(t->fd, period_ns ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	} else if (t->fd == -1) {
		struct itimerspec its;
		its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
		its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
		its.it_value = its.it_interval;
		timer_settime(t->id, 0, &its, NULL);
	}
}

/* A tick of ours pending for the calling thread `tid`, which blocks
** SIGPROF, is taken off; a SIGPROF of the program's is put back. */
static void sample_tick_take(pid_t tid)
{
	sigset_t mask, pending, one;
	if (alloc_sys_sigmask(SIG_SETMASK, NULL, &mask) == 0 && sigismember(&mask, SAMPLE_SIGNAL) &&
	    sigpending(&pending) == 0 && sigismember(&pending, SAMPLE_SIGNAL)) {
		siginfo_t si;
		struct timespec zero = {0, 0};
		sigemptyset(&one);
		sigaddset(&one, SAMPLE_SIGNAL);
		if (sigtimedwait(&one, &si, &zero) == SAMPLE_SIGNAL && !trace_sample_tick_drop(&si))
			syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SAMPLE_SIGNAL, &si); /* the program's */
	}
}

/* The calling thread's timer stops before an exec.  No lock (an exec may
** come from a signal handler, or from a vfork child, whose tid has no slot:
** the slot found is this thread's own, which only this thread, a stop or a
** failure changes).  A tick made before the stop was delivered when the
** ioctl or timer_settime returned, unless the thread blocks SIGPROF: then it
** is taken off here, since pending signals and the mask outlive the exec. */
bool trace_sample_exec_begin(void)
{
	if (!atomic_load(&trace_sample_running) || trace_sample_clock != MEMINST_TRACE_SAMPLE_CPU ||
	    sample_paused)
		return false;
	pid_t tid = alloc_sys_gettid();
	const struct sample_timer_s *t = trace_sample_timers, *end = t + SAMPLE_TIMERS_TOP();
	while (t < end && t->tid != tid)
		t++;
	if (t == end)
		return false;
	sample_timer_arm(t, 0);
	sample_tick_take(tid);
	return true;
}

void trace_sample_exec_end(bool stopped)
{
	if (!stopped || !atomic_load(&trace_sample_running))
		return;
	pid_t tid = alloc_sys_gettid();
	for (const struct sample_timer_s *t = trace_sample_timers, *end = t + SAMPLE_TIMERS_TOP(); t < end; t++)
		if (t->tid == tid) {
			sample_timer_arm(t, trace_sample_period_ns);
			break;
		}
}

/* The calling thread blocked (or unblocked) SIGPROF: trace_sigwrap.c's
** sigprocmask and pthread_sigmask.  Our ticks would stay pending for it,
** where sigpending, a signalfd or sigwait of the program finds them as
** signals of its own (a daemon that blocks every signal and reads them
** from a signalfd took each tick for a SIGPROF): its timer stops until it
** unblocks SIGPROF, and a tick already pending is taken off (exec_begin).
** The thread is not sampled meanwhile (wall clock: the sampler thread
** sends it nothing, its periods weigh in its next sample). */
static void sample_pause_set(bool blocked)
{
	if (trace_sample_clock == MEMINST_TRACE_SAMPLE_WALL) { /* the sampler thread's signals */
		if (trace_wall_masked(blocked))
			sample_tick_take(alloc_sys_gettid());
		return;
	}
	if (blocked && !sample_paused) {
		sample_paused = trace_sample_exec_begin();
	} else if (!blocked && sample_paused) {
		sample_paused = false;
		trace_sample_exec_end(true);
	}
}

void trace_sample_masked(bool blocked)
{
	sample_blocked = blocked;
	sample_pause_set(sample_blocked || sample_alt_small || sample_own_small);
}

/*
** The handler runs on the thread's alternate signal stack (SA_ONSTACK,
** trace_sample.c); one with no room for the kernel's signal frame
** (sysconf(_SC_MINSIGSTKSZ): 3376 bytes with AVX-512) and the handler's
** frame cannot take a tick: the kernel kills the thread with SIGSEGV.  A
** program that set a MINSIGSTKSZ (2048) stack for a SIGSEGV handler that
** never runs lived bare and died at the first tick.  Such a thread is not
** sampled while it keeps that stack (as while it blocks SIGPROF).
*/
#define SAMPLE_ALT_HANDLER_ROOM 4096

bool trace_sample_alt_too_small(const stack_t *ss)
{
	long frame = 2048;
#ifdef _SC_MINSIGSTKSZ
	long k = sysconf(_SC_MINSIGSTKSZ);
	if (k > frame)
		frame = k;
#endif
	return ss && !(ss->ss_flags & SS_DISABLE) && ss->ss_size < (size_t)frame + SAMPLE_ALT_HANDLER_ROOM;
}

/* The calling thread set (or queried: the same) its alternate stack; SIGPROF
** is blocked by the caller. */
void trace_sample_alt_stack(bool small)
{
	sample_alt_small = small;
	sample_pause_set(sample_blocked || sample_alt_small || sample_own_small);
}

/* The calling thread runs on a small stack the program gave it
** (pthread_attr_setstack, trace_thread.c): a tick's walk there would write
** past it, into the program's memory.  It is not sampled, for life. */
void trace_sample_no_room(void)
{
	sigset_t prof, was;
	sigemptyset(&prof);
	sigaddset(&prof, SAMPLE_SIGNAL);
	alloc_sys_sigmask(SIG_BLOCK, &prof, &was);
	sample_own_small = true;
	sample_pause_set(true);
	alloc_sys_sigmask(SIG_SETMASK, &was, NULL);
}

/* The calling thread's timer was just made, armed (sampling started, or the
** thread did): stopped if the thread blocks SIGPROF already (a mask
** inherited through exec, or from the thread that created it), or has an
** alternate stack too small for a tick. */
void trace_sample_mask_sync(void)
{
	sigset_t mask;
	stack_t ss;
	sample_paused = false;
	sample_blocked = alloc_sys_sigmask(SIG_SETMASK, NULL, &mask) == 0 && sigismember(&mask, SAMPLE_SIGNAL);
	sample_alt_small = sigaltstack(NULL, &ss) == 0 && trace_sample_alt_too_small(&ss);
	if (sample_blocked || sample_alt_small || sample_own_small)
		sample_pause_set(true);
}

/* Every timer stops sending anything (each stays made until
** sample_timer_free; SAMPLE_FD_WALL slots: the sampler thread is halted
** as a whole).  System calls only: any context, slots held. */
void trace_sample_timers_disarm(void)
{
	for (const struct sample_timer_s *t = trace_sample_timers, *end = t + SAMPLE_TIMERS_TOP(); t < end; t++)
		if (t->tid)
			sample_timer_arm(t, 0);
}

/* Around every change of a slot (trace_sample_lock held): a failure meanwhile
** left the disarming to us. */
static void sample_slots_enter(void)
{
	while (atomic_exchange(&trace_sample_slots_busy, 1)) /* a failure disarming them */
		alloc_sys_yield();
}

static void sample_slots_leave(void)
{
	atomic_store(&trace_sample_slots_busy, 0);
	if (atomic_load(&trace_sample_halted) && !atomic_exchange(&trace_sample_slots_busy, 1)) {
		trace_sample_timers_disarm();
		atomic_store(&trace_sample_slots_busy, 0);
	}
}

static void sample_timer_free(struct sample_timer_s *t)
{
	if (t->fd == SAMPLE_FD_WALL)
		trace_wall_thread_remove(t->tid);
	else if (t->fd >= 0 && trace_sample_perf_ours(t))
		close(t->fd);
	else if (t->fd < 0)
		timer_delete(t->id);
	t->tid = 0;
}

/* Give `tid` a timer unless it has one.  trace_sample_lock held. */
static void sample_timer_add_slots(pid_t tid, bool replace)
{
	struct sample_timer_s *free_slot = NULL;
	unsigned top = SAMPLE_TIMERS_TOP();
	for (unsigned i = 0; i < top; i++) {
		struct sample_timer_s *t = &trace_sample_timers[i];
		if (t->tid == tid) {
			if (!replace)
				return;
			/* a new thread with the number of a dead one: its timer
			** aimed at the old task and never fires again */
			sample_timer_free(t);
		}
		if (!t->tid && !free_slot)
			free_slot = t;
	}
	if (!free_slot && top < SAMPLE_TIMERS_MAX)
		free_slot = &trace_sample_timers[top]; /* one never used */
	if (!free_slot) { /* forget threads that ended without telling us */
		for (unsigned i = 0; i < top; i++)
			if (trace_sample_timers[i].tid &&
			    syscall(SYS_tgkill, getpid(), trace_sample_timers[i].tid, 0) < 0) {
				sample_timer_free(&trace_sample_timers[i]);
				free_slot = &trace_sample_timers[i];
			}
		if (!free_slot)
			return; /* too many threads: this one goes unsampled */
	}
	if (!atomic_load(&trace_sample_halted) && sample_timer_make(tid, &free_slot->id, &free_slot->fd, &free_slot->perf_id) == 0)
		free_slot->tid = tid;
	if (free_slot->tid && free_slot == &trace_sample_timers[top]) /* after its fields */
		atomic_store_explicit(&trace_sample_timers_top, top + 1, memory_order_release);
}

void trace_sample_timer_add(pid_t tid, bool replace)
{
	sample_slots_enter();
	sample_timer_add_slots(tid, replace);
	sample_slots_leave();
}

void trace_sample_timer_remove(pid_t tid)
{
	sample_slots_enter();
	for (unsigned i = 0, top = SAMPLE_TIMERS_TOP(); i < top; i++)
		if (trace_sample_timers[i].tid == tid) {
			sample_timer_free(&trace_sample_timers[i]);
		}
	sample_slots_leave();
}

void trace_sample_timers_clear(void)
{
	sample_slots_enter();
	for (unsigned i = 0, top = SAMPLE_TIMERS_TOP(); i < top; i++)
		if (trace_sample_timers[i].tid) {
			sample_timer_free(&trace_sample_timers[i]);
		}
	sample_slots_leave();
}

/* Every thread that exists now (threads made before sampling started do
** not pass through our pthread_create wrapper).  Read with getdents64 into
** a stack buffer: opendir would allocate.  trace_sample_lock held. */
void trace_sample_timers_existing(void)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			pid_t tid = (pid_t)atoi(d->d_name);
			bool internal = false;
			for (unsigned i = 0; i < SAMPLE_INTERNAL_MAX; i++)
				internal |= atomic_load(&trace_sample_internal[i]) == tid;
			if (tid > 0 && !internal)
				trace_sample_timer_add(tid, false);
		}
	close(fd);
}
