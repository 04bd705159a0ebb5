/*
** alloc_map.c — mim mode: the map of every live block.
**
** Live blocks are kept on intrusive doubly linked lists (the first 16
** bytes of the mim header), one list per thread: the thread that
** allocated a block links it into its own list, under its own lock, so two
** threads meet on a lock only when one frees a block of the other.  A
** block's owner is the thread number in its header; `list_of` maps thread
** numbers to lists.  When a thread exits its list is handed over to the
** orphan list (alloc_map_list_handover), which also holds the blocks of
** threads without a list of their own.
**
** A list lives in its thread's record (alloc_thread_t), which is pooled and
** never unmapped, and every list ever made is on one chain, so a capture
** or a fork can take every list lock without asking the thread registry
** (whose lock comes later in the lock order).
**
** The core links a block and updates its counters while holding the
** list's lock, so whoever holds every list lock sees blocks and counters
** that agree (snapshots rely on that).
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <sched.h>
#include <stdlib.h>

alloc_list_t alloc_map_orphans;
_Atomic uint64_t alloc_seq_reserved;

/* The chain of every list (the orphans first), and the set lock that a
** new list takes to join it and a capture holds to keep it still. */
static _Atomic int map_set_lock;
static alloc_list_t *_Atomic map_chain_last;

/* Thread number -> its list; NULL (or no chunk) means the orphan list
** (thread 0, the overflow number, exited threads).  Written under the
** list's lock; grows as threads adopt lists. */
typedef alloc_list_t *_Atomic map_list_ptr;
static alloc_table_t map_lists = ALLOC_TABLE("thread lists", map_list_ptr, ALLOC_THREAD_MAX + 1, 12);

#define MAP_SEQ_BATCH 4096

/*
** The next allocation number for a block.  Threads reserve numbers in
** batches so that the hot path touches no shared counter; the order
** between threads is therefore right to within a batch.
*/
uint64_t alloc_seq_take(alloc_thread_t *t)
{
	if (unlikely(!t))
		return atomic_fetch_add_explicit(&alloc_seq_reserved, 1, memory_order_relaxed);
	if (unlikely(t->seq_next == t->seq_end)) {
		t->seq_next = atomic_fetch_add_explicit(&alloc_seq_reserved, MAP_SEQ_BATCH,
							memory_order_relaxed);
		t->seq_end = t->seq_next + MAP_SEQ_BATCH;
	}
	return t->seq_next++;
}

_Atomic int alloc_map_capturing;

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
	     spins++) {
		if (spins > 64)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
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
		if (spins > 64)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

/* A block's list links do not match its neighbours: the heap in front of
** the block was overwritten.  Nothing has been written yet; stop here, as
** glibc does on a corrupted list, with one line (no allocation). */
void alloc_map_corrupt(const alloc_mhdr_t *m)
{
	alloc_log("free of %p: the block's list links were overwritten (heap corruption "
		  "in front of the block); aborting", (const void *)(m + 1));
	abort();
}

static void map_list_init(alloc_list_t *l)
{
	for (unsigned w = 0; w < ALLOC_LIST_WAYS; w++)
		l->head[w].next = l->head[w].prev = (uintptr_t)&l->head[w];
}

static alloc_list_t *map_list_of(uint32_t thread_no)
{
	map_list_ptr *p = alloc_table_at(&map_lists, thread_no);
	alloc_list_t *l = p ? atomic_load_explicit(p, memory_order_acquire) : NULL;
	return l ? l : &alloc_map_orphans;
}

/*
** Lock the list that holds the blocks of thread `owner` (a free from
** another thread, or from a thread without a record).  The owner may hand
** its list over while we wait for the lock, and its record may then serve
** a new thread: so once held, the list must still be the owner's.
*/
alloc_list_t *alloc_map_lock_owner(uint32_t owner)
{
	for (;;) {
		alloc_list_t *l = map_list_of(owner);
		alloc_list_lock(l);
		if (likely(map_list_of(owner) == l))
			return l;
		alloc_list_unlock(l);
	}
}

/* The orphan list and the chain; from alloc_init, before the first block. */
void alloc_map_init(void)
{
	map_list_init(&alloc_map_orphans);
	atomic_store(&map_chain_last, &alloc_map_orphans);
}

/*
** Make `l` the list of thread `thread_no`.  A list seen for the first time
** (a fresh record, zeroed) is set up and joins the chain; a reused one is
** empty and on the chain already.  Threads past the number limit share
** the orphan list.  Returns 0, or -1 for the overflow number or when the
** table of lists cannot grow (the caller then links into the orphans).
*/
int alloc_map_list_adopt(alloc_list_t *l, uint32_t thread_no)
{
	if (thread_no == 0 || thread_no >= ALLOC_THREAD_MAX || !alloc_table_ensure(&map_lists, thread_no))
		return -1;
	if (!l->head[0].next) {
		map_list_init(l);
		alloc_spin_lock(&map_set_lock); /* a capture may be walking the chain */
		alloc_list_t *last = atomic_load(&map_chain_last);
		last->all_next = l;
		atomic_store(&map_chain_last, l);
		alloc_spin_unlock(&map_set_lock);
	}
	alloc_list_lock(l);
	l->owner = thread_no;
	atomic_store_explicit((map_list_ptr *)alloc_table_at(&map_lists, thread_no), l,
			      memory_order_release);
	alloc_list_unlock(l);
	return 0;
}

/*
** A thread is leaving (or, in a fork child, does not exist): move its
** blocks to the orphan list and point its number there, so that they stay
** in snapshots and can still be freed.  Each way's chain is spliced in
** whole.  The caller makes sure no signal handler of this thread runs
** meanwhile (it would find the lists held).
*/
void alloc_map_list_handover(alloc_list_t *l)
{
	alloc_list_t *o = &alloc_map_orphans;
	if (l == o || !l->owner)
		return;
	alloc_list_lock(o); /* lock order: the orphans first */
	alloc_list_lock(l);
	for (unsigned w = 0; w < ALLOC_LIST_WAYS; w++) {
		alloc_mhdr_t *h = &l->head[w], *first = alloc_link(h->next), *last = alloc_link(h->prev);
		if (first == h)
			continue;
		alloc_mhdr_t *oh = &o->head[w], *ofirst = alloc_link(oh->next);
		alloc_link_set(&last->next, ofirst);
		alloc_link_set(&ofirst->prev, last);
		alloc_link_set(&first->prev, oh);
		alloc_link_set(&oh->next, first);
		h->next = h->prev = (uintptr_t)h;
	}
	o->count += l->count;
	l->count = 0;
	atomic_store_explicit((map_list_ptr *)alloc_table_at(&map_lists, l->owner), NULL,
			      memory_order_release);
	l->owner = 0;
	alloc_list_unlock(l);
	alloc_list_unlock(o);
}

alloc_list_t *alloc_map_first(void)
{
	return &alloc_map_orphans;
}

/* Take the set lock and every list, in chain order (capture, fork). */
void alloc_map_stop(void)
{
	alloc_spin_lock(&map_set_lock);
	for (alloc_list_t *l = alloc_map_first(); l; l = alloc_map_next(l))
		alloc_list_lock(l);
}

void alloc_map_resume(void)
{
	for (alloc_list_t *l = alloc_map_first(); l; l = alloc_map_next(l))
		alloc_list_unlock(l);
	alloc_spin_unlock(&map_set_lock);
}

size_t alloc_map_count_stopped(void)
{
	size_t n = 0;
	for (alloc_list_t *l = alloc_map_first(); l; l = alloc_map_next(l))
		n += l->count;
	return n;
}

/* The number of live blocks in the map (takes each list in turn). */
size_t alloc_map_count(void)
{
	size_t n = 0;
	alloc_spin_lock(&map_set_lock);
	for (alloc_list_t *l = alloc_map_first(); l; l = alloc_map_next(l)) {
		alloc_list_lock(l);
		n += l->count;
		alloc_list_unlock(l);
	}
	alloc_spin_unlock(&map_set_lock);
	return n;
}

/* In a fork child: the locks taken by the prepare handler (alloc_map_stop)
** are released the same way; the lists of threads that did not follow are
** handed over by the caller. */
void alloc_map_postfork_child(void)
{
	alloc_map_resume();
}
