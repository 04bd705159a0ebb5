/*
** prof_cg_samples.c — the samples of a trace in the Callgrind format, with
** line-level costs, for KCachegrind's source view and
** `callgrind_annotate --auto=yes`.
**
** From the address tree of the samples (prof_samples.c), as the displays
** see it (meminst's own frames are one <meminst> frame):
**   - a sample's own cost goes to its innermost frame at the source line of
**     that address: the interrupted pc of a timer sample, the call into the
**     allocator of an allocation sample;
**   - every other frame is a call: the caller, at the line of its call
**     site, calls the next frame inward; the call's inclusive cost is the
**     sample's, counted once per sample when recursion repeats the same
**     call in one stack; calls= is the number of samples through the call
**     (samples do not count calls).
** Events: Time (ns of the sampling clock) and Samples for timer samples,
** Bytes and Allocs (the estimates of `inspect analyse`) for allocation
** samples.  A sampled address inside inlined code is the chain of
** functions inlined there (prof_inline.c), each a function of its own
** called at the line of the call into it, as perf and pprof show them; a
** line in a file other than its function's is given with fi=.
*/
#include "prof_export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CS_TIME, CS_SAMPLES, CS_BYTES, CS_ALLOCS, CS_N };

/* A position: the file (index into cs.files) and the line. */
struct cs_pos {
	uint32_t file;
	int line;
};

struct cs {
	const struct prof_smodel *m;
	struct insp_pool pool;
	struct exp_inline x;     /* frames and functions (x.funcs)           */
	/* own costs: roots = functions, children = positions (file << 32 | line) */
	struct prof_cct own;
	/* calls: roots = callers, children = positions, grandchildren = callees */
	struct prof_cct calls;
	const char **files;      /* "???" first: unknown                       */
	size_t nfiles;
	uint32_t *fhash;
	size_t fcap;
	double total[CS_N];
	bool has[CS_N];
};

static uint64_t cs_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint32_t cs_file(struct cs *c, const char *name)
{
	if (!name)
		return 0;
	if (2 * (c->nfiles + 1) > c->fcap) {
		size_t cap = c->fcap ? 2 * c->fcap : 64;
		uint32_t *h = insp_xcalloc(cap, sizeof *h);
		for (size_t i = 1; i < c->nfiles; i++) {
			size_t j = cs_hash(c->files[i]) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i;
		}
		free(c->fhash);
		c->fhash = h, c->fcap = cap;
	}
	size_t j = cs_hash(name) & (c->fcap - 1);
	for (; c->fhash[j]; j = (j + 1) & (c->fcap - 1))
		if (!strcmp(c->files[c->fhash[j]], name))
			return c->fhash[j];
	c->files = insp_xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
	c->files[c->nfiles] = insp_pool_str(&c->pool, name);
	c->fhash[j] = (uint32_t)c->nfiles;
	return (uint32_t)c->nfiles++;
}

static uint64_t cs_poskey(struct cs_pos p)
{
	return (uint64_t)p.file << 32 | (uint32_t)(p.line > 0 ? p.line : 0);
}

static void cs_add(double *to, const double *v)
{
	for (int k = 0; k < CS_N; k++)
		to[k] += v[k];
}

struct cs_frame {
	uint32_t fn;
	struct cs_pos pos;
};

/* One node of the address tree with samples: its own cost and its calls. */
static void cs_sample(struct cs *c, uint32_t i, struct cs_frame **fr, size_t *cap)
{
	const struct prof_cct *at = prof_samples_tree(c->m->s);
	const struct prof_cct_node *nd = &at->nodes[i];
	double v[CS_N] = {nd->self[PROF_M_TICKS] * c->m->ns_per_tick, nd->self[PROF_M_SAMPLES],
			  nd->self[PROF_M_BYTES], nd->self[PROF_M_ALLOCS]};
	size_t n = 0;
	for (uint32_t j = i; at->nodes[j].parent != PROF_CCT_NONE; j = at->nodes[j].parent) {
		const struct exp_iframe *in;
		size_t k = exp_inline_frames(&c->x, j, &in); /* outermost first: taken backwards */
		if (n + k > *cap) {
			*cap = 2 * (n + k) + 64;
			*fr = insp_xrealloc(*fr, *cap * sizeof **fr);
		}
		while (k-- > 0)
			(*fr)[n++] = (struct cs_frame){in[k].fn, {cs_file(c, in[k].file), in[k].line > 0 ? in[k].line : 0}};
	}
	if (!n)
		return;
	cs_add(c->total, v);
	/* (a node index first: making a node may move the array) */
	uint32_t fn = prof_cct_child_or_exit(&c->own, PROF_CCT_NONE, (*fr)[0].fn);
	uint32_t own = prof_cct_child_or_exit(&c->own, fn, cs_poskey((*fr)[0].pos));
	cs_add(c->own.nodes[own].self, v);
	for (size_t k = 1; k < n; k++) {
		const struct cs_frame *from = &(*fr)[k], *to = &(*fr)[k - 1];
		bool seen = false; /* the same call further in: counted once */
		for (size_t q = 1; q < k && !seen; q++)
			seen = (*fr)[q].fn == from->fn && (*fr)[q - 1].fn == to->fn &&
			       cs_poskey((*fr)[q].pos) == cs_poskey(from->pos);
		if (seen)
			continue;
		uint32_t caller = prof_cct_child_or_exit(&c->calls, PROF_CCT_NONE, from->fn);
		uint32_t p = prof_cct_child_or_exit(&c->calls, caller, cs_poskey(from->pos));
		uint32_t call = prof_cct_child_or_exit(&c->calls, p, to->fn);
		double *s = c->calls.nodes[call].self;
		cs_add(s, v);
		s[CS_N] += nd->self[PROF_M_SAMPLES] + nd->self[PROF_M_ASAMPLES]; /* the samples through the call */
	}
}

static void cs_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void cs_name(FILE *f, const char *key, uint32_t id, const char *name, bool *named)
{
	fprintf(f, "%s=(%u)", key, id + 1);
	if (!named[id]) {
		fputc(' ', f);
		cs_str(f, name);
		named[id] = true;
	}
	fputc('\n', f);
}

static void cs_costs(const struct cs *c, FILE *f, int line, const double *v)
{
	fprintf(f, "%d", line);
	for (int k = 0; k < CS_N; k++)
		if (c->has[k])
			fprintf(f, " %lld", (long long)llround(v[k]));
	fputc('\n', f);
}

struct cs_child {
	uint64_t key;
	uint32_t node;
};

static int cs_cmp_child(const void *a, const void *b)
{
	uint64_t x = ((const struct cs_child *)a)->key, y = ((const struct cs_child *)b)->key;
	return x < y ? -1 : x > y;
}

/* The children of node p (PROF_CCT_NONE: the roots) by key: free() it. */
static struct cs_child *cs_children(const struct prof_cct *t, uint32_t p, size_t *n)
{
	*n = 0;
	struct cs_child *v = NULL;
	size_t cap = 0;
	if (p == PROF_CCT_NONE) {
		for (uint32_t k = 0; k < t->n; k++)
			if (t->nodes[k].parent == PROF_CCT_NONE) {
				if (*n == cap)
					v = insp_xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
				v[(*n)++] = (struct cs_child){t->nodes[k].key, k};
			}
	} else {
		for (uint32_t k = t->nodes[p].child; k != PROF_CCT_NONE; k = t->nodes[k].next) {
			if (*n == cap)
				v = insp_xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
			v[(*n)++] = (struct cs_child){t->nodes[k].key, k};
		}
	}
	if (*n)
		qsort(v, *n, sizeof *v, cs_cmp_child);
	return v;
}

struct cs_out {
	FILE *f;
	bool *fn_named, *file_named;
	uint32_t cur_file;       /* the file of the cost lines that follow   */
	double sum[CS_N];        /* of the rounded own costs: the totals     */
};

static void cs_file_line(const struct cs *c, struct cs_out *w, const char *key, uint32_t file)
{
	cs_name(w->f, key, file, c->files[file], w->file_named);
}

/* The position's file when it is not the current one (fi=). */
static void cs_goto(const struct cs *c, struct cs_out *w, uint64_t pos)
{
	uint32_t file = (uint32_t)(pos >> 32);
	if (file != w->cur_file) {
		cs_file_line(c, w, "fi", file);
		w->cur_file = file;
	}
}

static void cs_calls_at(const struct cs *c, struct cs_out *w, uint32_t pnode, int line)
{
	size_t n;
	struct cs_child *v = cs_children(&c->calls, pnode, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t to = (uint32_t)v[i].key;
		const struct prof_func *fn = &c->x.funcs[to];
		const double *s = c->calls.nodes[v[i].node].self;
		cs_file_line(c, w, "cfi", cs_file((struct cs *)c, fn->file));
		cs_name(w->f, "cfn", to, fn->name, w->fn_named);
		fprintf(w->f, "calls=%lld %d\n", (long long)llround(s[CS_N]), fn->line > 0 ? fn->line : 0);
		cs_costs(c, w->f, line, s);
	}
	free(v);
}

/* One function: its own cost lines and its calls, by position. */
static void cs_function(const struct cs *c, struct cs_out *w, uint32_t f)
{
	const struct prof_func *fn = &c->x.funcs[f];
	uint32_t own = prof_cct_find(&c->own, PROF_CCT_NONE, f), calls = prof_cct_find(&c->calls, PROF_CCT_NONE, f);
	fputc('\n', w->f);
	w->cur_file = cs_file((struct cs *)c, fn->file);
	cs_file_line(c, w, "fl", w->cur_file);
	cs_name(w->f, "fn", f, fn->name, w->fn_named);
	size_t no = 0, nc = 0, i = 0, k = 0;
	struct cs_child *o = own != PROF_CCT_NONE ? cs_children(&c->own, own, &no) : NULL;
	struct cs_child *cl = calls != PROF_CCT_NONE ? cs_children(&c->calls, calls, &nc) : NULL;
	while (i < no || k < nc) {
		bool take_own = i < no && (k >= nc || o[i].key <= cl[k].key);
		uint64_t pos = take_own ? o[i].key : cl[k].key;
		int line = (int)(uint32_t)pos;
		cs_goto(c, w, pos);
		if (take_own) {
			const double *v = c->own.nodes[o[i++].node].self;
			cs_costs(c, w->f, line, v);
			for (int m = 0; m < CS_N; m++)
				w->sum[m] += (double)llround(v[m]);
		} else {
			cs_calls_at(c, w, cl[k++].node, line);
		}
	}
	free(o);
	free(cl);
}

static void cs_header(const struct cs *c, FILE *f)
{
	const struct prof_smodel *m = c->m;
	fputs("# callgrind format\nversion: 1\ncreator: inspect (" PACKAGE_NAME ") " PACKAGE_VERSION "\n", f);
	if (m->pid)
		fprintf(f, "pid: %lld\n", (long long)m->pid);
	if (m->exe) {
		fputs("cmd: ", f);
		cs_str(f, m->exe);
		fputc('\n', f);
	}
	const char *clock = m->sample_clock == MEMINST_TRACE_SAMPLE_WALL ? "wall" : "cpu";
	fputs("positions: line\n", f);
	if (c->has[CS_TIME])
		fprintf(f, "event: Time : time (ns, %s clock samples at %u Hz)\nevent: Samples : timer samples\n",
			clock, m->sample_hz);
	if (c->has[CS_BYTES])
		fputs("event: Bytes : bytes allocated (estimate from allocation samples)\n"
		      "event: Allocs : allocations (estimate from allocation samples)\n", f);
	fputs("events:", f);
	static const char *const names[] = {"Time", "Samples", "Bytes", "Allocs"};
	for (int k = 0; k < CS_N; k++)
		if (c->has[k])
			fprintf(f, " %s", names[k]);
	fputc('\n', f);
}

void exp_callgrind_samples(const struct prof_smodel *m, FILE *f)
{
	struct cs c = {.m = m};
	exp_inline_init(&c.x, m);
	prof_cct_init(&c.own, &prof_libc_allocator);
	prof_cct_init(&c.calls, &prof_libc_allocator);
	c.files = insp_xcalloc(1, sizeof *c.files);
	c.files[c.nfiles++] = "???";
	c.has[CS_TIME] = c.has[CS_SAMPLES] = m->total[PROF_M_SAMPLES] > 0;
	c.has[CS_BYTES] = c.has[CS_ALLOCS] = m->total[PROF_M_ASAMPLES] > 0;
	const struct prof_cct *at = prof_samples_tree(m->s);
	struct cs_frame *fr = NULL;
	size_t cap = 0;
	for (uint32_t i = 0; i < at->n; i++)
		if (at->nodes[i].parent != PROF_CCT_NONE &&
		    (at->nodes[i].self[PROF_M_SAMPLES] > 0 || at->nodes[i].self[PROF_M_ASAMPLES] > 0))
			cs_sample(&c, i, &fr, &cap);
	free(fr);
	for (size_t i = 0; i < c.x.nfuncs; i++) /* every file has its id before the writing */
		cs_file(&c, c.x.funcs[i].file);
	cs_header(&c, f);
	struct cs_out w = {.f = f};
	w.fn_named = insp_xcalloc(c.x.nfuncs + 1, sizeof *w.fn_named);
	w.file_named = insp_xcalloc(c.nfiles + 1, sizeof *w.file_named);
	bool *done = insp_xcalloc(c.x.nfuncs + 1, sizeof *done);
	const struct prof_cct *trees[2] = {&c.own, &c.calls};
	for (int t = 0; t < 2; t++) /* functions with own costs, then callers only */
		for (uint32_t i = 0; i < trees[t]->n; i++) {
			uint32_t fid = (uint32_t)trees[t]->nodes[i].key;
			if (trees[t]->nodes[i].parent != PROF_CCT_NONE || done[fid])
				continue;
			done[fid] = true;
			cs_function(&c, &w, fid);
		}
	fputs("\ntotals:", f);
	for (int k = 0; k < CS_N; k++)
		if (c.has[k])
			fprintf(f, " %lld", (long long)w.sum[k]);
	fputc('\n', f);
	free(done);
	free(w.fn_named);
	free(w.file_named);
	free(c.files);
	free(c.fhash);
	exp_inline_free(&c.x);
	prof_cct_free(&c.own);
	prof_cct_free(&c.calls);
	insp_pool_free(&c.pool);
}
