/*
** exp_chrome.c — an exact trace as Chrome Trace Event JSON, for Perfetto
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
** An allocation is an `<alloc>` complete event (the allocator's time, no
** arguments: viewers that key frames by arguments would make one frame per
** size) and an instant event ("ph":"i") with its bytes.
**
** Counter tracks ("ph":"C", wall clocks only): the bytes allocated so far
** (summed from the <alloc> events into 1000 slices of the run), and, from
** a session, the live bytes of each snapshot (the memory timeline).
**
** Samples (when the caller gives the sample model): each thread's timer
** samples are a track of their own ("samples of THREAD"), a flame chart in
** time: a sample stands for the period before it, consecutive samples with
** the same frames make one event per frame, a gap longer than half a
** period ends them all; frames are the functions of the sampling displays
** (prof_samples.c), with the functions inlined at each address as frames
** of their own (prof_inline.c); allocation samples are instant events on
** that track.
**
** Size (--max-size, 100 MB by default): when the trace could give more, a
** first reading only counts the events by duration (eighths of powers of
** two) and their length; the events shorter than the cut that fits are left out,
** as with --min-duration, and the caller says so.
*/
#include "exp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHROME_SLICES 1000
/* Durations by eighths of powers of two: a cut 9% apart from the next */
#define CHROME_STEPS 8
#define CHROME_BUCKETS (64 * CHROME_STEPS + 1)
/* The samples' tracks: tids no thread has. */
#define CHROME_SAMPLE_TID 1000000000

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
	/* its samples: the open frames (fn: a function id), the end of the
	** last sample's period */
	struct ch_frame *sstack;
	size_t sdepth, scap;
	uint64_t send;
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
	const struct prof_smodel *sm;
	struct prof_inline x;     /* the samples' frames and functions        */
	uint32_t *fids;          /* a sample's frames                        */
	size_t fcap;
	/* the counting reading: events and their bytes by duration bucket */
	bool counting;
	double hist_n[CHROME_BUCKETS], hist_bytes[CHROME_BUCKETS];
	uint64_t lower[CHROME_BUCKETS]; /* the shortest duration of each bucket */
};

/* Bucket b starts at ceil(2^(b / CHROME_STEPS)) - 1 ticks: integers, so
** that the counting and the cut (d >= lower[b]) agree on every event. */
static void chrome_buckets(struct chrome *c)
{
	for (int b = 0; b < CHROME_BUCKETS; b++) {
		double v = ceil(exp2((double)b / CHROME_STEPS)) - 1;
		c->lower[b] = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
	}
}

/* The last bucket whose lower bound is d or less. */
static int chrome_bucket(const struct chrome *c, uint64_t d)
{
	int lo = 0, hi = CHROME_BUCKETS - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (c->lower[mid] <= d)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void chrome_count(struct chrome *c, uint64_t d, size_t bytes)
{
	int b = chrome_bucket(c, d);
	c->hist_n[b]++;
	c->hist_bytes[b] += (double)bytes;
}

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

/* A time in ticks as whole ns (rounded). */
static uint64_t chrome_ns(const struct chrome *c, uint64_t ticks)
{
	double ns = (double)ticks * c->ns_per_tick + 0.5;
	return ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX;
}

/* Digits of v; of a time in us as chrome_us prints it. */
static size_t chrome_digits(uint64_t v)
{
	size_t n = 1;
	for (; v >= 10; v /= 10)
		n++;
	return n;
}

static size_t chrome_us_len(const struct chrome *c, uint64_t ticks)
{
	double us = (double)ticks * c->ns_per_tick / 1000.0;
	return chrome_digits(us < 1e19 ? (uint64_t)(us + 0.0005) : UINT64_MAX) + 4; /* and ".ddd" */
}

/* The length of an event as written (with its ",\n"; names without
** escapes), for the counting reading: the cut is found by bytes. */
static size_t chrome_len(const struct chrome *c, int64_t tid, const char *cat, const char *name, size_t fixed)
{
	return fixed + strlen(cat) + strlen(name) + chrome_digits((uint64_t)(c->pid < 0 ? -c->pid : c->pid)) +
	       chrome_digits((uint64_t)(tid < 0 ? -tid : tid)) + 2;
}

/* The start of an event, up to its time stamp: {"ph":PH,"cat":"CAT",
** "name":NAME,"pid":..,"tid":TID,"ts": (PH is JSON: "X", or "i","s":"t"). */
static void chrome_head(struct chrome *c, const char *ph, int64_t tid, const char *cat, const char *name)
{
	chrome_sep(c);
	fprintf(c->f, "{\"ph\":%s,\"cat\":\"", ph);
	fputs(cat, c->f);
	fputs("\",\"name\":", c->f);
	rd_json_str(c->f, name);
	fprintf(c->f, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)c->pid, (long long)tid);
}

/* One complete event on track tid; the name is a function address (cat
** "call"), or a given string. */
static void chrome_x(struct chrome *c, int64_t tid, const char *cat, uint64_t fn, const char *name,
		     uint64_t begin, uint64_t end)
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
	if (c->counting) { /* {"ph":"X","cat":"","name":"","pid":,"tid":,"ts":,"dur":} */
		chrome_count(c, end - begin, chrome_len(c, tid, cat, name, 56) + chrome_us_len(c, begin) +
						     chrome_us_len(c, end - begin));
		return;
	}
	chrome_head(c, "\"X\"", tid, cat, name);
	/* Both ends rounded to whole ns before the length is taken, so that an
	** event nested in another never ends after it once printed (rounding
	** the start and the length apart did, by 1 ns). */
	uint64_t begin_ns = chrome_ns(c, begin), end_ns = chrome_ns(c, end);
	chrome_us(c->f, (double)begin_ns / 1000.0);
	fputs(",\"dur\":", c->f);
	chrome_us(c->f, (double)(end_ns - begin_ns) / 1000.0);
	fputc('}', c->f);
	c->written++;
}

/* An instant event with bytes, kept or left out with the complete event
** of duration d it belongs to (0: its own). */
static void chrome_i(struct chrome *c, int64_t tid, const char *cat, const char *name, uint64_t ts, uint64_t d,
		     uint64_t bytes)
{
	if ((double)d < c->min_ticks)
		return;
	if (c->counting) { /* {"ph":"i","s":"t","cat":"","name":"","pid":,"tid":,"ts":,"args":{"bytes":}} */
		chrome_count(c, d, chrome_len(c, tid, cat, name, 75) + chrome_us_len(c, ts) + chrome_digits(bytes));
		return;
	}
	chrome_head(c, "\"i\",\"s\":\"t\"", tid, cat, name);
	chrome_us(c->f, (double)ts * c->ns_per_tick / 1000.0);
	fprintf(c->f, ",\"args\":{\"bytes\":%llu}}", (unsigned long long)bytes);
	c->written++;
}

static struct ch_thread *chrome_thread(struct chrome *c, uint32_t thread)
{
	for (size_t i = 0; i < c->nthr; i++)
		if (c->thr[i].thread == thread)
			return &c->thr[i];
	c->thr = rd_xrealloc(c->thr, (c->nthr + 1) * sizeof *c->thr);
	struct ch_thread *t = &c->thr[c->nthr++];
	*t = (struct ch_thread){.thread = thread, .tid = thread, .off = true};
	return t;
}

static void chrome_pop_to(struct chrome *c, struct ch_thread *t, size_t depth, uint64_t ts)
{
	while (t->depth > depth) {
		const struct ch_frame *fr = &t->stack[--t->depth];
		chrome_x(c, t->tid, "call", fr->fn, NULL, fr->start, ts);
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
	chrome_x(c, t->tid, "call", fn, NULL, t->seg_start, ts);
}

static void chrome_alloc(struct chrome *c, struct ch_thread *t, const uint64_t *r)
{
	uint64_t begin = MEMINST_TREC_TIME(r[0]), end = r[1] > begin ? r[1] : begin;
	unsigned op = r[2] & 0xff;
	bool allocates = op && op != MEMINST_TALLOC_FREE && op != MEMINST_TALLOC_DELETE;
	chrome_x(c, t->tid, "alloc", 0, "<alloc>", begin, end);
	if (allocates)
		chrome_i(c, t->tid, "alloc", "<alloc>", begin, end - begin, r[2] >> 8);
	if (allocates && c->t1 > c->t0 && begin >= c->t0) {
		uint64_t k = (begin - c->t0) * CHROME_SLICES / (c->t1 - c->t0 + 1);
		c->slices[k < CHROME_SLICES ? k : CHROME_SLICES - 1] += (double)(r[2] >> 8);
	}
}

/* ------------------------------------------------------------ samples -- */

/* The function ids (of c->x) of a sample's frames in c->fids, outermost
** first, as the sampling displays see them with the inlined functions: the
** sample's path in the address tree (the frames as prof_samples.c keys
** them: a timer sample's pc, the others address - 1). */
static size_t chrome_sample_fids(struct chrome *c, uint32_t thread, const uint64_t *frames, size_t n, bool timer)
{
	const struct eng_cct *at = prof_samples_tree(c->sm->s);
	uint32_t node = eng_cct_find(at, ENG_CCT_NONE, thread);
	size_t k = 0;
	n = n < ENG_CCT_MAX_DEPTH ? n : ENG_CCT_MAX_DEPTH;
	for (size_t i = n; i-- > 0 && node != ENG_CCT_NONE;) {
		uint64_t a = frames[i] == MEMINST_TRACE_FRAME_TRUNCATED ? PROF_FN_TRUNCATED
			     : timer && i == 0				 ? frames[i]
			     : frames[i]				 ? frames[i] - 1
									 : 0;
		if ((node = eng_cct_find(at, node, a)) == ENG_CCT_NONE)
			break;
		const struct prof_inl_frame *fr;
		size_t nf = prof_inline_frames(&c->x, node, &fr);
		if (k + nf > c->fcap) {
			c->fcap = 2 * (k + nf) + 64;
			c->fids = rd_xrealloc(c->fids, c->fcap * sizeof *c->fids);
		}
		for (size_t j = 0; j < nf; j++)
			c->fids[k++] = fr[j].fn;
	}
	return k;
}

/* The frames above depth end at end: written outermost first, so that a
** caller's event comes before its callees' where they begin and end at
** the same times (viewers nest equal events in the order of the file). */
static void chrome_sample_close(struct chrome *c, struct ch_thread *t, size_t depth, uint64_t end)
{
	for (size_t i = depth; i < t->sdepth; i++) {
		const struct ch_frame *fr = &t->sstack[i];
		chrome_x(c, CHROME_SAMPLE_TID + t->thread, "sample", 0, c->x.funcs[fr->fn].name, fr->start, end);
	}
	if (t->sdepth > depth)
		t->sdepth = depth;
}

static void chrome_sample(struct chrome *c, struct ch_thread *t, const uint64_t *r, size_t len)
{
	bool timer = MEMINST_TREC_KIND(r[0]) == MEMINST_TREC_SAMPLE;
	size_t skip = timer ? 3 : 4, n = (size_t)(r[1] >> 32);
	if (len < skip || n > len - skip || n == 0)
		return;
	size_t k = chrome_sample_fids(c, t->thread, r + skip, n, timer);
	const uint32_t *fids = c->fids;
	uint64_t ts = MEMINST_TREC_TIME(r[0]);
	if (!timer) {
		const char *name = k ? c->x.funcs[fids[k - 1]].name : "<alloc>";
		chrome_i(c, CHROME_SAMPLE_TID + t->thread, "alloc sample", name, ts, 0, r[2]);
		return;
	}
	uint64_t w = r[2], begin = ts > w ? ts - w : 0;
	if (t->sdepth && begin > t->send + w / 2) /* a gap: nothing ran on */
		chrome_sample_close(c, t, 0, t->send);
	/* a weight of merged ticks (timer overruns on a loaded machine) reaches
	** back into the sample before: its period starts where that one ended,
	** so that frames closed later never end before the ones they hold */
	if (begin < t->send)
		begin = t->send;
	size_t j = 0;
	while (j < t->sdepth && j < k && t->sstack[j].fn == fids[j])
		j++;
	chrome_sample_close(c, t, j, t->send < begin ? t->send : begin);
	if (k > t->scap) {
		t->scap = k + 64;
		t->sstack = rd_xrealloc(t->sstack, t->scap * sizeof *t->sstack);
	}
	for (; j < k; j++)
		t->sstack[t->sdepth++] = (struct ch_frame){fids[j], begin};
	t->send = ts;
}

static void chrome_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread, unsigned stream,
			  const uint64_t *r, size_t n)
{
	(void)h;
	struct chrome *c = ctx;
	unsigned kind = MEMINST_TREC_KIND(r[0]);
	if (kind == MEMINST_TREC_SAMPLE || kind == MEMINST_TREC_ALLOC_SAMPLE) {
		if (c->sm)
			chrome_sample(c, chrome_thread(c, thread), r, n);
		return;
	}
	if (stream != MEMINST_TRACE_STREAM_EVENTS)
		return;
	struct ch_thread *t = chrome_thread(c, thread);
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
			t->stack = rd_xrealloc(t->stack, t->cap * sizeof *t->stack);
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
		chrome_x(c, t->tid, "suspend", 0, chrome_reason(r[2]), ts, r[1]);
		break;
	case MEMINST_TREC_ALLOC:
		chrome_alloc(c, t, r);
		break;
	}
	if ((kind == MEMINST_TREC_SUSPEND || kind == MEMINST_TREC_ALLOC) && r[1] > t->now)
		t->now = r[1];
}

/* -------------------------------------------------------------- extras -- */

/* A metadata event: the name (process_name, thread_name) of tid. */
static void chrome_name(struct chrome *c, const char *what, int64_t tid, const char *name)
{
	chrome_sep(c);
	fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":", what,
		(long long)c->pid, (long long)tid);
	rd_json_str(c->f, name);
	fputs("}}", c->f);
}

static void chrome_meta(struct chrome *c, const struct prof_trace *tr)
{
	const char *exe = tr->exe ? strrchr(tr->exe, '/') : NULL;
	chrome_name(c, "process_name", 0, exe ? exe + 1 : tr->exe ? tr->exe : "program");
	for (size_t i = 0; i < tr->sim.nthreads; i++) {
		const struct eng_thread *pt = tr->sim.threads[i];
		if (!pt->seen || pt->thread == 0)
			continue;
		struct ch_thread *t = chrome_thread(c, pt->thread);
		t->tid = pt->tid ? (int64_t)pt->tid : pt->thread;
		char name[64];
		if (pt->name[0])
			snprintf(name, sizeof name, "%s (thread %u)", pt->name, pt->thread);
		else
			snprintf(name, sizeof name, "thread %u", pt->thread);
		chrome_name(c, "thread_name", t->tid, name);
	}
	for (size_t i = 0; c->sm && i < c->sm->nthreads; i++) {
		const struct prof_sthread *st = &c->sm->threads[i];
		char name[64];
		snprintf(name, sizeof name, "samples of %s (thread %u)", st->name ? st->name : "thread", st->thread);
		chrome_name(c, "thread_name", CHROME_SAMPLE_TID + st->thread, name);
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
	if ((db = rd_sqlite_connect(c->co->session)) && sqlite3_errcode(db) == SQLITE_OK &&
	    rd_carry_views(db) == SQLITE_OK && sqlite3_prepare_v2(db, "SELECT s.time_ns, t.sizes_current FROM snapshot s JOIN status t ON "
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

/* One reading of the trace through chrome_record; what is still open at
** the end closes at its thread's last time stamp. */
static int chrome_pass(struct chrome *c, const struct prof_trace *tr, const struct rd_opts *o,
		       FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx)
{
	uint64_t size;
	FILE *in = open(open_ctx, &size);
	if (!in)
		return RD_EXIT_DB;
	struct prof_trace again;
	struct rd_opts quiet = *o; /* the first reading said it all */
	quiet.err = fopen("/dev/null", "w");
	int r = prof_trace_read_stream(in, tr->path, size, quiet.err ? &quiet : o, &again, chrome_record, c);
	if (quiet.err)
		fclose(quiet.err);
	fclose(in);
	for (size_t i = 0; i < c->nthr; i++) {
		struct ch_thread *t = &c->thr[i];
		uint64_t end = t->now;
		for (size_t j = 0; j < again.sim.nthreads; j++)
			if (again.sim.threads[j]->thread == t->thread && again.sim.threads[j]->last > end)
				end = again.sim.threads[j]->last;
		chrome_pop_to(c, t, 0, end);
		if (c->sm)
			chrome_sample_close(c, t, 0, t->send);
	}
	prof_trace_free(&again);
	return r;
}

static ssize_t chrome_sink(void *cookie, const char *buf, size_t n)
{
	(void)buf;
	*(uint64_t *)cookie += n;
	return (ssize_t)n;
}

/* The cut that keeps the events within max bytes: counted in a first
** reading when the trace could give more (a call is 2 words of the trace
** and ~100 bytes of JSON).  What is always written (names, counters) is
** written to a counting sink: the events get the rest. */
static int chrome_fit(struct chrome *c, const struct prof_trace *tr, const struct rd_opts *o,
		      const struct exp_chrome_opts *co, FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx)
{
	if (!co->max_bytes || tr->size * 16 < co->max_bytes)
		return 0;
	uint64_t fixed = 0;
	FILE *sink = fopencookie(&fixed, "w", (cookie_io_functions_t){.write = chrome_sink});
	if (!sink)
		return 0;
	FILE *out = c->f;
	c->f = sink, c->counting = true;
	chrome_meta(c, tr);
	int r = chrome_pass(c, tr, o, open, open_ctx);
	if (tr->h.clock != MEMINST_TRACE_CLOCK_CPU) { /* as exp_chrome_write */
		chrome_allocated(c);
		if (co->session)
			chrome_timeline(c, tr);
	}
	fclose(sink);
	c->f = out, c->counting = false, c->first = true, c->dropped = 0;
	memset(c->slices, 0, sizeof c->slices);
	for (size_t i = 0; i < c->nthr; i++) /* afresh for the writing */
		c->thr[i].off = true, c->thr[i].now = c->thr[i].send = 0;
	if (r > 1)
		return r;
	/* (and the file's first and last lines) */
	double budget = (double)co->max_bytes - (double)fixed - 256.0, sum = 0;
	int b = CHROME_BUCKETS;
	while (b > 0 && sum + c->hist_bytes[b - 1] <= budget)
		sum += c->hist_bytes[--b];
	if (b > 0) { /* bucket b-1 does not fit: keep the durations of b and up */
		double cut = b < CHROME_BUCKETS ? (double)c->lower[b] : ldexp(1.0, 64);
		if (cut > c->min_ticks)
			c->min_ticks = cut;
	}
	return 0;
}

int exp_chrome_write(struct prof_trace *tr, const struct rd_opts *o, const struct exp_chrome_opts *co,
		     FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx, FILE *f, struct exp_chrome_result *res)
{
	struct rd_pool pool = {0};
	struct chrome c = {.f = f, .co = co, .first = true, .pid = tr->h.pid, .sm = co->samples,
			   .ns_per_tick = prof_ns_per_tick(tr), .t0 = tr->sim.first, .t1 = tr->sim.last};
	c.min_ticks = co->min_us * 1000.0 / c.ns_per_tick;
	chrome_buckets(&c);
	double asked = c.min_ticks;
	c.st = prof_symtab_new(tr, o, o->no_symbols, &pool);
	if (c.sm)
		prof_inline_init(&c.x, c.sm);
	int r = chrome_fit(&c, tr, o, co, open, open_ctx);
	if (!r) {
		fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
		chrome_meta(&c, tr);
		r = chrome_pass(&c, tr, o, open, open_ctx);
		if (tr->h.clock != MEMINST_TRACE_CLOCK_CPU) {
			chrome_allocated(&c);
			if (co->session)
				chrome_timeline(&c, tr);
		}
		fprintf(f, "\n],\"otherData\":{\"clock\":\"%s\",\"dropped_events\":%llu",
			prof_clock_name(tr->h.clock), (unsigned long long)c.dropped);
		prof_images_json(co->images, f); /* the other programs of the process */
		fputs("}}\n", f);
	}
	for (size_t i = 0; i < c.nthr; i++) {
		free(c.thr[i].stack);
		free(c.thr[i].sstack);
	}
	free(c.thr);
	free(c.fids);
	if (c.sm)
		prof_inline_free(&c.x);
	prof_symtab_free(c.st);
	rd_pool_free(&pool);
	*res = (struct exp_chrome_result){c.dropped, c.written, c.min_ticks * c.ns_per_tick / 1000.0,
					  c.min_ticks > asked};
	return r;
}
