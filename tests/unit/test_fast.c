/*
** test_fast.c — unit tests of the fast paths (alloc/alloc_fast.c):
** alloc_core_malloc_mis and alloc_core_free_mis, and their mim forms, must
** count exactly what the general path counts, whichever of the two takes
** each call (in mim the map must hold exactly the live blocks too).
**
** A fixed pseudo-random run mixes blocks the fast paths take (small blocks
** of a few sites and allocators) with blocks they hand to the general path
** (aligned and calloc blocks, blocks too big for the flush budget, a site's
** first block), through many budget flushes and reads that reset a kind;
** a model in the test keeps current, max_since_last and max_ever of every
** entry the blocks land in, and every figure is compared at each read.
*/
#include "ut.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAST_SITES 4
#define FAST_LIVE 300
#define FAST_STEPS 40000

ParameterizedTestParameters(fast, same_counts_as_general)
{
	static int idx[] = {0, 1, 2, 3}; /* every mode of ut_modes */
	return cr_make_param_array(int, idx, ut_nmodes);
}

/* The mode's fast entry points, as the hooks pick them. */
static void *fast_malloc(size_t size, unsigned allocator, uintptr_t site)
{
	if (alloc_mode == MEMINST_MODE_MIM)
		return alloc_core_malloc_mim(size, allocator, site);
	return alloc_core_malloc_mis(size, allocator, site);
}

static void fast_free(void *p, uintptr_t site)
{
	if (alloc_mode == MEMINST_MODE_MIM)
		alloc_core_free_mim(p, site);
	else
		alloc_core_free_mis(p, site);
}

typedef struct fast_entry_s {
	int64_t cur[2], sl[2], ever[2]; /* sizes, blocks */
} fast_entry_t;

typedef struct fast_model_s {
	fast_entry_t total, alloc[ALLOC_A_COUNT], type[FAST_SITES], cls, thread;
} fast_model_t;

typedef struct fast_block_s {
	void *p;
	size_t size;
	unsigned allocator, site;
} fast_block_t;

static uint64_t fast_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fast_entry_add(fast_entry_t *e, int64_t size, int64_t blocks)
{
	int64_t d[2] = {size, blocks};
	for (int k = 0; k < 2; k++) {
		e->cur[k] += d[k];
		if (e->cur[k] > e->sl[k])
			e->sl[k] = e->cur[k];
		if (e->cur[k] > e->ever[k])
			e->ever[k] = e->cur[k];
	}
}

static void fast_count(fast_model_t *m, const fast_block_t *b, int sign)
{
	int64_t s = sign * (int64_t)b->size;
	fast_entry_add(&m->total, s, sign);
	fast_entry_add(&m->alloc[b->allocator], s, sign);
	fast_entry_add(&m->type[b->site], s, sign);
	fast_entry_add(&m->cls, s, sign);
	fast_entry_add(&m->thread, s, sign);
}

/* A new block from site `site`: mostly through the fast entry point. */
static void fast_new(fast_block_t *b, uint64_t *rng, unsigned site)
{
	uint64_t r = fast_rng(rng);
	b->site = site;
	b->size = 1 + r % 1500;
	b->allocator = (r >> 20) % 3 == 0 ? ALLOC_A_NEW : ALLOC_A_MALLOC;
	switch ((r >> 24) % 16) {
	case 0: /* too big for the budget: the general path */
		b->size = 300000 + r % 1000;
		break;
	case 1:
		b->allocator = ALLOC_A_ALIGNED;
		b->p = alloc_core_aligned(64, b->size, ALLOC_A_ALIGNED, ut_site(60 + site));
		return;
	case 2:
		b->allocator = ALLOC_A_CALLOC;
		b->p = alloc_core_calloc(1, b->size, ut_site(60 + site), 0);
		return;
	}
	b->p = fast_malloc(b->size, b->allocator, ut_site(60 + site));
}

/* Compare one entry; with `reset`, through a read that resets its kind. */
static void fast_expect(enum meminst_status_kind kind, uint32_t id, fast_entry_t *e, bool reset)
{
	struct meminst_status_info got = reset ? ut_read(kind, id) : ut_peek(kind, id);
	UT_EXPECT_COUNTER(got.sizes, e->cur[0], e->sl[0], e->ever[0]);
	UT_EXPECT_COUNTER(got.blocks, e->cur[1], e->sl[1], e->ever[1]);
}

static void fast_reset(fast_entry_t *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			e[i].sl[k] = e[i].cur[k];
}

/* Every entry of the model against the library; one kind (chosen by `r`)
** is read with a reset, the others are peeked at. */
static void fast_check(fast_model_t *m, const uint32_t *types, uint32_t cls, uint32_t thr, uint64_t r)
{
	unsigned reset = (unsigned)(r % 5);
	fast_expect(MEMINST_STATUS_TOTAL, 0, &m->total, reset == 0);
	for (unsigned a = 0; a < ALLOC_A_COUNT; a++)
		fast_expect(MEMINST_STATUS_ALLOCATORS, a, &m->alloc[a], reset == 1 && a == ALLOC_A_COUNT - 1);
	for (unsigned s = 0; s < FAST_SITES; s++)
		fast_expect(MEMINST_STATUS_TYPES, types[s], &m->type[s], reset == 2 && s == FAST_SITES - 1);
	fast_expect(MEMINST_STATUS_CLASSES, cls, &m->cls, reset == 3);
	fast_expect(MEMINST_STATUS_THREADS, thr, &m->thread, reset == 4);
	if (reset == 0)
		fast_reset(&m->total, 1);
	if (reset == 1)
		fast_reset(m->alloc, ALLOC_A_COUNT);
	if (reset == 2)
		fast_reset(m->type, FAST_SITES);
	if (reset == 3)
		fast_reset(&m->cls, 1);
	if (reset == 4)
		fast_reset(&m->thread, 1);
}

static bool fast_lists_shared; /* mim: every list as without membarrier */

static void fast_same_counts(int mode)
{
	ut_start(ut_modes[mode]);
	if (fast_lists_shared) { /* as alloc_thread_init leaves it then */
		alloc_map_bias = false;
		if (alloc_tls.thr)
			atomic_fetch_or(&alloc_tls.thr->own_list->stop, ALLOC_LIST_SHARED);
	}
	static fast_block_t live[FAST_LIVE];
	fast_model_t m;
	uint32_t types[FAST_SITES];
	uint64_t rng = 0x2545f4914f6cdd1dull;
	memset(&m, 0, sizeof m);
	memset(live, 0, sizeof live);
	for (unsigned s = 0; s < FAST_SITES; s++) { /* a first block per site names its type */
		fast_block_t b = {fast_malloc(8, ALLOC_A_MALLOC, ut_site(60 + s)), 8, ALLOC_A_MALLOC, s};
		cr_assert_not_null(b.p);
		types[s] = alloc_core_block_type(b.p);
		fast_count(&m, &b, +1);
		fast_count(&m, &b, -1);
		fast_free(b.p, ut_site(70));
	}
	uint32_t cls = ut_exe_class(), thr = alloc_tls.thread_no;
	for (unsigned i = 0; i < FAST_STEPS; i++) {
		uint64_t r = fast_rng(&rng);
		fast_block_t *b = &live[r % FAST_LIVE];
		if (b->p) {
			fast_count(&m, b, -1);
			fast_free(b->p, ut_site(70));
			b->p = NULL;
		}
		/* phases that climb (fill) and fall (free only) move the peaks */
		if ((i / 4000) % 2 == 0 || (r >> 40) % 4 == 0) {
			fast_new(b, &rng, (unsigned)(r >> 32) % FAST_SITES);
			cr_assert_not_null(b->p);
			cr_assert_eq(alloc_core_block_type(b->p), types[b->site]);
			fast_count(&m, b, +1);
		}
		if (i % 1000 == 999) {
			fast_check(&m, types, cls, thr, r >> 8);
			if (alloc_mode == MEMINST_MODE_MIM)
				cr_assert_eq(alloc_map_count(), (size_t)m.total.cur[1], "the map and the count differ");
		}
	}
	for (unsigned i = 0; i < FAST_LIVE; i++)
		if (live[i].p) {
			fast_count(&m, &live[i], -1);
			fast_free(live[i].p, ut_site(70));
		}
	fast_check(&m, types, cls, thr, 0);
	fast_check(&m, types, cls, thr, 1);
}

ParameterizedTest(int *mode, fast, same_counts_as_general)
{
	fast_same_counts(*mode);
}

/*
** Two classes whose numbers share a class slot (32 apart): a type slot is
** only used with its class's slot in place, so counting a block of one
** class between blocks of the other moves the slot back and forth without
** counting anything under the wrong class.
*/
ParameterizedTestParameters(fast, classes_sharing_a_slot)
{
	static int idx[] = {0, 1}; /* mis and mim: the generic path leans on it too */
	return cr_make_param_array(int, idx, 2);
}

ParameterizedTest(int *mode, fast, classes_sharing_a_slot)
{
	ut_start(ut_modes[*mode]);
	char name[32];
	int ca = -1, cb = -1;
	for (unsigned i = 0; i < ALLOC_SLOTS_CLASS + 2 && cb < 0; i++) {
		snprintf(name, sizeof name, "fast%u", i);
		int c = alloc_class_register(name);
		cr_assert_geq(c, 0);
		if (ca < 0)
			ca = c;
		else if ((c - ca) % ALLOC_SLOTS_CLASS == 0)
			cb = c;
	}
	cr_assert_geq(cb, 0);
	uint32_t ta = alloc_type_register("fast_a", ca, ut_site(80));
	uint32_t tb = alloc_type_register("fast_b", cb, ut_site(81));
	cr_assert(ta && tb);
	bool mis = *mode == 0;
	void (*release)(void *, uintptr_t) = mis ? alloc_core_free_mis : alloc_core_free;
	void *a1 = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(80), ta);
	void *a2 = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(80), ta);
	void *b1 = alloc_core_malloc(200, ALLOC_A_MALLOC, ut_site(81), tb);
	void *a3 = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(80), ta);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, ca, 300, 3);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, cb, 200, 1);
	release(a1, ut_site(82)); /* the type's slot is in place again: a fast free in mis */
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, ca, 200, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, cb, 200, 1);
	release(b1, ut_site(82));
	release(a2, ut_site(82));
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, ca, 100, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, cb, 0, 0);
	release(a3, ut_site(82));
	struct meminst_status_info e = ut_read(MEMINST_STATUS_CLASSES, (uint32_t)ca);
	UT_EXPECT_COUNTER(e.sizes, 0, 300, 300);
	UT_EXPECT_COUNTER(e.blocks, 0, 3, 3);
	e = ut_read(MEMINST_STATUS_CLASSES, (uint32_t)cb);
	UT_EXPECT_COUNTER(e.sizes, 0, 0, 200);
	e = ut_read(MEMINST_STATUS_TYPES, ta);
	UT_EXPECT_COUNTER(e.sizes, 0, 300, 300);
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 500, 500);
}

/*
** The fast malloc decides whether the total passed alloc_peak_next with
** one compare against the thread's own threshold (alloc_thread_t.peak_d),
** made again at each flush of the total's slot and whenever the gate's
** epoch moves, as it does when alloc_peak_next moves.  Through a climb
** across several flushes and two moves of alloc_peak_next, the compare
** must say what the total says after every allocation.
*/
static void fast_peak_move(int64_t next)
{
	atomic_store(&alloc_peak_next, next);
	atomic_fetch_add(&alloc_count_gate, ALLOC_GATE_EPOCH); /* as alloc_service_peak.c does */
}

Test(fast, peak_threshold_follows_the_total)
{
	ut_start("mis");
	enum { N = 6000 };
	static void *p[N];
	p[0] = alloc_core_malloc_mis(64, ALLOC_A_MALLOC, ut_site(90));
	alloc_thread_t *t = alloc_tls.thr;
	cr_assert_not_null(t);
	fast_peak_move(100000);
	unsigned passed = 0;
	for (unsigned i = 1; i < N; i++) {
		if (i == 2500)
			fast_peak_move(300000);
		p[i] = alloc_core_malloc_mis(64, ALLOC_A_MALLOC, ut_site(90));
		int64_t total = t->slots[0].base[0] + alloc_slot_bytes(t->slots[0].d);
		bool want = total > atomic_load(&alloc_peak_next);
		cr_assert_eq(t->slots[0].d > t->peak_d, want, "after block %u: total %lld, next %lld", i,
			     (long long)total, (long long)atomic_load(&alloc_peak_next));
		passed += want;
	}
	cr_assert(passed > 0 && passed < N - 1, "the climb passed the threshold (%u)", passed);
	fast_peak_move(INT64_MAX);
	for (unsigned i = 0; i < N; i++)
		alloc_core_free_mis(p[i], ut_site(91));
}

/* A block of the bootstrap arena given to the fast free is left alone:
** not counted out, not reported, not handed to the backend. */
static void fast_free_boot(void *p)
{
	alloc_core_free_mis(p, ut_site(93));
}

Test(fast, bootstrap_block_left_alone)
{
	ut_start("mis");
	void *keep = alloc_core_malloc_mis(100, ALLOC_A_MALLOC, ut_site(92));
	void *boot = alloc_boot_malloc(100, 16);
	char err[256];
	ut_capture_stderr(fast_free_boot, boot, err, sizeof err);
	cr_assert_str_empty(err);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 100, 1);
	alloc_core_free_mis(keep, ut_site(93));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/* Without membarrier the gate keeps its fence bit: the fast paths fence and
** go on, and count what the general path counts. */
ParameterizedTestParameters(fast, same_counts_with_the_fence_bit)
{
	static int idx[] = {0, 2};
	return cr_make_param_array(int, idx, ut_nmodes > 2 ? 2 : 1);
}

ParameterizedTest(int *mode, fast, same_counts_with_the_fence_bit)
{
	atomic_fetch_or(&alloc_count_gate, ALLOC_GATE_FENCE); /* as alloc_thread_init does then */
	fast_same_counts(*mode);
}

/* Without membarrier no list is biased: mim's fast paths take the thread's
** list by its lock (their locked instances) and count the same. */
ParameterizedTestParameters(fast, same_counts_with_shared_lists)
{
	static int idx[] = {1, 3}; /* the mim modes of ut_modes */
	return cr_make_param_array(int, idx, ut_nmodes > 2 ? 2 : 1);
}

ParameterizedTest(int *mode, fast, same_counts_with_shared_lists)
{
	fast_lists_shared = true;
	fast_same_counts(*mode);
	cr_assert(atomic_load(&alloc_tls.thr->own_list->stop) & ALLOC_LIST_SHARED);
}

/*
** mim: blocks freed by another thread than the one that allocated them
** take the fast free's way into the other list (alloc_fast.c,
** fast_free_mim_other), counted out of the freeing thread's slots with the
** owner's thread entry: while the owner lives (its list shared after the
** first such free) and after it exited (a few blocks: in the orphans), the
** map and every entry must say what is left.
*/
#define XFREE_N 3000
static struct xfree_owner {
	void *block[XFREE_N];
	uint32_t thread_no;
	pthread_barrier_t turn;
} xfree;

static void *xfree_owner_run(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < XFREE_N; i++)
		xfree.block[i] = alloc_core_malloc_mim(16 + i % 100, ALLOC_A_MALLOC, ut_site(100));
	xfree.thread_no = alloc_tls.thread_no;
	pthread_barrier_wait(&xfree.turn); /* its blocks are there */
	pthread_barrier_wait(&xfree.turn); /* the others have freed some */
	return NULL;
}

static void xfree_expect_left(unsigned from, uint32_t type)
{
	uint64_t bytes = 0;
	for (unsigned i = from; i < XFREE_N; i++)
		bytes += 16 + i % 100;
	cr_assert_eq(alloc_map_count(), (size_t)(XFREE_N - from));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, bytes, XFREE_N - from);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, type, bytes, XFREE_N - from);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, xfree.thread_no, bytes, XFREE_N - from);
}

ParameterizedTestParameters(fast, cross_thread_frees)
{
	static int idx[] = {1, 3}; /* the mim modes of ut_modes */
	return cr_make_param_array(int, idx, ut_nmodes > 2 ? 2 : 1);
}

ParameterizedTest(int *mode, fast, cross_thread_frees)
{
	ut_start(ut_modes[*mode]);
	pthread_t th;
	pthread_barrier_init(&xfree.turn, NULL, 2);
	cr_assert_eq(pthread_create(&th, NULL, xfree_owner_run, NULL), 0);
	pthread_barrier_wait(&xfree.turn);
	uint32_t type = alloc_core_block_type(xfree.block[0]);
	xfree_expect_left(0, type);
	/* the first through the general path (it revokes the bias), the
	** rest through the other list's fast way, last blocks first and
	** first blocks next, so that moves happen at both ends */
	unsigned half = XFREE_N / 2;
	for (unsigned i = 0; i < half; i++)
		alloc_core_free_mim(xfree.block[i % 2 ? half - 1 - i / 2 : i / 2], ut_site(101));
	xfree_expect_left(half, type);
	pthread_barrier_wait(&xfree.turn);
	cr_assert_eq(pthread_join(th, NULL), 0);
	/* the owner has gone: its blocks are the orphans' now */
	xfree_expect_left(half, type);
	for (unsigned i = half; i < XFREE_N; i++)
		alloc_core_free_mim(xfree.block[i], ut_site(101));
	xfree_expect_left(XFREE_N, type);
	pthread_barrier_destroy(&xfree.turn);
}
