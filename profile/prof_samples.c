/*
** prof_samples.c — the samples of a trace, for the sampling displays.
**
** While the trace is read (prof_trace_read_samples), every SAMPLE and
** ALLOC_SAMPLE record goes into one address tree (eng_cct.h) with one root
** per thread, COUNTS into a table of (thread, function) counts, and the
** cost records into sums: memory follows distinct stacks and functions.
** Frame 0 of a timer sample is the interrupted pc; every other frame, and
** every frame of an allocation sample, is a return address and is looked
** up at address - 1 (the call instruction).
**
** SAMPLE_RESET drops the earlier samples, counts and costs of every thread
** (of the calling thread only when the file's clock is per-thread CPU
** time).  Chunks of different threads interleave, so a reset may be read
** after samples that follow it in time: then the samples of those threads
** cannot be told apart any more, and the trace is read a second time with
** every reset known before the first sample (prof_samples_reread).
**
** Afterwards (prof_smodel_build) addresses are named with prof_sym.c and
** mapped to the entries of their functions, and the tree is folded into the
** function tree of the displays.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>

static void samp_oom(void)
{
	fputs("inspect: out of memory\n", stderr);
	exit(RD_EXIT_DB);
}

struct samp_thread {
	uint32_t thread;
	uint64_t drop_before;    /* samples earlier than this are dropped     */
	uint64_t last;           /* latest sample time added                  */
	bool any;
};

struct samp_reset {
	uint64_t time;
	uint32_t thread;         /* 0: every thread                           */
};

struct prof_samples {
	struct eng_cct at;      /* address tree                              */
	struct eng_cct counts;  /* roots: threads; children: fn -> self[0]   */
	struct samp_thread *thr;
	size_t nthr;
	struct samp_reset *resets;
	size_t nresets;
	bool known;              /* second pass: every reset is known         */
	bool reread;
	bool per_thread_clock;
	uint64_t drop_all;       /* a reset of every thread                   */
	uint64_t nsamples, nasamples, frames;
	uint64_t counts_cost_ps;
	double sampler_ticks, sampler_runs;
	uint64_t sampler_time;   /* time stamp of the last cost record        */
};

struct prof_samples *prof_samples_new(void)
{
	struct prof_samples *s = rd_xcalloc(1, sizeof *s);
	eng_cct_init(&s->at, &prof_libc_allocator);
	eng_cct_init(&s->counts, &prof_libc_allocator);
	return s;
}

void prof_samples_free(struct prof_samples *s)
{
	if (!s)
		return;
	eng_cct_free(&s->at);
	eng_cct_free(&s->counts);
	free(s->thr);
	free(s->resets);
	free(s);
}

bool prof_samples_reread(const struct prof_samples *s)
{
	return s->reread && !s->known;
}

const struct eng_cct *prof_samples_tree(const struct prof_samples *s)
{
	return &s->at;
}

uint64_t prof_samples_count(const struct prof_samples *s)
{
	return s->nsamples + s->nasamples;
}

/* Back to an empty aggregate that knows every reset (the second pass). */
static void samp_restart(struct prof_samples *s)
{
	eng_cct_free(&s->at);
	eng_cct_free(&s->counts);
	s->nthr = 0;
	s->known = true;
	s->drop_all = 0;
	s->nsamples = s->nasamples = s->frames = 0;
	s->counts_cost_ps = 0;
	s->sampler_ticks = s->sampler_runs = 0;
	s->sampler_time = 0;
}

static struct samp_thread *samp_thread(struct prof_samples *s, uint32_t thread)
{
	for (size_t i = 0; i < s->nthr; i++)
		if (s->thr[i].thread == thread)
			return &s->thr[i];
	s->thr = rd_xrealloc(s->thr, (s->nthr + 1) * sizeof *s->thr);
	struct samp_thread *t = &s->thr[s->nthr++];
	*t = (struct samp_thread){.thread = thread, .drop_before = s->drop_all};
	if (s->known) /* second pass: the resets that apply to it, in advance */
		for (size_t i = 0; i < s->nresets; i++)
			if ((!s->resets[i].thread || s->resets[i].thread == thread) &&
			    s->resets[i].time > t->drop_before)
				t->drop_before = s->resets[i].time;
	return t;
}

/* Is a record of `thread` at `time` before a reset that applies to it? */
static bool samp_dropped(struct prof_samples *s, uint32_t thread, uint64_t time)
{
	struct samp_thread *t = samp_thread(s, thread);
	return time < t->drop_before || time < s->drop_all;
}

static void samp_reset(struct prof_samples *s, uint32_t thread, uint64_t time)
{
	uint32_t who = s->per_thread_clock ? thread : 0;
	if (!s->known) {
		s->resets = rd_xrealloc(s->resets, (s->nresets + 1) * sizeof *s->resets);
		s->resets[s->nresets++] = (struct samp_reset){time, who};
	} else {
		return; /* applied in advance */
	}
	for (size_t i = 0; i < s->nthr; i++) {
		struct samp_thread *t = &s->thr[i];
		if (who && t->thread != who)
			continue;
		if (t->any && t->last >= time)
			s->reread = true; /* later samples are mixed in: read again */
		if (time > t->drop_before) {
			t->drop_before = time;
			eng_cct_clear(&s->at, t->thread);
			eng_cct_clear(&s->counts, t->thread);
		}
	}
	if (!who && time > s->drop_all)
		s->drop_all = time;
	if (!who && s->sampler_time < time)
		s->sampler_ticks = s->sampler_runs = 0;
}

static void samp_add(struct prof_samples *s, uint32_t thread, uint64_t time, uint64_t *frames, size_t n,
		     const double m[ENG_M_N])
{
	struct samp_thread *t = samp_thread(s, thread);
	if (!t->any || time > t->last)
		t->last = time;
	t->any = true;
	s->frames += n;
	if (eng_cct_add(&s->at, thread, frames, n, m) != ENG_OK)
		samp_oom();
}

void prof_samples_header(struct prof_samples *s, const struct meminst_trace_header *h)
{
	s->per_thread_clock = h->clock == MEMINST_TRACE_CLOCK_CPU;
}

void prof_samples_record(struct prof_samples *s, uint32_t thread, const uint64_t *r, size_t len)
{
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t time = MEMINST_TREC_TIME(r[0]), frames[ENG_CCT_MAX_DEPTH];
	size_t n = len >= 2 ? (size_t)(r[1] >> 32) : 0;
	double m[ENG_M_N] = {0};
	switch (kind) {
	case MEMINST_TREC_SAMPLE: /* [head, size, weight, frames n] */
		if (samp_dropped(s, thread, time) || n == 0)
			return;
		n = n < ENG_CCT_MAX_DEPTH ? n : ENG_CCT_MAX_DEPTH;
		for (size_t i = 0; i < n; i++)
			frames[i] = r[3 + i] == MEMINST_TRACE_FRAME_TRUNCATED ? PROF_FN_TRUNCATED
				    : i && r[3 + i]			       ? r[3 + i] - 1
									       : r[3 + i];
		m[ENG_M_TICKS] = (double)r[2];
		m[ENG_M_SAMPLES] = 1;
		s->nsamples++;
		samp_add(s, thread, time, frames, n, m);
		return;
	case MEMINST_TREC_ALLOC_SAMPLE: /* [head, size, bytes, request, frames n] */
		if (samp_dropped(s, thread, time) || n == 0)
			return;
		n = n < ENG_CCT_MAX_DEPTH ? n : ENG_CCT_MAX_DEPTH;
		for (size_t i = 0; i < n; i++)
			frames[i] = r[4 + i] == MEMINST_TRACE_FRAME_TRUNCATED ? PROF_FN_TRUNCATED
				    : r[4 + i]				       ? r[4 + i] - 1
									       : 0;
		m[ENG_M_BYTES] = (double)r[2];
		m[ENG_M_ALLOCS] = r[3] ? (double)r[2] / (double)r[3] : 0;
		m[ENG_M_ASAMPLES] = 1;
		s->nasamples++;
		samp_add(s, thread, time, frames, n, m);
		return;
	case MEMINST_TREC_COUNTS: /* [head, size, n x (fn, count)] */
		if (samp_dropped(s, thread, time))
			return;
		for (size_t i = 0; i < n; i++) {
			uint32_t root, c;
			if (eng_cct_child(&s->counts, ENG_CCT_NONE, thread, &root) ||
			    eng_cct_child(&s->counts, root, r[2 + 2 * i], &c))
				samp_oom();
			s->counts.nodes[c].self[0] += (double)r[3 + 2 * i];
		}
		return;
	case MEMINST_TREC_SAMPLE_RESET:
		samp_reset(s, thread, time);
		return;
	case MEMINST_TREC_COUNTS_COST:
		if (len >= 3)
			s->counts_cost_ps = r[2];
		return;
	case MEMINST_TREC_SAMPLE_COST:
		if (len >= 4 && !samp_dropped(s, 0, time)) {
			s->sampler_ticks += (double)r[2];
			s->sampler_runs += (double)r[3];
			s->sampler_time = time;
		}
		return;
	}
}

void prof_samples_begin(struct prof_samples *s)
{
	if (s->reread || s->nresets)
		samp_restart(s);
}

/* ------------------------------------------------------------- model -- */

/* The C and C++ allocation entry points, and the allocators' insides that
** show without them in a stack (glibc's, jemalloc's inside libmeminst). */
static bool model_is_alloc(const char *name)
{
	static const char *const exact[] = {"malloc", "calloc", "realloc", "reallocarray", "free",
					    "cfree", "posix_memalign", "aligned_alloc", "memalign",
					    "valloc", "pvalloc", "<alloc>", NULL};
	static const char *const prefix[] = {"operator new", "operator delete", "__libc_malloc",
					     "__libc_calloc", "__libc_realloc", "__libc_free",
					     "__libc_memalign", "_int_malloc", "_int_free", "_int_realloc",
					     "_int_memalign", "je_", "meminst_malloc", NULL};
	for (int i = 0; exact[i]; i++)
		if (!strcmp(name, exact[i]))
			return true;
	for (int i = 0; prefix[i]; i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

static uint32_t model_fid(void *ctx, uint32_t node, uint64_t addr)
{
	(void)addr;
	const struct prof_smodel *m = ctx;
	return m->node_fid[node];
}

static bool model_hidden(void *ctx, uint32_t fid)
{
	const struct prof_smodel *m = ctx;
	return m->hidden[fid];
}

/*
** meminst's own work as one pseudo function, <meminst>: a sample's frames
** from the first one in libmeminst's own code (its bookkeeping inside
** malloc, naming an allocation site with dladdr, the sampler) to the
** innermost are one <meminst> frame, except the allocator's functions
** (jemalloc inside libmeminst, libc's malloc) that it calls for the program.
** Its exported names (malloc, nanosleep … it interposes) are the program's
** calls and stay; the start routine of the threads it makes for the
** program (thread_main) is left out.  Parents come before children in
** the address tree (eng_cct_add).
*/
#define MODEL_SKIP UINT32_MAX /* a frame that is not shown */
static void model_meminst(struct prof_smodel *m, const struct prof_samples *s)
{
	const struct eng_cct *at = &s->at;
	bool *in = rd_xcalloc(at->n + 1, sizeof *in);
	uint32_t own = MODEL_SKIP;
	for (size_t i = 0; i < at->n; i++) {
		const struct eng_cct_node *nd = &at->nodes[i];
		if (nd->parent == ENG_CCT_NONE)
			continue;
		size_t n;
		const struct prof_func *f = &prof_symtab_funcs(m->st, &n)[m->node_fid[i]];
		bool inside = nd->parent < i && in[nd->parent];
		const struct prof_func *up = nd->parent < i && at->nodes[nd->parent].parent != ENG_CCT_NONE &&
						     m->node_fid[nd->parent] < n
					     ? &prof_symtab_funcs(m->st, &n)[m->node_fid[nd->parent]]
					     : NULL;
		if (!inside && up && up->meminst == 2 && f->meminst == 0 && !strcmp(up->name, f->name))
			m->node_fid[nd->parent] = MODEL_SKIP; /* libmeminst's pthread_create passing it on */
		if (inside && !model_is_alloc(f->name)) {
			m->node_fid[i] = MODEL_SKIP; /* part of the <meminst> above */
			in[i] = true;
		} else if (!inside && f->meminst == 1) {
			if (!strcmp(f->name, "thread_main")) {
				m->node_fid[i] = MODEL_SKIP;
				continue;
			}
			if (own == MODEL_SKIP)
				own = prof_symtab_index(m->st, PROF_FN_MEMINST);
			m->node_fid[i] = own;
			in[i] = true;
		}
	}
	free(in);
}

/* Every address of the tree to the symbol-table index of its function. */
static void model_functions(struct prof_smodel *m, const struct prof_samples *s)
{
	m->node_fid = rd_xcalloc(s->at.n + 1, sizeof *m->node_fid);
	struct eng_cct cache; /* address -> function, as roots keyed by address */
	eng_cct_init(&cache, &prof_libc_allocator);
	for (size_t i = 0; i < s->at.n; i++) {
		const struct eng_cct_node *nd = &s->at.nodes[i];
		if (nd->parent == ENG_CCT_NONE)
			continue;
		uint32_t c = eng_cct_find(&cache, ENG_CCT_NONE, nd->key);
		if (c == ENG_CCT_NONE) {
			if (eng_cct_child(&cache, ENG_CCT_NONE, nd->key, &c))
				samp_oom();
			cache.nodes[c].self[0] = prof_symtab_index(m->st, prof_symtab_entry(m->st, nd->key));
		}
		m->node_fid[i] = (uint32_t)cache.nodes[c].self[0];
	}
	eng_cct_free(&cache);
	model_meminst(m, s);
	m->funcs = prof_symtab_funcs(m->st, &m->nfuncs);
}

static void model_marks(struct prof_smodel *m, const struct rd_opts *o, const struct prof_sopts *so)
{
	m->hidden = rd_xcalloc(m->nfuncs + 1, sizeof *m->hidden);
	m->alloc_fn = rd_xcalloc(m->nfuncs + 1, sizeof *m->alloc_fn);
	for (size_t i = 0; i < m->nfuncs; i++)
		m->alloc_fn[i] = model_is_alloc(m->funcs[i].name);
	for (size_t h = 0; h < so->nhide; h++) {
		bool found = false;
		for (size_t i = 0; i < m->nfuncs; i++)
			if (!strcmp(m->funcs[i].name, so->hide[h]))
				m->hidden[i] = found = true;
		if (!found)
			rd_errf(o->err, "inspect: warning: --hide %s: no such function in %s\n", so->hide[h],
				m->source);
	}
}

/* Timer samples with an allocator function anywhere on their stack. */
static void model_alloc_time(struct prof_smodel *m)
{
	const struct eng_cct *at = &m->s->at;
	for (size_t i = 0; i < at->n; i++) {
		const struct eng_cct_node *nd = &at->nodes[i];
		if (nd->self[ENG_M_SAMPLES] == 0 || (m->thread && nd->thread != m->thread))
			continue;
		for (uint32_t j = (uint32_t)i; at->nodes[j].parent != ENG_CCT_NONE; j = at->nodes[j].parent)
			if (m->node_fid[j] != MODEL_SKIP && m->alloc_fn[m->node_fid[j]]) {
				m->alloc_ticks += nd->self[ENG_M_TICKS];
				m->alloc_samples += nd->self[ENG_M_SAMPLES];
				break;
			}
	}
}

static void model_counts(struct prof_smodel *m)
{
	const struct eng_cct *c = &m->s->counts;
	double cost = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct eng_cct_node *nd = &c->nodes[i];
		if (nd->parent == ENG_CCT_NONE || (m->thread && nd->thread != m->thread))
			continue;
		if (!m->calls)
			m->calls = rd_xcalloc(m->nfuncs + 1, sizeof *m->calls);
		uint32_t fid = prof_symtab_index(m->st, prof_symtab_entry(m->st, nd->key));
		if (fid < m->nfuncs)
			m->calls[fid] += nd->self[0];
		cost += nd->self[0];
	}
	m->counts_ns = cost * (double)m->s->counts_cost_ps / 1000.0;
}

static void model_threads(struct prof_smodel *m, const struct prof_trace *tr)
{
	const struct eng_cct *at = &m->s->at;
	for (size_t i = 0; i < at->n; i++) {
		const struct eng_cct_node *nd = &at->nodes[i];
		size_t k;
		for (k = 0; k < m->nthreads && m->threads[k].thread != nd->thread; k++)
			;
		if (k == m->nthreads) {
			m->threads = rd_xrealloc(m->threads, (k + 1) * sizeof *m->threads);
			m->threads[m->nthreads++] = (struct prof_sthread){.thread = nd->thread, .tid = -1};
			for (size_t j = 0; j < tr->sim.nthreads; j++) {
				const struct eng_thread *t = tr->sim.threads[j];
				if (t->thread != nd->thread)
					continue;
				m->threads[k].tid = t->tid ? (int64_t)t->tid : -1;
				m->threads[k].name = t->name[0] ? rd_pool_str(&m->pool, t->name) : NULL;
			}
		}
		for (int j = 0; j < ENG_M_N; j++)
			m->threads[k].total[j] += nd->self[j];
	}
}

int prof_smodel_build(struct prof_smodel *m, struct prof_samples *s, struct prof_trace *tr,
		      const struct rd_opts *o, bool no_files, const struct prof_sopts *so)
{
	memset(m, 0, sizeof *m);
	m->source = rd_pool_str(&m->pool, tr->path);
	m->exe = tr->exe ? rd_pool_str(&m->pool, tr->exe) : NULL;
	m->pid = tr->h.pid;
	m->clock = tr->h.clock;
	m->sample_clock = tr->h.sample_clock;
	m->sample_hz = tr->h.sample_hz;
	m->alloc_mean = tr->h.alloc_sample;
	m->ns_per_tick = prof_ns_per_tick(tr);
	m->s = s;
	m->thread = so->thread;
	m->st = prof_symtab_new(tr, o, no_files, &m->pool);
	model_functions(m, s);
	model_threads(m, tr);
	if (so->thread) {
		bool found = false;
		for (size_t i = 0; i < m->nthreads; i++)
			found |= m->threads[i].thread == so->thread;
		if (!found) {
			rd_errf(o->err, "inspect: %s: no samples of thread %u\n", tr->path, so->thread);
			return RD_EXIT_NOTFOUND;
		}
	}
	model_counts(m); /* may add functions: before the arrays sized by them */
	m->funcs = prof_symtab_funcs(m->st, &m->nfuncs);
	if (m->calls)
		m->calls = rd_xrealloc(m->calls, (m->nfuncs + 1) * sizeof *m->calls);
	model_marks(m, o, so);
	model_alloc_time(m);
	m->sampler_ticks = s->sampler_ticks;
	m->sampler_runs = s->sampler_runs;
	m->fs = rd_xcalloc(m->nfuncs + 1, sizeof *m->fs);
	eng_cct_init(&m->ft, &prof_libc_allocator);
	struct eng_fold f = {model_fid, model_hidden, m, m->nfuncs, so->thread, true};
	if (eng_cct_fold(&s->at, &f, &m->ft, m->fs) != ENG_OK)
		samp_oom();
	if (m->ft.n)
		memcpy(m->total, m->ft.nodes[0].total, sizeof m->total);
	return 0;
}

struct eng_fsum *prof_smodel_thread_sums(const struct prof_smodel *m, uint32_t thread)
{
	struct eng_fsum *fs = rd_xcalloc(m->nfuncs + 1, sizeof *fs);
	struct eng_cct ft;
	eng_cct_init(&ft, &prof_libc_allocator);
	struct eng_fold f = {model_fid, model_hidden, (void *)m, m->nfuncs, thread, true};
	if (eng_cct_fold(&m->s->at, &f, &ft, fs) != ENG_OK)
		samp_oom();
	eng_cct_free(&ft);
	return fs;
}

void prof_smodel_free(struct prof_smodel *m)
{
	eng_cct_free(&m->ft);
	prof_symtab_free(m->st);
	free(m->node_fid);
	free(m->hidden);
	free(m->alloc_fn);
	free(m->fs);
	free(m->calls);
	free(m->threads);
	rd_pool_free(&m->pool);
	memset(m, 0, sizeof *m);
}

static int samples_cmp_self(const void *a, const void *b, void *ctx)
{
	const struct eng_fsum *fs = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double u = fs[x].self[ENG_M_TICKS], v = fs[y].self[ENG_M_TICKS];
	if (u != v)
		return u < v ? 1 : -1;
	return (x > y) - (x < y);
}

uint32_t *prof_smodel_by_self(const struct prof_smodel *m, size_t *n)
{
	uint32_t *order = rd_xcalloc(m->nfuncs + 1, sizeof *order);
	*n = 0;
	for (uint32_t i = 0; i < m->nfuncs; i++)
		if (m->fs[i].cum[ENG_M_TICKS] > 0 || m->fs[i].cum[ENG_M_BYTES] > 0)
			order[(*n)++] = i;
	qsort_r(order, *n, sizeof *order, samples_cmp_self, m->fs);
	return order;
}
