/*
** alloc_map.c — mim mode: the map of every live block.
**
** Live blocks are kept on intrusive doubly linked lists (the first 16
** bytes of the mim header).  The lists are sharded by block address, so
** the shard of a block is known from its pointer alone and two threads
** rarely meet on one lock.  Each shard is a small spin lock and a list
** head on a cache line of its own.
**
** The core links a block and updates its counters while holding the
** shard's lock, so whoever holds every shard lock sees blocks and counters
** that agree (snapshots rely on that).
*/
#include "alloc_int.h"

#include <sched.h>
#include <stdlib.h>

alloc_shard_t alloc_map_shards[ALLOC_MAP_SHARDS];
_Atomic uint64_t alloc_seq_reserved;

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

/* Contended: test-and-test-and-set, spinning on a plain read, yielding
** when it lasts (the holder may have been preempted). */
void alloc_map_lock_slow(alloc_shard_t *s)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(&s->lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
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

/* The number of live blocks in the map (takes each shard in turn). */
size_t alloc_map_count(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < ALLOC_MAP_SHARDS; i++) {
		alloc_map_lock(&alloc_map_shards[i]);
		n += alloc_map_shards[i].count;
		alloc_map_unlock(&alloc_map_shards[i]);
	}
	return n;
}

void alloc_map_prefork(void)
{
	for (unsigned i = 0; i < ALLOC_MAP_SHARDS; i++)
		alloc_map_lock(&alloc_map_shards[i]);
}

void alloc_map_postfork_parent(void)
{
	for (unsigned i = ALLOC_MAP_SHARDS; i-- > 0;)
		alloc_map_unlock(&alloc_map_shards[i]);
}

void alloc_map_postfork_child(void)
{
	alloc_map_postfork_parent();
}
