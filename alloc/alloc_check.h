/*
** alloc_check.h — the header check, inline, for alloc_core.c and
** alloc_fast.c: sealing a fresh header with its check bits, and telling
** whether a header read back still carries them.  The layout of the two
** words is in alloc_int.h (header section).
*/
#ifndef ALLOC_CHECK_H
#define ALLOC_CHECK_H

#include "alloc_int.h"

/* The per-process secret the check is keyed with: four words drawn by
** alloc_check_init when the layer starts (its shapes: alloc_hdr_hash). */
extern uint64_t alloc_check_key[4] ALLOC_INTERNAL;
void alloc_check_init(void) ALLOC_INTERNAL;

static inline alloc_hdr_t *alloc_hdr_of(const void *user)
{
	return (alloc_hdr_t *)user - 1;
}

/*
** The check: 30 bits of a keyed hash of the user address, the size and the
** meta bits below the check except the freed flag (so that a freed header
** still checks: double free); 16 on top of the size word, 14 on top of the
** meta word.
**
** Two keyed words are multiplied into 128 bits, and the two halves xored:
**   a = size word * k[0]  ^  address  ^  k[1]
**   b = meta word * k[2]  ^  k[3]
**   hash = high(a * b) ^ low(a * b)
** k[0] is an odd word shifted left by 16 and k[2] one shifted left by 15,
** so that the multiplications drop what lies above the size (the check)
** and above the meta bits (the freed flag and the check) at no cost, and
** each is a one-to-one map of its field; k[1] and k[3] are odd, so a and b
** are, and the product is one-to-one in either.  The meta bits are alone
** in b, and the size meets the address in a only through its secret
** multiplier, so that no change of one field can cancel a change of
** another without the secret.  The product is not linear in any input: a
** flipped bit i of a changes it by +-2^i * b (the sign from a's own bit),
** one of b by +-2^i * a, so the change of the check depends on the other
** word and on the secret.  Its high half carries a flip of a top bit over
** the whole word and its low half a flip of a low bit, so each of the 30
** bits taken (the top 30) depends on every input bit.
*/
static inline uint64_t alloc_hdr_hash(const void *user, uint64_t sizew, uint64_t metaw)
{
#if ALLOC_FLOOR == 1 || ALLOC_FLOOR == 2 || ALLOC_FLOOR >= 5
	/* bench/churn.sh's floors: no check (never a build for use) */
	return (void)user, (void)sizew, (void)metaw, 0;
#endif
	const uint64_t *k = alloc_check_key;
	uint64_t a = (sizew * k[0]) ^ (uintptr_t)user ^ k[1];
	uint64_t b = (metaw * k[2]) ^ k[3];
#if defined(__x86_64__)
	/* gcc 12 saves two more registers around the hash for the __int128
	** form: one mul, its halves in rdx:rax, is what it should be */
	uint64_t hi;
	__asm__("mulq %2" : "+a"(a), "=d"(hi) : "rm"(b) : "cc");
	return a ^ hi;
#else
	unsigned __int128 p = (unsigned __int128)a * b;
	return (uint64_t)(p >> 64) ^ (uint64_t)p;
#endif
}

/* Write a header's size and meta words with their check bits.  `meta` is
** fresh from alloc_meta_pack: no check bits, not freed. */
static inline void alloc_hdr_seal(alloc_hdr_t *h, const void *user, uint64_t size, uint64_t meta)
{
	alloc_assert(!(size & ~ALLOC_SIZE_MASK) && !(meta >> (ALLOC_META_CHECK_SHIFT - 1)));
	uint64_t x = alloc_hdr_hash(user, size, meta);
	h->size = size | (x >> ALLOC_SIZE_BITS << ALLOC_SIZE_BITS);
	h->meta = meta | (x >> (ALLOC_META_CHECK_SHIFT - 16) << ALLOC_META_CHECK_SHIFT);
}

/* Do a header's check bits match?  (Zero when they do.) */
static inline uint64_t alloc_hdr_mismatch(const void *user, uint64_t sizew, uint64_t meta)
{
	uint64_t x = alloc_hdr_hash(user, sizew, meta);
	return ((sizew ^ x) >> ALLOC_SIZE_BITS) | ((meta ^ (x << 16)) >> ALLOC_META_CHECK_SHIFT);
}

#endif /* ALLOC_CHECK_H */
