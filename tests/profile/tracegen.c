/*
** tracegen — write a meminst trace file (<meminst-trace.h>) from a script,
** with exactly the records and time stamps asked for.  The profile tests
** use it to make traces with known results, the fuzz seeds and the
** benchmark's large trace.
**
**   tracegen OUT < SCRIPT
**   tracegen --bench N OUT      N call/return events over 2 threads
**
** Script lines (blank lines and '#' comments are skipped):
**   header [clock wall|cpu|tsc] [hz N] [flags N] [version N] [pid N]
**                                  must come first if given
**   THREAD call TIME FN [SITE]     THREAD ret TIME FN
**   THREAD start TIME TID NAME [PARENT]     THREAD exit TIME
**   THREAD suspend BEGIN END [REASON]       THREAD alloc BEGIN END [OP SIZE]
**   THREAD clock TIME NS           THREAD on TIME     THREAD off TIME
**   THREAD lost TIME N             THREAD pair TIME FN CALLER CNT ACC OWN
**   THREAD module TIME START END OFFSET PATH [BUILDID_HEX]
**   THREAD process TIME EXE [ARGS...]
**   THREAD sample TIME WEIGHT PC [RA...]      a timer sample (innermost first)
**   THREAD asample TIME BYTES SIZE RA [RA...] an allocation sample
**   THREAD counts TIME FN N [FN N...]         exact call counts
**   THREAD reset TIME              THREAD ccost TIME PS
**   THREAD scost TIME TICKS RUNS   the sampler's cost
**   THREAD tcost TIME PS...        the tracer's cost (MEMINST_TCOST_* order)
**   THREAD raw W0 W1 ...           words as given (bad records)
**   THREAD flush                   end THREAD's current chunk here
** Each thread's records go into its own chunk, written when the thread is
** flushed or at the end (in thread order), so chunks interleave as the
** script says.  Numbers are decimal or 0x hex.
*/
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meminst-trace.h"

#define MAXT 64
#define MAXW (1 << 16)

static uint64_t buf[MAXT][MAXW];
static size_t nbuf[MAXT];
static uint64_t seq[MAXT];
static FILE *out;

static void flush(unsigned t)
{
	if (!nbuf[t])
		return;
	struct meminst_trace_chunk c = {MEMINST_TRACE_CHUNK_MAGIC, (uint32_t)nbuf[t], t, 0, 0, seq[t]++,
					meminst_trace_checksum(buf[t], nbuf[t])};
	fwrite(&c, sizeof c, 1, out);
	fwrite(buf[t], 8, nbuf[t], out);
	nbuf[t] = 0;
}

static void put(unsigned t, uint64_t w)
{
	if (nbuf[t] == MAXW)
		flush(t);
	buf[t][nbuf[t]++] = w;
}

static uint64_t num(const char *s)
{
	return s ? strtoull(s, NULL, 0) : 0;
}

static void header(char **tok, int n)
{
	struct meminst_trace_header h = {.version = MEMINST_TRACE_VERSION, .header_size = sizeof h,
					 .pid = 4242, .clock = MEMINST_TRACE_CLOCK_MONO,
					 .flags = MEMINST_TRACE_F_CALLS, .tick_hz = 1e9};
	memcpy(h.magic, MEMINST_TRACE_MAGIC, 8);
	for (int i = 1; i + 1 < n; i += 2) {
		const char *k = tok[i], *v = tok[i + 1];
		if (!strcmp(k, "clock"))
			h.clock = !strcmp(v, "cpu") ? MEMINST_TRACE_CLOCK_CPU
				: !strcmp(v, "tsc") ? MEMINST_TRACE_CLOCK_TSC : MEMINST_TRACE_CLOCK_MONO;
		else if (!strcmp(k, "hz"))
			h.tick_hz = strtod(v, NULL);
		else if (!strcmp(k, "flags"))
			h.flags = (uint32_t)num(v);
		else if (!strcmp(k, "version"))
			h.version = (uint32_t)num(v);
		else if (!strcmp(k, "pid"))
			h.pid = (uint32_t)num(v);
	}
	fwrite(&h, sizeof h, 1, out);
}

static void text(unsigned t, unsigned kind, uint64_t time, const char *s, size_t len, const uint64_t *pre,
		 size_t npre, size_t extra)
{
	size_t words = 2 + npre + (len + 7) / 8;
	put(t, MEMINST_TREC_HEAD(kind, time));
	put(t, MEMINST_TREC_SIZE_WORD(words, extra));
	for (size_t i = 0; i < npre; i++)
		put(t, pre[i]);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;
		memcpy(&w, s + i, len - i < 8 ? len - i : 8);
		put(t, w);
	}
}

static void module(unsigned t, char **tok, int n)
{
	uint64_t pre[4] = {num(tok[3]), num(tok[4]), num(tok[5]), 0};
	unsigned char id[64];
	size_t idlen = 0;
	if (n > 7)
		for (const char *h = tok[7]; h[0] && h[1] && idlen < sizeof id; h += 2)
			id[idlen++] = (unsigned char)strtoul((char[3]){h[0], h[1], 0}, NULL, 16);
	pre[3] = idlen;
	char body[8192];
	size_t idw = (idlen + 7) / 8 * 8, plen = strlen(tok[6]);
	memset(body, 0, sizeof body);
	memcpy(body, id, idlen);
	memcpy(body + idw, tok[6], plen);
	/* the build-id words, then the path words; extra = path bytes */
	size_t words = 2 + 4 + idw / 8 + (plen + 7) / 8;
	put(t, MEMINST_TREC_HEAD(MEMINST_TREC_MODULE, num(tok[2])));
	put(t, MEMINST_TREC_SIZE_WORD(words, plen));
	for (int i = 0; i < 4; i++)
		put(t, pre[i]);
	for (size_t i = 0; i < idw + (plen + 7) / 8 * 8; i += 8) {
		uint64_t w;
		memcpy(&w, body + i, 8);
		put(t, w);
	}
}

static void line(char **tok, int n)
{
	if (!strcmp(tok[0], "header"))
		return header(tok, n);
	unsigned t = (unsigned)num(tok[0]) % MAXT;
	const char *k = n > 1 ? tok[1] : "";
	uint64_t ts = n > 2 ? num(tok[2]) : 0;
	if (!strcmp(k, "flush"))
		return flush(t);
	if (!strcmp(k, "raw")) {
		for (int i = 2; i < n; i++)
			put(t, num(tok[i]));
		return;
	}
	if (!strcmp(k, "module"))
		return module(t, tok, n);
	if (!strcmp(k, "process")) {
		char s[4096];
		size_t len = 0;
		for (int i = 3; i < n && len + strlen(tok[i]) + 1 < sizeof s; i++) {
			memcpy(s + len, tok[i], strlen(tok[i]) + 1);
			len += strlen(tok[i]) + 1;
		}
		return text(t, MEMINST_TREC_PROCESS, ts, s, len, NULL, 0, len);
	}
	static const struct { const char *k; unsigned kind, pre; } vars[] = {
		{"sample", MEMINST_TREC_SAMPLE, 1}, {"asample", MEMINST_TREC_ALLOC_SAMPLE, 2},
		{"counts", MEMINST_TREC_COUNTS, 0}, {"reset", MEMINST_TREC_SAMPLE_RESET, 0},
		{"ccost", MEMINST_TREC_COUNTS_COST, 0}, {"scost", MEMINST_TREC_SAMPLE_COST, 0},
		{"tcost", MEMINST_TREC_TRACE_COST, 0}};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		if (strcmp(k, vars[i].k))
			continue;
		int nw = n > 3 ? n - 3 : 0; /* words after the size word */
		size_t extra = vars[i].kind == MEMINST_TREC_COUNTS ? (size_t)nw / 2
			       : vars[i].pre ? (size_t)(nw - (int)vars[i].pre) : 0;
		put(t, MEMINST_TREC_HEAD(vars[i].kind, ts));
		put(t, MEMINST_TREC_SIZE_WORD(2 + nw, extra));
		for (int a = 3; a < n; a++)
			put(t, num(tok[a]));
		return;
	}
	if (!strcmp(k, "pair")) {
		uint64_t r[5] = {num(tok[3]), num(tok[4]), num(tok[5]), num(tok[6]), num(tok[7])};
		return text(t, MEMINST_TREC_PROF_PAIR, ts, (const char *)r, sizeof r, NULL, 0, 0);
	}
	static const struct { const char *k; unsigned kind, args; } fixed[] = {
		{"call", MEMINST_TREC_CALL, 2}, {"ret", MEMINST_TREC_RETURN, 1},
		{"exit", MEMINST_TREC_THREAD_EXIT, 0}, {"suspend", MEMINST_TREC_SUSPEND, 2},
		{"alloc", MEMINST_TREC_ALLOC, 2}, {"clock", MEMINST_TREC_CLOCK, 1},
		{"on", MEMINST_TREC_TRACE_ON, 0}, {"off", MEMINST_TREC_TRACE_OFF, 0},
		{"lost", MEMINST_TREC_LOST, 1}};
	if (!strcmp(k, "start")) {
		char name[16] = {0};
		strncpy(name, n > 4 ? tok[4] : "", sizeof name);
		uint64_t w[2];
		memcpy(w, name, 16);
		put(t, MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_START, ts));
		put(t, (num(tok[3]) & 0xffffffffu) | num(n > 5 ? tok[5] : NULL) << 32);
		put(t, w[0]);
		put(t, w[1]);
		return;
	}
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		if (strcmp(k, fixed[i].k))
			continue;
		put(t, MEMINST_TREC_HEAD(fixed[i].kind, ts));
		if (!strcmp(k, "alloc")) {
			put(t, num(tok[3]));
			put(t, (n > 4 ? num(tok[4]) : 1) | (n > 5 ? num(tok[5]) : 0) << 8);
			return;
		}
		for (unsigned a = 0; a < fixed[i].args; a++)
			put(t, 3 + (int)a < n ? num(tok[3 + a]) : (!strcmp(k, "suspend") ? 1 : 0));
		return;
	}
	fprintf(stderr, "tracegen: unknown line kind '%s'\n", k);
	exit(2);
}

/* N events: two threads, each a loop of calls three deep under main, with
** some recursion, suspends and allocations, in chunks of 4096 words. */
static void bench(uint64_t n)
{
	char *h[] = {"header"};
	header(h, 1);
	uint64_t ts[3] = {0, 0, 0}, done = 0;
	for (unsigned t = 1; t <= 2; t++) {
		put(t, MEMINST_TREC_HEAD(MEMINST_TREC_CALL, 0));
		put(t, 0x401000);
		put(t, 0);
	}
	while (done < n) {
		for (unsigned t = 1; t <= 2; t++) {
			for (int i = 0; i < 64; i++) {
				uint64_t f = 0x402000 + 0x100 * (uint64_t)(i % 17), g = 0x403000 + 0x40 * (uint64_t)(i % 5);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_CALL, ts[t] += 3)), put(t, f), put(t, 0x401010);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_CALL, ts[t] += 5)), put(t, g), put(t, f + 8);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_CALL, ts[t] += 2)), put(t, g), put(t, g + 8);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_RETURN, ts[t] += 7)), put(t, g);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_RETURN, ts[t] += 1)), put(t, g);
				put(t, MEMINST_TREC_HEAD(MEMINST_TREC_RETURN, ts[t] += 4)), put(t, f);
				done += 6;
			}
			if (nbuf[t] > 4000)
				flush(t);
		}
	}
	flush(1);
	flush(2);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--bench")) {
		if (!(out = fopen(argv[3], "wb")))
			return perror(argv[3]), 1;
		bench(num(argv[2]));
		return fclose(out) != 0;
	}
	if (argc != 2) {
		fputs("usage: tracegen OUT < SCRIPT | tracegen --bench N OUT\n", stderr);
		return 2;
	}
	if (!(out = fopen(argv[1], "wb")))
		return perror(argv[1]), 1;
	char l[8192];
	bool have_header = false;
	while (fgets(l, sizeof l, stdin)) {
		char *tok[64], *save;
		int n = 0;
		for (char *p = strtok_r(l, " \t\r\n", &save); p && n < 64; p = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = p;
		if (n == 0 || tok[0][0] == '#')
			continue;
		if (!have_header && strcmp(tok[0], "header")) {
			char *h[] = {"header"};
			header(h, 1);
		}
		have_header = true;
		line(tok, n);
	}
	for (unsigned t = 0; t < MAXT; t++)
		flush(t);
	return fclose(out) != 0;
}
