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

static const char *const metric_words[] = {"calls", "allocated", "temporary", "peak", "leaked"};
/* the ORDER BY of each metric (columns of counts_rows' query) */
static const char *const metric_order[] = {"2", "3", "4", "5", "coalesce(6, -1)"};

int insp_counts_metric(const char *by)
{
	for (int i = 0; by && i < NCOLS(metric_words); i++)
		if (strcmp(by, metric_words[i]) == 0)
			return i;
	return -1;
}

/* The session's snapshots for the counters: the process (--pid, else the
** program's), its counts, peak and exit snapshots, and the type names of
** the counts snapshot. */
static int counts_open(struct insp_session *s, const struct insp_opts *o, const struct insp_args *a,
		       struct insp_events_snaps *p)
{
	*s = (struct insp_session){0};
	int64_t pid = a->pid;
	int r = insp_db_open(a->pos[0], o, &s->db);
	if (!r && a->snapshot)
		r = insp_db_select(s->db, a->snapshot, INSP_NEED_ANY);
	if (!r && a->snapshot)
		pid = insp_db_snap(s->db)->pid;
	if (!r && !pid)
		r = insp_db_main_pid(s->db, 0, &pid);
	if (!r)
		r = insp_events_pick(s->db, pid, a->snapshot, p);
	if (!r)
		r = insp_db_select(s->db, p->counts, INSP_NEED_ANY);
	if (!r)
		r = insp_session_tags(s, a);
	return r;
}

static const struct insp_col top_event_cols[] = {
	{"id", "no", INSP_K_INT, 0},
	{"calls", "calls", INSP_K_INT, 0},
	{"allocated_bytes", "allocated", INSP_K_SIZE, 0},
	{"temporary", "temporary", INSP_K_INT, 0},
	{"peak_bytes", "peak", INSP_K_SIZE, 0},
	{"leaked_bytes", "leaked", INSP_K_SIZE, 0},
	{"share", "share", INSP_K_PCT, 0},
	{"name", "name", INSP_K_STR, 0},
	{"location", "location", INSP_K_LOC, INSP_C_OPTIONAL},
	{"inlined", "inlined", INSP_K_STR, INSP_C_DATA_ONLY},
};

static int counts_rows(insp_table_t *t, struct insp_session *s, const struct insp_events_snaps *p, int metric,
		       uint64_t total, size_t limit)
{
	char *sql = sqlite3_mprintf(
		"SELECT e.id, e.calls, e.allocated, e.temporary, "
		" coalesce((SELECT sizes_current FROM status WHERE snapshot = ?2 AND kind = 'types' AND id = e.id), 0), "
		" CASE WHEN ?3 THEN coalesce((SELECT sizes_current FROM status WHERE snapshot = ?3 AND "
		"  kind = 'types' AND id = e.id), 0) END "
		"FROM status_event e WHERE e.snapshot = ?1 AND e.kind = 'types' ORDER BY %s DESC, e.id",
		metric_order[metric]);
	sqlite3_stmt *st = insp_db_prepare(s->db, sql);
	sqlite3_free(sql);
	if (!st)
		return INSP_EXIT_DB;
	sqlite3_bind_int64(st, 1, p->counts);
	sqlite3_bind_int64(st, 2, p->peak);
	sqlite3_bind_int64(st, 3, p->exit);
	size_t n = 0;
	uint64_t rest = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t v = (uint64_t)sqlite3_column_int64(st, 1 + metric);
		if (n++ >= limit || (v == 0 && metric >= 3)) {
			rest += v;
			continue;
		}
		int64_t id = sqlite3_column_int64(st, 0);
		const char *where = NULL;
		insp_row(t);
		insp_put_int(t, id);
		for (int c = 1; c <= 4; c++)
			insp_put_int(t, sqlite3_column_int64(st, c));
		if (sqlite3_column_type(st, 5) == SQLITE_NULL)
			insp_put_null(t);
		else
			insp_put_int(t, sqlite3_column_int64(st, 5));
		insp_put_pct(t, total ? 100.0 * (double)v / (double)total : 0.0);
		insp_put_str(t, insp_type_label(s->db, &s->tags, id, &where));
		insp_put_str(t, where);
		insp_put_str(t, insp_type_chain(s->db, &s->tags, id));
	}
	sqlite3_finalize(st);
	if (n > limit)
		insp_table_note(t, "(%zu more sites, %llu of the %s)", n - limit, (unsigned long long)rest,
				metric_words[metric]);
	return rc == SQLITE_DONE ? 0 : insp_db_fail(s->db, "reading the event counters");
}

/* top --by calls|allocated|temporary|peak|leaked (insp_cmd_top.c hands over). */
int insp_top_events(const struct insp_opts *o, const struct insp_args *a, int metric)
{
	struct insp_session s;
	struct insp_events_snaps p;
	struct insp_events_summary sum;
	int r = counts_open(&s, o, a, &p);
	if (!r && metric == 4 && !p.exit) {
		insp_errf(o->err, "inspect: %s: process %lld stored no exit snapshot: nothing says what leaked\n",
			a->pos[0], (long long)p.pid);
		r = INSP_EXIT_NOTFOUND;
	}
	if (!r)
		r = insp_events_summary(s.db, &p, &sum);
	if (!r) {
		uint64_t totals[] = {sum.calls, sum.allocated, sum.temporary, sum.peak_held, sum.leaked};
		insp_doc_t *d = insp_doc_new(o, a);
		insp_doc_snapshot(d, "snapshot", a->pos[0], insp_db_snap(s.db));
		insp_table_t *t = insp_doc_table(d, "top", top_event_cols, NCOLS(top_event_cols), 0);
		insp_table_title(t, "sites by %s (peak: snapshot %lld; leaked: %s):", metric_words[metric],
				 (long long)p.peak, p.exit ? "the exit snapshot" : "no exit snapshot");
		r = counts_rows(t, &s, &p, metric, totals[metric],
				a->limit >= 0 ? (size_t)a->limit : COUNTS_DEFAULT_LIMIT);
		if (!r)
			r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}

/* ------------------------------------------------------------ sizes --- */

static const char *const sizes_by_words[] = {"total", "site", "type", NULL};

static const struct insp_option sizes_options[] = {
	{"by", 0, INSP_OT_WORD, NULL, "total (default), or per site (= per type)", INSP_ID_BY, 0, 0,
	 sizes_by_words},
	INSP_OPTION_LIMIT("with --by site: the N sites with most calls (default 20)"),
	INSP_OPTION_PID("that process's counters (default: the program's)"),
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest with counters)"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTIONS_SYMBOLS,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec sizes_spec = {
	"sizes", "[options] DB",
	"The requested sizes of every allocation since the start, as a log2\n"
	"histogram (heaptrack_print -H): bucket FROM counts requests of FROM up to\n"
	"twice FROM less one byte (the first also 0-byte requests).\n",
	sizes_options, 1, 1,
};

static const struct insp_col sizes_cols[] = {
	{"id", "no", INSP_K_INT, INSP_C_OPTIONAL},
	{"name", "name", INSP_K_STR, INSP_C_OPTIONAL},
	{"from_bytes", "from", INSP_K_SIZE, 0},
	{"to_bytes", "to", INSP_K_SIZE, 0},
	{"calls", "calls", INSP_K_INT, 0},
	{"share", "share", INSP_K_PCT, 0},
};

/* The rows of one histogram (type < 0: the total's). */
static int sizes_put(insp_table_t *t, struct insp_session *s, int64_t snap, int64_t type)
{
	uint64_t h[INSP_SIZE_BUCKETS], all = 0;
	int r = insp_sizes_read(s->db, snap, type, h);
	for (int b = 0; b < INSP_SIZE_BUCKETS; b++)
		all += h[b];
	for (int b = 0; !r && b < INSP_SIZE_BUCKETS; b++) {
		if (!h[b])
			continue;
		insp_row(t);
		if (type < 0) {
			insp_put_null(t);
			insp_put_null(t);
		} else {
			insp_put_int(t, type);
			insp_put_str(t, insp_type_label(s->db, &s->tags, type, NULL));
		}
		insp_put_uint(t, b ? 1ull << b : 0);
		insp_put_uint(t, (2ull << b) - 1);
		insp_put_uint(t, h[b]);
		insp_put_pct(t, 100.0 * (double)h[b] / (double)all);
	}
	return r;
}

/* The types with most calls, for --by site. */
static int sizes_sites(insp_table_t *t, struct insp_session *s, int64_t snap, size_t limit)
{
	sqlite3_stmt *st = insp_db_prepare(s->db, "SELECT id FROM status_event WHERE snapshot = ?1 AND "
					   "kind = 'types' ORDER BY calls DESC, id LIMIT ?2");
	if (!st)
		return INSP_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int64(st, 2, (int64_t)limit);
	int rc, r = 0;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = sizes_put(t, s, snap, sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return r ? r : rc == SQLITE_DONE ? 0 : insp_db_fail(s->db, "reading the event counters");
}

int insp_cmd_sizes(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&sizes_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	bool per_site = a.by && strcmp(a.by, "total") != 0;
	struct insp_session s;
	struct insp_events_snaps p;
	if (!(r = counts_open(&s, o, &a, &p))) {
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], insp_db_snap(s.db));
		insp_table_t *t = insp_doc_table(d, "sizes", sizes_cols, NCOLS(sizes_cols), 0);
		insp_table_title(t, "requested sizes%s:", per_site ? ", by site (most calls first)" : "");
		r = per_site ? sizes_sites(t, &s, p.counts, a.limit >= 0 ? (size_t)a.limit : COUNTS_DEFAULT_LIMIT)
			     : sizes_put(t, &s, p.counts, -1);
		if (!r)
			r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}
