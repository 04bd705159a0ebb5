/*
** insp_cmd_counts.c — the commands over the event counters
** (meminst-snapshot(5): status_event, size_hist): `inspect top --by
** calls|allocated|temporary|peak|leaked` (heaptrack_print -a, -T, -p, -l
** as one table of sites) and `inspect sizes` (heaptrack_print -H: the
** log2 histogram of requested sizes, in total and per site).
**
** A row is a type: for automatic types, an allocation site.  calls,
** allocated and temporary come from the counts snapshot (--snapshot N,
** else the process's latest with counters); peak is what each type had
** live in the snapshot of the highest total; leaked, live in the exit
** snapshot (null without one).
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define COUNTS_DEFAULT_LIMIT 20

/* The session's snapshots for the counters (rd_events_open): the process
** (--pid, else the program's), its counts, peak and exit snapshots, and
** the type names of the counts snapshot. */
static int counts_open(struct rd_session *s, const struct rd_opts *o, const struct rd_args *a,
		       struct rd_events_snaps *p)
{
	return rd_events_open(s, o, a->pos[0], a->pid, a->snapshot, a->no_symbols, p);
}

static const struct rd_col top_event_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"calls", "calls", RD_K_INT, 0},
	{"allocated_bytes", "allocated", RD_K_SIZE, 0},
	{"temporary", "temporary", RD_K_INT, 0},
	{"peak_bytes", "peak", RD_K_SIZE, 0},
	{"leaked_bytes", "leaked", RD_K_SIZE, 0},
	{"share", "share", RD_K_PCT, 0},
	{"name", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
	{"stack", "stack", RD_K_STACK, 0},
};

static int counts_rows(rd_table_t *t, struct rd_session *s, const struct rd_events_snaps *p, int metric,
		       uint64_t total, const struct rd_args *a)
{
	size_t limit = a->limit >= 0 ? (size_t)a->limit : COUNTS_DEFAULT_LIMIT;
	struct rd_site_events *v;
	size_t n;
	int r = rd_events_sites(s->db, p, metric, &v, &n);
	uint64_t rest = 0;
	for (size_t i = 0; !r && i < n; i++) {
		const struct rd_site_events *e = &v[i];
		if (i >= limit || (e->v[metric] == 0 && metric >= RD_EV_PEAK)) {
			rest += e->v[metric];
			continue;
		}
		const char *where = NULL;
		rd_row(t);
		rd_put_int(t, e->type);
		for (int c = 0; c < RD_EV_LEAKED; c++)
			rd_put_int(t, (int64_t)e->v[c]);
		if (p->exit)
			rd_put_int(t, (int64_t)e->v[RD_EV_LEAKED]);
		else
			rd_put_null(t);
		rd_put_pct(t, total ? 100.0 * (double)e->v[metric] / (double)total : 0.0);
		rd_put_str(t, rd_type_label(s->db, &s->tags, e->type, &where));
		rd_put_str(t, where);
		rd_put_str(t, rd_type_chain(s->db, &s->tags, e->type));
		/* heaptrack_print's -a -T -p -l give each site its stack: two
		** sites of one line are told apart only by theirs */
		rd_put_str(t, rd_stack_row(a, i, 0) ? rd_type_stack(s->db, &s->tags, e->type) : NULL);
	}
	if (!r && n > limit)
		rd_table_note(t, "(%zu more sites, %llu of the %s)", n - limit, (unsigned long long)rest,
				rd_event_metrics[metric]);
	free(v);
	return r;
}

/* top --by calls|allocated|temporary|peak|leaked (insp_cmd_top.c hands over). */
int insp_top_events(const struct rd_opts *o, const struct rd_args *a, int metric)
{
	struct rd_session s;
	struct rd_events_snaps p;
	struct rd_events_summary sum;
	int r = counts_open(&s, o, a, &p);
	if (!r && metric == RD_EV_LEAKED && !p.exit) {
		rd_errf(o->err, "inspect: %s: process %lld stored no exit snapshot: nothing says what leaked\n",
			a->pos[0], (long long)p.pid);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r)
		r = rd_events_summary(s.db, &p, &sum);
	if (!r) {
		rd_doc_t *d = rd_doc_new(o, a);
		rd_doc_snapshot(d, "snapshot", a->pos[0], rd_db_snap(s.db));
		rd_table_t *t = rd_doc_table(d, "top", top_event_cols, NCOLS(top_event_cols), 0);
		rd_table_title(t, "sites by %s (peak: snapshot %lld; leaked: %s):", rd_event_metrics[metric],
				 (long long)p.peak, p.exit ? "the exit snapshot" : "no exit snapshot");
		r = counts_rows(t, &s, &p, metric, rd_events_total(&sum, metric), a);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}

/* ------------------------------------------------------------ sizes --- */

static const char *const sizes_by_words[] = {"total", "site", "type", NULL};

static const struct rd_option sizes_options[] = {
	{"by", 0, RD_OT_WORD, NULL, "total (default), or per site (= per type)", RD_ID_BY, 0, 0,
	 sizes_by_words},
	RD_OPTION_LIMIT("with --by site: the N sites with most calls (default 20)"),
	RD_OPTION_PID("that process's counters (default: the program's)"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest with counters)"),
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec sizes_spec = {
	"sizes", "[options] DB",
	"The requested sizes of every allocation since the start, as a log2\n"
	"histogram (heaptrack_print -H): bucket FROM counts requests of FROM up to\n"
	"twice FROM less one byte (the first also 0-byte requests).\n",
	sizes_options, 1, 1,
};

static const struct rd_col sizes_cols[] = {
	{"id", "no", RD_K_INT, RD_C_OPTIONAL},
	{"name", "name", RD_K_STR, RD_C_OPTIONAL},
	{"from_bytes", "from", RD_K_SIZE, 0},
	{"to_bytes", "to", RD_K_SIZE, 0},
	{"calls", "calls", RD_K_INT, 0},
	{"share", "share", RD_K_PCT, 0},
};

/* The rows of one histogram (type < 0: the total's). */
static int sizes_put(rd_table_t *t, struct rd_session *s, int64_t snap, int64_t type)
{
	uint64_t h[RD_SIZE_BUCKETS], all = 0;
	int r = rd_sizes_read(s->db, snap, type, h);
	for (int b = 0; b < RD_SIZE_BUCKETS; b++)
		all += h[b];
	for (int b = 0; !r && b < RD_SIZE_BUCKETS; b++) {
		if (!h[b])
			continue;
		rd_row(t);
		if (type < 0) {
			rd_put_null(t);
			rd_put_null(t);
		} else {
			rd_put_int(t, type);
			rd_put_str(t, rd_type_label(s->db, &s->tags, type, NULL));
		}
		rd_put_uint(t, b ? 1ull << b : 0);
		rd_put_uint(t, (2ull << b) - 1);
		rd_put_uint(t, h[b]);
		rd_put_pct(t, 100.0 * (double)h[b] / (double)all);
	}
	return r;
}

/* The types with most calls, for --by site. */
static int sizes_sites(rd_table_t *t, struct rd_session *s, int64_t snap, size_t limit)
{
	sqlite3_stmt *st = rd_db_prepare(s->db, "SELECT id FROM status_event WHERE snapshot = ?1 AND "
					   "kind = 'types' ORDER BY calls DESC, id LIMIT ?2");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int64(st, 2, (int64_t)limit);
	int rc, r = 0;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = sizes_put(t, s, snap, sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return r ? r : rc == SQLITE_DONE ? 0 : rd_db_fail(s->db, "reading the event counters");
}

int insp_cmd_sizes(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&sizes_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	bool per_site = a.by && strcmp(a.by, "total") != 0;
	struct rd_session s;
	struct rd_events_snaps p;
	if (!(r = counts_open(&s, o, &a, &p))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		rd_table_t *t = rd_doc_table(d, "sizes", sizes_cols, NCOLS(sizes_cols), 0);
		rd_table_title(t, "requested sizes%s:", per_site ? ", by site (most calls first)" : "");
		r = per_site ? sizes_sites(t, &s, p.counts, a.limit >= 0 ? (size_t)a.limit : COUNTS_DEFAULT_LIMIT)
			     : sizes_put(t, &s, p.counts, -1);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}
