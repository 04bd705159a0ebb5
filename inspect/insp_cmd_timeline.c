/*
** insp_cmd_timeline.c — `inspect timeline`: the memory of one process over
** time, from every snapshot it stored (the interval snapshots of a session
** make the timeline; exit, peak and signal snapshots are points on it), as a
** table and, in text, a small chart of the total bytes.
**
** With --by type|class|thread the bytes are split into series: the N
** entries of that kind whose current bytes rose highest at any point, and
** the rest added up as "other" (rd_timeline_by, which the HTML report's
** stacked chart reads too).  In text the chart is stacked (one digit or letter per series) and the
** table has a column per series; JSON and CSV have one row per snapshot
** and series, which plotting tools pivot themselves.
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
#define CHART_HEIGHT_STACKED 12
#define CHART_WIDTH 64
#define SERIES_DEFAULT 5
#define SERIES_MAX 24 /* the text table's columns (rd_out's limit) */

static const char *const timeline_by_words[] = {"type", "class", "thread", NULL};

static const struct rd_option timeline_options[] = {
	RD_OPTION_PID("the process (default: the session's program, else the\n"
			"process with the most snapshots)"),
	{"by", 0, RD_OT_WORD, NULL, "split the bytes into series by type, class or thread:\n"
	 "the largest entries, the rest added up as other", RD_ID_BY, 0, 0, timeline_by_words},
	RD_OPTION_LIMIT("at most N rows in the table (the chart shows all);\n"
			"with --by: the N largest series, 1 to 24 (default 5)"),
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec timeline_spec = {
	"timeline", "[options] DB",
	"The memory of one process over time: every snapshot it stored, oldest\n"
	"first, with the total current bytes and blocks and the peak so far; in\n"
	"text, a chart of the total bytes above the table.  With --by, the bytes\n"
	"of the largest types, classes or threads as series, stacked in the chart.\n",
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

/* ---------------------------------------------------------------- chart -- */

/* What the chart draws: n points, each k values stacked bottom first (k 1:
** the total alone, drawn in eighths of a row). */
struct chart {
	const struct rd_tl_point *p;
	size_t n;
	int k;
	const uint64_t *v; /* n * k */
};

static uint64_t chart_sum(const struct chart *c, size_t i)
{
	uint64_t s = 0;
	for (int j = 0; j < c->k; j++)
		s += c->v[i * (size_t)c->k + (size_t)j];
	return s;
}

/* The symbol of series j in the stacked chart; the last ("other") is '.'. */
static char chart_symbol(int j, bool other_last, int k)
{
	static const char symbols[] = "123456789abcdefghijklmnopqrstuvwxyz";
	return other_last && j == k - 1 ? '.' : symbols[j];
}

/* The chart: columns are equal slices of the run, each drawing the point
** of its slice with the largest total (a slice without a point repeats
** the one before).  One series: eighths of a row with block characters
** on a UTF-8 terminal, '#' otherwise; several: each cell shows the series
** its middle falls in. */
static void timeline_chart(FILE *out, const struct chart *c, bool other_last)
{
	static const char *const eighths[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588"};
	bool utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	const struct rd_tl_point *p = c->p;
	size_t n = c->n, pick[CHART_WIDTH];
	uint64_t top = 0, best[CHART_WIDTH] = {0};
	int64_t t0 = p[0].elapsed_ns, span = p[n - 1].elapsed_ns - t0;
	int width = n < CHART_WIDTH ? (int)n : CHART_WIDTH, height = c->k > 1 ? CHART_HEIGHT_STACKED : CHART_HEIGHT;
	for (int col = 0; col < width; col++)
		pick[col] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		int col = span > 0 ? (int)((double)(p[i].elapsed_ns - t0) / (double)span * (width - 1))
				   : (int)(i * (size_t)width / n);
		uint64_t sum = chart_sum(c, i);
		if (pick[col] == SIZE_MAX || sum > best[col])
			pick[col] = i, best[col] = sum;
		if (sum > top)
			top = sum;
	}
	for (int col = 1; col < width; col++)
		if (pick[col] == SIZE_MAX)
			pick[col] = pick[col - 1], best[col] = best[col - 1];
	char label[32];
	for (int row = height - 1; row >= 0; row--) {
		if (row == height - 1 || row == 0)
			rd_fmt_size(row ? top : 0, label, sizeof label);
		else
			label[0] = 0;
		fprintf(out, "%10s |", label);
		for (int col = 0; col < width; col++) {
			if (c->k == 1) {
				uint64_t units = top ? best[col] * (uint64_t)height * 8 / top : 0;
				int here = units > (uint64_t)row * 8 ? (int)(units - (uint64_t)row * 8) : 0;
				fputs(here <= 0 ? " " : utf8 ? eighths[here > 8 ? 8 : here] : "#", out);
				continue;
			}
			/* the cell's middle, in bytes: which series holds it */
			double mid = ((double)row + 0.5) * (double)top / height, below = 0;
			char sym = ' ';
			for (int j = 0; j < c->k && top; j++) {
				below += (double)c->v[pick[col] * (size_t)c->k + (size_t)j];
				if (below > mid) {
					sym = chart_symbol(j, other_last, c->k);
					break;
				}
			}
			fputc(sym, out);
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

/* --------------------------------------------------------------- series -- */

static const struct rd_col series_cols[] = {
	{"series", "series", RD_K_STR, 0},
	{"id", "no", RD_K_INT, 0},
	{"max_bytes", "max", RD_K_SIZE, 0},
	{"last_bytes", "last", RD_K_SIZE, 0},
	{"name", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

/* The legend: each series with its highest and last bytes. */
static void by_legend(rd_doc_t *d, const struct rd_tl_by *b, size_t n)
{
	rd_table_t *t = rd_doc_table(d, "series", series_cols, NCOLS(series_cols), 0);
	rd_table_title(t, "series (the %s whose bytes rose highest):", rd_tl_kinds[b->kind]);
	for (int j = 0; j < b->k; j++) {
		bool other = j == b->ns;
		char sym[2] = {chart_symbol(j, b->rest > 0, b->k), 0};
		uint64_t max = 0;
		for (size_t i = 0; i < n; i++)
			if (b->bytes[i * (size_t)b->k + (size_t)j] > max)
				max = b->bytes[i * (size_t)b->k + (size_t)j];
		rd_row(t);
		rd_put_str(t, other ? "other" : sym);
		if (other)
			rd_put_null(t);
		else
			rd_put_int(t, b->s[j].id);
		rd_put_uint(t, max);
		rd_put_uint(t, b->bytes[(n - 1) * (size_t)b->k + (size_t)j]);
		rd_put_const(t, b->s[j].name);
		rd_put_str(t, other ? NULL : b->s[j].where);
	}
	if (!b->k)
		rd_table_note(t, "(no %s with bytes)", rd_tl_kinds[b->kind]);
}

/* The points with their series.  Text: one row per snapshot, a column per
** series (headed by its symbol in the chart); JSON and CSV: one row per
** snapshot and series. */
static rd_table_t *by_table(rd_doc_t *d, const struct rd_args *a, const struct rd_tl_by *b, struct rd_col *wide)
{
	static const struct rd_col long_cols[] = {
		{"snapshot", "no", RD_K_INT, 0},
		{"elapsed_ms", "elapsed", RD_K_DUR, 0},
		{"trigger", "trigger", RD_K_STR, 0},
		{"series", "series", RD_K_STR, 0},
		{"id", "id", RD_K_INT, 0},
		{"name", "name", RD_K_STR, 0},
		{"bytes", "size", RD_K_SIZE, 0},
		{"blocks", "blocks", RD_K_INT, 0},
	};
	if (a->format != RD_FMT_TEXT)
		return rd_doc_table(d, "timeline", long_cols, NCOLS(long_cols), 0);
	memcpy(wide, timeline_cols, 4 * sizeof *wide);
	wide[3].head = "total";
	static const char heads[] = "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0" "8\0" "9\0" "a\0" "b\0" "c\0"
				    "d\0" "e\0" "f\0" "g\0" "h\0" "i\0" "j\0" "k\0" "l\0" "m\0" "n\0" "o\0";
	for (int j = 0; j < b->k; j++)
		wide[4 + j] = (struct rd_col){"series", j == b->ns ? "other" : heads + 2 * j, RD_K_SIZE, 0};
	return rd_doc_table(d, "timeline", wide, 4 + b->k, 0);
}

static void by_rows(rd_table_t *t, const struct rd_args *a, const struct rd_tl_by *b, const struct rd_tl_point *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *bytes = b->bytes + i * (size_t)b->k, *blocks = b->blocks + i * (size_t)b->k;
		if (a->format == RD_FMT_TEXT) {
			rd_row(t);
			rd_put_int(t, p[i].id);
			rd_put_int(t, p[i].elapsed_ns);
			rd_put_const(t, p[i].trigger);
			rd_put_uint(t, p[i].bytes);
			for (int j = 0; j < b->k; j++)
				rd_put_uint(t, bytes[j]);
			continue;
		}
		for (int j = 0; j < b->k; j++) {
			char sym[2] = {chart_symbol(j, b->rest > 0, b->k), 0};
			rd_row(t);
			rd_put_int(t, p[i].id);
			rd_put_int(t, p[i].elapsed_ns);
			rd_put_const(t, p[i].trigger);
			rd_put_str(t, j == b->ns ? "other" : sym);
			if (j == b->ns)
				rd_put_null(t);
			else
				rd_put_int(t, b->s[j].id);
			rd_put_const(t, b->s[j].name);
			rd_put_uint(t, bytes[j]);
			rd_put_uint(t, blocks[j]);
		}
	}
}

/* timeline --by: the legend, the stacked chart and the series. */
static int timeline_by(rd_db_t *db, const struct rd_opts *o, const struct rd_args *a, int64_t pid,
		       const struct rd_tl_point *p, size_t n)
{
	struct rd_tl_by b = {.kind = !strcmp(a->by, "class") ? RD_TL_CLASS : !strcmp(a->by, "thread") ? RD_TL_THREAD
										      : RD_TL_TYPE};
	int r = rd_timeline_by(db, pid, p, n, a->limit > 0 ? (int)a->limit : SERIES_DEFAULT, a->no_symbols, &b);
	if (!r) {
		struct rd_col wide[4 + SERIES_MAX + 1];
		rd_doc_t *d = rd_doc_new(o, a);
		by_legend(d, &b, n);
		rd_table_t *t = by_table(d, a, &b, wide);
		rd_table_title(t, "memory of process %lld over time by %s (%zu snapshots):", (long long)pid,
			       a->by, n);
		by_rows(t, a, &b, p, n);
		if (a->format == RD_FMT_TEXT && b.k) {
			struct chart c = {p, n, b.k, b.bytes};
			timeline_chart(o->out, &c, b.rest > 0);
		}
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_timeline_by_free(&b);
	return r;
}

/* The timeline of the total. */
static int timeline_total(const struct rd_opts *o, const struct rd_args *a, int64_t pid,
			  const struct rd_tl_point *p, size_t n)
{
	rd_doc_t *d = rd_doc_new(o, a);
	rd_table_t *t = rd_doc_table(d, "timeline", timeline_cols, NCOLS(timeline_cols), 0);
	rd_table_title(t, "memory of process %lld over time (%zu snapshots):", (long long)pid, n);
	size_t limit = a->limit >= 0 ? (size_t)a->limit : n;
	for (size_t i = 0; i < n && i < limit; i++) {
		rd_row(t);
		rd_put_int(t, p[i].id);
		rd_put_int(t, p[i].elapsed_ns);
		rd_put_const(t, p[i].trigger);
		rd_put_uint(t, p[i].bytes);
		rd_put_uint(t, p[i].blocks);
		rd_put_uint(t, p[i].max_ever);
	}
	if (n > limit)
		rd_table_note(t, "(%zu more rows)", n - limit);
	if (a->format == RD_FMT_TEXT) {
		uint64_t *total = rd_xcalloc(n, sizeof *total);
		for (size_t i = 0; i < n; i++)
			total[i] = p[i].bytes;
		struct chart c = {p, n, 1, total};
		timeline_chart(o->out, &c, false);
		free(total);
	}
	int r = rd_doc_print(d);
	rd_doc_free(d);
	return r;
}

int insp_cmd_timeline(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&timeline_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	if (a.by && a.limit >= 0 && (a.limit < 1 || a.limit > SERIES_MAX))
		return rd_usage_error(o, "timeline", "with --by, --limit is the number of series, from 1 to %d, "
				      "not %lld", SERIES_MAX, (long long)a.limit);
	setlocale(LC_CTYPE, "");
	rd_db_t *db;
	if ((r = rd_db_open(a.pos[0], o, &db)))
		return r;
	struct rd_vec pts;
	rd_vec_init(&pts, sizeof(struct rd_tl_point));
	int64_t pid = 0;
	r = rd_db_main_pid(db, a.pid, &pid);
	if (r == RD_EXIT_NOTFOUND)
		rd_errf(o->err, "inspect: %s: no snapshot%s\n", a.pos[0], a.pid ? " of that process" : "s");
	if (!r && !(r = rd_timeline_points(db, pid, &pts)) && pts.n == 0) {
		rd_errf(o->err, "inspect: %s: no snapshot of process %lld\n", a.pos[0], (long long)pid);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r)
		r = a.by ? timeline_by(db, o, &a, pid, pts.v, pts.n) : timeline_total(o, &a, pid, pts.v, pts.n);
	rd_vec_free(&pts);
	rd_db_close(db);
	return r;
}
