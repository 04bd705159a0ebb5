/*
** alloc_check.h — the header check, inline, for alloc_core.c and
** alloc_fast.c: sealing a fresh header with its check bits, and telling
** whether a header read back still carries them.  The layout of the two
** words is in alloc_int.h (header section).
*/
#ifndef ALLOC_CHECK_H
#define ALLOC_CHECK_H

#include "alloc_int.h"

/* The per-process secret the check is keyed with: five words drawn by
** alloc_check_init when the layer starts. */
extern uint64_t alloc_check_key[5] ALLOC_INTERNAL;
void alloc_check_init(void) ALLOC_INTERNAL;

static inline alloc_hdr_t *alloc_hdr_of(const void *user)
{
	return (alloc_hdr_t *)user - 1;
}

/*
** The check: 30 bits of a keyed hash of the user address, the size and the
** meta bits below the check except the freed flag (so that a freed header
** still checks: double free); 16 on top of the size word, 14 on top of the
** meta word.  The hash takes the two words shifted left until the check
** bits (and the freed flag) fall off, which costs one shift each.
**
** It is not linear in any input, so that knowing the check of one header
** tells nothing usable about the check of another: the address and the size
** are multiplied together, each first mixed with a secret word (the
** address's made odd, so that every size bit reaches the top), the meta
** bits are mixed with a secret and multiplied by another, and a final
** xor-shift and secret multiplication carry the top bits (where a flipped
** high input bit lands alone) down and back up over the whole word.
*/
static inline uint64_t alloc_hdr_hash(const void *user, uint64_t size_hi, uint64_t meta_hi)
{
#if ALLOC_FLOOR == 1 || ALLOC_FLOOR == 2 || ALLOC_FLOOR >= 5
	/* bench/churn.sh's floors: no check (never a build for use) */
	return (void)user, (void)size_hi, (void)meta_hi, 0;
#endif
	const uint64_t *k = alloc_check_key;
	uint64_t x = ((uintptr_t)user ^ k[0]) * (size_hi ^ k[1]);
	x += (meta_hi ^ k[2]) * k[3];
	x ^= x >> 29;
	return x * k[4];
}
#define ALLOC_HDR_SIZE_IN(w) ((w) << (64 - ALLOC_SIZE_BITS))      /* bits 0-47 */
#define ALLOC_HDR_META_IN(w) ((w) << (64 - ALLOC_META_CHECK_SHIFT + 1)) /* bits 0-48 */

/* Write a header's size and meta words with their check bits.  `meta` is
** fresh from alloc_meta_pack: no check bits, not freed. */
static inline void alloc_hdr_seal(alloc_hdr_t *h, const void *user, uint64_t size, uint64_t meta)
{
	alloc_assert(!(size & ~ALLOC_SIZE_MASK) && !(meta >> (ALLOC_META_CHECK_SHIFT - 1)));
	uint64_t x = alloc_hdr_hash(user, ALLOC_HDR_SIZE_IN(size), ALLOC_HDR_META_IN(meta));
	h->size = size | (x >> ALLOC_SIZE_BITS << ALLOC_SIZE_BITS);
	h->meta = meta | (x << 16 >> ALLOC_META_CHECK_SHIFT << ALLOC_META_CHECK_SHIFT);
}

/* Do a header's check bits match?  (Zero when they do.) */
static inline uint64_t alloc_hdr_mismatch(const void *user, uint64_t sizew, uint64_t meta)
{
	uint64_t x = alloc_hdr_hash(user, ALLOC_HDR_SIZE_IN(sizew), ALLOC_HDR_META_IN(meta));
	return ((sizew ^ x) >> ALLOC_SIZE_BITS) | ((meta ^ (x << 16)) >> ALLOC_META_CHECK_SHIFT);
}

#endif /* ALLOC_CHECK_H */
