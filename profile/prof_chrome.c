/*
** prof_chrome.c — an exact trace as Chrome Trace Event JSON, for Perfetto
** and chrome://tracing.
**
** The trace is read twice: the first reading (the caller's) gives the
** clock, the threads and the modules for names; the second one, with a
** per-record callback, simulates each thread's stack again and writes one
** complete event ("ph":"X", ts and dur in microseconds) when a call
** returns, and one per allocator call (`<alloc>`) and per suspension.
** Frames still open when a thread or the trace ends close at its last time
** stamp; a return from a function entered before tracing started is a call
** from the start of the traced stretch.  Events shorter than --min-duration
** are left out and counted, so that a trace of millions of calls can give
** a file of a size one can open.
**
** Counter tracks ("ph":"C", wall clocks only): the bytes allocated so far
** (summed from the <alloc> events into 1000 slices of the run), and, from
** a session, the live bytes of each snapshot (the memory timeline).
*/
#include "prof_export.h"

#include <stdlib.h>
#include <string.h>

#define CHROME_SLICES 1000

struct ch_frame {
	uint64_t fn, start;
};

struct ch_thread {
	uint32_t thread;
	int64_t tid;
	bool off;
	uint64_t seg_start, now;
	struct ch_frame *stack;
	size_t depth, cap;
};

struct chrome {
	FILE *f;
	const struct exp_chrome_opts *co;
	prof_symtab_t *st;
	double ns_per_tick, min_ticks;
	int64_t pid;
	bool first;              /* no event written yet                      */
	struct ch_thread *thr;
	size_t nthr;
	uint64_t t0, t1;         /* the run, for the slices                    */
	double slices[CHROME_SLICES];
	uint64_t dropped, written;
};

static const char *chrome_reason(uint64_t r)
{
	static const char *const names[] = {"suspend", "suspend (sleep)", "suspend (poll)",
					    "suspend (lock)", "suspend (cond)", "suspend (join)",
					    "suspend (io)", "suspend (other)", "<trace-wait>", "<snapshot>",
					    "<preempted>"};
	return r < sizeof names / sizeof names[0] ? names[r] : names[0];
}

static void chrome_sep(struct chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
}

static void chrome_us(FILE *f, double us)
{
	fprintf(f, "%.3f", us);
}

/* One complete event; the name is a function address (cat "call"), or a
** given string. */
static void chrome_x(struct chrome *c, const struct ch_thread *t, const char *cat, uint64_t fn,
		     const char *name, uint64_t begin, uint64_t end, uint64_t bytes)
{
	if (end < begin)
		end = begin;
	if ((double)(end - begin) < c->min_ticks) {
		c->dropped++;
		return;
	}
	if (!name) {
		size_t n;
		name = prof_symtab_funcs(c->st, &n)[prof_symtab_index(c->st, fn)].name;
	}
	chrome_sep(c);
	fputs("{\"ph\":\"X\",\"cat\":\"", c->f);
	fputs(cat, c->f);
	fputs("\",\"name\":", c->f);
	insp_json_str(c->f, name);
	fprintf(c->f, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)c->pid, (long long)t->tid);
	chrome_us(c->f, (double)begin * c->ns_per_tick / 1000.0);
	fputs(",\"dur\":", c->f);
	chrome_us(c->f, (double)(end - begin) * c->ns_per_tick / 1000.0);
	if (bytes)
		fprintf(c->f, ",\"args\":{\"bytes\":%llu}", (unsigned long long)bytes);
	fputc('}', c->f);
	c->written++;
}

static struct ch_thread *chrome_thread(struct chrome *c, uint32_t thread)
{
	for (size_t i = 0; i < c->nthr; i++)
		if (c->thr[i].thread == thread)
			return &c->thr[i];
	c->thr = insp_xrealloc(c->thr, (c->nthr + 1) * sizeof *c->thr);
	struct ch_thread *t = &c->thr[c->nthr++];
	*t = (struct ch_thread){.thread = thread, .tid = thread, .off = true};
	return t;
}

static void chrome_pop_to(struct chrome *c, struct ch_thread *t, size_t depth, uint64_t ts)
{
	while (t->depth > depth) {
		const struct ch_frame *fr = &t->stack[--t->depth];
		chrome_x(c, t, "call", fr->fn, NULL, fr->start, ts, 0);
	}
}

static void chrome_return(struct chrome *c, struct ch_thread *t, uint64_t fn, uint64_t ts)
{
	for (size_t i = t->depth; i-- > 0;)
		if (t->stack[i].fn == fn) {
			chrome_pop_to(c, t, i, ts);
			return;
		}
	chrome_pop_to(c, t, 0, ts); /* entered before tracing started */
	chrome_x(c, t, "call", fn, NULL, t->seg_start, ts, 0);
}

static void chrome_alloc(struct chrome *c, struct ch_thread *t, const uint64_t *r)
{
	uint64_t begin = MEMINST_TREC_TIME(r[0]), end = r[1] > begin ? r[1] : begin;
	unsigned op = r[2] & 0xff;
	bool allocates = op && op != MEMINST_TALLOC_FREE && op != MEMINST_TALLOC_DELETE;
	chrome_x(c, t, "alloc", 0, "<alloc>", begin, end, allocates ? r[2] >> 8 : 0);
	if (allocates && c->t1 > c->t0 && begin >= c->t0) {
		uint64_t k = (begin - c->t0) * CHROME_SLICES / (c->t1 - c->t0 + 1);
		c->slices[k < CHROME_SLICES ? k : CHROME_SLICES - 1] += (double)(r[2] >> 8);
	}
}

static void chrome_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread, unsigned stream,
			  const uint64_t *r, size_t n)
{
	(void)h, (void)n;
	struct chrome *c = ctx;
	if (stream != MEMINST_TRACE_STREAM_EVENTS)
		return;
	struct ch_thread *t = chrome_thread(c, thread);
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	uint64_t ts = MEMINST_TREC_TIME(r[0]);
	if (t->off && (kind == MEMINST_TREC_CALL || kind == MEMINST_TREC_RETURN || kind == MEMINST_TREC_TRACE_ON ||
		       kind == MEMINST_TREC_THREAD_START || kind == MEMINST_TREC_SUSPEND ||
		       kind == MEMINST_TREC_ALLOC)) {
		t->off = false;
		t->seg_start = ts;
	}
	if (ts > t->now)
		t->now = ts;
	switch (kind) {
	case MEMINST_TREC_CALL:
		if (t->depth == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->stack = insp_xrealloc(t->stack, t->cap * sizeof *t->stack);
		}
		t->stack[t->depth++] = (struct ch_frame){r[1], ts};
		break;
	case MEMINST_TREC_RETURN:
		chrome_return(c, t, r[1], ts);
		break;
	case MEMINST_TREC_THREAD_EXIT:
	case MEMINST_TREC_TRACE_OFF:
		chrome_pop_to(c, t, 0, ts);
		t->off = true;
		break;
	case MEMINST_TREC_SUSPEND:
		chrome_x(c, t, "suspend", 0, chrome_reason(r[2]), ts, r[1], 0);
		break;
	case MEMINST_TREC_ALLOC:
		chrome_alloc(c, t, r);
		break;
	}
	if ((kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC) && r[1] > t->now)
		t->now = r[1];
}

/* -------------------------------------------------------------- extras -- */

static void chrome_meta(struct chrome *c, const struct prof_trace *tr)
{
	const char *exe = tr->exe ? strrchr(tr->exe, '/') : NULL;
	chrome_sep(c);
	fprintf(c->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":",
		(long long)c->pid);
	insp_json_str(c->f, exe ? exe + 1 : tr->exe ? tr->exe : "program");
	fputs("}}", c->f);
	for (size_t i = 0; i < tr->sim.nthreads; i++) {
		const struct prof_thread *pt = tr->sim.threads[i];
		if (!pt->seen || pt->thread == 0)
			continue;
		struct ch_thread *t = chrome_thread(c, pt->thread);
		t->tid = pt->tid ? (int64_t)pt->tid : pt->thread;
		char name[64];
		if (pt->name[0])
			snprintf(name, sizeof name, "%s (thread %u)", pt->name, pt->thread);
		else
			snprintf(name, sizeof name, "thread %u", pt->thread);
		chrome_sep(c);
		fprintf(c->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":",
			(long long)c->pid, (long long)t->tid);
		insp_json_str(c->f, name);
		fputs("}}", c->f);
	}
}

static void chrome_counter(struct chrome *c, const char *name, double us, uint64_t v)
{
	chrome_sep(c);
	fprintf(c->f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%lld,\"tid\":0,\"ts\":", name, (long long)c->pid);
	chrome_us(c->f, us > 0 ? us : 0);
	fprintf(c->f, ",\"args\":{\"bytes\":%llu}}", (unsigned long long)v);
}

static void chrome_allocated(struct chrome *c)
{
	double sum = 0, span = (double)(c->t1 - c->t0 + 1);
	chrome_counter(c, "allocated bytes", (double)c->t0 * c->ns_per_tick / 1000.0, 0);
	for (int k = 0; k < CHROME_SLICES; k++) {
		if (!c->slices[k])
			continue;
		sum += c->slices[k];
		double end = (double)c->t0 + span * (k + 1) / CHROME_SLICES;
		chrome_counter(c, "allocated bytes", end * c->ns_per_tick / 1000.0, (uint64_t)sum);
	}
}

/* The session's snapshots of the process: live bytes over time. */
static void chrome_timeline(struct chrome *c, const struct prof_trace *tr)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	if (sqlite3_open_v2(c->co->session, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT s.time_ns, t.sizes_current FROM snapshot s JOIN status t ON "
				   "t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 WHERE s.pid = ? "
				   "ORDER BY s.elapsed_ns, s.id", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, c->co->pid);
		while (sqlite3_step(st) == SQLITE_ROW) {
			double us = (double)(sqlite3_column_int64(st, 0) - (int64_t)tr->h.t0_realtime_ns) / 1000.0;
			chrome_counter(c, "live bytes", us, (uint64_t)sqlite3_column_int64(st, 1));
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

int exp_chrome_write(struct prof_trace *tr, const struct insp_opts *o, const struct exp_chrome_opts *co,
		     FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx, FILE *f, uint64_t *dropped,
		     uint64_t *written)
{
	struct insp_pool pool = {0};
	struct chrome c = {.f = f, .co = co, .first = true, .pid = tr->h.pid,
			   .ns_per_tick = prof_ns_per_tick(tr), .t0 = tr->sim.first, .t1 = tr->sim.last};
	c.min_ticks = co->min_us * 1000.0 / c.ns_per_tick;
	c.st = prof_symtab_new(tr, o, o->no_symbols, &pool);
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
	chrome_meta(&c, tr);
	uint64_t size;
	FILE *in = open(open_ctx, &size);
	int r = INSP_EXIT_DB;
	if (in) {
		struct prof_trace again;
		struct insp_opts quiet = *o; /* the first reading said it all */
		quiet.err = fopen("/dev/null", "w");
		quiet.progress = o->progress;
		r = prof_trace_read_stream(in, tr->path, size, quiet.err ? &quiet : o, &again, chrome_record, &c);
		if (quiet.err)
			fclose(quiet.err);
		fclose(in);
		for (size_t i = 0; i < c.nthr; i++) { /* close what is still open */
			struct ch_thread *t = &c.thr[i];
			uint64_t end = t->now;
			for (size_t j = 0; j < again.sim.nthreads; j++)
				if (again.sim.threads[j]->thread == t->thread && again.sim.threads[j]->last > end)
					end = again.sim.threads[j]->last;
			chrome_pop_to(&c, t, 0, end);
		}
		prof_trace_free(&again);
	}
	if (tr->h.clock != MEMINST_TRACE_CLOCK_CPU) {
		chrome_allocated(&c);
		if (co->session)
			chrome_timeline(&c, tr);
	}
	fprintf(f, "\n],\"otherData\":{\"clock\":\"%s\",\"dropped_events\":%llu}}\n", prof_clock_name(tr->h.clock),
		(unsigned long long)c.dropped);
	for (size_t i = 0; i < c.nthr; i++)
		free(c.thr[i].stack);
	free(c.thr);
	prof_symtab_free(c.st);
	insp_pool_free(&pool);
	*dropped = c.dropped;
	*written = c.written;
	return r;
}
