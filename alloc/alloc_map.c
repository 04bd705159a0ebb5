/*
** alloc_map.c — mim mode: the map of every live block.
**
** Live blocks are kept in lists, one per thread, each a bitmap of the heap:
** a bit for each 16 bytes, set where the header of one of the list's live
** blocks starts, with the block's list number written in its header
** (alloc_mhdr_t.at).  The thread that allocates a block sets its bit in its
** own list, without the lock while the list is biased to it (see
** alloc_int.h: until another thread frees one of its blocks) and under its
** own lock after that, so two threads meet only when one frees a block of
** the other.  Freeing clears the bit after checking that it is set: a
** forged or overwritten header (one that names a list without the block,
** or a block freed already) makes the process stop before anything is
** written.
**
** The bits come in leaves of a page (32 bytes for 4 KiB of heap, and its
** page number), kept in the order they were made and found by page number
** through the list's directory, a table of 4-byte leaf numbers with open
** addressing; the leaf used last is remembered, so that a block freed or
** made near the last one needs no look-up.  A free touches the block's header and a place
** in the map 1/128 of the heap's size (about 1/12 with an array of
** pointers, whose random entry missed the last-level cache from about a
** million blocks on, bench/RESULTS.md), and a walk of the map gives each
** leaf's blocks in address order.  Leaves are not taken out when they
** empty (a page's only block freed and made again would make and drop one
** each time): the directory is rebuilt without its empty leaves when it
** fills up, and smaller when the list's count falls to an eighth.  Its
** cost is 40 bytes a page of heap that holds a block of the list and 5 to
** 16 bytes of directory, per list: threads whose blocks share pages each
** pay for the page.  (A directory whose entries were the leaves, with room
** for up to four times the pages, took 640 kB for the 8,400 pages of
** bench/launcher_rss.sh's C++ map, a hash touching every page of its
** table; 400 kB now.)
**
** When a thread exits its list is handed over (alloc_map_list_handover):
** a few blocks move to the orphan list, number 0, which also takes the
** blocks of threads without a list; more stay where they are, in a list
** without an owner, which goes to a pool of empty lists once its last
** block is freed.  Lists live in a table that grows and is never unmapped,
** so a lock found through a header stays a lock; their directories are
** mappings of their own.
**
** The core adds a block and counts it while holding the list (its lock,
** or `busy` when biased), so whoever holds every list (alloc_map_stop)
** sees blocks and counters that agree (snapshots rely on that).
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

/* The directory and leaves of a list without any: every entry names
** leaves[0] (no page), and there is no room (a look-up makes the first). */
static uint32_t map_dir_none[1];
static alloc_leaf_t map_leaves_none[1];

alloc_list_t alloc_map_orphans = {.dir = map_dir_none, .leaves = map_leaves_none};
_Atomic uint64_t alloc_seq_reserved;
bool alloc_map_bias;

/* The set lock: taken to hand out a list number, and by a capture or a
** fork to hold the set of lists still. */
static _Atomic int map_set_lock;
_Atomic uint32_t alloc_map_nlists_;
static _Atomic uint32_t map_pool;   /* the first empty list without owner; 0: none */

/* (entry 0 is unused: the orphans are static) */
alloc_table_t alloc_map_lists = ALLOC_TABLE("block lists", alloc_list_t, 1u << 20, ALLOC_MAP_CHUNK);

#define MAP_DIR_MIN 64            /* entries (the first mapping: 2.2 KiB) */
#define MAP_DIR_MAX (1ull << 32)  /* entries, with a 32-bit mask */
#define MAP_SHRINK_MIN 4096       /* smaller directories are never rebuilt smaller */
#define MAP_LOW_NEVER 0           /* a count no list falls below */
/* An exiting thread's blocks move to the orphans when there are no more
** than this (each move writes the block's header); more stay in place. */
#define MAP_MERGE_MAX 4096

/* A thread whose reserved allocation numbers ran out, or without a
** record: the inline half is alloc_seq_take (alloc_int.h). */
uint64_t alloc_seq_take_slow(alloc_thread_t *t)
{
	if (unlikely(!t))
		return atomic_fetch_add_explicit(&alloc_seq_reserved, 1, memory_order_relaxed);
	t->seq_next = atomic_fetch_add_explicit(&alloc_seq_reserved, ALLOC_SEQ_BATCH, memory_order_relaxed);
	t->seq_end = t->seq_next + ALLOC_SEQ_BATCH;
	return t->seq_next++;
}

_Atomic int alloc_map_capturing;

/* One turn of a wait on a list: spin a little, then yield (the holder may
** have been preempted), adopting a raw clone's child now and then (a
** holder copied in its parent is never coming back: alloc_clone_yield). */
static void map_spin_turn(unsigned spins)
{
	if (spins > 64)
		alloc_clone_yield(spins);
	else
		__builtin_ia32_pause();
}

/*
** A program thread (not guarded: not the capturing one, nor meminst's own)
** found its lock held by a snapshot's capture.  The wait is meminst's, not
** the program's: in a trace it is a pause of the <snapshot> pseudo
** function, kept out of <alloc> and its callers' times, as the capturing
** thread's own pause is.  Returns once the capture let go or the lock is
** free; the caller then takes it as usual.
*/
static ALLOC_NOINLINE void map_wait_capture(_Atomic int *lock)
{
	uint64_t begin = trace_suspend_begin();
	for (unsigned spins = 0; atomic_load_explicit(&alloc_map_capturing, memory_order_acquire) &&
				 atomic_load_explicit(lock, memory_order_relaxed);
	     spins++)
		map_spin_turn(spins);
	trace_suspend_end(begin, MEMINST_TSUSPEND_SNAPSHOT);
}

/* Contended: test-and-test-and-set, spinning on a plain read, yielding
** when it lasts (the holder may have been preempted). */
void alloc_spin_lock_slow(_Atomic int *lock)
{
	if (atomic_load_explicit(&alloc_map_capturing, memory_order_relaxed) && !alloc_tls.guard)
		map_wait_capture(lock);
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(lock, 1, memory_order_acquire))
			return;
		map_spin_turn(spins);
	}
}

/* A block's header names a list whose map does not hold it: the heap in
** front of the block was overwritten (or written back over a block freed
** already).  Nothing has been written yet; stop here, as glibc does on a
** corrupted list, with one line (no allocation). */
void alloc_map_corrupt(const alloc_mhdr_t *m)
{
	alloc_log("free of %p: the block's list in the map was overwritten (heap corruption "
		  "in front of the block); aborting", (const void *)(m + 1));
	abort();
}

/* The entry for `page` in a directory of mask + 1 entries: its own or
** the empty one where it would go. */
static uint32_t *map_dir_slot(uint32_t *dir, const alloc_leaf_t *leaves, uint32_t mask, uint64_t page)
{
	for (uint32_t i = alloc_map_hash(page) & mask;; i = (i + 1) & mask)
		if (!dir[i] || leaves[dir[i]].page == page)
			return &dir[i];
}

/* A directory of n entries and the leaves it may name, three quarters of
** n and leaves[0], are one mapping: only the leaves made are touched. */
static uint32_t map_dir_room(uint32_t mask) { return (uint32_t)(((uint64_t)mask + 1) / 4 * 3); }
static size_t map_dir_bytes(uint32_t mask)
{
	return ((size_t)mask + 1) * sizeof(uint32_t) + ((size_t)map_dir_room(mask) + 1) * sizeof(alloc_leaf_t);
}

static bool map_leaf_empty(const alloc_leaf_t *e)
{
	uint64_t any = 0;
	for (unsigned w = 0; w < ALLOC_LEAF_WORDS; w++)
		any |= e->bits[w];
	return !any;
}

/*
** A new directory for the list's leaves that are not empty, with room for
** `more` leaves at most half full: full, or the list's count fell to its
** `low`.  The caller holds the list.  False when it cannot be mapped (the
** old one stays).
*/
static bool map_dir_rebuild(alloc_list_t *l, size_t more)
{
	static _Atomic int warned;
	size_t used = more;
	for (uint32_t e = 1; e <= l->nleaves; e++)
		used += !map_leaf_empty(&l->leaves[e]);
	size_t n = MAP_DIR_MIN;
	while (n < 2 * used && n < MAP_DIR_MAX)
		n *= 2;
	uint32_t mask = (uint32_t)(n - 1), kept = 0;
	int saved_errno = errno;
	uint32_t *dir = n < 2 * used ? NULL : alloc_sys_map(map_dir_bytes(mask));
	errno = saved_errno;
	if (!dir) {
		if (more && !atomic_exchange(&warned, 1))
			alloc_log("cannot map room for more live blocks in the map; further blocks "
				  "are not counted and not in snapshots");
		l->low = MAP_LOW_NEVER;
		return false;
	}
	alloc_leaf_t *leaves = (alloc_leaf_t *)(dir + n);
	for (uint32_t e = 1; e <= l->nleaves; e++)
		if (!map_leaf_empty(&l->leaves[e])) {
			leaves[++kept] = l->leaves[e];
			*map_dir_slot(dir, leaves, mask, leaves[kept].page) = kept;
		}
	/* a raw clone's child may copy the map between these stores (see
	** alloc_snapshot.c): whatever it sees, no count or mask says more
	** than the leaves or directory it is seen with hold, and no entry of
	** a directory names a leaf past the leaves seen with it (the old
	** ones go last: the new directory names no more than they hold) */
	uint32_t *old = l->dir, old_mask = l->dir_mask;
	__atomic_store_n(&l->nleaves, kept, __ATOMIC_RELEASE);
	if (mask < old_mask)
		__atomic_store_n(&l->dir_mask, mask, __ATOMIC_RELEASE);
	__atomic_store_n(&l->dir, dir, __ATOMIC_RELEASE);
	__atomic_store_n(&l->dir_mask, mask, __ATOMIC_RELEASE);
	__atomic_store_n(&l->leaves, leaves, __ATOMIC_RELEASE);
	if (old != map_dir_none)
		alloc_sys_unmap(old, map_dir_bytes(old_mask));
	l->last_base = 0; /* (its bits have moved) */
	l->low = n >= MAP_SHRINK_MIN ? l->count / 8 : MAP_LOW_NEVER;
	return true;
}

uint64_t *alloc_map_leaf_find(alloc_list_t *l, uintptr_t page, bool make)
{
	uint32_t *slot = map_dir_slot(l->dir, l->leaves, l->dir_mask, page);
	if (!*slot) {
		if (!make)
			return NULL;
		/* at most three quarters full, so that a look-up stays short */
		if (l->nleaves + 1 > map_dir_room(l->dir_mask) && !map_dir_rebuild(l, 1))
			return NULL;
		slot = map_dir_slot(l->dir, l->leaves, l->dir_mask, page);
		uint32_t e = l->nleaves + 1;
		l->leaves[e].page = page;
		*slot = e;
		__atomic_store_n(&l->nleaves, e, __ATOMIC_RELEASE); /* (its page first) */
	}
	alloc_leaf_t *e = &l->leaves[*slot];
	l->last_base = page << ALLOC_LEAF_SHIFT;
	l->last_bits = e->bits;
	return e->bits;
}

/* The list's count fell below an eighth of what it was when its directory
** was made: a smaller one, without the leaves emptied since.  The caller
** holds it. */
void alloc_map_low(alloc_list_t *l)
{
	map_dir_rebuild(l, 0);
}

/* The owner of a held list has left its fast path (alloc_int.h, biased
** lists): the caller has raised `stop` and fenced every thread.  (In a
** child of a raw clone an owner copied inside it never leaves: the
** adoption clears `busy`, alloc_map_postfork_child.) */
static void map_wait_owner(alloc_list_t *l)
{
	for (unsigned spins = 0; atomic_load_explicit(&l->busy, memory_order_acquire); spins++)
		map_spin_turn(spins);
}

/* Another thread than the owner holds the list: the first time, the
** owner's bias goes for good (one membarrier in the list's life). */
static void map_unbias(alloc_list_t *l)
{
	if (likely(atomic_load_explicit(&l->stop, memory_order_relaxed) & ALLOC_LIST_SHARED))
		return;
	atomic_fetch_or(&l->stop, ALLOC_LIST_SHARED);
	alloc_thread_fence_all();
	map_wait_owner(l);
}

/*
** Lock the list that holds a block (a free from another thread, or from
** a thread without a list).  The block may be moved to the orphans while
** we wait for the lock (its owner exits): so once held, the header must
** still name the list.  The header is read again only under the lock, so
** the `at` returned is the one to unlink with.
*/
alloc_list_t *alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at)
{
	for (;;) {
		uint64_t a = __atomic_load_n(&m->at, __ATOMIC_RELAXED);
		alloc_list_t *l = alloc_map_list(alloc_at_list(a));
		if (!l)
			return NULL;
		alloc_list_lock(l);
		map_unbias(l);
		if (likely(__atomic_load_n(&m->at, __ATOMIC_RELAXED) == a)) {
			*at = a;
			return l;
		}
		alloc_list_unlock(l);
	}
}

/* An empty list whose thread has gone joins the pool.  Taken off only
** under the set lock, one at a time, so a push can be a plain
** compare-and-swap (no list comes back to the head while a pop looks). */
static void map_pool_push(alloc_list_t *l)
{
	if (l->pooled)
		return;
	l->pooled = 1;
	uint32_t head = atomic_load_explicit(&map_pool, memory_order_relaxed);
	do
		l->pool_next = head;
	while (!atomic_compare_exchange_weak_explicit(&map_pool, &head, l->id, memory_order_release,
						      memory_order_relaxed));
}

/* Let go of a list locked by alloc_map_lock_block, pooling it if that
** free emptied the list of an exited thread. */
void alloc_map_unlock_other(alloc_list_t *l)
{
	if (unlikely(l->count == 0 && l->owner == 0 && l->id != 0))
		map_pool_push(l);
	alloc_list_unlock(l);
}

/* The orphans; from alloc_init, before the first block. */
void alloc_map_init(void)
{
	alloc_map_orphans.low = MAP_LOW_NEVER;
	/* threads without a list of their own share the orphans */
	atomic_store(&alloc_map_orphans.stop, ALLOC_LIST_SHARED);
	atomic_store(&alloc_map_nlists_, 1);
}

/* A list for a new thread: an empty one from the pool, or a new number.
** NULL when the table of lists cannot grow (the thread then uses the
** orphans). */
alloc_list_t *alloc_map_list_new(uint32_t thread_no)
{
	alloc_list_t *l = NULL;
	alloc_spin_lock(&map_set_lock);
	uint32_t id = atomic_load_explicit(&map_pool, memory_order_acquire);
	while (id) {
		l = alloc_table_at(&alloc_map_lists, id);
		if (atomic_compare_exchange_weak_explicit(&map_pool, &id, l->pool_next, memory_order_acquire,
							  memory_order_acquire))
			break;
		l = NULL;
	}
	if (!l) {
		id = atomic_load_explicit(&alloc_map_nlists_, memory_order_relaxed);
		if (alloc_table_ensure(&alloc_map_lists, id)) {
			l = alloc_table_at(&alloc_map_lists, id);
			l->id = id;
			l->low = MAP_LOW_NEVER;
			l->dir = map_dir_none;
			l->leaves = map_leaves_none;
			atomic_store_explicit(&alloc_map_nlists_, id + 1, memory_order_release);
		}
	}
	alloc_spin_unlock(&map_set_lock);
	if (l) {
		alloc_list_lock(l);
		l->pooled = 0;
		l->owner = thread_no ? thread_no : ALLOC_THREAD_MAX;
		/* biased to its new owner (no one frees into an empty list;
		** a stale racing free takes the lock and revokes it) */
		atomic_store_explicit(&l->stop, alloc_map_bias ? 0 : ALLOC_LIST_SHARED, memory_order_relaxed);
		alloc_list_unlock(l);
	}
	return l;
}

/* Move the blocks of a leaf of `l` to the orphans, each header's list
** rewritten (what alloc_map_lock_block checks against); false when the
** orphans' directory cannot grow (the rest stay). */
static bool map_merge_leaf(alloc_list_t *l, alloc_leaf_t *e)
{
	ALLOC_LEAF_FOR_EACH(e, m) {
		if (!alloc_map_link(&alloc_map_orphans, m, m->seq))
			return false;
		alloc_map_clear(e->bits, ((uintptr_t)m >> 4) & (ALLOC_LEAF_BLOCKS - 1));
		alloc_map_count_add(l, -1);
	}
	return true;
}

/*
** A thread is leaving (or, in a fork child, does not exist): its blocks
** must stay in snapshots and stay freeable.  Up to MAP_MERGE_MAX of them
** move to the orphans, under both locks; more stay in place, the list
** without owner.  An empty list joins the pool.  The caller makes sure no
** signal handler of this thread runs meanwhile (it would find the lists
** held).
*/
void alloc_map_list_handover(alloc_list_t *l)
{
	alloc_list_t *o = &alloc_map_orphans;
	if (l == o || !l->owner)
		return;
	alloc_list_lock(o); /* lock order: the orphans first */
	alloc_list_lock(l);
	if (l->count <= MAP_MERGE_MAX)
		for (uint32_t e = 1; l->count && e <= l->nleaves && map_merge_leaf(l, &l->leaves[e]); e++)
			;
	l->owner = 0;
	if (l->count == 0)
		map_pool_push(l);
	alloc_list_unlock(l);
	alloc_list_unlock(o);
}

/* Take the set lock and every list, in order (capture, fork), and keep
** the owners of biased lists out of their fast paths. */
void alloc_map_stop(void)
{
	alloc_spin_lock(&map_set_lock);
	uint32_t n = alloc_map_nlists();
	for (uint32_t id = 0; id < n; id++) {
		alloc_list_t *l = alloc_map_list(id);
		alloc_list_lock(l);
		atomic_fetch_or_explicit(&l->stop, ALLOC_LIST_HELD, memory_order_relaxed);
	}
	if (n > 1) { /* the orphans are never biased */
		alloc_thread_fence_all();
		for (uint32_t id = 1; id < n; id++)
			map_wait_owner(alloc_map_list(id));
	}
}

void alloc_map_unbias_all(void)
{
	/* before the set lock: a list made from now on starts shared, and one
	** made before is among those taken below (its bias is set under its
	** lock, which the loop waits for) */
	__atomic_store_n(&alloc_map_bias, false, __ATOMIC_SEQ_CST);
	alloc_map_stop(); /* the owners out of their fast paths, by membarrier */
	for (uint32_t id = 0, n = alloc_map_nlists(); id < n; id++)
		atomic_fetch_or(&alloc_map_list(id)->stop, ALLOC_LIST_SHARED);
	alloc_map_resume();
}

void alloc_map_resume(void)
{
	for (uint32_t id = 0, n = alloc_map_nlists(); id < n; id++) {
		alloc_list_t *l = alloc_map_list(id);
		atomic_fetch_and_explicit(&l->stop, ~(uint32_t)ALLOC_LIST_HELD, memory_order_relaxed);
		alloc_list_unlock(l);
	}
	alloc_spin_unlock(&map_set_lock);
}

size_t alloc_map_count_stopped(void)
{
	size_t n = 0;
	for (uint32_t id = 0, nl = alloc_map_nlists(); id < nl; id++)
		n += alloc_map_list(id)->count;
	return n;
}

/* The number of live blocks in the map, or (ownerless) of those in lists
** without an owner thread: the orphans and exited threads' lists.  Takes
** each list in turn. */
static size_t map_count(bool ownerless)
{
	size_t n = 0;
	alloc_spin_lock(&map_set_lock);
	for (uint32_t id = 0, nl = alloc_map_nlists(); id < nl; id++) {
		alloc_list_t *l = alloc_map_list(id);
		alloc_list_lock(l);
		if (!ownerless || !l->owner) /* (a biased owner may be changing it) */
			n += __atomic_load_n(&l->count, __ATOMIC_RELAXED);
		alloc_list_unlock(l);
	}
	alloc_spin_unlock(&map_set_lock);
	return n;
}

size_t alloc_map_count(void) { return map_count(false); }
size_t alloc_map_count_ownerless(void) { return map_count(true); }

/* In a fork child: the locks taken by the prepare handler (alloc_map_stop)
** are released the same way; the lists of threads that did not follow are
** handed over by the caller. */
void alloc_map_postfork_child(void)
{
	/* an owner that did not follow may have been between raising `busy`
	** and seeing `stop` */
	for (uint32_t id = 0, n = alloc_map_nlists(); id < n; id++)
		atomic_store_explicit(&alloc_map_list(id)->busy, 0, memory_order_relaxed);
	alloc_map_resume();
}

/* ---------------------------------- the orphans' path, its signals --- */

/* A thread without a record lets go of a list lock (alloc_core.c,
** core_link_orphan): the frees a signal handler put aside meanwhile are
** made now; a new signal may put more aside while they are. */
void alloc_orphan_leave(void)
{
	alloc_tls_t *tls = &alloc_tls;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&tls->orphan_busy, 0, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t n;
	while ((n = atomic_load_explicit(&tls->orphan_ndeferred, memory_order_relaxed)) != 0) {
		void *user = tls->orphan_deferred[n - 1];
		if (atomic_compare_exchange_strong(&tls->orphan_ndeferred, &n, n - 1))
			alloc_core_free(user, 0);
	}
}

/* A handler's free while the thread it interrupted holds a list lock.  Past
** the room kept in TLS the block stays as it is, counted live and never
** given back (said once), where a thread with a record would abort. */
void alloc_orphan_defer(void *user)
{
	alloc_tls_t *tls = &alloc_tls;
	uint32_t n = atomic_load_explicit(&tls->orphan_ndeferred, memory_order_relaxed);
	uint32_t room = sizeof tls->orphan_deferred / sizeof tls->orphan_deferred[0];
	if (n >= room) {
		static _Atomic int said;
		if (!atomic_exchange(&said, 1))
			alloc_log("free of %p from a signal handler in an exiting thread: more than %u such "
				  "frees pending; the block is kept (counted live)", user, room);
		return;
	}
	tls->orphan_deferred[n] = user;
	atomic_store_explicit(&tls->orphan_ndeferred, n + 1, memory_order_relaxed);
}
