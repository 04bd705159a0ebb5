/*
** test_counters.c — unit tests of the status counters (alloc/alloc_status.c
** through alloc/alloc_core.c), single-threaded, where every figure must be
** exact.
**
** Each test allocates known sizes through alloc_core_* from fixed sites and
** checks the five kinds (total, allocators, types, classes, threads):
** current figures going up and back down, max_ever keeping the peak,
** max_since_last restarting at each read of its own kind and of no other,
** the program's reads and the snapshots' each keeping their own,
** and realloc moving a block to the "realloc" allocator and the realloc
** site's type, freeing on size 0, and leaving the block counted as it was
** when it fails.  Every test runs for each mode and backend (ut_modes).
*/
#include "ut.h"

#include <errno.h>
#include <string.h>

#define MODES_OF(name)                                                            \
	ParameterizedTestParameters(counters, name)                              \
	{                                                                        \
		static int idx[] = {0, 1, 2, 3};                                 \
		return cr_make_param_array(int, idx, ut_nmodes);                 \
	}

/* Current figures of every entry a block of `type` made by this thread
** with `allocator` lands in, at once. */
static void cnt_expect_all(unsigned allocator, uint32_t type, uint64_t size, uint64_t blocks)
{
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, allocator, size, blocks);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, type, size, blocks);
}

/* ------------------------------------------------------------- kinds ---- */

MODES_OF(every_kind)
ParameterizedTest(int *mode, counters, every_kind)
{
	ut_start(ut_modes[*mode]);
	void *a = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(10), 0);
	void *b = alloc_core_calloc(10, 20, ut_site(11), 0);
	void *c = alloc_core_aligned(64, 300, ALLOC_A_ALIGNED, ut_site(12));
	void *d = alloc_core_malloc(400, ALLOC_A_NEW, ut_site(10), 0);
	uint32_t ta = alloc_core_block_type(a), tb = alloc_core_block_type(b);
	uint32_t tc = alloc_core_block_type(c), cls = ut_exe_class();
	uint32_t thr = alloc_tls.thread_no;
	cr_assert(ta && tb && tc && ta != tb && tb != tc && ta != tc);
	cr_assert_eq(alloc_core_block_type(d), ta, "same site, same type");
	cr_assert_neq(cls, 0);
	cr_assert_neq(thr, 0);

	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 1000, 4);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC, 100, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_CALLOC, 200, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_ALIGNED, 300, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_NEW, 400, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_REALLOC, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, 0, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, ta, 500, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tb, 200, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tc, 300, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, 0, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, cls, 1000, 4);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, thr, 1000, 4);

	alloc_core_free(a, ut_site(20));
	alloc_core_free(c, ut_site(20));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 600, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_ALIGNED, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, ta, 400, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tc, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, cls, 600, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, thr, 600, 2);

	alloc_core_free(b, ut_site(20));
	alloc_core_free(d, ut_site(20));
	struct meminst_status_info e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	UT_EXPECT_COUNTER(e.blocks, 0, 4, 4);
	e = ut_read(MEMINST_STATUS_ALLOCATORS, ALLOC_A_NEW);
	UT_EXPECT_COUNTER(e.sizes, 0, 400, 400);
	UT_EXPECT_COUNTER(e.blocks, 0, 1, 1);
	e = ut_read(MEMINST_STATUS_TYPES, ta);
	UT_EXPECT_COUNTER(e.sizes, 0, 500, 500);
	UT_EXPECT_COUNTER(e.blocks, 0, 2, 2);
	e = ut_read(MEMINST_STATUS_CLASSES, cls);
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	e = ut_read(MEMINST_STATUS_THREADS, thr);
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	UT_EXPECT_COUNTER(e.blocks, 0, 4, 4);
	cr_assert_eq(e.tid, (int32_t)alloc_sys_gettid());
}

/* Many small blocks: the per-thread slot flushes (every 1024 blocks) and
** retargets (types sharing a slot) must not lose or double anything. */
MODES_OF(many_blocks_many_types)
ParameterizedTest(int *mode, counters, many_blocks_many_types)
{
	enum { N = 5000 };
	static void *p[N];
	ut_start(ut_modes[*mode]);
	for (unsigned i = 0; i < N; i++)
		p[i] = alloc_core_malloc(i % 97, ALLOC_A_MALLOC, ut_site(i % 200), 0);
	uint64_t want = 0;
	for (unsigned i = 0; i < N; i++)
		want += i % 97;
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, want, N);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, alloc_tls.thread_no, want, N);
	uint64_t t5 = 0, n5 = 0;
	for (unsigned i = 5; i < N; i += 200)
		t5 += i % 97, n5++;
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, alloc_core_block_type(p[5]), t5, n5);
	for (unsigned i = 0; i < N; i++)
		alloc_core_free(p[i], ut_site(0));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, alloc_core_block_type(p[5]), 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, ut_exe_class(), 0, 0);
	cr_assert_eq(ut_peek(MEMINST_STATUS_TOTAL, 0).sizes.max_ever, want);
}

/* ---------------------------------------------------- max since last ---- */

static void cnt_churn(unsigned n, size_t size, unsigned allocator)
{
	void *p[64];
	cr_assert_leq(n, 64);
	for (unsigned i = 0; i < n; i++)
		p[i] = alloc_core_malloc(size, allocator, ut_site(30), 0);
	for (unsigned i = 0; i < n; i++)
		alloc_core_free(p[i], ut_site(30));
}

MODES_OF(max_since_last)
ParameterizedTest(int *mode, counters, max_since_last)
{
	ut_start(ut_modes[*mode]);
	uint32_t thr;
	struct meminst_status_info e;

	cnt_churn(10, 100, ALLOC_A_MALLOC);
	thr = alloc_tls.thread_no;
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	UT_EXPECT_COUNTER(e.blocks, 0, 10, 10);

	cnt_churn(3, 100, ALLOC_A_MALLOC); /* a lower peak than the old one */
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 300, 1000);
	UT_EXPECT_COUNTER(e.blocks, 0, 3, 10);
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 0, 1000);

	/* a block live across reads: max_since_last restarts at current */
	void *keep = alloc_core_malloc(50, ALLOC_A_MALLOC, ut_site(31), 0);
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 50, 50, 1000);
	cnt_churn(2, 10, ALLOC_A_MALLOC);
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 50, 70, 1000);
	UT_EXPECT_COUNTER(e.blocks, 1, 3, 10);
	e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 50, 50, 1000);
	alloc_core_free(keep, ut_site(31));

	/* reading TOTAL reset no other kind */
	e = ut_read(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC);
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	e = ut_read(MEMINST_STATUS_THREADS, thr);
	UT_EXPECT_COUNTER(e.blocks, 0, 10, 10);
	e = ut_read(MEMINST_STATUS_CLASSES, ut_exe_class());
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	e = ut_read(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC);
	UT_EXPECT_COUNTER(e.sizes, 0, 0, 1000);

	/* and reading ALLOCATORS did not reset TYPES */
	cnt_churn(4, 100, ALLOC_A_MALLOC);
	e = ut_read(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC);
	UT_EXPECT_COUNTER(e.sizes, 0, 400, 1000);
	e = ut_read(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(30)));
	UT_EXPECT_COUNTER(e.sizes, 0, 1000, 1000);
	e = ut_read(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(30)));
	UT_EXPECT_COUNTER(e.sizes, 0, 0, 1000);
}

/* The total as `reader` reads it: a snapshot or a control request
** (alloc_snapshot.c, snap_read_status) or the program
** (meminst_status_read). */
static struct meminst_status_info cnt_total_read(unsigned reader)
{
	struct meminst_status_info e;
	memset(&e, 0, sizeof e);
	alloc_stat_read(ALLOC_K_TOTAL, alloc_tags_count(ALLOC_K_TOTAL), &e, NULL, 1, reader);
	return e;
}

/* The program's reads, the snapshots (the launcher's timeline) and the
** control requests each keep their own max_since_last: no one's reset
** takes another's peak. */
MODES_OF(snapshots_keep_the_programs_max_since_last)
ParameterizedTest(int *mode, counters, snapshots_keep_the_programs_max_since_last)
{
	enum { P = ALLOC_READ_PROGRAM, S = ALLOC_READ_SNAPSHOT, C = ALLOC_READ_CONTROL };
	static const struct {
		unsigned blocks; /* a churn of that many 100-byte blocks first */
		unsigned reader;
		uint64_t since;  /* max_since_last bytes read */
	} steps[] = {
		{10, S, 1000}, {3, S, 300},
		/* two snapshots since the start: the program's first read
		** still has the peak of the whole run */
		{0, P, 1000}, {0, P, 0}, {0, S, 0},
		/* and the other way: a read by the program between two
		** snapshots */
		{5, P, 500}, {2, S, 500}, {0, P, 200}, {0, S, 0},
		/* a control request (inspect --pid), first the whole run's
		** peak, resets neither */
		{4, C, 1000}, {0, S, 400}, {0, P, 400}, {0, C, 0},
	};
	ut_start(ut_modes[*mode]);
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		if (steps[i].blocks)
			cnt_churn(steps[i].blocks, 100, ALLOC_A_MALLOC);
		struct meminst_status_info e = cnt_total_read(steps[i].reader);
		cr_expect_eq(e.sizes.max_since_last, steps[i].since, "step %zu: %llu bytes since the last read, not %llu",
			     i, (unsigned long long)e.sizes.max_since_last, (unsigned long long)steps[i].since);
		cr_expect_eq(e.blocks.max_since_last, steps[i].since / 100, "step %zu: %llu blocks", i,
			     (unsigned long long)e.blocks.max_since_last);
		UT_EXPECT_COUNTER(e.sizes, 0, steps[i].since, 1000);
	}
}

/* A count-only call (out == NULL) and a peek are not reads. */
MODES_OF(counting_does_not_reset)
ParameterizedTest(int *mode, counters, counting_does_not_reset)
{
	ut_start(ut_modes[*mode]);
	cnt_churn(5, 100, ALLOC_A_MALLOC);
	cr_assert_eq(meminst_status_read(MEMINST_STATUS_TOTAL, NULL, 0), 1);
	cr_assert_eq(meminst_status_count(MEMINST_STATUS_ALLOCATORS), ALLOC_A_ALL);
	struct meminst_status_info e = ut_read(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 0, 500, 500);
}

/* -------------------------------------------------------------- realloc -- */

MODES_OF(realloc_moves_the_block)
ParameterizedTest(int *mode, counters, realloc_moves_the_block)
{
	ut_start(ut_modes[*mode]);
	unsigned char *p = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(40), 0);
	uint32_t told = alloc_core_block_type(p), tnew = alloc_type_of_site(ut_site(41));
	for (int i = 0; i < 100; i++)
		p[i] = (unsigned char)i;
	cr_assert_neq(told, tnew);

	p = alloc_core_realloc(p, 250, ALLOC_A_REALLOC, ut_site(41), 0);
	cr_assert_not_null(p);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(p[i], i, "byte %d lost in realloc", i);
	cr_assert_eq(alloc_core_block_type(p), tnew);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 250, 1);
	cnt_expect_all(ALLOC_A_MALLOC, told, 0, 0);
	cnt_expect_all(ALLOC_A_REALLOC, tnew, 250, 1);

	p = alloc_core_realloc(p, 40, ALLOC_A_REALLOC, ut_site(41), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 40, 1);
	cnt_expect_all(ALLOC_A_REALLOC, tnew, 40, 1);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(p[i], i);
	p = alloc_core_realloc(p, 100000, ALLOC_A_REALLOC, ut_site(41), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 100000, 1);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(p[i], i);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, alloc_tls.thread_no, 100000, 1);
	cr_assert_eq(alloc_map_count(), alloc_mode == MEMINST_MODE_MIM ? 1 : 0);

	cr_assert_null(alloc_core_realloc(p, 0, ALLOC_A_REALLOC, ut_site(41), 0), "realloc(p, 0) frees");
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cnt_expect_all(ALLOC_A_REALLOC, tnew, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
	cr_assert_eq(ut_peek(MEMINST_STATUS_TOTAL, 0).sizes.max_ever, 100000);
}

MODES_OF(realloc_null_allocates)
ParameterizedTest(int *mode, counters, realloc_null_allocates)
{
	ut_start(ut_modes[*mode]);
	void *p = alloc_core_realloc(NULL, 70, ALLOC_A_REALLOC, ut_site(42), 0);
	cr_assert_not_null(p);
	cnt_expect_all(ALLOC_A_REALLOC, alloc_type_of_site(ut_site(42)), 70, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC, 0, 0);
	alloc_core_free(p, ut_site(42));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/* A block with alignment padding cannot be grown in place by the backend:
** it moves, and leaves the "aligned" allocator for "realloc". */
MODES_OF(realloc_of_aligned_block)
ParameterizedTest(int *mode, counters, realloc_of_aligned_block)
{
	ut_start(ut_modes[*mode]);
	unsigned char *p = alloc_core_aligned(4096, 100, ALLOC_A_ALIGNED, ut_site(43));
	memset(p, 0x3c, 100);
	p = alloc_core_realloc(p, 200, ALLOC_A_REALLOC, ut_site(44), 0);
	cr_assert_not_null(p);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(p[i], 0x3c);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 200, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_ALIGNED, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_REALLOC, 200, 1);
	cr_assert_eq(alloc_meta_pad_log2(((alloc_hdr_t *)p - 1)->meta), alloc_mode == MEMINST_MODE_MIM ? 5 : 4);
	alloc_core_free(p, ut_site(44));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
}

/* A failed realloc leaves the old block where it was: same allocator, same
** type, same bytes, still on the map.  Two paths: the size check before the
** backend, and the backend itself refusing. */
static void cnt_realloc_fails(size_t huge)
{
	unsigned char *p = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(45), 0);
	uint32_t type = alloc_core_block_type(p);
	memset(p, 0x5e, 100);
	errno = 0;
	cr_assert_null(alloc_core_realloc(p, huge, ALLOC_A_REALLOC, ut_site(46), 0), "size %zu", huge);
	cr_assert_eq(errno, ENOMEM);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 100, 1);
	cnt_expect_all(ALLOC_A_MALLOC, type, 100, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_REALLOC, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(46)), 0, 0);
	cr_assert_eq(alloc_core_block_type(p), type);
	cr_assert_eq(alloc_map_count(), alloc_mode == MEMINST_MODE_MIM ? 1 : 0);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(p[i], 0x5e);
	alloc_core_free(p, ut_site(45));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
}

MODES_OF(realloc_failure_keeps_the_block)
ParameterizedTest(int *mode, counters, realloc_failure_keeps_the_block)
{
	ut_start(ut_modes[*mode]);
	cnt_realloc_fails(SIZE_MAX - 100);
	cnt_realloc_fails((size_t)1 << 62);
}

/* ------------------------------------------------------- big blocks ---- */

/*
** A block of ALLOC_COUNT_BIG bytes or more does not fit a thread's slot
** (alloc_int.h) and is counted straight into the entries; the figures of
** every kind stay exact around it, the small blocks' included.  The big
** block is mapped, never touched, so it costs address space only.
*/
MODES_OF(big_blocks)
ParameterizedTest(int *mode, counters, big_blocks)
{
	const uint64_t big = 3 * ALLOC_COUNT_BIG + 123; /* past 32 bits too */
	ut_start(ut_modes[*mode]);
	void *a = alloc_core_malloc(1000, ALLOC_A_MALLOC, ut_site(60), 0);
	void *b = alloc_core_malloc(big, ALLOC_A_MALLOC, ut_site(61), 0);
	if (!b)
		cr_skip_test("no address space for a %llu-byte block", (unsigned long long)big);
	void *c = alloc_core_malloc(2000, ALLOC_A_MALLOC, ut_site(60), 0);
	uint32_t tb = alloc_core_block_type(b);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, big + 3000, 3);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tb, big, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, alloc_tls.thread_no, big + 3000, 3);
	alloc_core_free(b, ut_site(61));
	void *d = alloc_core_malloc(500, ALLOC_A_MALLOC, ut_site(60), 0);
	struct meminst_status_info e = ut_peek(MEMINST_STATUS_TOTAL, 0);
	UT_EXPECT_COUNTER(e.sizes, 3500, big + 3000, big + 3000);
	UT_EXPECT_COUNTER(e.blocks, 3, 3, 3);
	e = ut_peek(MEMINST_STATUS_TYPES, tb);
	UT_EXPECT_COUNTER(e.sizes, 0, big, big);
	e = ut_peek(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC);
	UT_EXPECT_COUNTER(e.sizes, 3500, big + 3000, big + 3000);
	alloc_core_free(a, ut_site(60));
	alloc_core_free(c, ut_site(60));
	alloc_core_free(d, ut_site(60));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/* ------------------------------------------------------------ events ---- */

/* Entry `id`'s events of a kind (meminst_events_read fills from entry 0). */
static struct meminst_events cnt_events(enum meminst_status_kind kind, uint32_t id)
{
	static struct meminst_events ev[512];
	long n = meminst_events_read(kind, ev, sizeof ev / sizeof ev[0]);
	cr_assert(n > (long)id && id < sizeof ev / sizeof ev[0], "kind %d has %ld entries, want %u", kind, n, id);
	return ev[id];
}

/* e1 - e0, field by field */
static struct meminst_events cnt_events_since(struct meminst_events e0, struct meminst_events e1)
{
	return (struct meminst_events){.calls = e1.calls - e0.calls, .allocated = e1.allocated - e0.allocated,
				       .frees = e1.frees - e0.frees, .temporary = e1.temporary - e0.temporary,
				       .reallocs = e1.reallocs - e0.reallocs};
}

#define CNT_EXPECT_EVENTS(what, got, c, a, t, r)                                                           \
	cr_assert((got).calls == (c) && (got).allocated == (a) && (got).temporary == (t) && (got).reallocs == (r), \
		  "%s: calls %llu allocated %llu temporary %llu reallocs %llu, want %llu %llu %llu %llu", what,      \
		  (unsigned long long)(got).calls, (unsigned long long)(got).allocated,                          \
		  (unsigned long long)(got).temporary, (unsigned long long)(got).reallocs,                       \
		  (unsigned long long)(c), (unsigned long long)(a), (unsigned long long)(t), (unsigned long long)(r))

/*
** The events of the five kinds: counted in the total's, allocator's and
** type's slots only, a class's are its types' and a thread's its total's
** (alloc_status.c, slot_events_also).  Checked while pending (no flush:
** few blocks) and after many flushes (3,000 pairs run the flush budget
** out several times), for the class and the thread against the total and
** the types.
*/
MODES_OF(events_of_every_kind)
ParameterizedTest(int *mode, counters, events_of_every_kind)
{
	ut_start(ut_modes[*mode]);
	void *first = alloc_core_malloc(8, ALLOC_A_MALLOC, ut_site(70), 0);
	uint32_t ta = alloc_core_block_type(first), tb = alloc_type_of_site(ut_site(71));
	uint32_t cls = ut_exe_class(), thr = alloc_tls.thread_no;
	alloc_core_free(first, ut_site(70));
	struct meminst_events t0 = cnt_events(MEMINST_STATUS_TOTAL, 0), h0 = cnt_events(MEMINST_STATUS_THREADS, thr);
	struct meminst_events c0 = cnt_events(MEMINST_STATUS_CLASSES, cls);
	struct meminst_events a0 = cnt_events(MEMINST_STATUS_TYPES, ta), b0 = cnt_events(MEMINST_STATUS_TYPES, tb);

	/* pending: two temporaries, a block kept, a realloc to the other type
	** (its old block the last allocated: a third temporary) */
	for (int i = 0; i < 2; i++)
		alloc_core_free(alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0), ut_site(70));
	void *keep = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(70), 0);
	keep = alloc_core_realloc(keep, 300, ALLOC_A_REALLOC, ut_site(71), 0);
	cr_assert_not_null(keep);
	struct meminst_events want = cnt_events_since(t0, cnt_events(MEMINST_STATUS_TOTAL, 0));
	CNT_EXPECT_EVENTS("total, pending", want, 4, 528, 3, 1);
	struct meminst_events got = cnt_events_since(h0, cnt_events(MEMINST_STATUS_THREADS, thr));
	CNT_EXPECT_EVENTS("thread, pending", got, 4, 528, 3, 1);
	got = cnt_events_since(c0, cnt_events(MEMINST_STATUS_CLASSES, cls));
	CNT_EXPECT_EVENTS("class, pending", got, 4, 528, 3, 1);
	got = cnt_events_since(b0, cnt_events(MEMINST_STATUS_TYPES, tb));
	CNT_EXPECT_EVENTS("realloc's type, pending", got, 1, 300, 0, 1);

	/* flushed many times over */
	for (int i = 0; i < 3000; i++)
		alloc_core_free(alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0), ut_site(70));
	alloc_core_free(keep, ut_site(71));
	want = cnt_events_since(t0, cnt_events(MEMINST_STATUS_TOTAL, 0));
	CNT_EXPECT_EVENTS("total", want, 3004, 528 + 3000 * 64, 3003, 1);
	got = cnt_events_since(h0, cnt_events(MEMINST_STATUS_THREADS, thr));
	CNT_EXPECT_EVENTS("thread", got, 3004, 528 + 3000 * 64, 3003, 1);
	got = cnt_events_since(c0, cnt_events(MEMINST_STATUS_CLASSES, cls));
	CNT_EXPECT_EVENTS("class", got, 3004, 528 + 3000 * 64, 3003, 1);
	got = cnt_events_since(a0, cnt_events(MEMINST_STATUS_TYPES, ta));
	CNT_EXPECT_EVENTS("type", got, 3003, 228 + 3000 * 64, 3003, 0);
	alloc_slots_flush_all(alloc_tls.thr);
	got = cnt_events_since(c0, cnt_events(MEMINST_STATUS_CLASSES, cls));
	CNT_EXPECT_EVENTS("class, all flushed", got, 3004, 528 + 3000 * 64, 3003, 1);
	got = cnt_events_since(h0, cnt_events(MEMINST_STATUS_THREADS, thr));
	CNT_EXPECT_EVENTS("thread, all flushed", got, 3004, 528 + 3000 * 64, 3003, 1);
}
