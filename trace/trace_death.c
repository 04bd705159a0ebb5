/*
** trace_death.c — the trace's tail when the program dies by a signal.
**
** The writer's last flush runs in the library's destructor, which a
** program killed by SIGINT, SIGTERM or SIGHUP (a Ctrl-C, the launcher
** passing a kill on), by abort or by SIGPIPE never reaches: up to a
** buffer of samples and events per thread was lost (at 100 Hz, every sample
** of a short run).  So once the trace file is open, each of those signals
** whose action is the default gets our handler instead: it writes every
** buffer out (trace_flush_at_death), puts the default action back and
** raises the signal again, so the program still dies by it (same status,
** same core dump).
**
** The program never sees this: its sigaction and signal calls for these
** signals are interposed (trace_sigwrap.c, trace_death_sigaction).  Setting
** a handler of its own, or SIG_IGN, installs that for real (the program's
** handler then runs as always; if it ends the program by exit, the
** destructor flushes); setting SIG_DFL again puts ours back; and every
** query reports what the program set last.
*/
#include "trace_sampler.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int death_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGPIPE, SIGALRM};
#define DEATH_N (sizeof death_signals / sizeof death_signals[0])

/* Per signal: armed (our handler may be installed), ours (it is now), and
** the action the program set last (SIG_DFL until it sets one). */
static struct {
	_Atomic bool armed, ours;
	struct sigaction prog;
} death[DEATH_N];
static _Atomic int death_flushing; /* 0 no, 1 under way, 2 done */

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
		sched_yield();
}

static void death_handler(int sig)
{
	trace_death_flush();
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	__sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, getpid(), alloc_sys_gettid(), sig); /* dies here */
}

static void death_install(unsigned i)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = death_handler;
	sa.sa_flags = SA_RESTART | SA_ONSTACK; /* see trace_sample.c */
	sigfillset(&sa.sa_mask); /* nothing of the program's runs during the flush */
	if (__sigaction(death_signals[i], &sa, NULL) == 0)
		atomic_store(&death[i].ours, true);
}

/* The trace file is open: take the signals the program left at their
** default.  Normal context; idempotent. */
void trace_death_arm(void)
{
	if (trace_sink) /* the in-process profiler writes at exit only */
		return;
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

/* sigaction(sig, …) of the program: true when handled here. */
bool trace_death_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = death_index(sig);
	if (i < 0 || !atomic_load(&death[i].armed))
		return false;
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
