/*
** prof_display.c — the sampling displays of `inspect analyse`:
**   flat       statprof's table: % self, cumulative and self figures, calls
**   tree       the call tree with recursion collapsed (SWI-Prolog's)
**   callers    per function its callers above, its callees below, with self
**              and children figures (SWI-Prolog's detail view)
**   anomalies  shares that differ between threads or runs, and estimates
**              resting on too few samples (prof_anomalies.c)
** Each as text or as one JSON document (inspect(1) gives the shapes).
**
** What is counted depends on --metric: time (timer samples: weight in
** seconds, or the number of samples) or, from allocation samples, bytes or
** count (allocations).  --time picks how time is shown: seconds, samples or
** percent of the total.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ values -- */

static void disp_init(struct prof_disp *d, const struct prof_smodel *m, const struct prof_sopts *so, FILE *f)
{
	*d = (struct prof_disp){m, so, f, ENG_M_TICKS, ENG_M_SAMPLES};
	if (so->metric == PROF_MT_BYTES)
		d->vm = ENG_M_BYTES, d->cm = ENG_M_ASAMPLES;
	else if (so->metric == PROF_MT_COUNT)
		d->vm = ENG_M_ALLOCS, d->cm = ENG_M_ASAMPLES;
}

static double disp_secs(const struct prof_smodel *m, double ticks)
{
	return ticks * m->ns_per_tick / 1e9;
}

static double disp_pct(const struct prof_disp *d, const double *v)
{
	double t = d->m->total[d->vm];
	return t > 0 ? 100.0 * v[d->vm] / t : 0;
}

/* A value as text: for time, per --time; else bytes or a count. */
static const char *disp_val(const struct prof_disp *d, const double *v, char *buf, size_t len)
{
	if (d->vm == ENG_M_TICKS && d->so->time == PROF_T_SAMPLES)
		snprintf(buf, len, "%.0f", v[ENG_M_SAMPLES]);
	else if (d->so->time == PROF_T_PERCENT)
		snprintf(buf, len, "%.2f%%", disp_pct(d, v));
	else if (d->vm == ENG_M_TICKS)
		snprintf(buf, len, "%.3f", disp_secs(d->m, v[ENG_M_TICKS]));
	else
		snprintf(buf, len, "%.0f", v[d->vm]);
	return buf;
}

static const char *disp_unit(const struct prof_disp *d)
{
	if (d->so->time == PROF_T_PERCENT)
		return "%";
	if (d->vm == ENG_M_TICKS)
		return d->so->time == PROF_T_SAMPLES ? "samples" : "seconds";
	return d->vm == ENG_M_BYTES ? "bytes" : "allocs";
}

/* A function's name and place, cut in its middle to what the line has
** left after `used` columns when there is a width (--cols, the terminal's;
** at least 5 columns are kept), whole without one. */
static void disp_name_at(const struct prof_disp *d, uint32_t fid, size_t used, FILE *f)
{
	const struct prof_func *fn = &d->m->funcs[fid];
	char whole[4096], buf[4096 + 8];
	if (fn->file) {
		const char *b = strrchr(fn->file, '/');
		snprintf(whole, sizeof whole, "%s (%s:%d)", fn->name, b ? b + 1 : fn->file, fn->line);
	} else {
		snprintf(whole, sizeof whole, "%s", fn->name);
	}
	size_t w;
	rd_text_str(whole, buf, sizeof buf - 8, &w);
	if (d->so->cols > 0)
		rd_text_cut(buf, &w, (size_t)d->so->cols > used + 5 ? (size_t)d->so->cols - used : 5);
	fputs(buf, f);
}

void prof_disp_name(const struct prof_disp *d, uint32_t fid, FILE *f)
{
	disp_name_at(d, fid, 0, f);
}

void prof_disp_json_opt_str(FILE *f, const char *s)
{
	if (s)
		rd_json_str(f, s);
	else
		fputs("null", f);
}

void prof_disp_json_func(const struct prof_disp *d, uint32_t fid, FILE *f)
{
	const struct prof_func *fn = &d->m->funcs[fid];
	fputs("\"name\":", f);
	rd_json_str(f, fn->name);
	fputs(",\"file\":", f);
	prof_disp_json_opt_str(f, fn->file);
	if (fn->file)
		fprintf(f, ",\"line\":%d", fn->line);
	else
		fputs(",\"line\":null", f);
	fputs(",\"module\":", f);
	prof_disp_json_opt_str(f, fn->module);
}

/* The sums of one side as JSON members, prefixed (self_, cum_, total_). */
static void json_sums(const struct prof_disp *d, const char *pre, const double *v, FILE *f)
{
	fprintf(f, ",\"%ssamples\":%.0f,\"%sms\":%.3f,\"%spercent\":%.4f,\"%salloc_samples\":%.0f,"
		"\"%sbytes\":%.0f,\"%sblocks\":%.1f",
		pre, v[ENG_M_SAMPLES], pre, 1e3 * disp_secs(d->m, v[ENG_M_TICKS]), pre, disp_pct(d, v), pre,
		v[ENG_M_ASAMPLES], pre, v[ENG_M_BYTES], pre, v[ENG_M_ALLOCS]);
}

/* --------------------------------------------------------- the header -- */

static double disp_seconds(const struct prof_smodel *m)
{
	return disp_secs(m, m->total[ENG_M_TICKS]);
}

static size_t disp_nfunctions(const struct prof_disp *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->m->nfuncs; i++)
		n += d->m->fs[i].cum[d->cm] > 0;
	return n;
}

static size_t disp_nnodes(const struct prof_disp *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->m->ft.n; i++)
		n += d->m->ft.nodes[i].parent != ENG_CCT_NONE && d->m->ft.nodes[i].total[d->cm] > 0;
	return n;
}

/* The profiler's own share of the sampled time: the handler, counted calls. */
static void disp_distortion(const struct prof_smodel *m, double *sampler, double *counts)
{
	double t = m->total[ENG_M_TICKS];
	*sampler = t > 0 ? 100.0 * m->sampler_ticks / t : 0;
	*counts = t > 0 ? 100.0 * m->counts_ns / (t * m->ns_per_tick) : 0;
}

static const char *disp_sclock(unsigned c)
{
	return c == MEMINST_TRACE_SAMPLE_WALL ? "wall" : c == MEMINST_TRACE_SAMPLE_CPU ? "cpu" : "none";
}

void prof_disp_header_text(const struct prof_disp *d)
{
	const struct prof_smodel *m = d->m;
	FILE *f = d->f;
	double ds, dc;
	disp_distortion(m, &ds, &dc);
	char source[1024], exe[1024]; /* no control character reaches the terminal */
	rd_text_str(m->source, source, sizeof source, NULL);
	rd_text_str(m->exe ? m->exe : "", exe, sizeof exe, NULL);
	fprintf(f, "%s%s%s\n", source, m->exe ? ": " : "", exe);
	prof_images_text(d->so->images, f);
	if (m->thread)
		fprintf(f, "thread %u only\n", m->thread);
	fprintf(f, "samples: %.0f (%s clock, %u Hz), %.0f allocation samples; seconds: %.3f; "
		"functions: %zu; nodes: %zu\n",
		m->total[ENG_M_SAMPLES], disp_sclock(m->sample_clock), m->sample_hz, m->total[ENG_M_ASAMPLES],
		disp_seconds(m), disp_nfunctions(d), disp_nnodes(d));
	fprintf(f, "distortion: %.2f%% (sampler %.2f%% in %.0f runs", ds + dc, ds, m->sampler_runs);
	if (m->calls)
		fprintf(f, ", counted calls %.2f%%", dc);
	fputs(m->sampler_runs ? ")\n" : "; the trace does not say what the sampler cost)\n", f);
}

void prof_disp_header_json(const struct prof_disp *d, const char *style)
{
	const struct prof_smodel *m = d->m;
	FILE *f = d->f;
	double ds, dc;
	disp_distortion(m, &ds, &dc);
	static const char *const metrics[] = {"time", "bytes", "count"};
	static const char *const units[] = {"seconds", "samples", "percent"};
	fprintf(f, "{\"style\":\"%s\",\"metric\":\"%s\",\"time\":\"%s\",\"source\":", style,
		metrics[d->so->metric], units[d->so->time]);
	rd_json_str(f, m->source);
	fputs(",\"exe\":", f);
	prof_disp_json_opt_str(f, m->exe);
	fprintf(f, ",\"pid\":%lld,\"clock\":\"%s\",\"sample_clock\":\"%s\",\"sample_hz\":%u,"
		"\"alloc_sample_bytes\":%llu,\"thread\":",
		(long long)m->pid, prof_clock_name(m->clock), disp_sclock(m->sample_clock), m->sample_hz,
		(unsigned long long)m->alloc_mean);
	if (m->thread)
		fprintf(f, "%u", m->thread);
	else
		fputs("null", f);
	prof_images_json(d->so->images, f);
	fprintf(f, ",\"samples\":%.0f,\"alloc_samples\":%.0f,\"ms\":%.3f,\"bytes\":%.0f,\"blocks\":%.1f,"
		"\"nfunctions\":%zu,\"nnodes\":%zu",
		m->total[ENG_M_SAMPLES], m->total[ENG_M_ASAMPLES], 1e3 * disp_seconds(m), m->total[ENG_M_BYTES],
		m->total[ENG_M_ALLOCS], disp_nfunctions(d), disp_nnodes(d));
	fprintf(f, ",\"distortion\":{\"percent\":%.4f,\"sampler_percent\":%.4f,\"sampler_ms\":%.3f,"
		"\"sampler_runs\":%.0f,\"counts_percent\":%.4f,\"counts_ms\":%.3f}",
		ds + dc, ds, 1e3 * disp_secs(m, m->sampler_ticks), m->sampler_runs, dc, m->counts_ns / 1e6);
	double at = m->total[ENG_M_TICKS];
	fprintf(f, ",\"allocator\":{\"samples\":%.0f,\"ms\":%.3f,\"percent\":%.4f}", m->alloc_samples,
		1e3 * disp_secs(m, m->alloc_ticks), at > 0 ? 100 * m->alloc_ticks / at : 0);
	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_sthread *t = &m->threads[i];
		fprintf(f, "%s{\"thread\":%u,\"tid\":%lld,\"name\":", i ? "," : "", t->thread, (long long)t->tid);
		prof_disp_json_opt_str(f, t->name);
		fprintf(f, ",\"samples\":%.0f,\"ms\":%.3f,\"alloc_samples\":%.0f,\"bytes\":%.0f}",
			t->total[ENG_M_SAMPLES], 1e3 * disp_secs(m, t->total[ENG_M_TICKS]), t->total[ENG_M_ASAMPLES],
			t->total[ENG_M_BYTES]);
	}
	fputc(']', f);
}

/* ------------------------------------------------------------- order -- */

static const struct prof_disp *sort_d;

static int cmp_funcs(const void *a, const void *b)
{
	const struct eng_fsum *x = &sort_d->m->fs[*(const uint32_t *)a];
	const struct eng_fsum *y = &sort_d->m->fs[*(const uint32_t *)b];
	const double *vx = sort_d->so->cumulative ? x->cum : x->self;
	const double *vy = sort_d->so->cumulative ? y->cum : y->self;
	int vm = sort_d->vm;
	if (vx[vm] != vy[vm])
		return vx[vm] < vy[vm] ? 1 : -1;
	double cx = sort_d->so->cumulative ? x->self[vm] : x->cum[vm];
	double cy = sort_d->so->cumulative ? y->self[vm] : y->cum[vm];
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(sort_d->m->funcs[*(const uint32_t *)a].name, sort_d->m->funcs[*(const uint32_t *)b].name);
}

/* The functions with some of the metric, in display order; *n of them. */
uint32_t *prof_disp_order(const struct prof_disp *d, size_t *n)
{
	uint32_t *v = rd_xcalloc(d->m->nfuncs + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < d->m->nfuncs; i++)
		if (d->m->fs[i].cum[d->vm] > 0 && (!d->so->focus || !strcmp(d->m->funcs[i].name, d->so->focus)))
			v[k++] = (uint32_t)i;
	sort_d = d;
	if (k)
		qsort(v, k, sizeof *v, cmp_funcs);
	*n = k;
	return v;
}

static size_t disp_top(const struct prof_disp *d, size_t n)
{
	return d->so->top > 0 && (size_t)d->so->top < n ? (size_t)d->so->top : n;
}

/* -------------------------------------------------------------- flat -- */

static void flat_text(const struct prof_disp *d)
{
	const struct prof_smodel *m = d->m;
	FILE *f = d->f;
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	char a[32], b[32];
	prof_disp_header_text(d);
	const char *what = d->vm == ENG_M_TICKS ? "time" : d->vm == ENG_M_BYTES ? "bytes" : "allocs";
	fprintf(f, "\n     %%  %12s %12s\n", "cumulative", "self");
	fprintf(f, "%6s  %12s %12s %10s  function\n", what, disp_unit(d), disp_unit(d), m->calls ? "calls" : "");
	for (size_t i = 0; i < disp_top(d, n); i++) {
		const struct eng_fsum *s = &m->fs[order[i]];
		fprintf(f, "%6.2f  %12s %12s ", disp_pct(d, s->self), disp_val(d, s->cum, a, sizeof a),
			disp_val(d, s->self, b, sizeof b));
		if (m->calls && m->calls[order[i]] > 0)
			fprintf(f, "%10.0f  ", m->calls[order[i]]);
		else
			fprintf(f, "%10s  ", "");
		disp_name_at(d, order[i], 46, f);
		fputc('\n', f);
	}
	if (disp_top(d, n) < n)
		fprintf(f, "(%zu more functions; --limit 0 shows all)\n", n - disp_top(d, n));
	fputs("---\n", f);
	if (d->vm == ENG_M_TICKS) {
		double at = m->total[ENG_M_TICKS];
		fprintf(f, "Sample count: %.0f\nTotal time: %.6f seconds (%.6f seconds in the allocator, %.1f%%)\n",
			m->total[ENG_M_SAMPLES], disp_seconds(m), disp_secs(m, m->alloc_ticks),
			at > 0 ? 100 * m->alloc_ticks / at : 0);
	} else {
		fprintf(f, "Allocation samples: %.0f (one every %llu bytes on average)\n"
			"Estimated: %.0f bytes in %.0f allocations\n",
			m->total[ENG_M_ASAMPLES], (unsigned long long)m->alloc_mean, m->total[ENG_M_BYTES],
			m->total[ENG_M_ALLOCS]);
	}
	free(order);
}

static void flat_json(const struct prof_disp *d)
{
	const struct prof_smodel *m = d->m;
	FILE *f = d->f;
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	prof_disp_header_json(d, "flat");
	fputs(",\"functions\":[", f);
	for (size_t i = 0; i < disp_top(d, n); i++) {
		const struct eng_fsum *s = &m->fs[order[i]];
		fputs(i ? ",{" : "{", f);
		prof_disp_json_func(d, order[i], f);
		json_sums(d, "self_", s->self, f);
		json_sums(d, "cum_", s->cum, f);
		if (m->calls)
			fprintf(f, ",\"calls\":%.0f}", m->calls[order[i]]);
		else
			fputs(",\"calls\":null}", f);
	}
	fputs("]}\n", f);
	free(order);
}

/* The flat table as CSV: one row per function, the JSON's members. */
static void flat_csv(const struct prof_disp *d)
{
	static const char *const sums[] = {"samples", "ms", "percent", "alloc_samples", "bytes", "blocks"};
	const struct prof_smodel *m = d->m;
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	fputs("name,file,line,module", d->f);
	for (int side = 0; side < 2; side++)
		for (size_t k = 0; k < sizeof sums / sizeof sums[0]; k++)
			fprintf(d->f, ",%s_%s", side ? "cum" : "self", sums[k]);
	fputs(",calls\n", d->f);
	for (size_t i = 0; i < disp_top(d, n); i++) {
		const struct prof_func *fn = &m->funcs[order[i]];
		const struct eng_fsum *s = &m->fs[order[i]];
		rd_csv_str(d->f, fn->name);
		fputc(',', d->f);
		if (fn->file) {
			rd_csv_str(d->f, fn->file);
			fprintf(d->f, ",%d", fn->line);
		} else {
			fputc(',', d->f);
		}
		fputc(',', d->f);
		if (fn->module)
			rd_csv_str(d->f, fn->module);
		for (int side = 0; side < 2; side++) {
			const double *v = side ? s->cum : s->self;
			fprintf(d->f, ",%.0f,%.3f,%.4f,%.0f,%.0f,%.1f", v[ENG_M_SAMPLES],
				1e3 * disp_secs(m, v[ENG_M_TICKS]), disp_pct(d, v), v[ENG_M_ASAMPLES],
				v[ENG_M_BYTES], v[ENG_M_ALLOCS]);
		}
		if (m->calls)
			fprintf(d->f, ",%.0f\n", m->calls[order[i]]);
		else
			fputs(",\n", d->f);
	}
	free(order);
}

/* -------------------------------------------------------------- tree -- */

static const struct eng_cct *sort_t;
static int sort_vm;

static int cmp_nodes(const void *a, const void *b)
{
	const struct eng_cct_node *x = &sort_t->nodes[*(const uint32_t *)a];
	const struct eng_cct_node *y = &sort_t->nodes[*(const uint32_t *)b];
	if (x->total[sort_vm] != y->total[sort_vm])
		return x->total[sort_vm] < y->total[sort_vm] ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The children of node i with some of the metric, largest first. */
static uint32_t *tree_children(const struct prof_disp *d, uint32_t i, size_t *n)
{
	const struct eng_cct *t = &d->m->ft;
	size_t k = 0;
	for (uint32_t c = t->nodes[i].child; c != ENG_CCT_NONE; c = t->nodes[c].next)
		k++;
	uint32_t *v = rd_xcalloc(k + 1, sizeof *v);
	k = 0;
	for (uint32_t c = t->nodes[i].child; c != ENG_CCT_NONE; c = t->nodes[c].next)
		if (t->nodes[c].total[d->vm] > 0)
			v[k++] = c;
	sort_t = t;
	sort_vm = d->vm;
	if (k)
		qsort(v, k, sizeof *v, cmp_nodes);
	*n = k;
	return v;
}

static void tree_text_node(const struct prof_disp *d, uint32_t i, int depth)
{
	const struct eng_cct_node *nd = &d->m->ft.nodes[i];
	char a[32], b[32], r[32] = "";
	if (nd->recur[d->cm] > 0)
		snprintf(r, sizeof r, "%.0f", nd->recur[d->cm]);
	fprintf(d->f, "%12s %12s %9s  %*s", disp_val(d, nd->total, a, sizeof a), disp_val(d, nd->self, b, sizeof b),
		r, 2 * depth, "");
	disp_name_at(d, (uint32_t)nd->key, 37 + 2 * (size_t)depth, d->f);
	fputc('\n', d->f);
	size_t n, hidden = 0;
	double rest[ENG_M_N] = {0};
	uint32_t *kids = tree_children(d, i, &n);
	for (size_t k = 0; k < n; k++) {
		const struct eng_cct_node *c = &d->m->ft.nodes[kids[k]];
		if (disp_pct(d, c->total) < d->so->cutoff) {
			hidden++;
			for (int j = 0; j < ENG_M_N; j++)
				rest[j] += c->total[j];
		} else {
			tree_text_node(d, kids[k], depth + 1);
		}
	}
	if (hidden)
		fprintf(d->f, "%12s %12s %9s  %*s(%zu more below %g%%)\n", disp_val(d, rest, a, sizeof a), "", "",
			2 * depth + 2, "", hidden, d->so->cutoff);
	free(kids);
}

static void tree_text(const struct prof_disp *d)
{
	prof_disp_header_text(d);
	fprintf(d->f, "\n%12s %12s %9s  function (recursion collapsed)\n", "total", "self", "recursive");
	if (d->m->ft.n == 0)
		return;
	size_t n;
	uint32_t *kids = tree_children(d, 0, &n);
	char a[32], b[32];
	fprintf(d->f, "%12s %12s %9s  <all>\n", disp_val(d, d->m->ft.nodes[0].total, a, sizeof a),
		disp_val(d, d->m->ft.nodes[0].self, b, sizeof b), "");
	for (size_t k = 0; k < n; k++)
		tree_text_node(d, kids[k], 1);
	free(kids);
}

static void tree_json_node(const struct prof_disp *d, uint32_t i)
{
	const struct eng_cct_node *nd = &d->m->ft.nodes[i];
	fputc('{', d->f);
	prof_disp_json_func(d, (uint32_t)nd->key, d->f);
	json_sums(d, "total_", nd->total, d->f);
	json_sums(d, "self_", nd->self, d->f);
	fprintf(d->f, ",\"recursive\":%.0f,\"children\":[", nd->recur[d->cm]);
	size_t n;
	uint32_t *kids = tree_children(d, i, &n);
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputc(',', d->f);
		tree_json_node(d, kids[k]);
	}
	free(kids);
	fputs("]}", d->f);
}

static void tree_json(const struct prof_disp *d)
{
	prof_disp_header_json(d, "tree");
	fputs(",\"tree\":[", d->f);
	if (d->m->ft.n) {
		size_t n;
		uint32_t *kids = tree_children(d, 0, &n);
		for (size_t k = 0; k < n; k++) {
			if (k)
				fputc(',', d->f);
			tree_json_node(d, kids[k]);
		}
		free(kids);
	}
	fputs("]}\n", d->f);
}

/* ----------------------------------------------------------- callers -- */

struct crow {
	uint32_t fid;            /* UINT32_MAX: the thread's start           */
	double self[ENG_M_N], children[ENG_M_N];
};

struct cview {
	struct crow me, *callers, *callees;
	size_t ncallers, ncallees;
	double recur[ENG_M_N];
};

static void crow_add(struct crow **v, size_t *n, uint32_t fid, const struct eng_cct_node *nd)
{
	size_t i;
	for (i = 0; i < *n && (*v)[i].fid != fid; i++)
		;
	if (i == *n) {
		*v = rd_xrealloc(*v, (*n + 1) * sizeof **v);
		memset(&(*v)[i], 0, sizeof **v);
		(*v)[(*n)++].fid = fid;
	}
	for (int j = 0; j < ENG_M_N; j++) {
		(*v)[i].self[j] += nd->self[j];
		(*v)[i].children[j] += nd->total[j] - nd->self[j];
	}
}

static int cmp_crows(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	double vx = x->self[sort_vm] + x->children[sort_vm], vy = y->self[sort_vm] + y->children[sort_vm];
	return vx != vy ? (vx < vy ? 1 : -1) : (x->fid > y->fid) - (x->fid < y->fid);
}

/* Function fid over every node of it in the tree. */
static void cview_make(const struct prof_disp *d, uint32_t fid, struct cview *v)
{
	const struct eng_cct *t = &d->m->ft;
	memset(v, 0, sizeof *v);
	v->me.fid = fid;
	for (size_t i = 0; i < t->n; i++) {
		const struct eng_cct_node *nd = &t->nodes[i];
		if (nd->parent == ENG_CCT_NONE || nd->key != fid)
			continue;
		uint32_t p = nd->parent;
		crow_add(&v->callers, &v->ncallers, t->nodes[p].parent == ENG_CCT_NONE ? UINT32_MAX
							: (uint32_t)t->nodes[p].key, nd);
		for (int j = 0; j < ENG_M_N; j++) {
			v->me.self[j] += nd->self[j];
			v->me.children[j] += nd->total[j] - nd->self[j];
			v->recur[j] += nd->recur[j];
		}
		for (uint32_t c = nd->child; c != ENG_CCT_NONE; c = t->nodes[c].next)
			if (t->nodes[c].total[d->vm] > 0)
				crow_add(&v->callees, &v->ncallees, (uint32_t)t->nodes[c].key, &t->nodes[c]);
	}
	sort_vm = d->vm;
	if (v->ncallers) /* qsort(NULL, 0) is undefined */
		qsort(v->callers, v->ncallers, sizeof *v->callers, cmp_crows);
	if (v->ncallees)
		qsort(v->callees, v->ncallees, sizeof *v->callees, cmp_crows);
}

static void cview_row(const struct prof_disp *d, const struct crow *r, const char *lead)
{
	char a[32], b[32];
	fprintf(d->f, "%12s %12s  %s", disp_val(d, r->self, a, sizeof a), disp_val(d, r->children, b, sizeof b),
		lead);
	if (r->fid == UINT32_MAX)
		fputs("<thread start>", d->f);
	else
		disp_name_at(d, r->fid, 27 + strlen(lead), d->f);
	fputc('\n', d->f);
}

static void callers_text(const struct prof_disp *d)
{
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	prof_disp_header_text(d);
	fprintf(d->f, "\n%12s %12s  callers / * function / callees (%s)\n", "self", "children", disp_unit(d));
	for (size_t i = 0; i < disp_top(d, n); i++) {
		struct cview v;
		cview_make(d, order[i], &v);
		fputc('\n', d->f);
		for (size_t k = 0; k < v.ncallers; k++)
			cview_row(d, &v.callers[k], "  ");
		if (v.recur[d->cm] > 0)
			fprintf(d->f, "%12.0f %12s  <recursive>\n", v.recur[d->cm], "");
		cview_row(d, &v.me, "* ");
		for (size_t k = 0; k < v.ncallees; k++)
			cview_row(d, &v.callees[k], "    ");
		free(v.callers);
		free(v.callees);
	}
	free(order);
}

static void cview_json_rows(const struct prof_disp *d, const char *key, const struct crow *r, size_t n)
{
	fprintf(d->f, ",\"%s\":[", key);
	for (size_t k = 0; k < n; k++) {
		fputs(k ? ",{" : "{", d->f);
		if (r[k].fid == UINT32_MAX)
			fputs("\"name\":\"<thread start>\",\"file\":null,\"line\":null,\"module\":null", d->f);
		else
			prof_disp_json_func(d, r[k].fid, d->f);
		json_sums(d, "self_", r[k].self, d->f);
		json_sums(d, "children_", r[k].children, d->f);
		fputc('}', d->f);
	}
	fputc(']', d->f);
}

static void callers_json(const struct prof_disp *d)
{
	size_t n;
	uint32_t *order = prof_disp_order(d, &n);
	prof_disp_header_json(d, "callers");
	fputs(",\"functions\":[", d->f);
	for (size_t i = 0; i < disp_top(d, n); i++) {
		struct cview v;
		cview_make(d, order[i], &v);
		fputs(i ? ",{" : "{", d->f);
		prof_disp_json_func(d, order[i], d->f);
		json_sums(d, "self_", v.me.self, d->f);
		json_sums(d, "children_", v.me.children, d->f);
		fprintf(d->f, ",\"recursive\":%.0f", v.recur[d->cm]);
		if (d->m->calls)
			fprintf(d->f, ",\"calls\":%.0f", d->m->calls[order[i]]);
		cview_json_rows(d, "callers", v.callers, v.ncallers);
		cview_json_rows(d, "callees", v.callees, v.ncallees);
		fputc('}', d->f);
		free(v.callers);
		free(v.callees);
	}
	fputs("]}\n", d->f);
	free(order);
}


void prof_display(const struct prof_smodel *m, const struct prof_smodel *m2, const struct prof_sopts *so,
		  FILE *f)
{
	struct prof_disp d;
	disp_init(&d, m, so, f);
	switch (so->style) {
	case PROF_ST_TREE: so->json ? tree_json(&d) : tree_text(&d); break;
	case PROF_ST_CALLERS: so->json ? callers_json(&d) : callers_text(&d); break;
	case PROF_ST_ANOMALIES: prof_disp_anomalies(&d, m2, so->json); break;
	default: so->csv ? flat_csv(&d) : so->json ? flat_json(&d) : flat_text(&d); break;
	}
}
