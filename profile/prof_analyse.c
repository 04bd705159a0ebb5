/*
** prof_analyse.c — `inspect analyse`: fprof's analysis in our own text form,
** and the same as JSON and as CSV.
**
** Text: a heading, the totals line, then per thread a header line and one
** paragraph per function: the functions that called it ("  " + name), the
** function itself marked with '*', the functions it called ("      " +
** name).  Columns CNT, ACC and OWN, times in milliseconds with three
** decimals; names are cut to fit --cols.  A caller row says how often that
** caller called the function and the function's ACC and OWN in those
** calls; a called row the same for the called function, so one pair shows
** up in two paragraphs with the same figures, as in fprof.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>

#define NUMW 13 /* width of each number column */

/* ------------------------------------------------------------ sorting -- */

static enum prof_sort an_sort;

static int an_key_cmp(int64_t acc_a, int64_t own_a, int64_t acc_b, int64_t own_b)
{
	int64_t a1 = an_sort == PROF_SORT_OWN ? own_a : acc_a, b1 = an_sort == PROF_SORT_OWN ? own_b : acc_b;
	int64_t a2 = an_sort == PROF_SORT_OWN ? acc_a : own_a, b2 = an_sort == PROF_SORT_OWN ? acc_b : own_b;
	if (a1 != b1)
		return a1 < b1 ? 1 : -1;
	if (a2 != b2)
		return a2 < b2 ? 1 : -1;
	return 0;
}

static int an_row_cmp(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;
	int c = an_key_cmp(x->acc, x->own, y->acc, y->own);
	return c ? c : (x->fn > y->fn) - (x->fn < y->fn);
}

static int an_pair_cmp(const void *a, const void *b)
{
	const struct prof_pair *x = *(const struct prof_pair *const *)a, *y = *(const struct prof_pair *const *)b;
	int c = an_key_cmp(x->acc, x->own, y->acc, y->own);
	if (c)
		return c;
	if (x->caller != y->caller)
		return (x->caller > y->caller) - (x->caller < y->caller);
	return (x->called > y->called) - (x->called < y->called);
}

static int an_by_called_cmp(const void *a, const void *b)
{
	const struct prof_pair *x = *(const struct prof_pair *const *)a, *y = *(const struct prof_pair *const *)b;
	if (x->called != y->called)
		return (x->called > y->called) - (x->called < y->called);
	return an_pair_cmp(a, b);
}

static int an_by_caller_cmp(const void *a, const void *b)
{
	const struct prof_pair *x = *(const struct prof_pair *const *)a, *y = *(const struct prof_pair *const *)b;
	if (x->caller != y->caller)
		return (x->caller > y->caller) - (x->caller < y->caller);
	return an_pair_cmp(a, b);
}

/* A thread ready for printing: rows sorted by the key, pairs grouped by
** called and by caller function, each group sorted by the key. */
struct an_thread {
	struct prof_row *rows;   /* the program's functions, then the kept out */
	size_t nrows, nkept;
	uint64_t kept_cnt;       /* the pauses that are not the program's      */
	int64_t kept_own;
	const struct prof_pair **by_called, **by_caller;
	size_t npairs;
};

/* The pauses that are not the program's (meminst's own, pre-emption):
** kept out of its functions' OWN and ACC, and out of the thread's and the
** totals' figures, in the text and the JSON alike, so that shares of a
** total come out the same from either. */
bool prof_kept_out(uint64_t addr)
{
	return addr == ENG_FN_PREEMPTED || addr == ENG_FN_TRACE_WAIT || addr == ENG_FN_SNAPSHOT ||
	       addr == ENG_FN_MEMINST;
}

/* focus: only that function's row (its callers and called stay). */
static void an_prepare(const struct prof_model *m, const struct prof_mthread *t, enum prof_sort sort,
		       const char *focus, struct an_thread *a)
{
	an_sort = sort;
	a->rows = rd_xcalloc(t->nrows + 1, sizeof *a->rows);
	a->nrows = a->nkept = 0;
	a->kept_cnt = 0;
	a->kept_own = 0;
	for (size_t i = 0; i < t->nrows; i++) /* the kept out at the end */
		if (!prof_kept_out(m->funcs[t->rows[i].fn].addr) && (!focus || !strcmp(m->funcs[t->rows[i].fn].name, focus)))
			a->rows[a->nrows++] = t->rows[i];
	for (size_t i = 0; i < t->nrows; i++)
		if (prof_kept_out(m->funcs[t->rows[i].fn].addr)) {
			if (!focus || !strcmp(m->funcs[t->rows[i].fn].name, focus))
				a->rows[a->nrows + a->nkept++] = t->rows[i];
			a->kept_cnt += t->rows[i].cnt;
			a->kept_own += t->rows[i].own;
		}
	qsort(a->rows, a->nrows, sizeof *a->rows, an_row_cmp);
	qsort(a->rows + a->nrows, a->nkept, sizeof *a->rows, an_row_cmp);
	a->by_called = rd_xcalloc(t->npairs + 1, sizeof *a->by_called);
	a->by_caller = rd_xcalloc(t->npairs + 1, sizeof *a->by_caller);
	for (size_t i = 0; i < t->npairs; i++)
		a->by_called[i] = a->by_caller[i] = &t->pairs[i];
	a->npairs = t->npairs;
	qsort(a->by_called, a->npairs, sizeof *a->by_called, an_by_called_cmp);
	qsort(a->by_caller, a->npairs, sizeof *a->by_caller, an_by_caller_cmp);
}

static void an_release(struct an_thread *a)
{
	free(a->rows);
	free(a->by_called);
	free(a->by_caller);
}

typedef void (*an_pair_fn)(void *ctx, const struct prof_pair *p, uint32_t other);

/* The callers of fn (want_called false) or the functions it called, in
** the key's order. */
static void an_each_pair(const struct an_thread *a, uint32_t fn, bool want_called, an_pair_fn cb, void *ctx)
{
	const struct prof_pair **v = want_called ? a->by_caller : a->by_called;
	size_t lo = 0, hi = a->npairs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((want_called ? v[mid]->caller : v[mid]->called) < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < a->npairs && (want_called ? v[i]->caller : v[i]->called) == fn; i++)
		cb(ctx, v[i], want_called ? v[i]->called : v[i]->caller);
}

/* --------------------------------------------------------------- text -- */

struct an_text {
	const struct prof_model *m;
	const struct prof_aopts *ao;
	FILE *f;
};

static void an_ms(char *buf, size_t len, int64_t ns)
{
	snprintf(buf, len, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(llabs(ns) / 1000000),
		 (long long)(llabs(ns) / 1000 % 1000));
}

/* The name column: what --cols leaves after the numbers; without a width
** (a file, a pipe) the layout of 80 columns, names never cut. */
static size_t an_namew(const struct prof_aopts *ao)
{
	return (size_t)(ao->cols > 0 ? ao->cols : 80) - 3 * NUMW;
}

/* One line: prefix and name in the name column, then the numbers.  A name
** too long for the column is cut to it ('~' last) when there is a width;
** without one it is printed whole on a line of its own, the numbers on the
** next, so that nothing is lost and the columns stay aligned. */
static void an_line(const struct an_text *x, const char *prefix, const char *name, uint64_t cnt,
		    const char *acc, int64_t own)
{
	size_t namew = an_namew(x->ao);
	char clean[8192], ob[32];
	size_t w;
	rd_text_str(name, clean, sizeof clean, &w);
	size_t pw = strlen(prefix), room = namew > pw + 1 ? namew - pw - 1 : 1;
	size_t cps = w;
	if (w > room && x->ao->cols == 0) {
		fprintf(x->f, "%s%s\n", prefix, clean);
		prefix = "";
		pw = 0;
		clean[0] = 0;
		cps = 0;
	} else if (w > room) { /* cut at `room` code points, the last one shown as '~' */
		cps = 0;
		for (size_t i = 0; clean[i]; i++) {
			if (((unsigned char)clean[i] & 0xc0) == 0x80)
				continue;
			if (cps == room - 1) {
				clean[i] = '~';
				clean[i + 1] = 0;
				cps++;
				break;
			}
			cps++;
		}
	}
	an_ms(ob, sizeof ob, own);
	fprintf(x->f, "%s%s%*s%*llu%*s%*s\n", prefix, clean, (int)(namew - pw - cps), "", NUMW,
		(unsigned long long)cnt, NUMW, acc, NUMW, ob);
}

static void an_line_ms(const struct an_text *x, const char *prefix, const char *name, uint64_t cnt,
		       int64_t acc, int64_t own)
{
	char ab[32];
	an_ms(ab, sizeof ab, acc);
	an_line(x, prefix, name, cnt, ab, own);
}

static void an_text_caller(void *ctx, const struct prof_pair *p, uint32_t other)
{
	const struct an_text *x = ctx;
	an_line_ms(x, "  ", x->m->funcs[other].name, p->cnt, p->acc, p->own);
}

static void an_text_called(void *ctx, const struct prof_pair *p, uint32_t other)
{
	const struct an_text *x = ctx;
	an_line_ms(x, "    ", x->m->funcs[other].name, p->cnt, p->acc, p->own);
}

static void an_paragraphs(const struct an_text *x, const struct an_thread *a)
{
	for (size_t i = 0; i < a->nrows + a->nkept; i++) {
		if (i == a->nrows && a->nkept)
			fputs("kept out of the figures above (not the program's time):\n\n", x->f);
		const struct prof_row *r = &a->rows[i];
		const struct prof_func *fn = &x->m->funcs[r->fn];
		if (x->ao->callers)
			an_each_pair(a, r->fn, false, an_text_caller, (void *)x);
		char name[4096];
		if (fn->file)
			snprintf(name, sizeof name, "%s  %s:%d", fn->name, fn->file, fn->line);
		else
			snprintf(name, sizeof name, "%s", fn->name);
		an_line_ms(x, "* ", name, r->cnt, r->acc, r->own);
		if (x->ao->callers)
			an_each_pair(a, r->fn, true, an_text_called, (void *)x);
		fputc('\n', x->f);
	}
}

/* The kept out pauses of every thread: their OWN, their count in *cnt. */
static int64_t an_kept_totals(const struct prof_model *m, uint64_t *cnt)
{
	int64_t own = 0;
	*cnt = 0;
	for (size_t i = 0; i < m->nthreads; i++)
		for (size_t j = 0; j < m->threads[i].nrows; j++)
			if (prof_kept_out(m->funcs[m->threads[i].rows[j].fn].addr))
				*cnt += m->threads[i].rows[j].cnt, own += m->threads[i].rows[j].own;
	return own;
}

static void an_text_head(const struct an_text *x)
{
	const struct prof_model *m = x->m;
	char exe[1024]; /* the trace's own bytes: no control character reaches the terminal */
	rd_text_str(m->exe ? m->exe : m->source ? m->source : "?", exe, sizeof exe, NULL);
	fprintf(x->f, "Profile of %s", exe);
	if (m->pid)
		fprintf(x->f, " (pid %lld)", (long long)m->pid);
	fprintf(x->f, ": %s clock, %zu thread%s, %llu records", prof_clock_name(m->clock), m->nthreads,
		m->nthreads == 1 ? "" : "s", (unsigned long long)m->events);
	if (m->lost)
		fprintf(x->f, ", %llu lost", (unsigned long long)m->lost);
	fputc('\n', x->f);
	prof_images_text(x->ao->images, x->f);
	fprintf(x->f, "Sorted by %s; times in ms.\n", x->ao->sort == PROF_SORT_OWN ? "OWN" : "ACC");
	prof_cost_text(m, x->f);
	fputc('\n', x->f);
	size_t namew = an_namew(x->ao);
	fprintf(x->f, "%*s%*s%*s%*s\n", (int)namew, "", NUMW, "CNT", NUMW, "ACC", NUMW, "OWN");
	uint64_t kcnt;
	int64_t kown = an_kept_totals(m, &kcnt);
	an_line_ms(x, "", "totals", m->cnt - kcnt, m->acc, m->own - kown);
	fputc('\n', x->f);
}

void prof_analyse_text(const struct prof_model *m, const struct prof_aopts *ao, FILE *f)
{
	struct an_text x = {m, ao, f};
	an_text_head(&x);
	if (ao->totals) {
		struct prof_mthread all;
		struct an_thread a;
		prof_model_merge(m, &all);
		an_prepare(m, &all, ao->sort, ao->focus, &a);
		an_line(&x, "", "all threads", all.cnt - a.kept_cnt, "-", all.own - a.kept_own);
		fputc('\n', f);
		an_paragraphs(&x, &a);
		an_release(&a);
		prof_mthread_free(&all);
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_mthread *t = &m->threads[i];
		char head[128];
		if (t->name)
			snprintf(head, sizeof head, "thread %u \"%s\" (tid %lld)", t->thread, t->name, (long long)t->tid);
		else
			snprintf(head, sizeof head, "thread %u (tid %lld)", t->thread, (long long)t->tid);
		struct an_thread a;
		an_prepare(m, t, ao->sort, ao->focus, &a);
		an_line(&x, "", head, t->cnt - a.kept_cnt, "-", t->own - a.kept_own);
		fputc('\n', f);
		if (ao->details)
			an_paragraphs(&x, &a);
		an_release(&a);
	}
}

/* -------------------------------------------------------- tracer cost -- */

/* The tracer's share of the run, in % of the profile's OWN time before
** compensation. */
double prof_cost_percent(const struct prof_model *m)
{
	const struct prof_tcost *c = &m->cost;
	int64_t raw = c->raw_own_ns ? c->raw_own_ns : m->own + c->taken_ns; /* older databases */
	int64_t all = raw + c->alloc_taken_ns;
	return all > 0 ? 100.0 * (double)(c->hooks_ns + c->alloc_taken_ns) / (double)all : 0.0;
}

/* Whether the times are compensated, in a few words (every display and
** export says it). */
const char *prof_cost_state(const struct prof_model *m)
{
	const struct prof_tcost *c = &m->cost;
	return !c->known ? "raw (the trace does not say the tracer's cost)"
	       : c->failed ? "raw: CALIBRATION FAILED"
	       : c->compensated ? "compensated" : "raw (--no-compensate)";
}

/* One paragraph under the head: what tracing cost the program (measured at
** its start), what was taken off, or why nothing was. */
void prof_cost_text(const struct prof_model *m, FILE *f)
{
	const struct prof_tcost *c = &m->cost;
	if (!c->known) {
		fputs("Tracer's own cost: not in this trace (written before meminst measured it); times raw.\n", f);
		prof_mi_text(m, f);
		return;
	}
	fprintf(f, "Tracer's own cost, measured at start: %.1f ns a call or return, %.1f ns an <alloc> call; "
		"estimated %.3f ms (%.1f%%) inside the functions' times", c->call_ns, c->alloc_out_ns,
		(double)c->hooks_ns / 1e6, prof_cost_percent(m));
	if (c->scale < 1)
		fprintf(f, " (the start's measure x %.2f, to fit the run: some functions held less than it)", c->scale);
	if (c->failed)
		fprintf(f, ".\nWARNING: calibration failed (%s): times NOT compensated, the tracer's cost is in "
			"them.\n", c->why);
	else if (c->compensated)
		fprintf(f, ", taken off (compensated times; --no-compensate for raw ones).\n");
	else
		fputs(", not taken off (--no-compensate).\n", f);
	if (c->allocs > c->mi_calls)
		fprintf(f, "<alloc> corrected: %llu calls x %.1f ns of the tracer's time stamps = %.3f ms "
			"taken off.\n", (unsigned long long)(c->allocs - c->mi_calls), c->alloc_ns,
			(double)c->alloc_taken_ns / 1e6);
	prof_mi_text(m, f);
	prof_kept_out_text(m, f);
}

/* meminst's work around the allocator, measured in each <alloc> call. */
void prof_mi_text(const struct prof_model *m, FILE *f)
{
	const struct prof_tcost *c = &m->cost;
	if (!c->mi_calls)
		return;
	fprintf(f, "meminst's own work around the allocator (bookkeeping, the tracer's stamps), measured in %llu "
		"<alloc> calls: %.3f ms, %.1f ns a call, %s.\n", (unsigned long long)c->mi_calls,
		(double)c->mi_ns / 1e6, (double)c->mi_ns / (double)c->mi_calls,
		c->mi_apart ? "taken off <alloc> and its callers' ACC into <meminst>"
			    : "left inside <alloc> (--no-compensate)");
}

/* The pauses that are not the program's (meminst's own, pre-emption), kept
** out of its functions' OWN and ACC, when the profile has any. */
void prof_kept_out_text(const struct prof_model *m, FILE *f)
{
	static const uint64_t kept[] = {ENG_FN_PREEMPTED, ENG_FN_TRACE_WAIT, ENG_FN_SNAPSHOT, ENG_FN_MEMINST};
	const char *sep = "Kept out of the functions' times: ";
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
		uint64_t cnt;
		const char *name = NULL;
		int64_t ns = prof_model_fn_own(m, kept[i], &cnt, &name);
		if (!cnt || !name)
			continue;
		fprintf(f, "%s%s %.3f ms (%llu)", sep, name, (double)ns / 1e6,
			(unsigned long long)cnt);
		sep = ", ";
	}
	if (sep[0] == ',')
		fputs(".\n", f);
}

void prof_cost_json(const struct prof_model *m, FILE *f)
{
	const struct prof_tcost *c = &m->cost;
	if (!c->known) {
		fputs(",\"tracer_cost\":null,\"compensated\":false", f);
		return;
	}
	fprintf(f, ",\"compensated\":%s,\"tracer_cost\":{\"percent\":%.4f,\"event_ps\":%.0f,"
		"\"alloc_event_ps\":%.0f,\"calls\":%llu,\"hooks_ms\":%.6f,\"hooks_taken_off\":%s,"
		"\"taken_off_ms\":%.6f,\"calibration_failed\":%s,\"alloc_each_ps\":%.0f,\"alloc_calls\":%llu,"
		"\"alloc_taken_off_ms\":%.6f,\"meminst_alloc_calls\":%llu,\"meminst_alloc_ms\":%.6f,"
		"\"meminst_alloc_apart\":%s,\"calibration_scale\":%.3f}",
		c->compensated ? "true" : "false", prof_cost_percent(m), c->call_ns * 1e3, c->alloc_out_ns * 1e3,
		(unsigned long long)c->calls, (double)c->hooks_ns / 1e6, c->compensated ? "true" : "false",
		(double)c->taken_ns / 1e6, c->failed ? "true" : "false", c->alloc_ns * 1e3,
		(unsigned long long)c->allocs, (double)c->alloc_taken_ns / 1e6, (unsigned long long)c->mi_calls,
		(double)c->mi_ns / 1e6, c->mi_apart && c->mi_calls ? "true" : "false", c->scale);
}

/* --------------------------------------------------------------- JSON -- */

struct an_json {
	const struct prof_model *m;
	FILE *f;
	bool first;
};

static void an_json_ms(FILE *f, int64_t ns)
{
	fprintf(f, "%s%lld.%06lld", ns < 0 ? "-" : "", (long long)(llabs(ns) / 1000000),
		(long long)(llabs(ns) % 1000000));
}

static void an_json_figures(FILE *f, uint64_t cnt, int64_t acc, int64_t own)
{
	fprintf(f, "\"calls\":%llu,\"acc_ms\":", (unsigned long long)cnt);
	an_json_ms(f, acc);
	fputs(",\"own_ms\":", f);
	an_json_ms(f, own);
}

/* Memory allocated (from <alloc> events): requested bytes and blocks. */
static void an_json_mem(FILE *f, const struct eng_mem *m)
{
	fprintf(f, ",\"own_bytes\":%llu,\"acc_bytes\":%llu,\"own_blocks\":%llu,\"acc_blocks\":%llu",
		(unsigned long long)m->own_bytes, (unsigned long long)m->acc_bytes,
		(unsigned long long)m->own_blocks, (unsigned long long)m->acc_blocks);
}

static void an_json_pair(void *ctx, const struct prof_pair *p, uint32_t other)
{
	struct an_json *j = ctx;
	fputs(j->first ? "{\"name\":" : ",{\"name\":", j->f);
	j->first = false;
	rd_json_str(j->f, j->m->funcs[other].name);
	fputc(',', j->f);
	an_json_figures(j->f, p->cnt, p->acc, p->own);
	an_json_mem(j->f, &p->mem);
	fputc('}', j->f);
}

static void an_json_rows(const struct prof_model *m, const struct an_thread *a, size_t from, size_t to, FILE *f)
{
	for (size_t i = from; i < to; i++) {
		const struct prof_row *r = &a->rows[i];
		const struct prof_func *fn = &m->funcs[r->fn];
		fputs(i > from ? ",{\"name\":" : "{\"name\":", f);
		rd_json_str(f, fn->name);
		fputs(",\"file\":", f);
		if (fn->file) {
			rd_json_str(f, fn->file);
			fprintf(f, ",\"line\":%d,", fn->line);
		} else {
			fputs("null,\"line\":null,", f);
		}
		an_json_figures(f, r->cnt, r->acc, r->own);
		an_json_mem(f, &r->mem);
		struct an_json j = {m, f, true};
		fputs(",\"callers\":[", f);
		an_each_pair(a, r->fn, false, an_json_pair, &j);
		fputs("],\"called\":[", f);
		j.first = true;
		an_each_pair(a, r->fn, true, an_json_pair, &j);
		fputs("]}", f);
	}
}

/* The program's functions ("functions"), then the pauses kept out of
** their figures and the thread's ("kept_out", the same shape). */
static void an_json_functions(const struct prof_model *m, const struct an_thread *a, FILE *f)
{
	fputs("\"functions\":[", f);
	an_json_rows(m, a, 0, a->nrows, f);
	fputs("],\"kept_out\":[", f);
	an_json_rows(m, a, a->nrows, a->nrows + a->nkept, f);
	fputc(']', f);
}

void prof_analyse_json(const struct prof_model *m, const struct prof_aopts *ao, FILE *f)
{
	uint64_t kcnt;
	int64_t kown = an_kept_totals(m, &kcnt);
	fprintf(f, "{\"clock\":\"%s\"", prof_clock_name(m->clock));
	prof_images_json(ao->images, f);
	fputs(",\"totals\":{", f);
	an_json_figures(f, m->cnt - kcnt, m->acc, m->own - kown);
	fputs(",\"kept_out_ms\":", f);
	an_json_ms(f, kown);
	fputc('}', f);
	prof_cost_json(m, f);
	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_mthread *t = &m->threads[i];
		struct an_thread a;
		an_prepare(m, t, ao->sort, ao->focus, &a);
		fprintf(f, "%s{\"thread\":%u,\"tid\":%lld,\"name\":", i ? "," : "", t->thread, (long long)t->tid);
		if (t->name)
			rd_json_str(f, t->name);
		else
			fputs("null", f);
		fputc(',', f);
		an_json_figures(f, t->cnt - a.kept_cnt, t->acc, t->own - a.kept_own);
		fputs(",\"kept_out_ms\":", f);
		an_json_ms(f, a.kept_own);
		fputc(',', f);
		an_json_functions(m, &a, f);
		an_release(&a);
		fputc('}', f);
	}
	fputc(']', f);
	if (ao->totals) {
		struct prof_mthread all;
		struct an_thread a;
		prof_model_merge(m, &all);
		an_prepare(m, &all, ao->sort, ao->focus, &a);
		fputc(',', f);
		an_json_functions(m, &a, f);
		an_release(&a);
		prof_mthread_free(&all);
	}
	fputs("}\n", f);
}

/* ---------------------------------------------------------------- CSV -- */

static void an_csv_ms(FILE *f, int64_t ns)
{
	fputc(',', f);
	an_json_ms(f, ns);
}

static void an_csv_figures(FILE *f, uint64_t cnt, int64_t acc, int64_t own, const struct eng_mem *mem)
{
	fprintf(f, ",%llu", (unsigned long long)cnt);
	an_csv_ms(f, acc);
	an_csv_ms(f, own);
	fprintf(f, ",%llu,%llu,%llu,%llu\n", (unsigned long long)mem->own_bytes,
		(unsigned long long)mem->acc_bytes, (unsigned long long)mem->own_blocks,
		(unsigned long long)mem->acc_blocks);
}

struct an_csv {
	const struct prof_model *m;
	const struct prof_mthread *t;
	uint32_t fn;
	FILE *f;
};

static void an_csv_pair(void *ctx, const struct prof_pair *p, uint32_t other)
{
	const struct an_csv *c = ctx;
	fprintf(c->f, "%u,", c->t->thread);
	rd_csv_str(c->f, c->m->funcs[c->fn].name);
	fputc(',', c->f);
	rd_csv_str(c->f, c->m->funcs[other].name);
	an_csv_figures(c->f, p->cnt, p->acc, p->own, &p->mem);
}

/* The same figures as the JSON, flat: one row per function and thread in
** the order of the text, then one row per caller->called pair (the JSON's
** "called" arrays), the two tables separated by an empty line. */
void prof_analyse_csv(const struct prof_model *m, const struct prof_aopts *ao, FILE *f)
{
	static const char figures[] = "calls,acc_ms,own_ms,own_bytes,acc_bytes,own_blocks,acc_blocks\n";
	fprintf(f, "thread,tid,name,file,line,%s", figures);
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_mthread *t = &m->threads[i];
		struct an_thread a;
		an_prepare(m, t, ao->sort, ao->focus, &a);
		for (size_t k = 0; k < a.nrows + a.nkept; k++) {
			const struct prof_func *fn = &m->funcs[a.rows[k].fn];
			fprintf(f, "%u,%lld,", t->thread, (long long)t->tid);
			rd_csv_str(f, fn->name);
			fputc(',', f);
			if (fn->file) {
				rd_csv_str(f, fn->file);
				fprintf(f, ",%d", fn->line);
			} else {
				fputc(',', f);
			}
			an_csv_figures(f, a.rows[k].cnt, a.rows[k].acc, a.rows[k].own, &a.rows[k].mem);
		}
		an_release(&a);
	}
	fprintf(f, "\nthread,caller,called,%s", figures);
	for (size_t i = 0; i < m->nthreads; i++) {
		struct an_thread a;
		an_prepare(m, &m->threads[i], ao->sort, ao->focus, &a);
		for (size_t k = 0; k < a.nrows + a.nkept; k++) {
			struct an_csv c = {m, &m->threads[i], a.rows[k].fn, f};
			an_each_pair(&a, a.rows[k].fn, true, an_csv_pair, &c);
		}
		an_release(&a);
	}
}
