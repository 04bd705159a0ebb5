/*
** insp_cmd_runs.c — `inspect diff OLD NEW` when OLD and NEW are two runs
** (heaptrack_print -d): the event counters of each run's process
** (insp_cmd_counts.c: calls, allocated bytes, temporary allocations, live
** at the peak, live at exit) compared site by site and in total.
**
** Numbers and addresses mean nothing from one process to the next, so a
** site is matched by what stays: rd_type_key, its stack of functions and
** source lines (registered types by name).  Sites with the same key in one
** run are added up.  Two snapshots of one process (same pid, same start),
** and two snapshots of one file, are compared block by block as before
** (insp_cmd_diff.c): this file says RD_CONTINUE for them.
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define RUNS_DEFAULT_LIMIT 20

static const char *const metric_heads[RD_EV_N] = {"calls", "allocated", "temporary", "peak",
							"leaked"};

/* --------------------------------------------------------- which case -- */

/* The process a side is about: that of snapshot `snap`, else the file's
** program; its start is the capture time less the time since libmeminst
** started, of its latest snapshot. */
static int runs_process(const struct rd_opts *o, const char *file, int64_t snap, int64_t *pid,
			int64_t *start, int64_t *elapsed)
{
	rd_db_t *db;
	int r = rd_db_open(file, o, &db);
	if (!r && snap)
		r = rd_db_select(db, snap, RD_NEED_ANY);
	if (!r)
		r = rd_db_main_pid(db, snap ? rd_db_snap(db)->pid : 0, pid);
	sqlite3_stmt *st = r ? NULL : rd_db_prepare(db, "SELECT time_ns - elapsed_ns, elapsed_ns FROM snapshot "
							"WHERE pid = ?1 AND (?2 = 0 OR id = ?2) ORDER BY id DESC LIMIT 1");
	if (!r && !st)
		r = RD_EXIT_DB;
	if (st) {
		sqlite3_bind_int64(st, 1, *pid);
		sqlite3_bind_int64(st, 2, snap);
		int rc = sqlite3_step(st);
		*start = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		*elapsed = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			r = rd_db_fail(db, "reading the snapshot table");
		sqlite3_finalize(st);
	}
	rd_db_close(db);
	return r;
}

/* Same pid and the same start.  The start is derived from two clocks
** (realtime at capture, monotonic since start) which may drift apart by
** up to NTP's 500 ppm, hence the margin; a later process with the same pid
** started after the earlier one ended, its whole run later. */
static bool runs_same_process(const int64_t pid[2], const int64_t start[2], const int64_t elapsed[2])
{
	int64_t gap = start[0] > start[1] ? start[0] - start[1] : start[1] - start[0];
	int64_t longest = elapsed[0] > elapsed[1] ? elapsed[0] : elapsed[1];
	return pid[0] == pid[1] && gap <= 1000000 + longest / 1000;
}

/* Two snapshots of one file are compared block by block whatever their
** processes, as they always were (with a note when the pids differ). */
static bool runs_one_file(const char *const files[2])
{
	struct stat a, b;
	if (stat(files[0], &a) != 0 || stat(files[1], &b) != 0)
		return strcmp(files[0], files[1]) == 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ------------------------------------------------------------- sites -- */

struct runs_side {
	struct rd_session s;
	struct rd_events_snaps p;
	struct rd_events_summary sum;
	const char *file;
};

struct runs_site {
	const char *key, *label, *where, *chain, *stack;
	uint64_t v[2][RD_EV_N];
	bool in[2];
};

static int runs_collect(struct rd_vec *sites, struct runs_side *side, int k)
{
	struct rd_session *s = &side->s;
	struct rd_site_events *ev;
	size_t n;
	int r = rd_events_sites(s->db, &side->p, RD_EV_CALLS, &ev, &n);
	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		int64_t id = ev[i].type;
		struct runs_site *x = rd_vec_push(sites);
		memset(x, 0, sizeof *x);
		x->key = rd_type_key(s->db, &s->tags, id);
		x->label = rd_type_label(s->db, &s->tags, id, &x->where);
		x->chain = rd_type_chain(s->db, &s->tags, id);
		x->stack = rd_type_stack(s->db, &s->tags, id);
		x->in[k] = true;
		for (int m = 0; m < RD_EV_N; m++)
			x->v[k][m] = ev[i].v[m];
	}
	free(ev);
	return 0;
}

static int site_by_key(const void *x, const void *y)
{
	return strcmp(((const struct runs_site *)x)->key, ((const struct runs_site *)y)->key);
}

/* b - a, saturated (the figures of a damaged file can be anything) */
static int64_t runs_sub(uint64_t b, uint64_t a)
{
	return b >= a ? (int64_t)(b - a > INT64_MAX ? INT64_MAX : b - a)
		      : -(int64_t)(a - b > INT64_MAX ? INT64_MAX : a - b);
}

static int64_t runs_delta(const struct runs_site *x, int m)
{
	return runs_sub(x->v[1][m], x->v[0][m]);
}

static uint64_t runs_dist(const struct runs_site *x, int m)
{
	return x->v[1][m] >= x->v[0][m] ? x->v[1][m] - x->v[0][m] : x->v[0][m] - x->v[1][m];
}

static int runs_order; /* the metric that sorts: qsort has no context */

/* Largest change of the metric first, then of the others in their order. */
static int site_by_change(const void *x, const void *y)
{
	const struct runs_site *a = x, *b = y;
	for (int i = 0; i <= RD_EV_N; i++) {
		int m = i == 0 ? runs_order : i - 1;
		uint64_t da = runs_dist(a, m), db = runs_dist(b, m);
		if (da != db)
			return da > db ? -1 : 1;
	}
	return strcmp(a->key, b->key);
}

/* The sites of both runs with the same key added up (B's names kept);
** those with no change left out; the rest by change. */
static size_t runs_fold(struct runs_site *v, size_t n, int order)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, site_by_key);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(v[k - 1].key, v[i].key) == 0) {
			struct runs_site *to = &v[k - 1];
			for (int s = 0; s < 2; s++) {
				for (int m = 0; m < RD_EV_N; m++)
					to->v[s][m] += v[i].v[s][m];
				to->in[s] = to->in[s] || v[i].in[s];
			}
			if (v[i].in[1] && !to->in[1])
				to->label = v[i].label, to->where = v[i].where, to->chain = v[i].chain,
				to->stack = v[i].stack;
		} else {
			v[k++] = v[i];
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (memcmp(v[i].v[0], v[i].v[1], sizeof v[i].v[0]) != 0)
			v[m++] = v[i];
	runs_order = order;
	qsort(v, m, sizeof *v, site_by_change);
	return m;
}

/* ------------------------------------------------------------ output -- */

static const struct rd_col sum_cols[] = {
	{"pid_a", "process of A", RD_K_INT, 0},
	{"pid_b", "process of B", RD_K_INT, 0},
	{"same_process", "same process", RD_K_BOOL, 0},
	{"processes_a", "processes in A", RD_K_INT, 0},
	{"processes_b", "processes in B", RD_K_INT, 0},
	{"calls_a", "calls in A", RD_K_INT, 0},
	{"calls_b", "calls in B", RD_K_INT, 0},
	{"delta_calls", "calls change", RD_K_INT, 0},
	{"allocated_bytes_a", "allocated in A", RD_K_SIZE, 0},
	{"allocated_bytes_b", "allocated in B", RD_K_SIZE, 0},
	{"delta_allocated_bytes", "allocated change", RD_K_DELTA, 0},
	{"temporary_a", "temporary in A", RD_K_INT, 0},
	{"temporary_b", "temporary in B", RD_K_INT, 0},
	{"delta_temporary", "temporary change", RD_K_INT, 0},
	{"peak_bytes_a", "peak in A", RD_K_SIZE, 0},
	{"peak_bytes_b", "peak in B", RD_K_SIZE, 0},
	{"delta_peak_bytes", "peak change", RD_K_DELTA, 0},
	{"leaked_bytes_a", "leaked in A", RD_K_SIZE, 0},
	{"leaked_bytes_b", "leaked in B", RD_K_SIZE, 0},
	{"delta_leaked_bytes", "leaked change", RD_K_DELTA, 0},
	{"new_sites", "new sites (in B only)", RD_K_INT, 0},
	{"gone_sites", "gone sites (in A only)", RD_K_INT, 0},
	{"changed_sites", "sites changed", RD_K_INT, 0},
};

/* a, b and b - a of one metric; leaked is null in a run without an exit
** snapshot */
static void runs_put3(rd_table_t *t, uint64_t a, uint64_t b, bool has_a, bool has_b)
{
	has_a ? rd_put_uint(t, a) : rd_put_null(t);
	has_b ? rd_put_uint(t, b) : rd_put_null(t);
	has_a && has_b ? rd_put_int(t, runs_sub(b, a)) : rd_put_null(t);
}

/* How many processes a side's file holds: a launcher session has one
** per process of the tree, and only one of them (sd->p.pid) is compared. */
static int64_t runs_processes(rd_db_t *db)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT COUNT(DISTINCT pid) FROM snapshot");
	int64_t n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 1;
	sqlite3_finalize(st);
	return n;
}

static void runs_summary(rd_doc_t *d, const struct runs_side *sd, const struct runs_site *v, size_t n,
			 const int64_t snaps[2])
{
	rd_table_t *t = rd_doc_table(d, "summary", sum_cols, NCOLS(sum_cols), RD_T_SINGLE);
	const struct rd_events_summary *a = &sd[0].sum, *b = &sd[1].sum;
	uint64_t fresh = 0, gone = 0;
	for (size_t i = 0; i < n; i++) {
		fresh += !v[i].in[0];
		gone += !v[i].in[1];
	}
	rd_row(t);
	rd_put_int(t, sd[0].p.pid);
	rd_put_int(t, sd[1].p.pid);
	rd_put_int(t, 0);
	int64_t procs[2] = {runs_processes(sd[0].s.db), runs_processes(sd[1].s.db)};
	rd_put_int(t, procs[0]);
	rd_put_int(t, procs[1]);
	runs_put3(t, a->calls, b->calls, true, true);
	runs_put3(t, a->allocated, b->allocated, true, true);
	runs_put3(t, a->temporary, b->temporary, true, true);
	/* the exact peak, heaptrack's: a run whose peak fell between two
	** snapshots holds less in its highest one (bc: 65,329 of 66,353) */
	runs_put3(t, a->peak, b->peak, true, true);
	runs_put3(t, a->leaked, b->leaked, a->has_exit, b->has_exit);
	rd_put_uint(t, fresh);
	rd_put_uint(t, gone);
	rd_put_uint(t, n - fresh - gone);
	char which[2][160] = {"", ""};
	for (int s = 0; s < 2; s++)
		if (procs[s] > 1)
			snprintf(which[s], sizeof which[s], "; %c holds %lld processes, compared: pid %lld, %s", 'A' + s,
				 (long long)procs[s], (long long)sd[s].p.pid,
				 snaps[s] ? "that of the snapshot given" : "its main process (FILE:N picks another's)");
	rd_table_note(t, "note: A and B are two processes (pid %lld and %lld): sites are matched by "
			"function, source line and stack; addresses do not compare, so no block is listed%s%s",
			(long long)sd[0].p.pid, (long long)sd[1].p.pid, which[0], which[1]);
}

static const struct rd_col site_cols[] = {
	{"key", "", RD_K_STR, RD_C_DATA_ONLY},
	{"change", "", RD_K_STR, 0},
	{"delta_calls", "calls", RD_K_INT, 0},
	{"delta_allocated_bytes", "allocated", RD_K_DELTA, 0},
	{"delta_temporary", "temporary", RD_K_INT, 0},
	{"delta_peak_bytes", "peak", RD_K_DELTA, 0},
	{"delta_leaked_bytes", "leaked", RD_K_DELTA, 0},
	{"calls_a", "", RD_K_INT, RD_C_DATA_ONLY},
	{"calls_b", "", RD_K_INT, RD_C_DATA_ONLY},
	{"allocated_bytes_a", "", RD_K_INT, RD_C_DATA_ONLY},
	{"allocated_bytes_b", "", RD_K_INT, RD_C_DATA_ONLY},
	{"temporary_a", "", RD_K_INT, RD_C_DATA_ONLY},
	{"temporary_b", "", RD_K_INT, RD_C_DATA_ONLY},
	{"peak_bytes_a", "", RD_K_INT, RD_C_DATA_ONLY},
	{"peak_bytes_b", "", RD_K_INT, RD_C_DATA_ONLY},
	{"leaked_bytes_a", "", RD_K_INT, RD_C_DATA_ONLY},
	{"leaked_bytes_b", "", RD_K_INT, RD_C_DATA_ONLY},
	{"name", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
	{"stack", "stack", RD_K_STACK, 0},
};

static void runs_row(rd_table_t *t, const struct runs_site *x, const bool has_exit[2], bool stack)
{
	rd_row(t);
	rd_put_str(t, x->key);
	rd_put_str(t, !x->in[0] ? "new" : !x->in[1] ? "gone" : NULL);
	for (int m = 0; m < RD_EV_N; m++)
		if (m == RD_EV_LEAKED && !(has_exit[0] && has_exit[1]))
			rd_put_null(t);
		else
			rd_put_int(t, runs_delta(x, m));
	for (int m = 0; m < RD_EV_N; m++) {
		for (int s = 0; s < 2; s++)
			if (m == RD_EV_LEAKED && !has_exit[s])
				rd_put_null(t);
			else
				rd_put_uint(t, x->v[s][m]);
	}
	rd_put_str(t, x->label);
	rd_put_str(t, x->where);
	rd_put_str(t, x->chain);
	rd_put_str(t, stack ? x->stack : NULL);
}

static void runs_sites(rd_doc_t *d, const struct runs_side *sd, const struct rd_args *a, int order,
		       const struct runs_site *v, size_t n)
{
	size_t limit = a->limit >= 0 ? (size_t)a->limit : RUNS_DEFAULT_LIMIT;
	bool has_exit[2] = {sd[0].sum.has_exit, sd[1].sum.has_exit};
	rd_table_t *t = rd_doc_table(d, "sites", site_cols, NCOLS(site_cols), 0);
	rd_table_title(t, "sites by change of %s (B minus A; peak: live at each run's peak; leaked: live "
			"at exit%s):", metric_heads[order],
			has_exit[0] && has_exit[1] ? "" : ", unknown: a run without an exit snapshot");
	for (size_t i = 0; i < n && i < limit; i++)
		runs_row(t, &v[i], has_exit, rd_stack_row(a, i, 0));
	if (n > limit)
		rd_table_note(t, "(%zu more sites changed)", n - limit);
}

/* ------------------------------------------------------------ the run -- */

static int runs_open(struct runs_side *side, const struct rd_opts *o, const struct rd_args *a,
		     const char *file, int64_t snap)
{
	side->file = file;
	int r = rd_events_open(&side->s, o, file, 0, snap, a->no_symbols, &side->p);
	return r ? r : rd_events_summary(side->s.db, &side->p, &side->sum);
}

static int runs_print(const struct rd_opts *o, const struct rd_args *a, struct runs_side *sd,
		      const int64_t snaps[2])
{
	int order = a->by ? rd_event_metric(a->by) : RD_EV_ALLOCATED;
	struct rd_vec v;
	rd_vec_init(&v, sizeof(struct runs_site));
	int r = runs_collect(&v, &sd[0], 0);
	if (!r)
		r = runs_collect(&v, &sd[1], 1);
	if (!r) {
		size_t n = runs_fold(v.v, v.n, order);
		rd_doc_t *d = rd_doc_new(o, a);
		rd_doc_snapshot(d, "a", sd[0].file, rd_db_snap(sd[0].s.db));
		rd_doc_snapshot(d, "b", sd[1].file, rd_db_snap(sd[1].s.db));
		runs_summary(d, sd, v.v, n, snaps);
		runs_sites(d, sd, a, order, v.v, n);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_vec_free(&v);
	return r;
}

int insp_diff_runs(const struct rd_opts *o, const struct rd_args *a, const char *const files[2],
		   const int64_t snaps[2])
{
	int64_t pid[2], start[2], elapsed[2];
	int r = 0;
	if (runs_one_file(files))
		return RD_CONTINUE;
	for (int s = 0; s < 2 && !r; s++)
		r = runs_process(o, files[s], snaps[s], &pid[s], &start[s], &elapsed[s]);
	if (r || runs_same_process(pid, start, elapsed))
		return r ? r : RD_CONTINUE;
	if (rd_filter_any(&a->filter))
		return rd_usage_error(o, "diff", "A and B are two runs, compared by the counters of every "
					"site: no filters");
	struct runs_side sd[2] = {{.s = {0}}};
	for (int s = 0; s < 2 && !r; s++)
		r = runs_open(&sd[s], o, a, files[s], snaps[s]);
	if (!r)
		r = runs_print(o, a, sd, snaps);
	for (int s = 0; s < 2; s++)
		rd_session_close(&sd[s].s);
	return r;
}
