/*
** alloc_count.h — the hot half of counting, inline, for alloc_core.c only:
** a block in or out of the calling thread's five slots (total, allocator,
** class, type, thread).  The cold half (flushing, reading) is
** alloc_status.c; the slot layout and the flush budget are in alloc_int.h.
*/
#ifndef ALLOC_COUNT_H
#define ALLOC_COUNT_H

#include "alloc_int.h"

static inline alloc_slot_t *core_slot(alloc_thread_t *t, unsigned idx, uint32_t key)
{
	alloc_slot_t *s = &t->slots[idx];
	if (unlikely(s->key != key))
		alloc_slot_retarget(t, idx, key);
	return s;
}

/* One more block in a slot (`one` is alloc_slot_pack(size, 1)): one add,
** and the high marks rise if passed. */
static inline __attribute__((always_inline)) void core_slot_add(alloc_slot_t *s, int64_t one)
{
	int64_t d;
#if defined(__x86_64__)
	/* an add to memory, then the sum read back: two instructions where a
	** load, an add and a store were three (one writer, as for the
	** subtract below) */
	__asm__("addq %2, %0\n\tmovq %0, %1" : "+m"(s->d), "=r"(d) : "r"(one));
#else
	d = s->d + one;
	__atomic_store_n(&s->d, d, __ATOMIC_RELAXED);
#endif
	if (d > s->hi)
		__atomic_store_n(&s->hi, d, __ATOMIC_RELAXED);
	/* the blocks compared in 16 bits (the flush budget keeps a slot's
	** change within +-1,024 blocks): one compare to memory, where the
	** sign extension of hi_blocks made it two instructions and a load */
	int16_t blocks = (int16_t)alloc_slot_blocks(d);
	if (blocks > s->hi_blocks)
		__atomic_store_n(&s->hi_blocks, blocks, __ATOMIC_RELAXED);
}

/* One block fewer: maxima cannot move.  Only the thread itself writes its
** slots; readers in other threads load d whole, and so does a signal
** handler of the thread: one subtract to memory (not locked: one writer)
** is all three need, where the relaxed atomic store makes gcc load,
** subtract and store. */
static inline __attribute__((always_inline)) void core_slot_sub(alloc_slot_t *s, int64_t one)
{
#if defined(__x86_64__)
	__asm__("subq %1, %0" : "+m"(s->d) : "r"(one));
#else
	__atomic_store_n(&s->d, s->d - one, __ATOMIC_RELAXED);
#endif
}

/*
** The events of a block counted in (`one_in` is alloc_slot_pack(size, 1)):
** a call and its bytes in the allocator's and the type's slots, the size
** in the type's histogram, and the block as the thread's last (for
** temporaries).  One add to memory a slot, as core_slot_add.  The total's,
** class's and thread's events are not counted here: each is a sum of the
** thread's types' (a thread counts events of its own blocks only), so
** alloc_status.c folds and reads them from the type slots
** (slot_events_also) and the hot path has three adds fewer a malloc and
** three fewer a temporary free.  Unlike events, the counts' high marks are
** not sums: the counts themselves stay in all five slots.
*/
static inline __attribute__((always_inline)) void core_slot_in(alloc_slot_t *s, int64_t one_in)
{
#if defined(__x86_64__)
	__asm__("addq %1, %0" : "+m"(s->in) : "r"(one_in));
#else
	__atomic_store_n(&s->in, s->in + one_in, __ATOMIC_RELAXED);
#endif
}

static inline __attribute__((always_inline)) void core_events_in(alloc_thread_t *t, alloc_slot_t *total,
								 alloc_slot_t *as, alloc_slot_t *cs,
								 alloc_slot_t *ts, uint32_t type,
								 unsigned allocator, uint64_t size,
								 const void *user)
{
	int64_t one_in = alloc_slot_pack((int64_t)size, 1);
	(void)total, (void)cs;
	core_slot_in(as, one_in);
	core_slot_in(ts, one_in);
	t->hist[type & (ALLOC_SLOTS_TYPE - 1)][alloc_hist_bucket(size)]++;
	t->last_block = user;
	if (allocator == ALLOC_A_REALLOC)
		as->reallocs++, ts->reallocs++;
}

/* A free by the thread: temporary if the block is the last it allocated
** (and it has freed nothing since); either way the next free is not. */
static inline __attribute__((always_inline)) bool core_take_temp(alloc_thread_t *t, const void *user)
{
	bool temp = t->last_block == user;
	t->last_block = NULL;
	return temp;
}

/* A temporary block counted out: one more in the allocator's and type's
** slots (a temporary block is the freeing thread's own; the total, its
** class and thread get it from the type's, as for core_events_in). */
static inline __attribute__((always_inline)) void core_events_temp(alloc_slot_t *as, alloc_slot_t *ts)
{
	as->temps++, ts->temps++;
}

/* `event`: in, a new block (not one counted back); out, a temporary one. */
static ALLOC_NOINLINE void core_count_direct(uint64_t meta, uint64_t size, int sign, bool event)
{
	uint32_t type = alloc_meta_type(meta);
	int64_t ds = sign * (int64_t)size, db = sign;
	if (event)
		alloc_stat_direct_events(meta, size, sign < 0);
	alloc_stat_direct(ALLOC_KEY(ALLOC_K_TOTAL, 0), ds, db);
	alloc_stat_direct(ALLOC_KEY(ALLOC_K_ALLOCATOR, alloc_meta_allocator(meta)), ds, db);
	alloc_stat_direct(ALLOC_KEY(ALLOC_K_CLASS, alloc_type_class(type)), ds, db);
	alloc_stat_direct(ALLOC_KEY(ALLOC_K_TYPE, type), ds, db);
	alloc_stat_direct(ALLOC_KEY(ALLOC_K_THREAD, alloc_meta_thread(meta)), ds, db);
}

/* The thread's slot of a type; its class's slot comes with it (alloc_slot_t). */
static inline alloc_slot_t *core_type_slot(alloc_thread_t *t, uint32_t type)
{
	return core_slot(t, ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS + (type & (ALLOC_SLOTS_TYPE - 1)),
			 ALLOC_KEY(ALLOC_K_TYPE, type));
}

/* The thread's slot of the thread that allocated a block. */
static inline alloc_slot_t *core_owner_slot(alloc_thread_t *t, uint32_t owner)
{
	if (likely(owner == t->thread_no))
		return &t->slots[ALLOC_SLOTS_FIXED - 1];
	return core_slot(t, ALLOC_SLOTS_ALL - ALLOC_SLOTS_OTHER + (owner & (ALLOC_SLOTS_OTHER - 1)),
			 ALLOC_KEY(ALLOC_K_THREAD, owner));
}

/*
** A block too large for a slot (ALLOC_COUNT_BIG): fold every slot in, count
** the block straight into the entries, and restart the slots from there,
** so that a single thread's figures stay exact.
*/
static ALLOC_NOINLINE void core_count_big(alloc_thread_t *t, uint64_t meta, uint64_t size, int sign,
					  bool event)
{
	alloc_slots_flush_all(t);
	core_count_direct(meta, size, sign, event);
	alloc_slots_flush_all(t);
}

/* Before a count: catch up with reads that reset a kind, and fold the
** slots in when the thread's budget has run out.  False: a big block,
** counted already. */
static inline __attribute__((always_inline)) bool core_count_begin(alloc_thread_t *t, uint64_t meta,
								    uint64_t size, int sign, bool event)
{
	uint32_t gate = atomic_load_explicit(&alloc_count_gate, memory_order_acquire);
	if (unlikely(gate != t->epoch_seen) && (gate & ~(uint32_t)ALLOC_GATE_BITS) != t->epoch_seen)
		alloc_slots_sync_epochs(t);
	int64_t b = t->budget - (int64_t)size - ALLOC_FLUSH_BLOCK_COST;
	t->budget = b;
	if (unlikely(b < 0)) {
		if (unlikely(size >= ALLOC_COUNT_BIG)) {
			core_count_big(t, meta, size, sign, event);
			return false;
		}
		alloc_slots_flush_budget(t);
	}
	return true;
}

/*
** Count a block in under every kind: total, allocator, class, type,
** thread.  `t` is the calling thread's record (the caller has dealt with
** NULL).  The block is the thread's own, so the thread slot is fixed.
** Type and allocator come as they are, not from `meta` (which holds them
** too): an entry point passes its allocator as a constant.  `user`: the
** block, whose events are counted; NULL for a block counted back in (a
** realloc that failed), which is no new event.
*/
static inline __attribute__((always_inline)) void core_count_in(alloc_thread_t *t, uint64_t meta,
								 uint32_t type, unsigned allocator,
								 uint64_t size, const void *user)
{
	if (unlikely(!core_count_begin(t, meta, size, +1, user != NULL)))
		return;
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	alloc_slot_t *ts = core_type_slot(t, type);
	core_slot_add(&t->slots[0], one);
	core_slot_add(&t->slots[1 + allocator], one);
	core_slot_add(ts->cls_slot, one);
	core_slot_add(ts, one);
	core_slot_add(&t->slots[ALLOC_SLOTS_FIXED - 1], one);
	if (user)
		core_events_in(t, &t->slots[0], &t->slots[1 + allocator], ts->cls_slot, ts, type, allocator,
			       size, user);
}

/* Count a block out: the same five entries, found from its meta bits;
** `user` tells a temporary block (core_take_temp). */
static inline __attribute__((always_inline)) void core_count_out(alloc_thread_t *t, uint64_t meta, uint64_t size,
								  const void *user)
{
	bool temp = core_take_temp(t, user) && alloc_meta_thread(meta) == t->thread_no;
	if (unlikely(!core_count_begin(t, meta, size, -1, temp)))
		return;
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	alloc_slot_t *ts = core_type_slot(t, alloc_meta_type(meta));
	alloc_slot_t *as = &t->slots[1 + alloc_meta_allocator(meta)];
	core_slot_sub(&t->slots[0], one);
	core_slot_sub(as, one);
	core_slot_sub(ts->cls_slot, one);
	core_slot_sub(ts, one);
	core_slot_sub(core_owner_slot(t, alloc_meta_thread(meta)), one);
	if (temp)
		core_events_temp(as, ts);
}

/* The total bytes as this thread sees them: the value at its last flush
** and its own change since (the peak triggers decide on it). */
static inline int64_t core_total_view(const alloc_thread_t *t)
{
	return t->slots[0].base[0] + alloc_slot_bytes(t->slots[0].d);
}

#endif /* ALLOC_COUNT_H */
