/*
** trace_sigwrap.c — the program's sigaction and signal calls for SIGPROF,
** interposed so that a program that uses SIGPROF itself (its own profiler,
** or a runtime that resets every handler at exit, as Python does) neither
** removes the sampler's handler nor sees it: trace_sample.c keeps the
** program's action and forwards to it every SIGPROF that is not a sampling
** tick.  The fatal signals whose default action trace_death.c replaces
** are kept apart the same way.  Other signals, and these while meminst
** did not take them, go straight to libc.  _exit and _Exit write the
** trace's tail first.
**
** Linked into libmeminst.so only (not the core the unit tests link), like
** the other interposed libc names.
*/
#include "trace_sampler.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"

ALLOC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig == SIGPROF && trace_sample_sigaction(act, old))
		return 0;
	if (sig != SIGPROF && trace_death_sigaction(sig, act, old))
		return 0;
	return __sigaction(sig, act, old);
}

/* _exit skips the destructor that writes the trace's tail: write it here,
** and the exit snapshot where that is safe (alloc_exit.c).  exit calls
** libc's own _exit, after the destructors, not this one. */
ALLOC_EXPORT void _exit(int status)
{
	alloc_exit_end(status, false);
}

ALLOC_EXPORT void _Exit(int status)
{
	alloc_exit_end(status, false);
}

/* BSD semantics, as glibc's signal: restart, the signal blocked in its
** handler.  glibc's own signal calls __sigaction, not the interposed name. */
static sighandler_t sigwrap_signal(int sig, sighandler_t handler, int flags)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof act);
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

ALLOC_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return sigwrap_signal(sig, handler, SA_RESTART);
}

ALLOC_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return sigwrap_signal(sig, handler, SA_RESTART);
}

/* The next definition of name (libc's) in a static real_ of type; none
** (no C library under us): the caller returns `failed` (NEXT_REAL: -1
** with errno ENOSYS). */
#define NEXT_REAL_OR(name, type, failed)                                        \
	static type *real_;                                                     \
	if (!real_) {                                                           \
		void *fn_ = dlsym(RTLD_NEXT, #name);                            \
		memcpy(&real_, &fn_, sizeof fn_);                               \
		if (!real_)                                                     \
			return failed;                                          \
	}
#define NEXT_REAL(name, type) NEXT_REAL_OR(name, type, (errno = ENOSYS, -1))

/*
** A thread that blocks SIGPROF stops its sampling timer until it unblocks
** it (trace_sample_masked): our ticks, pending while blocked, would be
** found by sigpending, a signalfd or sigwait as the program's signals.
** Only a change of SIGPROF's state counts; a mask set by a raw system call,
** a signal handler's sa_mask or siglongjmp is not seen.
*/
typedef int sigmask_fn(int, const sigset_t *, sigset_t *);

/* `ra`: the caller.  Ours (libunwind blocks every signal around its walks,
** in our SIGPROF handler too, and restores a mask that blocks SIGPROF
** there) is not the program's mask. */
static void sigwrap_masked(int how, const sigset_t *set, void *ra)
{
	if (!set || !atomic_load(&trace_sample_running) || trace_unwind_busy() ||
	    trace_unwind_in_self((uintptr_t)ra) || trace_unwind_is_libunwind((uintptr_t)ra))
		return;
	bool member = sigismember(set, SIGPROF) == 1;
	int e = errno; /* the timer's system calls leave the program's errno */
	if (how == SIG_SETMASK || member)
		trace_sample_masked(how != SIG_UNBLOCK && member);
	errno = e;
}

ALLOC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	NEXT_REAL_OR(pthread_sigmask, sigmask_fn, ENOSYS);
	int r = real_(how, set, old);
	if (r == 0)
		sigwrap_masked(how, set, __builtin_return_address(0));
	return r;
}

ALLOC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	NEXT_REAL(sigprocmask, sigmask_fn);
	int r = real_(how, set, old);
	if (r == 0)
		sigwrap_masked(how, set, __builtin_return_address(0));
	return r;
}

/*
** sigaltstack: a thread whose alternate stack has no room for a sampling
** tick stops its sampling meanwhile (trace_sample_alt_stack).  SIGPROF is
** blocked around the change, so that no tick comes between the new stack
** and the pause; one pending then is taken off by the pause.
*/
typedef int sigaltstack_fn(const stack_t *, stack_t *);

ALLOC_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	NEXT_REAL(sigaltstack, sigaltstack_fn);
	if (!ss || !atomic_load(&trace_sample_running))
		return real_(ss, old);
	sigset_t prof, was;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	alloc_sys_sigmask(SIG_BLOCK, &prof, &was);
	int r = real_(ss, old), e = errno;
	if (r == 0)
		trace_sample_alt_stack(trace_sample_alt_too_small(ss));
	alloc_sys_sigmask(SIG_SETMASK, &was, NULL);
	errno = e;
	return r;
}

/*
** A program that blocks every signal and takes them with sigwait,
** sigwaitinfo or sigtimedwait (a signal thread, a daemon's main loop)
** would take the sampler's SIGPROF ticks, pending while blocked, for
** signals of its own.  Ours are dropped and the wait goes on, for what
** is left of the timeout; the program's own SIGPROF is its.
*/
typedef int sigtimedwait_fn(const sigset_t *, siginfo_t *, const struct timespec *);

ALLOC_EDGE static int sigwrap_wait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	NEXT_REAL(sigtimedwait, sigtimedwait_fn);
	siginfo_t own;
	struct timespec end = {0, 0}, left;
	if (!info)
		info = &own;
	if (timeout) {
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += timeout->tv_sec;
		if ((end.tv_nsec += timeout->tv_nsec) >= 1000000000L)
			end.tv_sec++, end.tv_nsec -= 1000000000L;
		left = *timeout;
	}
	for (;;) {
		int sig = real_(set, info, timeout ? &left : NULL);
		if (sig != SIGPROF || !trace_sample_tick_drop(info))
			return sig;
		if (timeout) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = end.tv_sec - now.tv_sec;
			if ((left.tv_nsec = end.tv_nsec - now.tv_nsec) < 0)
				left.tv_sec--, left.tv_nsec += 1000000000L;
			if (left.tv_sec < 0)
				left.tv_sec = left.tv_nsec = 0; /* one more look, no wait */
		}
	}
}

ALLOC_EXPORT ALLOC_EDGE int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	return sigwrap_wait(set, info, timeout);
}

ALLOC_EXPORT ALLOC_EDGE int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return sigwrap_wait(set, info, NULL);
}

ALLOC_EXPORT ALLOC_EDGE int sigwait(const sigset_t *set, int *sig)
{
	int saved_errno = errno, r;
	do
		r = sigwrap_wait(set, NULL, NULL);
	while (r < 0 && errno == EINTR); /* sigwait is never cut short */
	if (r < 0) {
		int e = errno;
		errno = saved_errno;
		return e;
	}
	*sig = r;
	errno = saved_errno;
	return 0;
}

/*
** libunwind checks that an address can be read by writing a byte from it
** to a pipe it keeps (its mem_validate_pipe), made again when a read from
** it fails.  A program that closes every descriptor (a daemon) and opens
** files of its own gets those numbers: libunwind then read and wrote bytes
** of the program's files, or closed them to make its pipe again.  So the
** pipe libunwind makes is moved to high numbers, which such a program does
** not get back.  Async-signal-safe (libunwind makes it in our handler).
*/
ALLOC_EXPORT int pipe2(int fd[2], int flags)
{
	if (syscall(SYS_pipe2, fd, flags) != 0)
		return -1;
	if (!trace_unwind_is_libunwind((uintptr_t)__builtin_return_address(0)))
		return 0;
	fd[0] = alloc_sys_fd_high(fd[0]);
	fd[1] = alloc_sys_fd_high(fd[1]);
	return 0;
}

/*
** A wall-clock tick sent just before an exec stays pending through it, and
** the new program, whose SIGPROF is back at its default action until
** meminst's handler is in place again, died of it ("Profiling timer
** expired": 4 runs in 30 of bash -c PROGRAM at 500 Hz).  So an exec is a
** wrapped call (trace_wall.c): no tick is sent during it, and one on its
** way lands before it.  Not in a vfork child: the slot is its parent's.
*/
/* The same for a CPU-time tick (perf event or POSIX timer of the thread):
** one sent during the exec itself, which runs in the kernel, killed the new
** program; the thread's timer stops first (trace_sample_exec_begin) and
** starts again if the exec fails. */
/* And a snapshot store under way is waited for first: the exec would cut
** it (alloc_sqlite_exec_begin). */
typedef struct sigwrap_exec_s {
	void *wall;
	bool cpu, store;
} sigwrap_exec_t;

static sigwrap_exec_t sigwrap_exec_begin(void *fn)
{
	sigwrap_exec_t x;
	x.store = alloc_sqlite_exec_begin();
	x.wall = trace_wall_on && trace_flush_owner() ? trace_wall_block_begin(fn) : NULL;
	x.cpu = trace_sample_exec_begin();
	trace_end_before_exec(); /* no tick can add a record after the END now */
	return x;
}

static int sigwrap_exec_end(sigwrap_exec_t x, int r)
{
	int e = errno;
	trace_sample_exec_end(x.cpu);
	trace_wall_block_end(x.wall);
	alloc_sqlite_exec_end(x.store);
	errno = e;
	return r;
}

/*
** A statically linked program cannot take LD_PRELOAD: a child the program
** runs so is not measured, and the launcher saw nothing of it (`meminst --
** sh -c ./static` said nothing).  So the process that makes the exec says
** it first, once a run under the launcher (alloc_log_run: kept in the
** session's notes too).  Only an ELF file with no PT_INTERP (static, or
** static-pie) is taken; a script or a file that cannot be read is left
** alone.  Raw system calls only (the caller may be a vfork child), those
** tried against a seccomp filter, and none when it refuses them.
*/
static void sigwrap_exec_static(const char *path)
{
	/* the header and program headers, which linkers put at the start;
	** alloc_sys_read_file makes only the calls tried against a seccomp
	** filter (openat read-only, read, close), and none when refused */
	union {
		Elf64_Ehdr eh;
		char bytes[2048];
	} f;
	int saved = errno; /* a vfork child's errno is its parent's */
	int n = path ? alloc_sys_read_file(path, f.bytes, sizeof f.bytes) : -1;
	errno = saved;
	const Elf64_Ehdr *eh = &f.eh;
	if (n < (int)sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > (uint64_t)n || eh->e_phnum > ((uint64_t)n - eh->e_phoff) / sizeof(Elf64_Phdr))
		return; /* not an ELF file of ours, or its headers past what was read: left alone */
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, f.bytes + eh->e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_INTERP)
			return;
	}
	alloc_log_run(NULL, "%s is statically linked: it runs unmeasured (LD_PRELOAD cannot reach it)", path);
}

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execv_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);

ALLOC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	NEXT_REAL(execve, execve_fn);
	sigwrap_exec_static(path);
	sigwrap_exec_t wall = sigwrap_exec_begin((void *)real_);
	return sigwrap_exec_end(wall, real_(path, argv, envp));
}

ALLOC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEXT_REAL(execvpe, execve_fn);
	if (strchr(file, '/')) /* else found in PATH by libc */
		sigwrap_exec_static(file);
	sigwrap_exec_t wall = sigwrap_exec_begin((void *)real_);
	return sigwrap_exec_end(wall, real_(file, argv, envp));
}

ALLOC_EXPORT int execv(const char *path, char *const argv[])
{
	NEXT_REAL(execv, execv_fn);
	sigwrap_exec_static(path);
	sigwrap_exec_t wall = sigwrap_exec_begin((void *)real_);
	return sigwrap_exec_end(wall, real_(path, argv));
}

ALLOC_EXPORT int execvp(const char *file, char *const argv[])
{
	NEXT_REAL(execvp, execv_fn);
	if (strchr(file, '/')) /* else found in PATH by libc */
		sigwrap_exec_static(file);
	sigwrap_exec_t wall = sigwrap_exec_begin((void *)real_);
	return sigwrap_exec_end(wall, real_(file, argv));
}

ALLOC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEXT_REAL(fexecve, fexecve_fn);
	sigwrap_exec_t wall = sigwrap_exec_begin((void *)real_);
	return sigwrap_exec_end(wall, real_(fd, argv, envp));
}

/* execl, execlp, execle: their arguments as an array, then the above. */
#define EXECL_ARGV(first, ap, argv)                                             \
	size_t n_ = 1;                                                          \
	va_start(ap, first);                                                    \
	while (va_arg(ap, char *))                                              \
		n_++;                                                           \
	va_end(ap);                                                             \
	char *argv[n_ + 1];                                                     \
	argv[0] = (char *)(first);                                              \
	va_start(ap, first);                                                    \
	for (size_t i_ = 1; i_ <= n_; i_++)                                     \
		argv[i_] = va_arg(ap, char *);

ALLOC_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

ALLOC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

ALLOC_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
