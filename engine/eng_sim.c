/*
** eng_sim.c — the call-stack simulation engine (see eng_sim.h for the
** rules).  No stdio, no libc allocation: this file is meant to be built
** into libmeminst as well.
**
** Time is charged lazily: every event first gives the time since the
** previous one (t - now) to the function on top of the stack (its OWN), or
** to root_own when the stack is empty, then acts.  A frame's ACC is its
** span, charged when it is popped and only if it was the outermost instance
** of its function.  Time stamps that go backwards are taken as `now`.
**
** The event loop, its pseudo-frames and ALLOC_AT's <meminst> share are
** one state machine, and splitting it across files changed the hot loop's
** code (session 10's measurement): the rows and their hash tables, which
** the loop calls on every event, are in eng_sim_rows.h, included below
** as part of this file, so they are compiled here as before.
*/
#define ENG_SIM_C
#include "eng_sim.h"

#include <string.h>

#include "meminst-trace.h"

static const uint8_t sim_fixed_words[] = MEMINST_TREC_WORDS_INIT;

#include "eng_sim_rows.h" /* the rows and their tables: here, in this file's code */

/* --------------------------------------------------------------- time -- */

/* Give the time up to t to the top of the stack, with the tracer's half
** events in it; returns the time used (never before `now`). */
static uint64_t sim_advance(struct eng_thread *t, uint64_t ts)
{
	if (ts < t->now)
		return t->now;
	if (!t->off) {
		uint64_t *ev = t->root_ev;
		if (t->depth)
			t->stack[t->depth - 1].own += ts - t->now, ev = t->stack[t->depth - 1].own_ev;
		else
			t->root_own += ts - t->now;
		eng_ev_add(ev, t->ev_pend);
	}
	memset(t->ev_pend, 0, sizeof t->ev_pend);
	t->now = ts;
	return ts;
}

/* The interval that ends at an event of this kind (eng_evs). */
static void sim_interval(struct eng_thread *t, unsigned kind)
{
	uint64_t add[ENG_EV_N] = {0};
	eng_ev_interval(&t->ev_prev, kind, add);
	eng_ev_add(t->ev_cum, add);
	eng_ev_add(t->ev_pend, add);
}

static void sim_charge(struct eng_thread *t, uint32_t pair, uint64_t cnt, uint64_t acc, uint64_t own)
{
	struct eng_pair_row *p = &t->pairs[pair];
	struct eng_fn_row *f = &t->fns[p->called];
	p->cnt += cnt, p->acc += acc, p->own += own;
	f->cnt += cnt, f->acc += acc, f->own += own;
}

static void sim_charge_ev(struct eng_thread *t, uint32_t pair, const struct eng_evs *e)
{
	eng_evs_add(&t->pairs[pair].ev, e);
	eng_evs_add(&t->fns[t->pairs[pair].called].ev, e);
}

static void sim_mem_add(struct eng_mem *to, const struct eng_mem *m)
{
	to->own_bytes += m->own_bytes, to->own_blocks += m->own_blocks;
	to->acc_bytes += m->acc_bytes, to->acc_blocks += m->acc_blocks;
}

/* Memory to a pair and to its called function. */
static void sim_charge_mem(struct eng_thread *t, uint32_t pair, const struct eng_mem *m)
{
	struct eng_pair_row *p = &t->pairs[pair];
	sim_mem_add(&p->mem, m);
	sim_mem_add(&t->fns[p->called].mem, m);
}

static void sim_pop(struct eng_thread *t, uint64_t ts)
{
	struct eng_frame *fr = &t->stack[--t->depth];
	struct eng_fn_row *f = &t->fns[fr->fn];
	f->active--;
	sim_charge(t, fr->pair, 0, fr->outermost ? ts - fr->start : 0, fr->own);
	struct eng_mem m = {fr->own_bytes, fr->own_blocks, 0, 0};
	if (fr->outermost)
		m.acc_bytes = t->alloc_bytes - fr->bytes0, m.acc_blocks = t->alloc_blocks - fr->blocks0;
	sim_charge_mem(t, fr->pair, &m);
	struct eng_evs e = {{0}, {0}};
	eng_ev_add(e.own, fr->own_ev);
	for (int k = 0; fr->outermost && k < ENG_EV_N; k++)
		e.acc[k] = t->ev_cum[k] - fr->ev0[k];
	sim_charge_ev(t, fr->pair, &e);
	struct eng_mi mi = {fr->outermost ? t->mi_calls - fr->mi_calls0 : 0, 0, fr->outermost ? t->mi_cum - fr->mi0 : 0};
	sim_mi_add(&t->pairs[fr->pair].mi, &mi);
	sim_mi_add(&f->mi, &mi);
	if (fr->site) {
		struct eng_site_row *r = &t->sites[fr->site - 1];
		r->acc += fr->outermost ? ts - fr->start : 0;
		r->acc_bytes += m.acc_bytes, r->acc_blocks += m.acc_blocks;
		eng_ev_add(r->acc_ev, e.acc);
		sim_mi_add(&r->mi, &mi);
	}
}

/* The caller index for a new call: the top frame's function, or PENDING. */
static uint32_t sim_caller(const struct eng_thread *t)
{
	return t->depth ? t->stack[t->depth - 1].fn : t->pend_idx;
}

/* A pair with caller PENDING is listed to be settled later. */
static enum eng_err sim_note_pending(struct eng_sim *s, struct eng_thread *t, uint32_t pair)
{
	struct eng_pair_row *p = &t->pairs[pair];
	if (p->caller != t->pend_idx || p->pending)
		return ENG_OK;
	uint32_t *v = sim_grow(s, t->pending, &t->pending_cap, sizeof *v, t->npending + 1);
	if (!v)
		return ENG_E_NOMEM;
	t->pending = v;
	v[t->npending++] = pair;
	t->pairs[pair].pending = true;
	return ENG_OK;
}

/* The calls made from the empty stack were made by `caller`. */
static enum eng_err sim_settle(struct eng_sim *s, struct eng_thread *t, uint32_t caller)
{
	for (size_t i = 0; i < t->npending; i++) {
		struct eng_pair_row *p = &t->pairs[t->pending[i]];
		uint32_t called = p->called;
		uint64_t cnt = p->cnt, acc = p->acc, own = p->own;
		struct eng_mem mem = p->mem;
		struct eng_evs ev = p->ev;
		struct eng_mi mi = p->mi;
		p->cnt = p->acc = p->own = 0;
		p->mem = (struct eng_mem){0};
		p->ev = (struct eng_evs){0};
		p->mi = (struct eng_mi){0};
		p->pending = false;
		uint32_t q = sim_pair(s, t, caller, called);
		if (q == UINT32_MAX)
			return ENG_E_NOMEM;
		t->pairs[q].cnt += cnt, t->pairs[q].acc += acc, t->pairs[q].own += own;
		sim_mem_add(&t->pairs[q].mem, &mem);
		eng_evs_add(&t->pairs[q].ev, &ev);
		sim_mi_add(&t->pairs[q].mi, &mi);
	}
	t->npending = 0;
	return sim_settle_sites(s, t, caller);
}

/* Close the segment at ts: pop everything, settle the untraced callers. */
static enum eng_err sim_close(struct eng_sim *s, struct eng_thread *t, uint64_t ts)
{
	while (t->depth)
		sim_pop(t, ts);
	t->root_own = 0;
	memset(t->root_ev, 0, sizeof t->root_ev);
	t->off = true;
	return sim_settle(s, t, t->undef_idx);
}

static void sim_open(struct eng_thread *t, uint64_t ts)
{
	t->off = false;
	t->now = t->seg_start = ts;
	t->root_own = 0;
	memset(t->root_ev, 0, sizeof t->root_ev);
	memcpy(t->seg_ev0, t->ev_cum, sizeof t->seg_ev0);
	t->ev_prev = -1;
	t->seg++;
}

/* ------------------------------------------------------------- events -- */

static enum eng_err sim_call(struct eng_sim *s, struct eng_thread *t, uint64_t fn, uint64_t site,
			      uint64_t ts)
{
	uint32_t caller = sim_caller(t);
	uint32_t f = sim_fn(s, t, fn);
	if (f == UINT32_MAX)
		return ENG_E_NOMEM;
	uint32_t p = sim_pair(s, t, caller, f);
	if (p == UINT32_MAX)
		return ENG_E_NOMEM;
	if (caller == t->pend_idx && sim_note_pending(s, t, p))
		return ENG_E_NOMEM;
	struct eng_frame *st = sim_grow(s, t->stack, &t->stack_cap, sizeof *st, t->depth + 1);
	if (!st)
		return ENG_E_NOMEM;
	t->stack = st;
	uint32_t sr = UINT32_MAX;
	if (site && s->keep_sites) {
		if ((sr = sim_site(s, t, p, site)) == UINT32_MAX ||
		    (caller == t->pend_idx && sim_note_pending_site(s, t, sr)))
			return ENG_E_NOMEM;
		t->sites[sr].cnt++;
	}
	struct eng_fn_row *row = &t->fns[f];
	st[t->depth++] = (struct eng_frame){.fn = f, .pair = p, .site = sr + 1, .start = ts,
					     .bytes0 = t->alloc_bytes, .blocks0 = t->alloc_blocks,
					     .mi0 = t->mi_cum, .mi_calls0 = t->mi_calls, .outermost = row->active == 0};
	memcpy(st[t->depth - 1].ev0, t->ev_cum, sizeof t->ev_cum);
	row->active++;
	t->pairs[p].cnt++;
	row->cnt++;
	t->calls++;
	return ENG_OK;
}

/* A return from a function never entered in this segment (see the
** header): it ran from the segment's start, with the empty stack as its
** own time, and made the calls made from the empty stack. */
static enum eng_err sim_untraced_return(struct eng_sim *s, struct eng_thread *t, uint64_t fn,
					 uint64_t ts)
{
	while (t->depth)
		sim_pop(t, ts);
	uint32_t f = sim_fn(s, t, fn);
	if (f == UINT32_MAX || sim_settle(s, t, f))
		return ENG_E_NOMEM;
	uint32_t p = sim_pair(s, t, t->pend_idx, f);
	if (p == UINT32_MAX || sim_note_pending(s, t, p))
		return ENG_E_NOMEM;
	struct eng_fn_row *row = &t->fns[f];
	uint64_t acc = ts - t->seg_start;
	struct eng_evs e = {{0}, {0}};
	eng_ev_add(e.own, t->root_ev);
	for (int k = 0; k < ENG_EV_N; k++)
		e.acc[k] = t->ev_cum[k] - t->seg_ev0[k];
	/* an untraced function returning twice: recursion, the outer one counts
	** (its ACC's half events: counted again, a small excess of compensation) */
	if (row->seg == t->seg)
		row->acc -= row->seg_acc;
	row->seg = t->seg;
	row->seg_acc = acc;
	sim_charge(t, p, 0, acc, t->root_own);
	sim_charge_ev(t, p, &e);
	t->root_own = 0;
	t->root_ev[0] = t->root_ev[1] = 0;
	t->untraced++;
	return ENG_OK;
}

static enum eng_err sim_return(struct eng_sim *s, struct eng_thread *t, uint64_t fn, uint64_t ts)
{
	if (t->depth && t->fns[t->stack[t->depth - 1].fn].fn == fn) {
		sim_pop(t, ts);
		return ENG_OK;
	}
	/* lower in the stack: the frames above were skipped (longjmp, throw) */
	for (size_t i = t->depth; i-- > 0;) {
		if (t->fns[t->stack[i].fn].fn == fn) {
			while (t->depth > i)
				sim_pop(t, ts);
			return ENG_OK;
		}
	}
	return sim_untraced_return(s, t, fn, ts);
}

/* An ALLOC record's memory: op | size << 8 (MEMINST_TALLOC_*).  Frees
** release memory; they are not allocations. */
static void sim_alloc_bytes(struct eng_thread *t, uint32_t pair, uint64_t word)
{
	unsigned op = word & 0xff;
	uint64_t size = word >> 8;
	if (op == MEMINST_TALLOC_FREE || op == MEMINST_TALLOC_DELETE || op == 0)
		return;
	t->alloc_bytes += size;
	t->alloc_blocks++;
	if (t->depth) {
		struct eng_frame *top = &t->stack[t->depth - 1];
		top->own_bytes += size;
		top->own_blocks++;
	} else {
		t->root_bytes += size;
		t->root_blocks++;
	}
	struct eng_mem m = {size, 1, size, 1}; /* <alloc>: OWN = ACC */
	sim_charge_mem(t, pair, &m);
}

/* The pair (top of the stack -> the pseudo function fn), or UINT32_MAX
** when memory ran out. */
static uint32_t sim_top_pair(struct eng_sim *s, struct eng_thread *t, uint64_t fn)
{
	uint32_t caller = sim_caller(t);
	uint32_t f = sim_fn(s, t, fn);
	if (f == UINT32_MAX)
		return UINT32_MAX;
	uint32_t p = sim_pair(s, t, caller, f);
	if (p == UINT32_MAX || (caller == t->pend_idx && sim_note_pending(s, t, p)))
		return UINT32_MAX;
	return p;
}

/* Take back from the top frame's OWN the time sim_advance gave it from
** `span` ago up to now, less `paused` (a pause inside: nobody's OWN);
** returns it. */
static uint64_t sim_take_back(struct eng_thread *t, uint64_t span, uint64_t paused)
{
	uint64_t d = span > paused ? span - paused : 0, *own = t->depth ? &t->stack[t->depth - 1].own : &t->root_own;
	d = d < *own ? d : *own;
	*own -= d;
	return d;
}

/* SUSPEND and ALLOC: a call of a pseudo function from the top of the stack
** from begin to end (for ALLOC, alloc_word is the record's op | size). */
static enum eng_err sim_pseudo(struct eng_sim *s, struct eng_thread *t, uint64_t pseudo,
				uint64_t begin, uint64_t end, uint64_t alloc_word)
{
	uint64_t from = sim_advance(t, begin);
	if (end < begin)
		end = begin;
	uint32_t p = sim_top_pair(s, t, pseudo);
	if (p == UINT32_MAX)
		return ENG_E_NOMEM;
	/* meminst's own pauses inside the interval (a peak snapshot taken by
	** this allocation, a wait for a capture or for the writer) are not its
	** time at all: out of ACC too (those before the last call or return, a
	** <preempted> among them, are not inside it: sim_event_act forgets them) */
	uint64_t paused = t->pause_sum && t->pause_from >= begin ? t->pause_sum : 0;
	uint64_t acc = end - begin > paused ? end - begin - paused : 0;
	t->pause_sum = 0;
	uint64_t own = 0;
	if (pseudo == ENG_FN_ALLOC) {
		own = end > from ? end - from : 0;
		/* records inside the call came first (a flush's CLOCK, its
		** <trace-wait>): the time from the call's start up to them, less
		** the pauses, went to the frame below; it is the allocator's */
		own += sim_take_back(t, from > begin ? from - begin : 0, paused);
	}
	sim_charge(t, p, 1, acc, own);
	if (pseudo == ENG_FN_ALLOC) {
		sim_alloc_bytes(t, p, alloc_word);
		unsigned op = alloc_word & 0xff;
		bool frees = op == MEMINST_TALLOC_FREE || op == MEMINST_TALLOC_DELETE || op == 0;
		t->last_pair = p, t->last_own = own, t->last_acc = acc, t->last_bytes = frees ? 0 : alloc_word >> 8;
	}
	if (end > t->now)
		t->now = end;
	return ENG_OK;
}

/* meminst paused the thread from begin to end (the tracer waited for its
** writer: <trace-wait>; a snapshot was taken: <snapshot>): the program did
** not run then.  The time is the pseudo function fn's (OWN = ACC, called
** from the top of the stack, so that one sees where), and the frames open
** across it start that much later, so that no program function's OWN or
** ACC holds it.  A pause inside an allocation call comes before its
** <alloc> record, which then starts after the pause. */
static enum eng_err sim_own_pause(struct eng_sim *s, struct eng_thread *t, uint64_t begin,
				   uint64_t end, uint64_t fn)
{
	uint64_t from = sim_advance(t, begin);
	if (end <= from)
		return ENG_OK;
	uint64_t d = end - from;
	uint32_t p = sim_top_pair(s, t, fn);
	if (p == UINT32_MAX)
		return ENG_E_NOMEM;
	sim_charge(t, p, 1, d, d);
	if (!t->pause_sum)
		t->pause_from = from;
	t->pause_sum += d;
	for (size_t i = 0; i < t->depth; i++)
		t->stack[i].start += d;
	t->seg_start += d;
	t->now = end;
	return ENG_OK;
}

static void sim_thread_start(struct eng_thread *t, const uint64_t *r)
{
	t->tid = r[1] & 0xffffffffu;
	t->parent = (uint32_t)(r[1] >> 32);
	memcpy(t->name, &r[2], 16);
	t->name[16] = 0;
}

static enum eng_err sim_prof_pair(struct eng_sim *s, struct eng_thread *t, const uint64_t *r,
				   size_t n)
{
	unsigned row = meminst_tprof_row_words(r[1]); /* checked by eng_rec_size */
	for (size_t i = 2; i + row <= n; i += row) {
		uint64_t fn = r[i], caller = r[i + 1];
		if (fn == ENG_FN_PENDING || caller == ENG_FN_PENDING)
			continue;
		uint32_t f = sim_fn(s, t, fn), c = sim_fn(s, t, caller);
		if (f == UINT32_MAX || c == UINT32_MAX)
			return ENG_E_NOMEM;
		uint32_t p = sim_pair(s, t, c, f);
		if (p == UINT32_MAX)
			return ENG_E_NOMEM;
		sim_charge(t, p, r[i + 2], r[i + 3], r[i + 4]);
		if (row >= MEMINST_TPROF_ROW_MEM) {
			struct eng_mem m = {r[i + 5], r[i + 6], r[i + 7], r[i + 8]};
			sim_charge_mem(t, p, &m);
		}
	}
	t->has_profile = true;
	return ENG_OK;
}

static enum eng_err sim_event_act(struct eng_sim *s, struct eng_thread *t, const uint64_t *r, size_t n,
				   unsigned kind, uint64_t ts);

/*
** The ALLOC_AT record after the ALLOC it stands for (meminst_trace_expand):
** meminst's work around the allocator (the call's time less the backend's)
** goes to the pair's and <alloc>'s mi and to every open frame's ACC share
** (mi_cum); with call sites kept, the call to <alloc> from its site.
*/
static enum eng_err sim_alloc_at(struct eng_sim *s, struct eng_thread *t, const uint64_t *r, size_t n)
{
	uint32_t p = t->last_pair;
	t->last_pair = UINT32_MAX;
	if (p == UINT32_MAX || n < 4 || p >= t->npairs)
		return ENG_OK;
	struct eng_mi mi = {0};
	uint64_t w;
	if (meminst_trec_at_meminst(r, &w)) {
		w = w < t->last_own ? w : t->last_own;
		mi = (struct eng_mi){1, w, w < t->last_acc ? w : t->last_acc};
		sim_mi_add(&t->pairs[p].mi, &mi);
		sim_mi_add(&t->fns[t->pairs[p].called].mi, &mi);
		t->mi_cum += mi.acc, t->mi_calls++;
	}
	uint64_t site = meminst_trec_at_site(r);
	if (!site || !s->keep_sites)
		return ENG_OK;
	uint32_t sr = sim_site(s, t, p, site);
	if (sr == UINT32_MAX || (t->pairs[p].caller == t->pend_idx && sim_note_pending_site(s, t, sr)))
		return ENG_E_NOMEM;
	struct eng_site_row *row = &t->sites[sr];
	row->cnt++, row->acc += t->last_acc;
	row->acc_bytes += t->last_bytes, row->acc_blocks += t->last_bytes != 0;
	sim_mi_add(&row->mi, &mi);
	return ENG_OK;
}

static enum eng_err sim_event(struct eng_sim *s, struct eng_thread *t, const uint64_t *r,
			       size_t n)
{
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t ts = MEMINST_TREC_TIME(r[0]);
	if (t->off && (kind == MEMINST_TREC_CALL || kind == MEMINST_TREC_RETURN ||
		       kind == MEMINST_TREC_THREAD_START || kind == MEMINST_TREC_TRACE_ON ||
		       kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC))
		sim_open(t, ts > t->now ? ts : t->now);
	sim_interval(t, kind);
	return sim_event_act(s, t, r, n, kind, ts);
}

static enum eng_err sim_event_act(struct eng_sim *s, struct eng_thread *t, const uint64_t *r, size_t n,
				   unsigned kind, uint64_t ts)
{
	switch (kind) {
	case MEMINST_TREC_CALL:
		t->pause_sum = 0; /* the pauses before it are before any later <alloc> */
		return sim_call(s, t, r[1], r[2], sim_advance(t, ts));
	case MEMINST_TREC_RETURN:
		t->pause_sum = 0;
		return sim_return(s, t, r[1], sim_advance(t, ts));
	case MEMINST_TREC_THREAD_START:
		sim_thread_start(t, r);
		return ENG_OK;
	case MEMINST_TREC_THREAD_EXIT:
		t->exits++;
		return sim_close(s, t, sim_advance(t, ts));
	case MEMINST_TREC_TRACE_OFF:
		return sim_close(s, t, sim_advance(t, ts));
	case MEMINST_TREC_SUSPEND:
		if (eng_own_pause_fn(r[2]))
			return sim_own_pause(s, t, ts, r[1], eng_own_pause_fn(r[2]));
		return sim_pseudo(s, t, ENG_FN_SUSPEND, ts, r[1], 0);
	case MEMINST_TREC_ALLOC:
		return sim_pseudo(s, t, ENG_FN_ALLOC, ts, r[1], r[2]);
	case MEMINST_TREC_ALLOC_AT:
		sim_advance(t, ts);
		return sim_alloc_at(s, t, r, n);
	case MEMINST_TREC_LOST:
		t->lost += r[1];
		s->lost += r[1];
		return ENG_OK;
	case MEMINST_TREC_PROF_PAIR:
		return sim_prof_pair(s, t, r, n);
	default: /* TRACE_ON (opened above), CLOCK, variable kinds */
		sim_advance(t, ts);
		return ENG_OK;
	}
}

/* ----------------------------------------------------------- records -- */

enum eng_err eng_rec_size(const uint64_t *w, size_t avail, size_t *len)
{
	unsigned kind = MEMINST_TREC_KIND(w[0]);
	if (kind < MEMINST_TREC_VARIABLE) {
		if (kind > MEMINST_TREC_FIXED_MAX || sim_fixed_words[kind] == 0)
			return ENG_E_KIND;
		*len = sim_fixed_words[kind];
		return *len <= avail ? ENG_OK : ENG_E_SIZE;
	}
	if (avail < 2)
		return ENG_E_SIZE;
	uint64_t n = (uint32_t)w[1], extra = w[1] >> 32;
	if (n < 2 || n > avail)
		return ENG_E_SIZE;
	*len = (size_t)n;
	switch (kind) {
	case MEMINST_TREC_SAMPLE:
		return extra + 3 > n ? ENG_E_COUNT : ENG_OK;
	case MEMINST_TREC_ALLOC_SAMPLE:
		return extra + 4 > n ? ENG_E_COUNT : ENG_OK;
	case MEMINST_TREC_MODULE:
		if (n < 6 || w[5] > 8 * (n - 6) || extra > 8 * (n - 6) ||
		    (w[5] + 7) / 8 + (extra + 7) / 8 > n - 6)
			return ENG_E_COUNT;
		return ENG_OK;
	case MEMINST_TREC_PROCESS:
		return extra > 8 * (n - 2) ? ENG_E_COUNT : ENG_OK;
	case MEMINST_TREC_COUNTS:
		return 2 * extra + 2 > n ? ENG_E_COUNT : ENG_OK;
	case MEMINST_TREC_PROF_PAIR: {
		unsigned row = meminst_tprof_row_words(w[1]);
		return row < MEMINST_TPROF_ROW_TIME || row > 64 || (n - 2) % row ? ENG_E_COUNT : ENG_OK;
	}
	case MEMINST_TREC_PROCESS_EXIT:
		return n < 3 ? ENG_E_COUNT : ENG_OK;
	case MEMINST_TREC_ALLOC_BLOCK:
		return n != 4 && n != 5 ? ENG_E_COUNT : ENG_OK;
	default:
		return ENG_OK;
	}
}

static void sim_times(struct eng_sim *s, struct eng_thread *t, const uint64_t *r)
{
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t a = MEMINST_TREC_TIME(r[0]), b = a;
	if (kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC)
		b = r[1] > a ? r[1] : a;
	if (kind == MEMINST_TREC_CLOCK) {
		if (s->nclock++ == 0)
			s->clock_t0 = a, s->clock_ns0 = r[1];
		s->clock_t1 = a, s->clock_ns1 = r[1];
	}
	if (!t->seen || a < t->first)
		t->first = a;
	if (!t->seen || b > t->last)
		t->last = b;
	t->seen = true;
	if (!s->seen || a < s->first)
		s->first = a;
	if (!s->seen || b > s->last)
		s->last = b;
	s->seen = true;
}

enum eng_err eng_sim_feed(struct eng_sim *s, uint32_t thread, unsigned stream,
			    const uint64_t *w, size_t n, size_t *bad)
{
	struct eng_thread *t;
	enum eng_err e = sim_thread(s, thread, &t);
	if (e)
		return e;
	s->feeding = t;
	for (size_t i = 0, len; i < n; i += len) {
		*bad = i;
		if ((e = eng_rec_size(w + i, n - i, &len)) != ENG_OK)
			return e;
		const uint64_t *r = w + i;
		unsigned kind = MEMINST_TREC_KIND(r[0]);
		s->events++;
		t->events++;
		if (stream == MEMINST_TRACE_STREAM_EVENTS) {
			sim_times(s, t, r);
			if ((e = sim_event(s, t, r, len)) != ENG_OK)
				return e;
		} else if (kind == MEMINST_TREC_THREAD_START) {
			/* a thread sampled from before sampling started: its
			** identity comes first in its signal stream too */
			sim_thread_start(t, r);
		}
		if (s->other && (kind >= MEMINST_TREC_VARIABLE || stream != MEMINST_TRACE_STREAM_EVENTS ||
				 kind == MEMINST_TREC_CLOCK))
			s->other(s->other_ctx, thread, r, len);
	}
	return ENG_OK;
}

/* ----------------------------------------------------------- the end -- */

void eng_sim_init(struct eng_sim *s, const struct eng_allocator *a)
{
	memset(s, 0, sizeof *s);
	s->a = *a;
}

enum eng_err eng_sim_finish(struct eng_sim *s)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct eng_thread *t = s->threads[i];
		uint64_t end = t->last > t->now ? t->last : t->now;
		if (!t->off)
			sim_advance(t, end);
		enum eng_err e = sim_close(s, t, end);
		if (e)
			return e;
	}
	return ENG_OK;
}

void eng_thread_totals(const struct eng_thread *t, uint64_t *cnt, uint64_t *own)
{
	*cnt = *own = 0;
	for (size_t i = 0; i < t->nfns; i++) {
		if (t->fns[i].fn == ENG_FN_UNDEFINED || t->fns[i].fn == ENG_FN_PENDING)
			continue;
		*cnt += t->fns[i].cnt;
		*own += t->fns[i].own;
	}
}

uint64_t eng_thread_top(const struct eng_thread *t)
{
	return t->depth ? t->fns[t->stack[t->depth - 1].fn].fn : ENG_FN_UNDEFINED;
}

void eng_sim_free(struct eng_sim *s)
{
	void *c = s->a.ctx;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct eng_thread *t = s->threads[i];
		void *bufs[] = {t->stack, t->fns, t->fn_hash, t->pairs, t->pair_hash, t->pending, t->sites,
				t->site_hash, t->pending_sites};
		for (size_t j = 0; j < sizeof bufs / sizeof bufs[0]; j++)
			if (bufs[j])
				s->a.free(c, bufs[j]);
		s->a.free(c, t);
	}
	if (s->threads)
		s->a.free(c, s->threads);
	if (s->thr_hash)
		s->a.free(c, s->thr_hash);
	memset(s, 0, sizeof *s);
}
