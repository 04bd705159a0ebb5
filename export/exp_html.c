/*
** exp_html.c — `inspect html`: one run as one self-contained HTML file.
**
** Everything is inline (style sheet and script from exp_html_ui.c, the
** memory chart as SVG, the flame graph data as JSON in a script element),
** so the file opens without a network and can be mailed or archived.  The
** parts, each said in one line when the session does not have it:
**   - the run (session_run);
**   - the memory over time: the total live bytes of every snapshot of the
**     process (the timeline), an SVG chart of steps with time ticks;
**   - two flame graphs, drawn by the script: own time per stack (exact
**     trace, else timer samples) and bytes allocated per stack (<alloc>
**     events, else allocation samples); stacks below 0.1% of the total are
**     left out, which bounds the file whatever the trace's size
**     (exp_html_flame.c);
**   - the functions by own time with the bytes they allocate (as
**     `inspect report`);
**   - what was live at the peak, by class and by type;
**   - the resident set explained (exp_html_rss.c);
**   - what was still live at exit (the exit snapshot), by type: the leaks.
** Every string from the run (names of functions, classes, the command) is
** escaped for where it goes: HTML text, or JSON inside a script element
** (where "</script>" must never appear: '<', '>' and '&' are \u escapes).
*/
#include "exp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HTML_TOP 30
#define HTML_CHART_POINTS 1500

/* ------------------------------------------------------------ escaping -- */

void exp_html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

/* A location cell; the inline chain, when there is one, is its tooltip. */
static void html_where(FILE *f, const char *where, const char *chain)
{
	fputs(chain ? "<td class=\"name\" title=\"" : "<td class=\"name\">", f);
	if (chain) {
		exp_html_text(f, chain);
		fputs("\">", f);
	}
	exp_html_text(f, where ? where : "");
	fputs("</td>", f);
}

/* A JSON string that is safe inside <script>. */
void exp_html_json(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void exp_html_size(FILE *f, uint64_t v)
{
	char b[32];
	rd_fmt_size(v, b, sizeof b);
	exp_html_text(f, b);
}

static void html_dur(FILE *f, int64_t ns)
{
	char b[32];
	rd_fmt_dur(ns, b, sizeof b);
	exp_html_text(f, b);
}

/* ---------------------------------------------------------------- run -- */

struct html_ctx {
	FILE *f;
	const struct rd_opts *o;
	const char *path;
	sqlite3 *db;             /* NULL: not a session                        */
	int64_t pid;
	bool o_pid;              /* pid is --pid's                            */
	struct prof_input in;
	bool have_in;
	struct prof_live live;   /* the exit snapshot's blocks, joined with the trace */
	int part_rc;             /* a part (leak check, sites) could not be read: an exit code */
};

static void html_fact(FILE *f, const char *label, const char *value)
{
	fputs("<tr><th>", f);
	exp_html_text(f, label);
	fputs("</th><td>", f);
	exp_html_text(f, value);
	fputs("</td></tr>\n", f);
}

static void html_run(struct html_ctx *h)
{
	FILE *f = h->f;
	sqlite3_stmt *st = NULL;
	fputs("<section id=\"run\"><h2>The run</h2>\n<table class=\"facts\">\n", f);
	if (h->db && sqlite3_prepare_v2(h->db, "SELECT argv, duration_ns, exit_code, exit_signal, mode, backend, "
				       "trace_clock, sample_hz, alloc_sample, interval_ns, writer FROM session_run",
				       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		char b[64];
		html_fact(f, "command", (const char *)sqlite3_column_text(st, 0));
		fprintf(f, "<tr><th>process</th><td>%lld</td></tr>\n<tr><th>duration</th><td>", (long long)h->pid);
		html_dur(f, sqlite3_column_int64(st, 1));
		fputs("</td></tr>\n", f);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			snprintf(b, sizeof b, "exit code %d", sqlite3_column_int(st, 2));
		else
			snprintf(b, sizeof b, "killed by signal %d", sqlite3_column_int(st, 3));
		html_fact(f, "end", b);
		snprintf(b, sizeof b, "%s, %s backend", sqlite3_column_text(st, 4), sqlite3_column_text(st, 5));
		html_fact(f, "memory", b);
		int64_t since = rd_since_of_pid(h->db, h->pid);
		if (since) { /* started dormant: counted from the switch on */
			char when[64], fact[96];
			rd_fmt_time(since, when, sizeof when);
			snprintf(fact, sizeof fact, "%s (switched on)", when);
			html_fact(f, "counting since", fact);
		}
		if (sqlite3_column_type(st, 6) != SQLITE_NULL)
			html_fact(f, "trace clock", (const char *)sqlite3_column_text(st, 6));
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			snprintf(b, sizeof b, "%d Hz", sqlite3_column_int(st, 7));
			html_fact(f, "sampling", b);
		}
		if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
			snprintf(b, sizeof b, "every %lld bytes", (long long)sqlite3_column_int64(st, 8));
			html_fact(f, "allocation sampling", b);
		}
		html_fact(f, "written by", (const char *)sqlite3_column_text(st, 10));
	} else {
		html_fact(f, "file", h->path);
	}
	sqlite3_finalize(st);
	fputs("</table></section>\n", f);
}

/* ------------------------------------------------------------- memory -- */

struct html_pt {
	int64_t t;
	uint64_t bytes;
	const char *trigger;
};

static size_t html_points(struct html_ctx *h, struct html_pt **out, uint64_t *top, int64_t *end)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	*top = 0;
	*end = 0;
	if (!h->db || sqlite3_prepare_v2(h->db, "SELECT s.elapsed_ns, t.sizes_current, s.trigger FROM snapshot s "
					"JOIN status t ON t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 "
					"WHERE s.pid = ? ORDER BY s.elapsed_ns, s.id", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_bind_int64(st, 1, h->pid);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			*out = rd_xrealloc(*out, cap * sizeof **out);
		}
		struct html_pt *p = &(*out)[n++];
		p->t = sqlite3_column_int64(st, 0);
		p->bytes = (uint64_t)sqlite3_column_int64(st, 1);
		p->trigger = strcmp((const char *)sqlite3_column_text(st, 2), "interval") ? "point" : NULL;
		if (p->bytes > *top)
			*top = p->bytes;
		if (p->t > *end)
			*end = p->t;
	}
	sqlite3_finalize(st);
	return n;
}

/* Time ticks: 1, 2 or 5 times a power of ten ns, at most 8 of them. */
static double html_tick_step(int64_t end)
{
	static const double m[] = {1, 2, 5};
	for (double p = 1;; p *= 10)
		for (int k = 0; k < 3; k++)
			if ((double)end / (m[k] * p) <= 8)
				return m[k] * p;
}

/* Live bytes as steps: memory moves at the snapshots and stays in between
** (a slope would claim what nobody measured). */
static void html_chart(FILE *f, const struct html_pt *p, size_t n, uint64_t top, int64_t end)
{
	const double W = 900, H = 220, L = 70, B = 24;
	double sx = end > 0 ? (W - L - 10) / (double)end : 0, sy = top ? (H - B - 10) / (double)top : 0;
	fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"live bytes over "
		   "time\">\n<polyline class=\"area\" points=\"%.1f,%.1f", W, H, L + sx * (double)p[0].t, H - B);
	size_t step = n > HTML_CHART_POINTS ? (n + HTML_CHART_POINTS - 1) / HTML_CHART_POINTS : 1;
	double y = H - B;
	for (size_t i = 0; i < n; i += step) {
		uint64_t b = p[i].bytes; /* the largest of the points merged */
		for (size_t j = i; j < i + step && j < n; j++)
			b = p[j].bytes > b ? p[j].bytes : b;
		double x = L + sx * (double)p[i].t;
		fprintf(f, " %.1f,%.1f", x, y);
		y = H - B - sy * (double)b;
		fprintf(f, " %.1f,%.1f", x, y);
	}
	fprintf(f, " %.1f,%.1f %.1f,%.1f\"/>\n", L + sx * (double)end, y, L + sx * (double)end, H - B);
	for (size_t i = 0; i < n; i++) {
		if (!p[i].trigger)
			continue;
		fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>", L + sx * (double)p[i].t,
			H - B - sy * (double)p[i].bytes);
		exp_html_size(f, p[i].bytes);
		fputs(" at ", f);
		html_dur(f, p[i].t);
		fputs("</title></circle>\n", f);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", L, H - B, W - 10, H - B);
	fprintf(f, "<line class=\"axis\" x1=\"%.0f\" y1=\"10\" x2=\"%.0f\" y2=\"%.0f\"/>\n", L, L, H - B);
	fprintf(f, "<text x=\"%.0f\" y=\"14\" text-anchor=\"end\">", L - 4);
	exp_html_size(f, top);
	fprintf(f, "</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n", L - 4, H - B);
	double dt = html_tick_step(end > 0 ? end : 1);
	for (double t = 0; t <= (double)end; t += dt) {
		double x = L + sx * t;
		fprintf(f, "<line class=\"axis tick\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
			   "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
			x, H - B, x, H - B + 4, x, H - 6);
		html_dur(f, (int64_t)t);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

/* A session of several processes: which one the page is of, and how to
** see another. */
static void html_processes(struct html_ctx *h)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h->db, "SELECT count(*) FROM session_process", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 1)
		fprintf(h->f, "<p class=\"note\">The session has %lld processes; this page is of process %lld%s. "
			      "<code>inspect report</code> lists them by weight; <code>inspect html --pid PID</code> "
			      "makes the page of another.</p>\n", (long long)sqlite3_column_int64(st, 0),
			(long long)h->pid, h->o_pid ? "" : ", the program");
	sqlite3_finalize(st);
}

static void html_memory(struct html_ctx *h)
{
	FILE *f = h->f;
	struct html_pt *p;
	uint64_t top;
	int64_t end;
	size_t n = html_points(h, &p, &top, &end);
	fputs("<section id=\"memory\"><h2>Memory over time</h2>\n", f);
	if (n == 0) {
		fputs("<p class=\"none\">No snapshots of this process (run meminst with --mis or --mim).</p>\n", f);
	} else {
		fprintf(f, "<p>Live bytes (requested sizes) of process %lld in %zu snapshots; the peak held by a "
			   "snapshot is ", (long long)h->pid, n);
		exp_html_size(f, top);
		fputs(". Memory is drawn as steps: it is known at the snapshots only. Dots are the peak, exit and "
		      "signal snapshots.</p>\n", f);
		html_processes(h);
		html_chart(f, p, n, top, end);
		struct rd_opts so = *h->o;
		so.no_symbols = h->in.no_files;
		h->part_rc = exp_html_sites_chart(f, h->path, &so, h->pid);
	}
	fputs("</section>\n", f);
	free(p);
}

/* ---------------------------------------------------------- functions -- */

static int html_cmp_own(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;
	if (x->own != y->own)
		return x->own < y->own ? 1 : -1;
	return (x->fn > y->fn) - (x->fn < y->fn);
}

static void html_td_size(FILE *f, uint64_t v)
{
	fprintf(f, "<td class=\"n\" data-v=\"%llu\">", (unsigned long long)v);
	exp_html_size(f, v);
	fputs("</td>", f);
}

static void html_td_dur(FILE *f, int64_t v)
{
	fprintf(f, "<td class=\"n\" data-v=\"%lld\">", (long long)v);
	html_dur(f, v);
	fputs("</td>", f);
}

/* Without an exact trace: the functions of the samples (estimates). */
static void html_sampled_functions(struct html_ctx *h)
{
	FILE *f = h->f;
	const struct prof_smodel *m = &h->in.sm;
	size_t n;
	uint32_t *order = prof_smodel_by_self(m, &n);
	fputs("<p>From the samples (estimates), all threads; self: the function itself, cumulative: with "
	      "everything it called. Click a heading to sort.</p>\n<table class=\"sortable\"><thead><tr>"
	      "<th>function</th><th>self time</th><th>cumulative time</th><th>self bytes</th>"
	      "<th>cumulative bytes</th><th>location</th></tr></thead><tbody>\n", f);
	for (size_t k = 0; k < n && k < HTML_TOP; k++) {
		const struct eng_fsum *s = &m->fs[order[k]];
		const struct prof_func *fn = &m->funcs[order[k]];
		fputs("<tr><td class=\"name\">", f);
		exp_html_text(f, fn->name);
		fputs("</td>", f);
		html_td_dur(f, (int64_t)(s->self[ENG_M_TICKS] * m->ns_per_tick));
		html_td_dur(f, (int64_t)(s->cum[ENG_M_TICKS] * m->ns_per_tick));
		html_td_size(f, (uint64_t)s->self[ENG_M_BYTES]);
		html_td_size(f, (uint64_t)s->cum[ENG_M_BYTES]);
		fputs("<td>", f);
		if (fn->file) {
			exp_html_text(f, fn->file);
			fprintf(f, ":%d", fn->line);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n</section>\n", f);
	free(order);
}

static void html_functions(struct html_ctx *h)
{
	FILE *f = h->f;
	const struct prof_model *m = &h->in.model;
	fputs("<section id=\"functions\"><h2>Functions by own time</h2>\n", f);
	if (!h->in.have_model && h->in.have_sm) {
		html_sampled_functions(h);
		return;
	}
	if (!h->in.have_model) {
		fputs("<p class=\"none\">No exact trace of function calls in this session (run meminst with --trace "
		      "and code built with -finstrument-functions).</p>\n</section>\n", f);
		return;
	}
	struct prof_mthread all;
	prof_model_merge(m, &all);
	qsort(all.rows, all.nrows, sizeof *all.rows, html_cmp_own);
	fprintf(f, "<p>All threads, %s clock; own: the function itself, acc: with everything it called "
		   "(recursion counted once). Click a heading to sort.</p>\n<table class=\"sortable\"><thead><tr>"
		   "<th>function</th><th>calls</th><th>own time</th><th>acc time</th><th>own bytes</th>"
		   "<th>acc bytes</th><th>own blocks</th><th>acc blocks</th><th>location</th></tr></thead><tbody>\n",
		prof_clock_name(m->clock));
	size_t shown = 0;
	for (size_t i = 0; i < all.nrows && shown < HTML_TOP; i++) {
		const struct prof_row *r = &all.rows[i];
		const struct prof_func *fn = &m->funcs[r->fn];
		if (r->fn == ENG_FN_UNDEFINED)
			continue;
		fputs("<tr><td class=\"name\">", f);
		exp_html_text(f, fn->name);
		fprintf(f, "</td><td class=\"n\" data-v=\"%llu\">%llu</td>", (unsigned long long)r->cnt,
			(unsigned long long)r->cnt);
		html_td_dur(f, r->own);
		html_td_dur(f, r->acc);
		html_td_size(f, r->mem.own_bytes);
		html_td_size(f, r->mem.acc_bytes);
		fprintf(f, "<td class=\"n\" data-v=\"%llu\">%llu</td><td class=\"n\" data-v=\"%llu\">%llu</td><td>",
			(unsigned long long)r->mem.own_blocks, (unsigned long long)r->mem.own_blocks,
			(unsigned long long)r->mem.acc_blocks, (unsigned long long)r->mem.acc_blocks);
		if (fn->file) {
			exp_html_text(f, fn->file);
			fprintf(f, ":%d", fn->line);
		}
		fputs("</td></tr>\n", f);
		shown++;
	}
	fputs("</tbody></table>\n", f);
	if (all.nrows > shown + 1)
		fprintf(f, "<p class=\"note\">%zu more functions: <code>inspect analyse</code> has them all, with "
			   "callers and called.</p>\n", all.nrows - shown - 1);
	fputs("</section>\n", f);
	prof_mthread_free(&all);
}

/* The traced function that allocated most of the type's live bytes, and
** how many did. */
static void html_allocated_in(FILE *f, const struct prof_live *live, const struct prof_model *m, int64_t type)
{
	size_t n;
	const char *fn = prof_live_function(live, m, type, &n);
	fputs("<td class=\"name\">", f);
	if (fn)
		exp_html_text(f, fn);
	if (n > 1)
		fprintf(f, " and %zu more", n - 1);
	fputs("</td>", f);
}

/* --------------------------------------------------------------- peak -- */

static void html_live(struct html_ctx *h, int64_t snap, uint64_t total, bool types, const struct prof_live *live)
{
	FILE *f = h->f;
	sqlite3_stmt *st = NULL;
	const char *sql = types
		? "SELECT u.id, coalesce((SELECT name FROM type WHERE snapshot = ?1 AND id = u.id), "
		  "(SELECT y.name FROM type y JOIN snapshot v ON v.id = y.snapshot WHERE v.pid = ?2 AND y.id = u.id "
		  "ORDER BY y.snapshot DESC LIMIT 1), '#' || u.id), u.sizes_current, u.blocks_current FROM status u "
		  "WHERE u.snapshot = ?1 AND u.kind = 'types' AND u.sizes_current > 0 "
		  "ORDER BY u.sizes_current DESC, u.id LIMIT 15"
		: "SELECT u.id, coalesce((SELECT name FROM class WHERE snapshot = ?1 AND id = u.id), "
		  "(SELECT y.name FROM class y JOIN snapshot v ON v.id = y.snapshot WHERE v.pid = ?2 AND y.id = u.id "
		  "ORDER BY y.snapshot DESC LIMIT 1), '#' || u.id), u.sizes_current, u.blocks_current FROM status u "
		  "WHERE u.snapshot = ?1 AND u.kind = 'classes' AND u.sizes_current > 0 "
		  "ORDER BY u.sizes_current DESC, u.id LIMIT 15";
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int64(st, 2, h->pid);
	/* automatic types are call sites: named from the module files as
	** `inspect report` names them, when the snapshot can be read so */
	struct rd_session s = {0};
	bool labels = types && rd_db_open(h->path, h->o, &s.db) == 0 &&
		      rd_db_select(s.db, snap, RD_NEED_ANY) == 0 && rd_tags_load(s.db, &s.tags) == 0;
	s.tags_loaded = labels;
	if (labels)
		s.tags.no_symbols = h->in.no_files;
	bool fns = live && live->nsums; /* the trace named the functions that allocated them */
	fprintf(f, "<h3>by %s</h3>\n<table><thead><tr><th>no</th><th>%s</th><th>bytes</th><th>share</th>"
		   "<th>blocks</th>%s%s</tr></thead><tbody>\n", types ? "type" : "class", types ? "type" : "class",
		types ? "<th>location</th>" : "", fns ? "<th>allocated in</th>" : "");
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 2);
		double pct = total ? 100.0 * (double)bytes / (double)total : 0;
		int64_t id = sqlite3_column_int64(st, 0);
		const char *where = NULL;
		fprintf(f, "<tr><td class=\"n\">%lld</td><td class=\"name\">", (long long)id);
		exp_html_text(f, labels ? rd_type_label(s.db, &s.tags, id, &where) : (const char *)sqlite3_column_text(st, 1));
		fputs("</td>", f);
		html_td_size(f, bytes);
		fprintf(f, "<td class=\"n\"><span class=\"bar\" style=\"width:%.0fpx\"></span> %.1f%%</td>"
			   "<td class=\"n\">%lld</td>", pct, pct, (long long)sqlite3_column_int64(st, 3));
		if (types)
			html_where(f, where, labels ? rd_type_chain(s.db, &s.tags, id) : NULL);
		if (fns)
			html_allocated_in(f, live, h->in.have_model ? &h->in.model : NULL, id);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	sqlite3_finalize(st);
	if (s.db)
		rd_session_close(&s);
}

static void html_peak(struct html_ctx *h)
{
	FILE *f = h->f;
	sqlite3_stmt *st = NULL;
	fputs("<section id=\"peak\"><h2>Live at the peak</h2>\n", f);
	if (h->db && sqlite3_prepare_v2(h->db,
	    "SELECT s.id, s.elapsed_ns, t.sizes_current, (SELECT max(u.sizes_max_ever) FROM status u JOIN snapshot v "
	    "ON v.id = u.snapshot WHERE v.pid = s.pid AND u.kind = 'total') FROM snapshot s JOIN status t ON "
	    "t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 WHERE s.pid = ? "
	    "ORDER BY t.sizes_current DESC, s.id LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, h->pid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			int64_t snap = sqlite3_column_int64(st, 0);
			uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 2);
			fputs("<p>The highest total of live bytes was ", f);
			exp_html_size(f, (uint64_t)sqlite3_column_int64(st, 3));
			fprintf(f, "; snapshot %lld, taken at ", (long long)snap);
			html_dur(f, sqlite3_column_int64(st, 1));
			fputs(", held ", f);
			exp_html_size(f, bytes);
			fputs(":</p>\n", f);
			sqlite3_finalize(st);
			html_live(h, snap, bytes, false, NULL);
			html_live(h, snap, bytes, true, NULL);
			fputs("</section>\n", f);
			return;
		}
	}
	sqlite3_finalize(st);
	fputs("<p class=\"none\">No snapshots of this process.</p>\n</section>\n", f);
}

/* What the program left allocated: the exit snapshot by type (an
** automatic type is an allocation site), heaptrack's leak list. */
static void html_leaks(struct html_ctx *h)
{
	FILE *f = h->f;
	sqlite3_stmt *st = NULL;
	fputs("<section id=\"leaks\"><h2>Still live at exit</h2>\n", f);
	if (h->db && sqlite3_prepare_v2(h->db, "SELECT s.id, t.sizes_current, t.blocks_current FROM snapshot s "
				       "JOIN status t ON t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 "
				       "WHERE s.pid = ? AND s.trigger = 'exit' ORDER BY s.id DESC LIMIT 1",
				       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, h->pid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			int64_t snap = sqlite3_column_int64(st, 0);
			uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 1);
			fprintf(f, "<p>The exit snapshot (%lld) holds ", (long long)snap);
			exp_html_size(f, bytes);
			fprintf(f, " in %lld blocks the program never freed: the largest by allocation site (leaks, "
				   "or memory freed by nobody before exit).</p>\n", (long long)sqlite3_column_int64(st, 2));
			sqlite3_finalize(st);
			if (bytes)
				html_live(h, snap, bytes, true, &h->live);
			if (!h->part_rc)
				h->part_rc = exp_html_leak_classes(f, h->path, h->o, h->pid);
			fputs("</section>\n", f);
			return;
		}
	}
	sqlite3_finalize(st);
	fputs("<p class=\"none\">No exit snapshot of this process (meminst takes one with --mis or --mim when the "
	      "program exits normally).</p>\n</section>\n", f);
}

/* ------------------------------------------------------------ command -- */

/* The process's exit snapshot's blocks, to be joined with its trace
** (the trace's ALLOC_BLOCK records, html_read). */
static int html_live_load(struct html_ctx *h, const struct rd_opts *o)
{
	rd_db_t *db;
	int r = rd_db_open(h->path, o, &db);
	if (r)
		return r;
	int64_t snap = prof_live_exit_snapshot(db, h->pid);
	if (snap)
		r = prof_live_load(&h->live, db, snap);
	rd_db_close(db);
	h->in.live = h->live.n ? &h->live : NULL;
	return r;
}

static int html_read(struct html_ctx *h, const struct rd_opts *o)
{
	h->in.path = h->path;
	int r = prof_input_read(&h->in, o, PROF_IN_MODEL | PROF_IN_STACKS | PROF_IN_SAMPLES | PROF_IN_IMAGES);
	h->have_in = true;
	if (r == RD_EXIT_NOTFOUND && h->db && !rd_strace_last().refused) /* not --image K the process has not */
		return 0; /* a session without a trace: the memory parts */
	if (!r && !h->db && !h->in.have_model && !h->in.have_sm) { /* a trace file of nothing: as export */
		rd_errf(o->err, "inspect: %s: no function calls and no samples in the trace (record them with "
			"meminst --trace or --sample)\n", h->path);
		return RD_EXIT_NOTFOUND;
	}
	if (!r && h->in.have_sm) {
		/* the samples give what the exact trace does not */
		struct prof_stacks *s = &h->in.stacks;
		if (!h->in.have_stacks) {
			prof_stacks_free(s);
			prof_stacks_init(s);
			prof_stacks_from_samples(s, &h->in.sm);
			h->in.have_stacks = true;
		}
	}
	return r;
}

static void html_write(struct html_ctx *h)
{
	FILE *f = h->f;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>meminst: ", f);
	exp_html_text(f, h->path);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>meminst report</h1><p class=\"src\">",
		exp_html_css);
	exp_html_text(f, h->path);
	char line[1024]; /* the process's other programs (it exec'd) */
	prof_images_line(&h->in.images, line, sizeof line);
	fputs(*line ? "</p><p class=\"note\" id=\"images\">" : "", f);
	exp_html_text(f, line);
	fputs("</p></header>\n<main>\n<div class=\"search\"><label>Search functions <input type=\"search\" "
	      "id=\"search\" placeholder=\"name or part of it\"></label> <span class=\"note\">highlights them "
	      "in the flame graphs; the address can carry it: #search=NAME, #inverted, #thread=K, #metric=WORD "
	      "(of the sites' graph)</span></div>\n", f);
	html_run(h);
	html_memory(h);
	const struct prof_stacks *s = h->in.have_stacks ? &h->in.stacks : NULL;
	bool exact = prof_trace_calls(&h->in.tr) > 0;
	exp_html_flame(f, s, &h->in.tr, PROF_STK_TIME, exact ? "the exact trace" : "timer samples");
	exp_html_flame(f, s, &h->in.tr, PROF_STK_BYTES,
		       exact ? "the trace's &lt;alloc&gt; events" : "allocation samples (estimates)");
	if (h->db && !h->part_rc) {
		struct rd_opts so = *h->o;
		so.no_symbols = h->in.no_files;
		h->part_rc = exp_html_sites_flame(f, h->path, &so, h->pid);
	}
	html_functions(h);
	html_peak(h);
	if (h->db && !h->part_rc)
		h->part_rc = exp_html_rss(f, h->path, h->o, h->pid);
	html_leaks(h);
	fprintf(f, "</main>\n<div class=\"tip\" id=\"tip\" hidden></div>\n<script>\n%s</script>\n</body>\n</html>\n",
		exp_html_js);
}

int exp_cmd_html(int argc, char **argv, const struct rd_opts *o)
{
	struct html_ctx h = {.o = o};
	const char *output;
	bool no_symbols, force;
	int r = exp_html_args(argc, argv, o, &h.path, &output, &h.pid, &no_symbols, &force);
	if (r != RD_CONTINUE)
		return r;
	struct rd_opts so = *o;
	so.no_symbols = o->no_symbols || no_symbols;
	h.in.no_files = so.no_symbols;
	h.in.pid = h.pid;
	if ((r = rd_input_check(o, h.path)))
		return r;
	if (rd_is_session(h.path)) {
		/* a damaged session fails here, once, not in each memory part */
		rd_db_t *check;
		if ((r = rd_db_open(h.path, o, &check)))
			return r;
		r = rd_session_run_check(check);
		rd_db_close(check);
		if (r)
			return r;
		if ((r = rd_sqlite_open(o, h.path, &h.db)))
			return r;
		sqlite3_stmt *st = NULL;
		h.o_pid = h.pid != 0;
		if (h.pid) { /* --pid: one of the session's processes, or no page of nothing */
			bool known = sqlite3_prepare_v2(h.db, "SELECT 1 FROM session_process WHERE pid = ?1 UNION ALL "
						    "SELECT 1 FROM session_run WHERE pid = ?1", -1, &st, NULL) == SQLITE_OK &&
				     sqlite3_bind_int64(st, 1, h.pid) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
			sqlite3_finalize(st);
			st = NULL;
			if (!known) {
				rd_errf(o->err, "inspect: %s: no process %lld in this session\n", h.path, (long long)h.pid);
				sqlite3_close(h.db);
				return RD_EXIT_NOTFOUND;
			}
		}
		if (!h.pid && sqlite3_prepare_v2(h.db, "SELECT pid FROM session_run", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			h.pid = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		h.in.pid = h.pid;
	} else if (prof_is_trace(h.path) != 1) {
		return prof_input_fail(o, h.path, "not a session database (written by meminst(1)) or a trace file (a "
					       "profile database has no stacks: give the trace)");
	}
	if (h.db && (r = html_live_load(&h, &so)))
		return r;
	r = html_read(&h, &so);
	if (!r)
		r = prof_live_join(&h.live, h.path, &so, h.pid, h.in.no_files, NULL);
	struct rd_outfile of;
	if (!r && !(r = rd_outfile_open(o, &of, output, force, false, &h.path, 1))) {
		h.f = of.f;
		html_write(&h);
		r = rd_outfile_close(o, &of, h.part_rc == 0);
		r = h.part_rc ? h.part_rc : r;
	}
	if (h.have_in)
		prof_input_free(&h.in);
	prof_live_free(&h.live);
	sqlite3_close(h.db);
	return r;
}
