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

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

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
	trace_death_flush();
	alloc_exit_fast(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

ALLOC_EXPORT void _Exit(int status)
{
	trace_death_flush();
	alloc_exit_fast(status);
	for (;;)
		syscall(SYS_exit_group, status);
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
