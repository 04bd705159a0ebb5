/*
** test_sim.c — the simulation engine (engine/eng_sim.c) on hand-made
** records with exactly known time stamps: every CNT, ACC and OWN below is
** worked out by hand in the comment beside the events.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "meminst-trace.h"
#include "eng_sim.h"

static void *t_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	return realloc(p, n);
}

static void t_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const struct eng_allocator t_alloc = {t_realloc, t_free, NULL};
static struct eng_sim sim;
static uint64_t w[1 << 20];
static size_t nw;

#define MAIN 0x1000
#define FA 0x2000
#define FB 0x3000
#define FC 0x4000
#define FX 0x5000
#define FY 0x6000

static void setup(void) { eng_sim_init(&sim, &t_alloc); nw = 0; }
static void teardown(void) { eng_sim_free(&sim); }

static void call(uint64_t t, uint64_t fn) { w[nw++] = MEMINST_TREC_HEAD(MEMINST_TREC_CALL, t); w[nw++] = fn; w[nw++] = fn + 1; }
static void ret(uint64_t t, uint64_t fn) { w[nw++] = MEMINST_TREC_HEAD(MEMINST_TREC_RETURN, t); w[nw++] = fn; }
static void rec1(unsigned k, uint64_t t) { w[nw++] = MEMINST_TREC_HEAD(k, t); }
static void rec3(unsigned k, uint64_t t, uint64_t a, uint64_t b) { w[nw++] = MEMINST_TREC_HEAD(k, t); w[nw++] = a; w[nw++] = b; }

/* Feed what was built as one chunk of `thread`, then start afresh. */
static void feed(uint32_t thread)
{
	size_t bad;
	cr_assert_eq(eng_sim_feed(&sim, thread, MEMINST_TRACE_STREAM_EVENTS, w, nw, &bad), ENG_OK);
	nw = 0;
}

static void finish(uint32_t thread)
{
	feed(thread);
	cr_assert_eq(eng_sim_finish(&sim), ENG_OK);
}

static const struct eng_thread *thr(uint32_t n)
{
	for (size_t i = 0; i < sim.nthreads; i++)
		if (sim.threads[i]->thread == n)
			return sim.threads[i];
	cr_assert_fail("no thread %u", n);
	return NULL;
}

static const struct eng_fn_row *fn(uint32_t t, uint64_t addr)
{
	const struct eng_thread *th = thr(t);
	for (size_t i = 0; i < th->nfns; i++)
		if (th->fns[i].fn == addr)
			return &th->fns[i];
	cr_assert_fail("no function %#llx", (unsigned long long)addr);
	return NULL;
}

static const struct eng_pair_row *pair(uint32_t t, uint64_t caller, uint64_t called)
{
	const struct eng_thread *th = thr(t);
	for (size_t i = 0; i < th->npairs; i++) {
		const struct eng_pair_row *p = &th->pairs[i];
		if (th->fns[p->caller].fn == caller && th->fns[p->called].fn == called &&
		    (p->cnt || p->acc || p->own))
			return p;
	}
	cr_assert_fail("no pair %#llx -> %#llx", (unsigned long long)caller, (unsigned long long)called);
	return NULL;
}

#define FN(t, a, c, ac, ow) do { const struct eng_fn_row *r_ = fn(t, a); \
	cr_expect_eq(r_->cnt, c, "%#x cnt %llu", a, (unsigned long long)r_->cnt); \
	cr_expect_eq(r_->acc, ac, "%#x acc %llu", a, (unsigned long long)r_->acc); \
	cr_expect_eq(r_->own, ow, "%#x own %llu", a, (unsigned long long)r_->own); } while (0)
#define PAIR(t, a, b, c, ac, ow) do { const struct eng_pair_row *p_ = pair(t, a, b); \
	cr_expect_eq(p_->cnt, c, "%#x->%#x cnt %llu", a, b, (unsigned long long)p_->cnt); \
	cr_expect_eq(p_->acc, ac, "%#x->%#x acc %llu", a, b, (unsigned long long)p_->acc); \
	cr_expect_eq(p_->own, ow, "%#x->%#x own %llu", a, b, (unsigned long long)p_->own); } while (0)

static void totals(uint32_t t, uint64_t cnt, uint64_t own)
{
	uint64_t c, o;
	eng_thread_totals(thr(t), &c, &o);
	cr_expect_eq(c, cnt, "thread cnt %llu", (unsigned long long)c);
	cr_expect_eq(o, own, "thread own %llu", (unsigned long long)o);
}

TestSuite(sim, .init = setup, .fini = teardown);

Test(sim, simple_tree)
{
	call(0, MAIN); call(10, FA); ret(30, FA); call(40, FB); call(45, FA); ret(50, FA); ret(60, FB); ret(100, MAIN);
	finish(1);
	FN(1, MAIN, 1, 100, 60);     /* 0-10, 30-40, 60-100 */
	FN(1, FA, 2, 25, 25);
	FN(1, FB, 1, 20, 15);        /* 40-45, 50-60 */
	PAIR(1, ENG_FN_UNDEFINED, MAIN, 1, 100, 60);
	PAIR(1, MAIN, FA, 1, 20, 20);
	PAIR(1, MAIN, FB, 1, 20, 15);
	PAIR(1, FB, FA, 1, 5, 5);
	totals(1, 4, 100);
}

Test(sim, direct_recursion)
{
	call(0, FA); call(10, FA); call(20, FA); ret(30, FA); ret(40, FA); ret(50, FA);
	finish(1);
	FN(1, FA, 3, 50, 50);        /* ACC once: the outermost instance */
	PAIR(1, ENG_FN_UNDEFINED, FA, 1, 50, 20);
	PAIR(1, FA, FA, 2, 0, 30);
}

Test(sim, mutual_recursion)
{
	call(0, FA); call(10, FB); call(20, FA); call(30, FB); ret(40, FB); ret(50, FA); ret(60, FB); ret(70, FA);
	finish(1);
	FN(1, FA, 2, 70, 40);
	FN(1, FB, 2, 50, 30);
	PAIR(1, FA, FB, 2, 50, 30);
	PAIR(1, FB, FA, 1, 0, 20);
	PAIR(1, ENG_FN_UNDEFINED, FA, 1, 70, 20);
	totals(1, 4, 70);
}

Test(sim, deep_stack)
{
	const uint64_t depth = 100000;
	for (uint64_t i = 0; i < depth; i++)
		call(i, i % 2 ? FA : 0x100000 + i * 16);
	for (uint64_t i = depth; i-- > 0;)
		ret(2 * depth - 1 - i, i % 2 ? FA : 0x100000 + i * 16);
	finish(1);
	/* frame i: called at i, returns at 2 depth - 1 - i, on top for 2 ticks
	** (the innermost for 1); FA is every odd frame, the outermost at 1 */
	FN(1, FA, depth / 2, 2 * depth - 3, depth - 1);
	FN(1, 0x100000, 1, 2 * depth - 1, 2);
	totals(1, depth, 2 * depth - 1);
	cr_expect_eq(thr(1)->depth, 0);
}

Test(sim, undefined_caller)
{
	rec1(MEMINST_TREC_TRACE_ON, 0);
	call(10, FA); ret(20, FA); ret(30, FX); ret(40, FY);
	finish(1);
	FN(1, FX, 0, 30, 20);        /* 0-10, 20-30 */
	FN(1, FY, 0, 40, 10);
	PAIR(1, FX, FA, 1, 10, 10);
	PAIR(1, FY, FX, 0, 30, 20);
	PAIR(1, ENG_FN_UNDEFINED, FY, 0, 40, 10);
	cr_expect_eq(thr(1)->untraced, 2);
}

Test(sim, unbalanced_return)
{
	call(0, MAIN); ret(10, FX); call(20, FA); ret(25, FA);
	finish(1);
	FN(1, MAIN, 1, 10, 10);      /* closed by the return of an outer function */
	FN(1, FX, 0, 10, 0);
	PAIR(1, FX, MAIN, 1, 10, 10);
	PAIR(1, ENG_FN_UNDEFINED, FX, 0, 10, 0);
	PAIR(1, ENG_FN_UNDEFINED, FA, 1, 5, 5);
}

Test(sim, longjmp_skip)
{
	call(0, MAIN); call(10, FA); call(20, FB); call(30, FC); ret(40, FA); ret(50, MAIN);
	finish(1);
	FN(1, FC, 1, 10, 10);
	FN(1, FB, 1, 20, 10);
	FN(1, FA, 1, 30, 10);
	FN(1, MAIN, 1, 50, 20);
	totals(1, 4, 50);
}

Test(sim, thread_exit_mid_call)
{
	call(0, MAIN); call(10, FA); rec1(MEMINST_TREC_THREAD_EXIT, 20);
	feed(1);
	call(0, MAIN); call(10, FB); w[nw++] = MEMINST_TREC_HEAD(MEMINST_TREC_CLOCK, 25); w[nw++] = 99;
	finish(2);
	FN(1, FA, 1, 10, 10);
	FN(1, MAIN, 1, 20, 10);
	FN(2, FB, 1, 15, 15);        /* closed at the thread's last time stamp */
	FN(2, MAIN, 1, 25, 10);
}

Test(sim, trace_off_on)
{
	call(0, MAIN); call(10, FA); rec1(MEMINST_TREC_TRACE_OFF, 20);
	rec1(MEMINST_TREC_TRACE_ON, 100); call(110, FB); ret(120, FB); ret(130, MAIN);
	finish(1);
	FN(1, FA, 1, 10, 10);
	FN(1, FB, 1, 10, 10);
	FN(1, MAIN, 1, 20 + 30, 10 + 20); /* traced 0-20; untraced entry 100-130 */
	totals(1, 3, 50);                 /* 80 ticks off are nobody's */
}

Test(sim, suspend)
{
	call(0, MAIN); call(10, FA); rec3(MEMINST_TREC_SUSPEND, 20, 70, MEMINST_TSUSPEND_SLEEP);
	ret(80, FA); ret(100, MAIN);
	finish(1);
	FN(1, ENG_FN_SUSPEND, 1, 50, 0);
	FN(1, FA, 1, 70, 20);        /* ACC has the suspension, OWN not */
	FN(1, MAIN, 1, 100, 30);
	PAIR(1, FA, ENG_FN_SUSPEND, 1, 50, 0);
	totals(1, 3, 50);            /* 100 - 50 suspended */
}

Test(sim, alloc)
{
	call(0, MAIN); rec3(MEMINST_TREC_ALLOC, 10, 15, MEMINST_TALLOC_MALLOC | 64 << 8); ret(20, MAIN);
	finish(1);
	FN(1, ENG_FN_ALLOC, 1, 5, 5);
	FN(1, MAIN, 1, 20, 15);
	PAIR(1, MAIN, ENG_FN_ALLOC, 1, 5, 5);
	totals(1, 2, 20);
}

/* A capture's wait inside an allocation is out of <alloc>'s ACC, also
** when a <preempted> came before (at an earlier call: not inside it). */
Test(sim, snapshot_wait_after_preemption)
{
	call(0, MAIN); rec3(MEMINST_TREC_SUSPEND, 10, 30, MEMINST_TSUSPEND_PREEMPT);
	call(30, FA); rec3(MEMINST_TREC_SUSPEND, 40, 60, MEMINST_TSUSPEND_SNAPSHOT);
	rec3(MEMINST_TREC_ALLOC, 35, 70, MEMINST_TALLOC_MALLOC | 64 << 8);
	ret(80, FA); ret(100, MAIN);
	finish(1);
	FN(1, ENG_FN_PREEMPTED, 1, 20, 20);
	FN(1, ENG_FN_SNAPSHOT, 1, 20, 20);
	/* 35 less the 20 of the wait; OWN = ACC: the 5 before the wait are the
	** allocator's too, not FA's (sim_take_back) */
	FN(1, ENG_FN_ALLOC, 1, 15, 15);
	FN(1, FA, 1, 50 - 20, 50 - 20 - 15); /* 30-80 less the wait; OWN less <alloc>'s */
}

Test(sim, two_threads_interleaved)
{
	call(0, MAIN); call(5, FA);
	feed(1);
	call(0, MAIN); call(3, FB);
	feed(2);
	ret(9, FA); ret(12, MAIN);
	feed(1);
	ret(4, FB); ret(8, MAIN);
	finish(2);
	FN(1, FA, 1, 4, 4);
	FN(1, MAIN, 1, 12, 8);
	FN(2, FB, 1, 1, 1);
	FN(2, MAIN, 1, 8, 7);
	cr_expect_eq(sim.first, 0);
	cr_expect_eq(sim.last, 12);
}

Test(sim, prof_pair_records)
{
	uint64_t r[] = {MEMINST_TREC_HEAD(MEMINST_TREC_PROF_PAIR, 0), MEMINST_TREC_SIZE_WORD(12, 0),
			MAIN, 0, 1, 100, 60, FA, MAIN, 2, 25, 25};
	memcpy(w, r, sizeof r);
	nw = 12;
	finish(1);
	FN(1, MAIN, 1, 100, 60);
	FN(1, FA, 2, 25, 25);
	PAIR(1, MAIN, FA, 2, 25, 25);
}

Test(sim, bad_records)
{
	size_t bad;
	uint64_t unknown[] = {MEMINST_TREC_HEAD(11, 0)};
	cr_expect_eq(eng_sim_feed(&sim, 1, 0, unknown, 1, &bad), ENG_E_KIND);
	uint64_t past[] = {MEMINST_TREC_HEAD(MEMINST_TREC_CALL, 0), 1, 2, MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE, 0),
			   MEMINST_TREC_SIZE_WORD(9, 1), 0};
	cr_expect_eq(eng_sim_feed(&sim, 1, 0, past, 6, &bad), ENG_E_SIZE);
	cr_expect_eq(bad, 3);
	uint64_t count[] = {MEMINST_TREC_HEAD(MEMINST_TREC_SAMPLE, 0), MEMINST_TREC_SIZE_WORD(4, 1000), 0, 0};
	cr_expect_eq(eng_sim_feed(&sim, 1, 0, count, 4, &bad), ENG_E_COUNT);
	uint64_t cut[] = {MEMINST_TREC_HEAD(MEMINST_TREC_CALL, 0), 1};
	cr_expect_eq(eng_sim_feed(&sim, 1, 0, cut, 2, &bad), ENG_E_SIZE);
}

/* Bytes allocated (<alloc> records that allocate; frees do not count):
**   main calls FA; FA allocates 100 and calls FA (recursion), which
**   allocates 40 and frees it; then FA calls FB, which allocates 7 twice
**   (calloc, realloc).
**   own bytes: FA 140 (2 blocks), FB 14 (2), main 0.
**   acc bytes: main 154 (4 blocks), FA 154 (charged once, by the outermost
**   instance), FB 14; <alloc> own = acc = 154 (4 blocks).
**   pairs: main->FA acc 154; FA->FA own 40, acc 0 (not outermost);
**   FA->FB own 14, acc 14; FB-><alloc> own 14. */
static void alloc_rec(uint64_t t, unsigned op, uint64_t size)
{
	rec3(MEMINST_TREC_ALLOC, t, t + 1, op | size << 8);
}

Test(sim, bytes)
{
	call(0, MAIN);
	call(10, FA);
	alloc_rec(12, MEMINST_TALLOC_MALLOC, 100);
	call(20, FA);
	alloc_rec(22, MEMINST_TALLOC_NEW, 40);
	alloc_rec(24, MEMINST_TALLOC_FREE, 40);
	ret(30, FA);
	call(40, FB);
	alloc_rec(41, MEMINST_TALLOC_CALLOC, 7);
	alloc_rec(43, MEMINST_TALLOC_REALLOC, 7);
	ret(50, FB);
	ret(60, FA);
	ret(70, MAIN);
	finish(1);
	const struct eng_fn_row *m = fn(1, MAIN), *a = fn(1, FA), *b = fn(1, FB), *al = fn(1, ENG_FN_ALLOC);
	cr_assert_eq(m->mem.own_bytes, 0);
	cr_assert_eq(m->mem.acc_bytes, 154);
	cr_assert_eq(m->mem.acc_blocks, 4);
	cr_assert_eq(a->mem.own_bytes, 140);
	cr_assert_eq(a->mem.own_blocks, 2);
	cr_assert_eq(a->mem.acc_bytes, 154);
	cr_assert_eq(a->mem.acc_blocks, 4);
	cr_assert_eq(b->mem.own_bytes, 14);
	cr_assert_eq(b->mem.acc_bytes, 14);
	cr_assert_eq(al->mem.own_bytes, 154);
	cr_assert_eq(al->mem.acc_bytes, 154);
	cr_assert_eq(al->mem.own_blocks, 4);
	cr_assert_eq(pair(1, MAIN, FA)->mem.acc_bytes, 154);
	cr_assert_eq(pair(1, FA, FA)->mem.own_bytes, 40);
	cr_assert_eq(pair(1, FA, FA)->mem.acc_bytes, 0);
	cr_assert_eq(pair(1, FA, FB)->mem.own_bytes, 14);
	cr_assert_eq(pair(1, FA, FB)->mem.acc_bytes, 14);
	cr_assert_eq(pair(1, FB, ENG_FN_ALLOC)->mem.own_bytes, 14);
}

/* keep_sites: the calls of each pair by call site, charged as the pair
** (ACC by the outermost instance only), moved with the pair when its
** caller becomes known (an untraced return), closed by a longjmp. */
static void call_at(uint64_t t, uint64_t fn, uint64_t site)
{
	w[nw++] = MEMINST_TREC_HEAD(MEMINST_TREC_CALL, t);
	w[nw++] = fn;
	w[nw++] = site;
}

static const struct eng_site_row *site_row(uint32_t t, uint64_t caller, uint64_t called, uint64_t site)
{
	const struct eng_thread *th = thr(t);
	for (size_t i = 0; i < th->nsites; i++) {
		const struct eng_site_row *r = &th->sites[i];
		const struct eng_pair_row *p = &th->pairs[r->pair];
		if (r->cnt && r->site == site && th->fns[p->caller].fn == caller && th->fns[p->called].fn == called)
			return r;
	}
	cr_assert_fail("no site %#llx of %#llx -> %#llx", (unsigned long long)site, (unsigned long long)caller,
		       (unsigned long long)called);
	return NULL;
}

#define SITE(t, a, b, s, c, ac) do { const struct eng_site_row *r_ = site_row(t, a, b, s); \
	cr_expect_eq(r_->cnt, c, "%#x->%#x at %#x cnt %llu", a, b, s, (unsigned long long)r_->cnt); \
	cr_expect_eq(r_->acc, ac, "%#x->%#x at %#x acc %llu", a, b, s, (unsigned long long)r_->acc); } while (0)

Test(sim, call_sites)
{
	sim.keep_sites = true;
	call_at(10, FA, 0x111); ret(20, FA); call_at(25, FA, 0x222); ret(30, FA);
	ret(40, MAIN);                                   /* MAIN made both calls */
	call_at(45, FB, 0x333); call_at(50, FB, 0x444);  /* FB -> FB: not outermost */
	call_at(55, FA, 0x555); ret(60, FA); ret(65, FB); ret(70, FB);
	call_at(75, FC, 0x666); call_at(80, FA, 0x777); ret(90, FC); /* FA left by a longjmp at 90 */
	call_at(92, FX, 0); ret(94, FX);                 /* no site: no row */
	finish(1);
	SITE(1, MAIN, FA, 0x111, 1, 10);
	SITE(1, MAIN, FA, 0x222, 1, 5);
	PAIR(1, MAIN, FA, 2, 15, 15);
	SITE(1, ENG_FN_UNDEFINED, FB, 0x333, 1, 25);
	SITE(1, FB, FB, 0x444, 1, 0);
	SITE(1, FB, FA, 0x555, 1, 5);
	SITE(1, ENG_FN_UNDEFINED, FC, 0x666, 1, 15);
	SITE(1, FC, FA, 0x777, 1, 10);
	size_t used = 0; /* (rows of calls from the empty stack stay, emptied, once settled) */
	for (size_t i = 0; i < thr(1)->nsites; i++)
		used += thr(1)->sites[i].cnt != 0;
	cr_expect_eq(used, 7);
}

/* Calls from the empty stack, settled again and again (a trace started
** deep in a recursion returns through every untraced frame): each settle
** moves only the rows made since the last one. */
Test(sim, call_sites_settled_often)
{
	sim.keep_sites = true;
	for (uint64_t i = 0; i < 2000; i++) {
		call_at(10 * i, FA, 0x100 + i % 7);
		ret(10 * i + 4, FA);
		ret(10 * i + 5, MAIN + 0x10 * (i % 3)); /* untraced: made that call */
	}
	finish(1);
	uint64_t calls = 0, acc = 0;
	for (size_t i = 0; i < thr(1)->nsites; i++)
		calls += thr(1)->sites[i].cnt, acc += thr(1)->sites[i].acc;
	cr_expect_eq(calls, 2000);
	cr_expect_eq(acc, 2000 * 4);
	SITE(1, MAIN, FA, 0x100, 96, 96 * 4); /* i % 3 == 0 and i % 7 == 0: i % 21 == 0 */
	cr_expect_leq(thr(1)->nsites, 7 + 3 * 7, "%zu rows", thr(1)->nsites);
}

/* Without keep_sites (libmeminst's in-process profile) no row is made. */
Test(sim, call_sites_not_kept)
{
	call_at(10, FA, 0x111); ret(20, FA);
	finish(1);
	cr_expect_eq(thr(1)->nsites, 0);
	PAIR(1, ENG_FN_UNDEFINED, FA, 1, 10, 10);
}
