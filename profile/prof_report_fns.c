/*
** prof_report_fns.c — the functions part of `inspect report`: the
** functions with the most own time or own bytes, with their accumulated
** time and the bytes and blocks they allocated themselves (own) and with
** everything they called (acc); exact from the session's trace (calls and
** <alloc> events), with the tracer's own cost and what was taken off or
** kept out of the functions' times, else estimated from the timer and
** allocation samples.
**
** Apart from prof_report.c, which reads the session and writes its memory
** parts from the snapshots: this part is written from the profile alone
** (prof_input: the model or the samples), and has its own tables and
** its own choice of rows (the slow and the hungry).
*/
#include "prof_int.h"

#include <stdlib.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const struct rd_col fn_cols[] = {
	{"name", "function", RD_K_STR, 0},
	{"calls", "calls", RD_K_INT, 0},
	{"own_ms", "own time", RD_K_DUR, 0},
	{"acc_ms", "acc time", RD_K_DUR, 0},
	{"own_bytes", "own bytes", RD_K_SIZE, 0},
	{"acc_bytes", "acc bytes", RD_K_SIZE, 0},
	{"own_blocks", "own blocks", RD_K_INT, 0},
	{"acc_blocks", "acc blocks", RD_K_INT, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
};

static const struct rd_col tracer_cols[] = {
	{"per_event", "per call or return", RD_K_STR, RD_C_TEXT_ONLY},
	{"event_ps", "per call or return (ps)", RD_K_INT, RD_C_DATA_ONLY},
	{"calls", "traced calls", RD_K_INT, 0},
	{"hooks_ms", "in the functions' times", RD_K_DUR, 0},
	{"percent", "share of the profile", RD_K_PCT, 0},
	{"hooks_taken_off", "taken off", RD_K_BOOL, 0},
	{"calibration_failed", "calibration failed", RD_K_BOOL, 0},
	{"alloc_calls", "<alloc> calls corrected", RD_K_INT, 0},
	{"alloc_taken_off_ms", "taken off <alloc>", RD_K_DUR, 0},
	{"preempted_ms", "<preempted>, kept out", RD_K_DUR, RD_C_OPTIONAL},
	{"trace_wait_ms", "<trace-wait>, kept out", RD_K_DUR, RD_C_OPTIONAL},
	{"snapshot_ms", "<snapshot>, kept out", RD_K_DUR, RD_C_OPTIONAL},
	{"meminst_ms", "<meminst>, kept out", RD_K_DUR, RD_C_OPTIONAL},
};

/* Which of n functions to show: the `limit` with the most own time and
** the `limit` that allocated the most themselves (the slow and the
** hungry), in order of own time.  Returns a new array of *shown indexes. */
struct report_key {
	double time, bytes;
};

/* Indexes into report_key[] (ctx), the largest first, ties by index. */
static int report_order(double u, double v, size_t x, size_t y)
{
	if (u != v)
		return u < v ? 1 : -1;
	return (x > y) - (x < y);
}

static int report_by_time(const void *a, const void *b, void *ctx)
{
	const struct report_key *k = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return report_order(k[x].time, k[y].time, x, y);
}

static int report_by_bytes(const void *a, const void *b, void *ctx)
{
	const struct report_key *k = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return report_order(k[x].bytes, k[y].bytes, x, y);
}

static size_t *report_pick(const struct report_key *keys, size_t n, size_t limit, size_t *shown)
{
	size_t *by_time = rd_xcalloc(n + 1, sizeof *by_time), *by_bytes = rd_xcalloc(n + 1, sizeof *by_bytes);
	for (size_t i = 0; i < n; i++)
		by_time[i] = by_bytes[i] = i;
	qsort_r(by_time, n, sizeof *by_time, report_by_time, (void *)keys);
	qsort_r(by_bytes, n, sizeof *by_bytes, report_by_bytes, (void *)keys);
	bool *keep = rd_xcalloc(n + 1, sizeof *keep);
	for (size_t i = 0; i < n && i < limit; i++) {
		keep[by_time[i]] = true;
		if (keys[by_bytes[i]].bytes > 0)
			keep[by_bytes[i]] = true;
	}
	*shown = 0;
	for (size_t i = 0; i < n; i++)
		if (keep[by_time[i]])
			by_time[(*shown)++] = by_time[i];
	free(by_bytes);
	free(keep);
	return by_time;
}

static void report_fn_rows(rd_doc_t *d, const struct prof_model *m, size_t limit)
{
	struct prof_mthread all;
	prof_model_merge(m, &all);
	struct report_key *keys = rd_xcalloc(all.nrows + 1, sizeof *keys);
	for (size_t i = 0; i < all.nrows; i++) /* undefined, kept out: not the program's functions */
		keys[i] = all.rows[i].fn == 0 || prof_kept_out(m->funcs[all.rows[i].fn].addr)
				  ? (struct report_key){-1, -1}
					     : (struct report_key){(double)all.rows[i].own,
								   (double)all.rows[i].mem.own_bytes};
	size_t n;
	size_t *pick = report_pick(keys, all.nrows, limit, &n);
	rd_table_t *t = rd_doc_table(d, "functions", fn_cols, NCOLS(fn_cols), 0);
	rd_table_title(t, "functions with the most own time or own bytes (%s clock, all threads):",
			 prof_clock_name(m->clock));
	for (size_t k = 0; k < n; k++) {
		const struct prof_row *r = &all.rows[pick[k]];
		const struct prof_func *f = &m->funcs[r->fn];
		if (r->fn == 0 || prof_kept_out(f->addr))
			continue;
		rd_row(t);
		rd_put_str(t, f->name);
		rd_put_uint(t, r->cnt);
		rd_put_int(t, r->own);
		rd_put_int(t, r->acc);
		rd_put_uint(t, r->mem.own_bytes);
		rd_put_uint(t, r->mem.acc_bytes);
		rd_put_uint(t, r->mem.own_blocks);
		rd_put_uint(t, r->mem.acc_blocks);
		if (f->file)
			rd_put_str(t, rd_pool_fmt(&((struct prof_model *)m)->pool, "%s:%d", f->file, f->line));
		else
			rd_put_null(t);
	}
	if (all.nrows > n + 1)
		rd_table_note(t, "(inspect analyse %s for callers and called)", m->source);
	free(pick);
	free(keys);
	prof_mthread_free(&all);
}

/* What exact tracing cost the program (measured at its start) and what the
** profile did about it: the hooks' share is only told, the stamps' share
** of each <alloc> call taken off, the pauses that are not the program's
** kept out of its functions. */
static void report_tracer(rd_doc_t *d, const struct prof_model *m)
{
	const struct prof_tcost *c = &m->cost;
	rd_table_t *t = rd_doc_table(d, "tracer", tracer_cols, NCOLS(tracer_cols), RD_T_SINGLE);
	if (!c->known) {
		rd_table_title(t, "tracer's own cost: not in this trace (written before meminst measured it)");
		return;
	}
	rd_table_title(t, "tracer's own cost (measured at the program's start):");
	rd_row(t);
	rd_put_str(t, rd_pool_fmt(&((struct prof_model *)m)->pool, "%.1f ns", c->call_ns));
	rd_put_int(t, (int64_t)(c->call_ns * 1000.0 + 0.5));
	rd_put_uint(t, c->calls);
	rd_put_int(t, c->hooks_ns);
	rd_put_pct(t, prof_cost_percent(m));
	rd_put_int(t, c->compensated);
	rd_put_int(t, c->failed);
	rd_put_uint(t, c->allocs);
	rd_put_int(t, c->alloc_taken_ns);
	static const uint64_t kept[] = {ENG_FN_PREEMPTED, ENG_FN_TRACE_WAIT, ENG_FN_SNAPSHOT, ENG_FN_MEMINST}; /* prof_kept_out */
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
		uint64_t cnt;
		const char *name;
		int64_t ns = prof_model_fn_own(m, kept[i], &cnt, &name);
		if (cnt)
			rd_put_int(t, ns);
		else
			rd_put_null(t);
	}
	if (c->failed)
		rd_table_note(t, "WARNING: calibration failed (%s): times NOT compensated, the tracer's cost is in "
				"them", c->why);
	else if (c->compensated)
		rd_table_note(t, "(times compensated: the hooks' calibrated cost is taken off each function's own "
				"and cumulative times; each <alloc> call's share of the stamps too)");
	else
		rd_table_note(t, "(times raw: the hooks' cost is left in them; each <alloc> call's share of the "
				"stamps is taken off)");
}

/* Without an exact trace: the functions of the samples (estimates): self
** and cumulative time from the timer samples, bytes and blocks from the
** allocation samples; calls when the run counted them. */
static void report_sampled_rows(rd_doc_t *d, const struct prof_smodel *m, size_t limit)
{
	struct report_key *keys = rd_xcalloc(m->nfuncs + 1, sizeof *keys);
	for (size_t i = 0; i < m->nfuncs; i++)
		keys[i] = (struct report_key){m->fs[i].self[ENG_M_TICKS], m->fs[i].self[ENG_M_BYTES]};
	size_t n;
	size_t *pick = report_pick(keys, m->nfuncs, limit, &n);
	rd_table_t *t = rd_doc_table(d, "functions", fn_cols, NCOLS(fn_cols), 0);
	rd_table_title(t, "functions with the most own time or own bytes (estimates from %.0f samples, "
			 "all threads):", m->total[ENG_M_SAMPLES] + m->total[ENG_M_ASAMPLES]);
	for (size_t k = 0; k < n; k++) {
		const struct eng_fsum *s = &m->fs[pick[k]];
		const struct prof_func *f = &m->funcs[pick[k]];
		if (s->cum[ENG_M_TICKS] <= 0 && s->cum[ENG_M_BYTES] <= 0)
			continue;
		rd_row(t);
		rd_put_str(t, f->name);
		if (m->calls)
			rd_put_uint(t, (uint64_t)m->calls[pick[k]]);
		else
			rd_put_null(t);
		rd_put_int(t, (int64_t)(s->self[ENG_M_TICKS] * m->ns_per_tick));
		rd_put_int(t, (int64_t)(s->cum[ENG_M_TICKS] * m->ns_per_tick));
		rd_put_uint(t, (uint64_t)s->self[ENG_M_BYTES]);
		rd_put_uint(t, (uint64_t)s->cum[ENG_M_BYTES]);
		rd_put_uint(t, (uint64_t)s->self[ENG_M_ALLOCS]);
		rd_put_uint(t, (uint64_t)s->cum[ENG_M_ALLOCS]);
		if (f->file)
			rd_put_str(t, rd_pool_fmt(&((struct prof_smodel *)m)->pool, "%s:%d", f->file, f->line));
		else
			rd_put_null(t);
	}
	rd_table_note(t, "(inspect analyse --style flat for every function, --metric bytes by allocation)");
	free(pick);
	free(keys);
}

/* The functions part: the exact profile of the session's stored trace, or
** its samples.  A session with neither gets one line on o->err; when
** meminst stopped sampling (a seccomp filter: the notes say), that is why. */
void prof_report_functions(rd_doc_t *d, const char *path, const struct rd_opts *o, size_t limit,
			   const struct prof_input *in, bool sampling_off)
{
	if (in->have_model && in->model.cnt) {
		report_fn_rows(d, &in->model, limit);
		report_tracer(d, &in->model);
	}
	else if (in->have_sm)
		report_sampled_rows(d, &in->sm, limit);
	else if (in->have_tr && (in->tr.h.sample_hz || in->tr.h.alloc_sample) && sampling_off)
		rd_errf(o->err, "inspect: %s: no samples of process %u: meminst stopped sampling (the notes "
			"say why)\n", path, in->tr.h.pid);
	else if (in->have_tr && (in->tr.h.sample_hz || in->tr.h.alloc_sample))
		rd_errf(o->err, "inspect: %s: no samples of process %u: it ran too briefly for them, or its "
			"threads kept SIGPROF blocked (other processes of a session: --pid)\n", path, in->tr.h.pid);
	else
		rd_errf(o->err, "inspect: %s: the trace has no function calls and no samples (time per "
			"function needs meminst --trace with code built with -finstrument-functions, or "
			"--sample)\n", path);
}
