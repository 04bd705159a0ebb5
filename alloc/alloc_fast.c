/*
** alloc_fast.c — mis and mim modes: malloc and free when nothing is unusual.
**
** The common case of a pair — a plain block of the calling thread, whose
** type is in the thread's site cache and whose slots are in place, no
** flush due, no read or fork in the way — is done here by leaf functions
** that keep everything in registers and end in a tail call, so that they
** save no register and set up no frame.  Each test that finds something
** unusual hands the whole operation to the general path in alloc_core.c
** (alloc_core_track_mis_slow, alloc_core_free_mis_slow), before anything
** is changed: the general path is the reference, this file only skips its
** tests when their answer is known.  The counting protocol (the `counting`
** flag, the gate, deferred frees) is the one alloc_core.c describes.
**
** mim adds the thread's own list of live blocks (alloc_map.c): entered
** without its lock while it is biased to the thread, its lock tried once
** when it is not, and a list held by another thread (a capture, a fork, a
** free of one of our blocks) sends the operation to the general path,
** which waits; so do a map whose directory cannot grow, a block whose place
** is not in the thread's own list and a batch of allocation numbers used
** up.
*/
#include "alloc_int.h"
#include "alloc_check.h"
#include "alloc_count.h"

#include <errno.h>

#define FAST_SIZE_MAX ((size_t)1 << 47)
#if ALLOC_FLOOR >= 5
/* floor 1 and ALLOC_FLOOR - 5 x 10 register adds (no memory touched) each
** way: the floor's path made longer by instructions alone */
#define FAST_FLOOR_PAD()                                                                           \
	__asm__ volatile(".rept %c0\n\taddq $1, %%r8\n\taddq $1, %%r9\n\taddq $1, %%r10\n\t"          \
			 "addq $1, %%r11\n\taddq $1, %%rdx\n\t.endr" : : "i"((ALLOC_FLOOR - 5) * 2) : "r8", "r9", "r10", "r11", "rdx", "cc")
#endif
/* The meta bits a plain block of the thread has as t->meta_own has them:
** thread, pad log2, untracked and freed. */
#define FAST_OWN_BITS \
	((uint64_t)ALLOC_THREAD_MAX << 20 | 63ull << 42 | ALLOC_META_UNTRACKED | ALLOC_META_FREED)

/* A slot's address, made once and kept in a register: left to itself, gcc
** splits it into base + index * 64 and makes the index again for each
** field it touches (three instructions more per slot). */
static inline __attribute__((always_inline)) alloc_slot_t *fast_pin(alloc_slot_t *s)
{
	__asm__("" : "+r"(s));
	return s;
}

/* The thread's slot of an allocator: pinned when the allocator is not a
** constant of the instance. */
static inline __attribute__((always_inline)) alloc_slot_t *fast_allocator_slot(alloc_thread_t *t,
									    unsigned allocator)
{
	if (__builtin_constant_p(allocator))
		return &t->slots[1 + allocator];
	/* (from slots[1]: a shift and one lea, where slots[1 + allocator]
	** took an add, the shift and the lea) */
	return fast_pin(&t->slots[1] + allocator);
}

/*
** No peak being followed down (alloc_peak_turn at INT64_MIN).  Its upper
** half alone tells: a turn is a total less a margin, never within 2^32 of
** INT64_MIN; so on x86-64 the test is a compare with memory, where the
** whole word took its 10-byte constant loaded into a register.
*/
static inline __attribute__((always_inline)) bool fast_no_peak_turn(void)
{
#if defined(__x86_64__)
	bool none;
	__asm__("cmpl $0x80000000, %1" : "=@ccz"(none) : "m"(*((const int32_t *)&alloc_peak_turn + 1)));
	return none;
#else
	return atomic_load_explicit(&alloc_peak_turn, memory_order_relaxed) == INT64_MIN;
#endif
}

/* The thread's type and class slots for a type, if they are in place
** (the class's is whenever the type's is: alloc_slot_t). */
static inline __attribute__((always_inline)) bool fast_slots(alloc_thread_t *t, uint32_t type,
							     alloc_slot_t **ts, alloc_slot_t **cs)
{
	alloc_slot_t *s = &t->slots[ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS + (type & (ALLOC_SLOTS_TYPE - 1))];
	if (unlikely(s->key != ALLOC_KEY(ALLOC_K_TYPE, type)))
		return false;
	*ts = fast_pin(s);
	*cs = s->cls_slot;
	return true;
}

/*
** Raise `counting`, then look at the gate: false (and `counting` down
** again) when a fork or a snapshot is in the way, or a read has reset a
** kind since the thread last looked (alloc_count_gate).  The thread's site
** cache, slots and budget are read only after this: a signal handler that
** comes in later finds `counting` raised and changes none of them, where
** one that came in between a slot's test and its update could have given
** the slot to another type.  The caller has seen `counting` down (else it
** is such a handler itself).
*/
static inline __attribute__((always_inline)) bool fast_enter_fenced(alloc_thread_t *t, uint32_t gate);

/* Is the thread inside counting already (a signal handler that came in
** there)?  On x86-64 a compare with memory, where the load gcc makes of an
** atomic is an instruction of its own. */
static inline __attribute__((always_inline)) bool fast_counting(const alloc_thread_t *t)
{
#if defined(__x86_64__)
	bool busy;
	__asm__("cmpl $0, %1" : "=@ccnz"(busy) : "m"(*(const int *)&t->counting));
	return busy;
#else
	return atomic_load_explicit(&t->counting, memory_order_relaxed) != 0;
#endif
}

/* Has the thread seen the gate's epoch `gate`?  (A compare with memory,
** as above.) */
static inline __attribute__((always_inline)) bool fast_gate_seen(const alloc_thread_t *t, uint32_t gate)
{
#if defined(__x86_64__)
	bool seen;
	__asm__("cmpl %1, %2" : "=@ccz"(seen) : "r"(gate), "m"(t->epoch_seen));
	return seen;
#else
	return gate == t->epoch_seen;
#endif
}

static inline __attribute__((always_inline)) bool fast_enter(alloc_thread_t *t)
{
	atomic_store_explicit(&t->counting, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	uint32_t gate = atomic_load_explicit(&alloc_count_gate, memory_order_relaxed);
	if (likely(fast_gate_seen(t, gate)) || unlikely(fast_enter_fenced(t, gate))) {
		atomic_signal_fence(memory_order_seq_cst);
		return true;
	}
	atomic_store_explicit(&t->counting, 0, memory_order_relaxed);
	return false;
}

/* Without membarrier (a kernel before 4.14, or a sandbox that forbids it)
** the gate always has its fence bit: fence as the general path does
** (core_enter_gated), then go on if nothing else is in the way. */
static inline __attribute__((always_inline)) bool fast_enter_fenced(alloc_thread_t *t, uint32_t gate)
{
	if (gate != (t->epoch_seen | ALLOC_GATE_FENCE))
		return false;
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&alloc_count_gate, memory_order_relaxed) == gate;
}

/* Leave counting without counting anything, for the general path. */
static inline __attribute__((always_inline)) void fast_abort(alloc_thread_t *t)
{
	atomic_store_explicit(&t->counting, 0, memory_order_release);
}

/*
** Leave counting: true when a signal handler put frees aside meanwhile
** (core_defer raises ALLOC_COUNTING_DEFERRED in `counting`).  On x86-64 one
** subtract to memory both leaves and tells: a signal lands before it or
** after it, never inside; `counting` is then down either way.
*/
static inline __attribute__((always_inline)) bool fast_leave(alloc_thread_t *t)
{
#if defined(__x86_64__)
	bool deferred;
	__asm__ volatile("subl $1, %0" : "+m"(*(int *)&t->counting), "=@ccnz"(deferred) : : "memory");
	if (likely(!deferred))
		return false;
	atomic_store_explicit(&t->counting, 0, memory_order_release);
	return true;
#else
	atomic_store_explicit(&t->counting, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	return unlikely(atomic_load_explicit(&t->ndeferred, memory_order_relaxed) != 0);
#endif
}

/* The budget left after counting `size` bytes, negative when a flush is
** due (or the block is too large for a slot). */
static inline __attribute__((always_inline)) int64_t fast_budget(const alloc_thread_t *t, uint64_t size)
{
	return t->budget - (int64_t)size - ALLOC_FLUSH_BLOCK_COST;
}

/* One allocation of size bytes counted in: the thread's total, its
** allocator's, class's and type's slots, and the last fixed slot. */
static inline __attribute__((always_inline)) void fast_count_alloc(alloc_thread_t *t, unsigned allocator,
								   alloc_slot_t *ts, alloc_slot_t *cs, size_t size,
								   uint32_t type, const void *user)
{
	int64_t one = alloc_slot_pack((int64_t)size, 1);
#if ALLOC_FLOOR == 4
	core_slot_add(&t->slots[0], one);
	core_slot_in(&t->slots[0], one);
	return;
#endif
	alloc_slot_t *as = fast_allocator_slot(t, allocator);
	core_slot_add(&t->slots[0], one);
	core_slot_add(as, one);
	core_slot_add(cs, one);
	core_slot_add(ts, one);
	core_slot_add(&t->slots[ALLOC_SLOTS_FIXED - 1], one);
#if ALLOC_FLOOR == 3
	return;
#endif
	core_events_in(t, &t->slots[0], as, cs, ts, type, allocator, size, user);
}

/* One block of the thread's own counted out (and, if temporary, its
** event). */
static inline __attribute__((always_inline)) void fast_count_free(alloc_thread_t *t, unsigned allocator,
								  alloc_slot_t *ts, alloc_slot_t *cs, uint64_t size,
								  const void *user)
{
	int64_t one = alloc_slot_pack((int64_t)size, 1);
#if ALLOC_FLOOR == 4
	core_slot_sub(&t->slots[0], one);
	return;
#endif
	alloc_slot_t *as = fast_allocator_slot(t, allocator);
	core_slot_sub(&t->slots[0], one);
	core_slot_sub(as, one);
	core_slot_sub(cs, one);
	core_slot_sub(ts, one);
	core_slot_sub(&t->slots[ALLOC_SLOTS_FIXED - 1], one);
	if (core_take_temp(t, user))
		core_events_temp(as, ts);
}

/*
** A fresh backend block of `size` bytes (plus the header) from `site`:
** header, type, counts.  Not inlined into alloc_core_malloc_mis, so that
** what must survive the backend call there is a few registers, and here
** nothing survives a call.  malloc's own instance has the allocator as a
** constant (its meta bits and its slot's address fold in: FAST_ENTRIES).
*/
static inline __attribute__((always_inline)) void *fast_track_body(void *base, size_t size, unsigned allocator,
								   uintptr_t site)
{
	alloc_tls_t *tls = &alloc_tls;
	alloc_thread_t *t = tls->thr;
	char *user = (char *)base + sizeof(alloc_hdr_t);
	alloc_slot_t *ts, *cs;
	if (unlikely(!t || tls->guard || tls->scope || fast_counting(t)) ||
	    unlikely(!fast_enter(t)))
		goto slow;
#if ALLOC_FLOOR >= 5
	FAST_FLOOR_PAD();
#endif
#if ALLOC_FLOOR == 1 || ALLOC_FLOOR >= 5
	alloc_hdr_seal(alloc_hdr_of(user), user, size, t->meta_own | alloc_meta_pack(0, 0, allocator, 0));
	fast_leave(t);
	return user;
#endif
	unsigned i = alloc_site_cache_index(site);
	uint32_t type = t->site_cache[i].type;
	if (unlikely(t->site_cache[i].site != site) || unlikely(!fast_slots(t, type, &ts, &cs)))
		goto abort;
	int64_t budget = fast_budget(t, size);
	if (unlikely(budget < 0))
		goto abort;
	t->budget = budget; /* (at once: a register less for what follows) */
	uint64_t meta = t->meta_own | alloc_meta_pack(type, 0, allocator, 0);
	alloc_hdr_seal(alloc_hdr_of(user), user, size, meta);
	fast_count_alloc(t, allocator, ts, cs, size, type, user);
	if (fast_leave(t) || unlikely(t->slots[0].d > t->peak_d))
		return alloc_core_track_mis_done(t, user);
	return user;
abort:
	fast_abort(t);
slow:
	return alloc_core_track_mis_slow(base, size, allocator, site);
}

/*
** The entry points of a mode: any allocator, and malloc's with the
** allocator a constant all the way down (the hooks' malloc calls it).
*/
#define FAST_ENTRIES(mode, hdr_t)                                                                  \
	static ALLOC_NOINLINE void *fast_track_##mode(void *base, size_t size, unsigned allocator, \
						      uintptr_t site)                              \
	{                                                                                          \
		return fast_track_##mode##_body(base, size, allocator, site);                      \
	}                                                                                          \
	static ALLOC_NOINLINE void *fast_track_##mode##_malloc(void *base, size_t size, uintptr_t site) \
	{                                                                                          \
		return fast_track_##mode##_body(base, size, ALLOC_A_MALLOC, site);                 \
	}                                                                                          \
	void *alloc_core_malloc_##mode(size_t size, unsigned allocator, uintptr_t site)            \
	{                                                                                          \
		if (unlikely(size > FAST_SIZE_MAX))                                                \
			return errno = ENOMEM, NULL;                                               \
		void *base = alloc_real.malloc(size + sizeof(hdr_t));                              \
		if (unlikely(!base))                                                               \
			return NULL;                                                               \
		return fast_track_##mode(base, size, allocator, site);                             \
	}                                                                                          \
	void *alloc_core_malloc_##mode##_plain(size_t size, uintptr_t site)                        \
	{                                                                                          \
		if (unlikely(size > FAST_SIZE_MAX))                                                \
			return errno = ENOMEM, NULL;                                               \
		void *base = alloc_real.malloc(size + sizeof(hdr_t));                              \
		if (unlikely(!base))                                                               \
			return NULL;                                                               \
		return fast_track_##mode##_malloc(base, size, site);                               \
	}

#define fast_track_mis_body fast_track_body
FAST_ENTRIES(mis, alloc_hdr_t)

/*
** free: a block of this thread with a plain header (not aligned, not
** untracked, not freed), whose header can be read without a probe
** (alloc_header_readable: near a page start the header's page may be gone,
** and alloc_core.c probes it), no peak being followed down.
*/
void alloc_core_free_mis(void *user, uintptr_t site)
{
	alloc_thread_t *t = alloc_tls.thr;
	alloc_slot_t *ts, *cs;
	/* NULL and misaligned pointers fail these too; a block of the
	** bootstrap arena has its size where the meta word would be, so its
	** padding reads 0 and the meta test below sends it on; near a page
	** start, the header must be readable without a probe */
	if (unlikely(!t || !alloc_header_readable(t, user, sizeof(alloc_hdr_t)) || ((uintptr_t)user & 15)))
		goto slow;
	alloc_hdr_t *h = alloc_hdr_of(user);
	uint64_t meta = h->meta, sizew = h->size;
	if (unlikely(alloc_hdr_mismatch(user, sizew, meta)))
		goto slow;
	/* this thread's, pad log2 4, untracked 0, freed 0; an allocator in
	** range; the type's slot in place says the type is in range too */
	unsigned allocator = alloc_meta_allocator(meta);
	if (unlikely(((meta ^ t->meta_own) & FAST_OWN_BITS) || allocator >= ALLOC_A_COUNT))
		goto slow;
	if (unlikely(fast_counting(t) || !fast_no_peak_turn()) ||
	    unlikely(!fast_enter(t)))
		goto slow;
#if ALLOC_FLOOR >= 5
	FAST_FLOOR_PAD();
#endif
#if ALLOC_FLOOR == 1 || ALLOC_FLOOR >= 5
	h->meta = meta | ALLOC_META_FREED;
	fast_leave(t);
	return alloc_real.free(h);
#endif
	if (unlikely(!fast_slots(t, alloc_meta_type(meta), &ts, &cs)))
		goto abort;
	uint64_t size = sizew & ALLOC_SIZE_MASK;
	int64_t budget = fast_budget(t, size);
	if (unlikely(budget < 0))
		goto abort;
	h->meta = meta | ALLOC_META_FREED;
	t->budget = budget;
	fast_count_free(t, allocator, ts, cs, size, user);
	if (fast_leave(t))
		return alloc_core_free_mis_done(t, user);
	alloc_real.free(h);
	return;
abort:
	fast_abort(t);
slow:
	alloc_core_free_mis_slow(user, site);
}

/* ------------------------------------------------------------- mim --- */

/*
** Enter the thread's own list (after fast_enter, so that a signal handler
** coming in between finds `counting` raised and leaves the list alone).
** A biased list (alloc_int.h) is entered by raising `busy` when nothing
** stops it; a shared one by its lock, tried once (a leaf cannot wait: the
** general path does).  Each mim entry point has an instance for each
** (`biased` a constant), so that neither keeps the way in in a register;
** the biased one hands a list it finds shared to the other at its start.
** False when the list is held by another thread: a capture, a fork, a
** free of one of its blocks.
*/
static inline __attribute__((always_inline)) bool fast_list_enter(alloc_list_t *l, bool biased)
{
	if (!biased)
		return !atomic_exchange_explicit(&l->lock, 1, memory_order_acquire);
	atomic_store_explicit(&l->busy, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (likely(!atomic_load_explicit(&l->stop, memory_order_relaxed)))
		return true;
	atomic_store_explicit(&l->busy, 0, memory_order_release);
	return false;
}

static inline __attribute__((always_inline)) void fast_list_leave(alloc_list_t *l, bool biased)
{
	if (biased)
		atomic_store_explicit(&l->busy, 0, memory_order_release);
	else
		alloc_list_unlock(l);
}

/* A list that another thread has freed into: the locked instance. */
static inline __attribute__((always_inline)) bool fast_list_shared(const alloc_list_t *l)
{
	return unlikely(atomic_load_explicit(&l->stop, memory_order_relaxed) & ALLOC_LIST_SHARED);
}

/* Give up after fast_enter (and after entering the list, `in`): nothing
** changed. */
static inline __attribute__((always_inline)) void fast_back_out(alloc_thread_t *t, alloc_list_t *l, bool in,
								 bool biased)
{
	if (in)
		fast_list_leave(l, biased);
	atomic_store_explicit(&t->counting, 0, memory_order_release);
}

/* A block counted out and off the list: leave both, free what a signal
** handler put aside meanwhile, and give the block to the backend. */
static inline __attribute__((always_inline)) void fast_free_mim_release(alloc_thread_t *t, alloc_list_t *l,
									bool biased, alloc_mhdr_t *m)
{
	fast_list_leave(l, biased);
	if (fast_leave(t))
		return alloc_core_free_mim_done(t, m + 1);
	alloc_real.free(m);
}

static ALLOC_NOINLINE void *fast_track_mim_locked(void *base, size_t size, unsigned allocator, uintptr_t site);
static ALLOC_NOINLINE void *fast_track_mim_malloc_locked(void *base, size_t size, uintptr_t site);

static inline __attribute__((always_inline)) void *fast_track_mim_any(void *base, size_t size, unsigned allocator,
								      uintptr_t site, bool biased)
{
	alloc_tls_t *tls = &alloc_tls;
	alloc_thread_t *t = tls->thr;
	char *user = (char *)base + sizeof(alloc_mhdr_t);
	alloc_mhdr_t *m = (alloc_mhdr_t *)base;
	alloc_slot_t *ts, *cs;
	if (unlikely(!t))
		goto slow;
	alloc_list_t *l = t->own_list;
	if (biased && fast_list_shared(l))
		return __builtin_constant_p(allocator) && allocator == ALLOC_A_MALLOC
			       ? fast_track_mim_malloc_locked(base, size, site)
			       : fast_track_mim_locked(base, size, allocator, site);
	if (unlikely(tls->guard || tls->scope || fast_counting(t)) ||
	    unlikely(!fast_enter(t)))
		goto slow;
	/* the site cache, slots, budget and numbers only now (see fast_enter):
	** read before, a signal handler's allocation in between could give the
	** type's slot to another type, or take the last number */
	unsigned i = alloc_site_cache_index(site);
	uint32_t type = t->site_cache[i].type;
	if (unlikely(t->site_cache[i].site != site) || unlikely(!fast_slots(t, type, &ts, &cs)))
		goto abort;
	int64_t budget = fast_budget(t, size);
	if (unlikely(budget < 0) || unlikely(t->seq_next == t->seq_end))
		goto abort;
	if (unlikely(!fast_list_enter(l, biased)))
		goto abort;
	/* (the orphans, a thread's list when it could have none, take
	** blocks from exiting threads too: the leaf is found under the lock) */
	uintptr_t bit;
	uint64_t *bits = alloc_map_leaf(l, m, true, &bit);
	if (unlikely(!bits)) {
		fast_back_out(t, l, true, biased);
		goto slow;
	}
	uint64_t meta = t->meta_own | alloc_meta_pack(type, 0, allocator, 0);
	alloc_hdr_seal(&m->h, user, size, meta);
	alloc_map_set(bits, bit);
	m->at = t->own_at;
	m->seq = t->seq_next++;
	alloc_map_count_add(l, 1);
	t->budget = budget;
	fast_count_alloc(t, allocator, ts, cs, size, type, user);
	fast_list_leave(l, biased);
	if (fast_leave(t) || unlikely(t->slots[0].d > t->peak_d))
		return alloc_core_track_mis_done(t, user);
	return user;
abort:
	fast_back_out(t, l, false, biased);
slow:
	return alloc_core_track_mim_slow(base, size, allocator, site);
}

static ALLOC_NOINLINE void *fast_track_mim_locked(void *base, size_t size, unsigned allocator, uintptr_t site)
{
	return fast_track_mim_any(base, size, allocator, site, false);
}

static ALLOC_NOINLINE void *fast_track_mim_malloc_locked(void *base, size_t size, uintptr_t site)
{
	return fast_track_mim_any(base, size, ALLOC_A_MALLOC, site, false);
}

static inline __attribute__((always_inline)) void *fast_track_mim_body(void *base, size_t size,
								       unsigned allocator, uintptr_t site)
{
	return fast_track_mim_any(base, size, allocator, site, true);
}

FAST_ENTRIES(mim, alloc_mhdr_t)

/*
** free: as mis's, and the block's bit is in the thread's own list; under
** the list's lock the header is read again (another thread's free may have
** freed it first), and the bit must be set (else the general path stops
** the process with its line).
*/
static ALLOC_NOINLINE void fast_free_mim_locked(void *user, uintptr_t site);

/* The meta bits a plain block of any thread has as t->meta_own has them:
** pad log2, untracked and freed (the owner is in the thread bits). */
#define FAST_ANY_BITS (63ull << 42 | ALLOC_META_UNTRACKED | ALLOC_META_FREED)

/* A mim header of a block the caller found safe to read (see
** alloc_core_free_mis): its two words, which must check, and carry the
** meta bits `bits` as t->meta_own has them, and an allocator in range. */
static inline __attribute__((always_inline)) bool fast_mim_header(const alloc_thread_t *t, const alloc_mhdr_t *m,
								  uint64_t bits, uint64_t *meta, uint64_t *sizew)
{
	*meta = m->h.meta;
	*sizew = m->h.size;
	return likely(!alloc_hdr_mismatch(m + 1, *sizew, *meta)) && likely(!((*meta ^ t->meta_own) & bits)) &&
	       likely(alloc_meta_allocator(*meta) < ALLOC_A_COUNT);
}

/* The thread's slot of another thread that allocated a block, if in place
** (alloc_count.h, core_owner_slot; no such slot is ever keyed with the
** thread's own number, so a block of its own number goes elsewhere). */
static inline __attribute__((always_inline)) alloc_slot_t *fast_owner_slot(alloc_thread_t *t, uint32_t owner)
{
	alloc_slot_t *s = &t->slots[ALLOC_SLOTS_ALL - ALLOC_SLOTS_OTHER + (owner & (ALLOC_SLOTS_OTHER - 1))];
	return likely(s->key == ALLOC_KEY(ALLOC_K_THREAD, owner)) ? s : NULL;
}

/*
** free of a block whose place is in another list than the thread's own:
** another thread's (a block handed from thread to thread), the orphans',
** an exited thread's.  The header passed mis's checks in fast_free_mim;
** here the list its header names is locked, tried once, if another thread
** has freed into it before (its bias is gone: revoking it is the general
** path's), and the header is read again under the lock, as the general
** path does (alloc_core.c, core_untrack_mim).  The block is counted out of
** this thread's slots, its owner under the slot kept for that thread.  A list
** that this free would empty and pool, a slot not in place and anything
** the general path waits for go there.
*/
static ALLOC_NOINLINE void fast_free_mim_other(alloc_thread_t *t, alloc_mhdr_t *m, uintptr_t site)
{
	void *user = m + 1;
	alloc_slot_t *ts, *cs, *os;
	uint64_t meta, sizew;
	if (unlikely(!fast_mim_header(t, m, FAST_ANY_BITS, &meta, &sizew)))
		goto slow;
	unsigned allocator = alloc_meta_allocator(meta);
	alloc_list_t *l = alloc_map_list(alloc_at_list(__atomic_load_n(&m->at, __ATOMIC_RELAXED)));
	if (unlikely(!l || !fast_list_shared(l)) ||
	    unlikely(fast_counting(t) || !fast_no_peak_turn()) ||
	    unlikely(!fast_enter(t)))
		goto slow;
	uint64_t size = sizew & ALLOC_SIZE_MASK;
	int64_t budget = fast_budget(t, size);
	os = fast_owner_slot(t, alloc_meta_thread(meta));
	if (unlikely(!fast_slots(t, alloc_meta_type(meta), &ts, &cs)) || unlikely(budget < 0) || unlikely(!os) ||
	    unlikely(!fast_list_enter(l, false))) {
		fast_back_out(t, l, false, false);
		goto slow;
	}
	/* under the lock: the block may have moved, been freed by a third
	** thread, or gone to the orphans meanwhile */
	if (unlikely(m->h.meta != meta || alloc_at_list(__atomic_load_n(&m->at, __ATOMIC_RELAXED)) != l->id ||
		     (l->count == 1 && !l->owner) || !alloc_map_take(l, m))) {
		fast_back_out(t, l, true, false);
		goto slow;
	}
	m->h.meta = meta | ALLOC_META_FREED;
	t->budget = budget;
	/* never temporary: another thread's block (core_count_out), but the
	** thread's next free is not either (core_take_temp) */
	t->last_block = NULL;
	int64_t one = alloc_slot_pack((int64_t)size, 1);
	core_slot_sub(&t->slots[0], one);
	core_slot_sub(&t->slots[1 + allocator], one);
	core_slot_sub(cs, one);
	core_slot_sub(ts, one);
	core_slot_sub(os, one);
	return fast_free_mim_release(t, l, false, m);
slow:
	alloc_core_free_mim_slow(user, site);
}

static inline __attribute__((always_inline)) void fast_free_mim(void *user, uintptr_t site, bool biased)
{
	alloc_thread_t *t = alloc_tls.thr;
	alloc_slot_t *ts, *cs;
	if (unlikely(!t))
		goto slow;
	alloc_list_t *l = t->own_list;
	if (biased && fast_list_shared(l))
		return fast_free_mim_locked(user, site);
	if (unlikely(!alloc_header_readable(t, user, sizeof(alloc_mhdr_t)) || ((uintptr_t)user & 15) ||
		     alloc_boot_owns(user)))
		goto slow;
	alloc_mhdr_t *m = (alloc_mhdr_t *)user - 1;
	/* (before anything else: the other list's path keeps nothing of this) */
	if (unlikely(m->at != t->own_at))
		return fast_free_mim_other(t, m, site);
	uint64_t meta, sizew;
	if (unlikely(!fast_mim_header(t, m, FAST_OWN_BITS, &meta, &sizew)))
		goto slow;
	if (unlikely(fast_counting(t) || !fast_no_peak_turn()) ||
	    unlikely(!fast_enter(t)))
		goto slow;
	/* slots and budget after fast_enter, as for an allocation */
	uint64_t size = sizew & ALLOC_SIZE_MASK;
	int64_t budget = fast_budget(t, size);
	if (unlikely(!fast_slots(t, alloc_meta_type(meta), &ts, &cs)) || unlikely(budget < 0) ||
	    unlikely(!fast_list_enter(l, biased))) {
		fast_back_out(t, l, false, biased);
		goto slow;
	}
	/* under a shared list's lock, read again: another thread's free may
	** have freed it first (a biased list has had no other thread in it) */
	if (unlikely((!biased && m->h.meta != meta) || !alloc_map_take(l, m))) {
		fast_back_out(t, l, true, biased);
		goto slow;
	}
	m->h.meta = meta | ALLOC_META_FREED;
	t->budget = budget;
	fast_count_free(t, alloc_meta_allocator(meta), ts, ts->cls_slot, size, user);
	return fast_free_mim_release(t, l, biased, m);
slow:
	alloc_core_free_mim_slow(user, site);
}

static ALLOC_NOINLINE void fast_free_mim_locked(void *user, uintptr_t site)
{
	fast_free_mim(user, site, false);
}

void alloc_core_free_mim(void *user, uintptr_t site)
{
	fast_free_mim(user, site, true);
}
