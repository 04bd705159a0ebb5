/*
** alloc_leak_stop.c — the program's other threads stopped for the leak
** scan (alloc_leak.c), and let go after it.
**
** Each gets LEAK_SIGNAL, whose handler saves its registers and thread
** pointer and waits on a futex until released.  A thread waiting in a
** system call that a handler would cut short (nanosleep, poll, futex with
** a time-out …: trace_syscall_restartable) is not signalled, as the
** wall-clock sampler does: the kernel gives its stack pointer
** (/proc/self/task/TID/syscall) and it cannot run meanwhile without first
** waking; its registers are not seen.  A thread that blocks the signal is
** treated the same way.  A thread that never answers is waited for
** LEAK_WAIT_NS, then scanned as one not signalled.
**
** Apart from the scan because it is a different job with its own state:
** a signal handler, the thread slots it writes (outliving a scan: a late
** handler may still look at them) and the futexes it waits on; the scan
** only reads the slots (alloc_leak_threads).  Nothing here allocates.
*/
#define _GNU_SOURCE
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define LEAK_SIGNAL (SIGRTMAX - 3)
#define LEAK_WAIT_NS 3000000000ll /* a signalled thread that never answers */
#define LEAK_THREADS_MAX 4096

/* The slots outlive a scan (a late handler may still look at them), so
** they are one static array: mapped once, reused. */
static alloc_leak_thread_t *leak_slots;
static _Atomic uint32_t leak_nslots;
static _Atomic uint32_t leak_gen, leak_released, leak_parked;
static _Atomic bool leak_active;
static struct sigaction leak_old_action;
static bool leak_installed;

static inline long leak_futex(_Atomic uint32_t *w, int op, uint32_t v, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, v, ts, NULL, 0);
}

static void leak_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uint32_t gen = atomic_load(&leak_gen);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	alloc_leak_thread_t *t = NULL;
	bool ours = si->si_code == SI_TKILL && si->si_pid == getpid();
	for (uint32_t i = 0, n = atomic_load(&leak_nslots); ours && i < n; i++)
		if (atomic_load(&leak_slots[i].tid) == tid)
			t = &leak_slots[i];
	if (!ours) { /* the program's own signal of that number */
		struct sigaction a = leak_old_action;
		if ((a.sa_flags & SA_SIGINFO) && a.sa_sigaction)
			a.sa_sigaction(sig, si, ucv);
		else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
			a.sa_handler(sig);
		errno = saved;
		return;
	}
	if (!t || !atomic_load(&leak_active) || atomic_load(&t->state) != 1) {
		errno = saved; /* late: that scan is over */
		return;
	}
	ucontext_t *uc = ucv;
#if defined(__x86_64__)
	t->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	t->sp = (uintptr_t)uc->uc_mcontext.sp;
#endif
	t->nregs = NGREG;
	memcpy(t->regs, &uc->uc_mcontext.gregs, sizeof t->regs);
	t->tp = (uintptr_t)__builtin_thread_pointer();
	atomic_store(&t->state, 2);
	atomic_fetch_add(&leak_parked, 1);
	leak_futex(&leak_parked, FUTEX_WAKE, 1, NULL);
	uint32_t r;
	while ((r = atomic_load(&leak_released)) != gen)
		leak_futex(&leak_released, FUTEX_WAIT, r, NULL);
	atomic_store(&t->state, 3);
	errno = saved;
}

/* From /proc/self/task/TID/syscall: the thread's stack pointer, and whether
** a handler would leave its wait alone (running, or a restarted call). */
static bool leak_proc_syscall(char *buf, pid_t tid, uintptr_t *sp)
{
	char path[64];
	alloc_fmt(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	*sp = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	long n = syscall(SYS_read, fd, buf, 255);
	syscall(SYS_close, fd);
	if (n <= 0 || buf[0] == 'r') /* "running" */
		return true;
	buf[n] = 0;
	long field[9] = {0};
	int nf = 0;
	bool neg = buf[0] == '-';
	for (char *p = buf + neg; *p && nf < 9; nf++) { /* nr, 6 args, sp, pc */
		bool hex = p[0] == '0' && p[1] == 'x';
		long v = 0;
		for (p += hex ? 2 : 0; *p && *p != ' ' && *p != '\n'; p++)
			v = v * (hex ? 16 : 10) + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
		field[nf] = nf == 0 && neg ? -v : v;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	*sp = (uintptr_t)(field[0] < 0 ? field[1] : field[7]);
	long op = field[2] & 127;
	bool untimed_futex = field[0] == SYS_futex && field[4] == 0 && (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET);
	return field[0] < 0 || trace_syscall_restartable(field[0]) || untimed_futex;
}

static void leak_add_thread(pid_t tid, void *arg)
{
	(void)arg;
	uint32_t i = atomic_load(&leak_nslots);
	if (i == LEAK_THREADS_MAX)
		return;
	alloc_leak_thread_t *t = &leak_slots[i];
	memset(t, 0, sizeof *t);
	atomic_store(&t->tid, tid);
	atomic_store(&leak_nslots, i + 1);
}

static bool leak_signal_blocked(char *buf, pid_t tid)
{
	char path[64];
	alloc_fmt(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	long n = syscall(SYS_read, fd, buf, 4095);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = 0;
	const char *p = strstr(buf, "SigBlk:");
	if (!p)
		return true;
	uint64_t mask = 0;
	for (p += 7; *p == '\t' || *p == ' '; p++)
		;
	for (; (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'); p++)
		mask = mask * 16 + (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
	return mask >> (LEAK_SIGNAL - 1) & 1;
}

/* Signal every program thread that can take it; wait for each to park. */
void alloc_leak_stop(char *buf, alloc_leak_sum_t *sum)
{
	atomic_fetch_add(&leak_gen, 1);
	atomic_store(&leak_active, true);
	atomic_store(&leak_nslots, 0);
	alloc_program_threads_each(0, leak_add_thread, NULL);
	uint32_t n = atomic_load(&leak_nslots), sent = 0;
	atomic_store(&leak_parked, 0);
	for (uint32_t i = 0; i < n; i++) {
		alloc_leak_thread_t *t = &leak_slots[i];
		uintptr_t sp;
		if (!leak_proc_syscall(buf, t->tid, &sp) || leak_signal_blocked(buf, t->tid)) {
			t->sp = sp;
			atomic_store(&t->state, 4);
			continue;
		}
		atomic_store(&t->state, 1);
		if (syscall(SYS_tgkill, getpid(), t->tid, LEAK_SIGNAL) == 0)
			sent++;
		else
			atomic_store(&t->state, 0); /* gone */
	}
	int64_t deadline = alloc_snap_now(CLOCK_MONOTONIC) + LEAK_WAIT_NS;
	uint32_t parked;
	while ((parked = atomic_load(&leak_parked)) < sent && alloc_snap_now(CLOCK_MONOTONIC) < deadline) {
		struct timespec ts = {0, 10000000};
		leak_futex(&leak_parked, FUTEX_WAIT, parked, &ts);
		for (uint32_t i = 0; i < n; i++) { /* exited meanwhile */
			alloc_leak_thread_t *t = &leak_slots[i];
			char path[64];
			alloc_fmt(path, sizeof path, "/proc/self/task/%d", (int)t->tid);
			if (atomic_load(&t->state) == 1 && syscall(SYS_faccessat, AT_FDCWD, path, F_OK, 0) != 0) {
				int one = 1;
				if (atomic_compare_exchange_strong(&t->state, &one, 0))
					sent--;
			}
		}
	}
	sum->threads = n + 1;
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load(&leak_slots[i].state) == 1 || atomic_load(&leak_slots[i].state) == 4)
			sum->threads_unstopped++;
}

void alloc_leak_resume(void)
{
	uint32_t n = atomic_load(&leak_nslots);
	atomic_store(&leak_released, atomic_load(&leak_gen));
	leak_futex(&leak_released, FUTEX_WAKE, INT32_MAX, NULL);
	for (uint32_t i = 0; i < n; i++) /* out of the handler: the slots are reused */
		while (atomic_load(&leak_slots[i].state) == 2)
			alloc_sys_yield();
	atomic_store(&leak_active, false);
}

const alloc_leak_thread_t *alloc_leak_threads(uint32_t *n)
{
	*n = atomic_load(&leak_nslots);
	return leak_slots;
}

bool alloc_leak_stop_prepare(void)
{
	if (!leak_slots && !(leak_slots = alloc_sys_map(LEAK_THREADS_MAX * sizeof *leak_slots)))
		return false;
	if (!leak_installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = leak_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		/* kept once installed: a handler of a thread that took long to
		** answer may come after the scan (it returns at once) */
		extern int __sigaction(int, const struct sigaction *, struct sigaction *);
		leak_installed = __sigaction(LEAK_SIGNAL, &sa, &leak_old_action) == 0;
	}
	return leak_installed;
}
