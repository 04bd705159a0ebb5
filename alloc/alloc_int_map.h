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
** and of threads without a list.  A list is an array of pointers to the
** blocks' headers under one lock; a header says which list holds it and
** where (alloc_mhdr_t.at).  The owner adds and counts holding its own list
** (its lock, or without it while the list is biased, below), which no
** other thread takes except to free one of its blocks; whoever holds every
** list (alloc_map_stop) sees blocks and counters that agree.
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
** Without membarrier every list is shared from the start.
*/
enum { ALLOC_LIST_SHARED = 1, ALLOC_LIST_HELD = 2 };
extern bool alloc_map_bias; /* lists start biased (membarrier works) */
void alloc_thread_fence_all(void);

/* "alloc_map.c" */
extern alloc_list_t alloc_map_orphans;
/* Non-zero while a snapshot's capture holds every list (mim) or the
** counting gate (mis): a program thread that waits then is waiting for
** meminst, and its trace says so (<snapshot>, see alloc_spin_lock_slow
** and core_enter_gated). */
extern _Atomic int alloc_map_capturing;
void alloc_spin_lock_slow(_Atomic int *lock);
void alloc_map_corrupt(const alloc_mhdr_t *m) __attribute__((noreturn, cold));
bool alloc_map_grow(alloc_list_t *l);
void alloc_map_shrink(alloc_list_t *l);

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

/* Add a block's header, with its allocation number, at the end of the
** list, which the caller holds.  False when the array cannot grow (the
** block is then not in the map: the caller leaves it untracked). */
static inline bool alloc_map_link(alloc_list_t *l, alloc_mhdr_t *m, uint64_t seq)
{
	uint32_t n = l->count;
	if (unlikely(n == l->cap) && !alloc_map_grow(l))
		return false;
	l->arr[n] = m;
	m->at = (uint64_t)l->id << 32 | n;
	m->seq = seq;
	l->count = n + 1;
	return true;
}

/*
** Take a block off the list, which the caller holds and which its header
** names: the last entry moves into its place.  The header is in front of
** the user's block, where an overrun or an attacker can rewrite it, and an
** unchecked index would have the move write a pointer of ours where they
** choose.  So the entry at the index must be this very block first; if not,
** the process stops (alloc_map_corrupt) before anything is written.
*/
static inline void alloc_map_unlink(alloc_list_t *l, alloc_mhdr_t *m, uint64_t at)
{
	uint32_t i = alloc_at_index(at), n = l->count;
	if (unlikely(i >= n || l->arr[i] != m))
		alloc_map_corrupt(m);
	alloc_mhdr_t *last = l->arr[n - 1];
	l->arr[i] = last;
	/* the same list, index i (m itself when it was last); a free of
	** `last` from another thread may be reading it (alloc_map_lock_block) */
	__atomic_store_n(&last->at, at, __ATOMIC_RELAXED);
	l->count = --n;
	if (unlikely(n == l->low))
		alloc_map_shrink(l);
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
**             l = alloc_map_list(i), its blocks l->arr[0 .. l->count-1]
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
