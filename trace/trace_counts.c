/*
** trace_counts.c — exact call counts next to samples (MEMINST
** sample_counts=on; statprof's count-calls): code built with
** -finstrument-functions reports each entry through the tracer's
** __cyg_profile_func_enter, which calls trace_call_hook (set to
** trace_counts_note while counting is on) in threads it is not tracing.  The counts go out as MEMINST_TREC_COUNTS records when the thread
** ends, when counting stops and at exit.
**
** Each thread counts into its own open-addressing table (function address
** -> count) in mmap'd memory: no malloc, no lock on the counting path.  The
** tables hang on one list, pushed with compare-and-swap (an instrumented
** signal handler may make the first call of a thread), and are reused by
** later threads once their thread has ended, so the list holds at most as
** many tables as threads ever ran at once.  At exit the calling thread also
** writes the tables of threads still running (their counts end up under its
** thread number; the reader's totals are right, the split is not).
**
** Counting perturbs the program: COUNTS_COST records the measured cost of
** one counted call so that a report can show how much time it added.
*/
#include "trace_sampler.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../alloc/alloc_int.h"

#define COUNTS_BITS0 10          /* 1024 slots at first                  */
#define COUNTS_PAIRS_PER_REC 250 /* COUNTS records stay small            */

typedef struct counts_slot_s {
	uint64_t fn, count;
} counts_slot_t;

typedef struct counts_table_s {
	struct counts_table_s *next; /* the list of every table             */
	_Atomic int owned;           /* a live thread counts into it         */
	unsigned bits;
	uint64_t used;
	uint32_t epoch;              /* counts_epoch its counts belong to    */
	counts_slot_t *slot;         /* 1 << bits slots                      */
	size_t map_bytes;
} counts_table_t;

bool trace_counts_on;
static _Atomic(counts_table_t *) counts_all;
static _Atomic uint32_t counts_epoch;
static __thread counts_table_t *counts_mine ALLOC_TLS_MODEL;

/* ------------------------------------------------------------- tables --- */

static counts_slot_t *counts_slots_map(unsigned bits, size_t *bytes)
{
	*bytes = sizeof(counts_slot_t) << bits;
	return alloc_sys_map(*bytes);
}

/* A free table from the list, or a new one. */
static counts_table_t *counts_table_take(void)
{
	for (counts_table_t *t = atomic_load(&counts_all); t; t = t->next) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&t->owned, &free_, 1))
			return t;
	}
	counts_table_t *t = alloc_sys_map(sizeof *t);
	if (!t)
		return NULL;
	t->bits = COUNTS_BITS0;
	t->slot = counts_slots_map(t->bits, &t->map_bytes);
	if (!t->slot) {
		alloc_sys_unmap(t, sizeof *t);
		return NULL;
	}
	atomic_store(&t->owned, 1);
	t->next = atomic_load(&counts_all);
	while (!atomic_compare_exchange_weak(&counts_all, &t->next, t))
		;
	return t;
}

static void counts_table_clear(counts_table_t *t)
{
	memset(t->slot, 0, sizeof(counts_slot_t) << t->bits);
	t->used = 0;
}

static inline uint64_t counts_hash(uint64_t fn, unsigned bits)
{
	return (fn * 0x9e3779b97f4a7c15ull) >> (64 - bits);
}

/* Insert a pair that is not in the table yet (it has room). */
static void counts_put(counts_table_t *t, uint64_t fn, uint64_t count)
{
	uint64_t mask = (1ull << t->bits) - 1;
	for (uint64_t h = counts_hash(fn, t->bits);; h = (h + 1) & mask)
		if (!t->slot[h].fn) {
			t->slot[h].fn = fn;
			t->slot[h].count = count;
			t->used++;
			return;
		}
}

/* Double the table (kept at most 3/4 full so that probes stay short). */
static void counts_grow(counts_table_t *t)
{
	size_t bytes, old_bytes = t->map_bytes;
	counts_slot_t *old = t->slot, *s = counts_slots_map(t->bits + 1, &bytes);
	if (!s)
		return; /* out of memory: the table keeps filling, then drops */
	uint64_t n = 1ull << t->bits;
	t->slot = s;
	t->map_bytes = bytes;
	t->bits++;
	t->used = 0;
	for (uint64_t i = 0; i < n; i++)
		if (old[i].fn)
			counts_put(t, old[i].fn, old[i].count);
	alloc_sys_unmap(old, old_bytes);
}

static __attribute__((noinline)) counts_table_t *counts_table_mine(void)
{
	counts_table_t *t = counts_mine;
	if (!t && !(t = counts_mine = counts_table_take()))
		return NULL;
	uint32_t epoch = atomic_load_explicit(&counts_epoch, memory_order_relaxed);
	if (t->epoch != epoch) { /* reset since this thread last counted */
		counts_table_clear(t);
		t->epoch = epoch;
	}
	return t;
}

void trace_counts_note(void *fn)
{
	counts_table_t *t = counts_mine;
	if (__builtin_expect(!t || t->epoch != atomic_load_explicit(&counts_epoch,
								     memory_order_relaxed), 0))
		if (!(t = counts_table_mine()))
			return;
	uint64_t key = (uint64_t)(uintptr_t)fn, mask = (1ull << t->bits) - 1;
	for (uint64_t h = counts_hash(key, t->bits);; h = (h + 1) & mask) {
		counts_slot_t *s = &t->slot[h];
		if (s->fn == key) {
			s->count++;
			return;
		}
		if (!s->fn) {
			s->fn = key;
			s->count = 1;
			if (++t->used * 4 > (3ull << t->bits))
				counts_grow(t);
			return;
		}
	}
}

/* ------------------------------------------------------------ records --- */

/* Write a table's pairs as COUNTS records on the calling thread's stream,
** then empty it. */
static void counts_emit(counts_table_t *t)
{
	uint64_t rec[2 + 2 * COUNTS_PAIRS_PER_REC];
	unsigned n = 0;
	uint64_t size = 1ull << t->bits;
	if (t->epoch != atomic_load(&counts_epoch))
		t->used = 0; /* counted before a reset: dropped */
	for (uint64_t i = 0; t->used && i <= size; i++) {
		if (n == COUNTS_PAIRS_PER_REC || (i == size && n)) {
			rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_COUNTS, trace_now());
			rec[1] = MEMINST_TREC_SIZE_WORD(2 + 2 * n, n);
			trace_ev_append(rec, 2 + 2 * n);
			n = 0;
		}
		if (i < size && t->slot[i].fn && t->slot[i].count) {
			rec[2 + 2 * n] = t->slot[i].fn;
			rec[3 + 2 * n] = t->slot[i].count;
			n++;
		}
	}
	counts_table_clear(t);
}

void trace_counts_flush_thread(void)
{
	counts_table_t *t = counts_mine;
	if (!t)
		return;
	counts_emit(t);
	counts_mine = NULL;
	atomic_store(&t->owned, 0);
}

void trace_counts_reset(void)
{
	atomic_fetch_add(&counts_epoch, 1);
}

/* --------------------------------------------------------- start/stop --- */

/* What one counted call costs, in picoseconds: time a loop of notes into
** a scratch table (hits, the common case), minus nothing — the loop
** overhead is part of what an instrumented call pays too. */
static uint64_t counts_measure_cost(void)
{
	enum { FNS = 64, ROUNDS = 4096 };
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (unsigned r = 0; r < ROUNDS; r++)
		for (uintptr_t f = 1; f <= FNS; f++)
			trace_counts_note((void *)(f * 64));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	int64_t ns = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
	return ns > 0 ? (uint64_t)ns * 1000 / (FNS * ROUNDS) : 0;
}

int trace_counts_start(void)
{
	trace_counts_on = false;
	uint64_t ps = counts_measure_cost();
	counts_table_t *t = counts_mine;
	if (t)
		counts_table_clear(t); /* the measurement's scratch counts */
	uint64_t rec[3] = {MEMINST_TREC_HEAD(MEMINST_TREC_COUNTS_COST, trace_now()),
			   MEMINST_TREC_SIZE_WORD(3, 0), ps};
	trace_ev_append(rec, 3);
	__atomic_store_n(&trace_counts_on, true, __ATOMIC_RELEASE);
	trace_call_hook_set(trace_counts_note);
	return 0;
}

/* Stop counting; the tables of every thread go out now (the caller's
** thread number carries those of the others: see the top). */
void trace_counts_stop(void)
{
	__atomic_store_n(&trace_counts_on, false, __ATOMIC_RELEASE);
	trace_call_hook_set(NULL);
	for (counts_table_t *t = atomic_load(&counts_all); t; t = t->next)
		if (atomic_load(&t->owned) && t->used)
			counts_emit(t);
}
