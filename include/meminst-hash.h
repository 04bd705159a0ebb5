/*
** meminst-hash.h — FNV-1a, 64 bits: the one string and byte hash of the
** runtime and of the commands (hash tables, "has this changed" checks,
** "said this already").  Never stored in a file: a hash is only compared
** with hashes of the same process.
**
** Internal (not installed).  h is the hash so far: MEMINST_FNV_START for
** a new one, so that several fields can be folded into one.
*/
#ifndef MEMINST_HASH_H
#define MEMINST_HASH_H

#include <stddef.h>
#include <stdint.h>

#define MEMINST_FNV_START 0xcbf29ce484222325ull

static inline uint64_t meminst_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* A string's bytes, its terminating NUL left out. */
static inline uint64_t meminst_fnv_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

#endif /* MEMINST_HASH_H */
