/*
** alloc_int_map.h — a section of alloc_int.h: the map of live blocks
** (mim): the lists, their bias to the owner, the orphan list, the
** allocation numbers (alloc_map.c, alloc_fast.c).
**
** A file of its own so that alloc_int.h stays within the size guide; the
** map is the largest section and is read on its own.  alloc_int.h includes
** it in place (inside its hidden-visibility region, in the order of the
** sections): include alloc_int.h, never this.  The lock order and the
** signal-handler rules are in alloc_int.h's head comment.
*/
#ifndef ALLOC_INT_MAP_H
#define ALLOC_INT_MAP_H
#ifndef ALLOC_INT_H
#error "include alloc_int.h, which includes this file"
#endif

/* --------------------------------------------------------------- map --- */

/*
** mim: the map of live blocks is a set of lists, one per thread (its
** owner: the thread that allocated the block) plus the orphan list (number
** 0), which holds the blocks of threads that have exited with few blocks
** and of threads without a list.  A list is a bitmap of the heap under one
** lock: a bit for each 16 bytes, set where the header of one of its live
** blocks starts, in leaves of a page found by page number in the list's
** directory (alloc_map.c); a header says which list holds it
** (alloc_mhdr_t.at).  The owner adds and counts holding its own list (its
** lock, or without it while the list is biased, below), which no other
** thread takes except to free one of its blocks; whoever holds every list
** (alloc_map_stop) sees blocks and counters that agree.
**
** The lock order of the set lock and the lists is in alloc_int.h's head
** comment; the hot path holds at most one list lock, and never while it
** waits for another lock of ours.
*/
/* (alloc_list_t, a thread's list of live blocks, is defined above.) */

/*
** A list is biased to its owner until another thread frees one of its
** blocks: the owner's fast path (alloc_fast.c) then raises `busy` and, if
** `stop` is clear, works on the list without its lock (two plain stores
** where the lock took two locked exchanges).  Anyone else takes the lock
** and makes the owner keep out: a free from another thread revokes the
** bias for good (ALLOC_LIST_SHARED: from then on the owner takes the lock
** too), a capture or a fork holds the owner off while it holds every list
** (ALLOC_LIST_HELD); either one makes every thread pass a memory barrier
** (membarrier, alloc_thread_fence_all) and then waits until `busy` is
** down, so that the owner either has seen `stop` or was seen inside.
** Without membarrier every list is shared from the start (or from when a
** seccomp filter that refuses it comes: alloc_map_unbias_all).
*/
enum { ALLOC_LIST_SHARED = 1, ALLOC_LIST_HELD = 2 };
extern bool alloc_map_bias; /* lists start biased (membarrier works) */
void alloc_thread_fence_all(void);
/* A seccomp filter is coming that refuses membarrier (alloc_seccomp.c):
** every list shared for good and none biased from now on (alloc_map.c),
** then counting fences itself (alloc_thread.c).  Before the filter. */
void alloc_map_unbias_all(void);
void alloc_thread_membarrier_off(void);

/* "alloc_map.c" */
extern alloc_list_t alloc_map_orphans;
/* A thread without a record, in the orphans' path (alloc_tls.orphan_busy
** up): let go, and a signal handler's free put aside meanwhile. */
void alloc_orphan_leave(void);
void alloc_orphan_defer(void *user);
/* Non-zero while a snapshot's capture holds every list (mim) or the
** counting gate (mis): a program thread that waits then is waiting for
** meminst, and its trace says so (<snapshot>, see alloc_spin_lock_slow
** and core_enter_gated). */
extern _Atomic int alloc_map_capturing;
void alloc_spin_lock_slow(_Atomic int *lock);
void alloc_map_corrupt(const alloc_mhdr_t *m) __attribute__((noreturn, cold));

/* The small spin locks of the map (and the set lock). */
static inline void alloc_spin_lock(_Atomic int *lock)
{
	if (unlikely(atomic_exchange_explicit(lock, 1, memory_order_acquire)))
		alloc_spin_lock_slow(lock);
}
static inline void alloc_spin_unlock(_Atomic int *lock)
{
	atomic_store_explicit(lock, 0, memory_order_release);
}
static inline void alloc_list_lock(alloc_list_t *l) { alloc_spin_lock(&l->lock); }
static inline void alloc_list_unlock(alloc_list_t *l) { alloc_spin_unlock(&l->lock); }

/*
** The bits of the leaf that holds `m`'s page, in a list the caller holds,
** and in `*bit` the header's bit there: the leaf used last without a
** look-up (a block is most often freed or made near the last one), else
** from the directory, made when `make`.  NULL when there is none (not
** made: no block of the list is in that page) or the directory cannot
** grow.  The page's offset does for the bit's number.
*/
uint64_t *alloc_map_leaf_find(alloc_list_t *l, uintptr_t page, bool make);
static inline uint32_t alloc_map_hash(uintptr_t page) { return (uint32_t)((page * 0x9e3779b97f4a7c15ull) >> 32); }
static inline __attribute__((always_inline)) uint64_t *alloc_map_leaf(alloc_list_t *l, const void *m, bool make,
								     uintptr_t *bit)
{
	uintptr_t d = (uintptr_t)m - l->last_base, page = (uintptr_t)m >> ALLOC_LEAF_SHIFT;
	if (likely(d < ((uintptr_t)1 << ALLOC_LEAF_SHIFT))) {
		uint64_t *bits = l->last_bits;
		if (!bits) /* (the last leaf has bits: no test) */
			__builtin_unreachable();
		*bit = d >> 4;
		return bits;
	}
	*bit = ((uintptr_t)m >> 4) & (ALLOC_LEAF_BLOCKS - 1);
	/* the leaf at its hash's own entry, the most common case, inline
	** (a random free at a million blocks: the call cost ~20 instructions);
	** an empty entry names leaves[0], whose page is none */
	alloc_leaf_t *e = &l->leaves[l->dir[alloc_map_hash(page) & l->dir_mask]];
	if (likely(e->page == page)) {
		l->last_base = page << ALLOC_LEAF_SHIFT;
		l->last_bits = e->bits;
		return e->bits;
	}
	return alloc_map_leaf_find(l, page, make);
}

/* Set, test, clear bit `bit` of a leaf's bits (below ALLOC_LEAF_BLOCKS).
** x86: one bts or btr on the bits as a string, where finding the word and
** shifting a mask took six more instructions in the hot paths. */
static inline __attribute__((always_inline)) void alloc_map_set(uint64_t *bits, uintptr_t bit)
{
#if defined(__x86_64__)
	__asm__("btsq %1, %0" : "+m"(*(uint64_t(*)[ALLOC_LEAF_WORDS])bits) : "r"(bit));
#else
	bits[bit / 64] |= 1ull << (bit % 64);
#endif
}
static inline bool alloc_map_test(const uint64_t *bits, uintptr_t bit) { return bits[bit / 64] >> (bit % 64) & 1; }
/* Clear it; whether it was set (nothing changes when not). */
static inline __attribute__((always_inline)) bool alloc_map_clear(uint64_t *bits, uintptr_t bit)
{
#if defined(__x86_64__)
	bool was;
	__asm__("btrq %2, %0" : "+m"(*(uint64_t(*)[ALLOC_LEAF_WORDS])bits), "=@ccc"(was) : "r"(bit));
	return was;
#else
	bool was = alloc_map_test(bits, bit);
	bits[bit / 64] &= ~(1ull << (bit % 64));
	return was;
#endif
}

/* The list's count, one more or one fewer: written by the list's holder
** only, read by alloc_map_count without the lock (a biased owner may be
** changing it); one add to memory where the relaxed atomic store made gcc
** load, add and store (as alloc_count.h's slots). */
static inline __attribute__((always_inline)) void alloc_map_count_add(alloc_list_t *l, int64_t by)
{
#if defined(__x86_64__)
	__asm__("addq %1, %0" : "+m"(l->count) : "er"(by));
#else
	__atomic_store_n(&l->count, l->count + by, __ATOMIC_RELAXED);
#endif
}

/* Add a block's header, with its allocation number, to the list, which
** the caller holds.  False when the directory cannot grow (the block is
** then not in the map: the caller leaves it untracked). */
static inline bool alloc_map_link(alloc_list_t *l, alloc_mhdr_t *m, uint64_t seq)
{
	uintptr_t bit;
	uint64_t *bits = alloc_map_leaf(l, m, true, &bit);
	if (unlikely(!bits))
		return false;
	alloc_map_set(bits, bit);
	__atomic_store_n(&m->at, (uint64_t)l->id << 32, __ATOMIC_RELAXED);
	m->seq = seq;
	alloc_map_count_add(l, 1);
	return true;
}

void alloc_map_low(alloc_list_t *l);

/* Take a block off the list, which the caller holds: true when its bit was
** set (and is now clear); nothing changes when not, which the caller takes
** as alloc_map_unlink does (the fast paths hand it to the general path).
** A leaf not used last is looked up. */
static inline __attribute__((always_inline)) bool alloc_map_take(alloc_list_t *l, const alloc_mhdr_t *m)
{
	uintptr_t bit;
	uint64_t *bits = alloc_map_leaf(l, m, false, &bit);
	if (unlikely(!bits) || unlikely(!alloc_map_clear(bits, bit)))
		return false;
	alloc_map_count_add(l, -1);
	return true;
}

/*
** Take a block off the list, which the caller holds and which its header
** names.  The header is in front of the user's block, where an overrun or
** an attacker can rewrite it: the list's bit for this very header must be
** set (a block of this list starts here, not freed yet), or the process
** stops (alloc_map_corrupt) before anything is written.
*/
static inline void alloc_map_unlink(alloc_list_t *l, alloc_mhdr_t *m)
{
	if (unlikely(!alloc_map_take(l, m)))
		alloc_map_corrupt(m);
	/* (only here: the fast paths leave it to the next general one) */
	if (unlikely(l->count < l->low))
		alloc_map_low(l);
}

void alloc_map_init(void);
alloc_list_t *alloc_map_list_new(uint32_t thread_no); /* NULL: use the orphans */
/* The list a block's header names, held, and its `at` as read under the
** lock; NULL when the header names no list. */
alloc_list_t *alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at);
void alloc_map_unlock_other(alloc_list_t *l);
void alloc_map_list_handover(alloc_list_t *l);

/*
** The one way to see every live block: alloc_map_stop takes the set lock
** and every list's lock (allocation and freeing of tracked blocks wait,
** counting too), then
**     for (uint32_t i = 0, n = alloc_map_nlists(); i < n; i++)
**             l = alloc_map_list(i), its blocks by leaf: for each
**             e in 1 .. l->nleaves (none when l->count is 0),
**             ALLOC_LEAF_FOR_EACH(&l->leaves[e], m) gives the headers
** and alloc_map_resume lets go.  alloc_map_count_stopped is the number of
** blocks on all lists.  Empty lists (of exited threads) stay numbered, in
** a pool for the next threads.
*/
void alloc_map_stop(void);
void alloc_map_resume(void);
extern _Atomic uint32_t alloc_map_nlists_; /* numbers handed out, the orphans' 0 too */
/* List number -> list (entry 0 unused), in chunks of 2^ALLOC_MAP_CHUNK. */
extern alloc_table_t alloc_map_lists;
#define ALLOC_MAP_CHUNK 11
static inline uint32_t alloc_map_nlists(void)
{
	return atomic_load_explicit(&alloc_map_nlists_, memory_order_acquire);
}
/* NULL: no such list.  Inline, with the table's shapes as constants: a
** cross-thread free looks its list up (alloc_fast.c).  A number below
** alloc_map_nlists has its chunk mapped (published after it). */
static inline alloc_list_t *alloc_map_list(uint32_t id)
{
	if (id == 0)
		return &alloc_map_orphans;
	if (id >= alloc_map_nlists())
		return NULL;
	alloc_list_t *c = (alloc_list_t *)atomic_load_explicit(&alloc_map_lists.dir[id >> ALLOC_MAP_CHUNK],
								memory_order_relaxed);
	return c + (id & ((1u << ALLOC_MAP_CHUNK) - 1));
}
/* The headers of a leaf's blocks, in address order, as `m` (bits cleared
** meanwhile do not stop the walk: each word is read once).  No array on
** the stack: a capture may run on a signal's stack. */
#define ALLOC_LEAF_FOR_EACH(leaf, m)                                                                   \
	for (unsigned w_ = 0; w_ < ALLOC_LEAF_WORDS; w_++)                                              \
		for (uint64_t b_ = (leaf)->bits[w_]; b_; b_ &= b_ - 1)                                  \
			for (alloc_mhdr_t *m = (alloc_mhdr_t *)(((uintptr_t)(leaf)->page << ALLOC_LEAF_SHIFT) + \
								 ((uintptr_t)w_ * 64 + (unsigned)__builtin_ctzll(b_)) * 16), \
					  *once_ = m;                                                   \
			     once_; once_ = NULL)
size_t alloc_map_count_stopped(void);
size_t alloc_map_count(void);               /* takes each list in turn    */
size_t alloc_map_count_ownerless(void);     /* blocks of exited threads   */
void alloc_map_postfork_child(void);
extern _Atomic uint64_t alloc_seq_reserved; /* allocation numbers handed out */
uint64_t alloc_seq_take_slow(alloc_thread_t *t);

/*
** The next allocation number for a block.  Threads reserve numbers in
** batches so that the hot path touches no shared counter; the order
** between threads is therefore right to within a batch.
*/
#define ALLOC_SEQ_BATCH 4096
static inline uint64_t alloc_seq_take(alloc_thread_t *t)
{
	if (likely(t) && likely(t->seq_next != t->seq_end))
		return t->seq_next++;
	return alloc_seq_take_slow(t);
}

#endif /* ALLOC_INT_MAP_H */
