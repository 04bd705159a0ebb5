/*
** alloc_ring.h — deferred counting: the hot paths (alloc_fast.c) count a
** block in the thread's total slot at once (its high mark and the peak
** trigger need the running value) and leave the block's meta word, size
** word and address in the thread's ring for the other four slots, the
** events, the histogram and the temporary test.  alloc_ring.c replays the
** records in order into the slots with the code the general path counts
** with, so every running value and high mark comes out as if counted at
** once.  A record is what the hot path has in registers already: a free's
** meta word has ALLOC_META_FREED (it is the header's new meta), a
** malloc's has not.  The ring has ALLOC_FLUSH_BLOCKS records: every count
** takes at least ALLOC_FLUSH_BLOCK_COST from the flush budget, so the
** budget runs out (and alloc_slots_flush_budget replays) before the ring
** can fill, and the hot path has no test of its own for a full ring.
*/
#ifndef ALLOC_RING_H
#define ALLOC_RING_H

#include "alloc_int.h"

/* One record more, with `counting` raised (a signal handler finds it
** raised and does not count). */
static inline __attribute__((always_inline)) void alloc_ring_put(alloc_thread_t *t, uint64_t meta,
								 uint64_t sizew, const void *user)
{
	uint32_t n = t->ring_n;
	alloc_ring_rec_t *r = &t->ring[n];
	r->meta = meta;
	r->sizew = sizew;
	r->user = user;
	t->ring_n = n + 1;
}

#endif /* ALLOC_RING_H */
