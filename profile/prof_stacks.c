/*
** prof_stacks.c — whole call stacks, for folded stacks and flame graphs.
**
** The engine (eng_sim.c) keeps caller->called pairs, which is all fprof's
** analysis needs; a flame graph needs the whole stack of every moment.  So
** the records of an exact trace are simulated a second time here, per
** record (a prof_each_fn), into a stack tree: one node per distinct stack,
** holding the own time spent and the bytes allocated with exactly that
** stack.  Memory follows the distinct stacks, never the events.
**
** The rules are the engine's, so that the sums agree with the profile:
** a function's own time is the time it is on top of the stack; a call of
** `<alloc>` is a child with the allocator's time; a suspension is nobody's
** own time; bytes go to the function that called the allocator, at the
** line it called it from when the trace has the site (PROF_STK_AT).  Calls made
** with an empty stack hang under a placeholder node: a return from a
** function that was never entered (tracing started inside it) turns the
** placeholder into that function, with the empty-stack time as its own, and
** a new placeholder above it becomes its caller.  A placeholder still open
** when its segment ends is the unknown caller: its own time and bytes
** belong to no function (the engine drops them too) and it is left out of
** the paths.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>
#include "meminst-hash.h"

/* Placeholder keys: never code addresses (user space ends below 2^63). */
#define EXP_PH (1ull << 63)

struct exp_frame {
	uint64_t fn;
	uint32_t node;
};

struct prof_stk_thread {
	uint32_t thread;
	bool off, seen;
	uint64_t now, last;
	uint64_t pend[ENG_EV_N]; /* intervals not yet given (eng_sim's)    */
	int prev;                /* the last event's kind (eng_ev_interval)  */
	uint32_t ph, nph;        /* the current placeholder, placeholders made */
	uint32_t last_alloc;     /* the <alloc> node of the last ALLOC, or 0 */
	double last_time, last_bytes; /* what that ALLOC gave it, its caller */
	bool at_whole;           /* this ALLOC_AT record has its site word    */
	struct exp_frame *stack;
	size_t depth, cap;
};

static void stk_oom(void)
{
	fputs("inspect: out of memory\n", stderr);
	exit(RD_EXIT_DB);
}

static uint32_t stk_child_of(struct eng_cct *t, uint32_t parent, uint64_t key)
{
	uint32_t i;
	if (eng_cct_child(t, parent, key, &i) != ENG_OK)
		stk_oom();
	return i;
}

static uint32_t stk_child(struct prof_stacks *s, uint32_t parent, uint64_t key)
{
	return stk_child_of(&s->t, parent, key);
}

void prof_stacks_init(struct prof_stacks *s)
{
	memset(s, 0, sizeof *s);
	eng_cct_init(&s->t, &prof_libc_allocator);
	stk_child(s, ENG_CCT_NONE, 0); /* the root: node 0 */
}

void prof_stacks_free(struct prof_stacks *s)
{
	for (size_t i = 0; i < s->nthr; i++)
		free(s->thr[i].stack);
	free(s->thr);
	free(s->fid);
	free(s->funcs);
	free(s->alloc_cnt);
	free(s->ev);
	free(s->at_of);
	free(s->at);
	eng_cct_free(&s->t);
	rd_pool_free(&s->pool);
	memset(s, 0, sizeof *s);
}

/* --------------------------------------------------------- simulation -- */

static struct prof_stk_thread *stk_thread(struct prof_stacks *s, uint32_t thread)
{
	size_t *last = &s->last_thr; /* records come a chunk (one thread) at a time */
	if (*last < s->nthr && s->thr[*last].thread == thread)
		return &s->thr[*last];
	for (*last = 0; *last < s->nthr; ++*last)
		if (s->thr[*last].thread == thread)
			return &s->thr[*last];
	s->thr = rd_xrealloc(s->thr, (s->nthr + 1) * sizeof *s->thr);
	struct prof_stk_thread *t = &s->thr[s->nthr++];
	*t = (struct prof_stk_thread){.thread = thread, .off = true};
	return t;
}

static uint32_t stk_top(const struct prof_stk_thread *t)
{
	return t->depth ? t->stack[t->depth - 1].node : t->ph;
}

/* An array of *cap items of size bytes by node, grown (zeroed) to hold i. */
static void *stk_grow(void *a, size_t *cap, uint32_t i, size_t size)
{
	if (i >= *cap) {
		size_t n = 2 * (size_t)i + 64;
		a = rd_xrealloc(a, n * size);
		memset((char *)a + *cap * size, 0, (n - *cap) * size);
		*cap = n;
	}
	return a;
}

/* The node's intervals (eng_evs), the array grown to hold it. */
static uint64_t *stk_ev(struct prof_stacks *s, uint32_t node)
{
	s->ev = stk_grow(s->ev, &s->ev_cap, node, sizeof *s->ev);
	return s->ev[node];
}

static uint64_t stk_advance(struct prof_stacks *s, struct prof_stk_thread *t, uint64_t ts)
{
	if (ts < t->now)
		return t->now;
	if (!t->off) {
		s->t.nodes[stk_top(t)].self[PROF_STK_TIME] += (double)(ts - t->now);
		eng_ev_add(stk_ev(s, stk_top(t)), t->pend);
	}
	memset(t->pend, 0, sizeof t->pend);
	t->now = ts;
	return ts;
}

static uint32_t stk_new_ph(struct prof_stacks *s, struct prof_stk_thread *t)
{
	return stk_child(s, 0, EXP_PH | (uint64_t)t->thread << 32 | t->nph++);
}

static void stk_open(struct prof_stacks *s, struct prof_stk_thread *t, uint64_t ts)
{
	t->off = false;
	t->now = ts;
	t->ph = stk_new_ph(s, t);
	t->depth = 0;
	t->prev = -1;
}

static void stk_close(struct prof_stacks *s, struct prof_stk_thread *t)
{
	t->depth = 0;
	if (!t->off) { /* the unknown caller's */
		s->t.nodes[t->ph].self[PROF_STK_TIME] = 0;
		memset(stk_ev(s, t->ph), 0, sizeof *s->ev);
	}
	t->off = true;
}

/* Add the sums of the subtree at src to the one at dst, and clear src. */
static void stk_move(struct prof_stacks *s, uint32_t src, uint32_t dst)
{
	stk_ev(s, src > dst ? src : dst); /* grown once: no pointer kept across */
	eng_ev_add(s->ev[dst], s->ev[src]);
	memset(s->ev[src], 0, sizeof *s->ev);
	for (int m = 0; m < PROF_STK_N; m++) {
		s->t.nodes[dst].self[m] += s->t.nodes[src].self[m];
		s->t.nodes[src].self[m] = 0;
	}
	for (uint32_t c = s->t.nodes[src].child; c != ENG_CCT_NONE; c = s->t.nodes[c].next)
		stk_move(s, c, stk_child(s, dst, s->t.nodes[c].key));
}

static void stk_call(struct prof_stacks *s, struct prof_stk_thread *t, uint64_t fn)
{
	uint32_t node = stk_child(s, stk_top(t), fn);
	if (t->depth == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->stack = rd_xrealloc(t->stack, t->cap * sizeof *t->stack);
	}
	t->stack[t->depth++] = (struct exp_frame){fn, node};
	s->calls++;
}

static void stk_return(struct prof_stacks *s, struct prof_stk_thread *t, uint64_t fn)
{
	for (size_t i = t->depth; i-- > 0;)
		if (t->stack[i].fn == fn) {
			t->depth = i; /* the frames above it were skipped (longjmp) */
			return;
		}
	/* entered before tracing started: the placeholder was fn */
	t->depth = 0;
	uint32_t ph = stk_new_ph(s, t);
	uint32_t f = stk_child(s, ph, fn);
	stk_move(s, t->ph, f);
	t->ph = ph;
}

/* The ALLOC records counted at <alloc> node a, the array grown to hold it. */
static uint64_t *stk_alloc_cnt(struct prof_stacks *s, uint32_t a)
{
	s->alloc_cnt = stk_grow(s->alloc_cnt, &s->alloc_cap, a, sizeof *s->alloc_cnt);
	return &s->alloc_cnt[a];
}

/* SUSPEND and ALLOC, as the engine's sim_pseudo. */
static void stk_pseudo(struct prof_stacks *s, struct prof_stk_thread *t, const uint64_t *r, bool alloc)
{
	uint64_t begin = MEMINST_TREC_TIME(r[0]), end = r[1];
	uint64_t from = stk_advance(s, t, begin);
	if (end < begin)
		end = begin;
	if (alloc) {
		unsigned op = r[2] & 0xff;
		uint32_t a = stk_child(s, stk_top(t), ENG_FN_ALLOC);
		t->last_time = end > from ? (double)(end - from) : 0;
		s->t.nodes[a].self[PROF_STK_TIME] += t->last_time;
		++*stk_alloc_cnt(s, a);
		t->last_alloc = a;
		t->last_bytes = -1;
		if (t->depth && op != 0 && op != MEMINST_TALLOC_FREE && op != MEMINST_TALLOC_DELETE) {
			t->last_bytes = (double)(r[2] >> 8);
			s->t.nodes[stk_top(t)].self[PROF_STK_BYTES] += t->last_bytes;
			s->t.nodes[stk_top(t)].self[PROF_STK_ALLOCS]++;
		}
	} else if (eng_own_pause_fn(r[2]) && end > from) { /* <trace-wait>, <snapshot>: their own time */
		s->t.nodes[stk_child(s, stk_top(t), eng_own_pause_fn(r[2]))].self[PROF_STK_TIME] += (double)(end - from);
	}
	if (end > t->now)
		t->now = end;
}

static void stk_act(struct prof_stacks *s, struct prof_stk_thread *t, const uint64_t *r, unsigned kind, uint64_t ts);

/* The last ALLOC (its time, its count unless measured, its bytes) moved
** from under its caller to under the caller at the call's site. */
static void stk_alloc_at_site(struct prof_stacks *s, struct prof_stk_thread *t, uint64_t site, bool counted)
{
	uint32_t top = stk_top(t), a = t->last_alloc;
	uint32_t at = stk_child(s, top, PROF_STK_AT | site), a2 = stk_child(s, at, ENG_FN_ALLOC);
	struct eng_cct_node *nd = s->t.nodes; /* after the children are made */
	nd[a].self[PROF_STK_TIME] -= t->last_time;
	nd[a2].self[PROF_STK_TIME] += t->last_time;
	if (counted)
		--*stk_alloc_cnt(s, a), ++*stk_alloc_cnt(s, a2);
	if (t->last_bytes >= 0) {
		nd[top].self[PROF_STK_BYTES] -= t->last_bytes, nd[top].self[PROF_STK_ALLOCS]--;
		nd[at].self[PROF_STK_BYTES] += t->last_bytes, nd[at].self[PROF_STK_ALLOCS]++;
	}
}

static void stk_event(struct prof_stacks *s, struct prof_stk_thread *t, const uint64_t *r)
{
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t ts = MEMINST_TREC_TIME(r[0]);
	if (t->off && (kind == MEMINST_TREC_CALL || kind == MEMINST_TREC_RETURN ||
		       kind == MEMINST_TREC_THREAD_START || kind == MEMINST_TREC_TRACE_ON ||
		       kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC))
		stk_open(s, t, ts > t->now ? ts : t->now);
	eng_ev_interval(&t->prev, kind, t->pend); /* as the engine's sim_interval */
	stk_act(s, t, r, kind, ts);
}

static void stk_act(struct prof_stacks *s, struct prof_stk_thread *t, const uint64_t *r, unsigned kind, uint64_t ts)
{
	switch (kind) {
	case MEMINST_TREC_CALL:
		stk_advance(s, t, ts);
		stk_call(s, t, r[1]);
		break;
	case MEMINST_TREC_RETURN:
		stk_advance(s, t, ts);
		stk_return(s, t, r[1]);
		break;
	case MEMINST_TREC_THREAD_EXIT:
	case MEMINST_TREC_TRACE_OFF:
		stk_advance(s, t, ts);
		stk_close(s, t);
		break;
	case MEMINST_TREC_SUSPEND:
	case MEMINST_TREC_ALLOC:
		stk_pseudo(s, t, r, kind == MEMINST_TREC_ALLOC);
		break;
	case MEMINST_TREC_ALLOC_AT: {
		/* A call whose allocator time was measured: analyse moves meminst's
		** work, the stamps' included, to <meminst> (eng_sim.c's sim_alloc_at)
		** instead of taking the stamps' calibrated cost off.  The exports
		** keep <alloc> whole, so it keeps that cost too: the stacks' total
		** stays analyse's own plus kept-out time. */
		uint64_t mi_ticks, site = t->at_whole ? meminst_trec_at_site(r) : 0;
		bool measured = t->at_whole && meminst_trec_at_meminst(r, &mi_ticks);
		if (t->last_alloc && measured)
			s->alloc_cnt[t->last_alloc]--;
		if (t->last_alloc && site && t->depth && !(site & (PROF_STK_AT | EXP_PH)))
			stk_alloc_at_site(s, t, site, !measured);
		t->last_alloc = 0;
		stk_advance(s, t, ts);
		break;
	}
	case MEMINST_TREC_THREAD_START:
	case MEMINST_TREC_LOST:
	case MEMINST_TREC_PROF_PAIR:
		break;
	default:
		stk_advance(s, t, ts);
	}
}

void prof_stacks_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread, unsigned stream,
		       const uint64_t *r, size_t n)
{
	(void)h, (void)n;
	if (stream != MEMINST_TRACE_STREAM_EVENTS)
		return;
	struct prof_stacks *s = ctx;
	if (MEMINST_TREC_KIND(r[0]) == MEMINST_TREC_TRACE_COST && n >= 4)
		s->alloc_ps = r[3];
	struct prof_stk_thread *t = stk_thread(s, thread);
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t b = MEMINST_TREC_TIME(r[0]);
	if ((kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC) && r[1] > b)
		b = r[1];
	if (!t->seen || b > t->last)
		t->last = b;
	t->seen = true;
	t->at_whole = n >= 4;
	stk_event(s, t, r);
}

/* ------------------------------------------------------------ results -- */

/* Inclusive sums (children come after their parents in the array). */
static void stk_totals(struct prof_stacks *s)
{
	struct eng_cct_node *nd = s->t.nodes;
	for (size_t i = 0; i < s->t.n; i++)
		for (int m = 0; m < PROF_STK_N; m++)
			nd[i].total[m] = nd[i].self[m];
	for (size_t i = s->t.n; i-- > 1;)
		for (int m = 0; m < PROF_STK_N; m++)
			nd[nd[i].parent].total[m] += nd[i].total[m];
	for (int m = 0; m < PROF_STK_N; m++)
		s->total[m] = nd[0].total[m];
}

/* The lines of the PROF_STK_AT nodes (after the functions: fid[]). */
static void stk_at_lines(struct prof_stacks *s, prof_symtab_t *st)
{
	s->at_of = rd_xcalloc(s->t.n + 1, sizeof *s->at_of);
	size_t cap = 0;
	for (size_t i = 0; i < s->t.n; i++) {
		const struct eng_cct_node *nd = &s->t.nodes[i];
		s->at_of[i] = UINT32_MAX;
		if (i == 0 || (nd->key & (EXP_PH | PROF_STK_AT)) != PROF_STK_AT)
			continue;
		const char *file = NULL, *fn = prof_stacks_label(s, nd->parent);
		uint64_t site = nd->key & ~PROF_STK_AT;
		int line = fn ? prof_site_line(st, s->t.nodes[nd->parent].key, site, &file) : 0;
		if (!line || !file)
			continue; /* not in the caller's code: the caller's, as without a site */
		if (s->nat == cap) {
			cap = cap ? 2 * cap : 16;
			s->at = rd_xrealloc(s->at, cap * sizeof *s->at);
		}
		const char *base = strrchr(file, '/');
		s->at[s->at_of[i] = (uint32_t)s->nat++] = (struct prof_stk_at){
			site, rd_pool_str(&s->pool, file), line,
			rd_pool_fmt(&s->pool, "%s at %s:%d", fn, base ? base + 1 : file, line)};
	}
}

const struct prof_stk_at *prof_stacks_at(const struct prof_stacks *s, uint32_t i)
{
	return s->at_of && i < s->t.n && s->at_of[i] != UINT32_MAX ? &s->at[s->at_of[i]] : NULL;
}

void prof_stacks_finish(struct prof_stacks *s, struct prof_trace *tr, const struct rd_opts *o,
		       bool no_files)
{
	for (size_t i = 0; i < s->nthr; i++) {
		struct prof_stk_thread *t = &s->thr[i];
		if (!t->off)
			stk_advance(s, t, t->last > t->now ? t->last : t->now);
		stk_close(s, t);
	}
	double ns = prof_ns_per_tick(tr);
	prof_calibration(tr, &s->cost);
	prof_symtab_t *st = prof_symtab_new(tr, o, no_files, &s->pool);
	s->fid = rd_xcalloc(s->t.n + 1, sizeof *s->fid);
	for (size_t i = 0; i < s->t.n; i++) {
		struct eng_cct_node *nd = &s->t.nodes[i];
		nd->self[PROF_STK_TIME] = (double)(uint64_t)(nd->self[PROF_STK_TIME] * ns + 0.5);
		if (i < s->ev_cap) {
			double raw = nd->self[PROF_STK_TIME];
			nd->self[PROF_STK_TIME] = (double)prof_comp_ns(&s->cost, (int64_t)raw, s->ev[i], NULL);
			s->taken_ns += raw - nd->self[PROF_STK_TIME];
		}
		if (i < s->alloc_cap && s->alloc_cnt[i] && s->alloc_ps) { /* as prof_model.c's model_cost */
			double d = (double)(int64_t)((double)s->alloc_cnt[i] * (double)s->alloc_ps / 1000.0 + 0.5);
			nd->self[PROF_STK_TIME] = d < nd->self[PROF_STK_TIME] ? nd->self[PROF_STK_TIME] - d : 0;
		}
		s->fid[i] = i == 0 || (nd->key & (EXP_PH | PROF_STK_AT)) ? UINT32_MAX : prof_symtab_index(st, nd->key);
	}
	const struct prof_func *f = prof_symtab_funcs(st, &s->nfuncs);
	s->funcs = rd_xcalloc(s->nfuncs + 1, sizeof *s->funcs);
	memcpy(s->funcs, f, s->nfuncs * sizeof *f);
	stk_at_lines(s, st);
	prof_symtab_free(st);
	stk_totals(s);
}

/* The function tree of the samples, each node's function expanded into
** the chain of functions inlined at its address (prof_inline.c); node keys
** are function ids. */
void prof_stacks_from_samples(struct prof_stacks *s, const struct prof_smodel *m)
{
	struct prof_inline x;
	prof_inline_init(&x, m);
	prof_inline_fold(&x);
	const struct eng_cct *ft = &x.ft;
	uint32_t *map = rd_xcalloc(ft->n + 1, sizeof *map);
	for (size_t i = 0; i < ft->n; i++) {
		const struct eng_cct_node *nd = &ft->nodes[i];
		if (nd->parent == ENG_CCT_NONE) { /* one root: the threads merged */
			map[i] = 0;
			continue;
		}
		const struct prof_inl_frame *fr;
		struct prof_inl_frame one;
		size_t n = prof_inline_fold_frames(&x, (uint32_t)nd->key, &fr, &one);
		uint32_t k = map[nd->parent];
		for (size_t j = 0; j < n; j++)
			k = stk_child(s, k, fr[j].fn);
		map[i] = k;
		s->t.nodes[k].self[PROF_STK_TIME] += (double)(uint64_t)(nd->self[ENG_M_TICKS] * m->ns_per_tick + 0.5);
		s->t.nodes[k].self[PROF_STK_BYTES] += (double)(uint64_t)(nd->self[ENG_M_BYTES] + 0.5);
	}
	free(map);
	free(s->fid);
	s->fid = rd_xcalloc(s->t.n + 1, sizeof *s->fid);
	s->fid[0] = UINT32_MAX;
	for (size_t k = 1; k < s->t.n; k++)
		s->fid[k] = (uint32_t)s->t.nodes[k].key;
	s->nfuncs = x.nfuncs;
	s->funcs = rd_xcalloc(s->nfuncs + 1, sizeof *s->funcs);
	memcpy(s->funcs, x.funcs, s->nfuncs * sizeof *s->funcs);
	for (size_t f = m->nfuncs; f < s->nfuncs; f++) { /* the inlined ones' names are x's */
		s->funcs[f].name = rd_pool_str(&s->pool, s->funcs[f].name);
		s->funcs[f].file = s->funcs[f].file ? rd_pool_str(&s->pool, s->funcs[f].file) : NULL;
	}
	prof_inline_free(&x);
	stk_totals(s);
}

uint32_t prof_stacks_thread(const struct prof_stacks *s, uint32_t i)
{
	while (i && s->t.nodes[i].parent != 0)
		i = s->t.nodes[i].parent;
	uint64_t k = i ? s->t.nodes[i].key : 0;
	return k & EXP_PH ? (uint32_t)(k >> 32 & 0x7fffffff) : 0;
}

const char *prof_stacks_label(const struct prof_stacks *s, uint32_t i)
{
	uint32_t f = s->fid ? s->fid[i] : UINT32_MAX;
	return f < s->nfuncs ? s->funcs[f].name : NULL;
}

/* -------------------------------------------------------------- paths -- */

/*
** The stacks by their names: a tree keyed by function ids from the root,
** so that stacks that differ only in nodes left out of paths (the unknown
** callers, one per thread) are one, and deep recursion costs a node per
** level, not a copy of the whole stack per level (200,000 levels were
** quadratic).  Frames beyond PROF_STK_MAX_DEPTH are cut: a deeper stack is
** its outermost PROF_STK_MAX_DEPTH frames, a frame [truncated] and its innermost
** function, which keeps its own figures (a flat profile stays true).
*/
/* Each function's first function of the same name (folded stacks are
** text: two functions named alike are one frame). */
static uint32_t *paths_by_name(const struct prof_stacks *s)
{
	uint32_t *canon = rd_xcalloc(s->nfuncs + 1, sizeof *canon);
	struct eng_cct names; /* roots keyed by a hash of the name, children by id */
	eng_cct_init(&names, &prof_libc_allocator);
	for (size_t f = 0; f < s->nfuncs; f++) {
		uint64_t h = meminst_fnv_str(MEMINST_FNV_START, s->funcs[f].name);
		uint32_t r = stk_child_of(&names, ENG_CCT_NONE, h), c;
		for (c = names.nodes[r].child; c != ENG_CCT_NONE; c = names.nodes[c].next)
			if (!strcmp(s->funcs[names.nodes[c].key].name, s->funcs[f].name))
				break;
		canon[f] = c != ENG_CCT_NONE ? (uint32_t)names.nodes[c].key : (uint32_t)f;
		if (c == ENG_CCT_NONE)
			stk_child_of(&names, r, f);
	}
	eng_cct_free(&names);
	return canon;
}

void prof_paths_build(struct prof_paths *p, const struct prof_stacks *s, bool by_thread, bool by_name,
		      bool at_lines)
{
	memset(p, 0, sizeof *p);
	eng_cct_init(&p->t, &prof_libc_allocator);
	p->truncated = (uint32_t)s->nfuncs;
	uint32_t *canon = by_name ? paths_by_name(s) : NULL;
	size_t n = s->t.n;
	/* base: the tree node the node's callees hang under (past the cut: the
	** [truncated] frame), depth: the frames down to it */
	uint32_t *base = rd_xcalloc(n + 1, sizeof *base), *depth = rd_xcalloc(n + 1, sizeof *depth);
	uint32_t *thread = rd_xcalloc(n + 1, sizeof *thread);
	for (size_t i = 1; i < n; i++) { /* parents come before their children */
		const struct eng_cct_node *nd = &s->t.nodes[i];
		uint32_t up = nd->parent;
		thread[i] = up ? thread[up] : nd->key & EXP_PH ? (uint32_t)(nd->key >> 32 & 0x7fffffff) : 0;
		uint32_t at = up ? base[up] : ENG_CCT_NONE, d = up ? depth[up] : 0;
		if (at == ENG_CCT_NONE && eng_cct_child(&p->t, ENG_CCT_NONE, by_thread ? thread[i] : 0, &at))
			stk_oom();
		uint32_t f = s->fid[i], own = at; /* (a node left out of paths: its parent's) */
		if (canon && f < s->nfuncs)
			f = canon[f];
		if (at_lines && prof_stacks_at(s, (uint32_t)i) && d <= PROF_STK_MAX_DEPTH) {
			if (eng_cct_child(&p->t, at, PROF_STK_AT | i, &at))
				stk_oom();
			own = at;
		} else if (f < s->nfuncs && d < PROF_STK_MAX_DEPTH) {
			if (eng_cct_child(&p->t, at, f, &at))
				stk_oom();
			own = at, d++;
		} else if (f < s->nfuncs) {
			if ((d == PROF_STK_MAX_DEPTH && eng_cct_child(&p->t, at, p->truncated, &at)) ||
			    eng_cct_child(&p->t, at, f, &own))
				stk_oom();
			d = PROF_STK_MAX_DEPTH + 1;
		}
		base[i] = at, depth[i] = d;
		for (int m = 0; m < PROF_STK_N; m++)
			p->t.nodes[own].self[m] += nd->self[m];
	}
	free(base);
	free(depth);
	free(thread);
	free(canon);
}

void prof_paths_free(struct prof_paths *p)
{
	eng_cct_free(&p->t);
}

const char *prof_paths_label(const struct prof_paths *p, const struct prof_stacks *s, uint32_t i)
{
	uint64_t k = p->t.nodes[i].key;
	return k == p->truncated ? "[truncated]" : k & PROF_STK_AT ? NULL : s->funcs[k].name;
}
