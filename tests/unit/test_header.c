/*
** test_header.c — unit tests of the block header (alloc/alloc_int.h,
** alloc/alloc_core.c).
**
** The meta word packs type, thread, allocator and padding into fixed bit
** ranges; these tests check that each field round-trips at its limits
** without touching its neighbours or the flag and check bits.  Then, for
** each mode and backend, that the header has the documented size and sits
** right in front of the user pointer, that user pointers keep malloc's
** 16-byte alignment and any larger alignment asked for, that the usable
** size covers the request and can be written in full, and that mim mode
** puts every live block on the map.
*/
#include "ut.h"
#include "alloc_check.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* ----------------------------------------------------------- meta word -- */

Test(header, struct_sizes)
{
	cr_assert_eq(sizeof(alloc_hdr_t), 16);
	cr_assert_eq(sizeof(alloc_mhdr_t), 32);
	cr_assert_eq(offsetof(alloc_mhdr_t, h), 16, "links first, then the mis header");
}

Test(header, meta_round_trip)
{
	static const uint32_t types[] = {0, 1, 12345, ALLOC_TYPE_MAX};
	static const uint32_t threads[] = {0, 1, 777, ALLOC_THREAD_MAX};
	static const unsigned allocators[] = {0, ALLOC_A_REALLOC, ALLOC_A_NEW_ARRAY, 7};
	static const unsigned pads[] = {0, 4, 5, 20, 63};
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			for (int c = 0; c < 4; c++)
				for (int d = 0; d < 5; d++) {
					uint64_t m = alloc_meta_pack(types[a], threads[b], allocators[c], pads[d]);
					cr_assert_eq(alloc_meta_type(m), types[a]);
					cr_assert_eq(alloc_meta_thread(m), threads[b]);
					cr_assert_eq(alloc_meta_allocator(m), allocators[c]);
					cr_assert_eq(alloc_meta_pad_log2(m), pads[d]);
					cr_assert_eq(m >> 48, 0, "fields spill into flag/check bits");
				}
}

/* Each field owns exactly its documented bits. */
Test(header, meta_bit_ranges)
{
	cr_assert_eq(alloc_meta_pack(ALLOC_TYPE_MAX, 0, 0, 0), (1ull << 20) - 1);
	cr_assert_eq(alloc_meta_pack(0, ALLOC_THREAD_MAX, 0, 0), ((1ull << 19) - 1) << 20);
	cr_assert_eq(alloc_meta_pack(0, 0, 7, 0), 7ull << 39);
	cr_assert_eq(alloc_meta_pack(0, 0, 0, 63), 63ull << 42);
	cr_assert_eq(ALLOC_META_UNTRACKED, 1ull << 48);
	cr_assert_eq(ALLOC_META_FREED, 1ull << 49);
	uint64_t flags = ALLOC_META_UNTRACKED | ALLOC_META_FREED | (0x3fffull << 50);
	uint64_t m = alloc_meta_pack(5, 6, 3, 4) | flags;
	cr_assert_eq(alloc_meta_type(m), 5);
	cr_assert_eq(alloc_meta_thread(m), 6);
	cr_assert_eq(alloc_meta_allocator(m), 3);
	cr_assert_eq(alloc_meta_pad_log2(m), 4, "flag and check bits leak into the pad");
}

/* -------------------------------------------------------- the check ---- */

static uint64_t hdr_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A sealed header of a random 16-aligned address, size and meta word. */
static void hdr_random(uint64_t *rng, uintptr_t *user, alloc_hdr_t *h)
{
	*user = (uintptr_t)(hdr_rng(rng) & ((1ull << 47) - 16));
	uint64_t size = hdr_rng(rng) >> (16 + hdr_rng(rng) % 48);
	uint64_t meta = alloc_meta_pack((uint32_t)hdr_rng(rng) & ALLOC_TYPE_MAX,
					(uint32_t)hdr_rng(rng) & ALLOC_THREAD_MAX, hdr_rng(rng) % 7,
					4 + hdr_rng(rng) % 8);
	if (hdr_rng(rng) & 1)
		meta |= ALLOC_META_UNTRACKED;
	alloc_hdr_seal(h, (void *)*user, size, meta);
}

/* The three inputs of the check, by field: the address (bits 4-46: a
** 16-aligned user address below 2^47), the size (bits 0-47) and the meta
** bits (0-48: all but the freed flag). */
enum { HDR_ADDR, HDR_SIZE, HDR_META };
static const char *const hdr_field_name[] = {"address", "size", "meta"};
static const int hdr_field_lo[] = {4, 0, 0}, hdr_field_hi[] = {46, 47, 48};

static void hdr_flip(int field, int bit, uintptr_t *user, uint64_t *size, uint64_t *meta)
{
	if (field == HDR_ADDR)
		*user ^= 1ull << bit;
	else if (field == HDR_SIZE)
		*size ^= 1ull << bit;
	else
		*meta ^= 1ull << bit;
}

/* The 30 check bits of a header sealed with these inputs. */
static uint64_t hdr_check_bits(uintptr_t user, uint64_t size, uint64_t meta)
{
	alloc_hdr_t g;
	alloc_hdr_seal(&g, (void *)user, size, meta);
	return (g.size >> 48) << 14 | g.meta >> 50;
}

/* A random header's inputs: a 16-aligned address, a size and meta bits
** (the freed flag clear), without their check bits. */
static void hdr_random_inputs(uint64_t *rng, uintptr_t *user, uint64_t *size, uint64_t *meta)
{
	alloc_hdr_t h;
	hdr_random(rng, user, &h);
	*size = h.size & ALLOC_SIZE_MASK;
	*meta = h.meta & ((1ull << 49) - 1);
}

/* Any one bit of either word or of the address changed, or the address
** moved by 16, and the check fails; the freed flag alone is outside it (a
** double free is told from a foreign pointer). */
Test(header, every_bit_is_checked)
{
	ut_start("mis");
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int n = 0; n < 200; n++) {
		uintptr_t user;
		alloc_hdr_t h;
		hdr_random(&rng, &user, &h);
		cr_assert_eq(alloc_hdr_mismatch((void *)user, h.size, h.meta), 0);
		cr_assert_eq(alloc_hdr_mismatch((void *)user, h.size, h.meta | ALLOC_META_FREED), 0);
		cr_assert_neq(alloc_hdr_mismatch((void *)(user + 16), h.size, h.meta), 0);
		for (int b = 0; b < 64; b++) {
			cr_assert_neq(alloc_hdr_mismatch((void *)user, h.size ^ (1ull << b), h.meta), 0,
				      "size bit %d", b);
			if (b != 49)
				cr_assert_neq(alloc_hdr_mismatch((void *)user, h.size, h.meta ^ (1ull << b)), 0,
					      "meta bit %d", b);
		}
		for (int b = hdr_field_lo[HDR_ADDR]; b <= hdr_field_hi[HDR_ADDR]; b++)
			cr_assert_neq(alloc_hdr_mismatch((void *)(user ^ (1ull << b)), h.size, h.meta), 0,
				      "address bit %d", b);
	}
}

/*
** Not linear: changing one input bit changes the check bits by a
** difference that depends on the rest of the header (with a hash linear in
** its inputs before a fixed mix, one header's difference would forge
** another's).  Over 64 headers, each input bit's differences take many
** values.
*/
Test(header, check_differences_vary)
{
	ut_start("mis");
	uint64_t rng = 0x2545f4914f6cdd1dull;
	for (int field = HDR_ADDR; field <= HDR_META; field++)
		for (int b = hdr_field_lo[field]; b <= hdr_field_hi[field]; b++) {
			uint64_t seen[64];
			int distinct = 0;
			for (int n = 0; n < 64; n++) {
				uintptr_t user;
				uint64_t size, meta;
				hdr_random_inputs(&rng, &user, &size, &meta);
				uint64_t d = hdr_check_bits(user, size, meta);
				hdr_flip(field, b, &user, &size, &meta);
				d ^= hdr_check_bits(user, size, meta);
				int k = 0;
				while (k < distinct && seen[k] != d)
					k++;
				if (k == distinct)
					seen[distinct++] = d;
			}
			cr_assert_geq(distinct, 32, "%s bit %d: %d distinct check differences in 64",
				      hdr_field_name[field], b, distinct);
		}
}

/*
** No change of one field cancels a change of another: with the inputs
** combined into one word before the mix (say the address xor the size
** shifted, or the meta bits added in), moving a header by some bytes and
** changing its size or meta bits by the matching bits would keep its
** check, and a header could be forged from any other without the secret.
** Every pair of bits of two different fields, flipped together, changes
** the check, on 4 headers.
*/
Test(header, field_changes_do_not_cancel)
{
	ut_start("mis");
	uint64_t rng = 0x8f1bbcdc5a827999ull;
	for (int n = 0; n < 4; n++) {
		uintptr_t user0;
		uint64_t size0, meta0;
		hdr_random_inputs(&rng, &user0, &size0, &meta0);
		for (int f = HDR_ADDR; f < HDR_META; f++)
			for (int g = f + 1; g <= HDR_META; g++)
				for (int i = hdr_field_lo[f]; i <= hdr_field_hi[f]; i++)
					for (int j = hdr_field_lo[g]; j <= hdr_field_hi[g]; j++) {
						uintptr_t user = user0;
						uint64_t size = size0, meta = meta0;
						hdr_flip(f, i, &user, &size, &meta);
						hdr_flip(g, j, &user, &size, &meta);
						cr_assert_neq(hdr_check_bits(user, size, meta),
							      hdr_check_bits(user0, size0, meta0),
							      "%s bit %d and %s bit %d", hdr_field_name[f], i,
							      hdr_field_name[g], j);
					}
	}
}

/* ------------------------------------------------------- live blocks ---- */

ParameterizedTestParameters(header, layout)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

static unsigned hdr_log2(size_t v)
{
	return (unsigned)(63 - __builtin_clzll(v));
}

/* Check a live block's header, alignment and usable size, and write it
** to the last usable byte (a header overwritten by the backend, or a usable
** size too large, shows up when the block is freed and counted out). */
static void hdr_check_block(void *p, size_t size, size_t align, unsigned allocator)
{
	size_t hs = alloc_hdr_size;
	cr_assert_not_null(p);
	cr_assert_eq((uintptr_t)p % align, 0, "%p not aligned to %zu", p, align);
	alloc_hdr_t *h = (alloc_hdr_t *)p - 1;
	cr_assert_eq(alloc_hdr_bytes(h), size);
	cr_assert_eq(alloc_meta_allocator(h->meta), allocator);
	cr_assert_eq(alloc_meta_thread(h->meta), alloc_tls.thread_no);
	cr_assert_neq(alloc_meta_thread(h->meta), 0);
	cr_assert_eq(alloc_meta_pad_log2(h->meta), hdr_log2(align > hs ? align : hs),
		     "size %zu align %zu", size, align);
	cr_assert_eq(h->meta & (ALLOC_META_FREED | ALLOC_META_UNTRACKED), 0);
	size_t usable = alloc_core_usable_size(p);
	cr_assert_geq(usable, size, "usable %zu < %zu", usable, size);
	memset(p, 0xee, usable);
}

ParameterizedTest(int *mode, header, layout)
{
	static const size_t sizes[] = {0, 1, 7, 15, 16, 17, 100, 1000, 4096, 100000, 1 << 20};
	ut_start(ut_modes[*mode]);
	size_t hs = alloc_mode == MEMINST_MODE_MIM ? 32 : 16;
	cr_assert_eq(meminst_header_size(), hs);
	cr_assert_eq(alloc_hdr_size, hs);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		void *p = alloc_core_malloc(sizes[i], ALLOC_A_MALLOC, ut_site(1), 0);
		hdr_check_block(p, sizes[i], 16, ALLOC_A_MALLOC);
		cr_assert_eq(alloc_map_count(), alloc_mode == MEMINST_MODE_MIM ? 1 : 0);
		if (alloc_mode == MEMINST_MODE_MIM) {
			alloc_mhdr_t *m = (alloc_mhdr_t *)p - 1;
			alloc_list_t *l = alloc_map_list(alloc_at_list(m->at));
			cr_assert_not_null(l, "the header names no list");
			uintptr_t bit;
			uint64_t *bits = alloc_map_leaf(l, m, false, &bit);
			cr_assert(bits && alloc_map_test(bits, bit), "not in the map of the list its header names");
			cr_assert_eq((uint32_t)m->at, 0, "the header's `at` has only a list number");
		}
		alloc_core_free(p, ut_site(1));
		cr_assert_eq(alloc_map_count(), 0);
		UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	}
}

ParameterizedTestParameters(header, aligned)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

ParameterizedTest(int *mode, header, aligned)
{
	static const size_t sizes[] = {1, 24, 5000};
	ut_start(ut_modes[*mode]);
	for (size_t align = 32; align <= (1u << 20); align *= 2)
		for (size_t i = 0; i < 3; i++) {
			void *p = alloc_core_aligned(align, sizes[i], ALLOC_A_ALIGNED, ut_site(2));
			hdr_check_block(p, sizes[i], align, ALLOC_A_ALIGNED);
			UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_ALIGNED, sizes[i], 1);
			alloc_core_free(p, ut_site(2));
		}
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
}

ParameterizedTestParameters(header, small_alignments)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

/* Alignments up to 16 are malloc's own: no extra padding, allocator kept. */
ParameterizedTest(int *mode, header, small_alignments)
{
	ut_start(ut_modes[*mode]);
	for (size_t align = 1; align <= 16; align *= 2) {
		void *p = alloc_core_aligned(align, 40, ALLOC_A_VALLOC, ut_site(3));
		hdr_check_block(p, 40, 16, ALLOC_A_VALLOC);
		alloc_core_free(p, ut_site(3));
	}
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

ParameterizedTestParameters(header, calloc)
{
	static int idx[] = {0, 1, 2, 3};
	return cr_make_param_array(int, idx, ut_nmodes);
}

ParameterizedTest(int *mode, header, calloc)
{
	ut_start(ut_modes[*mode]);
	for (int round = 0; round < 3; round++) {
		unsigned char *p = alloc_core_calloc(37, 11, ut_site(4), 0);
		hdr_check_block(p, 37 * 11, 16, ALLOC_A_CALLOC);
		/* hdr_check_block dirtied it; the next round may get the same memory */
		alloc_core_free(p, ut_site(4));
		p = alloc_core_calloc(37, 11, ut_site(4), 0);
		for (size_t i = 0; i < 37 * 11; i++)
			cr_assert_eq(p[i], 0, "byte %zu of calloc'd block is %d", i, p[i]);
		alloc_core_free(p, ut_site(4));
	}
	errno = 0;
	cr_assert_null(alloc_core_calloc(SIZE_MAX / 8, 16, ut_site(4), 0));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(alloc_core_malloc(SIZE_MAX - 8, ALLOC_A_MALLOC, ut_site(4), 0));
	cr_assert_eq(errno, ENOMEM);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cr_assert_eq(ut_peek(MEMINST_STATUS_TOTAL, 0).blocks.max_ever, 1, "a failed allocation was counted");
}

Test(header, usable_size_of_foreign_pointers)
{
	static _Alignas(16) char buf[64];
	ut_start("mim");
	cr_assert_eq(alloc_core_usable_size(NULL), 0);
	cr_assert_eq(alloc_core_usable_size(buf + 1), 0, "an unaligned pointer is not ours");
}
