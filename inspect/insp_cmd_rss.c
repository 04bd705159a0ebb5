/*
** insp_cmd_rss.c — `inspect rss`: the process's resident set explained.
** The kernel's figures of every mapping, stored at each snapshot from
** /proc/PID/smaps, split into live heap blocks, meminst's headers, the
** allocator's overhead and free memory, other anonymous regions, thread
** stacks, file-backed data and code (reader/rd_rss.c makes the split),
** for the snapshot asked for and for every snapshot of its process.
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define RSS_DEFAULT_LIMIT 20

static const struct rd_option rss_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest)"),
	RD_OPTION_LIMIT("list the N largest mappings and functions (default 20)"),
	RD_OPTION_NO_SYMBOLS("show call sites as stored, without reading module files"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec rss_spec = {
	"rss", "[options] DB",
	"The process's resident set (RSS) explained: the kernel's figures of each\n"
	"mapping, stored at the snapshot, split into live heap blocks (bytes\n"
	"asked for), meminst's headers, the allocator's overhead and free memory,\n"
	"other anonymous regions, thread stacks, file-backed data and code, with\n"
	"each part's share of the kernel's count; the other anonymous regions and\n"
	"the thread stacks by the function that mapped them (a program's arenas:\n"
	"python's _PyObject_ArenaMmap; a stack: the caller of pthread_create);\n"
	"then the largest mappings, and the parts at every snapshot of the same\n"
	"process.\n",
	rss_options, 1, 1,
};

static const struct rd_col rss_sum_cols[] = {
	{"kernel_rss", "kernel RSS", RD_K_SIZE, 0},
	{"mappings_rss", "mappings' RSS", RD_K_SIZE, 0},
	{"difference", "difference", RD_K_DELTA, 0},
	{"pss", "PSS", RD_K_SIZE, 0},
	{"private", "private", RD_K_SIZE, 0},
	{"shared", "shared", RD_K_SIZE, 0},
	{"swap", "swap", RD_K_SIZE, 0},
	{"anon_huge", "anon huge", RD_K_SIZE, 0},
	{"placed", "blocks placed", RD_K_STR, 0},
};

static const struct rd_col rss_map_cols[] = {
	{"start", "start", RD_K_ADDR, 0},
	{"end", "end", RD_K_ADDR, 0},
	{"perms", "perms", RD_K_STR, 0},
	{"class", "class", RD_K_STR, 0},
	{"rss", "resident", RD_K_SIZE, 0},
	{"pss", "pss", RD_K_SIZE, RD_C_SPARE},
	{"swap", "swap", RD_K_SIZE, RD_C_SPARE},
	{"blocks", "blocks", RD_K_INT, 0},
	{"block_bytes", "in blocks", RD_K_SIZE, 0},
	{"path", "path", RD_K_STR, 0},
};

/* over time: snapshot, elapsed, trigger, kernel RSS, then one per part */
static const struct rd_col rss_time_cols[] = {
	{"snapshot", "no", RD_K_INT, 0},
	{"elapsed_ms", "elapsed", RD_K_DUR, 0},
	{"trigger", "trigger", RD_K_STR, 0},
	{"kernel_rss", "kernel", RD_K_SIZE, 0},
	{"heap_live", "live", RD_K_SIZE, 0},
	{"meminst_headers", "headers", RD_K_SIZE, 0},
	{"allocator", "allocator", RD_K_SIZE, 0},
	{"anonymous", "anonymous", RD_K_SIZE, 0},
	{"stacks", "stacks", RD_K_SIZE, 0},
	{"file", "file", RD_K_SIZE, 0},
	{"code", "code", RD_K_SIZE, 0},
	{"difference", "difference", RD_K_DELTA, 0},
};

static const char *const class_names[RD_RSS_PARTS + 1] = {
	[RD_RSS_ANONYMOUS] = "anonymous", [RD_RSS_STACKS] = "stack", [RD_RSS_FILE] = "file",
	[RD_RSS_CODE] = "code", [RD_RSS_HEAP] = "heap",
};

static void rss_summary(rd_doc_t *d, const struct rd_rss *r)
{
	rd_table_t *t = rd_doc_table(d, "rss", rss_sum_cols, NCOLS(rss_sum_cols), 0);
	rd_table_title(t, "resident set:");
	rd_row(t);
	r->kernel >= 0 ? rd_put_int(t, r->kernel) : rd_put_null(t);
	rd_put_int(t, r->sum[RD_SEG_RSS]);
	r->kernel >= 0 ? rd_put_int(t, r->part[RD_RSS_DIFF]) : rd_put_null(t);
	rd_put_int(t, r->sum[RD_SEG_PSS]);
	rd_put_int(t, r->sum[RD_SEG_PRIVATE]);
	rd_put_int(t, r->sum[RD_SEG_SHARED]);
	rd_put_int(t, r->sum[RD_SEG_SWAP]);
	rd_put_int(t, r->sum[RD_SEG_ANON_HUGE]);
	rd_put_const(t, r->by_address ? "by address" : "by the totals");
}

static int rss_by_resident(const void *a, const void *b, void *ctx)
{
	const struct rd_seg *s = ctx;
	int64_t x = s[*(const size_t *)a].fig[RD_SEG_RSS], y = s[*(const size_t *)b].fig[RD_SEG_RSS];
	return x < y ? 1 : x > y ? -1 : 0;
}

static void rss_mappings(rd_doc_t *d, const struct rd_rss *r, int64_t limit)
{
	rd_table_t *t = rd_doc_table(d, "mappings", rss_map_cols, NCOLS(rss_map_cols), 0);
	rd_table_title(t, "largest mappings:");
	size_t *order = malloc((r->nsegs + 1) * sizeof *order);
	if (!order)
		return;
	for (size_t i = 0; i < r->nsegs; i++)
		order[i] = i;
	qsort_r(order, r->nsegs, sizeof *order, rss_by_resident, r->segs);
	size_t n = limit >= 0 && (size_t)limit < r->nsegs ? (size_t)limit : r->nsegs;
	for (size_t k = 0; k < n; k++) {
		const struct rd_seg *g = &r->segs[order[k]];
		const struct rd_rss_seg *c = &r->seg[order[k]];
		rd_row(t);
		rd_put_uint(t, g->start);
		rd_put_uint(t, g->end);
		rd_put_str(t, g->perms);
		rd_put_const(t, class_names[c->cls]);
		rd_put_int(t, g->fig[RD_SEG_RSS]);
		rd_put_int(t, g->fig[RD_SEG_PSS]);
		rd_put_int(t, g->fig[RD_SEG_SWAP]);
		rd_put_uint(t, c->blocks);
		rd_put_uint(t, c->bytes);
		rd_put_str(t, g->path);
	}
	if (n < r->nsegs)
		rd_table_note(t, "(%zu more mappings; --limit N lists more)", r->nsegs - n);
	free(order);
}

static int rss_over_time(rd_doc_t *d, rd_db_t *db, const struct rd_opts *o)
{
	struct rd_vec v;
	int rc = rd_rss_over_time(db, o, &v);
	if (rc)
		return rc;
	rd_table_t *t = rd_doc_table(d, "over_time", rss_time_cols, NCOLS(rss_time_cols), 0);
	rd_table_title(t, "over time (process %lld):", (long long)rd_db_snap(db)->pid);
	const struct rd_rss_point *p = v.v;
	for (size_t i = 0; i < v.n; i++) {
		if (!p[i].figures)
			continue;
		rd_row(t);
		rd_put_int(t, p[i].snap);
		rd_put_int(t, p[i].elapsed_ns);
		rd_put_str(t, p[i].trigger);
		p[i].kernel >= 0 ? rd_put_int(t, p[i].kernel) : rd_put_null(t);
		for (int k = 0; k <= RD_RSS_DIFF; k++)
			rd_put_int(t, p[i].part[k]);
	}
	rd_vec_free(&v);
	return 0;
}

int insp_cmd_rss(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&rss_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	struct rd_rss x = {0};
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_ANY)))
		r = rd_rss_read(s.db, o, &x);
	if (!r && !x.figures) {
		rd_errf(o->err, "inspect: %s: snapshot %lld has no resident figures (stored by a libmeminst "
				"from before them)\n", a.pos[0], (long long)x.snap);
		r = RD_EXIT_NOTFOUND;
	}
	struct rd_vec sites = {0};
	if (!r && !(r = rd_session_tags(&s, &a)))
		r = rd_rss_sites(s.db, &s.tags, &x, &sites);
	if (!r) {
		int64_t limit = a.limit >= 0 ? a.limit : RSS_DEFAULT_LIMIT;
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		rss_summary(d, &x);
		rd_rss_parts_table(d, "parts", &x);
		rd_rss_sites_table(d, "sites", &x, &sites, limit);
		rss_mappings(d, &x, limit);
		r = rss_over_time(d, s.db, o);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_vec_free(&sites);
	rd_rss_free(&x);
	rd_session_close(&s);
	return r;
}
