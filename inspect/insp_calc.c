/*
** insp_calc.c — the computations, kept apart from SQLite so that unit
** tests can feed them numbers directly.
**
** The scan (holes, limits).  Blocks arrive in address order.  A block
** occupies [addr - header, addr + size): its meminst header and the bytes
** asked for; what the backing allocator adds around it (its own chunk
** header, rounding, alignment padding) is not known and so counts as hole.
** A hole is the space between the end of what the blocks so far occupy and
** the start of the next block, when that is positive.  A block belongs to
** the segment (mapping) that contains its address; a hole whose two
** neighbours lie in the same segment is "inside" it, any other gap is
** "between" segments and counted apart.  Blocks outside every listed
** segment form one pseudo-segment (index -1, stored at seg[nsegs]), so a
** snapshot without segment rows gives Erlang's behaviour: every gap is
** an inside hole.  Holes smaller than `min` are ignored entirely.
**
** Also here: an (id -> bytes, blocks) hash map for top and diff, a bounded
** heap of the oldest blocks, and the merge of two address-ordered block
** streams that diff uses to match blocks by address and sequence number.
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>

unsigned insp_log2(uint64_t v)
{
	return v < 2 ? 0 : 63u - (unsigned)__builtin_clzll(v);
}

int insp_seg_find(const struct rd_seg *segs, size_t n, uint64_t addr)
{
	size_t lo = rd_count_upto(segs, n, sizeof *segs, addr); /* first segment with start > addr */
	if (lo == 0 || addr >= segs[lo - 1].end)
		return -1;
	return (int)(lo - 1);
}

/* ----------------------------------------------------------------- scan -- */

void insp_scan_init(struct insp_scan *s, const struct rd_seg *segs, size_t nsegs,
		    uint64_t header)
{
	*s = (struct insp_scan){.segs = segs, .nsegs = nsegs, .header = header};
	s->seg = rd_xcalloc(nsegs + 1, sizeof *s->seg);
	for (size_t i = 0; i <= nsegs; i++)
		s->seg[i].low = UINT64_MAX;
	s->low = UINT64_MAX;
	rd_vec_init(&s->kept, sizeof(struct insp_hole));
	rd_vec_init(&s->betweens, sizeof(struct insp_hole));
}

/* Blocks come in address order, so the segment cursor only moves on;
** with overlapping or unordered segments (a damaged file) the answer may
** be -1 but is never out of range. */
static int scan_segment(struct insp_scan *s, uint64_t addr)
{
	while (s->cursor < s->nsegs && s->segs[s->cursor].end <= addr)
		s->cursor++;
	if (s->cursor < s->nsegs && s->segs[s->cursor].start <= addr && addr < s->segs[s->cursor].end)
		return (int)s->cursor;
	int i = insp_seg_find(s->segs, s->nsegs, addr);
	return i;
}

static int hole_smaller(const struct insp_hole *a, const struct insp_hole *b)
{
	return a->size < b->size || (a->size == b->size && a->addr > b->addr);
}

/* Keep the `keep` largest holes in a min-heap on the kept vector. */
static void scan_keep_largest(struct insp_scan *s, const struct insp_hole *h)
{
	struct insp_hole *v = s->kept.v;
	size_t i;
	if (s->kept.n < s->keep) {
		rd_vec_push(&s->kept);
		v = s->kept.v;
		i = s->kept.n - 1;
		for (; i > 0 && hole_smaller(h, &v[(i - 1) / 2]); i = (i - 1) / 2)
			v[i] = v[(i - 1) / 2];
		v[i] = *h;
		return;
	}
	if (!hole_smaller(&v[0], h))
		return;
	for (i = 0;;) {
		size_t c = 2 * i + 1;
		if (c >= s->kept.n)
			break;
		if (c + 1 < s->kept.n && hole_smaller(&v[c + 1], &v[c]))
			c++;
		if (!hole_smaller(&v[c], h))
			break;
		v[i] = v[c];
		i = c;
	}
	v[i] = *h;
}

static void scan_hole(struct insp_scan *s, uint64_t addr, uint64_t gap, int from, int to)
{
	if (gap < s->min)
		return;
	struct insp_hole h = {.addr = addr, .size = gap, .seg = from, .seg_to = to};
	if (from != to) {
		s->between++;
		s->between_bytes += gap;
		*(struct insp_hole *)rd_vec_push(&s->betweens) = h;
		return;
	}
	struct insp_seg_stat *st = &s->seg[from < 0 ? s->nsegs : (size_t)from];
	s->holes++;
	s->hole_bytes += gap;
	s->largest = gap > s->largest ? gap : s->largest;
	s->hist[insp_log2(gap)]++;
	s->hist_bytes[insp_log2(gap)] += gap;
	st->holes++;
	st->hole_bytes += gap;
	st->largest = gap > st->largest ? gap : st->largest;
	if (s->keep_all)
		*(struct insp_hole *)rd_vec_push(&s->kept) = h;
	else if (s->keep)
		scan_keep_largest(s, &h);
}

void insp_scan_add(struct insp_scan *s, uint64_t addr, uint64_t size)
{
	uint64_t start = addr >= s->header ? addr - s->header : 0;
	uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
	int seg = scan_segment(s, addr);
	struct insp_seg_stat *st = &s->seg[seg < 0 ? s->nsegs : (size_t)seg];
	st->blocks++;
	st->bytes += size;
	st->low = start < st->low ? start : st->low;
	st->high = end > st->high ? end : st->high;
	s->blocks++;
	s->bytes += size;
	s->low = start < s->low ? start : s->low;
	s->high = end > s->high ? end : s->high;
	if (s->started && start > s->prev_end)
		scan_hole(s, s->prev_end, start - s->prev_end, s->prev_seg, seg);
	if (!s->started || end > s->prev_end)
		s->prev_end = end;
	s->prev_seg = seg;
	s->started = true;
}

static int hole_by_size(const void *a, const void *b)
{
	const struct insp_hole *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Lows of empty ranges read 0; the largest holes come out largest first. */
void insp_scan_finish(struct insp_scan *s)
{
	if (!s->blocks)
		s->low = 0;
	for (size_t i = 0; i <= s->nsegs; i++)
		if (!s->seg[i].blocks)
			s->seg[i].low = 0;
	if (!s->keep_all && s->kept.n)
		qsort(s->kept.v, s->kept.n, sizeof(struct insp_hole), hole_by_size);
}

void insp_scan_free(struct insp_scan *s)
{
	free(s->seg);
	rd_vec_free(&s->kept);
	rd_vec_free(&s->betweens);
	s->seg = NULL;
}

/* -------------------------------------------------------------- aggmap -- */

static uint64_t agg_hash(int64_t key)
{
	uint64_t x = (uint64_t)key + 0x9e3779b97f4a7c15ull; /* splitmix64 */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void insp_aggmap_init(struct insp_aggmap *m)
{
	*m = (struct insp_aggmap){0};
}

static void agg_grow(struct insp_aggmap *m)
{
	struct insp_aggmap old = *m;
	m->cap = old.cap ? old.cap * 2 : 64;
	m->slot = rd_xcalloc(m->cap, sizeof *m->slot);
	m->used = rd_xcalloc(m->cap, sizeof *m->used);
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.used[i])
			*insp_aggmap_get(m, old.slot[i].key) = old.slot[i];
	free(old.slot);
	free(old.used);
}

struct insp_agg *insp_aggmap_get(struct insp_aggmap *m, int64_t key)
{
	if ((m->n + 1) * 10 > m->cap * 7)
		agg_grow(m);
	size_t i = agg_hash(key) & (m->cap - 1);
	while (m->used[i] && m->slot[i].key != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i]) {
		m->used[i] = true;
		m->slot[i] = (struct insp_agg){.key = key};
		m->n++;
	}
	return &m->slot[i];
}

static int agg_by_bytes(const void *a, const void *b)
{
	const struct insp_agg *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

struct insp_agg *insp_aggmap_sorted(const struct insp_aggmap *m, size_t *n)
{
	struct insp_agg *v = rd_xmalloc((m->n ? m->n : 1) * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			v[k++] = m->slot[i];
	qsort(v, k, sizeof *v, agg_by_bytes);
	*n = k;
	return v;
}

void insp_aggmap_free(struct insp_aggmap *m)
{
	free(m->slot);
	free(m->used);
	insp_aggmap_init(m);
}

/* -------------------------------------------------------------- oldest -- */

static bool newer(const struct rd_block *a, const struct rd_block *b)
{
	return a->seq > b->seq || (a->seq == b->seq && a->addr > b->addr);
}

/* The heap grows as blocks come: a --limit far above the number of new
** blocks must not allocate for the limit. */
void insp_oldest_init(struct insp_oldest *h, size_t k)
{
	*h = (struct insp_oldest){.k = k, .cap = 64};
	h->v = rd_xmalloc(h->cap * sizeof(struct rd_block));
}

/* A max-heap on (seq, addr): the root is the newest of the kept. */
void insp_oldest_add(struct insp_oldest *h, const struct rd_block *b)
{
	size_t i;
	if (h->n < h->k) {
		if (h->n == h->cap) {
			h->cap *= 2;
			h->v = rd_xrealloc(h->v, h->cap * sizeof(struct rd_block));
		}
		for (i = h->n++; i > 0 && newer(b, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
			h->v[i] = h->v[(i - 1) / 2];
		h->v[i] = *b;
		return;
	}
	if (!h->k || !newer(&h->v[0], b))
		return;
	for (i = 0;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && newer(&h->v[c + 1], &h->v[c]))
			c++;
		if (!newer(&h->v[c], b))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	h->v[i] = *b;
}

static int by_seq(const void *a, const void *b)
{
	const struct rd_block *x = a, *y = b;
	return newer(x, y) ? 1 : newer(y, x) ? -1 : 0;
}

struct rd_block *insp_oldest_sorted(struct insp_oldest *h)
{
	qsort(h->v, h->n, sizeof *h->v, by_seq);
	return h->v;
}

void insp_oldest_free(struct insp_oldest *h)
{
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

/* --------------------------------------------------------------- merge -- */

/* Both streams are in address order.  Equal addresses with equal seq are
** the same block; with different seq the address was freed and reused, so
** the block of A is gone and the block of B is new. */
int insp_merge(rd_blocks_t *a, rd_blocks_t *b, const struct insp_merge_cb *cb,
	       struct rd_progress *p)
{
	struct rd_block x, y;
	int ra = rd_blocks_next(a, &x), rb = rd_blocks_next(b, &y);
	uint64_t done = 0;
	while (ra == 1 || rb == 1) {
		if (ra > 1 || rb > 1)
			break;
		if (rb != 1 || (ra == 1 && x.addr < y.addr)) {
			cb->only_a(cb->ctx, &x);
			ra = rd_blocks_next(a, &x);
		} else if (ra != 1 || y.addr < x.addr) {
			cb->only_b(cb->ctx, &y);
			rb = rd_blocks_next(b, &y);
		} else {
			if (x.seq == y.seq) {
				cb->both(cb->ctx, &x, &y);
			} else {
				cb->only_a(cb->ctx, &x);
				cb->only_b(cb->ctx, &y);
			}
			ra = rd_blocks_next(a, &x);
			rb = rd_blocks_next(b, &y);
		}
		rd_progress_step(p, ++done);
	}
	return ra > 1 ? ra : rb > 1 ? rb : 0;
}
