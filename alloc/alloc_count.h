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
	if (alloc_slot_blocks(d) > s->hi_blocks)
		__atomic_store_n(&s->hi_blocks, alloc_slot_blocks(d), __ATOMIC_RELAXED);
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

static ALLOC_NOINLINE void core_count_direct(uint64_t meta, uint64_t size, int sign)
{
	uint32_t type = alloc_meta_type(meta);
	int64_t ds = sign * (int64_t)size, db = sign;
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
static ALLOC_NOINLINE void core_count_big(alloc_thread_t *t, uint64_t meta, uint64_t size, int sign)
{
	alloc_slots_flush_all(t);
	core_count_direct(meta, size, sign);
	alloc_slots_flush_all(t);
}

/* Before a count: catch up with reads that reset a kind, and fold the
** slots in when the thread's budget has run out.  False: a big block,
** counted already. */
static inline __attribute__((always_inline)) bool core_count_begin(alloc_thread_t *t, uint64_t meta,
								    uint64_t size, int sign)
{
	uint32_t gate = atomic_load_explicit(&alloc_count_gate, memory_order_acquire);
	if (unlikely(gate != t->epoch_seen) && (gate & ~(uint32_t)ALLOC_GATE_BITS) != t->epoch_seen)
		alloc_slots_sync_epochs(t);
	int64_t b = t->budget - (int64_t)size - ALLOC_FLUSH_BLOCK_COST;
	t->budget = b;
	if (unlikely(b < 0)) {
		if (unlikely(size >= ALLOC_COUNT_BIG)) {
			core_count_big(t, meta, size, sign);
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
** too): an entry point passes its allocator as a constant.
*/
static inline __attribute__((always_inline)) void core_count_in(alloc_thread_t *t, uint64_t meta,
								 uint32_t type, unsigned allocator,
								 uint64_t size)
{
	if (unlikely(!core_count_begin(t, meta, size, +1)))
		return;
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	alloc_slot_t *ts = core_type_slot(t, type);
	core_slot_add(&t->slots[0], one);
	core_slot_add(&t->slots[1 + allocator], one);
	core_slot_add(ts->cls_slot, one);
	core_slot_add(ts, one);
	core_slot_add(&t->slots[ALLOC_SLOTS_FIXED - 1], one);
}

/* Count a block out: the same five entries, found from its meta bits. */
static inline __attribute__((always_inline)) void core_count_out(alloc_thread_t *t, uint64_t meta, uint64_t size)
{
	if (unlikely(!core_count_begin(t, meta, size, -1)))
		return;
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	alloc_slot_t *ts = core_type_slot(t, alloc_meta_type(meta));
	core_slot_sub(&t->slots[0], one);
	core_slot_sub(&t->slots[1 + alloc_meta_allocator(meta)], one);
	core_slot_sub(ts->cls_slot, one);
	core_slot_sub(ts, one);
	core_slot_sub(core_owner_slot(t, alloc_meta_thread(meta)), one);
}

/* The total bytes as this thread sees them: the value at its last flush
** and its own change since (the peak triggers decide on it). */
static inline int64_t core_total_view(const alloc_thread_t *t)
{
	return t->slots[0].base[0] + alloc_slot_bytes(t->slots[0].d);
}

#endif /* ALLOC_COUNT_H */
