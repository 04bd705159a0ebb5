/*
** trace_death.c — the trace's tail and the exit snapshot when the program
** dies by a signal.
**
** The writer's last flush and the exit snapshot are made at exit, which a
** program killed by SIGINT, SIGTERM or SIGHUP (a Ctrl-C, the launcher
** passing a kill on, a server stopped), by abort, SIGPIPE or SIGALRM never
** reaches: samples and events were lost, and the memory map of a server
** stopped by Ctrl-C with them.  So once the trace file is open, or when an
** exit snapshot is asked for, each of those signals whose action is the
** default gets our handler instead.  It writes the trace's buffers out
** (trace_flush_at_death), stores the exit snapshot (not for SIGABRT: abort
** comes from code that found the heap damaged), puts the default action
** back and raises the signal again, so the program still dies by it (same
** status, same core dump).
**
** The snapshot needs meminst's locks (its private SQLite is inside
** libmeminst, under the store lock), which a signal handler
** may only take if the thread it interrupted holds none of them: a thread
** stopped inside malloc holds a map lock, or the backend's own (glibc's
** arena), and would wait for itself.  The handler looks at the
** interrupted stack (trace_death_safe): inside meminst (a frame of
** libmeminst that is not an ALLOC_EDGE pass-through, meminst's recursion
** guard, counting), inside libunwind or the dynamic loader, the
** thread goes on and the signal is sent to it again 1 ms later by the death
** watchdog, until it lands outside (any thread that takes one of these
** signals meanwhile may store it instead).  Meanwhile the program may run those few
** milliseconds more, as if the signal had come that much later.  The
** snapshot is written on a stack of our own (a program's sigaltstack may
** be a few KiB).  The watchdog (a bare thread, raw system calls) also
** makes sure the process dies by that signal: after DEATH_WAIT_MS without
** a safe landing (a thread that stays inside the loader, a
** constructor that never returns), or DEATH_STORE_MS of storing (a lock
** another thread holds for good), it ends the process by the signal
** without the snapshot.  A second signal of these while the snapshot is
** written ends the process at once (a second Ctrl-C); the first signal is
** the one it dies by.  The same signal sent by the parent is not a second
** one: a launcher or a shell that passes on what it was sent, while a
** kill of the whole process group reached the program too.
**
** The program never sees this: its sigaction and signal calls for these
** signals are interposed (trace_sigwrap.c, trace_death_sigaction).  Setting
** a handler of its own, or SIG_IGN, installs that for real (the program's
** handler then runs as always; if it ends the program by exit, the
** destructor flushes); setting SIG_DFL again puts ours back; and every
** query reports what the program set last.  Once a signal has committed
** the process to die, the program's new actions are recorded only.
*/
#define _GNU_SOURCE
#include "trace_sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"


static const int death_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGPIPE, SIGALRM};
#define DEATH_N (sizeof death_signals / sizeof death_signals[0])

#define DEATH_WAIT_MS 3000    /* for a landing outside meminst */
#define DEATH_STORE_MS 30000  /* for the snapshot to be written */
#define DEATH_STACK (1u << 20) /* SQLite's and the capture's needs, with room */

/* Per signal: armed (our handler may be installed), ours (it is now), and
** the action the program set last (SIG_DFL until it sets one). */
static struct {
	_Atomic bool armed, ours;
	struct sigaction prog;
} death[DEATH_N];
static _Atomic int death_flushing; /* 0 no, 1 under way, 2 done */
static bool death_memory;          /* arm for the exit snapshot too */

/* The process's way to its end, once a signal came. */
enum { D_IDLE, D_FLUSH, D_WAIT, D_STORE, D_DYING };
static _Atomic int death_state;
static _Atomic int death_sig;     /* the first signal: the one it dies by */
static _Atomic pid_t death_tid;   /* the thread it landed in first */
static _Atomic int death_elapsed; /* ms the watchdog has counted */
/* The dynamic loader's code (ld.so): a thread inside dlopen or dlclose may
** have an object half mapped or half unmapped while it is still listed,
** and the store walks the list (dl_iterate_phdr, dladdr): it read an
** unmapped object's headers (SIGSEGV, 2 kills in 12 of a program looping
** on dlopen and dlclose); inside lazy binding it holds the scope flag that
** another thread's dlopen waits for. */
static uintptr_t death_ldso_lo, death_ldso_hi;
/* The backends' entry points (glibc's malloc, free…): a thread inside one
** holds its arena's lock; meminst's fast paths reach free by a tail call,
** so no frame of ours is left above it. */
#define DEATH_BACKEND_MAX 24
static struct {
	uintptr_t lo, hi;
} death_backend[DEATH_BACKEND_MAX];
static unsigned death_nbackend;

extern const char __start_meminst_edge[] __attribute__((weak));
extern const char __stop_meminst_edge[] __attribute__((weak));

static int death_index(int sig)
{
	for (unsigned i = 0; i < DEATH_N; i++)
		if (death_signals[i] == sig)
			return (int)i;
	return -1;
}

/* Every buffer out, once, whichever thread gets here first; the others
** wait for it (the process is about to end either way). */
void trace_death_flush(void)
{
	if (!trace_flush_owner()) /* a vfork child: the buffers are its parent's */
		return;
	int none = 0;
	if (atomic_compare_exchange_strong(&death_flushing, &none, 1)) {
		trace_sampler_halt();
		trace_flush_at_death();
		atomic_store(&death_flushing, 2);
		return;
	}
	while (atomic_load(&death_flushing) == 1)
		alloc_sys_yield();
}

/* --------------------------------------------------------- raw calls -- */

/* System calls that never touch errno: the watchdog runs on the thread
** pointer of the thread that made it, which may be gone by then. */
static long death_raw(long n, long a, long b, long c, long d)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c, x3 __asm__("x3") = d;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#else
	return syscall(n, a, b, c, d);
#endif
}

/* The default action for sig, the signal unblocked in this thread, and
** the signal sent to it: the process ends here, as the signal meant.
** Raw calls only (also the watchdog's way). */
__attribute__((optimize("no-stack-protector"))) static void death_die(int sig)
{
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} dfl = {0, 0, 0, 0};
	death_raw(SYS_rt_sigaction, sig, (long)&dfl, 0, 8);
	uint64_t set = 1ull << (sig - 1);
	death_raw(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&set, 0, 8);
	long pid = death_raw(SYS_getpid, 0, 0, 0, 0), tid = death_raw(SYS_gettid, 0, 0, 0, 0);
	for (;;)
		death_raw(SYS_tgkill, pid, tid, sig, 0);
}

/* --------------------------------------------------------- watchdog -- */

/*
** A bare thread (no libc state of its own, every signal blocked): while
** the process waits for a safe landing, the signal again to the thread it
** first landed in every millisecond (to the process if that thread is
** gone); past a limit, the end by the signal without the snapshot.
*/
__attribute__((optimize("no-stack-protector"))) static int death_watch(void *arg)
{
	(void)arg;
	long pid = death_raw(SYS_getpid, 0, 0, 0, 0);
	for (int ms = 0;; ms++) {
		struct timespec one = {0, 1000000};
		death_raw(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&one, 0);
		atomic_store(&death_elapsed, ms);
		int st = atomic_load(&death_state), sig = atomic_load(&death_sig);
		if (st == D_WAIT && ms < DEATH_WAIT_MS) {
			if (death_raw(SYS_tgkill, pid, atomic_load(&death_tid), sig, 0) < 0)
				death_raw(SYS_kill, pid, sig, 0, 0);
		} else if (st == D_WAIT || (st == D_STORE && ms >= DEATH_WAIT_MS + DEATH_STORE_MS) ||
			   (st == D_DYING && ms >= DEATH_WAIT_MS + DEATH_STORE_MS + 1000)) {
			death_die(sig);
		}
	}
	return 0;
}

/* Start fn(arg) on a bare thread: its own mapped 64 KiB stack, every
** signal blocked, no libc thread state (clone, not pthread_create), so it
** runs whatever state the process is in (exit, a death signal, a held
** loader lock).  0 on success, -1 if it could not start. */
int trace_bare_thread(int (*fn)(void *), void *arg)
{
	size_t size = 64 * 1024;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sigset_t all, old;
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	int tid = clone(fn, (char *)stack + size,
			CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, arg);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	return tid < 0 ? -1 : 0;
}

/* ------------------------------------------------------- safe landing -- */

/* The executable segments of the object that maps arg[0] (in any of its
** segments: an address in its code, or its load address): into arg[1..2]. */
static int death_object_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *r = arg, lo = UINTPTR_MAX, hi = 0;
	bool mine = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		mine |= r[0] >= a && r[0] < a + ph->p_memsz;
		if (!(ph->p_flags & PF_X))
			continue;
		lo = a < lo ? a : lo;
		hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
	if (!mine || lo >= hi)
		return 0;
	r[1] = lo;
	r[2] = hi;
	return 1;
}

static void death_backend_add(const alloc_backend_t *b)
{
	void *fns[] = {(void *)b->malloc, (void *)b->calloc, (void *)b->realloc, (void *)b->free,
		       (void *)b->memalign, (void *)b->posix_memalign, (void *)b->aligned_alloc,
		       (void *)b->valloc, (void *)b->pvalloc, (void *)b->usable_size};
	for (unsigned i = 0; i < sizeof fns / sizeof fns[0] && death_nbackend < DEATH_BACKEND_MAX; i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		if (!fns[i] || !dladdr1(fns[i], &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size)
			continue;
		uintptr_t lo = (uintptr_t)fns[i];
		death_backend[death_nbackend].lo = lo;
		death_backend[death_nbackend++].hi = lo + sym->st_size;
	}
}

static bool death_in_backend(uintptr_t pc)
{
	for (unsigned i = 0; i < death_nbackend; i++)
		if (pc >= death_backend[i].lo && pc < death_backend[i].hi)
			return true;
	return false;
}

static bool death_in_edge(uintptr_t pc)
{
	return pc >= (uintptr_t)__start_meminst_edge && pc < (uintptr_t)__stop_meminst_edge;
}

/*
** Did the signal interrupt the thread outside everything a snapshot
** needs?  Not inside meminst (its guard, counting, or a frame of libmeminst
** closer than any pass-through of ours: the allocator hooks with the
** backend under them, the tracer, the private SQLite), nor libunwind, nor the
** dynamic loader (any frame of ld.so: dlopen and dlclose, the
** constructors and destructors they run, lazy binding).
*/
static bool death_safe(void *uc)
{
	alloc_thread_t *t = alloc_tls.thr;
	if (alloc_tls.guard || (t && atomic_load(&t->counting)) || trace_unwind_busy())
		return false;
	uint64_t frames[256];
	bool whole;
	unsigned n = trace_unwind_signal_whole(uc, frames, 256, &whole);
	if (n == 0)
		return false;
	for (unsigned i = 0; i < n; i++) {
		uintptr_t pc = (uintptr_t)frames[i] - (i > 0); /* return addresses: the call */
		if (trace_unwind_is_libunwind(pc) || (pc >= death_ldso_lo && pc < death_ldso_hi) ||
		    death_in_backend(pc))
			return false;
		if (!trace_unwind_in_self(pc))
			continue;
		if (!death_in_edge(pc))
			return false;
		/* a pass-through: safe if the program called it, not meminst */
		if (i + 1 < n) {
			uintptr_t up = (uintptr_t)frames[i + 1] - 1;
			if (trace_unwind_in_self(up) && !death_in_edge(up))
				return false;
		}
		return true;
	}
	/* no frame of ours: a walk cut short may have missed one, unless the
	** stack is deeper than we look (ours are the innermost) */
	return whole || n == 256;
}

/* --------------------------------------------------------- the store -- */

static ucontext_t death_back, death_run;

static void death_store_body(void)
{
	alloc_exit_at_death();
}

/* The exit snapshot, on a stack of our own. */
static void death_store(void)
{
	size_t guard = 4096;
	char *stack = mmap(NULL, DEATH_STACK + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return;
	mprotect(stack, guard, PROT_NONE);
	if (getcontext(&death_run) != 0)
		return;
	death_run.uc_stack.ss_sp = stack + guard;
	death_run.uc_stack.ss_size = DEATH_STACK;
	death_run.uc_link = &death_back;
	makecontext(&death_run, death_store_body, 0);
	swapcontext(&death_back, &death_run);
}

/* --------------------------------------------------------- handler ---- */

static void death_handler(int sig, siginfo_t *info, void *uc)
{
	if (!alloc_exit_own_process()) /* a vfork child: the memory is its parent's */
		death_die(sig);
	int saved_errno = errno;
	/* a retry from the watchdog, or the program's raise, not a new kill;
	** nor the same signal passed on by the parent (the launcher forwards
	** a signal sent by kill(2), and a kill of the process group has
	** reached us too: its copy, landing while the snapshot is written,
	** is not a second Ctrl-C) */
	bool again = info && ((info->si_code == SI_TKILL && info->si_pid == getpid()) ||
			      (info->si_code == SI_USER && info->si_pid == getppid() &&
			       sig == atomic_load(&death_sig)));
	pid_t self = alloc_sys_gettid();
	for (;;) {
		int st = atomic_load(&death_state);
		if (st == D_IDLE) {
			if (!atomic_compare_exchange_strong(&death_state, &st, D_FLUSH))
				continue;
			atomic_store(&death_sig, sig);
			atomic_store(&death_tid, self);
			if (!trace_sink) /* the in-process profiler is written at exit only */
				trace_death_flush();
			bool snap = sig != SIGABRT && alloc_exit_death_wanted();
			atomic_store(&death_state, snap ? D_WAIT : D_DYING);
			if (!snap)
				death_die(sig);
			trace_bare_thread(death_watch, NULL);
			st = D_WAIT;
		}
		if (st == D_FLUSH && atomic_load(&death_tid) != self) {
			if (!trace_sink)
				trace_death_flush(); /* waits for the one under way */
			alloc_sys_yield();
			continue;
		}
		if (st == D_WAIT) {
			if (!death_safe(uc)) {
				errno = saved_errno; /* on it goes, until the next try */
				return;
			}
			if (!atomic_compare_exchange_strong(&death_state, &st, D_STORE))
				continue;
			death_store();
			atomic_store(&death_state, D_DYING);
			death_die(atomic_load(&death_sig));
		}
		/* the same signal again while this thread or another flushes or
		** stores: the end goes on where it is (the launcher's copy of a
		** Ctrl-C to the group can land inside this very handler, before
		** the store, as well as during it) */
		if (again && (st == D_STORE || st == D_FLUSH)) {
			errno = saved_errno;
			return;
		}
		/* a second signal while the end is under way: the end, now */
		death_die(atomic_load(&death_sig));
	}
}

static void death_install(unsigned i)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = death_handler;
	/* SA_ONSTACK: see trace_sample.c.  Nothing of the program's runs
	** during the flush; a second fatal signal may come in (SA_NODEFER). */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
	sigfillset(&sa.sa_mask);
	for (unsigned k = 0; k < DEATH_N; k++)
		sigdelset(&sa.sa_mask, death_signals[k]);
	if (__sigaction(death_signals[i], &sa, NULL) == 0)
		atomic_store(&death[i].ours, true);
}

/* Take the signals the program left at their default.  Normal context;
** idempotent. */
static void death_arm_all(void)
{
	for (unsigned i = 0; i < DEATH_N; i++) {
		if (atomic_load(&death[i].armed))
			continue;
		struct sigaction cur;
		if (__sigaction(death_signals[i], NULL, &cur) < 0)
			continue;
		death[i].prog = cur;
		atomic_store(&death[i].armed, true);
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			death_install(i);
	}
}

/* A fork child did not get the signal its parent is dying of. */
void trace_death_postfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	atomic_store(&death_state, D_IDLE);
	atomic_store(&death_flushing, 0);
	errno = saved_errno;
}

/* The trace file is open. */
void trace_death_arm(void)
{
	if (trace_sink && !death_memory) /* the in-process profiler writes at exit only */
		return;
	death_arm_all();
}

/*
** An exit snapshot is asked for (the library's constructor): the signals
** are taken for it, the ranges the handler checks are found now, in normal
** context.  A program's own libsqlite3 is not among them: the store does
** not use it, whatever its threads hold there.
*/
void trace_death_arm_memory(void)
{
	static bool once;
	if (once)
		return;
	once = true;
	death_memory = true;
	trace_unwind_init();
	uintptr_t ld[3] = {(uintptr_t)getauxval(AT_BASE), 0, 0}; /* 0: no interpreter */
	if (ld[0]) {
		trace_loader_iterate(death_object_range, ld, true);
		death_ldso_lo = ld[1], death_ldso_hi = ld[2];
	}
	alloc_guard_enter(); /* dladdr1 may allocate */
	death_backend_add(&alloc_real);
	death_backend_add(&alloc_libc);
	pthread_atfork(NULL, NULL, trace_death_postfork_child);
	alloc_guard_exit();
	death_arm_all();
}

/* sigaction(sig, …) of the program: true when handled here. */
bool trace_death_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = death_index(sig);
	if (i < 0 || !atomic_load(&death[i].armed))
		return false;
	if (act && atomic_load(&death_state) != D_IDLE) { /* the process is ending */
		if (old)
			*old = death[i].prog;
		death[i].prog = *act;
		return true;
	}
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		if (old)
			*old = death[i].prog;
		death[i].prog = *act;
		death_install((unsigned)i);
		return true;
	}
	if (act) { /* its own handler, or SIG_IGN: for real */
		struct sigaction prev = death[i].prog;
		if (__sigaction(sig, act, NULL) < 0)
			return false; /* libc says why (EINVAL) */
		atomic_store(&death[i].ours, false);
		death[i].prog = *act;
		if (old)
			*old = prev;
		return true;
	}
	if (old)
		*old = death[i].prog;
	return true;
}
