/*
** alloc_ring.c — the records of deferred counting (alloc_ring.h) replayed
** in order into the thread's slots: the allocator's, the class's, the
** type's and the owner's counts with their high marks, the events, the
** size histogram and the thread's last block (temporaries), as
** alloc_count.h counts them at once.
*/
#include "alloc_int.h"
#include "alloc_count.h"
#include "alloc_ring.h"

static inline void ring_apply(alloc_thread_t *t, const alloc_ring_rec_t *r)
{
	uint64_t meta = r->meta, size = r->sizew & ALLOC_SIZE_MASK;
	uint32_t type = alloc_meta_type(meta), owner = alloc_meta_thread(meta);
	unsigned allocator = alloc_meta_allocator(meta);
	alloc_slot_t *ts = core_type_slot(t, type);
	alloc_slot_t *as = &t->slots[1 + allocator];
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	if (meta & ALLOC_META_FREED) {
		bool temp = core_take_temp(t, r->user) && owner == t->thread_no;
		core_slot_sub(&t->slots[0], one);
		core_slot_sub(as, one);
		core_slot_sub(ts->cls_slot, one);
		core_slot_sub(ts, one);
		core_slot_sub(core_owner_slot(t, owner), one);
		if (temp)
			core_events_temp(as, ts);
		return;
	}
	core_slot_add(&t->slots[0], one);
	core_slot_add(as, one);
	core_slot_add(ts->cls_slot, one);
	core_slot_add(ts, one);
	core_slot_add(&t->slots[ALLOC_SLOTS_FIXED - 1], one);
	core_events_in(t, &t->slots[0], as, ts->cls_slot, ts, type, allocator, size, r->user);
}

/* The ring is emptied first: a slot the replay retargets flushes, and a
** flush replays (alloc_status.c), which must find nothing left to do. */
void alloc_ring_replay(alloc_thread_t *t)
{
	uint32_t n = t->ring_n;
	t->ring_n = 0;
	for (uint32_t i = 0; i < n; i++)
		ring_apply(t, &t->ring[i]);
}
