/*
** rd_rss_sites.c — the other anonymous regions and the thread stacks of
** the resident set by the function that mapped them, and the tables of
** the split that inspect rss and inspect report print (inspect html draws
** the same figures).
**
** The program's own mmap, mmap64 and mremap calls, and the stacks glibc
** maps for the threads it creates (named by the pthread_create call), are
** stored with each map snapshot as regions with their call site (table
** region, meminst-snapshot(5)).  The kernel merges neighbouring anonymous
** regions of the same permissions into one mapping, and smaps gives a
** mapping's resident bytes only as a whole: a mapping's resident bytes go
** to the regions in it in proportion to the bytes of the mapping they
** cover (the whole of it when one region fills the mapping, as a pymalloc
** arena, a program's pool or a thread's stack usually does), the rest to
** no region (mapped inside libc, by the loader or by the kernel; the main
** thread's stack).  The sites are named offline from the module files, as
** the blocks' sites are (rd_site_function), and grouped by part and
** function: pymalloc's arenas are one row, _PyObject_ArenaMmap (or its
** entry in python's unwind tables when the binary is stripped).  The rows
** of a part add up to the part ("anonymous", "stacks") of a block map.
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

const char rd_rss_no_site[] = "(no region of the program: mapped inside libc, by the loader or the kernel)";
const char rd_rss_no_stack_site[] = "(no thread of the program: the main thread's, or made before meminst started)";

struct sites_region {
	uint64_t start, end, site;
	const char *stored;
	int64_t resident;
	int part; /* RD_RSS_ANONYMOUS or RD_RSS_STACKS: in such a mapping; else 0 */
};

static bool sites_has_table(rd_db_t *db)
{
	return rd_db_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'region'", 0, 0) > 0;
}

/* The selected snapshot's regions, by start. */
static int sites_regions(rd_db_t *db, struct rd_vec *v)
{
	rd_vec_init(v, sizeof(struct sites_region));
	if (!sites_has_table(db))
		return 0;
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT start, end, site, name FROM region WHERE snapshot = ?1 "
					     "ORDER BY start < 0, start");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sites_region *g = rd_vec_push(v);
		g->start = (uint64_t)sqlite3_column_int64(st, 0);
		g->end = (uint64_t)sqlite3_column_int64(st, 1);
		g->site = (uint64_t)sqlite3_column_int64(st, 2);
		g->stored = rd_col_text(db, st, 3);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read the region table");
}

/* Mapping g's resident bytes to the regions from *first on that overlap
** it; returns the bytes no region covers.  Cumulative shares, so that
** the rows add up to the mapping's count exactly. */
static int64_t sites_apportion(const struct rd_seg *g, int part, struct sites_region *r, size_t n,
			       size_t *first)
{
	while (*first < n && r[*first].end <= g->start)
		(*first)++;
	uint64_t size = g->end - g->start, covered = 0;
	int64_t rss = g->fig[RD_SEG_RSS], given = 0;
	for (size_t i = *first; i < n && r[i].start < g->end; i++) {
		uint64_t lo = r[i].start > g->start ? r[i].start : g->start;
		uint64_t hi = r[i].end < g->end ? r[i].end : g->end;
		if (hi <= lo)
			continue;
		covered += hi - lo;
		r[i].part = part;
		int64_t upto = (int64_t)((unsigned __int128)(uint64_t)rss * covered / size);
		r[i].resident += upto - given;
		given = upto;
	}
	return rss - given;
}

static struct rd_rss_site *sites_group(struct rd_vec *out, int part, const char *name)
{
	struct rd_rss_site *s = out->v;
	for (size_t i = 0; i < out->n; i++)
		if (s[i].part == part && !strcmp(s[i].name, name))
			return &s[i];
	struct rd_rss_site *g = rd_vec_push(out);
	g->name = name;
	g->part = part;
	return g;
}

static int sites_by_site(const void *a, const void *b)
{
	uint64_t x = ((const struct sites_region *)a)->site, y = ((const struct sites_region *)b)->site;
	return x < y ? -1 : x > y;
}

static int sites_by_resident(const void *a, const void *b)
{
	const struct rd_rss_site *x = a, *y = b;
	if (x->resident != y->resident)
		return x->resident < y->resident ? 1 : -1;
	return strcmp(x->name, y->name);
}

int rd_rss_sites(rd_db_t *db, struct rd_tags *t, const struct rd_rss *r, struct rd_vec *out)
{
	struct rd_vec v;
	rd_vec_init(out, sizeof(struct rd_rss_site));
	int rc = sites_regions(db, &v);
	if (rc || !r->by_address) {
		rd_vec_free(&v);
		return rc;
	}
	struct sites_region *g = v.v;
	int64_t none = 0, no_thread = 0;
	size_t first = 0;
	for (size_t i = 0; i < r->nsegs; i++) {
		int c = r->seg[i].cls;
		if ((c != RD_RSS_ANONYMOUS && c != RD_RSS_STACKS) || r->segs[i].fig[RD_SEG_RSS] <= 0 ||
		    r->segs[i].end <= r->segs[i].start)
			continue;
		int64_t left = sites_apportion(&r->segs[i], c, g, v.n, &first);
		*(c == RD_RSS_STACKS ? &no_thread : &none) += left;
	}
	qsort(g, v.n, sizeof *g, sites_by_site); /* one name per site */
	const char *name = NULL;
	uint64_t named = 0;
	for (size_t i = 0; i < v.n; i++) {
		if (!g[i].part)
			continue;
		if (!name || g[i].site != named) {
			named = g[i].site;
			name = rd_site_function(db, t, g[i].site, g[i].stored);
			if (!*name)
				name = rd_pool_fmt(rd_db_pool(db), "0x%llx", (unsigned long long)g[i].site);
		}
		struct rd_rss_site *s = sites_group(out, g[i].part, name);
		s->resident += g[i].resident;
		s->mapped += g[i].end - g[i].start;
		s->regions++;
	}
	if (none > 0)
		sites_group(out, RD_RSS_ANONYMOUS, rd_rss_no_site)->resident += none;
	if (no_thread > 0)
		sites_group(out, RD_RSS_STACKS, rd_rss_no_stack_site)->resident += no_thread;
	qsort(out->v, out->n, sizeof(struct rd_rss_site), sites_by_resident);
	rd_vec_free(&v);
	return 0;
}

/* ---------------------------------------------------------------- tables -- */

static const struct rd_col part_cols[] = {
	{"part", "part", RD_K_STR, 0},
	{"name", "what", RD_K_STR, 0},
	{"bytes", "resident", RD_K_SIZE, 0},
	{"share", "share", RD_K_PCT, 0},
};

static const struct rd_col site_cols[] = {
	{"part", "part", RD_K_STR, 0},
	{"function", "mapped by", RD_K_STR, 0},
	{"bytes", "resident", RD_K_SIZE, 0},
	{"share", "share", RD_K_PCT, 0},
	{"mapped_bytes", "mapped", RD_K_SIZE, 0},
	{"regions", "regions", RD_K_INT, 0},
};

static double rss_whole(const struct rd_rss *r)
{
	return r->kernel > 0 ? (double)r->kernel : (double)r->sum[RD_SEG_RSS];
}

void rd_rss_parts_table(rd_doc_t *d, const char *key, const struct rd_rss *r)
{
	rd_table_t *t = rd_doc_table(d, key, part_cols, NCOLS(part_cols), 0);
	rd_table_title(t, "parts of the kernel's RSS (snapshot %lld):", (long long)r->snap);
	double whole = rss_whole(r);
	for (int p = 0; p < RD_RSS_DIFF; p++) {
		rd_row(t);
		rd_put_const(t, rd_rss_part_keys[p]);
		rd_put_const(t, rd_rss_part_labels[p]);
		rd_put_int(t, r->part[p]);
		rd_put_pct(t, whole > 0 ? 100.0 * (double)r->part[p] / whole : 0.0);
	}
	if (!r->by_address)
		rd_table_note(t, "(a status snapshot: the live bytes placed by the totals, [heap] first)");
}

void rd_rss_sites_table(rd_doc_t *d, const char *key, const struct rd_rss *r, const struct rd_vec *sites,
			int64_t limit)
{
	rd_table_t *t = rd_doc_table(d, key, site_cols, NCOLS(site_cols), 0);
	rd_table_title(t, "other anonymous regions and thread stacks by the function that mapped them:");
	const struct rd_rss_site *s = sites->v;
	size_t n = limit >= 0 && (size_t)limit < sites->n ? (size_t)limit : sites->n;
	double whole = rss_whole(r);
	for (size_t i = 0; i < n; i++) {
		rd_row(t);
		rd_put_const(t, rd_rss_part_keys[s[i].part]);
		rd_put_str(t, s[i].name);
		rd_put_int(t, s[i].resident);
		rd_put_pct(t, whole > 0 ? 100.0 * (double)s[i].resident / whole : 0.0);
		rd_put_uint(t, s[i].mapped);
		rd_put_uint(t, s[i].regions);
	}
	if (n < sites->n)
		rd_table_note(t, "(%zu more functions; --limit N lists more)", sites->n - n);
	if (!r->by_address)
		rd_table_note(t, "(a status snapshot: its regions are not stored; a map snapshot names them)");
}

/* ---------------------------------------------------------------- report -- */

static const struct rd_col section_cols[] = {
	{"snapshot", "snapshot", RD_K_INT, 0},
	{"trigger", "trigger", RD_K_STR, 0},
	{"kernel_rss", "kernel RSS", RD_K_SIZE, 0},
	{"mappings_rss", "mappings' RSS", RD_K_SIZE, 0},
	{"difference", "difference", RD_K_DELTA, 0},
};

/* The process's snapshot with the kernel's figures and the highest
** resident set, a map one first (it has the regions; peak= and rss:
** take maps), the last of equals; 0 when none has them. */
static int64_t section_snapshot(rd_db_t *db, int64_t pid)
{
	if (rd_db_int(db, "SELECT count(*) FROM pragma_table_info('segment') WHERE name = 'rss'", 0, 0) <= 0)
		return 0;
	return rd_db_int(db, "SELECT s.id FROM snapshot s WHERE s.pid = ?1 AND EXISTS (SELECT 1 FROM segment g "
			     "JOIN snapshot u ON u.id = g.snapshot WHERE u.pid = ?1 AND u.id <= s.id AND g.rss "
			     "IS NOT NULL) ORDER BY s.content = 'map' DESC, (SELECT rss FROM snapshot_rss r WHERE "
			     "r.snapshot = s.id) DESC, s.id DESC LIMIT 1",
			 pid, 0);
}

int rd_rss_last(rd_db_t *db, const struct rd_opts *o, int64_t pid, struct rd_rss_last *l)
{
	memset(l, 0, sizeof *l);
	int64_t snap = section_snapshot(db, pid);
	if (!snap)
		return 0;
	int rc = rd_db_select(db, snap, RD_NEED_ANY);
	if (!rc)
		rc = rd_rss_read(db, o, &l->r);
	if (!rc)
		rc = rd_tags_load(db, &l->tags);
	if (!rc)
		rc = rd_rss_sites(db, &l->tags, &l->r, &l->sites);
	l->trigger = rd_db_snap(db)->trigger;
	if (!rc && !l->r.figures)
		l->r.snap = 0;
	return rc;
}

void rd_rss_last_free(struct rd_rss_last *l)
{
	rd_vec_free(&l->sites);
	rd_tags_free(&l->tags);
	rd_rss_free(&l->r);
}

int rd_rss_section(rd_doc_t *d, rd_db_t *db, const struct rd_opts *o, int64_t pid, int64_t limit)
{
	int64_t keep = rd_db_snap(db)->id;
	struct rd_rss_last l;
	int rc = rd_rss_last(db, o, pid, &l);
	const struct rd_rss *r = &l.r;
	if (!rc && r->snap) {
		rd_table_t *tb = rd_doc_table(d, "rss", section_cols, NCOLS(section_cols), RD_T_SINGLE);
		rd_table_title(tb, "resident set (RSS) explained, snapshot %lld:", (long long)r->snap);
		rd_row(tb);
		rd_put_int(tb, r->snap);
		rd_put_str(tb, l.trigger);
		r->kernel >= 0 ? rd_put_int(tb, r->kernel) : rd_put_null(tb);
		rd_put_int(tb, r->sum[RD_SEG_RSS]);
		r->kernel >= 0 ? rd_put_int(tb, r->part[RD_RSS_DIFF]) : rd_put_null(tb);
		rd_rss_parts_table(d, "rss_parts", r);
		if (l.sites.n)
			rd_rss_sites_table(d, "rss_sites", r, &l.sites, limit);
	}
	rd_rss_last_free(&l);
	int back = keep ? rd_db_select(db, keep, RD_NEED_ANY) : 0;
	return rc ? rc : back;
}
