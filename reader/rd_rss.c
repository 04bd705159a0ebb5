/*
** rd_rss.c — the process's resident set split into what holds it (inspect
** rss, inspect report): live heap blocks, meminst's headers, the
** allocator's overhead and free memory, other anonymous regions (meminst's
** own tables among them), thread stacks, file-backed data and code.
**
** The kernel's figures are the segment table's (/proc/PID/smaps at the
** snapshot: meminst-snapshot(5)).  Each mapping gets one class from its
** path, its permissions, its neighbour and the blocks in it:
**   [heap], an anonymous mapping holding blocks, or a heap of one of
**   glibc's thread arenas (read-write at a 64 MiB boundary, the rest of
**   the 64 MiB reserved no-access above it: HEAP_MAX_SIZE; seg_arena_heap)
**                                                            heap
**   [stack], [stack:TID], or an anonymous read-write mapping right above
**   a small anonymous no-access one (glibc's thread stacks: a guard page
**   below the stack)                                    stack
**   [vdso], [vsyscall] or a file mapped executable      code
**   any other file                                      file
**   any other anonymous mapping                         anonymous
** A heap mapping's resident bytes go first to the requested bytes of its
** blocks, then to their headers, the rest to the allocator (its chunk
** headers, rounding, free chunks, top of heap, arenas kept).  A block
** map places blocks by address; a status snapshot has only the totals,
** placed in [heap] first, then in the anonymous mappings.
**
** The parts add up to the mappings' resident bytes; the difference from
** the kernel's count of the whole process (statm, snapshot_rss), taken a
** moment apart, is a part of its own, so the parts add up to the kernel's
** resident set.
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

const char *const rd_rss_part_keys[RD_RSS_PARTS] = {
	"heap_live", "meminst_headers", "allocator", "anonymous", "stacks", "file", "code", "difference",
};
const char *const rd_rss_part_labels[RD_RSS_PARTS] = {
	"live heap blocks (requested)", "meminst's headers", "allocator overhead and free",
	"other anonymous regions", "thread stacks", "file-backed data", "code",
	"kernel count - mappings (taken apart)",
};

#define GUARD_MAX (1u << 20) /* a thread stack's guard: glibc's default is one page */
#define ARENA_HEAP_MAX ((uint64_t)64 << 20) /* glibc's HEAP_MAX_SIZE on 64-bit systems */

static bool path_is(const char *path, const char *prefix)
{
	return strncmp(path, prefix, strlen(prefix)) == 0;
}

static bool seg_anonymous(const struct rd_seg *g)
{
	return !*g->path || path_is(g->path, "[anon:");
}

/* Whether segment i is a heap of a glibc thread arena: new_heap maps
** 64 MiB at a 64 MiB boundary no-access and opens its start read-write
** as the heap grows.  A heap grown to the whole 64 MiB looks like any
** 64 MiB read-write mapping (the kernel puts large mappings at 2 MiB
** boundaries: one in 32 of a program's own lands on a 64 MiB one), so it
** is not taken for one here: in a map snapshot its blocks make it heap
** (rd_rss_read), in a status one it stays anonymous. */
static bool seg_arena_heap(const struct rd_seg *segs, size_t n, size_t i)
{
	const struct rd_seg *g = &segs[i], *above = i + 1 < n ? &segs[i + 1] : NULL;
	if (g->start % ARENA_HEAP_MAX || strncmp(g->perms, "rw", 2) || g->end - g->start >= ARENA_HEAP_MAX)
		return false;
	return above && above->start == g->end && seg_anonymous(above) && !strncmp(above->perms, "---", 3) &&
	       above->end >= g->start + ARENA_HEAP_MAX;
}

/* The class of segment i of n, blocks aside (rd_rss_read adds those). */
static int seg_class(const struct rd_seg *segs, size_t n, size_t i)
{
	const struct rd_seg *g = &segs[i];
	if (!strcmp(g->path, "[heap]"))
		return RD_RSS_HEAP;
	if (path_is(g->path, "[stack"))
		return RD_RSS_STACKS;
	if (path_is(g->path, "[vdso") || path_is(g->path, "[vsyscall") || path_is(g->path, "[vvar"))
		return RD_RSS_CODE;
	if (!seg_anonymous(g))
		return strchr(g->perms, 'x') ? RD_RSS_CODE : RD_RSS_FILE;
	const struct rd_seg *below = i ? &segs[i - 1] : NULL;
	if (below && below->end == g->start && seg_anonymous(below) && !strncmp(below->perms, "---", 3) &&
	    below->end - below->start <= GUARD_MAX && !strncmp(g->perms, "rw", 2))
		return RD_RSS_STACKS;
	return seg_arena_heap(segs, n, i) ? RD_RSS_HEAP : RD_RSS_ANONYMOUS;
}

struct rss_scan {
	struct rd_rss *r;
	size_t cursor;
};

/* Blocks come in address order, and so do the segments (rd_db_segments:
** [vsyscall] last): the segment cursor moves on only. */
static void rss_block(void *ctx, const struct rd_block *b)
{
	struct rss_scan *s = ctx;
	struct rd_rss *r = s->r;
	while (s->cursor < r->nsegs && r->segs[s->cursor].end <= b->addr)
		s->cursor++;
	if (s->cursor < r->nsegs && r->segs[s->cursor].start <= b->addr) {
		r->seg[s->cursor].bytes += b->size;
		r->seg[s->cursor].blocks++;
	} else {
		r->outside_bytes += b->size;
	}
}

/* The totals of a status snapshot (no block map). */
static int rss_status_totals(rd_db_t *db, int64_t snap, uint64_t *bytes, uint64_t *blocks)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT sizes_current, blocks_current FROM status "
					     "WHERE snapshot = ?1 AND kind = 'total'");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*bytes = (uint64_t)sqlite3_column_int64(st, 0);
		*blocks = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

/* -1 when not known: a file without the table (meminst-snapshot(5): a
** reader takes it as no figure) is no error. */
static int64_t kernel_rss(rd_db_t *db, int64_t snap)
{
	if (rd_db_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'snapshot_rss'", 0, 0) <= 0)
		return -1;
	return rd_db_int(db, "SELECT rss FROM snapshot_rss WHERE snapshot = ?1", snap, -1);
}

/* Give `want` bytes of the heap mapping's resident `room` to part p. */
static uint64_t rss_take(struct rd_rss *r, int p, uint64_t want, uint64_t *room)
{
	uint64_t got = want < *room ? want : *room;
	r->part[p] += (int64_t)got;
	*room -= got;
	return got;
}

/* The split of the heap mappings' resident bytes (by address), or of
** [heap] then the anonymous mappings' (by the totals alone). */
static void rss_split_heap(struct rd_rss *r, uint64_t header, uint64_t bytes, uint64_t blocks)
{
	for (int pass = 0; pass < (r->by_address ? 1 : 2); pass++)
		for (size_t i = 0; i < r->nsegs; i++) {
			struct rd_rss_seg *g = &r->seg[i];
			int want = pass ? RD_RSS_ANONYMOUS : RD_RSS_HEAP;
			if (g->cls != want || r->segs[i].fig[RD_SEG_RSS] < 0)
				continue;
			uint64_t room = (uint64_t)r->segs[i].fig[RD_SEG_RSS];
			if (r->by_address) {
				rss_take(r, RD_RSS_LIVE, g->bytes, &room);
				rss_take(r, RD_RSS_HEADERS, g->blocks * header, &room);
			} else {
				bytes -= rss_take(r, RD_RSS_LIVE, bytes, &room);
				uint64_t hdr = blocks * header, got = rss_take(r, RD_RSS_HEADERS, hdr, &room);
				blocks = header ? (hdr - got) / header : 0;
			}
			r->part[pass ? RD_RSS_ANONYMOUS : RD_RSS_ALLOCATOR] += (int64_t)room;
		}
}

int rd_rss_read(rd_db_t *db, const struct rd_opts *o, struct rd_rss *r)
{
	const struct rd_snap *snap = rd_db_snap(db);
	memset(r, 0, sizeof *r);
	r->snap = snap->id;
	r->kernel = kernel_rss(db, snap->id);
	r->by_address = !strcmp(snap->content, "map");
	int rc = rd_db_segments(db, &r->segs, &r->nsegs);
	if (rc)
		return rc;
	r->seg = calloc(r->nsegs + 1, sizeof *r->seg);
	if (!r->seg)
		return rd_db_fail(db, "out of memory");
	for (size_t i = 0; i < r->nsegs; i++) {
		r->seg[i].cls = seg_class(r->segs, r->nsegs, i);
		if (r->segs[i].fig[RD_SEG_RSS] >= 0)
			r->figures = true;
		for (int f = 0; f < RD_SEG_FIGS; f++)
			if (r->segs[i].fig[f] > 0)
				r->sum[f] += r->segs[i].fig[f];
	}
	uint64_t bytes = 0, blocks = 0;
	if (r->by_address) {
		struct rss_scan s = {r, 0};
		rc = rd_blocks_each(db, o, NULL, rss_block, &s);
		for (size_t i = 0; i < r->nsegs; i++)
			if (r->seg[i].blocks && r->seg[i].cls == RD_RSS_ANONYMOUS)
				r->seg[i].cls = RD_RSS_HEAP;
	} else {
		rc = rss_status_totals(db, snap->id, &bytes, &blocks);
	}
	if (rc)
		return rc;
	rss_split_heap(r, (uint64_t)snap->header_size, bytes, blocks);
	for (size_t i = 0; i < r->nsegs; i++) { /* split: heap, and anonymous by the totals */
		int c = r->seg[i].cls;
		if (c != RD_RSS_HEAP && (c != RD_RSS_ANONYMOUS || r->by_address) && r->segs[i].fig[RD_SEG_RSS] > 0)
			r->part[c] += r->segs[i].fig[RD_SEG_RSS];
	}
	r->part[RD_RSS_DIFF] = r->kernel >= 0 && r->figures ? r->kernel - r->sum[RD_SEG_RSS] : 0;
	return 0;
}

void rd_rss_free(struct rd_rss *r)
{
	free(r->segs);
	free(r->seg);
	r->segs = NULL;
	r->seg = NULL;
}

/* ------------------------------------------------------------ over time -- */

int rd_rss_over_time(rd_db_t *db, const struct rd_opts *o, struct rd_vec *out)
{
	int64_t keep = rd_db_snap(db)->id, pid = rd_db_snap(db)->pid;
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT id FROM snapshot WHERE pid = ?1 ORDER BY id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	struct rd_vec ids;
	rd_vec_init(&ids, sizeof(int64_t));
	while (sqlite3_step(st) == SQLITE_ROW)
		*(int64_t *)rd_vec_push(&ids) = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	rd_vec_init(out, sizeof(struct rd_rss_point));
	int rc = 0;
	for (size_t i = 0; i < ids.n && !rc; i++) {
		struct rd_rss r = {0};
		if (!(rc = rd_db_select(db, ((int64_t *)ids.v)[i], RD_NEED_ANY)))
			rc = rd_rss_read(db, o, &r);
		if (!rc) {
			struct rd_rss_point *p = rd_vec_push(out);
			p->snap = r.snap;
			p->elapsed_ns = rd_db_snap(db)->elapsed_ns;
			p->trigger = rd_db_snap(db)->trigger;
			p->kernel = r.kernel;
			p->figures = r.figures;
			memcpy(p->part, r.part, sizeof p->part);
		}
		rd_rss_free(&r);
	}
	rd_vec_free(&ids);
	int back = rd_db_select(db, keep, RD_NEED_ANY);
	return rc ? rc : back;
}
