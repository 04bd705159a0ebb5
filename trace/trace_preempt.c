/*
** trace_preempt.c — <preempted>: with trace=wall (the TSC clock), the time
** a traced thread was switched out although it could have run is written
** as a SUSPEND record of reason PREEMPT, which readers show as the
** `<preempted>` pseudo function and keep out of the program's functions'
** OWN and ACC.  Otherwise a wall-clock profile charges a time slice given
** to another thread to whatever function was running.
**
** The thread is not watched while it runs: a switch-out shows in the trace
** as a gap between two of its calls or returns, and only gaps of at least
** 2^TRACE_GAP_BITS ticks (~50 us) leave the hooks' fast path.  For such a
** gap the thread's CPU clock is read (one system call): the wall time
** since the last reading, less the CPU time and the SUSPEND records
** (wrapped waits, meminst's own) in between, is time off the CPU.  If
** there is some, getrusage tells involuntary from voluntary switches: all
** of it is pre-emption when the thread was switched out involuntarily and
** its voluntary switches are no more than its wrapped waits; a wait in a
** call meminst does not wrap stays the function's time, as before.  The
** time goes at the end of the gap, after the last record of the thread:
** only the function at the top of the stack ran in the gap.
**
** Cost: one clock_gettime per gap of 50 us or more (under 1%), and one
** getrusage more when the thread was off the CPU.
*/
#define _GNU_SOURCE
#include "trace_int.h"

#include <errno.h>
#include <sys/resource.h>
#include <time.h>

/* Off-CPU time below this is left to the function: the two clocks' reads
** and a few microseconds of interrupts are not a pre-emption. */
#define PREEMPT_MIN_NS 10000

static uint64_t pre_ticks(uint64_t ns)
{
	return (uint64_t)((double)ns * trace_ticks_per_second() / 1e9);
}

static uint64_t pre_ns(uint64_t ticks)
{
	return (uint64_t)((double)ticks * 1e9 / trace_ticks_per_second());
}

/* getrusage(RUSAGE_THREAD)'s switch counts; false if it failed. */
static bool pre_counts(long *nivcsw, long *nvcsw)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return false;
	*nivcsw = ru.ru_nivcsw;
	*nvcsw = ru.ru_nvcsw;
	return true;
}

static void pre_read(trace_preempt_t *p, uint64_t now, uint64_t cpu_ns)
{
	p->at = now;
	p->cpu_ns = cpu_ns;
	p->waited = 0;
}

static void pre_count(trace_preempt_t *p)
{
	p->counted = pre_counts(&p->nivcsw, &p->nvcsw);
	p->waits = 0;
}

/* The thread starts being traced at `now`: the first reading. */
void trace_preempt_start(trace_thr_t *t, uint64_t now)
{
	int saved_errno = errno;
	trace_preempt_t *p = &t->pre;
	pre_read(p, now, trace_clock_ns(CLOCK_THREAD_CPUTIME_ID));
	p->mark = now;
	p->run_last = 0;
	pre_count(p);
	errno = saved_errno;
}

/* Was the thread pre-empted, judging by its switches since the last
** count (and make this the new count)? */
static bool pre_involuntary(trace_preempt_t *p)
{
	long niv, nv;
	if (!pre_counts(&niv, &nv))
		return false;
	bool was = p->counted && niv > p->nivcsw && nv >= p->nvcsw && nv - p->nvcsw <= (long)p->waits;
	p->nivcsw = niv, p->nvcsw = nv, p->counted = true;
	p->waits = 0;
	return was;
}

/*
** The time t was pre-empted in a gap from prev to now (time stamps; prev
** 0: not known), in ticks, at most the gap; 0 for none.  Makes now the
** last reading.
*/
uint64_t trace_preempt_off(trace_thr_t *t, uint64_t prev, uint64_t now)
{
	trace_preempt_t *p = &t->pre;
	if (p->at && now <= p->at)
		return 0;
	int saved_errno = errno;
	uint64_t cpu = trace_clock_ns(CLOCK_THREAD_CPUTIME_ID), ticks = 0;
	if (!p->at || cpu < p->cpu_ns) { /* no reading yet (a fork's child): this is the first */
		pre_read(p, now, cpu);
		p->mark = now;
		pre_count(p);
		errno = saved_errno;
		return 0;
	}
	uint64_t span = pre_ns(now - p->at), busy = cpu - p->cpu_ns + pre_ns(p->waited);
	/* the TSC's rate is known to ~0.02%: over a long span that much of
	** the difference is the clocks', not the thread's */
	uint64_t off = span > busy ? span - busy : 0, doubt = PREEMPT_MIN_NS + span / 2000;
	uint64_t from = prev > p->mark ? prev : p->mark;
	if (from < p->at)
		from = p->at;
	pre_read(p, now, cpu);
	if (off >= doubt && now > from && pre_involuntary(p)) {
		ticks = pre_ticks(off);
		if (ticks > now - from)
			ticks = now - from;
		if (ticks < pre_ticks(PREEMPT_MIN_NS)) /* off the CPU elsewhere: not in this gap */
			ticks = 0;
	}
	errno = saved_errno;
	return ticks;
}

/* A gap in t's calls and returns: SUSPEND [now - off, now, PREEMPT] for
** the time the thread was pre-empted in it. */
void trace_preempt_gap(trace_thr_t *t, uint64_t prev, uint64_t now)
{
	uint64_t ticks = trace_preempt_off(t, prev, now);
	if (ticks) {
		uint64_t w[3] = {MEMINST_TREC_HEAD(MEMINST_TREC_SUSPEND, now - ticks), now,
				 MEMINST_TSUSPEND_PREEMPT};
		trace_ev_append_to(t, w, 3);
		t->pre.mark = now;
	}
}
