/*
** exp_html_sites.c — the HTML report's parts by allocation site (an
** automatic type is a site, with its site_depth stack):
**   - the memory over time stacked by the sites whose bytes rose highest,
**     the rest as "other" (heaptrack's "Consumed" chart): the series of
**     `inspect timeline --by type` (rd_timeline_by), as JSON the script
**     draws;
**   - a flame graph of heaptrack's metrics (calls, bytes allocated,
**     temporary allocations, live at the peak, leaked) whose metric the
**     reader picks: the stacks of `inspect export --metric`
**     (exp_sites_stacks), each with its five figures, as JSON the script
**     turns into one tree per metric.
** Both are bounded whatever the session's size: at most HTML_SITE_POINTS
** points (the one with the largest total of each slice of the run), and
** the stacks among the HTML_SITE_STACKS largest of some metric, the others
** added up as one frame.
*/
#include "exp_int.h"

#include <stdlib.h>
#include <string.h>

#define HTML_SITE_SERIES 10
#define HTML_SITE_POINTS 1500
#define HTML_SITE_STACKS 300

/* ------------------------------------------------------ stacked chart -- */

static uint64_t sites_point_sum(const struct rd_tl_by *b, size_t i)
{
	uint64_t s = 0;
	for (int j = 0; j < b->k; j++)
		s += b->bytes[i * (size_t)b->k + (size_t)j];
	return s;
}

/* The points drawn: n when there are few, else the point of each slice of
** step points whose stacked total is largest (the peak is never lost). */
static size_t sites_pick(const struct rd_tl_by *b, size_t n, size_t *pick)
{
	size_t step = n > HTML_SITE_POINTS ? (n + HTML_SITE_POINTS - 1) / HTML_SITE_POINTS : 1, m = 0;
	for (size_t i = 0; i < n; i += step) {
		size_t best = i;
		for (size_t j = i + 1; j < i + step && j < n; j++)
			if (sites_point_sum(b, j) > sites_point_sum(b, best))
				best = j;
		pick[m++] = best;
	}
	return m;
}

static void sites_chart_data(FILE *f, const struct rd_tl_by *b, const struct rd_tl_point *p, size_t n, int64_t pid)
{
	size_t *pick = rd_xcalloc(n + 1, sizeof *pick);
	size_t m = sites_pick(b, n, pick);
	fprintf(f, "<script type=\"application/json\" id=\"memory-sites\">{\"pid\":%lld,\"t\":[", (long long)pid);
	for (size_t i = 0; i < m; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)p[pick[i]].elapsed_ns);
	fputs("],\"series\":[", f);
	for (int j = 0; j < b->k; j++) {
		bool other = j == b->ns;
		fprintf(f, "%s{\"name\":", j ? "," : "");
		exp_html_json(f, b->s[j].name);
		if (other) {
			fputs(",\"other\":true", f);
		} else {
			fprintf(f, ",\"id\":%lld,\"where\":", (long long)b->s[j].id);
			exp_html_json(f, b->s[j].where ? b->s[j].where : "");
		}
		fputs(",\"v\":[", f);
		for (size_t i = 0; i < m; i++)
			fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)b->bytes[pick[i] * (size_t)b->k + (size_t)j]);
		fputs("]}", f);
	}
	fputs("]}</script>\n", f);
	free(pick);
}

int exp_html_sites_chart(FILE *f, const char *path, const struct rd_opts *o, int64_t pid)
{
	rd_db_t *db;
	int r = rd_db_open(path, o, &db);
	if (r)
		return r;
	struct rd_vec pts;
	rd_vec_init(&pts, sizeof(struct rd_tl_point));
	struct rd_tl_by b = {.kind = RD_TL_TYPE};
	r = rd_timeline_points(db, pid, &pts);
	if (!r && pts.n)
		r = rd_timeline_by(db, pid, pts.v, pts.n, HTML_SITE_SERIES, o->no_symbols, &b);
	if (!r && pts.n) {
		fputs("<h3>By allocation site</h3>\n", f);
		if (!b.k) {
			fputs("<p class=\"none\">No allocation site held bytes in a snapshot.</p>\n", f);
		} else {
			fprintf(f, "<p>The live bytes of the %d allocation sites (types) of process %lld whose bytes "
				   "rose highest, stacked", b.ns, (long long)pid);
			if (b.rest)
				fprintf(f, ", the %zu other sites added up as &ldquo;other&rdquo;", b.rest);
			fputs(": heaptrack's &ldquo;Consumed&rdquo; chart, from the same snapshots (<code>inspect "
			      "timeline --by type</code>). The last snapshot is drawn for one average interval. Hover "
			      "for a site and its bytes at that time.</p>\n<div class=\"stacked\" id=\"memory-sites-view\" "
			      "data-src=\"memory-sites\"></div>\n", f);
			sites_chart_data(f, &b, pts.v, pts.n, pid);
		}
	}
	rd_timeline_by_free(&b);
	rd_vec_free(&pts);
	rd_db_close(db);
	return r;
}

/* -------------------------------------------------------- flame graph -- */

static int sites_by_metric(const void *a, const void *b, void *metric)
{
	uint64_t x = (*(struct exp_sites_stack *const *)a)->v[*(int *)metric];
	uint64_t y = (*(struct exp_sites_stack *const *)b)->v[*(int *)metric];
	return (x < y) - (x > y);
}

/* Which stacks the page carries: the HTML_SITE_STACKS largest of each
** metric (keep[i]); the others' figures added up in other[1..], their
** number in other[0]. */
static void sites_keep(struct exp_sites_stack *v, size_t n, bool *keep, uint64_t other[RD_EV_N + 1])
{
	struct exp_sites_stack **order = rd_xcalloc(n + 1, sizeof *order);
	for (int m = 0; m < RD_EV_N; m++) {
		for (size_t i = 0; i < n; i++)
			order[i] = &v[i];
		qsort_r(order, n, sizeof *order, sites_by_metric, &m);
		for (size_t i = 0; i < n && i < HTML_SITE_STACKS && order[i]->v[m]; i++)
			keep[order[i] - v] = true;
	}
	free(order);
	for (size_t i = 0; i < n; i++) {
		if (keep[i])
			continue;
		other[0]++;
		for (int m = 0; m < RD_EV_N; m++)
			other[1 + m] += v[i].v[m];
	}
}

static void sites_flame_data(FILE *f, struct exp_sites *es)
{
	static const char *const units[RD_EV_N] = {"calls", "bytes", "temporary", "bytes", "bytes"};
	struct exp_sites_stack *v;
	size_t n = exp_sites_stacks(es, -1, &v);
	bool *keep = rd_xcalloc(n + 1, sizeof *keep);
	uint64_t other[RD_EV_N + 1] = {0};
	sites_keep(v, n, keep, other);
	fputs("<script type=\"application/json\" id=\"flame-sites\">{\"metrics\":[", f);
	for (int m = 0; m < RD_EV_N; m++)
		fprintf(f, "%s\"%s\"", m ? "," : "", rd_event_metrics[m]);
	fputs("],\"units\":[", f);
	for (int m = 0; m < RD_EV_N; m++)
		fprintf(f, "%s\"%s\"", m ? "," : "", units[m]);
	fputs("],\"totals\":[", f);
	for (int m = 0; m < RD_EV_N; m++)
		fprintf(f, "%s%llu", m ? "," : "", (unsigned long long)rd_events_total(&es->sum, m));
	fprintf(f, "],\"metric\":%d,\"stacks\":[", RD_EV_ALLOCATED);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		fputs(first ? "[" : ",[", f);
		first = false;
		exp_html_json(f, v[i].text);
		for (int m = 0; m < RD_EV_N; m++)
			fprintf(f, ",%llu", (unsigned long long)v[i].v[m]);
		fputc(']', f);
	}
	fputs("],\"other\":[", f);
	for (int m = 0; m <= RD_EV_N; m++)
		fprintf(f, "%s%llu", m ? "," : "", (unsigned long long)other[m]);
	fputs("]}</script>\n", f);
	free(keep);
	exp_sites_stacks_free(v, n);
}

static void sites_flame_head(FILE *f, const struct exp_sites *es)
{
	static const char *const labels[RD_EV_N] = {"allocation calls", "bytes allocated", "temporary allocations",
						     "live at the peak", "leaked"};
	fprintf(f, "<p>Per allocation site's stack (its site_depth frames; the root at the bottom) of process "
		   "%lld, from the event counters of snapshot %lld, the peak snapshot %lld and ", (long long)es->p.pid,
		(long long)es->p.counts, (long long)es->p.peak);
	if (es->p.exit)
		fprintf(f, "the exit snapshot %lld", (long long)es->p.exit);
	else
		fputs("no exit snapshot (nothing says what leaked)", f);
	fputs(": the figures of <code>inspect top --by METRIC</code> and <code>inspect export --metric "
	      "METRIC</code>. Hover for figures, click a frame to zoom, <button type=\"button\" class=\"reset\" "
	      "data-for=\"flame-sites\">reset zoom</button> <button type=\"button\" class=\"invert\" "
	      "data-for=\"flame-sites\">bottom-up</button>.</p>\n<p class=\"metrics\">", f);
	for (int m = 0; m < RD_EV_N; m++) {
		uint64_t t = rd_events_total(&es->sum, m);
		fprintf(f, "<button type=\"button\" class=\"metric\" data-for=\"flame-sites\" data-metric=\"%d\">", m);
		exp_html_text(f, labels[m]);
		fputs(" (", f);
		if (m == RD_EV_CALLS || m == RD_EV_TEMPORARY)
			fprintf(f, "%llu", (unsigned long long)t);
		else
			exp_html_size(f, t);
		fputs(")</button> ", f);
	}
	fputs("</p>\n<p class=\"found\" id=\"flame-sites-found\"></p>\n"
	      "<div class=\"flame\" id=\"flame-sites-view\" data-src=\"flame-sites\"></div>\n", f);
}

/* The session's counters missing (an older libmeminst, a process without
** snapshots) is a line in the page; anything else an exit code. */
int exp_html_sites_flame(FILE *f, const char *path, const struct rd_opts *o, int64_t pid)
{
	struct rd_opts so = *o;
	char *msg = NULL;
	size_t len = 0;
	if (!(so.err = open_memstream(&msg, &len)))
		abort();
	struct exp_sites es;
	int r = exp_sites_read(&es, path, pid, 0, -1, &so);
	fclose(so.err);
	fputs("<section id=\"flame-sites-section\"><h2>Allocation sites by heaptrack's metrics</h2>\n", f);
	if (!r) {
		sites_flame_head(f, &es);
		sites_flame_data(f, &es);
	} else if (r == RD_EXIT_NOTFOUND) {
		/* "inspect: PATH: why": the why */
		const char *why = msg && strncmp(msg, "inspect: ", 9) == 0 && strlen(msg) > 11 + strlen(path)
					  ? msg + 11 + strlen(path) : msg ? msg : "";
		fputs("<p class=\"none\">No site figures: ", f);
		exp_html_text(f, why);
		fputs("</p>\n", f);
		r = 0;
	} else {
		fputs(msg ? msg : "", o->err);
	}
	fputs("</section>\n", f);
	exp_sites_free(&es);
	free(msg);
	return r;
}
