/*
** prof_model.c — the profile as the commands use it: the engine's rows in
** nanoseconds, with function names, whether it came from a trace (here) or
** from a profile database (prof_db.c).
**
** Sums are made in ticks and converted once, so that a thread's OWN is
** exactly the sum its rows would give before rounding.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>

const char *prof_clock_name(unsigned clock)
{
	return clock == MEMINST_TRACE_CLOCK_CPU ? "cpu" : "wall";
}

static int64_t model_ns(const struct prof_model *m, uint64_t ticks)
{
	double ns = (double)ticks * m->ns_per_tick + 0.5;
	/* damaged time stamps can be anything: saturate, do not overflow */
	return ns < 9.2e18 ? (int64_t)ns : INT64_MAX;
}

/* Take d ns off one figure, never below 0. */
static int64_t model_less(int64_t v, int64_t d)
{
	return v > d ? v - d : 0;
}

static bool model_skip_fn(uint64_t fn)
{
	return fn == ENG_FN_UNDEFINED || fn == ENG_FN_PENDING;
}

/*
** The position of a call made from `site` (a return address) by the
** function at `caller`: the line of site - 1 in the caller's own code.
** Inside code inlined into the caller that is the caller's frame of the
** inline chain (the line of its call into the inlined code); when the
** caller was itself inlined (its hooks run inside another function), its
** own frame of the chain, found by name.  0 when the site has no line or
** is not in the caller's code (a comparator called by qsort: the site is
** in qsort), or is nowhere known (a library since unloaded).
*/
#define MODEL_INLINE_MAX 64
int prof_site_line(prof_symtab_t *st, uint64_t caller, uint64_t site, const char **file)
{
	*file = NULL;
	if (site <= 1 || caller <= ENG_FN_PSEUDO_MAX)
		return 0;
	uint64_t a = site - 1;
	struct prof_iframe ch[MODEL_INLINE_MAX];
	size_t n = prof_symtab_inline(st, a, ch, MODEL_INLINE_MAX), nf;
	const struct prof_func *funcs = prof_symtab_funcs(st, &nf);
	uint32_t ci = prof_symtab_index(st, caller);
	const char *name = ci < nf ? funcs[ci].name : NULL;
	for (size_t k = 0; name && k < n; k++) /* innermost first */
		if (ch[k].func && !strcmp(ch[k].func, name) && ch[k].line > 0)
			return *file = ch[k].file, ch[k].line;
	if (prof_symtab_entry(st, a) != caller)
		return 0;
	if (n)
		return *file = ch[n - 1].file, ch[n - 1].line;
	return prof_symtab_line(st, a, file);
}

/*
** Compensation (TAU's): each traced event costs the program its calibrated
** time, half before its stamp and half after (eng_evs); the halves inside
** a figure times that cost come off it.  comp_ns of a figure's halves.
*/
static double model_comp_ns(const struct prof_tcost *c, const uint64_t h[ENG_EV_N])
{
	double d = 0;
	for (int k = 0; c->compensated && k < ENG_EV_N; k++)
		d += (double)h[k] * c->iv_ns[k];
	return d;
}

int64_t prof_comp_ns(const struct prof_tcost *c, int64_t v, const uint64_t h[ENG_EV_N], int64_t *cut)
{
	int64_t d = (int64_t)(model_comp_ns(c, h) + 0.5);
	if (d <= v)
		return v - d;
	if (cut)
		*cut += d - v;
	return 0;
}

static int64_t model_comp(const struct prof_model *m, uint64_t ticks, const uint64_t h[ENG_EV_N], int64_t *cut)
{
	return prof_comp_ns(&m->cost, model_ns(m, ticks), h, cut);
}

/*
** A compensated ACC: never below the compensated OWN it holds.  ACC is OWN
** plus the callees' times, each of which compensation leaves at 0 or
** more; taken off the whole ACC at once, the calibrated cost of callees
** that ran faster than it (a leaf called thousands of times, under load
** the calibration a little long) would take the function's OWN with it.
*/
static int64_t model_comp_acc(const struct prof_model *m, uint64_t ticks, const uint64_t h[ENG_EV_N],
			      uint64_t own_ticks, int64_t own)
{
	int64_t acc = model_comp(m, ticks, h, NULL);
	/* a recursive call's ACC is counted once, at the outermost call (fprof's
	** rule), so a raw ACC below the raw OWN is not to be raised */
	return ticks < own_ticks || acc > own ? acc : own;
}

/*
** meminst's work around the allocator (eng_mi, measured in each <alloc>
** call, and the measure's own calibrated cost in each): unless
** --no-compensate, out of <alloc>'s OWN and of every ACC that holds it,
** into rows of <meminst> called from where <alloc> was.  model_mi: that
** share of a figure v, never above it.
*/
static int64_t model_mi_ns(const struct prof_model *m, uint64_t ticks, uint64_t cnt)
{
	return model_ns(m, ticks) + (int64_t)((double)cnt * m->cost.inner_ns + 0.5);
}

static int64_t model_mi(const struct prof_model *m, int64_t v, uint64_t ticks, uint64_t cnt)
{
	if (!m->cost.mi_apart || !cnt)
		return 0;
	int64_t d = model_mi_ns(m, ticks, cnt);
	return d < v ? d : v;
}

/* The share of an ACC: inside the calls to <alloc> it holds, never in the
** function's own OWN (a caller of <alloc>: at most ACC - OWN); <alloc>'s
** ACC loses what its OWN does. */
static int64_t model_mi_acc(const struct prof_model *m, int64_t acc, int64_t own, bool alloc,
			    const struct eng_mi *mi)
{
	if (alloc) /* what its OWN loses: OWN = ACC stays */
		return model_mi(m, own, mi->own, mi->cnt);
	int64_t d = model_mi(m, acc, mi->acc, mi->cnt), room = acc - own;
	return d < room ? d : room > 0 ? room : 0;
}

static bool model_is_alloc(const struct eng_thread *t, uint32_t fn_index)
{
	return t->fns[fn_index].fn == ENG_FN_ALLOC;
}

static void model_sites(struct prof_model *m, const struct eng_thread *t, const uint32_t *map, prof_symtab_t *st)
{
	if (!t->nsites)
		return;
	m->sites = rd_xrealloc(m->sites, (m->nsites + 2 * t->nsites) * sizeof *m->sites);
	for (size_t i = 0; i < t->nsites; i++) {
		const struct eng_site_row *r = &t->sites[i];
		const struct eng_pair_row *p = &t->pairs[r->pair];
		if (map[p->caller] == UINT32_MAX || map[p->called] == UINT32_MAX || r->cnt == 0)
			continue;
		const char *file;
		int line = prof_site_line(st, t->fns[p->caller].fn, r->site, &file);
		file = file ? rd_pool_str(&m->pool, file) : NULL;
		int64_t acc = model_comp(m, r->acc, r->acc_ev, NULL), mi = model_mi(m, acc, r->mi.acc, r->mi.cnt);
		bool alloc = model_is_alloc(t, p->called);
		m->sites[m->nsites++] = (struct prof_csite){map[p->caller], map[p->called], r->site, file, line,
							    r->cnt, acc - mi, r->acc_bytes, alloc && mi ? r->mi.cnt : 0};
		if (alloc && mi)
			m->sites[m->nsites++] = (struct prof_csite){map[p->caller], ENG_FN_MEMINST, r->site, file,
								    line, r->mi.cnt, mi, 0, 0};
	}
}

static int model_cmp_site(const void *a, const void *b)
{
	const struct prof_csite *x = a, *y = b;
	if (x->caller != y->caller)
		return (x->caller > y->caller) - (x->caller < y->caller);
	if (x->called != y->called)
		return (x->called > y->called) - (x->called < y->called);
	return (x->site > y->site) - (x->site < y->site);
}

static void model_thread(struct prof_model *m, struct prof_mthread *mt, const struct eng_thread *t,
			 prof_symtab_t *st)
{
	uint32_t *map = rd_xcalloc(t->nfns, sizeof *map);
	int64_t taken = 0;
	struct prof_row mi_row = {ENG_FN_MEMINST, 0, 0, 0, {0}, 0};
	mt->rows = rd_xcalloc(t->nfns + 1, sizeof *mt->rows);
	for (size_t i = 0; i < t->nfns; i++) {
		const struct eng_fn_row *f = &t->fns[i];
		map[i] = f->fn == ENG_FN_PENDING ? UINT32_MAX : prof_symtab_index(st, f->fn);
		if (model_skip_fn(f->fn) || (f->cnt == 0 && f->acc == 0 && f->own == 0))
			continue;
		int64_t own = model_comp(m, f->own, f->ev.own, &m->cost.short_ns);
		if (!model_skip_fn(f->fn))
			taken += model_ns(m, f->own) - own;
		int64_t acc = model_comp_acc(m, f->acc, f->ev.acc, f->own, own), mi = 0;
		acc -= model_mi_acc(m, acc, own, f->fn == ENG_FN_ALLOC, &f->mi);
		if (f->fn == ENG_FN_ALLOC) { /* said whether moved or not */
			m->cost.mi_calls += f->mi.cnt, m->cost.mi_ns += model_mi_ns(m, f->mi.own, f->mi.cnt);
			mi = model_mi(m, own, f->mi.own, f->mi.cnt);
			mi_row.cnt += mi ? f->mi.cnt : 0, mi_row.own += mi, mi_row.acc += mi;
		}
		mt->rows[mt->nrows++] = (struct prof_row){map[i], f->cnt, acc, own - mi, f->mem, mi ? f->mi.cnt : 0};
	}
	if (mi_row.cnt)
		mt->rows[mt->nrows++] = mi_row;
	model_sites(m, t, map, st);
	mt->pairs = rd_xcalloc(2 * t->npairs + 1, sizeof *mt->pairs);
	for (size_t i = 0; i < t->npairs; i++) {
		const struct eng_pair_row *p = &t->pairs[i];
		if (map[p->caller] == UINT32_MAX || map[p->called] == UINT32_MAX ||
		    (p->cnt == 0 && p->acc == 0 && p->own == 0))
			continue;
		int64_t own = model_comp(m, p->own, p->ev.own, NULL), mi = 0;
		int64_t acc = model_comp_acc(m, p->acc, p->ev.acc, p->own, own);
		acc -= model_mi_acc(m, acc, own, model_is_alloc(t, p->called), &p->mi);
		if (model_is_alloc(t, p->called))
			mi = model_mi(m, own, p->mi.own, p->mi.cnt);
		mt->pairs[mt->npairs++] = (struct prof_pair){map[p->caller], map[p->called], p->cnt, acc,
							     own - mi, p->mem, mi ? p->mi.cnt : 0};
		if (mi)
			mt->pairs[mt->npairs++] = (struct prof_pair){map[p->caller], ENG_FN_MEMINST, p->mi.cnt, mi,
								     mi, {0}, 0};
	}
	free(map);
	uint64_t cnt, own;
	eng_thread_totals(t, &cnt, &own);
	mt->thread = t->thread;
	mt->parent = t->parent;
	mt->tid = (int64_t)t->tid;
	mt->name = t->name[0] ? rd_pool_str(&m->pool, t->name) : NULL;
	mt->cnt = cnt;
	mt->own = model_ns(m, own) - taken;
	mt->acc = t->seen ? model_ns(m, t->last - t->first) : 0;
	m->cost.taken_ns += taken;
}

static int model_cmp_thread(const void *a, const void *b)
{
	const struct prof_mthread *x = a, *y = b;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

/*
** The calibration (TRACE_COST) checked against the run before it is used:
** the events' estimated cost above CHECK_MAX_SHARE of the profile's OWN,
** or above the OWN of functions by more than CHECK_MAX_CUT of it in all
** (negative own times beyond noise), means the measure at the start does
** not hold for this run.  Sets c->hooks_ns and c->why (NULL: it holds).
*/
#define CHECK_MAX_SHARE 0.90
#define CHECK_MAX_CUT 0.02
static void model_check(const struct prof_trace *tr, struct prof_tcost *c, double ns_per_tick)
{
	double est = 0, cut = 0, own = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++) {
		const struct eng_thread *t = tr->sim.threads[i];
		for (size_t j = 0; j < t->nfns; j++) {
			const struct eng_fn_row *f = &t->fns[j];
			if (model_skip_fn(f->fn))
				continue;
			double d = model_comp_ns(c, f->ev.own), v = (double)f->own * ns_per_tick;
			est += d, own += v, cut += d > v ? d - v : 0;
		}
	}
	c->hooks_ns = (int64_t)(est + 0.5);
	c->why = est > CHECK_MAX_SHARE * own ? "its estimate is above 90% of the profile"
		 : cut > CHECK_MAX_CUT * own ? "it is above some functions' own times by more than 2% of the profile"
					      : NULL;
}

/*
** A calibration that fails the check, fitted to the run: no function's
** OWN can hold less than the tracer's work in it, so where a function with
** a fair share of the events (FIT_MIN_EVENTS, FIT_MIN_SHARE of the
** estimate) holds less, the start was measured in a slower moment (a
** neighbour on the machine, a core not yet at speed): the hooks' costs are
** scaled down to the least ratio of such a function's OWN to its estimate,
** by no more than FIT_MAX, and checked again.  A calibration that passes
** is used as measured.  (Ratios of sums over many intervals: one interval
** can be below the clock's resolution, 10 ns of TSC on AMD processors.)
** model_fit_scale returns the scale (1: none).
*/
#define FIT_MIN_EVENTS 1000
#define FIT_MIN_SHARE 0.01
#define FIT_MAX 0.5
static double model_fit_scale(const struct prof_trace *tr, const struct prof_tcost *c, double ns_per_tick)
{
	double fit = 1, est = (double)c->hooks_ns;
	for (size_t i = 0; i < tr->sim.nthreads; i++) {
		const struct eng_thread *t = tr->sim.threads[i];
		for (size_t j = 0; j < t->nfns; j++) {
			const struct eng_fn_row *f = &t->fns[j];
			if (model_skip_fn(f->fn))
				continue;
			uint64_t n = 0;
			for (int k = 0; k < ENG_EV_N; k++)
				n += f->ev.own[k];
			double d = model_comp_ns(c, f->ev.own), v = (double)f->own * ns_per_tick;
			if (n >= FIT_MIN_EVENTS && d >= FIT_MIN_SHARE * est && v < fit * d)
				fit = v / d;
		}
	}
	return fit < FIT_MAX ? 1 : fit;
}

static void model_fit(const struct prof_trace *tr, struct prof_tcost *c, double ns_per_tick)
{
	double scale = model_fit_scale(tr, c, ns_per_tick), measured[ENG_EV_N];
	if (scale >= 1)
		return;
	memcpy(measured, c->iv_ns, sizeof measured);
	for (int k = ENG_EV_CC; k <= ENG_EV_XH; k++) /* the hooks' kinds, not an ALLOC's */
		c->iv_ns[k] *= scale;
	const char *why = c->why;
	int64_t hooks_ns = c->hooks_ns;
	model_check(tr, c, ns_per_tick);
	if (c->why) { /* no fit: as measured, and why it fails */
		memcpy(c->iv_ns, measured, sizeof measured);
		c->why = why, c->hooks_ns = hooks_ns;
		return;
	}
	c->scale = scale;
}

void prof_calibration(const struct prof_trace *tr, struct prof_tcost *c)
{
	memset(c, 0, sizeof *c);
	if (!tr->cost_ps[0])
		return;
	double ns = prof_ns_per_tick(tr);
	c->known = true;
	c->scale = 1;
	c->call_ns = (double)tr->cost_ps[0] / 1000.0;
	c->alloc_ns = (double)tr->cost_ps[1] / 1000.0;
	c->alloc_out_ns = (double)tr->cost_ps[MEMINST_TCOST_ALLOC_OUT] / 1000.0;
	c->inner_ns = (double)tr->cost_ps[MEMINST_TCOST_INNER] / 1000.0;
	for (int k = 0; k < 6; k++) /* files before the kinds were measured: one event each */
		c->iv_ns[k] = tr->cost_ps[MEMINST_TCOST_CC + k] ? (double)tr->cost_ps[MEMINST_TCOST_CC + k] / 1000.0
								: 2 * c->call_ns;
	c->iv_ns[ENG_EV_XH] = c->call_ns / 2;
	c->iv_ns[ENG_EV_AH] = c->alloc_out_ns / 2;
	c->compensated = true; /* for model_comp_ns below */
	model_check(tr, c, ns);
	if (c->why)
		model_fit(tr, c, ns);
	c->failed = c->why != NULL;
	c->compensated = !c->failed && !tr->raw_times;
}

/*
** The tracer's own cost (TRACE_COST).  The stamps' share of every <alloc>
** call is exact to take off: <alloc>'s own rows, its pairs, and the
** thread's OWN.  The hooks' cost is compensated (model_comp) unless the
** calibration failed or --no-compensate.
*/
static void model_cost(struct prof_model *m)
{
	struct prof_tcost *c = &m->cost;
	if (!c->known)
		return;
	for (size_t i = 0; i < m->nthreads; i++) {
		struct prof_mthread *t = &m->threads[i];
		int64_t taken = 0;
		for (size_t j = 0; j < t->nrows; j++) {
			struct prof_row *r = &t->rows[j];
			if (r->fn == ENG_FN_ALLOC) { /* the stamps of calls not measured */
				int64_t d = (int64_t)((double)(r->cnt - r->mi_cnt) * c->alloc_ns + 0.5);
				d = d < r->own ? d : r->own;
				r->own -= d, r->acc = model_less(r->acc, d), taken += d;
				c->allocs += r->cnt;
			} else if (r->fn > ENG_FN_PSEUDO_MAX) {
				c->calls += r->cnt;
			}
		}
		for (size_t j = 0; j < t->npairs; j++) {
			struct prof_pair *p = &t->pairs[j];
			if (p->called == ENG_FN_ALLOC) {
				int64_t d = (int64_t)((double)(p->cnt - p->mi_cnt) * c->alloc_ns + 0.5);
				p->own = model_less(p->own, d), p->acc = model_less(p->acc, d);
			}
		}
		t->own = model_less(t->own, taken);
		m->own = model_less(m->own, taken);
		c->alloc_taken_ns += taken;
	}
	for (size_t i = 0; i < m->nsites; i++) {
		struct prof_csite *k = &m->sites[i];
		if (k->called == ENG_FN_ALLOC)
			k->acc = model_less(k->acc, (int64_t)((double)(k->cnt - k->mi_cnt) * c->alloc_ns + 0.5));
	}
}

void prof_model_from_trace(struct prof_model *m, struct prof_trace *tr, const struct rd_opts *o,
			   bool no_files)
{
	memset(m, 0, sizeof *m);
	m->source = rd_pool_str(&m->pool, tr->path);
	m->exe = tr->exe ? rd_pool_str(&m->pool, tr->exe) : NULL;
	m->cmdline = tr->cmdline ? rd_pool_str(&m->pool, tr->cmdline) : NULL;
	m->pid = tr->h.pid;
	m->clock = tr->h.clock;
	m->ns_per_tick = prof_ns_per_tick(tr);
	m->events = tr->sim.events;
	m->lost = tr->sim.lost;
	prof_symtab_t *st = prof_symtab_new(tr, o, no_files, &m->pool);
	prof_calibration(tr, &m->cost);
	m->cost.mi_apart = !tr->raw_times;
	m->threads = rd_xcalloc(tr->sim.nthreads + 1, sizeof *m->threads);
	uint64_t own = 0;
	for (size_t i = 0; i < tr->sim.nthreads; i++) {
		const struct eng_thread *t = tr->sim.threads[i];
		m->untraced += t->untraced;
		struct prof_mthread *mt = &m->threads[m->nthreads];
		model_thread(m, mt, t, st);
		if (mt->nrows == 0) {
			prof_mthread_free(mt);
			continue;
		}
		uint64_t c, w;
		eng_thread_totals(t, &c, &w);
		m->cnt += c;
		own += w;
		m->nthreads++;
	}
	qsort(m->threads, m->nthreads, sizeof *m->threads, model_cmp_thread);
	if (m->nsites)
		qsort(m->sites, m->nsites, sizeof *m->sites, model_cmp_site);
	m->cost.raw_own_ns = model_ns(m, own);
	m->own = m->cost.raw_own_ns - m->cost.taken_ns;
	model_cost(m);
	m->acc = tr->sim.seen ? model_ns(m, tr->sim.last - tr->sim.first) : 0;
	size_t n;
	const struct prof_func *f = prof_symtab_funcs(st, &n);
	m->funcs = rd_xcalloc(n, sizeof *m->funcs);
	memcpy(m->funcs, f, n * sizeof *f);
	m->nfuncs = n;
	prof_symtab_free(st);
}

void prof_mthread_free(struct prof_mthread *t)
{
	free(t->rows);
	free(t->pairs);
	memset(t, 0, sizeof *t);
}

void prof_model_free(struct prof_model *m)
{
	for (size_t i = 0; i < m->nthreads; i++)
		prof_mthread_free(&m->threads[i]);
	free(m->threads);
	free(m->sites);
	free(m->funcs);
	rd_pool_free(&m->pool);
	memset(m, 0, sizeof *m);
}

/* ----------------------------------------------------- --totals merge -- */

static int64_t model_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void model_mem_add(struct eng_mem *to, const struct eng_mem *m)
{
	to->own_bytes += m->own_bytes, to->own_blocks += m->own_blocks;
	to->acc_bytes += m->acc_bytes, to->acc_blocks += m->acc_blocks;
}

/* Add the figures of row or pair s to d, the same key's (both types have
** cnt, acc, own and mem). */
#define MODEL_MERGE(d, s) \
	((d)->cnt += (s)->cnt, (d)->acc = model_add((d)->acc, (s)->acc), \
	 (d)->own = model_add((d)->own, (s)->own), model_mem_add(&(d)->mem, &(s)->mem))

static int model_cmp_row(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;
	return (x->fn > y->fn) - (x->fn < y->fn);
}

static int model_cmp_pair(const void *a, const void *b)
{
	const struct prof_pair *x = a, *y = b;
	if (x->caller != y->caller)
		return (x->caller > y->caller) - (x->caller < y->caller);
	return (x->called > y->called) - (x->called < y->called);
}

int64_t prof_model_fn_own(const struct prof_model *m, uint64_t fn, uint64_t *cnt, const char **name)
{
	int64_t own = 0;
	*cnt = 0;
	for (size_t i = 0; i < m->nthreads; i++)
		for (size_t j = 0; j < m->threads[i].nrows; j++) {
			const struct prof_row *r = &m->threads[i].rows[j];
			if (r->fn < m->nfuncs && m->funcs[r->fn].addr == fn)
				*cnt += r->cnt, own = model_add(own, r->own), *name = m->funcs[r->fn].name;
		}
	return own;
}

/* Rows of every thread by function (and pairs by caller, called), summed.
** ACC sums across threads: each thread's ACC is charged once per
** outermost instance, and threads run side by side. */
void prof_model_merge(const struct prof_model *m, struct prof_mthread *out)
{
	size_t nr = 0, np = 0;
	for (size_t i = 0; i < m->nthreads; i++)
		nr += m->threads[i].nrows, np += m->threads[i].npairs;
	memset(out, 0, sizeof *out);
	struct prof_row *r = rd_xcalloc(nr + 1, sizeof *r);
	struct prof_pair *p = rd_xcalloc(np + 1, sizeof *p);
	nr = np = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_mthread *t = &m->threads[i];
		memcpy(r + nr, t->rows, t->nrows * sizeof *r);
		memcpy(p + np, t->pairs, t->npairs * sizeof *p);
		nr += t->nrows, np += t->npairs;
	}
	qsort(r, nr, sizeof *r, model_cmp_row);
	qsort(p, np, sizeof *p, model_cmp_pair);
	size_t k = 0;
	for (size_t i = 0; i < nr; i++) {
		if (k && r[k - 1].fn == r[i].fn)
			MODEL_MERGE(&r[k - 1], &r[i]);
		else
			r[k++] = r[i];
	}
	out->rows = r, out->nrows = k;
	k = 0;
	for (size_t i = 0; i < np; i++) {
		if (k && p[k - 1].caller == p[i].caller && p[k - 1].called == p[i].called)
			MODEL_MERGE(&p[k - 1], &p[i]);
		else
			p[k++] = p[i];
	}
	out->pairs = p, out->npairs = k;
	out->cnt = m->cnt, out->own = m->own, out->acc = m->acc;
}
