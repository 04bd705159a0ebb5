/*
** prof_dump.c — `inspect profile --dump`: every record of a trace as one
** line of text, in file order (chunks of different threads interleave):
**
**     THREAD  TIME_MS  KIND  details
**
** TIME_MS is the record's time stamp in milliseconds since the trace's t0
** (six decimals); code addresses are shown by name (see prof_sym.c).
*/
#include "prof_int.h"

#include <string.h>

static const char *dump_kind(unsigned k)
{
	static const char *const fixed[] = {"?", "call", "return", "thread_start", "thread_exit",
					    "suspend", "alloc", "clock", "trace_on", "trace_off", "lost"};
	static const char *const var[] = {"sample", "alloc_sample", "module", "process", "counts",
					  "prof_pair", "process_exit", "sample_reset", "counts_cost",
					  "sample_cost", "trace_cost", "end"};
	if (k <= MEMINST_TREC_FIXED_MAX)
		return fixed[k];
	if (k >= MEMINST_TREC_VARIABLE && k <= MEMINST_TREC_END)
		return var[k - MEMINST_TREC_VARIABLE];
	if (k == MEMINST_TREC_ALLOC_BLOCK) /* after the "alloc" line it stands for */
		return "alloc_block";
	if (k == MEMINST_TREC_ALLOC_AT) /* the same */
		return "alloc_at";
	return "unknown";
}

static void dump_name(struct prof_dump *d, uint64_t addr)
{
	size_t n;
	if (addr <= ENG_FN_PSEUDO_MAX) {
		fprintf(d->f, "0x%llx", (unsigned long long)addr);
		return;
	}
	uint32_t i = prof_symtab_index(d->syms, addr);
	const struct prof_func *f = prof_symtab_funcs(d->syms, &n);
	char buf[512];
	size_t w;
	rd_text_str(f[i].name, buf, sizeof buf, &w);
	fputs(buf, d->f);
}

static void dump_ms(FILE *f, double ms)
{
	fprintf(f, "%.6f", ms);
}

static void dump_frames(struct prof_dump *d, const uint64_t *fr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs(i ? " <- " : " ", d->f);
		dump_name(d, fr[i]);
	}
}

static void dump_fixed(struct prof_dump *d, const uint64_t *r)
{
	static const char *const reasons[] = {"?", "sleep", "poll", "lock", "cond", "join", "io", "other",
					      "trace-wait", "snapshot", "preempted"};
	static const char *const ops[] = {"?", "malloc", "calloc", "realloc", "aligned", "free", "new", "delete"};
	FILE *f = d->f;
	uint64_t t = MEMINST_TREC_TIME(r[0]);
	switch (MEMINST_TREC_KIND(r[0])) {
	case MEMINST_TREC_CALL:
		fputc(' ', f);
		dump_name(d, r[1]);
		if (r[2]) { /* 0: a one-word call, no site (trace_sites off) */
			fputs(" from ", f);
			dump_name(d, r[2]);
		}
		break;
	case MEMINST_TREC_RETURN:
		fputc(' ', f);
		dump_name(d, r[1]);
		break;
	case MEMINST_TREC_THREAD_START: {
		char name[17], buf[80];
		size_t w;
		memcpy(name, &r[2], 16);
		name[16] = 0;
		rd_text_str(name, buf, sizeof buf, &w);
		fprintf(f, " tid %llu parent %llu \"%s\"", (unsigned long long)(r[1] & 0xffffffffu),
			(unsigned long long)(r[1] >> 32), buf);
		break;
	}
	case MEMINST_TREC_SUSPEND:
	case MEMINST_TREC_ALLOC:
		fputs(" for ", f);
		dump_ms(f, r[1] > t ? (double)(r[1] - t) * d->ns_per_tick / 1e6 : 0.0);
		fputs(" ms", f);
		if (MEMINST_TREC_KIND(r[0]) == MEMINST_TREC_SUSPEND)
			fprintf(f, " %s", reasons[r[2] < sizeof reasons / sizeof *reasons ? r[2] : 0]);
		else
			fprintf(f, " %s %llu bytes", ops[(r[2] & 0xff) < 8 ? (r[2] & 0xff) : 0],
				(unsigned long long)(r[2] >> 8));
		break;
	case MEMINST_TREC_CLOCK:
		fprintf(f, " %llu ns", (unsigned long long)r[1]);
		break;
	case MEMINST_TREC_LOST:
		fprintf(f, " %llu records", (unsigned long long)r[1]);
		break;
	}
}

static void dump_variable(struct prof_dump *d, const uint64_t *r, size_t n)
{
	FILE *f = d->f;
	uint64_t extra = r[1] >> 32;
	char buf[1024];
	size_t w;
	switch (MEMINST_TREC_KIND(r[0])) {
	case MEMINST_TREC_SAMPLE:
		fprintf(f, " weight %llu,", (unsigned long long)r[2]);
		dump_frames(d, r + 3, (size_t)extra);
		break;
	case MEMINST_TREC_ALLOC_SAMPLE:
		fprintf(f, " %llu bytes (request %llu),", (unsigned long long)r[2], (unsigned long long)r[3]);
		dump_frames(d, r + 4, (size_t)extra);
		break;
	case MEMINST_TREC_MODULE: {
		size_t plen = (size_t)extra < sizeof buf - 1 ? (size_t)extra : sizeof buf - 1;
		char path[1024];
		memcpy(path, (const char *)(r + 6 + (r[5] + 7) / 8), plen);
		path[plen] = 0;
		rd_text_str(path, buf, sizeof buf, &w);
		fprintf(f, " 0x%llx-0x%llx offset 0x%llx %s", (unsigned long long)r[2], (unsigned long long)r[3],
			(unsigned long long)r[4], buf);
		break;
	}
	case MEMINST_TREC_PROCESS: {
		size_t len = (size_t)extra < sizeof buf - 1 ? (size_t)extra : sizeof buf - 1;
		char text[1024];
		memcpy(text, r + 2, len);
		for (size_t i = 0; i < len; i++)
			text[i] = text[i] ? text[i] : ' ';
		while (len && text[len - 1] == ' ')
			len--;
		text[len] = 0;
		rd_text_str(text, buf, sizeof buf, &w);
		fprintf(f, " %s", buf);
		break;
	}
	case MEMINST_TREC_COUNTS:
		fprintf(f, " %llu functions", (unsigned long long)extra);
		break;
	case MEMINST_TREC_PROF_PAIR: {
		unsigned row = meminst_tprof_row_words(r[1]);
		for (size_t i = 2; i + row <= n; i += row) {
			fputc(' ', f);
			dump_name(d, r[i + 1]);
			fputs(" -> ", f);
			dump_name(d, r[i]);
			fprintf(f, " cnt %llu acc %llu own %llu ticks", (unsigned long long)r[i + 2],
				(unsigned long long)r[i + 3], (unsigned long long)r[i + 4]);
			if (row >= MEMINST_TPROF_ROW_MEM)
				fprintf(f, " bytes own %llu acc %llu", (unsigned long long)r[i + 5],
					(unsigned long long)r[i + 7]);
			fputc(';', f);
		}
		break;
	}
	case MEMINST_TREC_PROCESS_EXIT:
		fprintf(f, " status %lld", (long long)r[2]);
		break;
	case MEMINST_TREC_ALLOC_BLOCK:
		if (n >= 4)
			fprintf(f, " allocation number %llu", (unsigned long long)meminst_trec_block_seq(r, n));
		break;
	case MEMINST_TREC_ALLOC_AT: {
		uint64_t seq;
		fprintf(f, " site %#llx", (unsigned long long)meminst_trec_at_site(r));
		if (meminst_trec_at_inner(r) != UINT64_MAX)
			fprintf(f, " allocator %llu ticks", (unsigned long long)meminst_trec_at_inner(r));
		if (meminst_trec_alloc_seq(r, n, &seq))
			fprintf(f, " allocation number %llu", (unsigned long long)seq);
		break;
	}
	case MEMINST_TREC_TRACE_COST: { /* MEMINST_TCOST_* order */
		static const char *const names[] = {"call", "alloc_in", "alloc_out", "cc", "cr", "rr", "rc", "lrr", "lrc",
						    "inner"};
		for (size_t i = 2; i < n && i - 2 < sizeof names / sizeof names[0]; i++)
			fprintf(f, " %s %llu ps", names[i - 2], (unsigned long long)r[i]);
		break;
	}
	}
}

void prof_dump_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread,
		      unsigned stream, const uint64_t *r, size_t n)
{
	struct prof_dump *d = ctx;
	unsigned k = MEMINST_TREC_KIND(r[0]);
	(void)h;
	fprintf(d->f, "%u%s ", thread, stream == MEMINST_TRACE_STREAM_SIGNAL ? "s" : "");
	dump_ms(d->f, (double)MEMINST_TREC_TIME(r[0]) * d->ns_per_tick / 1e6);
	fprintf(d->f, " %s", dump_kind(k));
	if (k < MEMINST_TREC_VARIABLE)
		dump_fixed(d, r);
	else
		dump_variable(d, r, n);
	fputc('\n', d->f);
}
