/*
** insp_cmd_timeline.c — `inspect timeline`: the memory of one process over
** time, from every snapshot it stored (the interval snapshots of a session
** make the timeline; exit, peak and signal snapshots are points on it), as a
** table and, in text, a small chart of the total bytes.
**
** The process is --pid, else the session's program (session_run.pid), else
** the one with the most snapshots.
*/
#include "insp_int.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define CHART_HEIGHT 8
#define CHART_WIDTH 64

static const struct rd_option timeline_options[] = {
	RD_OPTION_PID("the process (default: the session's program, else the\n"
			"process with the most snapshots)"),
	RD_OPTION_LIMIT("at most N rows in the table (the chart shows all)"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec timeline_spec = {
	"timeline", "[options] DB",
	"The memory of one process over time: every snapshot it stored, oldest\n"
	"first, with the total current bytes and blocks and the peak so far; in\n"
	"text, a chart of the total bytes above the table.\n",
	timeline_options, 1, 1,
};

static const struct rd_col timeline_cols[] = {
	{"snapshot", "no", RD_K_INT, 0},
	{"elapsed_ms", "elapsed", RD_K_DUR, 0},
	{"trigger", "trigger", RD_K_STR, 0},
	{"bytes", "size", RD_K_SIZE, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"max_ever_bytes", "max-ever", RD_K_SIZE, 0},
};

struct point {
	int64_t id, elapsed_ns;
	const char *trigger;
	uint64_t bytes, blocks, max_ever;
};

static int timeline_points(rd_db_t *db, int64_t pid, struct rd_vec *pts)
{
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT s.id, s.elapsed_ns, s.trigger, t.sizes_current, t.blocks_current, t.sizes_max_ever "
	    "FROM snapshot s JOIN status t ON t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 "
	    "WHERE s.pid = ? ORDER BY s.elapsed_ns, s.id");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct point *p = rd_vec_push(pts);
		p->id = sqlite3_column_int64(st, 0);
		p->elapsed_ns = sqlite3_column_int64(st, 1);
		p->trigger = rd_col_text(db, st, 2);
		p->bytes = (uint64_t)sqlite3_column_int64(st, 3);
		p->blocks = (uint64_t)sqlite3_column_int64(st, 4);
		p->max_ever = (uint64_t)sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the timeline");
}

/* The chart: columns are equal slices of the run, each as high as the
** largest total in its slice; eighths of a row with block characters on a
** UTF-8 terminal, '#' otherwise. */
static void timeline_chart(FILE *out, const struct point *p, size_t n)
{
	static const char *const eighths[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588"};
	bool utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	uint64_t top = 0, col[CHART_WIDTH] = {0};
	int64_t t0 = p[0].elapsed_ns, span = p[n - 1].elapsed_ns - t0;
	int width = n < CHART_WIDTH ? (int)n : CHART_WIDTH;
	for (size_t i = 0; i < n; i++) {
		int c = span > 0 ? (int)((double)(p[i].elapsed_ns - t0) / (double)span * (width - 1))
				 : (int)(i * (size_t)width / n);
		if (p[i].bytes > col[c])
			col[c] = p[i].bytes;
		if (p[i].bytes > top)
			top = p[i].bytes;
	}
	for (int c = 1; c < width; c++) /* a slice without a point holds the value before */
		if (!col[c])
			col[c] = col[c - 1];
	char label[32];
	for (int row = CHART_HEIGHT - 1; row >= 0; row--) {
		if (row == CHART_HEIGHT - 1 || row == 0)
			rd_fmt_size(row ? top : 0, label, sizeof label);
		else
			label[0] = 0;
		fprintf(out, "%10s |", label);
		for (int c = 0; c < width; c++) {
			uint64_t units = top ? col[c] * CHART_HEIGHT * 8 / top : 0;
			int here = units > (uint64_t)row * 8 ? (int)(units - (uint64_t)row * 8) : 0;
			fputs(here <= 0 ? " " : utf8 ? eighths[here > 8 ? 8 : here] : "#", out);
		}
		fputc('\n', out);
	}
	char t_end[32];
	rd_fmt_dur(p[n - 1].elapsed_ns, t_end, sizeof t_end);
	/* the end's label right-aligned under the last column, but never run
	** into the "0" under the first (a chart of a few points is narrow) */
	int end_at = width - 1 > (int)strlen(t_end) ? width - 1 : (int)strlen(t_end) + 1;
	fprintf(out, "%10s +%.*s\n%12s%*s\n\n", "", width,
		"----------------------------------------------------------------", "0", end_at,
		t_end);
}

int insp_cmd_timeline(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&timeline_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	setlocale(LC_CTYPE, "");
	rd_db_t *db;
	if ((r = rd_db_open(a.pos[0], o, &db)))
		return r;
	struct rd_vec pts;
	rd_vec_init(&pts, sizeof(struct point));
	int64_t pid = 0;
	r = rd_db_main_pid(db, a.pid, &pid);
	if (r == RD_EXIT_NOTFOUND)
		rd_errf(o->err, "inspect: %s: no snapshot%s\n", a.pos[0], a.pid ? " of that process" : "s");
	if (!r && !(r = timeline_points(db, pid, &pts)) && pts.n == 0) {
		rd_errf(o->err, "inspect: %s: no snapshot of process %lld\n", a.pos[0], (long long)pid);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r) {
		const struct point *p = pts.v;
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_table_t *t = rd_doc_table(d, "timeline", timeline_cols, NCOLS(timeline_cols), 0);
		rd_table_title(t, "memory of process %lld over time (%zu snapshots):", (long long)pid, pts.n);
		size_t limit = a.limit >= 0 ? (size_t)a.limit : pts.n;
		for (size_t i = 0; i < pts.n && i < limit; i++) {
			rd_row(t);
			rd_put_int(t, p[i].id);
			rd_put_int(t, p[i].elapsed_ns);
			rd_put_const(t, p[i].trigger);
			rd_put_uint(t, p[i].bytes);
			rd_put_uint(t, p[i].blocks);
			rd_put_uint(t, p[i].max_ever);
		}
		if (pts.n > limit)
			rd_table_note(t, "(%zu more rows)", pts.n - limit);
		if (a.format == RD_FMT_TEXT)
			timeline_chart(o->out, p, pts.n);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_vec_free(&pts);
	rd_db_close(db);
	return r;
}
