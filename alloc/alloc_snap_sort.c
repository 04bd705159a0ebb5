/*
** alloc_snap_sort.c — a captured map put in address order after the
** program goes on: the sort, and the blocks read back one by one.
**
** A capture of a running program (peak, interval, signal, API: not the
** exit snapshot nor a leak check, alloc_snap_compact.c) copies the lists
** under the map's locks as they come, in 16 bytes a block
** (alloc_snap_rec16_t, issue 29: half the 32-byte records' memory, and no
** more work under the locks than their copy), and a block whose fields do
** not fit as a full record kept aside (its escape).  It is sorted here, by
** the thread that stores it, while the program runs.  A capture with more
** escapes than room for them is taken again in 32-byte records
** (im->wide): the memory of before, never more.
*/
#include "alloc_int.h"

#include <string.h>

/*
** Sort by address, in place: an MSD radix sort (American flag sort) on
** the bits that differ between the blocks only (a heap spans a few tens of
** bits; the low bits of aligned addresses never differ), 8 bits a level,
** at most 8 levels, runs of a few by insertion.  In place so that a
** capture needs no second buffer of its size (issue 29: the capture's
** memory per block).  `counts` holds ALLOC_SNAP_SORT_COUNTS.  Allocates
** nothing; its recursion is at most 8 frames deep.  Made three times
** below: for the 32-byte records, the 16-byte ones (whose escapes' keys
** are in `ctx`, the full records) and a compact capture's addresses.
*/
#define SNAP_SORT_SMALL 24 /* runs this short are sorted by insertion */
#define SNAP_SORT_DEFINE(NAME, T, KEY)                                                         \
	static void NAME##_small(T *r, size_t n, const void *ctx)                              \
	{                                                                                      \
		for (size_t i = 1; i < n; i++) {                                               \
			T x = r[i];                                                            \
			size_t j = i;                                                          \
			for (; j > 0 && KEY(r[j - 1], ctx) > KEY(x, ctx); j--)                 \
				r[j] = r[j - 1];                                               \
			r[j] = x;                                                              \
		}                                                                              \
	}                                                                                      \
	/* one digit of 8 bits at `shift`, then the next ones in each bucket;      \
	** `counts` holds 512 per level below this one */                         \
	static void NAME##_digit(T *r, size_t n, unsigned shift, unsigned lo, size_t *counts, \
				 const void *ctx)                                              \
	{                                                                                      \
		if (n <= SNAP_SORT_SMALL) {                                                    \
			NAME##_small(r, n, ctx);                                               \
			return;                                                                \
		}                                                                              \
		size_t *start = counts, *next = counts + 256;                                  \
		memset(start, 0, 256 * sizeof *start);                                         \
		for (size_t i = 0; i < n; i++)                                                 \
			start[(KEY(r[i], ctx) >> shift) & 255]++;                              \
		for (size_t d = 0, at = 0; d < 256; d++) {                                     \
			size_t k = start[d];                                                   \
			start[d] = next[d] = at;                                               \
			at += k;                                                               \
		}                                                                              \
		/* each into its bucket, in cycles (American flag sort) */                    \
		for (size_t d = 0; d < 256; d++) {                                             \
			size_t end = d < 255 ? start[d + 1] : n;                               \
			while (next[d] < end) {                                                \
				T x = r[next[d]];                                              \
				size_t e = (KEY(x, ctx) >> shift) & 255;                       \
				while (e != d) {                                               \
					T y = r[next[e]];                                      \
					r[next[e]++] = x;                                      \
					x = y;                                                 \
					e = (KEY(x, ctx) >> shift) & 255;                      \
				}                                                              \
				r[next[d]++] = x;                                              \
			}                                                                      \
		}                                                                              \
		if (shift == lo)                                                               \
			return;                                                                \
		for (size_t d = 0; d < 256; d++) {                                             \
			size_t end = d < 255 ? start[d + 1] : n;                               \
			if (end - start[d] > 1)                                                \
				NAME##_digit(r + start[d], end - start[d], shift - 8, lo, counts + 512, ctx); \
		}                                                                              \
	}                                                                                      \
	static void NAME##_ctx(T *r, size_t n, size_t *counts, const void *ctx)                \
	{                                                                                      \
		uint64_t differ = 0;                                                           \
		for (size_t i = 1; i < n; i++)                                                 \
			differ |= KEY(r[i], ctx) ^ KEY(r[0], ctx);                             \
		if (!differ)                                                                   \
			return;                                                                \
		unsigned lo = (unsigned)__builtin_ctzll(differ);                               \
		unsigned bits = 64 - (unsigned)__builtin_clzll(differ) - lo;                   \
		NAME##_digit(r, n, lo + 8 * ((bits + 7) / 8 - 1), lo, counts, ctx);            \
	}

#define SNAP_REC_KEY(x, ctx) ((x).addr)
#define SNAP_REC16_KEY(x, ctx) alloc_snap_rec16_addr(&(x), (const alloc_snap_rec_t *)(ctx))
#define SNAP_ADDR_KEY(x, ctx) (x)
SNAP_SORT_DEFINE(snap_sort_recs, alloc_snap_rec_t, SNAP_REC_KEY)
SNAP_SORT_DEFINE(snap_sort_rec16, alloc_snap_rec16_t, SNAP_REC16_KEY)
SNAP_SORT_DEFINE(snap_sort_addrs, uint64_t, SNAP_ADDR_KEY)

void alloc_snap_sort(alloc_snap_rec_t *recs, size_t n, size_t *counts)
{
	snap_sort_recs_ctx(recs, n, counts, NULL);
}

void alloc_snap_sort_rec16(alloc_snap_rec16_t *r, size_t n, size_t *counts, const alloc_snap_rec_t *esc)
{
	snap_sort_rec16_ctx(r, n, counts, esc);
}

void alloc_snap_sort_addrs(uint64_t *addr, size_t n, size_t *counts)
{
	snap_sort_addrs_ctx(addr, n, counts, NULL);
}

/*
** The records in address order, each address once.  A block listed twice is
** a map copied while another thread was half-way through moving it: a
** child made by a raw clone (no fork handler took the map's locks) copies
** whatever state its parent's other threads were in.  Such a child's
** snapshot keeps the first of the two, its totals less the other, rather
** than failing to store.  (A compact capture is unique when made, with
** its leak classes: none comes here.)  A capture spilled to its file is
** sorted there, its duplicates left out as it is read (alloc_snap_spill.c).
*/
bool alloc_snap_sort_unique(alloc_snap_t *im)
{
	if (im->unique)
		return true;
	im->unique = im->sorted = true;
	if (im->spill_runs && !alloc_snap_spill_sort(im)) {
		im->unique = im->sorted = false;
		return false;
	}
	if (im->spill_runs)
		return true;
	if (im->wide)
		snap_sort_recs_ctx(im->recs, im->nblocks, im->counts, NULL);
	else
		snap_sort_rec16_ctx(im->rec16, im->nblocks, im->counts, im->recs);
	size_t out = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < im->nblocks; i++) {
		alloc_snap_rec_t r;
		alloc_snap_rec_at(im, i, &r);
		if (out && r.addr == last) {
			im->bytes -= r.size;
			continue;
		}
		last = r.addr;
		if (im->wide)
			im->recs[out++] = im->recs[i];
		else
			im->rec16[out++] = im->rec16[i];
	}
	im->nblocks = out;
	return true;
}
