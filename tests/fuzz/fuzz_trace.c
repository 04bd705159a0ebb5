/*
** fuzz_trace.c — libFuzzer target for the trace reader and the simulation
** engine (profile/prof_read.c, engine/eng_sim.c) and everything that consumes
** their result: the model, the fprof text and JSON, the callgrind export
** (with call sites), and --dump.
**
** Each input is a whole trace file, read from memory (fmemopen).  Beyond
** "no crash, no leak, no undefined behaviour": the reader returns 0 or
** RD_EXIT_DB, says at most one line on error (checked on a memory
** stream), and the model it gives is consistent — every pair names
** functions that exist and a thread's CNT is the sum of its rows.  Module
** files are never opened (no_symbols), so the input alone decides.
**
** Built by `make check-fuzz` (tests/fuzz/Makefile.inc) from this file and
** the sources of export/libexport.a, profile/libprof.a, engine/libengine.a
** and reader/libreader.a; `make check` builds it too and runs its saved
** inputs once (tests/fuzz/replay.sh).
*/
#include "exp_int.h"

#include <stdlib.h>
#include <string.h>

static FILE *fz_null(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void fz_check_model(const struct prof_model *m)
{
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct prof_mthread *t = &m->threads[i];
		uint64_t cnt = 0;
		for (size_t k = 0; k < t->nrows; k++) {
			if (t->rows[k].fn >= m->nfuncs)
				abort();
			cnt += t->rows[k].cnt;
		}
		if (cnt != t->cnt)
			abort();
		for (size_t k = 0; k < t->npairs; k++)
			if (t->pairs[k].caller >= m->nfuncs || t->pairs[k].called >= m->nfuncs)
				abort();
	}
	for (size_t k = 0; k < m->nsites; k++) /* call sites (CALL records that carry one) */
		if (m->sites[k].caller >= m->nfuncs || m->sites[k].called >= m->nfuncs || m->sites[k].line < 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	char *errbuf = NULL;
	size_t errlen = 0;
	FILE *err = open_memstream(&errbuf, &errlen);
	struct rd_opts o = {.out = fz_null(), .err = err, .no_symbols = true, .no_control = true};
	FILE *f = fmemopen((void *)data, size, "rb");
	struct prof_trace tr;
	int r = prof_trace_read_stream(f, "fuzz", size, &o, &tr, NULL, NULL);
	fclose(f);
	fflush(err);
	if (r != 0 && r != RD_EXIT_DB)
		abort();
	/* one line on error; a cut-short warning is one line too */
	size_t lines = 0;
	for (size_t i = 0; i < errlen; i++)
		lines += errbuf[i] == '\n';
	if (lines > 1 || (r && lines != 1))
		abort();
	if (r == 0) {
		struct prof_model m;
		prof_model_from_trace(&m, &tr, &o, true);
		fz_check_model(&m);
		struct prof_aopts ao = {.sort = PROF_SORT_ACC, .callers = true, .totals = true, .details = true, .cols = 80};
		prof_analyse_text(&m, &ao, fz_null());
		ao.sort = PROF_SORT_OWN;
		prof_analyse_json(&m, &ao, fz_null());
		exp_callgrind_write(&m, NULL, fz_null()); /* calls at their sites' lines */
		struct rd_pool pool = {0};
		struct prof_dump d = {fz_null(), prof_symtab_new(&tr, &o, true, &pool), prof_ns_per_tick(&tr), &tr};
		struct prof_trace again;
		struct prof_samples *s = prof_samples_new();
		f = fmemopen((void *)data, size, "rb");
		prof_samples_begin(s);
		int r2 = prof_trace_read_ex(f, "fuzz", size, &o, &again, prof_dump_record, &d, s);
		fclose(f);
		/* the sampling displays, every style */
		struct prof_smodel sm;
		if (r2 == 0 && prof_samples_count(s) && prof_smodel_build(&sm, s, &again, &o, true,
			&(struct prof_sopts){.style = PROF_ST_FLAT, .top = 25, .cutoff = 0.5}) == 0) {
			for (int st = PROF_ST_FLAT; st <= PROF_ST_ANOMALIES; st++)
				for (int json = 0; json < 2; json++)
					prof_display(&sm, &sm, &(struct prof_sopts){.style = (enum prof_style)st,
						     .top = 25, .cutoff = 0.5, .json = json}, fz_null());
			prof_smodel_free(&sm);
		}
		prof_samples_free(s);
		prof_trace_free(&again);
		prof_symtab_free(d.syms);
		rd_pool_free(&pool);
		prof_model_free(&m);
	}
	prof_trace_free(&tr);
	fclose(err);
	free(errbuf);
	return 0;
}
