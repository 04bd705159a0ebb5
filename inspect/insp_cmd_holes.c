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
static const char *seg_label(char *buf, size_t len, const struct insp_seg *segs, size_t nsegs, int i)
{
	if (i < 0)
		snprintf(buf, len, "%s", seg_none(nsegs));
	else
		snprintf(buf, len, "0x%llx %s", (unsigned long long)segs[i].start,
			 *segs[i].path ? segs[i].path : "(anonymous)");
	return buf;
}

static void holes_add(void *scan, const struct insp_block *b)
{
	insp_scan_add(scan, b->addr, b->size);
}

/* Run the scan over the selected snapshot. */
static int holes_scan(struct insp_session *s, const struct insp_opts *o,
		      const struct insp_filter_ids *f, struct insp_scan *scan)
{
	int r = insp_blocks_each(s->db, o, f, holes_add, scan);
	if (!r)
		insp_scan_finish(scan);
	return r;
}

/* Start segment i's row with its start, end and perms (nulls for the
** blocks outside every segment, i == nsegs). */
static void seg_row(insp_table_t *t, const struct insp_scan *s, size_t i)
{
	insp_row(t);
	if (i < s->nsegs) {
		insp_put_uint(t, s->segs[i].start);
		insp_put_uint(t, s->segs[i].end);
		insp_put_str(t, s->segs[i].perms);
	} else {
		insp_put_null(t);
		insp_put_null(t);
		insp_put_null(t);
	}
}

static const char *seg_path(const struct insp_scan *s, size_t i)
{
	return i < s->nsegs ? s->segs[i].path : seg_none(s->nsegs);
}

typedef void scan_doc_fn(insp_doc_t *d, const struct insp_scan *s, const struct insp_args *a);

/* Scan the blocks of the snapshot open in s that pass f (NULL: all),
** counting the holes of min bytes or more (UINT64_MAX: none), and print
** the tables doc makes of the figures. */
static int scan_print(struct insp_session *s, const struct insp_opts *o, const struct insp_args *a,
		      const struct insp_filter_ids *f, uint64_t min, scan_doc_fn *doc)
{
	struct insp_seg *segs = NULL;
	size_t nsegs = 0;
	int r = insp_db_segments(s->db, &segs, &nsegs);
	if (!r) {
		struct insp_scan scan;
		insp_scan_init(&scan, segs, nsegs, (uint64_t)insp_db_snap(s->db)->header_size);
		scan.min = min;
		scan.keep_all = a->all;
		scan.keep = a->limit >= 0 ? (size_t)a->limit : HOLES_DEFAULT_LIMIT;
		if (!(r = holes_scan(s, o, f, &scan))) {
			insp_doc_t *d = insp_doc_new(o, a);
			insp_doc_snapshot(d, "snapshot", a->pos[0], insp_db_snap(s->db));
			doc(d, &scan, a);
			r = insp_doc_print(d);
			insp_doc_free(d);
		}
		insp_scan_free(&scan);
	}
	free(segs);
	return r;
}

/* ---------------------------------------------------------------- holes -- */

static const struct insp_option holes_options[] = {
	{"min", 0, INSP_OT_SIZE, "SIZE", "ignore holes smaller than SIZE (4096, 4K, 1MiB…)", INSP_ID_MIN, 0, 0, NULL},
	{"all", 0, INSP_OT_FLAG, NULL, "list every hole, by address, not only the largest", INSP_ID_ALL, 0, 0, NULL},
	INSP_OPTION_LIMIT("list the N largest holes (default 20)"),
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec holes_spec = {
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

static const struct insp_col holes_sum_cols[] = {
	{"header_bytes", "header size", INSP_K_INT, 0},
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes in blocks", INSP_K_SIZE, 0},
	{"holes", "holes in segments", INSP_K_INT, 0},
	{"hole_bytes", "bytes in holes", INSP_K_SIZE, 0},
	{"largest_bytes", "largest hole", INSP_K_SIZE, 0},
	{"between", "gaps between segments", INSP_K_INT, 0},
	{"between_bytes", "bytes between segments", INSP_K_SIZE, 0},
	{"min_bytes", "smallest hole counted", INSP_K_SIZE, 0},
};

static const struct insp_col holes_seg_cols[] = {
	{"start", "start", INSP_K_ADDR, 0},
	{"end", "end", INSP_K_ADDR, 0},
	{"perms", "perms", INSP_K_STR, 0},
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"holes", "holes", INSP_K_INT, 0},
	{"hole_bytes", "in holes", INSP_K_SIZE, 0},
	{"largest_bytes", "largest", INSP_K_SIZE, 0},
	{"path", "path", INSP_K_STR, 0},
};

static const struct insp_col holes_between_cols[] = {
	{"from", "from", INSP_K_ADDR, 0},
	{"to", "to", INSP_K_ADDR, 0},
	{"bytes", "size", INSP_K_SIZE, 0},
	{"from_segment", "from segment", INSP_K_STR, 0},
	{"to_segment", "to segment", INSP_K_STR, 0},
};

static const struct insp_col holes_hist_cols[] = {
	{"min_bytes", "from", INSP_K_SIZE, 0},
	{"max_bytes", "to", INSP_K_SIZE, 0},
	{"holes", "holes", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"bar", "", INSP_K_STR, INSP_C_TEXT_ONLY},
};

static const struct insp_col holes_list_cols[] = {
	{"addr", "address", INSP_K_ADDR, 0},
	{"bytes", "size", INSP_K_SIZE, 0},
	{"segment", "segment", INSP_K_STR, 0},
};

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static void holes_summary(insp_doc_t *d, const struct insp_scan *s)
{
	insp_table_t *t = insp_doc_table(d, "summary", holes_sum_cols, NCOLS(holes_sum_cols), INSP_T_SINGLE);
	insp_row(t);
	insp_put_uint(t, s->header);
	insp_put_uint(t, s->blocks);
	insp_put_uint(t, s->bytes);
	insp_put_uint(t, s->holes);
	insp_put_uint(t, s->hole_bytes);
	insp_put_uint(t, s->largest);
	insp_put_uint(t, s->between);
	insp_put_uint(t, s->between_bytes);
	insp_put_uint(t, s->min);
}

static void holes_segments(insp_doc_t *d, const struct insp_scan *s)
{
	insp_table_t *t = insp_doc_table(d, "segments", holes_seg_cols, NCOLS(holes_seg_cols), 0);
	insp_table_title(t, "segments with blocks:");
	for (size_t i = 0; i <= s->nsegs; i++) {
		const struct insp_seg_stat *st = &s->seg[i];
		if (!st->blocks)
			continue;
		seg_row(t, s, i);
		insp_put_uint(t, st->blocks);
		insp_put_uint(t, st->bytes);
		insp_put_uint(t, st->holes);
		insp_put_uint(t, st->hole_bytes);
		insp_put_uint(t, st->largest);
		insp_put_str(t, seg_path(s, i));
	}
}

static void holes_between(insp_doc_t *d, const struct insp_scan *s)
{
	insp_table_t *t = insp_doc_table(d, "between", holes_between_cols, NCOLS(holes_between_cols), 0);
	insp_table_title(t, "gaps between segments:");
	const struct insp_hole *h = s->betweens.v;
	char a[512], b[512];
	for (size_t i = 0; i < s->betweens.n; i++) {
		insp_row(t);
		insp_put_uint(t, h[i].addr);
		insp_put_uint(t, h[i].addr + h[i].size);
		insp_put_uint(t, h[i].size);
		insp_put_str(t, seg_label(a, sizeof a, s->segs, s->nsegs, h[i].seg));
		insp_put_str(t, seg_label(b, sizeof b, s->segs, s->nsegs, h[i].seg_to));
	}
}

static void holes_histogram(insp_doc_t *d, const struct insp_scan *s)
{
	insp_table_t *t = insp_doc_table(d, "histogram", holes_hist_cols, NCOLS(holes_hist_cols), 0);
	insp_table_title(t, "hole sizes (log2 buckets):");
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
		insp_row(t);
		insp_put_uint(t, 1ull << k);
		insp_put_uint(t, k == 63 ? UINT64_MAX : (2ull << k) - 1);
		insp_put_uint(t, s->hist[k]);
		insp_put_uint(t, s->hist_bytes[k]);
		insp_put_str(t, bar);
	}
}

static void holes_list(insp_doc_t *d, const struct insp_scan *s, bool all)
{
	insp_table_t *t = insp_doc_table(d, "holes", holes_list_cols, NCOLS(holes_list_cols), 0);
	if (all)
		insp_table_title(t, "every hole, by address:");
	else
		insp_table_title(t, "the %zu largest holes:", s->kept.n);
	const struct insp_hole *h = s->kept.v;
	char label[512];
	for (size_t i = 0; i < s->kept.n; i++) {
		insp_row(t);
		insp_put_uint(t, h[i].addr);
		insp_put_uint(t, h[i].size);
		insp_put_str(t, seg_label(label, sizeof label, s->segs, s->nsegs, h[i].seg));
	}
	if (!all && s->holes > s->kept.n)
		insp_table_note(t, "(%llu more; --all lists every hole)",
				(unsigned long long)(s->holes - s->kept.n));
}

static void holes_doc(insp_doc_t *d, const struct insp_scan *s, const struct insp_args *a)
{
	holes_summary(d, s);
	holes_segments(d, s);
	holes_between(d, s);
	holes_histogram(d, s);
	holes_list(d, s, a->all);
}

int insp_cmd_holes(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&holes_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	if (!(r = insp_session_open(&s, o, &a, a.pos[0], INSP_NEED_MAP)))
		r = scan_print(&s, o, &a, NULL, a.min, holes_doc);
	insp_session_close(&s);
	return r;
}

/* --------------------------------------------------------------- limits -- */

static const struct insp_option limits_options[] = {
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FILTER,
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec limits_spec = {
	"limits", "[options] DB",
	"The lowest and the highest address used by blocks (Erlang's mem_limits),\n"
	"overall and per segment.  low is where the first block's header starts,\n"
	"high is the end of the block that ends last; span = high - low.\n"
	"The filters restrict the blocks looked at.\n",
	limits_options, 1, 1,
};

static const struct insp_col limits_cols[] = {
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"low", "low", INSP_K_ADDR, 0},
	{"high", "high", INSP_K_ADDR, 0},
	{"span_bytes", "span", INSP_K_SIZE, 0},
};

static const struct insp_col limits_seg_cols[] = {
	{"start", "start", INSP_K_ADDR, 0},
	{"end", "end", INSP_K_ADDR, 0},
	{"perms", "perms", INSP_K_STR, 0},
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"low", "low", INSP_K_ADDR, 0},
	{"high", "high", INSP_K_ADDR, 0},
	{"span_bytes", "span", INSP_K_SIZE, 0},
	{"path", "path", INSP_K_STR, 0},
};

static void limits_put(insp_table_t *t, uint64_t blocks, uint64_t bytes, uint64_t low, uint64_t high)
{
	insp_put_uint(t, blocks);
	insp_put_uint(t, bytes);
	if (!blocks) {
		insp_put_null(t);
		insp_put_null(t);
		insp_put_null(t);
		return;
	}
	insp_put_uint(t, low);
	insp_put_uint(t, high);
	insp_put_uint(t, high - low);
}

static void limits_doc(insp_doc_t *d, const struct insp_scan *s, const struct insp_args *a)
{
	insp_table_t *t = insp_doc_table(d, "limits", limits_cols, NCOLS(limits_cols), INSP_T_SINGLE);
	insp_row(t);
	limits_put(t, s->blocks, s->bytes, s->low, s->high);
	t = insp_doc_table(d, "segments", limits_seg_cols, NCOLS(limits_seg_cols), 0);
	insp_table_title(t, "per segment:");
	for (size_t i = 0; i <= s->nsegs; i++) {
		const struct insp_seg_stat *st = &s->seg[i];
		if (!st->blocks)
			continue;
		seg_row(t, s, i);
		limits_put(t, st->blocks, st->bytes, st->low, st->high);
		insp_put_str(t, seg_path(s, i));
	}
}

int insp_cmd_limits(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&limits_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	struct insp_filter_ids f;
	if (!(r = insp_session_open(&s, o, &a, a.pos[0], INSP_NEED_MAP)) && !(r = insp_session_filter(&s, &a, &f)))
		r = scan_print(&s, o, &a, &f, UINT64_MAX, limits_doc); /* no hole bookkeeping */
	insp_session_close(&s);
	return r;
}
