/*
** insp_cmd_holes.c — `inspect holes` and `inspect limits`: the two views of
** a map by address (Erlang's holes and mem_limits), both computed by one
** pass of insp_scan over the blocks in address order (see insp_calc.c for
** exactly what a block occupies and what counts as a hole).
**
** Unlike Erlang's holes, gaps between two memory segments are reported
** apart from the holes inside a segment, using the segment table (the
** process's mappings when the snapshot was taken).
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>

#define HOLES_DEFAULT_LIMIT 20

/* The name of the pseudo-segment of blocks outside every listed one. */
static const char *seg_none(size_t nsegs)
{
	return nsegs ? "(outside every segment)" : "(no segments recorded)";
}

/* "0x10000 [heap]": a segment by its start and path. */
static const char *seg_label(char *buf, size_t len, const struct rd_seg *segs, size_t nsegs, int i)
{
	if (i < 0)
		snprintf(buf, len, "%s", seg_none(nsegs));
	else
		snprintf(buf, len, "0x%llx %s", (unsigned long long)segs[i].start,
			 *segs[i].path ? segs[i].path : "(anonymous)");
	return buf;
}

static void holes_add(void *scan, const struct rd_block *b)
{
	insp_scan_add(scan, b->addr, b->size);
}

/* Run the scan over the selected snapshot. */
static int holes_scan(struct rd_session *s, const struct rd_opts *o,
		      const struct rd_filter_ids *f, struct insp_scan *scan)
{
	int r = rd_blocks_each(s->db, o, f, holes_add, scan);
	if (!r)
		insp_scan_finish(scan);
	return r;
}

/* Start segment i's row with its start, end and perms (nulls for the
** blocks outside every segment, i == nsegs). */
static void seg_row(rd_table_t *t, const struct insp_scan *s, size_t i)
{
	rd_row(t);
	if (i < s->nsegs) {
		rd_put_uint(t, s->segs[i].start);
		rd_put_uint(t, s->segs[i].end);
		rd_put_str(t, s->segs[i].perms);
	} else {
		rd_put_null(t);
		rd_put_null(t);
		rd_put_null(t);
	}
}

static const char *seg_path(const struct insp_scan *s, size_t i)
{
	return i < s->nsegs ? s->segs[i].path : seg_none(s->nsegs);
}

typedef void scan_doc_fn(rd_doc_t *d, const struct insp_scan *s, const struct rd_args *a);

/* Scan the blocks of the snapshot open in s that pass f (NULL: all),
** counting the holes of min bytes or more (UINT64_MAX: none), and print
** the tables doc makes of the figures. */
static int scan_print(struct rd_session *s, const struct rd_opts *o, const struct rd_args *a,
		      const struct rd_filter_ids *f, uint64_t min, scan_doc_fn *doc)
{
	struct rd_seg *segs = NULL;
	size_t nsegs = 0;
	int r = rd_db_segments(s->db, &segs, &nsegs);
	if (!r) {
		struct insp_scan scan;
		insp_scan_init(&scan, segs, nsegs, (uint64_t)rd_db_snap(s->db)->header_size);
		scan.min = min;
		scan.keep_all = a->all;
		scan.keep = a->limit >= 0 ? (size_t)a->limit : HOLES_DEFAULT_LIMIT;
		if (!(r = holes_scan(s, o, f, &scan))) {
			rd_doc_t *d = rd_doc_new(o, a);
			rd_doc_snapshot(d, "snapshot", a->pos[0], rd_db_snap(s->db));
			doc(d, &scan, a);
			r = rd_doc_print(d);
			rd_doc_free(d);
		}
		insp_scan_free(&scan);
	}
	free(segs);
	return r;
}

/* ---------------------------------------------------------------- holes -- */

static const struct rd_option holes_options[] = {
	{"min", 0, RD_OT_SIZE, "SIZE", "ignore holes smaller than SIZE (4096, 4K, 1MiB…)", RD_ID_MIN, 0, 0, NULL},
	{"all", 0, RD_OT_FLAG, NULL, "list every hole, by address, not only the largest", RD_ID_ALL, 0, 0, NULL},
	RD_OPTION_LIMIT("list the N largest holes (default 20)"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec holes_spec = {
	"holes", "[options] DB",
	"The unused space between the blocks of a map snapshot.  A block occupies\n"
	"[address - header size, address + size): its meminst header and the bytes\n"
	"asked for.  A hole is a positive gap between the end of one block and the\n"
	"start of the next by address, so it includes what the backing allocator\n"
	"keeps around its chunks (its headers, rounding, alignment padding).\n"
	"\n"
	"Each block belongs to the segment (mapping) containing it.  A gap between\n"
	"two blocks of the same segment is a hole of that segment; a gap whose two\n"
	"sides lie in different segments is listed apart, under 'between'.\n"
	"Printed: a summary, the figures of each segment, the gaps between\n"
	"segments, a log2 histogram of the hole sizes and the largest holes.\n",
	holes_options, 1, 1,
};

static const struct rd_col holes_sum_cols[] = {
	{"header_bytes", "header size", RD_K_INT, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes in blocks", RD_K_SIZE, 0},
	{"holes", "holes in segments", RD_K_INT, 0},
	{"hole_bytes", "bytes in holes", RD_K_SIZE, 0},
	{"largest_bytes", "largest hole", RD_K_SIZE, 0},
	{"between", "gaps between segments", RD_K_INT, 0},
	{"between_bytes", "bytes between segments", RD_K_SIZE, 0},
	{"min_bytes", "smallest hole counted", RD_K_SIZE, 0},
};

static const struct rd_col holes_seg_cols[] = {
	{"start", "start", RD_K_ADDR, 0},
	{"end", "end", RD_K_ADDR, 0},
	{"perms", "perms", RD_K_STR, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"holes", "holes", RD_K_INT, 0},
	{"hole_bytes", "in holes", RD_K_SIZE, 0},
	{"largest_bytes", "largest", RD_K_SIZE, 0},
	{"path", "path", RD_K_STR, 0},
};

static const struct rd_col holes_between_cols[] = {
	{"from", "from", RD_K_ADDR, 0},
	{"to", "to", RD_K_ADDR, 0},
	{"bytes", "size", RD_K_SIZE, 0},
	{"from_segment", "from segment", RD_K_STR, 0},
	{"to_segment", "to segment", RD_K_STR, 0},
};

static const struct rd_col holes_hist_cols[] = {
	{"min_bytes", "from", RD_K_SIZE, 0},
	{"max_bytes", "to", RD_K_SIZE, 0},
	{"holes", "holes", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"bar", "", RD_K_STR, RD_C_TEXT_ONLY},
};

static const struct rd_col holes_list_cols[] = {
	{"addr", "address", RD_K_ADDR, 0},
	{"bytes", "size", RD_K_SIZE, 0},
	{"segment", "segment", RD_K_STR, 0},
};

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static void holes_summary(rd_doc_t *d, const struct insp_scan *s)
{
	rd_table_t *t = rd_doc_table(d, "summary", holes_sum_cols, NCOLS(holes_sum_cols), RD_T_SINGLE);
	rd_row(t);
	rd_put_uint(t, s->header);
	rd_put_uint(t, s->blocks);
	rd_put_uint(t, s->bytes);
	rd_put_uint(t, s->holes);
	rd_put_uint(t, s->hole_bytes);
	rd_put_uint(t, s->largest);
	rd_put_uint(t, s->between);
	rd_put_uint(t, s->between_bytes);
	rd_put_uint(t, s->min);
}

static void holes_segments(rd_doc_t *d, const struct insp_scan *s)
{
	rd_table_t *t = rd_doc_table(d, "segments", holes_seg_cols, NCOLS(holes_seg_cols), 0);
	rd_table_title(t, "segments with blocks:");
	for (size_t i = 0; i <= s->nsegs; i++) {
		const struct insp_seg_stat *st = &s->seg[i];
		if (!st->blocks)
			continue;
		seg_row(t, s, i);
		rd_put_uint(t, st->blocks);
		rd_put_uint(t, st->bytes);
		rd_put_uint(t, st->holes);
		rd_put_uint(t, st->hole_bytes);
		rd_put_uint(t, st->largest);
		rd_put_str(t, seg_path(s, i));
	}
}

static void holes_between(rd_doc_t *d, const struct insp_scan *s)
{
	rd_table_t *t = rd_doc_table(d, "between", holes_between_cols, NCOLS(holes_between_cols), 0);
	rd_table_title(t, "gaps between segments:");
	const struct insp_hole *h = s->betweens.v;
	char a[512], b[512];
	for (size_t i = 0; i < s->betweens.n; i++) {
		rd_row(t);
		rd_put_uint(t, h[i].addr);
		rd_put_uint(t, h[i].addr + h[i].size);
		rd_put_uint(t, h[i].size);
		rd_put_str(t, seg_label(a, sizeof a, s->segs, s->nsegs, h[i].seg));
		rd_put_str(t, seg_label(b, sizeof b, s->segs, s->nsegs, h[i].seg_to));
	}
}

static void holes_histogram(rd_doc_t *d, const struct insp_scan *s)
{
	rd_table_t *t = rd_doc_table(d, "histogram", holes_hist_cols, NCOLS(holes_hist_cols), 0);
	rd_table_title(t, "hole sizes (log2 buckets):");
	uint64_t most = 0;
	for (int k = 0; k < 64; k++)
		most = s->hist[k] > most ? s->hist[k] : most;
	for (int k = 0; k < 64; k++) {
		if (!s->hist[k])
			continue;
		char bar[41];
		size_t w = (size_t)((s->hist[k] * 40 + most - 1) / most);
		memset(bar, '#', w);
		bar[w] = 0;
		rd_row(t);
		rd_put_uint(t, 1ull << k);
		rd_put_uint(t, k == 63 ? UINT64_MAX : (2ull << k) - 1);
		rd_put_uint(t, s->hist[k]);
		rd_put_uint(t, s->hist_bytes[k]);
		rd_put_str(t, bar);
	}
}

static void holes_list(rd_doc_t *d, const struct insp_scan *s, bool all)
{
	rd_table_t *t = rd_doc_table(d, "holes", holes_list_cols, NCOLS(holes_list_cols), 0);
	if (all)
		rd_table_title(t, "every hole, by address:");
	else
		rd_table_title(t, "the %zu largest holes:", s->kept.n);
	const struct insp_hole *h = s->kept.v;
	char label[512];
	for (size_t i = 0; i < s->kept.n; i++) {
		rd_row(t);
		rd_put_uint(t, h[i].addr);
		rd_put_uint(t, h[i].size);
		rd_put_str(t, seg_label(label, sizeof label, s->segs, s->nsegs, h[i].seg));
	}
	if (!all && s->holes > s->kept.n)
		rd_table_note(t, "(%llu more; --all lists every hole)",
				(unsigned long long)(s->holes - s->kept.n));
}

static void holes_doc(rd_doc_t *d, const struct insp_scan *s, const struct rd_args *a)
{
	holes_summary(d, s);
	holes_segments(d, s);
	holes_between(d, s);
	holes_histogram(d, s);
	holes_list(d, s, a->all);
}

int insp_cmd_holes(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&holes_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_MAP)))
		r = scan_print(&s, o, &a, NULL, a.min, holes_doc);
	rd_session_close(&s);
	return r;
}

/* --------------------------------------------------------------- limits -- */

static const struct rd_option limits_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FILTER,
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec limits_spec = {
	"limits", "[options] DB",
	"The lowest and the highest address used by blocks (Erlang's mem_limits),\n"
	"overall and per segment.  low is where the first block's header starts,\n"
	"high is the end of the block that ends last; span = high - low.\n"
	"The filters restrict the blocks looked at.\n",
	limits_options, 1, 1,
};

static const struct rd_col limits_cols[] = {
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"low", "low", RD_K_ADDR, 0},
	{"high", "high", RD_K_ADDR, 0},
	{"span_bytes", "span", RD_K_SIZE, 0},
};

static const struct rd_col limits_seg_cols[] = {
	{"start", "start", RD_K_ADDR, 0},
	{"end", "end", RD_K_ADDR, 0},
	{"perms", "perms", RD_K_STR, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"low", "low", RD_K_ADDR, 0},
	{"high", "high", RD_K_ADDR, 0},
	{"span_bytes", "span", RD_K_SIZE, 0},
	{"path", "path", RD_K_STR, 0},
};

static void limits_put(rd_table_t *t, uint64_t blocks, uint64_t bytes, uint64_t low, uint64_t high)
{
	rd_put_uint(t, blocks);
	rd_put_uint(t, bytes);
	if (!blocks) {
		rd_put_null(t);
		rd_put_null(t);
		rd_put_null(t);
		return;
	}
	rd_put_uint(t, low);
	rd_put_uint(t, high);
	rd_put_uint(t, high - low);
}

static void limits_doc(rd_doc_t *d, const struct insp_scan *s, const struct rd_args *a)
{
	rd_table_t *t = rd_doc_table(d, "limits", limits_cols, NCOLS(limits_cols), RD_T_SINGLE);
	rd_row(t);
	limits_put(t, s->blocks, s->bytes, s->low, s->high);
	t = rd_doc_table(d, "segments", limits_seg_cols, NCOLS(limits_seg_cols), 0);
	rd_table_title(t, "per segment:");
	for (size_t i = 0; i <= s->nsegs; i++) {
		const struct insp_seg_stat *st = &s->seg[i];
		if (!st->blocks)
			continue;
		seg_row(t, s, i);
		limits_put(t, st->blocks, st->bytes, st->low, st->high);
		rd_put_str(t, seg_path(s, i));
	}
}

int insp_cmd_limits(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&limits_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	struct rd_filter_ids f;
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_MAP)) && !(r = rd_session_filter(&s, &a, &f)))
		r = scan_print(&s, o, &a, &f, UINT64_MAX, limits_doc); /* no hole bookkeeping */
	rd_session_close(&s);
	return r;
}
