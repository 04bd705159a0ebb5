/*
** test_orphans.c — mim, a signal handler that allocates and frees while a
** thread without a record holds a list lock (alloc/alloc_core.c,
** core_link_orphan).
**
** A thread that has lost its record (a later key's destructor runs after
** meminst's) counts its blocks directly and keeps them on the orphans'
** list.  A handler arriving while it holds the orphans' lock, or the lock
** of a block's list, would spin for ever on that lock if it took the same
** way: its allocation must be served untracked and its frees of tracked
** blocks (here the orphans' own) put aside until the interrupted code lets
** go.  The locks' holders
** are reached through the map's own calls, wrapped at link time
** (-Wl,--wrap=alloc_map_leaf_find,--wrap=alloc_map_lock_block): each raises
** SIGUSR1 once, armed, under the lock.  A wait that never ends is a test
** that fails (alarm).
*/
#include "ut.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static const char *const orphans_modes[] = {
	"mim",
#ifdef HAVE_JEMALLOC
	"mim,backend=jemalloc",
#endif
};

static _Atomic int raise_armed; /* the next wrapped call of a thread without a record raises */
static void *victim[2];         /* the orphans' blocks the handler frees */
static _Atomic int handled;     /* handlers run */
static _Atomic int raised_in[2]; /* 0: the orphans' leaf look-up, 1: a block's list held */
static _Atomic int late_ran;

static void raise_if_armed(int where)
{
	if (alloc_tls.thr == NULL && atomic_exchange(&raise_armed, 0)) {
		atomic_fetch_add(&raised_in[where], 1);
		raise(SIGUSR1);
	}
}

/* Called with the orphans' lock held when the orphans' list needs a leaf
** (core_link_orphan: alloc_map_link). */
uint64_t *__real_alloc_map_leaf_find(alloc_list_t *l, uintptr_t page, bool make);
uint64_t *__wrap_alloc_map_leaf_find(alloc_list_t *l, uintptr_t page, bool make);
uint64_t *__wrap_alloc_map_leaf_find(alloc_list_t *l, uintptr_t page, bool make)
{
	if (l == &alloc_map_orphans && make)
		raise_if_armed(0);
	return __real_alloc_map_leaf_find(l, page, make);
}

/* Returns with the block's list held (core_untrack_mim of a thread without
** a record). */
alloc_list_t *__real_alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at);
alloc_list_t *__wrap_alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at);
alloc_list_t *__wrap_alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at)
{
	alloc_list_t *l = __real_alloc_map_lock_block(m, at);
	if (l)
		raise_if_armed(1);
	return l;
}

static void on_usr1(int sig)
{
	(void)sig;
	alloc_core_free_mim(alloc_core_malloc_mim(40, ALLOC_A_MALLOC, ut_site(60)), ut_site(61));
	int n = atomic_fetch_add(&handled, 1);
	if (n < 2)
		alloc_core_free_mim(victim[n], ut_site(61));
}

/* A later key's destructor: the thread has no record any more. */
static void late_destructor(void *arg)
{
	(void)arg;
	if (alloc_tls.thr != NULL)
		return;
	atomic_store(&late_ran, 1);
	atomic_store(&raise_armed, 1);
	/* a page the orphans have no leaf for yet (a mapping of its own) */
	void *b = alloc_core_malloc_mim(1 << 20, ALLOC_A_MALLOC, ut_site(62));
	atomic_store(&raise_armed, 1);
	alloc_core_free_mim(b, ut_site(63)); /* the orphans' lock, through the header */
}

static pthread_key_t late_key;

static void *exiting_thread(void *arg)
{
	(void)arg;
	/* its record, and two blocks that go to the orphans when it loses it */
	victim[0] = alloc_core_malloc_mim(200, ALLOC_A_MALLOC, ut_site(66));
	victim[1] = alloc_core_malloc_mim(300, ALLOC_A_MALLOC, ut_site(66));
	pthread_setspecific(late_key, &late_key);
	return NULL;
}

ParameterizedTestParameters(orphans, handler_under_an_exiting_threads_lock)
{
	static int idx[] = {0, 1};
	return cr_make_param_array(int, idx, sizeof orphans_modes / sizeof orphans_modes[0]);
}

ParameterizedTest(int *mode, orphans, handler_under_an_exiting_threads_lock)
{
	ut_start(orphans_modes[*mode]);
	struct sigaction sa = {.sa_handler = on_usr1};
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	alarm(60); /* a handler spinning on the lock its thread holds */
	/* after meminst's key: its destructor runs after meminst's */
	cr_assert_eq(pthread_key_create(&late_key, late_destructor), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, exiting_thread, NULL), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(atomic_load(&late_ran), 1, "the late destructor ran without a record");
	cr_assert_eq(atomic_load(&raised_in[0]), 1, "raised under the orphans' lock (link)");
	cr_assert_eq(atomic_load(&raised_in[1]), 1, "raised under a list's lock (free)");
	cr_assert_eq(atomic_load(&handled), 2);
	/* the orphans' two blocks freed once the thread let go (the handler
	** would have waited for the lock the thread held), the handler's
	** blocks never counted, the late block counted in and out */
	cr_assert_eq(alloc_map_count(), 0);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	alarm(0);
}
