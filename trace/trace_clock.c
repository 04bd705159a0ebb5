/*
** trace_clock.c — the clock of a trace file: what its time stamps count
** (the invariant TSC for wall time, else CLOCK_MONOTONIC; each thread's
** CPU time for trace=cpu), its rate, and its origin.  Fixed once per
** process by trace_clock_setup; trace_now is async-signal-safe.
*/
#define _GNU_SOURCE
#include "trace_int.h"

#include <cpuid.h>
#include <time.h>

int trace_clock;
uint64_t trace_t0;
static double clock_tick_hz;
static uint64_t clock_t0_mono, clock_t0_real;

/*
** trace=cpu without a system call per stamp (trace_now_thread): the TSC
** runs on, and the time between two stamps of a thread is its CPU time when
** it is shorter than CLOCK_CPU_RESYNC_NS, too short for the thread to have
** been switched out and back in (a time slice is longer); a longer gap (a
** block, a pre-emption, or just a long stretch without calls) reads
** CLOCK_THREAD_CPUTIME_ID again, which counts only what ran.  Without an
** invariant TSC every stamp is the system call.
*/
#define CLOCK_CPU_RESYNC_NS 20000
static uint64_t clock_cpu_mult;    /* ns per TSC tick, 32.32 fixed point; 0: none */
static uint64_t clock_cpu_resync;  /* CLOCK_CPU_RESYNC_NS in TSC ticks       */
static __thread struct {
	uint64_t tsc, ns;          /* the thread's last stamp                 */
} clock_cpu TRACE_TLS_MODEL;

uint64_t trace_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every
** power state, so it can stand for wall time. */
static bool clock_invariant_tsc(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return false;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return d & (1u << 8);
}

/* Ticks per second of the TSC, measured against CLOCK_MONOTONIC over
** 250 us: every traced process pays this at start, so it is short; with
** clock reads good to ~20-50 ns that is 0.02% at worst, and the reader
** refines it with the CLOCK records of every events chunk over the whole
** run (hypervisors here do not publish the rate in CPUID 0x15/0x16). */
static double clock_tsc_calibrate(void)
{
	uint64_t m0 = trace_clock_ns(CLOCK_MONOTONIC), c0 = __builtin_ia32_rdtsc(), m1, c1;
	do {
		m1 = trace_clock_ns(CLOCK_MONOTONIC);
		c1 = __builtin_ia32_rdtsc();
	} while (m1 - m0 < 250000);
	return (double)(c1 - c0) * 1e9 / (double)(m1 - m0);
}

/* want: 1 wall, 2 cpu.  Fixes the clock for the life of the process (a
** forked child keeps it, so its times line up with the parent's). */
void trace_clock_setup(int want)
{
	if (trace_clock)
		return;
	clock_t0_real = trace_clock_ns(CLOCK_REALTIME);
	clock_t0_mono = trace_clock_ns(CLOCK_MONOTONIC);
	if (want == 2) {
		clock_tick_hz = 1e9;
		trace_t0 = 0; /* each thread's CPU time, from its own start */
		trace_clock = MEMINST_TRACE_CLOCK_CPU;
		if (clock_invariant_tsc()) {
			double hz = clock_tsc_calibrate();
			clock_cpu_mult = (uint64_t)(1e9 / hz * 4294967296.0);
			clock_cpu_resync = (uint64_t)(hz * CLOCK_CPU_RESYNC_NS / 1e9);
		}
	} else if (clock_invariant_tsc()) {
		clock_tick_hz = clock_tsc_calibrate();
		trace_t0 = __builtin_ia32_rdtsc();
		trace_clock = MEMINST_TRACE_CLOCK_TSC;
	} else {
		clock_tick_hz = 1e9;
		trace_t0 = clock_t0_mono;
		trace_clock = MEMINST_TRACE_CLOCK_MONO;
	}
}

double trace_ticks_per_second(void) { return clock_tick_hz; }

uint64_t trace_now(void)
{
	switch (trace_clock) {
	case MEMINST_TRACE_CLOCK_TSC:
		return __builtin_ia32_rdtsc() - trace_t0;
	case MEMINST_TRACE_CLOCK_CPU:
		return trace_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	default:
		return trace_clock_ns(CLOCK_MONOTONIC) - trace_t0;
	}
}

/* trace_now for the calling thread in normal context (the hooks, <alloc>,
** suspend): with trace=cpu, the TSC between system calls (see the top). */
uint64_t trace_now_thread(void)
{
	if (trace_clock != MEMINST_TRACE_CLOCK_CPU || !clock_cpu_mult)
		return trace_now();
	uint64_t tsc = __builtin_ia32_rdtsc(), dt = tsc - clock_cpu.tsc;
	if (trace_likely(dt < clock_cpu_resync)) {
		clock_cpu.tsc = tsc;
		return clock_cpu.ns += (uint64_t)(((unsigned __int128)dt * clock_cpu_mult) >> 32);
	}
	uint64_t ns = trace_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (ns > clock_cpu.ns) /* never back: the gaps before may have been counted a little long */
		clock_cpu.ns = ns;
	clock_cpu.tsc = __builtin_ia32_rdtsc();
	return clock_cpu.ns;
}

/* In a child of fork: the thread's CPU clock starts again from 0. */
void trace_clock_after_fork_child(void)
{
	clock_cpu.tsc = clock_cpu.ns = 0;
}

void trace_clock_origin(uint64_t *realtime_ns, uint64_t *mono_ns)
{
	*realtime_ns = clock_t0_real;
	*mono_ns = clock_t0_mono;
}
