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

#define MAP_SHARD_BITS 8
#define MAP_SHARDS (1u << MAP_SHARD_BITS)

typedef struct map_shard_s {
	_Atomic int lock;
	alloc_mhdr_t head; /* sentinel of a circular list */
	size_t count;
} __attribute__((aligned(64))) map_shard_t;

static map_shard_t map_shards[MAP_SHARDS];

static map_shard_t *map_shard_of(const void *user)
{
	uint64_t h = ((uint64_t)(uintptr_t)user >> 4) * 0x9e3779b97f4a7c15ull;
	return &map_shards[h >> (64 - MAP_SHARD_BITS)];
}

static void map_lock(map_shard_t *s)
{
	/* Test-and-test-and-set: spin on a plain read, yield when it lasts. */
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

static void map_unlock(map_shard_t *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

void alloc_map_lock_of(const void *user) { map_lock(map_shard_of(user)); }
void alloc_map_unlock_of(const void *user) { map_unlock(map_shard_of(user)); }

/* Link a block's header into its shard.  The shard of the block is held. */
void alloc_map_link(alloc_mhdr_t *m)
{
	map_shard_t *s = map_shard_of(m + 1);
	alloc_mhdr_t *head = &s->head;
	if (!head->next) /* first use: make the sentinel circular */
		head->next = head->prev = head;
	m->next = head->next;
	m->prev = head;
	head->next->prev = m;
	head->next = m;
	s->count++;
}

/* Unlink a block's header.  The shard of the block is held. */
void alloc_map_unlink(alloc_mhdr_t *m)
{
	map_shard_t *s = map_shard_of(m + 1);
	m->prev->next = m->next;
	m->next->prev = m->prev;
	m->next = m->prev = NULL;
	s->count--;
}

/* The number of live blocks in the map (takes each shard in turn). */
size_t alloc_map_count(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < MAP_SHARDS; i++) {
		map_lock(&map_shards[i]);
		n += map_shards[i].count;
		map_unlock(&map_shards[i]);
	}
	return n;
}

void alloc_map_prefork(void)
{
	for (unsigned i = 0; i < MAP_SHARDS; i++)
		map_lock(&map_shards[i]);
}

void alloc_map_postfork_parent(void)
{
	for (unsigned i = MAP_SHARDS; i-- > 0;)
		map_unlock(&map_shards[i]);
}

void alloc_map_postfork_child(void)
{
	alloc_map_postfork_parent();
}
