/*
** test_snapsort.c — unit tests of the snapshot's sort (alloc_snap_sort in
** alloc/alloc_snap_sort.c, in place): records come out in address order,
** each whole (its other fields moved with its address), whatever bits the
** addresses differ in (one level to the widest span user addresses can
** have, two heaps far apart), with equal addresses and with 0 to 3
** records, and runs around the insertion sort's size; a block listed
** twice kept once (alloc_snap_sort_unique); the 16-byte records' fields
** (alloc_snap_rec16_pack) at the edges of what fits.
*/
#include "ut.h"

#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Sort n records made by addr_of(i), each carrying its index i in seq,
** and check order and that each record moved whole. */
static void sort_check(size_t n, uint64_t (*addr_of)(size_t))
{
	alloc_snap_rec_t *r = calloc(n + 1, sizeof *r);
	uint64_t *addr = calloc(n + 1, sizeof *addr);
	size_t *counts = calloc(ALLOC_SNAP_SORT_COUNTS, sizeof *counts);
	unsigned char *seen = calloc(n + 1, 1);
	cr_assert(r && addr && counts && seen);
	for (size_t i = 0; i < n; i++)
		r[i] = (alloc_snap_rec_t){.addr = addr[i] = addr_of(i), .size = 3 * i, .seq = i,
					  .type = (uint32_t)i, .thread = i & 0xffffff, .allocator = i & 0xff};
	alloc_snap_sort(r, n, counts);
	for (size_t i = 0; i < n; i++) {
		size_t at = r[i].seq;
		cr_assert_lt(at, n);
		cr_assert_eq(r[i].addr, addr[at], "record %zu lost its address", i);
		cr_assert(r[i].size == 3 * at && r[i].type == (uint32_t)at && r[i].thread == (at & 0xffffff) &&
			  r[i].allocator == (at & 0xff), "record %zu not whole", i);
		cr_assert_eq(seen[at]++, 0, "record %zu twice", at);
		if (i)
			cr_assert_leq(r[i - 1].addr, r[i].addr, "records %zu and %zu out of order", i - 1, i);
	}
	free(r), free(addr), free(counts), free(seen);
}

static uint64_t heap_small(size_t i) { (void)i; return 0x555555550000ull + (rng() % 4096) * 16; }
static uint64_t heap_big(size_t i) { (void)i; return 0x555555550000ull + (rng() % (1ull << 30)) * 16; }
static uint64_t two_heaps(size_t i)
{
	return (i & 1 ? 0x7f0000000000ull : 0x555555550000ull) + (rng() % (1u << 20)) * 16;
}
static uint64_t any_user(size_t i) { (void)i; return (rng() & ((1ull << 47) - 1)) & ~7ull; }
static uint64_t odd_bits(size_t i) { (void)i; return rng(); } /* every bit may differ */
static uint64_t all_equal(size_t i) { (void)i; return 0x1000; }
static uint64_t descending(size_t i) { return 0x7ffff0000000ull - i * 48; }

Test(snapsort, orders_every_span)
{
	static uint64_t (*const kinds[])(size_t) = {heap_small, heap_big, two_heaps, any_user,
						     odd_bits, all_equal, descending};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (size_t n = 0; n <= 3; n++)
			sort_check(n, kinds[k]);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (size_t n = 20; n <= 30; n++) /* around the insertion sort's runs */
			sort_check(n, kinds[k]);
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		sort_check(100000, kinds[k]);
}

/* A block listed twice (a raw clone's copy of a map half-way through a
** move): kept once, the totals less the copy; in 32-byte records (wide)
** and in 16-byte ones, one of them an escape. */
Test(snapsort, a_block_listed_twice_is_kept_once)
{
	enum { N = 6 };
	static const uint64_t addr[N] = {0x3000, 0x1000, 0x2000, 0x1000, 0x3000, 0x3000};
	size_t *counts = calloc(ALLOC_SNAP_SORT_COUNTS, sizeof *counts);
	for (int wide = 0; wide <= 1; wide++) {
		static alloc_snap_rec_t recs[N];
		static alloc_snap_rec16_t rec16[N];
		alloc_snap_t im = {.recs = recs, .rec16 = wide ? NULL : rec16, .wide = wide, .counts = counts,
				   .nblocks = N};
		for (size_t i = 0; i < N; i++) {
			uint64_t size = i == 2 ? (1u << 20) + 5 : 10 * (i + 1); /* the third: an escape */
			recs[i] = (alloc_snap_rec_t){.addr = addr[i], .size = size, .seq = i};
			if (!wide && !alloc_snap_rec16_pack(&rec16[i], addr[i], size, 0, i)) {
				rec16[i].w1 = ALLOC_REC16_ESCAPE | i;
				cr_assert_eq(i, 2);
			}
			im.bytes += size;
		}
		alloc_snap_sort_unique(&im);
		cr_assert_eq(im.nblocks, 3);
		uint64_t kept = 0;
		for (size_t i = 0; i < 3; i++) {
			alloc_snap_rec_t r;
			alloc_snap_rec_at(&im, i, &r);
			cr_assert_eq(r.addr, 0x1000 * (i + 1));
			kept += r.size;
		}
		cr_assert_eq(im.bytes, kept, "totals %llu, the blocks kept %llu", (unsigned long long)im.bytes,
			     (unsigned long long)kept);
		alloc_snap_sort_unique(&im); /* once is enough */
		cr_assert_eq(im.nblocks, 3);
	}
	free(counts);
}

/* The 16-byte record: every field back as it was, at the edges of what
** fits; one bit past any edge (or an address not 16-aligned) does not fit. */
Test(snapsort, rec16_holds_what_fits_and_refuses_the_rest)
{
	static const struct {
		uint64_t addr, size, seq;
		uint32_t type, thread, allocator;
		bool fits;
	} c[] = {
		{0x10, 0, 0, 0, 0, 0, true},
		{(1ull << 48) - 16, (1u << 20) - 1, (1ull << 36) - 1, (1u << 17) - 1, 127, 7, true},
		{0x555555550040, 24, 123456789, 5, 3, 1, true},
		{1ull << 48, 1, 1, 1, 1, 1, false},
		{0x555555550048, 1, 1, 1, 1, 1, false},
		{0x10, 1u << 20, 1, 1, 1, 1, false},
		{0x10, 1, 1ull << 36, 1, 1, 1, false},
		{0x10, 1, 1, 1u << 17, 1, 1, false},
		{0x10, 1, 1, 1, 128, 1, false},
		{0x10, 1, 1, ALLOC_TYPE_MAX, ALLOC_THREAD_MAX, 7, false},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		alloc_snap_rec16_t r;
		uint64_t meta = alloc_meta_pack(c[i].type, c[i].thread, c[i].allocator, 0);
		cr_assert_eq(alloc_snap_rec16_pack(&r, c[i].addr, c[i].size, meta, c[i].seq), c[i].fits, "case %zu", i);
		if (!c[i].fits)
			continue;
		alloc_snap_rec_t out;
		alloc_snap_rec16_get(&r, NULL, &out);
		cr_assert(out.addr == c[i].addr && out.size == c[i].size && out.seq == c[i].seq &&
			  out.type == c[i].type && out.thread == c[i].thread && out.allocator == c[i].allocator,
			  "case %zu", i);
		cr_assert_eq(alloc_snap_rec16_addr(&r, NULL), c[i].addr);
	}
}
