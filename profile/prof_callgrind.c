/*
** prof_callgrind.c — the exact profile in the Callgrind format, for
** KCachegrind / QCachegrind and callgrind_annotate.
**
** Two events: Time (ns of the trace's clock) and Bytes (bytes allocated,
** from the trace's <alloc> events).  Every function is one `fn=` block:
** its self cost (OWN time, own bytes) on one cost line, then one call per
** callee: `calls=CNT` and the inclusive cost of those calls (the pair's
** ACC time and ACC bytes, charged once for recursion as in the profile).
** Threads are summed.  Positions are source lines (the function's first
** line; 0 when unknown); names and files are compressed as `(id) name`.
**
** Bytes are the caller's: `<alloc>` keeps its time but no bytes, so that
** the Bytes of all self costs add up to everything the functions
** allocated, as `inspect report` counts it.
*/
#include "prof_export.h"

#include <stdlib.h>
#include <string.h>

/* A name on one line: a line end would end the record. */
static void cg_str(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static int cg_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct source files, sorted, so that each gets one id. */
struct cg_files {
	const char **v;
	size_t n;
	bool *named;             /* the name was written once                  */
};

static const char *cg_file(const struct prof_func *fn)
{
	return fn->file ? fn->file : "???";
}

static void cg_files_init(struct cg_files *fl, const struct prof_model *m)
{
	fl->v = insp_xcalloc(m->nfuncs + 1, sizeof *fl->v);
	for (size_t i = 0; i < m->nfuncs; i++)
		fl->v[i] = cg_file(&m->funcs[i]);
	qsort(fl->v, m->nfuncs, sizeof *fl->v, cg_cmp_str);
	fl->n = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		if (!fl->n || strcmp(fl->v[fl->n - 1], fl->v[i]))
			fl->v[fl->n++] = fl->v[i];
	fl->named = insp_xcalloc(fl->n + 1, sizeof *fl->named);
}

static void cg_put_file(FILE *f, const char *key, struct cg_files *fl, const struct prof_func *fn)
{
	const char *name = cg_file(fn);
	const char **p = bsearch(&name, fl->v, fl->n, sizeof *fl->v, cg_cmp_str);
	size_t id = p ? (size_t)(p - fl->v) : 0;
	fprintf(f, "%s=(%zu)", key, id + 1);
	if (!fl->named[id]) {
		fputc(' ', f);
		cg_str(f, name);
		fl->named[id] = true;
	}
	fputc('\n', f);
}

static void cg_put_fn(FILE *f, const char *key, bool *named, const struct prof_model *m, uint32_t fn)
{
	fprintf(f, "%s=(%u)", key, fn + 1);
	if (!named[fn]) {
		fputc(' ', f);
		cg_str(f, m->funcs[fn].name);
		named[fn] = true;
	}
	fputc('\n', f);
}

static void cg_header(const struct prof_model *m, FILE *f)
{
	fputs("# callgrind format\nversion: 1\ncreator: inspect (" PACKAGE_NAME ") " PACKAGE_VERSION "\n", f);
	if (m->pid)
		fprintf(f, "pid: %lld\n", (long long)m->pid);
	if (m->cmdline || m->exe) {
		fputs("cmd: ", f);
		cg_str(f, m->cmdline && *m->cmdline ? m->cmdline : m->exe);
		fputc('\n', f);
	}
	fprintf(f, "positions: line\nevent: Time : time (ns, %s clock)\nevent: Bytes : bytes allocated\n"
		   "events: Time Bytes\n",
		prof_clock_name(m->clock));
}

void exp_callgrind_write(const struct prof_model *m, FILE *f)
{
	struct prof_mthread all;
	prof_model_merge(m, &all);
	struct cg_files fl;
	cg_files_init(&fl, m);
	bool *named = insp_xcalloc(m->nfuncs + 1, sizeof *named);
	uint64_t tot_time = 0, tot_bytes = 0;
	cg_header(m, f);
	size_t p = 0;
	for (size_t i = 0; i < all.nrows; i++) {
		const struct prof_row *r = &all.rows[i];
		if (r->fn == PROF_FN_UNDEFINED)
			continue;
		const struct prof_func *fn = &m->funcs[r->fn];
		uint64_t own = r->own > 0 ? (uint64_t)r->own : 0;
		uint64_t bytes = r->fn == PROF_FN_ALLOC ? 0 : r->mem.own_bytes;
		fputc('\n', f);
		cg_put_file(f, "fl", &fl, fn);
		cg_put_fn(f, "fn", named, m, r->fn);
		fprintf(f, "%d %llu %llu\n", fn->line, (unsigned long long)own, (unsigned long long)bytes);
		tot_time += own, tot_bytes += bytes;
		while (p < all.npairs && all.pairs[p].caller < r->fn)
			p++;
		for (; p < all.npairs && all.pairs[p].caller == r->fn; p++) {
			const struct prof_pair *c = &all.pairs[p];
			const struct prof_func *to = &m->funcs[c->called];
			cg_put_file(f, "cfi", &fl, to);
			cg_put_fn(f, "cfn", named, m, c->called);
			fprintf(f, "calls=%llu %d\n%d %llu %llu\n", (unsigned long long)c->cnt, to->line, fn->line,
				(unsigned long long)(c->acc > 0 ? c->acc : 0),
				(unsigned long long)(c->called == PROF_FN_ALLOC ? 0 : c->mem.acc_bytes));
		}
	}
	fprintf(f, "\ntotals: %llu %llu\n", (unsigned long long)tot_time, (unsigned long long)tot_bytes);
	free(named);
	free(fl.v);
	free(fl.named);
	prof_mthread_free(&all);
}
