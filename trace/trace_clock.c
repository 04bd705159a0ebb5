/*
** trace_clock.c — the clock of a trace file: what its time stamps count
** (the invariant TSC for wall time, else CLOCK_MONOTONIC; each thread's
** CPU time for trace=cpu), its rate, and its origin.  Fixed once per
** process by trace_clock_setup; trace_now is async-signal-safe.  And
** what the tracer costs on that clock (trace_calibrate, TRACE_COST).
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <cpuid.h>
#include <time.h>

int trace_clock;
uint64_t trace_t0;
uint64_t trace_tsc_mult;
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
			trace_tsc_mult = clock_cpu_mult;
			clock_cpu_resync = (uint64_t)(hz * CLOCK_CPU_RESYNC_NS / 1e9);
		}
	} else if (clock_invariant_tsc()) {
		clock_tick_hz = clock_tsc_calibrate();
		trace_t0 = __builtin_ia32_rdtsc();
		trace_clock = MEMINST_TRACE_CLOCK_TSC;
		trace_tsc_mult = 1ull << 32;
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

/* ------------------------------------------------ the tracer's cost -- */

/*
** The tracer's own cost, measured once, at the first start, on the starting
** thread (trace_cost_ps, the TRACE_COST record), through the exported hooks
** into the thread's buffer, the best of CAL_ROUNDS rounds so that an
** interrupt does not count; the records are dropped again:
**   - CAL_K rounds of enter(f) W enter(g) W exit(g) W exit(f) W, where W
**     is a little work of the program's kind (cal_work): from the
**     records' own stamps, the time of each of the four kinds of interval
**     (call->call, call->return, return->return, return->call) less W
**     timed alone is what a function's OWN holds of the tracer for such
**     an interval, which readers take off (compensation).  With work in
**     between, the processor overlaps part of the hooks with it, as in a
**     real run: empty intervals would overstate the cost;
**   - CAL_K empty <alloc> intervals: the time inside their stamps, and the
**     rest of the time they took (outside).
*/
#define CAL_K 32
#define CAL_ROUNDS 5
static uint64_t cal_wide[CAL_K * 8 * 3 * MEMINST_TRACE_EXPAND_MAX];
static volatile unsigned cal_sink;

static __attribute__((noinline)) void cal_work(void)
{
	for (unsigned i = 0; i < 16; i++)
		cal_sink += i;
}

/* CAL_K times f: f { W g W }, g { W h W h W }, h { W }, W = cal_work, as
** functions built with -finstrument-functions: each calls the hooks at its
** entry and exit through a pointer (as through the PLT), so that every
** kind of interval (MEMINST_TCOST_CC …) holds one W, calls and returns of
** real functions and the hooks' cost; without the hooks, the rest alone. */
#define CAL_EVENTS 8
static void (*volatile cal_enter)(void *, void *) = __cyg_profile_func_enter;
static void (*volatile cal_exit)(void *, void *) = __cyg_profile_func_exit;
static bool cal_on;
#define CAL_FN(name, body)                                                     \
	static __attribute__((noinline)) void name(void)                       \
	{                                                                      \
		if (cal_on)                                                    \
			cal_enter((void *)name, __builtin_return_address(0));  \
		body;                                                          \
		if (cal_on)                                                    \
			cal_exit((void *)name, __builtin_return_address(0));   \
	}
CAL_FN(cal_h, cal_work())
CAL_FN(cal_g, (cal_work(), cal_h(), cal_work(), cal_h(), cal_work()))
CAL_FN(cal_f, (cal_work(), cal_g(), cal_work()))

static void cal_hooks(bool hooks)
{
	cal_on = hooks;
	for (int i = 0; i < CAL_K; i++)
		cal_f();
	cal_on = false;
}

/* The sums of the six kinds of interval in the records from p to the
** buffer's position (MEMINST_TCOST_CC … LRC order), in ticks. */
static void cal_intervals(const trace_thr_t *t, const uint64_t *p, uint64_t sum[6], uint64_t cnt[6])
{
	size_t used, n = meminst_trace_expand(p, (size_t)(t->ev.pos - p), cal_wide, &used), len;
	uint64_t last = 0;
	int prev = -1;
	for (size_t i = 0; i < n && (len = meminst_trec_len(cal_wide + i, n - i)); i += len) {
		unsigned k = MEMINST_TREC_KIND(cal_wide[i]);
		if (k != MEMINST_TREC_CALL && k != MEMINST_TREC_RETURN)
			continue;
		int cur = k == MEMINST_TREC_RETURN;
		uint64_t ts = MEMINST_TREC_TIME(cal_wide[i]);
		int kind = prev == 3 ? 4 + !cur : 2 * prev + (cur != prev); /* as eng_ev_interval */
		if (prev >= 0 && ts >= last)
			sum[kind] += ts - last, cnt[kind]++;
		prev = cur && prev == 0 ? 3 : cur, last = ts;
	}
}

/* The cost of the interval kinds: min_iv less the work alone. */
static void cal_kinds(const double min_iv[6], double work, double ps)
{
	for (int k = 0; k < 6; k++) {
		double c = min_iv[k] - work;
		trace_cost_ps[MEMINST_TCOST_CC + k] = c > 0 && min_iv[k] < 1e300 ? (uint64_t)(c * ps) : 1;
	}
}

/* The allocator's measure in an <alloc> call (ALLOC_BACKEND) around a call
** of nothing, CAL_K times: TSC ticks. */
static void cal_nothing(void) {}
static void (*volatile cal_nothing_p)(void) = cal_nothing;
static uint64_t cal_inner(void)
{
	alloc_backend_save_t save;
	alloc_backend_open(&save, true);
	for (int i = 0; i < CAL_K; i++)
		ALLOC_BACKEND_VOID(cal_nothing_p());
	return alloc_backend_close(&save);
}

void trace_calibrate(void)
{
	trace_thr_t *t = trace_cur;
	if (trace_cost_ps[0] || !t || t->ev.pos + CAL_K * 8 * 3 + CAL_K * 5 + 8 > t->ev.end)
		return;
	trace_stream_t save = t->ev;
	uint64_t best_hooked = UINT64_MAX, best_in = UINT64_MAX, best_out = UINT64_MAX, best_work = UINT64_MAX;
	uint64_t best_inner = UINT64_MAX;
	double min_iv[6] = {1e308, 1e308, 1e308, 1e308, 1e308, 1e308};
	for (int r = 0; r < CAL_ROUNDS; r++) { /* the hooks' clock (trace=cpu: mostly the TSC) */
		/* one hooked call first, dropped with the round's records: with
		** the TSC clock the first event after a long gap looks for a
		** pre-emption (call_gap: a clock_gettime of the thread's CPU time,
		** after its stamp), which the pass's first call->call interval
		** held otherwise: ~1 us over 64 made that kind 3-8x the others */
		cal_on = true;
		cal_h();
		cal_on = false;
		uint64_t a = trace_now_thread();
		cal_hooks(false);
		uint64_t *p = t->ev.pos, b = trace_now_thread();
		cal_hooks(true);
		uint64_t c = trace_now_thread(), sum = 0, iv[6] = {0}, ivn[6] = {0};
		cal_intervals(t, p, iv, ivn);
		/* each pass's best apart: an interrupt in one round's pass without
		** hooks must not make that round's difference the smallest (0) */
		best_work = b - a < best_work ? b - a : best_work;
		best_hooked = c - b < best_hooked ? c - b : best_hooked;
		for (int k = 0; k < 6; k++)
			if (ivn[k] && (double)iv[k] / (double)ivn[k] < min_iv[k])
				min_iv[k] = (double)iv[k] / (double)ivn[k];
		b = trace_now();
		p = t->ev.pos;
		for (int i = 0; i < CAL_K; i++)
			trace_alloc_end(trace_alloc_begin(), MEMINST_TALLOC_FREE, 0, NULL, 0, UINT64_MAX);
		c = trace_now();
		for (; p + 4 <= t->ev.pos; p += 4) /* ALLOC_AT [begin, size word (4, ticks), op, site] */
			sum += p[1] >> 32;
		uint64_t out = c - b > sum ? c - b - sum : 0;
		best_in = sum < best_in ? sum : best_in;
		uint64_t inner = cal_inner();
		best_inner = inner < best_inner ? inner : best_inner;
		best_out = out < best_out ? out : best_out;
		t->ev = save;
	}
	double ps = 1e12 / trace_ticks_per_second();
	trace_cost_ps[MEMINST_TCOST_ALLOC_IN] = (uint64_t)((double)best_in * ps / CAL_K);
	trace_cost_ps[MEMINST_TCOST_ALLOC_OUT] = (uint64_t)((double)best_out * ps / CAL_K);
	trace_cost_ps[MEMINST_TCOST_INNER] = (uint64_t)((double)best_inner * (double)trace_tsc_mult / 4294967296.0 * ps / CAL_K);
	cal_kinds(min_iv, (double)best_work / (CAL_EVENTS * CAL_K), ps);
	uint64_t best_call = best_hooked > best_work ? best_hooked - best_work : 0;
	trace_cost_ps[MEMINST_TCOST_CALL] = (uint64_t)((double)best_call * ps / (CAL_EVENTS * CAL_K)) | 1; /* never 0 */
	trace_cost_record();
}
