/*
** prof_pprof.c — the profiles of `inspect export --format pprof`, built
** from what the other exports use (one stack walk per input kind):
**
**   exact trace  the stack tree of prof_stacks.c: per distinct stack, the
**                own time in ns of the trace's clock (wall or cpu), the
**                bytes and the allocations made (alloc_space,
**                alloc_objects); locations are functions (an exact trace
**                has their entries only), at their first line
**   samples      the address tree of prof_samples.c: per distinct stack,
**                timer samples (samples, and their time in ns of the
**                sampling clock) and allocation samples (alloc_objects,
**                alloc_space: the estimates of `inspect analyse`, rounded
**                per stack); locations are the sampled pc and the call
**                sites, each at its own source line; meminst's own frames
**                are one <meminst> frame as in the displays
**
** Each sample carries the thread as labels: "tid" (a number) and "thread"
** (its name, when known).  Mappings are the trace's modules with their
** build-ids; names come from the shared symboliser, so every mapping says
** it has functions, file names and line numbers (pprof does not look for
** the binaries again).
*/
#include "prof_pprof.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void pp_module(struct pprof *pp, const struct prof_mod *m)
{
	char hex[2 * sizeof m->build_id + 1];
	size_t n = m->build_id_len < sizeof m->build_id ? m->build_id_len : sizeof m->build_id;
	for (size_t k = 0; k < n; k++)
		snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
	hex[2 * n] = 0;
	pprof_mapping(pp, m->start, m->end, m->offset, m->path, hex);
}

/* The program's own mappings first: pprof takes the first as the main
** binary (its "File:" line). */
static void pp_modules(struct pprof *pp, const struct prof_trace *tr)
{
	for (int exe = 1; exe >= 0; exe--)
		for (size_t i = 0; i < tr->nmods; i++)
			if ((tr->exe && tr->mods[i].path && !strcmp(tr->mods[i].path, tr->exe)) == exe)
				pp_module(pp, &tr->mods[i]);
}

static void pp_grow(uint64_t **locs, size_t *cap, size_t n)
{
	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 256;
	*locs = insp_xrealloc(*locs, *cap * sizeof **locs);
}

static int64_t pp_round(double v)
{
	return v > 0 && v < 9.2e18 ? (int64_t)llround(v) : 0;
}

/* ------------------------------------------------------- exact trace -- */

static const struct prof_thread *pp_trace_thread(const struct prof_trace *tr, uint32_t thread)
{
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		if (tr->sim.threads[i]->thread == thread)
			return tr->sim.threads[i];
	return NULL;
}

void pprof_from_stacks(struct pprof *pp, const struct exp_stacks *s, const struct prof_trace *tr)
{
	const char *clock = prof_clock_name(tr->h.clock);
	pprof_sample_type(pp, clock, "nanoseconds");
	pprof_sample_type(pp, "alloc_space", "bytes");
	pprof_sample_type(pp, "alloc_objects", "count");
	pprof_default_type(pp, clock);
	pprof_times(pp, tr->h.t0_realtime_ns, 0);
	pprof_comment(pp, "meminst exact trace: own time, bytes and allocations per call stack");
	pp_modules(pp, tr);
	uint64_t *locs = NULL;
	size_t cap = 0;
	const struct prof_thread *th = NULL;
	for (uint32_t i = 1; i < s->t.n; i++) {
		const struct prof_cct_node *nd = &s->t.nodes[i];
		int64_t v[3] = {pp_round(nd->self[EXP_TIME]), pp_round(nd->self[EXP_BYTES]),
				pp_round(nd->self[EXP_ALLOCS])};
		if (!v[0] && !v[1] && !v[2])
			continue;
		size_t n = 0;
		for (uint32_t j = i; j; j = s->t.nodes[j].parent) {
			uint32_t f = s->fid[j];
			if (f >= s->nfuncs)
				continue; /* the root and the unknown callers */
			const struct prof_func *fn = &s->funcs[f];
			struct pprof_fn pf = {fn->name, fn->file, fn->line};
			uint64_t key = s->t.nodes[j].key;
			pp_grow(&locs, &cap, n);
			locs[n++] = pprof_location(pp, key, f, &pf, NULL, NULL);
		}
		if (!n)
			continue; /* the unknown caller's own: no function's (as the profile) */
		uint32_t thread = exp_stacks_thread(s, i);
		if (!th || th->thread != thread)
			th = pp_trace_thread(tr, thread);
		pprof_sample(pp, locs, n, v, th && th->tid ? (int64_t)th->tid : -1, th ? th->name : NULL);
	}
	free(locs);
}

/* ----------------------------------------------------------- samples -- */

static int pp_sym_line(void *ctx, uint64_t addr)
{
	return prof_symtab_line(ctx, addr, NULL);
}

static void pp_sample_types(struct pprof *pp, const struct prof_smodel *m, bool timer, bool alloc)
{
	const char *clock = m->sample_clock == MEMINST_TRACE_SAMPLE_WALL ? "wall" : "cpu";
	if (timer) {
		pprof_sample_type(pp, "samples", "count");
		pprof_sample_type(pp, clock, "nanoseconds");
	}
	if (alloc) {
		pprof_sample_type(pp, "alloc_objects", "count");
		pprof_sample_type(pp, "alloc_space", "bytes");
	}
	pprof_default_type(pp, timer ? clock : "alloc_space");
	if (timer && m->sample_hz)
		pprof_period(pp, clock, "nanoseconds", (int64_t)(1e9 / m->sample_hz + 0.5));
	else if (alloc && m->alloc_mean)
		pprof_period(pp, "space", "bytes", (int64_t)m->alloc_mean);
}

static const struct prof_sthread *pp_sample_thread(const struct prof_smodel *m, uint32_t thread)
{
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].thread == thread)
			return &m->threads[i];
	return NULL;
}

void pprof_from_samples(struct pprof *pp, const struct prof_smodel *m, const struct prof_trace *tr)
{
	bool timer = m->total[PROF_M_SAMPLES] > 0, alloc = m->total[PROF_M_ASAMPLES] > 0;
	pp_sample_types(pp, m, timer, alloc);
	pprof_times(pp, tr->h.t0_realtime_ns, 0);
	pprof_comment(pp, "meminst samples: timer samples and allocation samples per call stack");
	pp_modules(pp, tr);
	const struct prof_cct *at = prof_samples_tree(m->s);
	uint64_t *locs = NULL;
	size_t cap = 0;
	const struct prof_sthread *th = NULL;
	for (uint32_t i = 0; i < at->n; i++) {
		const struct prof_cct_node *nd = &at->nodes[i];
		if (nd->parent == PROF_CCT_NONE || (!nd->self[PROF_M_SAMPLES] && !nd->self[PROF_M_ASAMPLES]))
			continue;
		int64_t v[4];
		size_t k = 0;
		if (timer) {
			v[k++] = pp_round(nd->self[PROF_M_SAMPLES]);
			v[k++] = pp_round(nd->self[PROF_M_TICKS] * m->ns_per_tick);
		}
		if (alloc) {
			v[k++] = pp_round(nd->self[PROF_M_ALLOCS]);
			v[k++] = pp_round(nd->self[PROF_M_BYTES]);
		}
		size_t n = 0;
		for (uint32_t j = i; at->nodes[j].parent != PROF_CCT_NONE; j = at->nodes[j].parent) {
			uint32_t f = m->node_fid[j];
			if (f >= m->nfuncs)
				continue; /* inside a <meminst> frame, or left out */
			const struct prof_func *fn = &m->funcs[f];
			struct pprof_fn pf = {fn->name, fn->file, fn->line};
			bool pseudo = fn->addr <= PROF_FN_PSEUDO_MAX || fn->addr >= PROF_FN_MEMINST;
			uint64_t addr = pseudo ? 0 : at->nodes[j].key;
			pp_grow(&locs, &cap, n);
			locs[n++] = pprof_location(pp, addr, f, &pf, pseudo ? NULL : pp_sym_line, m->st);
		}
		if (!th || th->thread != nd->thread)
			th = pp_sample_thread(m, nd->thread);
		pprof_sample(pp, locs, n, v, th ? th->tid : -1, th ? th->name : NULL);
	}
	free(locs);
}
