/*
** rd_events.c — the event counters of a process's snapshots
** (status_event, size_hist, snapshot_rss: meminst-snapshot(5)): which
** snapshots answer heaptrack's questions, the summary, the histograms.
** Files of an older libmeminst have none of these tables: the functions
** then say so (RD_EXIT_NOTFOUND after one line).
*/
#include "rd_int.h"

#include <string.h>

#include "meminst-snapshot.h"

static int64_t events_int(rd_db_t *db, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *st;
	int64_t v = 0;
	if (sqlite3_prepare_v2(rd_db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

bool rd_events_stored(rd_db_t *db)
{
	return events_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'status_event'", 0, 0) > 0;
}

/*
** The snapshots of pid that answer: the counts (`want`, else the latest
** with event counters), the peak (the highest total of live bytes) and the
** exit (the latest exit snapshot; 0 if the process stored none).
*/
int rd_events_pick(rd_db_t *db, int64_t pid, int64_t want, struct rd_events_snaps *out)
{
	const struct rd_opts *o = rd_db_opts(db);
	memset(out, 0, sizeof *out);
	if (!rd_events_stored(db)) {
		rd_errf(o->err, "inspect: %s: no event counters (written by a libmeminst older than "
			"the calls and temporary counts)\n", rd_db_path(db));
		return RD_EXIT_NOTFOUND;
	}
	out->counts = want ? want
			   : events_int(db, "SELECT max(e.snapshot) FROM status_event e JOIN snapshot s "
					    "ON s.id = e.snapshot WHERE s.pid = ?1 AND e.kind = 'total'", pid, 0);
	if (!out->counts || !events_int(db, "SELECT count(*) FROM status_event WHERE snapshot = ?1", out->counts, 0)) {
		rd_errf(o->err, "inspect: %s: no event counters in %s %lld\n", rd_db_path(db),
			want ? "snapshot" : "any snapshot of process", (long long)(want ? want : pid));
		return RD_EXIT_NOTFOUND;
	}
	pid = events_int(db, "SELECT pid FROM snapshot WHERE id = ?1", out->counts, 0);
	out->pid = pid;
	out->peak = events_int(db, "SELECT s.id FROM snapshot s JOIN status t ON t.snapshot = s.id AND "
				   "t.kind = 'total' AND t.id = 0 WHERE s.pid = ?1 AND s.id <= ?2 "
				   "ORDER BY t.sizes_current DESC, s.id LIMIT 1", pid, out->counts);
	out->exit = events_int(db, "SELECT max(id) FROM snapshot WHERE pid = ?1 AND trigger = 'exit' AND id <= ?2",
			       pid, out->counts);
	return 0;
}

/* The totals of heaptrack_print's summary for the snapshots picked. */
int rd_events_summary(rd_db_t *db, const struct rd_events_snaps *p, struct rd_events_summary *out)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *st = rd_db_prepare(db,
		"SELECT e.calls, e.allocated, e.frees, e.temporary, e.reallocs, t.sizes_max_ever, "
		" (SELECT max(r.max_rss) FROM snapshot_rss r WHERE r.snapshot <= ?1 AND r.snapshot IN "
		"  (SELECT id FROM snapshot WHERE pid = ?3)), "
		" (SELECT sizes_current FROM status WHERE snapshot = ?2 AND kind = 'total'), "
		" (SELECT blocks_current FROM status WHERE snapshot = ?2 AND kind = 'total'), "
		" (SELECT sizes_current FROM status WHERE snapshot = ?4 AND kind = 'total') "
		"FROM status_event e JOIN status t ON t.snapshot = ?1 AND t.kind = 'total' "
		"WHERE e.snapshot = ?1 AND e.kind = 'total' AND e.id = 0");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, p->counts);
	sqlite3_bind_int64(st, 2, p->exit);
	sqlite3_bind_int64(st, 3, p->pid);
	sqlite3_bind_int64(st, 4, p->peak);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		uint64_t *v[] = {&out->calls, &out->allocated, &out->frees, &out->temporary, &out->reallocs,
				 &out->peak, &out->peak_rss, &out->leaked, &out->leaked_blocks, &out->peak_held};
		for (int c = 0; c < (int)(sizeof v / sizeof v[0]); c++)
			*v[c] = (uint64_t)sqlite3_column_int64(st, c);
		out->has_rss = sqlite3_column_type(st, 6) != SQLITE_NULL;
		out->has_exit = p->exit != 0;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the event counters");
}

/* The log2 histogram of requested sizes of snapshot snap: of one type, or
** (type < 0) of all. */
int rd_sizes_read(rd_db_t *db, int64_t snap, int64_t type, uint64_t out[RD_SIZE_BUCKETS])
{
	memset(out, 0, RD_SIZE_BUCKETS * sizeof out[0]);
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT bucket, sum(count) FROM size_hist WHERE snapshot = ?1 "
					       "AND (?2 < 0 OR type = ?2) GROUP BY bucket");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int64(st, 2, type);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t b = sqlite3_column_int64(st, 0);
		if (b >= 0 && b < RD_SIZE_BUCKETS)
			out[b] += (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the size histogram");
}

/* ------------------------------------------------------------- sites -- */

const char *const rd_event_metrics[RD_EV_N + 1] = {"calls", "allocated", "temporary", "peak", "leaked", NULL};

int rd_event_metric(const char *word)
{
	for (int i = 0; word && i < RD_EV_N; i++)
		if (strcmp(word, rd_event_metrics[i]) == 0)
			return i;
	return -1;
}

uint64_t rd_events_total(const struct rd_events_summary *s, int metric)
{
	const uint64_t v[RD_EV_N] = {s->calls, s->allocated, s->temporary, s->peak_held, s->leaked};
	return metric >= 0 && metric < RD_EV_N ? v[metric] : 0;
}

int rd_events_sites(rd_db_t *db, const struct rd_events_snaps *p, int order, struct rd_site_events **out,
		    size_t *n)
{
	/* the ORDER BY of each metric: columns of the query */
	static const char *const by[RD_EV_N] = {"2", "3", "4", "5", "6"};
	*out = NULL;
	*n = 0;
	char *sql = sqlite3_mprintf(
		"SELECT e.id, e.calls, e.allocated, e.temporary, "
		" coalesce((SELECT sizes_current FROM status WHERE snapshot = ?2 AND kind = 'types' AND id = e.id), 0), "
		" coalesce((SELECT sizes_current FROM status WHERE snapshot = ?3 AND kind = 'types' AND id = e.id), 0) "
		"FROM status_event e WHERE e.snapshot = ?1 AND e.kind = 'types' ORDER BY %s DESC, e.id",
		by[order >= 0 && order < RD_EV_N ? order : 0]);
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	sqlite3_free(sql);
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, p->counts);
	sqlite3_bind_int64(st, 2, p->peak);
	sqlite3_bind_int64(st, 3, p->exit); /* 0: no snapshot, every leaked 0 */
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*out = rd_xrealloc(*out, (cap = cap ? 2 * cap : 64) * sizeof **out);
		struct rd_site_events *e = &(*out)[(*n)++];
		e->type = sqlite3_column_int64(st, 0);
		for (int m = 0; m < RD_EV_N; m++)
			e->v[m] = (uint64_t)sqlite3_column_int64(st, 1 + m);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the event counters");
}

int rd_events_open(struct rd_session *s, const struct rd_opts *o, const char *path, int64_t pid, int64_t want,
		   bool no_symbols, struct rd_events_snaps *p)
{
	*s = (struct rd_session){0};
	int r = rd_db_open(path, o, &s->db);
	if (!r && want)
		r = rd_db_select(s->db, want, RD_NEED_ANY);
	if (!r && want)
		pid = rd_db_snap(s->db)->pid;
	if (!r && !pid)
		r = rd_db_main_pid(s->db, 0, &pid);
	if (!r)
		r = rd_events_pick(s->db, pid, want, p);
	if (!r)
		r = rd_db_select(s->db, p->counts, RD_NEED_ANY);
	if (!r) {
		struct rd_args a = {.no_symbols = no_symbols};
		r = rd_session_tags(s, &a);
	}
	return r;
}
