/*
** alloc_exit.c — the exit snapshot of a process that ends with _exit or
** _Exit, and meminst's own threads.
**
** exit(3) runs the atexit handler that stores the exit snapshot; _exit and
** _Exit skip it, and many processes end that way (dash ends every `sh -c`
** so, and so do children after fork).  The interposed _exit
** (trace_sigwrap.c) calls alloc_exit_fast first.  _exit is also called
** from signal handlers and from vfork children, where storing a snapshot
** could wait for ever on a lock the interrupted code holds, or write over
** the parent's memory.  So it is stored only where that is safe:
**   - the process is the one the library started in or a fork child of it
**     (a vfork child shares its parent's memory: getpid differs from the
**     pid recorded at start and at each fork);
**   - the calling thread is not inside meminst, nor in a signal handler
**     (one that interrupted an allocator would find its lock held);
**   - no other thread of the program exists (meminst's own threads are
**     known and do not count);
** and, should the store still find a lock held for good, a watchdog thread
** ends the process with the program's status after ALLOC_EXIT_WATCHDOG_S
** seconds, so that no _exit can hang.  The rule is documented in meminst(7).
*/
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ALLOC_OWN_MAX 8
#define ALLOC_EXIT_WATCHDOG_S 60

static _Atomic pid_t exit_own[ALLOC_OWN_MAX]; /* tids of meminst's threads */
static _Atomic int exit_own_coming;           /* made, not yet entered       */
static _Atomic pid_t exit_pid;                /* this process, as started or forked */
_Atomic int *alloc_exit_copy_mark;            /* 1, wiped in a copy of the memory */

/* A thread of meminst's is not known as such until it runs, which on a
** loaded machine can be after the program's _exit: until then it counts
** as coming, and an _exit that finds other threads waits for it a while
** (exit_program_threads). */
int alloc_own_thread_create(alloc_create_fn *create, pthread_t *th, const pthread_attr_t *attr,
			    void *(*start)(void *), void *arg)
{
	if (alloc_own_threads_refused())
		return EPERM;
	atomic_fetch_add(&exit_own_coming, 1);
	int rc = create(th, attr, start, arg);
	if (rc != 0)
		atomic_fetch_sub(&exit_own_coming, 1);
	return rc;
}

void alloc_own_thread_enter(void)
{
	pid_t tid = alloc_sys_gettid();
	for (int i = 0; i < ALLOC_OWN_MAX; i++) {
		pid_t none = 0;
		if (atomic_compare_exchange_strong(&exit_own[i], &none, tid))
			break;
	}
	/* known as ours before it stops counting as coming */
	int coming = atomic_load(&exit_own_coming);
	while (coming > 0 && !atomic_compare_exchange_weak(&exit_own_coming, &coming, coming - 1))
		;
}

void alloc_own_thread_leave(void)
{
	pid_t tid = alloc_sys_gettid();
	for (int i = 0; i < ALLOC_OWN_MAX; i++) {
		pid_t me = tid;
		if (atomic_compare_exchange_strong(&exit_own[i], &me, 0))
			return;
	}
}

static bool exit_is_own(pid_t tid)
{
	for (int i = 0; i < ALLOC_OWN_MAX; i++)
		if (atomic_load(&exit_own[i]) == tid)
			return true;
	return false;
}

/* The process whose fork child handler forgot the parent's threads. */
static _Atomic pid_t exit_forgot_for;

/* In a fork child only the forking thread exists; our threads are gone.
** The process is its own from here on (alloc_clone_unadopted): also run
** early, from trace_unwind_postfork, before walks are let in again.  That
** second call, from the sampler's handler, comes after the service's has
** started the child's own threads: forgetting them then made a child's
** _exit take them for the program's and store no exit snapshot (each
** child under control=on).  So the parent's are forgotten once per process. */
void alloc_exit_postfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	pid_t pid = (pid_t)syscall(SYS_getpid);
	atomic_store(&exit_pid, pid);
	if (atomic_exchange(&exit_forgot_for, pid) == pid) {
		errno = saved_errno;
		return;
	}
	for (int i = 0; i < ALLOC_OWN_MAX; i++)
		atomic_store(&exit_own[i], 0);
	atomic_store(&exit_own_coming, 0);
	if (alloc_exit_copy_mark)
		atomic_store(alloc_exit_copy_mark, 1);
	errno = saved_errno;
}

/* A page the kernel zeroes in a child that does not share the memory
** (MADV_WIPEONFORK: fork, clone without CLONE_VM), and leaves as it is in
** one that does (vfork, CLONE_VM). */
static void exit_copy_mark_init(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, 4096, MADV_WIPEONFORK) != 0) {
		munmap(p, 4096);
		return;
	}
	alloc_exit_copy_mark = p;
	atomic_store(alloc_exit_copy_mark, 1);
}

/* 1: this process has memory of its own, 0: its parent's, -1: unknown. */
static int exit_memory_own(pid_t pid)
{
	if (alloc_exit_copy_mark)
		return atomic_load(alloc_exit_copy_mark) == 0;
	long same = syscall(SYS_kcmp, pid, (pid_t)syscall(SYS_getppid), 1 /* KCMP_VM */, 0, 0);
	return same < 0 ? -1 : same != 0;
}

/*
** A process made by clone(2) or clone3 without fork (systemd, container
** runtimes, sandboxes, syscall(SYS_clone)): glibc ran no fork handler, so
** it holds the parent's records and locks as they were, some held or
** counted by threads it does not have, and its exit snapshot waited for
** them for ever.  It is found lazily where that matters (a snapshot's
** capture, _exit, pthread_create, a lock waited for long: the pid is not
** the one recorded at start or at the last fork) and taken as alone, as a
** fork child is: the fork child handlers run here, in the order glibc runs
** them (the registry keeps only the calling thread, every lock is made
** anew, the gates are lowered).  Unlike after fork, nothing was held still
** while the process was copied: a counter another thread was updating at
** that instant may be off by that one update.  A child that shares its
** parent's memory (vfork, CLONE_VM: exit_memory_own) is left alone, as it
** must not write to it; when that cannot be told, it is treated as one and
** its snapshots are not stored (said once).  True: this process is ours.
*/
static atomic_flag exit_unknown_said = ATOMIC_FLAG_INIT;
/* This process, or the one it was forked from, was copied by a raw clone
** in the middle of a stack walk: the loader's lock may be held for ever,
** and a snapshot lists the modules through it (trace_unwind_clone_child). */
static _Atomic bool exit_clone_walked;

/* The process's id, asked of the kernel: how a clone is told, in any
** thread of the program.  Under a seccomp filter that refuses getpid
** (alloc_seccomp.c), the one known last: clones are not told apart then. */
static pid_t exit_getpid(void)
{
	if (alloc_seccomp_refuses(ALLOC_SC_GETPID))
		return atomic_load(&exit_pid);
	return (pid_t)syscall(SYS_getpid);
}

bool alloc_clone_adopt(void)
{
	pid_t pid = exit_getpid(), was = atomic_load(&exit_pid);
	if (pid == was || pid <= 0) /* <= 0: a seccomp filter refuses getpid, nothing to tell */
		return !atomic_load(&exit_clone_walked);
	int own = exit_memory_own(pid);
	if (own <= 0) {
		if (own < 0 && !atomic_flag_test_and_set(&exit_unknown_said))
			alloc_log("process %d was made by clone without fork, and whether it shares its "
				  "parent's memory cannot be told (no MADV_WIPEONFORK, no kcmp): its "
				  "snapshots are not stored", (int)pid);
		return false;
	}
	if (!atomic_compare_exchange_strong(&exit_pid, &was, pid))
		return true; /* a recursive call (a lock taken while resetting) */
	bool walked = trace_unwind_clone_child(alloc_sys_loader_busy()); /* before the handlers reset */
	alloc_sys_pid_refresh();
	alloc_ids_forget();
	if (alloc_mode != MEMINST_MODE_OFF)
		alloc_thread_child_reset();
	else
		trace_sample_postfork_child();
	alloc_exit_postfork_child();
	alloc_sqlite_child_reset();
	alloc_service_child_reset(false);
	trace_child_reset();
	if (walked) {
		atomic_store(&exit_clone_walked, true);
		alloc_note("process %d was made by clone without fork while another thread walked a "
			   "stack: the loader's lock may stay held in it, so it walks no stack and "
			   "stores no snapshot", (int)pid);
	}
	return !walked;
}

void alloc_clone_yield(unsigned turn)
{
	alloc_sys_yield();
	if ((turn & 4095) == 0)
		alloc_clone_adopt();
}

/*
** The main thread left with pthread_exit: this destructor of its
** thread-specific data runs after the program's cleanup handlers.  It
** waits until the program has no other thread, then ends the process with
** status 0, as glibc does when the last thread exits (meminst's threads
** would otherwise keep the process alive).  The main thread keeps the
** program's signal mask, so a SIGTERM meant for the process ends it.
*/
static pthread_key_t exit_main_key;
static bool exit_main_key_ok;

ALLOC_EDGE static void exit_main_gone(void *arg)
{
	(void)arg;
	pid_t pid = exit_getpid();
	for (;;) {
		if (alloc_program_threads(pid) == 0)
			exit(0);
		struct timespec ts = {0, 50 * 1000000};
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	}
}

void alloc_exit_main_leaving(void)
{
	if (exit_main_key_ok && alloc_sys_gettid() == exit_getpid())
		pthread_setspecific(exit_main_key, (void *)1);
}

void alloc_exit_init(void)
{
	atomic_store(&exit_pid, (pid_t)syscall(SYS_getpid));
	exit_copy_mark_init();
	pthread_atfork(NULL, NULL, alloc_exit_postfork_child);
	alloc_guard_enter();
	exit_main_key_ok = pthread_key_create(&exit_main_key, exit_main_gone) == 0;
	alloc_guard_exit();
}

struct exit_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/*
** Every thread of the program besides the caller, `skip` (0: none) and
** meminst's own, each handed to fn: read from /proc/self/task with raw
** system calls (no allocation, usable from _exit and with every lock of
** ours held).  Returns how many, or -1 when it cannot be read.
*/
int alloc_program_threads_each(pid_t skip, void (*fn)(pid_t tid, void *arg), void *arg)
{
	if (alloc_seccomp_refuses(ALLOC_SC_OPEN_READ))
		return -1;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	pid_t self = alloc_sys_gettid();
	int others = 0;
	char buf[4096] __attribute__((aligned(8)));
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long at = 0; at < n;) {
			struct exit_dirent *d = (struct exit_dirent *)(buf + at);
			at += d->reclen;
			pid_t tid = 0;
			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid > 0 && tid != self && tid != skip && !exit_is_own(tid)) {
				others++;
				if (fn)
					fn(tid, arg);
			}
		}
	}
	syscall(SYS_close, fd);
	return n < 0 ? -1 : others;
}

/* How many threads of the program run besides the caller, `skip` and
** meminst's own; -1 when it cannot be read. */
int alloc_program_threads(pid_t skip)
{
	return alloc_program_threads_each(skip, NULL, NULL);
}

/* The program's other threads at an _exit.  A thread of meminst's made but
** not yet run counts among them until it runs: it is waited for, up to
** EXIT_COMING_WAIT_MS, so that a short process on a busy machine still
** leaves its exit snapshot. */
#define EXIT_COMING_WAIT_MS 2000
static int exit_program_threads(void)
{
	int others = alloc_program_threads(0);
	const struct timespec ms = {0, 1000000};
	for (int waited = 0; others > 0 && atomic_load(&exit_own_coming) > 0 && waited < EXIT_COMING_WAIT_MS;
	     waited++) {
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
		if (atomic_load(&exit_own_coming) == 0)
			others = alloc_program_threads(0);
	}
	return others;
}

/* The watchdog: a bare thread (no libc state of its own, every signal
** blocked) that ends the process with `status` after a while. */
static int exit_watchdog(void *arg)
{
	struct timespec left = {ALLOC_EXIT_WATCHDOG_S, 0};
	while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &left, &left) != 0)
		;
	for (;;)
		syscall(SYS_exit_group, (int)(intptr_t)arg);
	return 0;
}


/*
** Is the caller inside a signal handler?  A handler may have interrupted
** an allocator holding its lock (ours, libc's, jemalloc's), and storing a
** snapshot there would wait for it for ever.  The stack is walked to its
** outermost frame: a signal frame on the way, or a walk that cannot be
** completed, counts as yes.
*/
static bool exit_maybe_in_handler(void)
{
	unw_context_t ctx;
	unw_cursor_t c;
	bool maybe = true;
	if (!trace_unwind_enter(true)) /* a fork under way (trace_unwind.c) */
		return true;
	if (unw_getcontext(&ctx) == 0 && unw_init_local(&c, &ctx) == 0)
		for (int i = 0; i < 1024; i++) {
			if (unw_is_signal_frame(&c) > 0)
				break;
			int r = unw_step(&c);
			if (r <= 0) {
				maybe = r < 0;
				break;
			}
		}
	trace_unwind_leave();
	return maybe;
}

void alloc_exit_fast(int status)
{
	if (atomic_load(&alloc_state) != 2 || alloc_mode == MEMINST_MODE_OFF || !alloc_opts.snapshot ||
	    !(alloc_opts.snapshot_at & ALLOC_SNAP_EXIT) || alloc_snap_exit_done() ||
	    alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT))
		return;
	if (!alloc_clone_adopt() || alloc_tls.guard ||
	    (alloc_tls.thr && atomic_load(&alloc_tls.thr->counting)))
		return; /* a vfork child, or a handler that interrupted meminst's own code */
	if (exit_program_threads() != 0 || exit_maybe_in_handler())
		return;
	int saved_errno = errno;
	trace_bare_thread(exit_watchdog, (void *)(intptr_t)status);
	alloc_service_flush();
	alloc_snap_at_exit();
	errno = saved_errno;
}

bool alloc_clone_walked(void)
{
	return atomic_load(&exit_clone_walked);
}

bool alloc_exit_own_process(void)
{
	return exit_getpid() == atomic_load(&exit_pid);
}

bool alloc_exit_death_wanted(void)
{
	return atomic_load(&alloc_state) == 2 && alloc_mode != MEMINST_MODE_OFF && alloc_opts.snapshot &&
	       (alloc_opts.snapshot_at & ALLOC_SNAP_EXIT) && alloc_exit_own_process();
}

/* The exit snapshot begun in another thread: wait until it is stored
** (the process ends right after). */
static void exit_wait_stored(void)
{
	while (alloc_snap_exit_busy()) {
		struct timespec ts = {0, 1000000};
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	}
}

/*
** The exit snapshot of a process a signal ends, as exit(3) would store it
** (what the service thread still owes first).  The caller is a signal
** handler whose thread was found outside meminst (trace_death.c), running
** on a stack of its own.  If the exit snapshot is under way in another
** thread (a signal during exit), wait for it.
*/
void alloc_exit_at_death(void)
{
	if (alloc_snap_exit_done()) {
		exit_wait_stored();
		return;
	}
	int saved_errno = errno;
	alloc_service_flush();
	alloc_snap_at_exit();
	errno = saved_errno;
}

/*
** The main thread's exit status once it has ended by the exit system call
** (a raw syscall(SYS_exit), not exit_group): it stays a zombie in
** /proc/self/task until the process ends, its status in the stat file's
** 52nd field.  -1 while it runs (or when it cannot be read).
*/
static int exit_leader_status(pid_t pid)
{
	char path[64], buf[1024];
	alloc_fmt(path, sizeof path, "/proc/self/task/%d/stat", (int)pid);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *c = strrchr(buf, ')'); /* the name may hold spaces and ')' */
	if (!c || c[1] != ' ' || c[2] != 'Z')
		return -1;
	int field = 2;
	for (; *c && field < 52; c++)
		if (*c == ' ')
			field++;
	if (field != 52 || *c < '0' || *c > '9')
		return -1;
	int status = 0;
	for (; *c >= '0' && *c <= '9'; c++)
		status = status * 10 + (*c - '0');
	return (status >> 8) & 0xff;
}

/*
** No thread of the program is left: its main thread ended by the exit
** system call and no other thread of the program runs.  Without meminst
** the process ends there, with that status; meminst's own threads would
** keep it alive for ever (and, blocking every signal, past a SIGTERM).
** Called by a thread of ours with a descriptor table of its own (the
** service thread's recheck, the wall-clock sampler's probe): ends the
** process as _exit would, with the main thread's status.  Returns only
** when the program still runs.  (A kernel that reports the last thread's
** status, as 6.x does, and a program whose last thread is not its main
** one: the main one's status is given.)
*/
void alloc_exit_if_program_gone(void)
{
	pid_t pid = atomic_load(&exit_pid);
	if (!alloc_exit_own_process())
		return;
	/* the main thread first: one small read, where the program's threads
	** are a walk of /proc/self/task (a zombie main thread beside running
	** threads, pthread_exit's, is rare) */
	int status = exit_leader_status(pid);
	if (status >= 0 && alloc_program_threads(pid) == 0)
		alloc_exit_end(status, true);
}

/*
** Wait until thread `tid` of this process has left the kernel, up to 2 s.
** The thread has said it ends (a flag after alloc_own_thread_leave); on a
** kernel that gives a process the status of its last thread to end, a
** thread of ours ending after the program's last one (a main thread
** leaving by the exit system call right after stopping ours: seccomp's
** strict mode) would make it 0.
*/
void alloc_own_thread_wait_gone(pid_t tid)
{
	pid_t pid = atomic_load(&exit_pid);
	const struct timespec ms = {0, 1000000};
	int saved_errno = errno;
	for (int waited = 0; tid > 0 && waited < 2000; waited++) {
		if (syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH)
			break;
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	errno = saved_errno;
}

/*
** The main thread leaves by syscall(SYS_exit, status) (the `syscall` hook).
** When no other thread of the program runs, the process ends there without
** meminst, with that status: here it ends the same way now, as _exit does
** (the trace's tail, the exit snapshot), rather than live on in meminst's
** threads.  Under a seccomp filter that refuses anything of meminst's, the
** call goes on as it is (reading /proc could be what it kills on; seccomp's
** strict mode has stopped meminst's threads).
*/
void alloc_exit_main_raw(int status)
{
	/* (the filter first: strict mode kills on gettid) */
	if (alloc_seccomp_refuses(~0u) || alloc_sys_gettid() != atomic_load(&exit_pid) ||
	    !alloc_exit_own_process() || alloc_program_threads(0) != 0)
		return;
	alloc_exit_end(status, false);
}

/*
** End the process as _exit(status) ends it, with what meminst owes it
** first: the trace's tail, then the exit snapshot where that is safe.
** `own`: the caller is a thread of meminst's, guarded for life, for which
** alloc_exit_fast returns at once; the program has no thread left to be
** in the way, so the snapshot is stored here, under the watchdog, or, when
** another of our threads has begun it, waited for.
*/
void alloc_exit_end(int status, bool own)
{
	trace_death_flush();
	if (!own)
		alloc_exit_fast(status);
	else if (alloc_state == 2 && alloc_mode != MEMINST_MODE_OFF) {
		trace_bare_thread(exit_watchdog, (void *)(intptr_t)status);
		alloc_snap_at_exit(); /* (returns at once when begun elsewhere) */
		exit_wait_stored();
	}
	for (;;)
		syscall(SYS_exit_group, status);
}
