/*
** trace_asample.c — allocation sampling (MEMINST alloc_sample=BYTES): a
** stack every N bytes allocated on average, the heap profilers' way
** (tcmalloc, jemalloc's prof, heaptrack's sampling mode).
**
** Each thread counts down the bytes left until its next sample.  The
** intervals are drawn from an exponential distribution of mean N, so the
** sample points form a Poisson process over the bytes allocated: an
** allocation of s bytes holds at least one point with probability
** p = 1 - exp(-s/N), whatever the sizes around it, and is then sampled
** (once: the countdown restarts after it).  Weighting a sampled request by
** 1/p gives unbiased estimates,
**     bytes  = s / (1 - exp(-s/N))        count = 1 / (1 - exp(-s/N)),
** which is what the record carries (bytes; count = bytes / s).
**
** The common path is one subtraction and one test of thread-local data.
** A sample is taken inside malloc: the stack walk must not allocate
** (libunwind does not; trace_unwind_init ran its set-up outside malloc),
** and anything libc does allocate for us runs under the layer's recursion
** guard, so it reaches the backend untracked and unsampled.
*/
#include "trace_sampler.h"

#include <math.h>
#include <stdatomic.h>
#include <time.h>

#include "../alloc/alloc_int.h"

bool trace_asample_on;
uint64_t trace_asample_mean;
static double asample_mean_d;
static _Atomic uint32_t asample_epoch; /* moves at each start: threads redraw */

/* Bytes until the thread's next sample: apart, because the allocation hooks
** count it down inline (trace_asample_count). */
__thread int64_t trace_asample_left ALLOC_TLS_MODEL;

typedef struct asample_tls_s {
	uint32_t epoch;  /* asample_epoch the countdown belongs to      */
	uint64_t rng;    /* xorshift64* state, 0 until seeded           */
} asample_tls_t;
static __thread asample_tls_t asample_tls ALLOC_TLS_MODEL;

/* xorshift64*: a uniform draw in (0, 1]. */
static double asample_uniform(asample_tls_t *t)
{
	if (!t->rng) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t->rng = ((uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)t) * 0x9e3779b97f4a7c15ull | 1;
	}
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	uint64_t r = (t->rng * 0x2545f4914f6cdd1dull) >> 11; /* 53 bits */
	return ((double)r + 1.0) / 9007199254740992.0;
}

/* The next interval: exponential, mean N; at least one byte. */
static int64_t asample_draw(asample_tls_t *t)
{
	double x = -log(asample_uniform(t)) * asample_mean_d;
	return x < 1.0 ? 1 : x > 9e18 ? INT64_MAX : (int64_t)x;
}

/* The countdown crossed zero (or belongs to an earlier start). */
static __attribute__((noinline)) void asample_take(asample_tls_t *t, size_t size)
{
	uint32_t epoch = atomic_load_explicit(&asample_epoch, memory_order_relaxed);
	if (t->epoch != epoch) { /* first allocation of the thread in this run */
		t->epoch = epoch;
		trace_asample_left = asample_draw(t) - (int64_t)size;
		if (trace_asample_left > 0)
			return;
	}
	trace_asample_left = asample_draw(t);
	/* inside libmeminst (the service thread, a snapshot being stored):
	** not the program's bytes.  The sampling points form a Poisson
	** process over all bytes, so dropping those that land on ours leaves
	** the program's estimate unbiased. */
	if (!size || alloc_tls.guard)
		return;
	uint64_t rec[4 + trace_sample_depth + 1];
	alloc_guard_enter();
	unsigned n = trace_sample_walk_here(rec + 4, 0);
	double p = -expm1(-(double)size / asample_mean_d); /* 1 - exp(-s/N), exact for small s/N */
	rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC_SAMPLE, trace_now());
	rec[1] = MEMINST_TREC_SIZE_WORD(4 + n, n);
	rec[2] = (uint64_t)((double)size / p + 0.5);
	rec[3] = size;
	trace_ev_append(rec, 4 + n);
	alloc_guard_exit();
}

void trace_asample_take(size_t size)
{
	asample_take(&asample_tls, size);
}

void trace_asample_note(size_t size)
{
	trace_asample_count(size);
}

int trace_asample_start(uint64_t mean_bytes)
{
	trace_asample_mean = mean_bytes;
	asample_mean_d = (double)mean_bytes;
	/* every thread's countdown is stale: each redraws at its next
	** allocation (left <= 0 sends it to asample_take) */
	atomic_fetch_add(&asample_epoch, 1);
	trace_asample_left = 0;
	/* the allocating entry points call trace_asample_note from now on
	** (alloc_hooks.c); frees are not concerned */
	__atomic_store_n(&trace_asample_on, true, __ATOMIC_RELEASE);
	alloc_route_flag(ALLOC_ROUTE_ASAMPLE, true);
	return 0;
}

void trace_asample_stop(void)
{
	__atomic_store_n(&trace_asample_on, false, __ATOMIC_RELEASE);
	alloc_route_flag(ALLOC_ROUTE_ASAMPLE, false);
}
