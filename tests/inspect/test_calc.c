/*
** test_calc.c — the computations of insp_calc.c on hand-made blocks and
** segments: holes inside and between segments, --min, the largest-holes
** heap, limits, the pseudo-segment of blocks outside every segment, the
** aggregate map, the oldest-blocks heap and the merge used by diff.
*/
#include "ui.h"

#include <stdlib.h>
#include <string.h>

/* Two segments: A [0x1000, 0x2000), B [0x10000, 0x20000). */
static const struct rd_seg two_segs[] = {
	{0x1000, 0x2000, 0, "rw-p", "[heap]"},
	{0x10000, 0x20000, 0, "rw-p", ""},
};

static void add_all(struct insp_scan *s, const uint64_t (*b)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		insp_scan_add(s, b[i][0], b[i][1]);
	insp_scan_finish(s);
}

/* header 16: a block occupies [addr - 16, addr + size). */
static const uint64_t blocks[][2] = {
	{0x1010, 0x10},  /* [0x1000, 0x1020)                       */
	{0x1030, 0x10},  /* [0x1020, 0x1040)  no hole              */
	{0x1070, 0x20},  /* [0x1060, 0x1090)  hole 0x20 = 32       */
	{0x1190, 0x30},  /* [0x1180, 0x11c0)  hole 0xf0 = 240      */
	{0x10010, 0x100}, /* [0x10000, 0x10110) between 0xee40     */
	{0x10510, 0x8},  /* [0x10500, 0x10518) hole 0x3f0 = 1008   */
};

Test(scan, holes_inside_and_between_segments)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	s.keep = 20;
	add_all(&s, blocks, 6);
	cr_assert_eq(s.blocks, 6);
	cr_assert_eq(s.bytes, 0x10 + 0x10 + 0x20 + 0x30 + 0x100 + 0x8);
	cr_assert_eq(s.holes, 3);
	cr_assert_eq(s.hole_bytes, 32 + 240 + 1008);
	cr_assert_eq(s.largest, 1008);
	cr_assert_eq(s.between, 1);
	cr_assert_eq(s.between_bytes, 0x10000 - 0x11c0);
	const struct insp_hole *bw = s.betweens.v;
	cr_assert_eq(bw[0].addr, 0x11c0);
	cr_assert_eq(bw[0].seg, 0);
	cr_assert_eq(bw[0].seg_to, 1);
	cr_assert_eq(s.seg[0].holes, 2);
	cr_assert_eq(s.seg[0].hole_bytes, 272);
	cr_assert_eq(s.seg[1].holes, 1);
	cr_assert_eq(s.seg[1].largest, 1008);
	cr_assert_eq(s.seg[2].blocks, 0, "no block outside the segments");
	insp_scan_free(&s);
}

Test(scan, histogram_is_log2)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	add_all(&s, blocks, 6);
	cr_assert_eq(s.hist[5], 1, "32 is in [32, 64)");
	cr_assert_eq(s.hist[7], 1, "240 is in [128, 256)");
	cr_assert_eq(s.hist[9], 1, "1008 is in [512, 1024)");
	cr_assert_eq(s.hist_bytes[9], 1008);
	cr_assert_eq(insp_log2(0), 0);
	cr_assert_eq(insp_log2(1), 0);
	cr_assert_eq(insp_log2(4096), 12);
	cr_assert_eq(insp_log2(4095), 11);
	cr_assert_eq(insp_log2(UINT64_MAX), 63);
	insp_scan_free(&s);
}

Test(scan, min_ignores_small_holes_and_gaps)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	s.min = 240;
	add_all(&s, blocks, 6);
	cr_assert_eq(s.holes, 2);
	cr_assert_eq(s.hole_bytes, 240 + 1008);
	cr_assert_eq(s.between, 1);
	insp_scan_free(&s);
	insp_scan_init(&s, two_segs, 2, 16);
	s.min = 0x10000;
	add_all(&s, blocks, 6);
	cr_assert_eq(s.holes, 0);
	cr_assert_eq(s.between, 0, "the gap between segments is smaller than min too");
	insp_scan_free(&s);
}

Test(scan, keeps_the_largest_holes_largest_first)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	s.keep = 2;
	add_all(&s, blocks, 6);
	const struct insp_hole *h = s.kept.v;
	cr_assert_eq(s.kept.n, 2);
	cr_assert_eq(h[0].size, 1008);
	cr_assert_eq(h[0].addr, 0x10110);
	cr_assert_eq(h[1].size, 240);
	insp_scan_free(&s);
}

Test(scan, keep_all_lists_holes_by_address)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	s.keep_all = true;
	add_all(&s, blocks, 6);
	const struct insp_hole *h = s.kept.v;
	cr_assert_eq(s.kept.n, 3);
	cr_assert_eq(h[0].addr, 0x1040);
	cr_assert_eq(h[1].addr, 0x1090);
	cr_assert_eq(h[2].addr, 0x10110);
	insp_scan_free(&s);
}

Test(scan, many_holes_heap_keeps_the_right_ones)
{
	struct insp_scan s;
	insp_scan_init(&s, NULL, 0, 0);
	s.keep = 5;
	uint64_t addr = 0x100000;
	for (uint64_t i = 0; i < 1000; i++) { /* hole sizes 1..1000 in a shuffled order */
		insp_scan_add(&s, addr, 8);
		addr += 8 + (i * 7919) % 1000 + 1;
	}
	insp_scan_finish(&s);
	const struct insp_hole *h = s.kept.v;
	cr_assert_eq(s.holes, 999);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(h[i].size, 1000 - (uint64_t)i, "kept[%d] = %llu", i, (unsigned long long)h[i].size);
	insp_scan_free(&s);
}

Test(scan, limits_overall_and_per_segment)
{
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	add_all(&s, blocks, 6);
	cr_assert_eq(s.low, 0x1000);
	cr_assert_eq(s.high, 0x10518);
	cr_assert_eq(s.seg[0].low, 0x1000);
	cr_assert_eq(s.seg[0].high, 0x11c0);
	cr_assert_eq(s.seg[1].low, 0x10000);
	cr_assert_eq(s.seg[1].high, 0x10518);
	insp_scan_free(&s);
}

Test(scan, blocks_outside_segments_form_a_pseudo_segment)
{
	static const uint64_t b[][2] = {{0x500, 0x10}, {0x600, 0x10}, {0x1010, 0x10}, {0x90000, 8}};
	struct insp_scan s;
	insp_scan_init(&s, two_segs, 2, 16);
	add_all(&s, b, 4);
	cr_assert_eq(s.seg[2].blocks, 3, "0x500, 0x600 and 0x90000 are outside");
	cr_assert_eq(s.holes, 1, "0x510 -> 0x5f0 is inside the pseudo-segment");
	cr_assert_eq(s.hole_bytes, 0x5f0 - 0x510);
	cr_assert_eq(s.between, 2, "into [heap] and out of it");
	insp_scan_free(&s);
}

Test(scan, no_segments_means_every_gap_is_a_hole)
{
	struct insp_scan s;
	insp_scan_init(&s, NULL, 0, 16);
	add_all(&s, blocks, 6);
	cr_assert_eq(s.holes, 4);
	cr_assert_eq(s.between, 0);
	cr_assert_eq(s.hole_bytes, 32 + 240 + 1008 + (0x10000 - 0x11c0));
	insp_scan_free(&s);
}

Test(scan, overlapping_and_odd_blocks_do_not_make_holes)
{
	/* a block inside a previous one, a header below address 0, a size
	** that wraps around: nothing is counted twice, nothing overflows */
	static const uint64_t b[][2] = {{0x8, 0x10}, {0x1000, 0x1000}, {0x1100, 0x10}, {0x1800, 0x10},
					{0x3000, UINT64_MAX}};
	struct insp_scan s;
	insp_scan_init(&s, NULL, 0, 16);
	add_all(&s, b, 5);
	cr_assert_eq(s.low, 0);
	cr_assert_eq(s.holes, 2);
	cr_assert_eq(s.hole_bytes, (0x1000 - 16 - 0x18) + (0x3000 - 16 - 0x2000));
	cr_assert_eq(s.high, UINT64_MAX);
	insp_scan_free(&s);
}

Test(scan, segment_lookup)
{
	cr_assert_eq(insp_seg_find(two_segs, 2, 0xfff), -1);
	cr_assert_eq(insp_seg_find(two_segs, 2, 0x1000), 0);
	cr_assert_eq(insp_seg_find(two_segs, 2, 0x1fff), 0);
	cr_assert_eq(insp_seg_find(two_segs, 2, 0x2000), -1);
	cr_assert_eq(insp_seg_find(two_segs, 2, 0x1ffff), 1);
	cr_assert_eq(insp_seg_find(two_segs, 2, 0x20000), -1);
	cr_assert_eq(insp_seg_find(NULL, 0, 0x1000), -1);
}

/* [vsyscall] at the top of the address space, last as rd_db_segments
** gives it: the cursor moves from the first segment, and the top one's
** end (0xffffffffff601000) neither wraps nor hides the others. */
Test(scan, the_top_segment_comes_last)
{
	static const struct rd_seg segs[] = {
		{0x1000, 0x2000, 0, "rw-p", "[heap]"},
		{0x10000, 0x20000, 0, "rw-p", ""},
		{0xffffffffff600000ull, 0xffffffffff601000ull, 0, "--xp", "[vsyscall]"},
	};
	struct insp_scan s;
	insp_scan_init(&s, segs, 3, 16);
	add_all(&s, blocks, 6);
	cr_assert_eq(s.seg[0].blocks, 4);
	cr_assert_eq(s.seg[1].blocks, 2);
	cr_assert_eq(s.seg[2].blocks, 0);
	cr_assert_eq(s.seg[3].blocks, 0, "no block outside the segments");
	cr_assert_eq(s.holes, 3);
	cr_assert_eq(insp_seg_find(segs, 3, 0xffffffffff600010ull), 2);
	cr_assert_eq(insp_seg_find(segs, 3, 0xffffffffff601000ull), -1);
	cr_assert_eq(insp_seg_find(segs, 3, 0x1ffff), 1);
	insp_scan_free(&s);
}

/* -------------------------------------------------------------- aggmap -- */

Test(aggmap, sums_per_key_and_sorts_by_bytes)
{
	struct insp_aggmap m;
	insp_aggmap_init(&m);
	for (int64_t i = 0; i < 5000; i++) {
		struct insp_agg *g = insp_aggmap_get(&m, i % 100 - 50);
		g->bytes += (uint64_t)(i % 100) + 1;
		g->blocks++;
	}
	insp_aggmap_get(&m, INT64_MIN)->bytes = 1;
	size_t n;
	struct insp_agg *v = insp_aggmap_sorted(&m, &n);
	cr_assert_eq(n, 101);
	cr_assert_eq(v[0].key, 49);
	cr_assert_eq(v[0].bytes, 100 * 50);
	cr_assert_eq(v[0].blocks, 50);
	cr_assert_eq(v[99].key, -50);
	cr_assert_eq(v[100].key, INT64_MIN);
	free(v);
	insp_aggmap_free(&m);
}

/* -------------------------------------------------------------- oldest -- */

Test(oldest, keeps_the_k_smallest_seq_in_order)
{
	struct insp_oldest h;
	insp_oldest_init(&h, 3);
	for (int64_t i = 0; i < 100; i++) {
		struct rd_block b = {.addr = (uint64_t)i, .seq = (i * 37) % 100};
		insp_oldest_add(&h, &b);
	}
	const struct rd_block *v = insp_oldest_sorted(&h);
	cr_assert_eq(h.n, 3);
	cr_assert_eq(v[0].seq, 0);
	cr_assert_eq(v[1].seq, 1);
	cr_assert_eq(v[2].seq, 2);
	insp_oldest_free(&h);
	insp_oldest_init(&h, 0);
	struct rd_block b = {.seq = 1};
	insp_oldest_add(&h, &b);
	cr_assert_eq(h.n, 0, "a limit of 0 keeps nothing");
	insp_oldest_free(&h);
}

/* --------------------------------------------------------------- merge -- */

struct tally {
	uint64_t a, b, both, b_bytes;
	int64_t first_b_seq;
};

static void t_a(void *c, const struct rd_block *x) { (void)x; ((struct tally *)c)->a++; }
static void t_b(void *c, const struct rd_block *y)
{
	struct tally *t = c;
	if (!t->b++)
		t->first_b_seq = y->seq;
	t->b_bytes += y->size;
}
static void t_both(void *c, const struct rd_block *x, const struct rd_block *y)
{
	(void)x, (void)y;
	((struct tally *)c)->both++;
}

/* Snapshots 1 and 3 of basic.sql: 4 blocks the same, b7's address reused
** with another seq (gone + new), 2 more gone and 2 more new. */
Test(merge, matches_blocks_by_address_and_seq)
{
	const char *path = ui_fixture("basic");
	struct rd_opts o = {.out = stdout, .err = stderr};
	rd_db_t *a, *b;
	cr_assert_eq(rd_db_open(path, &o, &a), 0);
	cr_assert_eq(rd_db_open(path, &o, &b), 0);
	cr_assert_eq(rd_db_select(a, 1, RD_NEED_MAP), 0);
	cr_assert_eq(rd_db_select(b, 3, RD_NEED_MAP), 0);
	rd_blocks_t ia, ib;
	cr_assert_eq(rd_blocks_open(a, NULL, &ia), 0);
	cr_assert_eq(rd_blocks_open(b, NULL, &ib), 0);
	struct tally t = {0};
	struct insp_merge_cb cb = {t_a, t_b, t_both, &t};
	cr_assert_eq(insp_merge(&ia, &ib, &cb, NULL), 0);
	cr_assert_eq(t.both, 4);
	cr_assert_eq(t.a, 3);
	cr_assert_eq(t.b, 3);
	cr_assert_eq(t.b_bytes, 800);
	cr_assert_eq(t.first_b_seq, 42, "by address the first new block is b9");
	rd_blocks_close(&ia);
	rd_blocks_close(&ib);
	rd_db_close(a);
	rd_db_close(b);
}
