/*
** insp_cmd_top.c — `inspect top`: the largest consumers of a map by live
** bytes, grouped by type, class, thread or allocation site.
**
** --by site keeps automatic types only (an automatic type is its call
** site) with the source location when debug information gives it; blocks
** of registered types are added up in one row, since a registered type
** can be allocated from many sites.
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define TOP_DEFAULT_LIMIT 20

static const char *const top_by_words[] = {"type", "class", "thread", "site", "calls", "allocated",
					   "temporary", "peak", "leaked", NULL};

static const struct rd_option top_options[] = {
	{"by", 0, RD_OT_WORD, NULL, "group by type (default), class, thread or site;\n"
	 "or sites by an event count: calls, allocated, temporary,\npeak or leaked (insp_cmd_counts.c)",
	 RD_ID_BY, 0, 0, top_by_words},
	RD_OPTION_LIMIT("the N largest (default 20)"),
	{"live-at-exit", 0, RD_OT_FLAG, NULL, "what was never freed: the last exit snapshot, by site\n"
	 "unless --by says otherwise", RD_ID_LIVE_AT_EXIT, 0, 0, NULL},
	RD_OPTION_PID("with --live-at-exit: that process's exit snapshot"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTION_STACKS("the frames of the first N sites under them (text default:\n"
			   "none, 5 with --live-at-exit; JSON and CSV: every row)"),
	RD_OPTIONS_FILTER,
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec top_spec = {
	"top", "[options] DB",
	"The largest consumers of the map by current bytes.\n",
	top_options, 1, 1,
};

enum top_by { TOP_TYPE, TOP_CLASS, TOP_THREAD, TOP_SITE };

/* without --live-at-exit and a trace that says who allocated them, all
** but the RD_LIVE_COLS */
static const struct rd_col top_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"share", "share", RD_K_PCT, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
	{"stack", "stack", RD_K_STACK, 0},
	RD_LIVE_COLS,
};

const struct rd_live_fns *rd_live_fns;

static int top_parse_by(const struct rd_opts *o, const char *by, enum top_by *out)
{
	static const char *const names[] = {"type", "class", "thread", "site"};
	for (int i = 0; i < 4; i++) {
		if (strcmp(by ? by : "type", names[i]) == 0) {
			*out = (enum top_by)i;
			return RD_CONTINUE;
		}
	}
	return rd_usage_error(o, "top", "--by takes type, class, thread, site, calls, allocated, temporary, "
				"peak or leaked, not '%s'", by);
}

struct top_sums {
	struct insp_aggmap *m;
	uint64_t *total;
	bool by_thread;
};

static void top_add(void *ctx, const struct rd_block *b)
{
	struct top_sums *c = ctx;
	struct insp_agg *g = insp_aggmap_get(c->m, c->by_thread ? b->thread : b->type);
	g->bytes += b->size;
	g->blocks++;
	*c->total += b->size;
}

/* Sizes per type or per thread over the filtered blocks. */
static int top_collect(struct rd_session *s, const struct rd_opts *o,
		       const struct rd_filter_ids *f, bool by_thread, struct insp_aggmap *m,
		       uint64_t *total)
{
	struct top_sums c = {m, total, by_thread};
	return rd_blocks_each(s->db, o, f, top_add, &c);
}

/* Fold the per-type figures into classes, or into sites plus one row
** (key INT64_MIN) for all registered types. */
static void top_fold(struct rd_session *s, enum top_by by, const struct insp_aggmap *types,
		     struct insp_aggmap *out)
{
	for (size_t i = 0; i < types->cap; i++) {
		if (!types->used[i])
			continue;
		const struct insp_agg *g = &types->slot[i];
		const struct rd_name *ty = rd_name_find(&s->tags.types, g->key);
		int64_t key = g->key;
		if (by == TOP_CLASS)
			key = ty ? ty->class_ : INT64_MIN;
		else if (!ty || !ty->has_site)
			key = INT64_MIN;
		struct insp_agg *o = insp_aggmap_get(out, key);
		o->bytes += g->bytes;
		o->blocks += g->blocks;
	}
}

static void top_row(rd_table_t *t, struct rd_session *s, enum top_by by,
		    const struct insp_agg *g, uint64_t total, void *live, bool stack)
{
	const char *name, *where = NULL, *chain = NULL, *frames = NULL;
	rd_row(t);
	if (g->key == INT64_MIN) {
		rd_put_null(t);
		name = by == TOP_SITE ? "(registered types)" : "(unknown type)";
	} else {
		rd_put_int(t, g->key);
		name = by == TOP_THREAD ? rd_thread_label(s->db, &s->tags, g->key)
		     : by == TOP_CLASS ? rd_tag_name(s->db, &s->tags, RD_TAG_CLASS, g->key)
				       : rd_type_label(s->db, &s->tags, g->key, &where);
		if (by == TOP_TYPE || by == TOP_SITE)
			chain = rd_type_chain(s->db, &s->tags, g->key);
		if ((by == TOP_TYPE || by == TOP_SITE) && stack)
			frames = rd_type_stack(s->db, &s->tags, g->key);
	}
	rd_put_uint(t, g->bytes);
	rd_put_pct(t, total ? 100.0 * (double)g->bytes / (double)total : 0.0);
	rd_put_uint(t, g->blocks);
	rd_put_str(t, name);
	rd_put_str(t, where);
	rd_put_str(t, chain);
	rd_put_str(t, frames);
	if (live && g->key != INT64_MIN) {
		rd_live_fns->put(live, t, g->key);
	} else if (live) {
		for (int c = 0; c < RD_LIVE_NCOLS; c++)
			rd_put_null(t);
	}
}

static void top_doc(rd_doc_t *d, struct rd_session *s, enum top_by by, const struct rd_args *a,
		    const struct insp_aggmap *m, uint64_t total, void *live)
{
	size_t limit = a->limit >= 0 ? (size_t)a->limit : TOP_DEFAULT_LIMIT;
	static const char *const what[] = {"type", "class", "thread", "site"};
	size_t n;
	struct insp_agg *v = insp_aggmap_sorted(m, &n);
	rd_table_t *t = rd_doc_table(d, "top", top_cols, NCOLS(top_cols) - (live ? 0 : RD_LIVE_NCOLS), 0);
	rd_table_title(t, "largest by %s:", what[by]);
	uint64_t rest = 0;
	for (size_t i = 0; i < n; i++) {
		if (i < limit)
			top_row(t, s, by, &v[i], total, live,
				rd_stack_row(a, i, a->live_at_exit ? RD_STACKS_DEFAULT : 0));
		else
			rest += v[i].bytes;
	}
	if (n > limit) {
		char sz[32];
		rd_fmt_size(rest, sz, sizeof sz);
		rd_table_note(t, "(%zu more, %s)", n - limit, sz);
	}
	free(v);
}

/*
** The program's own mappings beside its blocks: allocator mmap's status
** row (meminst(7), ALLOCATORS), when the snapshot has one that ever held
** a region.  A table of its own: top's rows are blocks.
*/
static const struct rd_col top_map_cols[] = {
	{"bytes_current", "mappings", RD_K_SIZE, 0},
	{"regions_current", "regions", RD_K_INT, 0},
	{"bytes_max_ever", "max-ever", RD_K_SIZE, 0},
	{"regions_max_ever", "regions", RD_K_INT, 0},
};

static int top_mappings(rd_doc_t *d, struct rd_session *s)
{
	sqlite3_stmt *st = rd_db_prepare(s->db,
		"SELECT sizes_current, blocks_current, sizes_max_ever, blocks_max_ever FROM status s "
		"JOIN allocator a ON a.snapshot = ?1 AND a.id = s.id AND a.name = 'mmap' "
		"WHERE s.snapshot = ?1 AND s.kind = 'allocators' AND s.sizes_max_ever > 0");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(s->db)->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rd_table_t *t = rd_doc_table(d, "mappings", top_map_cols, NCOLS(top_map_cols), 0);
		rd_table_title(t, "the program's own mappings (allocator mmap):");
		rd_row(t);
		for (int c = 0; c < 4; c++)
			rd_put_int(t, sqlite3_column_int64(st, c));
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(s->db, "cannot read the status table");
}

/* The snapshot asked for, or with --live-at-exit the last exit one. */
static int top_open(struct rd_session *s, const struct rd_opts *o, const struct rd_args *a)
{
	if (!a->live_at_exit)
		return rd_session_open(s, o, a, a->pos[0], RD_NEED_MAP);
	*s = (struct rd_session){0};
	int64_t id;
	int r = rd_db_open(a->pos[0], o, &s->db);
	if (!r && !(r = rd_db_exit_map(s->db, a->pid, &id)))
		r = rd_db_select(s->db, id, RD_NEED_MAP);
	return r;
}

int insp_cmd_top(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	enum top_by by = TOP_TYPE;
	int r = rd_args_parse(&top_spec, argc, argv, o, &a);
	if (r == RD_CONTINUE && rd_event_metric(a.by) >= 0) {
		if (a.live_at_exit || a.filter.type || a.filter.class_ || a.filter.thread || a.filter.allocator)
			return rd_usage_error(o, "top", "--by %s reads the counters of every site: no "
						"--live-at-exit or filters", a.by);
		return insp_top_events(o, &a, rd_event_metric(a.by));
	}
	if (r != RD_CONTINUE || (r = top_parse_by(o, a.by, &by)) != RD_CONTINUE)
		return r;
	if (a.live_at_exit && a.snapshot)
		return rd_usage_error(o, "top", "--live-at-exit picks the snapshot; leave out --snapshot");
	if (a.pid && !a.live_at_exit)
		return rd_usage_error(o, "top", "--pid goes with --live-at-exit (else --snapshot N)");
	if (a.live_at_exit && !a.by)
		by = TOP_SITE;
	struct rd_session s;
	struct rd_filter_ids f;
	struct insp_aggmap m, folded;
	insp_aggmap_init(&m);
	insp_aggmap_init(&folded);
	uint64_t total = 0;
	if (!(r = top_open(&s, o, &a)) && !(r = rd_session_filter(&s, &a, &f)) &&
	    !(r = top_collect(&s, o, &f, by == TOP_THREAD, &m, &total))) {
		if (by == TOP_CLASS || by == TOP_SITE)
			top_fold(&s, by, &m, &folded);
		/* --live-at-exit by type or site: with the trace, who allocated them */
		void *live = NULL;
		if (a.live_at_exit && (by == TOP_TYPE || by == TOP_SITE) && rd_live_fns) {
			struct rd_opts lo = *o;
			lo.no_symbols = o->no_symbols || a.no_symbols;
			live = rd_live_fns->open(a.pos[0], rd_db_snap(s.db)->pid, rd_db_snap(s.db)->id, &lo);
		}
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		top_doc(d, &s, by, &a, by == TOP_CLASS || by == TOP_SITE ? &folded : &m, total, live);
		r = top_mappings(d, &s);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
		if (live)
			rd_live_fns->close(live);
	}
	insp_aggmap_free(&m);
	insp_aggmap_free(&folded);
	rd_session_close(&s);
	return r;
}
