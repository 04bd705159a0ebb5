/*
** exp_callgrind.c — the Callgrind format, for KCachegrind / QCachegrind
** and callgrind_annotate: the one writer (exp_cg_*), and the exact
** profile's costs for it.  exp_cg_samples.c gives it the samples' costs.
**
** The writer takes costs by source position: a function's own costs at
** lines (exp_cg_own), and its calls at the lines they are made from, each
** with its inclusive cost and its number of calls (exp_cg_call).  Each
** function is one `fn=` block with its own cost lines and its calls in
** the order of their positions; a position in a file other than the
** function's is given with fi=; calls= names the called function's first
** line.  Names and files are compressed as `(id) name`.  The totals are
** the sums of the own cost lines as written (rounded).
**
** The exact profile: events Time (ns of the trace's clock) and Bytes
** (bytes allocated, from the trace's <alloc> events).  A function's own
** cost sits on its first line (the trace says nothing of the lines inside
** it); a call is the pair's CNT and its inclusive cost (ACC time and ACC
** bytes, charged once for recursion as in the profile).  With call sites
** in the trace (trace_sites=on) each call goes to the line it was made
** from: the line of site - 1 (the site is a return address) in the
** caller's own code, through the inline chain at that address; calls made
** from code that is not the caller's (a comparator called by qsort), or
** without a site, stay on the caller's first line.  Threads are summed.
** Bytes are the caller's: `<alloc>` keeps its time but no bytes, so that
** the Bytes of all self costs add up to everything the functions
** allocated, as `inspect report` counts it.  Each allocator call carries
** its site (the trace's ALLOC_AT records, whatever trace_sites=): its
** bytes are the caller's own cost at the line of the call, and the call to
** <alloc> (and to <meminst>, meminst's work around it) is at that line.
*/
#include "exp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "meminst-hash.h"

/* --------------------------------------------------------- the writer -- */

static uint64_t cg_hash(const char *s)
{
	return meminst_fnv_str(MEMINST_FNV_START, s);
}

void exp_cg_init(struct exp_cg *c)
{
	memset(c, 0, sizeof *c);
	eng_cct_init(&c->own, &prof_libc_allocator);
	eng_cct_init(&c->calls, &prof_libc_allocator);
	c->files = rd_xcalloc(1, sizeof *c->files);
	c->files[c->nfiles++] = "???";
}

void exp_cg_free(struct exp_cg *c)
{
	free(c->files);
	free(c->fhash);
	eng_cct_free(&c->own);
	eng_cct_free(&c->calls);
	rd_pool_free(&c->pool);
	memset(c, 0, sizeof *c);
}

uint32_t exp_cg_file(struct exp_cg *c, const char *name)
{
	if (!name)
		return 0;
	if (2 * (c->nfiles + 1) > c->fcap) {
		size_t cap = c->fcap ? 2 * c->fcap : 64;
		uint32_t *h = rd_xcalloc(cap, sizeof *h);
		for (size_t i = 1; i < c->nfiles; i++) {
			size_t j = cg_hash(c->files[i]) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i;
		}
		free(c->fhash);
		c->fhash = h, c->fcap = cap;
	}
	size_t j = cg_hash(name) & (c->fcap - 1);
	for (; c->fhash[j]; j = (j + 1) & (c->fcap - 1))
		if (!strcmp(c->files[c->fhash[j]], name))
			return c->fhash[j];
	c->files = rd_xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
	c->files[c->nfiles] = rd_pool_str(&c->pool, name);
	c->fhash[j] = (uint32_t)c->nfiles;
	return (uint32_t)c->nfiles++;
}

static uint64_t cg_poskey(struct exp_cg_pos p)
{
	return (uint64_t)p.file << 32 | (uint32_t)(p.line > 0 ? p.line : 0);
}

static void cg_add(double *to, const double *v)
{
	for (int k = 0; k < EXP_CG_N; k++)
		to[k] += v[k];
}

void exp_cg_own(struct exp_cg *c, uint32_t fn, struct exp_cg_pos at, const double *v)
{
	/* (a node index first: making a node may move the array) */
	uint32_t f = prof_cct_child_or_exit(&c->own, ENG_CCT_NONE, fn);
	uint32_t n = prof_cct_child_or_exit(&c->own, f, cg_poskey(at));
	cg_add(c->own.nodes[n].self, v);
}

void exp_cg_call(struct exp_cg *c, uint32_t caller, struct exp_cg_pos at, uint32_t called, const double *v,
		 double calls)
{
	uint32_t from = prof_cct_child_or_exit(&c->calls, ENG_CCT_NONE, caller);
	uint32_t p = prof_cct_child_or_exit(&c->calls, from, cg_poskey(at));
	uint32_t n = prof_cct_child_or_exit(&c->calls, p, called);
	double *s = c->calls.nodes[n].self;
	cg_add(s, v);
	s[EXP_CG_N] += calls;
}

static void cg_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void cg_name(FILE *f, const char *key, uint32_t id, const char *name, bool *named)
{
	fprintf(f, "%s=(%u)", key, id + 1);
	if (!named[id]) {
		fputc(' ', f);
		cg_str(f, name);
		named[id] = true;
	}
	fputc('\n', f);
}

static void cg_costs(const struct exp_cg *c, FILE *f, int line, const double *v)
{
	fprintf(f, "%d", line);
	for (int k = 0; k < EXP_CG_N; k++)
		if (c->has[k])
			fprintf(f, " %lld", (long long)llround(v[k]));
	fputc('\n', f);
}

struct cg_child {
	uint64_t key;
	uint32_t node;
};

static int cg_cmp_child(const void *a, const void *b)
{
	uint64_t x = ((const struct cg_child *)a)->key, y = ((const struct cg_child *)b)->key;
	return x < y ? -1 : x > y;
}

/* The children of node p by key: free() it. */
static struct cg_child *cg_children(const struct eng_cct *t, uint32_t p, size_t *n)
{
	*n = 0;
	struct cg_child *v = NULL;
	size_t cap = 0;
	for (uint32_t k = t->nodes[p].child; k != ENG_CCT_NONE; k = t->nodes[k].next) {
		if (*n == cap)
			v = rd_xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
		v[(*n)++] = (struct cg_child){t->nodes[k].key, k};
	}
	if (*n)
		qsort(v, *n, sizeof *v, cg_cmp_child);
	return v;
}

struct cg_out {
	FILE *f;
	const struct prof_func *funcs;
	bool *fn_named, *file_named;
	uint32_t cur_file;       /* the file of the cost lines that follow   */
	double sum[EXP_CG_N];    /* of the rounded own costs: the totals     */
};

static void cg_calls_at(struct exp_cg *c, struct cg_out *w, uint32_t pnode, int line)
{
	size_t n;
	struct cg_child *v = cg_children(&c->calls, pnode, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t to = (uint32_t)v[i].key;
		const struct prof_func *fn = &w->funcs[to];
		const double *s = c->calls.nodes[v[i].node].self;
		cg_name(w->f, "cfi", exp_cg_file(c, fn->file), c->files[exp_cg_file(c, fn->file)], w->file_named);
		cg_name(w->f, "cfn", to, fn->name, w->fn_named);
		fprintf(w->f, "calls=%lld %d\n", (long long)llround(s[EXP_CG_N]), fn->line > 0 ? fn->line : 0);
		cg_costs(c, w->f, line, s);
	}
	free(v);
}

/* One function: its own cost lines and its calls, by position. */
static void cg_function(struct exp_cg *c, struct cg_out *w, uint32_t f)
{
	const struct prof_func *fn = &w->funcs[f];
	uint32_t own = eng_cct_find(&c->own, ENG_CCT_NONE, f), calls = eng_cct_find(&c->calls, ENG_CCT_NONE, f);
	fputc('\n', w->f);
	w->cur_file = exp_cg_file(c, fn->file);
	cg_name(w->f, "fl", w->cur_file, c->files[w->cur_file], w->file_named);
	cg_name(w->f, "fn", f, fn->name, w->fn_named);
	size_t no = 0, nc = 0, i = 0, k = 0;
	struct cg_child *o = own != ENG_CCT_NONE ? cg_children(&c->own, own, &no) : NULL;
	struct cg_child *cl = calls != ENG_CCT_NONE ? cg_children(&c->calls, calls, &nc) : NULL;
	while (i < no || k < nc) {
		bool take_own = i < no && (k >= nc || o[i].key <= cl[k].key);
		uint64_t pos = take_own ? o[i].key : cl[k].key;
		int line = (int)(uint32_t)pos;
		uint32_t file = (uint32_t)(pos >> 32);
		if (file != w->cur_file) {
			cg_name(w->f, "fi", file, c->files[file], w->file_named);
			w->cur_file = file;
		}
		if (take_own) {
			const double *v = c->own.nodes[o[i++].node].self;
			cg_costs(c, w->f, line, v);
			for (int m = 0; m < EXP_CG_N; m++)
				w->sum[m] += (double)llround(v[m]);
		} else {
			cg_calls_at(c, w, cl[k++].node, line);
		}
	}
	free(o);
	free(cl);
}

void exp_cg_write(struct exp_cg *c, const struct exp_cg_head *h, FILE *f)
{
	for (size_t i = 0; i < h->nfuncs; i++) /* every file has its id before the writing */
		exp_cg_file(c, h->funcs[i].file);
	fputs("# callgrind format\nversion: 1\ncreator: inspect (" PACKAGE_NAME ") " PACKAGE_VERSION "\n", f);
	if (h->pid)
		fprintf(f, "pid: %lld\n", (long long)h->pid);
	if (h->cmd) {
		fputs("cmd: ", f);
		cg_str(f, h->cmd);
		fputc('\n', f);
	}
	fputs("positions: line\n", f);
	for (const char *p = h->comment; p && *p;) { /* each line of it as a comment */
		size_t n = strcspn(p, "\n");
		fprintf(f, "# %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	fputs(h->events, f);
	fputs("events:", f);
	static const char *const names[] = {"Time", "Samples", "Bytes", "Allocs"};
	for (int k = 0; k < EXP_CG_N; k++)
		if (c->has[k])
			fprintf(f, " %s", names[k]);
	fputc('\n', f);
	struct cg_out w = {.f = f, .funcs = h->funcs};
	w.fn_named = rd_xcalloc(h->nfuncs + 1, sizeof *w.fn_named);
	w.file_named = rd_xcalloc(c->nfiles + 1, sizeof *w.file_named);
	bool *done = rd_xcalloc(h->nfuncs + 1, sizeof *done);
	const struct eng_cct *trees[2] = {&c->own, &c->calls};
	for (int t = 0; t < 2; t++) /* functions with own costs, then callers only */
		for (uint32_t i = 0; i < trees[t]->n; i++) {
			uint32_t fid = (uint32_t)trees[t]->nodes[i].key;
			if (trees[t]->nodes[i].parent != ENG_CCT_NONE || fid >= h->nfuncs || done[fid])
				continue;
			done[fid] = true;
			cg_function(c, &w, fid);
		}
	fputs("\ntotals:", f);
	for (int k = 0; k < EXP_CG_N; k++)
		if (c->has[k])
			fprintf(f, " %lld", (long long)w.sum[k]);
	fputc('\n', f);
	free(done);
	free(w.fn_named);
	free(w.file_named);
}

/* ---------------------------------------------------- the exact profile -- */

/* The calls of pair p that have sites: at their lines; the rest (no site,
** or a site outside the caller's code) at the caller's first line.  Sites
** of one pair are consecutive in m->sites from *k on (sorted). */
static void cg_pair(struct exp_cg *c, const struct prof_model *m, const struct prof_pair *p, size_t *k)
{
	const struct prof_func *from = &m->funcs[p->caller];
	struct exp_cg_pos first = {exp_cg_file(c, from->file), from->line};
	bool alloc = p->called == ENG_FN_ALLOC;
	double left[EXP_CG_N + 1] = {0};
	left[EXP_CG_TIME] = (double)(p->acc > 0 ? p->acc : 0);
	left[EXP_CG_BYTES] = alloc ? 0 : (double)p->mem.acc_bytes;
	double calls = (double)p->cnt;
	while (*k < m->nsites && (m->sites[*k].caller < p->caller ||
				  (m->sites[*k].caller == p->caller && m->sites[*k].called < p->called)))
		(*k)++;
	for (; *k < m->nsites && m->sites[*k].caller == p->caller && m->sites[*k].called == p->called; (*k)++) {
		const struct prof_csite *s = &m->sites[*k];
		if (!s->line)
			continue; /* stays with the rest */
		double v[EXP_CG_N] = {0};
		v[EXP_CG_TIME] = fmin((double)(s->acc > 0 ? s->acc : 0), left[EXP_CG_TIME]);
		v[EXP_CG_BYTES] = alloc ? 0 : fmin((double)s->acc_bytes, left[EXP_CG_BYTES]);
		double n = fmin((double)s->cnt, calls);
		exp_cg_call(c, p->caller, (struct exp_cg_pos){exp_cg_file(c, s->file), s->line}, p->called, v, n);
		left[EXP_CG_TIME] -= v[EXP_CG_TIME], left[EXP_CG_BYTES] -= v[EXP_CG_BYTES], calls -= n;
	}
	if (calls > 0 || left[EXP_CG_TIME] > 0 || left[EXP_CG_BYTES] > 0)
		exp_cg_call(c, p->caller, first, p->called, left, calls);
}

/* Each allocator call's bytes as its caller's own cost at the line of the
** call; returns, by function, the bytes so placed (the rest stays on the
** first line), and whether any call other than an allocator's has a site. */
static double *cg_alloc_lines(struct exp_cg *c, const struct prof_model *m, bool *call_sites)
{
	double *moved = rd_xcalloc(m->nfuncs + 1, sizeof *moved);
	*call_sites = false;
	for (size_t i = 0; i < m->nsites; i++) {
		const struct prof_csite *s = &m->sites[i];
		if (s->called != ENG_FN_ALLOC && s->called != ENG_FN_MEMINST)
			*call_sites = true;
		if (s->called != ENG_FN_ALLOC || !s->line || !s->acc_bytes || s->caller >= m->nfuncs)
			continue;
		double v[EXP_CG_N] = {0};
		v[EXP_CG_BYTES] = (double)s->acc_bytes;
		exp_cg_own(c, s->caller, (struct exp_cg_pos){exp_cg_file(c, s->file), s->line}, v);
		moved[s->caller] += v[EXP_CG_BYTES];
	}
	return moved;
}

void exp_callgrind_write(const struct prof_model *m, const char *note, FILE *f)
{
	struct prof_mthread all;
	prof_model_merge(m, &all);
	struct exp_cg c;
	exp_cg_init(&c);
	c.has[EXP_CG_TIME] = c.has[EXP_CG_BYTES] = true;
	bool call_sites;
	double *moved = cg_alloc_lines(&c, m, &call_sites);
	size_t p = 0, k = 0;
	for (size_t i = 0; i < all.nrows; i++) {
		const struct prof_row *r = &all.rows[i];
		if (r->fn == ENG_FN_UNDEFINED)
			continue;
		const struct prof_func *fn = &m->funcs[r->fn];
		double v[EXP_CG_N] = {0};
		v[EXP_CG_TIME] = (double)(r->own > 0 ? r->own : 0);
		v[EXP_CG_BYTES] = r->fn == ENG_FN_ALLOC ? 0 : fmax((double)r->mem.own_bytes - moved[r->fn], 0);
		exp_cg_own(&c, r->fn, (struct exp_cg_pos){exp_cg_file(&c, fn->file), fn->line}, v);
		while (p < all.npairs && all.pairs[p].caller < r->fn)
			p++;
		for (; p < all.npairs && all.pairs[p].caller == r->fn; p++)
			cg_pair(&c, m, &all.pairs[p], &k);
	}
	char events[160];
	snprintf(events, sizeof events, "event: Time : time (ns, %s clock)\nevent: Bytes : bytes allocated\n",
		 prof_clock_name(m->clock));
	const char *cmd = m->cmdline && *m->cmdline ? m->cmdline : m->exe;
	char comment[1536];
	snprintf(comment, sizeof comment, "times %s: %.3f ms of the tracer's calibrated cost taken off%s%s%s",
		 prof_cost_state(m), (double)m->cost.taken_ns / 1e6,
		 call_sites ? "" : "\ncalls are on their callers' first lines: the trace has no call sites (trace "
				  "with trace_sites=on, meminst --trace-sites)", note && *note ? "\n" : "", note ? note : "");
	struct exp_cg_head h = {m->funcs, m->nfuncs, m->pid, cmd, events, comment};
	exp_cg_write(&c, &h, f);
	free(moved);
	exp_cg_free(&c);
	prof_mthread_free(&all);
}
