/*
** test_lists.c — unit tests of mim's per-thread lists of live blocks
** (alloc/alloc_map.c, the hand-over in alloc/alloc_thread.c).
**
** A block lives on its owner's list; a free from another thread takes the
** owner's lock; an exiting thread hands its list to the orphans and its
** record is reused by a later thread.  Through all of it a capture must see
** every live block exactly once, with the status agreeing, and frees of
** any thread's blocks must find them.  (The blocks of an exiting thread
** with more than alloc_map.c's MAP_MERGE_MAX stay in its list, without
** owner: exit_with_many_blocks.)
*/
#include "ut.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "meminst-snapshot.h"

static const char *const lists_modes[] = {
	"mim",
#ifdef HAVE_JEMALLOC
	"mim,backend=jemalloc",
#endif
};

ParameterizedTestParameters(lists, handover_and_capture)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, exit_with_many_blocks)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, fork_child_sees_every_block)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, cross_free_while_owners_exit)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, threads_sharing_pages)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, spill_write_fails)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTestParameters(lists, escapes_then_wide)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

#define LST_T 4
#define LST_N 2000

struct lst_work {
	unsigned n;
	size_t size;
	void **blocks;
	uint32_t thread_no;
	pthread_barrier_t *hold; /* if set: wait twice before exiting */
};

static void *lst_alloc_half(void *arg)
{
	struct lst_work *w = arg;
	for (unsigned i = 0; i < w->n; i++)
		w->blocks[i] = alloc_core_malloc(w->size, ALLOC_A_MALLOC, ut_site(90), 0);
	for (unsigned i = 0; i < w->n; i += 2)
		alloc_core_free(w->blocks[i], ut_site(90));
	w->thread_no = alloc_tls.thread_no;
	if (w->hold) {
		pthread_barrier_wait(w->hold);
		pthread_barrier_wait(w->hold);
	}
	return NULL;
}

/*
** The exit snapshot's compact capture (alloc_snap_compact.c) of the same
** map: the chunks are what the 32-byte records `rec` (sorted) encode to,
** byte for byte (every field of every block, in address order), and each
** chunk's addresses read back.
*/
static void lst_expect_compact(alloc_snap_t *rec)
{
	int check = alloc_opts.leak_check;
	alloc_opts.leak_check = ALLOC_LEAK_CHECK_OFF; /* the scan: tests/integration/leaks*.sh */
	alloc_snap_t *im = alloc_snap_capture(true, "exit");
	alloc_opts.leak_check = check;
	cr_assert_not_null(im);
	cr_assert(im->compact && !im->recs);
	cr_assert_eq(im->nblocks, rec->nblocks);
	cr_assert_eq(im->bytes, rec->bytes);
	size_t i = 0;
	unsigned char want[MEMINST_SNAPSHOT_CHUNK * MEMINST_SNAPSHOT_BLOCK_MAX_BYTES];
	for (const alloc_snap_chunk_t *c = NULL; (c = alloc_snap_chunk_next(im, c));) {
		cr_assert(c->count >= 1 && c->count <= MEMINST_SNAPSHOT_CHUNK && i + c->count <= rec->nblocks);
		cr_assert(alloc_snap_window(rec, i, c->count), "a spilled capture's blocks from %zu", i);
		alloc_snap_rec_t r;
		alloc_snap_rec_at(rec, i, &r);
		cr_assert_eq(c->first, r.addr);
		struct meminst_snapshot_block prev = {.addr = c->first};
		unsigned char *p = want;
		for (uint32_t j = 0; j < c->count; j++) {
			alloc_snap_rec_at(rec, i + j, &r);
			struct meminst_snapshot_block b = {r.addr, r.size, r.type, r.thread, r.allocator, r.seq};
			p = meminst_snapshot_put_block(p, &prev, &b);
		}
		cr_assert_eq(c->len, (uint32_t)(p - want), "chunk at block %zu", i);
		cr_assert(!memcmp(c + 1, want, c->len), "chunk at block %zu", i);
		alloc_snap_cursor_t cur;
		alloc_snap_chunk_start(c, &cur);
		for (uint32_t j = 0; j < c->count; j++) {
			alloc_snap_rec_at(rec, i + j, &r);
			cr_assert_eq(alloc_snap_chunk_addr(&cur), r.addr);
		}
		i += c->count;
	}
	cr_assert_eq(i, rec->nblocks);
	alloc_snap_free(im);
}

/* Runs of the spilled captures below: chunks (1024) and runs end apart. */
#define LST_RUN (MEMINST_SNAPSHOT_CHUNK + 7)

/*
** A capture to a database in a directory of its own (dir, 64 bytes),
** spilled in runs of LST_RUN records when it has more
** (alloc_snap_spill.c); NULL with errno.
*/
static alloc_snap_t *lst_capture_spilled(char *dir)
{
	char db[80];
	strcpy(dir, "/tmp/lst-spill-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	size_t run = alloc_snap_spill_run;
	snprintf(db, sizeof db, "%s/s.db", dir);
	alloc_snap_spill_run = LST_RUN;
	alloc_snap_t *im = alloc_snap_capture_to(true, "api", db);
	int e = errno;
	alloc_snap_spill_run = run;
	errno = e;
	return im;
}

/* Capture (in memory, then spilled), and check that the blocks are exactly
** `want` (n of them) and that the status total agrees with them. */
static void lst_expect_capture(void *const *want, size_t n)
{
	void **sorted = malloc(n * sizeof *sorted);
	memcpy(sorted, want, n * sizeof *sorted);
	for (size_t i = 1; i < n; i++) /* insertion sort: n is small */
		for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			void *x = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = x;
		}
	for (int spilled = 0; spilled < 2; spilled++) {
		char dir[64];
		alloc_snap_t *im = spilled ? lst_capture_spilled(dir) : alloc_snap_capture(true, "api");
		cr_assert_not_null(im);
		cr_assert_eq(im->nblocks, n, "captured %zu blocks, %zu live", im->nblocks, n);
		if (spilled && !im->wide) { /* at most a run held, the others in the file */
			cr_assert_eq(im->spill_runs, n > LST_RUN ? (n + LST_RUN - 1) / LST_RUN : 0);
			cr_assert_leq(im->blocks_bytes, (ALLOC_SNAP_SORT_COUNTS * sizeof(size_t) +
							 LST_RUN * sizeof(alloc_snap_rec16_t) + 4095) & ~(size_t)4095);
		}
		cr_assert(alloc_snap_sort_unique(im));
		cr_assert_eq(im->nblocks, n, "a block captured twice");
		uint64_t bytes = 0;
		for (size_t i = 0; i < n; i++) {
			alloc_snap_rec_t r;
			cr_assert(alloc_snap_window(im, i, 1), "block %zu", i);
			alloc_snap_rec_at(im, i, &r);
			cr_assert_eq(r.addr, (uintptr_t)sorted[i], "block %zu", i);
			bytes += r.size;
		}
		cr_assert_eq(im->bytes, bytes);
		cr_assert_eq(im->status[ALLOC_K_TOTAL][0].sizes.current, bytes);
		cr_assert_eq(im->status[ALLOC_K_TOTAL][0].blocks.current, n);
		lst_expect_compact(im); /* from block 0 again: the merge starts over */
		alloc_snap_free(im);
		if (spilled)
			cr_assert_eq(rmdir(dir), 0, "the temporary file was unlinked");
	}
	free(sorted);
}

/*
** The spilled capture's file cannot be written (here: past ulimit -f, as
** a full disk): the capture fails with EIO and one line, SIGXFSZ does not
** kill the program, nothing is left allocated; with the limit lifted the
** next capture is whole.
*/
ParameterizedTest(int *mode, lists, spill_write_fails)
{
	enum { N = 3 * LST_RUN + 5 };
	static void *live[N];
	ut_start(lists_modes[*mode]);
	for (unsigned i = 0; i < N; i++)
		live[i] = alloc_core_malloc(16 + i % 200, ALLOC_A_MALLOC, ut_site(96), 0);
	struct rlimit old, small;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = (struct rlimit){.rlim_cur = 2 * LST_RUN * sizeof(alloc_snap_rec16_t) - 4096, .rlim_max = old.rlim_max};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	char dir[64];
	alloc_snap_t *im = lst_capture_spilled(dir);
	int e = errno;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_assert_null(im, "a capture whose second run could not be written");
	cr_assert_eq(e, EIO);
	cr_assert_eq(rmdir(dir), 0, "the temporary file was unlinked");
	sigset_t pending;
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert(!sigismember(&pending, SIGXFSZ), "our write's SIGXFSZ taken back");
	cr_assert_eq(alloc_map_count(), N, "the program's blocks untouched");
	lst_expect_capture(live, N);
	for (unsigned i = 0; i < N; i++)
		alloc_core_free(live[i], ut_site(96));
	cr_assert_eq(alloc_map_count(), 0);
}

ParameterizedTest(int *mode, lists, handover_and_capture)
{
	static void *blocks[LST_T + 1][LST_N];
	static void *live[(LST_T + 1) * LST_N];
	struct lst_work w[LST_T + 1];
	pthread_t t[LST_T + 1];
	pthread_barrier_t hold;
	size_t n = 0;
	ut_start(lists_modes[*mode]);

	/* four threads exit with half their blocks live: all on the orphans */
	for (unsigned i = 0; i < LST_T; i++) {
		w[i] = (struct lst_work){.n = LST_N, .size = 16 * (i + 1), .blocks = blocks[i]};
		cr_assert_eq(pthread_create(&t[i], NULL, lst_alloc_half, &w[i]), 0);
	}
	for (unsigned i = 0; i < LST_T; i++)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	for (unsigned i = 0; i < LST_T; i++)
		for (unsigned j = 1; j < LST_N; j += 2)
			live[n++] = blocks[i][j];
	cr_assert_eq(alloc_map_count(), n);
	cr_assert_eq(alloc_map_orphans.count, n, "the exited threads' lists were handed over");
	lst_expect_capture(live, n);

	/* a fifth thread (on a reused record) stays alive with blocks of its own */
	pthread_barrier_init(&hold, NULL, 2);
	w[LST_T] = (struct lst_work){.n = LST_N, .size = 40, .blocks = blocks[LST_T], .hold = &hold};
	cr_assert_eq(pthread_create(&t[LST_T], NULL, lst_alloc_half, &w[LST_T]), 0);
	pthread_barrier_wait(&hold);
	for (unsigned j = 1; j < LST_N; j += 2)
		live[n++] = blocks[LST_T][j];
	lst_expect_capture(live, n);

	/* main frees the orphans' blocks and, cross-thread, the live thread's */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (i % 3)
			alloc_core_free(live[i], ut_site(91));
		else
			live[kept++] = live[i];
	lst_expect_capture(live, kept);
	pthread_barrier_wait(&hold);
	cr_assert_eq(pthread_join(t[LST_T], NULL), 0);
	cr_assert_eq(alloc_map_orphans.count, kept);
	lst_expect_capture(live, kept);
	for (size_t i = 0; i < kept; i++)
		alloc_core_free(live[i], ut_site(91));
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	pthread_barrier_destroy(&hold);
}

/*
** Blocks of 1 MiB and more do not fit the 16-byte records: a few of them
** are escapes (their full records aside), and more than the escapes' room
** (room / 16 + 256) make the capture go wide (32-byte records).  Either
** way the blocks and their fields are what the compact capture reads from
** the headers (lst_expect_capture), byte for byte.
*/
ParameterizedTest(int *mode, lists, escapes_then_wide)
{
	enum { SMALL = 3000, BIG = 600 };
	static void *live[SMALL + 15 + BIG];
	size_t n = 0;
	ut_start(lists_modes[*mode]);
	for (unsigned i = 0; i < SMALL; i++)
		live[n++] = alloc_core_malloc(24 + i % 64, ALLOC_A_MALLOC, ut_site(97), 0);
	for (unsigned i = 1; i < 16; i++) /* fit: sizes use the 20 bits below the address */
		live[n++] = alloc_core_malloc(65536 * i - 8 * i, ALLOC_A_MALLOC, ut_site(99), 0);
	for (unsigned i = 0; i < 10; i++)
		live[n++] = alloc_core_malloc((1u << 20) + 8 * i, ALLOC_A_MALLOC, ut_site(98), 0);
	alloc_snap_t *im = alloc_snap_capture(true, "api");
	cr_assert(im && !im->wide && im->nesc == 10, "10 escapes, %zu", im ? im->nesc : 0);
	alloc_snap_free(im);
	lst_expect_capture(live, n);
	for (; n < SMALL + 15 + BIG; n++)
		live[n] = alloc_core_malloc((1u << 20) + 16 * n, ALLOC_A_MALLOC, ut_site(98), 0);
	im = alloc_snap_capture(true, "api");
	cr_assert(im && im->wide, "%d escapes in room for %zu: wide", BIG, im ? im->esc_room : 0);
	alloc_snap_free(im);
	lst_expect_capture(live, n);
	for (size_t i = 0; i < n; i++)
		alloc_core_free(live[i], ut_site(97));
	cr_assert_eq(alloc_map_count(), 0);
}

/*
** A thread that exits with more blocks than are moved to the orphans
** leaves its list in place, without owner: its blocks stay in captures
** and are freed through it from any thread; once empty, the list goes to
** the pool and the next thread gets it (no new list number).
*/
ParameterizedTest(int *mode, lists, exit_with_many_blocks)
{
	enum { MANY = 3 * 4096, FEW = 100 };
	static void *many[MANY], *few[FEW], *live[MANY + FEW];
	struct lst_work w = {.n = MANY, .size = 24, .blocks = many};
	struct lst_work v = {.n = FEW, .size = 8, .blocks = few};
	pthread_t t;
	size_t n = 0;
	ut_start(lists_modes[*mode]);
	cr_assert_eq(pthread_create(&t, NULL, lst_alloc_half, &w), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(pthread_create(&t, NULL, lst_alloc_half, &v), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (unsigned j = 1; j < MANY; j += 2)
		live[n++] = many[j];
	for (unsigned j = 1; j < FEW; j += 2)
		live[n++] = few[j];
	cr_assert_eq(alloc_map_count(), n);
	cr_assert_eq(alloc_map_count_ownerless(), n, "both exited threads' blocks are without owner");
	cr_assert_eq(alloc_map_orphans.count, FEW / 2, "only the few moved to the orphans");
	lst_expect_capture(live, n);

	/* free the many from main, every other one first: the list's last
	** entries move into the holes, and the blocks stay findable */
	for (unsigned j = 0; j < MANY / 2; j += 2)
		alloc_core_free(live[j], ut_site(91));
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (i >= MANY / 2 || i % 2)
			live[kept++] = live[i];
	lst_expect_capture(live, kept);
	for (size_t i = 0; i < kept; i++)
		if (i < MANY / 4)
			alloc_core_free(live[i], ut_site(91));
	cr_assert_eq(alloc_map_count(), FEW / 2);
	uint32_t nlists = alloc_map_nlists();
	w = (struct lst_work){.n = 10, .size = 8, .blocks = many};
	cr_assert_eq(pthread_create(&t, NULL, lst_alloc_half, &w), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(alloc_map_nlists(), nlists, "the emptied list was not reused");
	cr_assert_eq(alloc_map_count(), FEW / 2 + 5);
	for (unsigned j = 1; j < 10; j += 2)
		alloc_core_free(many[j], ut_site(91));
	for (unsigned j = 1; j < FEW; j += 2)
		alloc_core_free(few[j], ut_site(91));
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/*
** fork while another thread holds many blocks: in the child that thread
** does not exist, its list is handed over (kept, without owner: more than
** are moved to the orphans), and a capture still sees every block once,
** agreeing with the status; the child frees them all through the list.
** The child reports by exit status (1: a count, 2: the capture, 3: after
** freeing).
*/
static int lst_child_check(void *const *blocks, size_t nmany, size_t nall)
{
	if (alloc_map_count() != nall || alloc_map_count_ownerless() != nmany)
		return 1;
	alloc_snap_t *im = alloc_snap_capture(true, "api");
	bool ok = im && im->nblocks == nall &&
		  im->status[ALLOC_K_TOTAL][0].sizes.current == im->bytes &&
		  im->status[ALLOC_K_TOTAL][0].blocks.current == nall;
	if (im)
		alloc_snap_free(im);
	if (!ok)
		return 2;
	for (size_t i = 0; i < nmany; i++)
		alloc_core_free(blocks[i], ut_site(91));
	return alloc_map_count() == nall - nmany && ut_peek(MEMINST_STATUS_TOTAL, 0).blocks.current == nall - nmany
		       ? 0 : 3;
}

ParameterizedTest(int *mode, lists, fork_child_sees_every_block)
{
	enum { MANY = 3 * 4096, FEW = 10 };
	static void *many[MANY], *live[MANY / 2], *few[FEW];
	pthread_barrier_t hold;
	pthread_t t;
	ut_start(lists_modes[*mode]);
	pthread_barrier_init(&hold, NULL, 2);
	struct lst_work w = {.n = MANY, .size = 24, .blocks = many, .hold = &hold};
	cr_assert_eq(pthread_create(&t, NULL, lst_alloc_half, &w), 0);
	pthread_barrier_wait(&hold);
	for (unsigned i = 0; i < FEW; i++)
		few[i] = alloc_core_malloc(100, ALLOC_A_MALLOC, ut_site(94), 0);
	for (unsigned j = 1; j < MANY; j += 2)
		live[j / 2] = many[j];
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(lst_child_check(live, MANY / 2, MANY / 2 + FEW));
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	pthread_barrier_wait(&hold);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(alloc_map_count(), MANY / 2 + FEW, "the parent's blocks left as they were");
	for (unsigned j = 0; j < MANY / 2; j++)
		alloc_core_free(live[j], ut_site(91));
	for (unsigned i = 0; i < FEW; i++)
		alloc_core_free(few[i], ut_site(94));
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	pthread_barrier_destroy(&hold);
}

/* ----------------------------------------- frees racing the hand-over --- */

/*
** Generations of short-lived producers put blocks into a shared ring; two
** long-lived consumers free them as they come, so frees of a producer's
** blocks race with its exit (the hand-over) and with the reuse of its
** record by the next generation.  Nothing may be lost, doubled or left.
*/
#define RING 4096
static struct lst_ring {
	pthread_mutex_t lock;
	void *slot[RING];
	unsigned head, tail;
	unsigned producers_left;
} ring = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *lst_producer(void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < n;) {
		void *p = alloc_core_malloc(24 + i % 200, ALLOC_A_MALLOC, ut_site(92), 0);
		pthread_mutex_lock(&ring.lock);
		if (ring.head - ring.tail < RING) {
			ring.slot[ring.head++ % RING] = p;
			i++;
			p = NULL;
		}
		pthread_mutex_unlock(&ring.lock);
		if (p) /* ring full: free it here, make another */
			alloc_core_free(p, ut_site(92));
	}
	pthread_mutex_lock(&ring.lock);
	ring.producers_left--;
	pthread_mutex_unlock(&ring.lock);
	return NULL;
}

/* arg non-NULL: frees through the fast entry (alloc_fast.c: another
** thread's list, or the orphans' once the producer exited), else through
** the general path; the test runs one consumer of each. */
static void *lst_consumer(void *arg)
{
	void (*release)(void *, uintptr_t) = arg ? alloc_core_free_mim : alloc_core_free;
	for (;;) {
		void *p = NULL;
		bool done;
		pthread_mutex_lock(&ring.lock);
		if (ring.tail != ring.head)
			p = ring.slot[ring.tail++ % RING];
		done = !p && !ring.producers_left;
		pthread_mutex_unlock(&ring.lock);
		if (done)
			return NULL;
		if (p)
			release(p, ut_site(93));
		else
			sched_yield();
	}
}

ParameterizedTest(int *mode, lists, cross_free_while_owners_exit)
{
	enum { GEN = 12, PER_GEN = 3, N = 3000 };
	pthread_t cons[2], prod[PER_GEN];
	ut_start(lists_modes[*mode]);
	ring.producers_left = GEN * PER_GEN;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&cons[i], NULL, lst_consumer, i ? &ring : NULL), 0);
	for (int g = 0; g < GEN; g++) {
		for (int i = 0; i < PER_GEN; i++)
			cr_assert_eq(pthread_create(&prod[i], NULL, lst_producer, (void *)(uintptr_t)N), 0);
		for (int i = 0; i < PER_GEN; i++)
			cr_assert_eq(pthread_join(prod[i], NULL), 0);
	}
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_join(cons[i], NULL), 0);
	cr_assert_eq(ring.head, GEN * PER_GEN * N);
	cr_assert_eq(ring.tail, ring.head);
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(92)), 0, 0);
}

/* ------------------------------------ biased lists, revoked in flight --- */

/*
** A list is biased to its owner (alloc_int.h): the owner's fast path works
** on it without its lock until another thread frees one of its blocks.
** Generations of two owners churn through the fast entry points; every so
** often each hands one of its live blocks to the other, which frees it
** (revoking the bias while its owner churns), and a third thread captures
** all along: every capture must hold exactly as many blocks and bytes as
** the status says are live, and nothing may be left at the end.
*/
#define BIAS_LIVE 256
#define BIAS_STEPS 20000
static struct bias_hand {
	pthread_mutex_t lock;
	void *slot[64];
	unsigned n;
} bias_hand = {.lock = PTHREAD_MUTEX_INITIALIZER};
static _Atomic int bias_stop;
static _Atomic unsigned bias_captures;

static void *bias_owner(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull | 1;
	void *live[BIAS_LIVE] = {0};
	for (unsigned i = 0; i < BIAS_STEPS; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		void **p = &live[rng % BIAS_LIVE];
		if (*p)
			alloc_core_free_mim(*p, ut_site(95));
		*p = alloc_core_malloc_mim(16 + (rng >> 32) % 500, ALLOC_A_MALLOC, ut_site(95));
		cr_assert_not_null(*p);
		if (i % 2000 == 1999) { /* hand one over, free one handed over */
			void *mine = *p, *theirs = NULL;
			*p = NULL;
			pthread_mutex_lock(&bias_hand.lock);
			if (bias_hand.n)
				theirs = bias_hand.slot[--bias_hand.n];
			if (bias_hand.n < 64)
				bias_hand.slot[bias_hand.n++] = mine, mine = NULL;
			pthread_mutex_unlock(&bias_hand.lock);
			if (theirs)
				alloc_core_free_mim(theirs, ut_site(96));
			if (mine)
				alloc_core_free_mim(mine, ut_site(96));
		}
	}
	for (unsigned i = 0; i < BIAS_LIVE; i++)
		if (live[i])
			alloc_core_free_mim(live[i], ut_site(95));
	return NULL;
}

static void *bias_capturer(void *arg)
{
	(void)arg;
	while (!atomic_load(&bias_stop)) {
		alloc_snap_t *im = alloc_snap_capture(true, "api");
		cr_assert_not_null(im);
		uint64_t bytes = 0;
		for (size_t i = 0; i < im->nblocks; i++) {
			alloc_snap_rec_t r;
			alloc_snap_rec_at(im, i, &r);
			bytes += r.size;
		}
		cr_assert_eq(im->status[ALLOC_K_TOTAL][0].blocks.current, im->nblocks,
			     "a capture's blocks and status differ");
		cr_assert_eq(im->status[ALLOC_K_TOTAL][0].sizes.current, bytes);
		alloc_snap_free(im);
		atomic_fetch_add(&bias_captures, 1);
	}
	return NULL;
}

ParameterizedTestParameters(lists, bias_revoked_while_owners_churn)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof lists_modes / sizeof lists_modes[0]);
}

ParameterizedTest(int *mode, lists, bias_revoked_while_owners_churn)
{
	enum { GEN = 6 };
	pthread_t cap, own[2];
	ut_start(lists_modes[*mode]);
	cr_assert_eq(pthread_create(&cap, NULL, bias_capturer, NULL), 0);
	for (int g = 0; g < GEN; g++) {
		for (int i = 0; i < 2; i++)
			cr_assert_eq(pthread_create(&own[i], NULL, bias_owner, (void *)(uintptr_t)(2 * g + i + 1)), 0);
		for (int i = 0; i < 2; i++)
			cr_assert_eq(pthread_join(own[i], NULL), 0);
	}
	atomic_store(&bias_stop, 1);
	cr_assert_eq(pthread_join(cap, NULL), 0);
	cr_assert_gt(atomic_load(&bias_captures), 0);
	for (unsigned i = 0; i < bias_hand.n; i++)
		alloc_core_free_mim(bias_hand.slot[i], ut_site(96));
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/*
** The two waits of the protocol, one at a time: with its owner inside its
** fast path (`busy` raised by hand), another thread's free of one of its
** blocks and a capture must both wait until the owner is out; the free
** leaves the list shared for good.  (Under load the other thread may not
** have run yet when its progress is looked at: that can only hide a
** failure, never make one up.)
*/
struct bias_other {
	void *block;        /* to free; NULL: capture */
	_Atomic int done;
};

static void *bias_other_run(void *arg)
{
	struct bias_other *o = arg;
	if (o->block) {
		alloc_core_free_mim(o->block, ut_site(97));
	} else {
		alloc_snap_t *im = alloc_snap_capture(true, "api");
		cr_assert_not_null(im);
		alloc_snap_free(im);
	}
	atomic_store(&o->done, 1);
	return NULL;
}

static void bias_wait_while_busy(alloc_list_t *l, void *block)
{
	struct bias_other o = {.block = block};
	pthread_t th;
	atomic_store(&l->busy, 1);
	cr_assert_eq(pthread_create(&th, NULL, bias_other_run, &o), 0);
	for (int i = 0; i < 50 && !atomic_load(&o.done); i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&o.done), 0, "another thread went in while the owner was inside");
	atomic_store(&l->busy, 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&o.done), 1);
}

Test(lists, bias_waits_for_the_owner)
{
	ut_start("mim");
	void *a = alloc_core_malloc_mim(40, ALLOC_A_MALLOC, ut_site(97));
	void *b = alloc_core_malloc_mim(50, ALLOC_A_MALLOC, ut_site(97));
	alloc_thread_t *t = alloc_tls.thr;
	cr_assert_not_null(t);
	alloc_list_t *l = t->own_list;
	cr_assert_neq(l, &alloc_map_orphans);
	cr_assert_eq(atomic_load(&l->stop), 0, "a new thread's list is biased to it");
	bias_wait_while_busy(l, NULL);
	cr_assert_eq(atomic_load(&l->stop), 0, "a capture leaves the bias in place");
	bias_wait_while_busy(l, a);
	cr_assert_eq(atomic_load(&l->stop), ALLOC_LIST_SHARED, "a free from another thread revokes it");
	cr_assert_eq(alloc_map_count(), 1);
	alloc_core_free_mim(b, ut_site(97)); /* through the lock now */
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

/* ------------------------------------------------ lists sharing pages --- */

/*
** Each list is a bitmap of the heap (alloc_map.c): threads whose blocks
** share pages each have a leaf for the page.  Threads of one arena
** (glibc's M_ARENA_MAX=1) allocate in turns, so that their blocks
** interleave in the same pages; each frees some of its own blocks and
** some of the next thread's, half of them exit (their blocks go to the
** orphans, whose leaves share the pages too), and every capture must be
** exactly the blocks the test kept: none lost, none twice.  Then blocks of
** 3000 bytes grow the main thread's directory to thousands of leaves, and
** freeing most of them through the general path rebuilds it smaller.
*/
#define PG_T 6
#define PG_N 1500
static struct {
	pthread_mutex_t lock;
	pthread_cond_t turn_cv;
	unsigned turn;
	pthread_barrier_t step, hold; /* all threads and main; the staying ones and main */
	void *blocks[PG_T][PG_N];
} pg = {.lock = PTHREAD_MUTEX_INITIALIZER, .turn_cv = PTHREAD_COND_INITIALIZER};

static void *pg_thread(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	void **own = pg.blocks[me], **next = pg.blocks[(me + 1) % PG_T];
	for (unsigned i = 0; i < PG_N; i++) {
		pthread_mutex_lock(&pg.lock);
		while (pg.turn % PG_T != me)
			pthread_cond_wait(&pg.turn_cv, &pg.lock);
		own[i] = alloc_core_malloc(16 + (i * 7 + me) % 64, ALLOC_A_MALLOC, ut_site(100), 0);
		pg.turn++;
		pthread_cond_broadcast(&pg.turn_cv);
		pthread_mutex_unlock(&pg.lock);
	}
	pthread_barrier_wait(&pg.step);
	/* the fast entry and the general path, own blocks and the next's */
	for (unsigned i = 0; i < PG_N; i += 3) {
		(i % 2 ? alloc_core_free : alloc_core_free_mim)(own[i], ut_site(100));
		(i % 2 ? alloc_core_free_mim : alloc_core_free)(next[i + 1], ut_site(100));
		own[i] = next[i + 1] = NULL;
	}
	pthread_barrier_wait(&pg.step);
	if (me % 2 == 0) /* the others exit now: their lists handed over */
		pthread_barrier_wait(&pg.hold);
	return NULL;
}

static size_t pg_live(void **live)
{
	size_t n = 0;
	for (unsigned t = 0; t < PG_T; t++)
		for (unsigned i = 0; i < PG_N; i++)
			if (pg.blocks[t][i])
				live[n++] = pg.blocks[t][i];
	return n;
}

ParameterizedTest(int *mode, lists, threads_sharing_pages)
{
	enum { BIG = 2400 };
	static void *live[PG_T * PG_N + BIG], *big[BIG];
	pthread_t t[PG_T];
	mallopt(M_ARENA_MAX, 1);
	ut_start(lists_modes[*mode]);
	pthread_barrier_init(&pg.step, NULL, PG_T + 1);
	pthread_barrier_init(&pg.hold, NULL, PG_T / 2 + 1);
	for (unsigned i = 0; i < PG_T; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, pg_thread, (void *)(uintptr_t)i), 0);
	pthread_barrier_wait(&pg.step);
	size_t shared = 0; /* turns in which two threads' blocks share a page */
	for (unsigned i = 0; i < PG_N; i++)
		for (unsigned a = 0, b; a < PG_T; a++)
			for (b = a + 1; b < PG_T; b++)
				shared += (uintptr_t)pg.blocks[a][i] >> 12 == (uintptr_t)pg.blocks[b][i] >> 12;
	cr_assert(*mode || shared > PG_N, "threads shared a page %zu times", shared);
	pthread_barrier_wait(&pg.step);
	for (unsigned i = 1; i < PG_T; i += 2)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	lst_expect_capture(live, pg_live(live));
	pthread_barrier_wait(&pg.hold);
	for (unsigned i = 0; i < PG_T; i += 2)
		cr_assert_eq(pthread_join(t[i], NULL), 0);
	size_t n = pg_live(live);
	lst_expect_capture(live, n);

	for (unsigned i = 0; i < BIG; i++)
		big[i] = alloc_core_malloc(3000, ALLOC_A_MALLOC, ut_site(101), 0);
	alloc_list_t *l = alloc_map_list(alloc_at_list(((alloc_mhdr_t *)big[0] - 1)->at));
	uint32_t mask = l->dir_mask;
	cr_assert_geq(mask + 1, 4096, "a directory of %u entries", mask + 1);
	for (unsigned i = 0; i < BIG; i++)
		if (i % 16)
			alloc_core_free(big[i], ut_site(101));
		else
			live[n++] = big[i];
	cr_assert_lt(l->dir_mask, mask, "rebuilt smaller");
	lst_expect_capture(live, n);
	for (size_t i = 0; i < n; i++)
		alloc_core_free(live[i], ut_site(101));
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	pthread_barrier_destroy(&pg.step);
	pthread_barrier_destroy(&pg.hold);
}
