/*
** alloc_check.h — the header check, inline, for alloc_core.c and
** alloc_fast.c: sealing a fresh header with its check bits, and telling
** whether a header read back still carries them.  The layout of the two
** words is in alloc_int.h (header section).
*/
#ifndef ALLOC_CHECK_H
#define ALLOC_CHECK_H

#include "alloc_int.h"

/* The per-process secret the check is keyed with (set by alloc_init). */
extern uint64_t alloc_check_key ALLOC_INTERNAL;

static inline alloc_hdr_t *alloc_hdr_of(const void *user)
{
	return (alloc_hdr_t *)user - 1;
}

/*
** The check: a hash of the address (keyed by the process's secret), the
** size and the meta bits below the check, except the freed flag, so that a
** freed header still checks (double free).  Size and meta are mixed in
** separately (a sum would let a forger trade size against type).  Its top
** 30 bits are kept: 14 on top of the meta word, 16 on top of the size.
*/
#define ALLOC_CHECKED_BITS (((1ull << ALLOC_META_CHECK_SHIFT) - 1) & ~ALLOC_META_FREED)
#define ALLOC_META_CHECK (~((1ull << ALLOC_META_CHECK_SHIFT) - 1))
/* `meta` holds the checked bits only (see alloc_hdr_mismatch). */
static inline uint64_t alloc_hdr_hash(const void *user, uint64_t size, uint64_t meta)
{
	uint64_t x = ((uintptr_t)user ^ alloc_check_key) * 0x9e3779b97f4a7c15ull;
	x ^= size * 0xc2b2ae3d27d4eb4full;
	x ^= meta * 0x94d049bb133111ebull;
	x ^= x >> 29;
	return x * 0xbf58476d1ce4e5b9ull;
}

/* Write a header's size and meta words with their check bits.  `meta` is
** fresh from alloc_meta_pack: no check bits, not freed. */
static inline void alloc_hdr_seal(alloc_hdr_t *h, const void *user, uint64_t size, uint64_t meta)
{
	alloc_assert(!(meta & ~ALLOC_CHECKED_BITS));
	uint64_t x = alloc_hdr_hash(user, size, meta);
	h->size = size | ((x << 14) & ~ALLOC_SIZE_MASK);
	h->meta = meta | (x & ALLOC_META_CHECK);
}

/* Do a header's check bits match?  (Zero when they do.) */
static inline uint64_t alloc_hdr_mismatch(const void *user, uint64_t sizew, uint64_t meta)
{
	uint64_t x = alloc_hdr_hash(user, sizew & ALLOC_SIZE_MASK, meta & ALLOC_CHECKED_BITS);
	return ((meta ^ x) & ALLOC_META_CHECK) | ((sizew ^ (x << 14)) & ~ALLOC_SIZE_MASK);
}

#endif /* ALLOC_CHECK_H */
