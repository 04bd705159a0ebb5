/*
** test_threads.c — unit tests of the counters with several threads
** (alloc/alloc_status.c, alloc/alloc_thread.c).
**
** Threads keep pending deltas in slots of their own, so these tests check
** that nothing is lost or doubled when threads allocate at once, exit with
** blocks live, and free each other's blocks (a block stays accounted to the
** thread that allocated it), that readers add the pending deltas of live
** threads, and that max_ever of the total stays within the documented
** bound of the true peak: T threads x 256 KiB (ALLOC_FLUSH_BYTES).  The
** workloads are phased with barriers so the true figures are known.
*/
#include "ut.h"

#include <pthread.h>

#define THR_T 4

ParameterizedTestParameters(threads, exact_after_join)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

ParameterizedTestParameters(threads, cross_thread_free)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

ParameterizedTestParameters(threads, max_ever_bound)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

/* What a worker did, for the checks in the main thread. */
struct thr_work {
	unsigned n;        /* blocks to allocate           */
	size_t size;       /* bytes each                   */
	void **blocks;     /* the blocks (n slots)         */
	uint32_t thread_no;
	pid_t tid;
	pthread_barrier_t *barrier;
};

static void thr_run(pthread_t *t, void *(*fn)(void *), struct thr_work *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, fn, &w[i]), 0);
}

static void thr_join(pthread_t *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
}

/* ------------------------------------------------------ allocate, free -- */

/* Allocate n blocks, free every other one, exit with the rest live. */
static void *thr_half(void *arg)
{
	struct thr_work *w = arg;
	for (unsigned i = 0; i < w->n; i++)
		w->blocks[i] = alloc_core_malloc(w->size, ALLOC_A_MALLOC, ut_site(80), 0);
	for (unsigned i = 0; i < w->n; i += 2)
		alloc_core_free(w->blocks[i], ut_site(80));
	w->thread_no = alloc_tls.thread_no;
	w->tid = alloc_sys_gettid();
	return NULL;
}

ParameterizedTest(int *mode, threads, exact_after_join)
{
	enum { N = 3000, S = 48 };
	static void *blocks[THR_T][N];
	struct thr_work w[THR_T];
	pthread_t t[THR_T];
	ut_start(ut_modes[*mode]);
	for (unsigned i = 0; i < THR_T; i++)
		w[i] = (struct thr_work){.n = N, .size = S, .blocks = blocks[i]};
	thr_run(t, thr_half, w, THR_T);
	thr_join(t, THR_T);

	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, THR_T * N / 2 * S, THR_T * N / 2);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC, THR_T * N / 2 * S, THR_T * N / 2);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(80)), THR_T * N / 2 * S,
		      THR_T * N / 2);
	cr_assert_leq(ut_peek(MEMINST_STATUS_TOTAL, 0).blocks.max_ever, THR_T * N);
	struct meminst_status_info all[THR_T + 2];
	cr_assert_eq(meminst_status_read(MEMINST_STATUS_THREADS, all, THR_T + 2), THR_T + 1);
	for (unsigned i = 0; i < THR_T; i++) {
		struct meminst_status_info *e = &all[w[i].thread_no];
		cr_assert_eq(e->tid, w[i].tid, "thread %u", w[i].thread_no);
		UT_EXPECT_COUNTER(e->sizes, N / 2 * S, N * S, N * S);
		UT_EXPECT_COUNTER(e->blocks, N / 2, N, N);
	}

	/* the main thread frees what the workers left: theirs, not its own */
	for (unsigned i = 0; i < THR_T; i++)
		for (unsigned j = 1; j < N; j += 2)
			alloc_core_free(blocks[i][j], ut_site(81));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	for (unsigned i = 0; i < THR_T; i++) {
		struct meminst_status_info e = ut_peek(MEMINST_STATUS_THREADS, w[i].thread_no);
		UT_EXPECT_COUNTER(e.sizes, 0, N / 2 * S, N * S);
	}
	struct meminst_status_info me = ut_peek(MEMINST_STATUS_THREADS, alloc_tls.thread_no);
	UT_EXPECT_COUNTER(me.blocks, 0, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
}

/* ------------------------------------------------------- cross-thread --- */

/*
** Three threads meet at four barriers: 1 A has allocated (main checks A's
** figures), 2 B may free, 3 B has freed (main checks, both threads alive),
** 4 all may go.
*/
static void *thr_owner(void *arg)
{
	struct thr_work *w = arg;
	for (unsigned i = 0; i < w->n; i++)
		w->blocks[i] = alloc_core_malloc(w->size, ALLOC_A_MALLOC, ut_site(82), 0);
	w->thread_no = alloc_tls.thread_no;
	for (int i = 0; i < 4; i++)
		pthread_barrier_wait(w->barrier);
	return NULL;
}

static void *thr_freer(void *arg)
{
	struct thr_work *w = arg;
	pthread_barrier_wait(w->barrier);
	pthread_barrier_wait(w->barrier);
	for (unsigned i = 0; i < w->n; i++)
		alloc_core_free(w->blocks[i], ut_site(83));
	w->thread_no = alloc_tls.thread_no;
	pthread_barrier_wait(w->barrier);
	pthread_barrier_wait(w->barrier);
	return NULL;
}

static void thr_expect_cross(const struct thr_work *w, unsigned n, size_t size)
{
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	struct meminst_status_info a = ut_peek(MEMINST_STATUS_THREADS, w[0].thread_no);
	struct meminst_status_info b = ut_peek(MEMINST_STATUS_THREADS, w[1].thread_no);
	UT_EXPECT_COUNTER(a.sizes, 0, n * size, n * size);
	UT_EXPECT_COUNTER(a.blocks, 0, n, n);
	UT_EXPECT_COUNTER(b.blocks, 0, 0, 0);
	UT_EXPECT_COUNTER(b.sizes, 0, 0, 0);
}

ParameterizedTest(int *mode, threads, cross_thread_free)
{
	enum { N = 700, S = 200 };
	static void *blocks[N];
	pthread_barrier_t barrier;
	struct thr_work w[3];
	pthread_t t[2];
	ut_start(ut_modes[*mode]);
	pthread_barrier_init(&barrier, NULL, 3);
	w[0] = (struct thr_work){.n = N, .size = S, .blocks = blocks, .barrier = &barrier};
	w[1] = w[0];
	cr_assert_eq(pthread_create(&t[0], NULL, thr_owner, &w[0]), 0);
	cr_assert_eq(pthread_create(&t[1], NULL, thr_freer, &w[1]), 0);
	pthread_barrier_wait(&barrier);
	UT_EXPECT_CUR(MEMINST_STATUS_THREADS, w[0].thread_no, N * S, N);
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	thr_expect_cross(w, N, S); /* both alive: their pending deltas count */
	pthread_barrier_wait(&barrier);
	thr_join(t, 2);
	thr_expect_cross(w, N, S); /* both gone: flushed at exit */
	pthread_barrier_destroy(&barrier);
}

/* ------------------------------------------------------------ the bound -- */

/* Two phases, each: allocate n blocks, barrier, free them, barrier.  The
** second phase allocates half as much, so the true peak of the total is
** reached at the first barrier: THR_T x n x size. */
static void *thr_phases(void *arg)
{
	struct thr_work *w = arg;
	for (unsigned phase = 0; phase < 2; phase++) {
		unsigned n = phase ? w->n / 2 : w->n;
		for (unsigned i = 0; i < n; i++)
			w->blocks[i] = alloc_core_malloc(w->size, ALLOC_A_MALLOC, ut_site(84), 0);
		pthread_barrier_wait(w->barrier);
		for (unsigned i = 0; i < n; i++)
			alloc_core_free(w->blocks[i], ut_site(84));
		pthread_barrier_wait(w->barrier);
	}
	w->thread_no = alloc_tls.thread_no;
	return NULL;
}

ParameterizedTest(int *mode, threads, max_ever_bound)
{
	enum { N = 100, S = 10000 };
	static void *blocks[THR_T][N];
	const int64_t peak = (int64_t)THR_T * N * S, slack = THR_T * 256 * 1024;
	pthread_barrier_t barrier;
	struct thr_work w[THR_T];
	pthread_t t[THR_T];
	ut_start(ut_modes[*mode]);
	pthread_barrier_init(&barrier, NULL, THR_T);
	for (unsigned i = 0; i < THR_T; i++)
		w[i] = (struct thr_work){.n = N, .size = S, .blocks = blocks[i], .barrier = &barrier};
	thr_run(t, thr_phases, w, THR_T);
	thr_join(t, THR_T);
	pthread_barrier_destroy(&barrier);

	struct meminst_status_info e = ut_read(MEMINST_STATUS_TOTAL, 0);
	int64_t ever = (int64_t)e.sizes.max_ever;
	cr_assert_eq(e.sizes.current, 0);
	cr_assert_eq(e.blocks.current, 0);
	cr_assert_geq(ever, peak - slack, "max_ever %lld, true peak %lld", (long long)ever, (long long)peak);
	cr_assert_leq(ever, peak + slack, "max_ever %lld, true peak %lld", (long long)ever, (long long)peak);
	cr_assert_geq(e.blocks.max_ever, THR_T * N - THR_T * 1024 > 0 ? THR_T * N - THR_T * 1024 : 0);
	cr_assert_leq(e.blocks.max_ever, THR_T * N + THR_T * 1024);
	/* one writer per thread entry: exact */
	struct meminst_status_info all[THR_T + 1];
	cr_assert_eq(meminst_status_read(MEMINST_STATUS_THREADS, all, THR_T + 1), THR_T + 1);
	for (unsigned i = 0; i < THR_T; i++) {
		UT_EXPECT_COUNTER(all[w[i].thread_no].sizes, 0, N * S, N * S);
		UT_EXPECT_COUNTER(all[w[i].thread_no].blocks, 0, N, N);
	}
}
