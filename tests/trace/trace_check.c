/*
** trace_check.c — a small independent reader of meminst trace files for the
** tests of trace/: it checks the header and every chunk (magic, length,
** checksum, per-stream order) and prints what the tests assert on:
**
**   header CLOCK FLAGS PID PPID
**   chunks N [truncated AT]          the last incomplete chunk, if any
**   eventbytes B                     bytes of events-stream records (the
**                                    format's size per call)
**   pads N                           padding chunks (the writer's O_DIRECT)
**   modules N  process EXE
**   end                              the file was closed in order (END)
**   thread NO tid TID parent P calls C returns R suspend S (SUSPEND_NS ns)
**          alloc A on N off M exit E lost L unordered U sites K
**                                    (K: CALL records with a call site)
**   call NO ADDR COUNT               per thread and function, CALL records
**   alloc NO OP COUNT                per thread and allocation op
**   suspend NO REASON COUNT
**
** Exit 0 when the file is well formed (a truncated tail is well formed),
** 1 with one line on stderr otherwise.  It shares nothing with profile/
** but <meminst-trace.h>, so the two readers check each other.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meminst-trace.h"

#define MAX_THREADS 256
#define MAX_FNS 4096

struct fn { uint64_t addr; unsigned thread; uint64_t count; };
struct thr {
	int seen;
	uint64_t tid, parent, calls, returns, suspend, suspend_ticks, alloc, blocks, on, off, exit, lost;
	uint64_t unordered, last_time, seq[2];
	uint64_t allocs[8], reasons[16];
	uint64_t sites;   /* CALL records with a call site */
};

static struct thr thr[MAX_THREADS];
static struct fn fns[MAX_FNS];
static unsigned nfns;
static double tick_hz;

static int fail(const char *what)
{
	fprintf(stderr, "trace_check: %s\n", what);
	return 1;
}

static void count_call(unsigned t, uint64_t addr)
{
	for (unsigned i = 0; i < nfns; i++)
		if (fns[i].addr == addr && fns[i].thread == t) {
			fns[i].count++;
			return;
		}
	if (nfns < MAX_FNS)
		fns[nfns++] = (struct fn){addr, t, 1};
}

/* One chunk's records.  0 or 1 (bad record). */
static int records(unsigned t, unsigned stream, const uint64_t *w, uint64_t n, unsigned *modules)
{
	static const unsigned char fixed[] = MEMINST_TREC_WORDS_INIT;
	struct thr *th = &thr[t];
	for (uint64_t i = 0; i < n;) {
		unsigned k = MEMINST_TREC_KIND(w[i]);
		uint64_t time = MEMINST_TREC_TIME(w[i]), len;
		if (k < MEMINST_TREC_VARIABLE) {
			if (k > MEMINST_TREC_FIXED_MAX || !fixed[k])
				return fail("unknown fixed-size record kind");
			len = fixed[k];
		} else {
			if (i + 1 >= n)
				return fail("variable record cut inside a chunk");
			len = (uint32_t)w[i + 1];
		}
		if (len == 0 || i + len > n)
			return fail("record runs past its chunk");
		if (stream == 0 && t != 0 && k != MEMINST_TREC_LOST) {
			/* the events stream is in time order (SUSPEND/ALLOC carry their begin) */
			if (time + 1 < th->last_time && k != MEMINST_TREC_SUSPEND && k != MEMINST_TREC_ALLOC &&
			    k != MEMINST_TREC_ALLOC_BLOCK && k != MEMINST_TREC_ALLOC_AT) /* the ALLOC before it, expanded */
				th->unordered++, fprintf(stderr, "unordered kind %u t %u at %" PRIu64 " after %" PRIu64 "\n", k, t, time, th->last_time);
			if (k == MEMINST_TREC_SUSPEND || k == MEMINST_TREC_ALLOC)
				time = w[i + 1];
			th->last_time = time;
		}
		switch (k) {
		case MEMINST_TREC_CALL:
			th->calls++;
			th->sites += w[i + 2] != 0;
			count_call(t, w[i + 1]);
			break;
		case MEMINST_TREC_RETURN: th->returns++; break;
		case MEMINST_TREC_THREAD_START:
			th->tid = (uint32_t)w[i + 1];
			th->parent = w[i + 1] >> 32;
			break;
		case MEMINST_TREC_THREAD_EXIT: th->exit++; break;
		case MEMINST_TREC_SUSPEND:
			th->suspend++;
			th->suspend_ticks += w[i + 1] - MEMINST_TREC_TIME(w[i]);
			th->reasons[w[i + 2] & 15]++;
			break;
		case MEMINST_TREC_ALLOC: th->alloc++; th->allocs[w[i + 2] & 7]++; break;
		case MEMINST_TREC_ALLOC_BLOCK: th->blocks++; break;
		case MEMINST_TREC_ALLOC_AT: th->blocks += (uint32_t)w[i + 1] >= 5; break;
		case MEMINST_TREC_TRACE_ON: th->on++; break;
		case MEMINST_TREC_TRACE_OFF: th->off++; break;
		case MEMINST_TREC_LOST: th->lost += w[i + 1]; break;
		case MEMINST_TREC_MODULE: (*modules)++; break;
		case MEMINST_TREC_END: printf("end\n"); break;
		case MEMINST_TREC_PROCESS:
			if (len > 2)
				printf("process %.*s\n", (int)strnlen((const char *)(w + i + 2), (len - 2) * 8),
				       (const char *)(w + i + 2));
			break;
		default: break;
		}
		i += len;
	}
	return 0;
}

/* A padding chunk: thread 0, seq 0, no words or one PAD record of them
** all, zeros after its two words.  True when it is not. */
static int pad_bad(const struct meminst_trace_chunk *c, const uint64_t *w)
{
	if (c->thread != 0 || c->seq != 0 || c->words == 1)
		return 1;
	if (c->words == 0)
		return 0;
	if (w[0] != MEMINST_TREC_HEAD(MEMINST_TREC_PAD, 0) || w[1] != MEMINST_TREC_SIZE_WORD(c->words, 0))
		return 1;
	for (uint32_t i = 2; i < c->words; i++)
		if (w[i])
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return fail("usage: trace_check FILE");
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return fail("cannot open the file");
	struct meminst_trace_header h;
	if (fread(&h, sizeof h, 1, f) != 1)
		return fail("file shorter than its header");
	if (memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) || h.version < MEMINST_TRACE_MIN_READABLE ||
	    h.version > MEMINST_TRACE_VERSION || h.header_size < sizeof h)
		return fail("not a meminst trace of this version");
	tick_hz = h.tick_hz;
	printf("header %u %u %u %u\n", h.clock, h.flags, h.pid, h.ppid);
	fseek(f, h.header_size, SEEK_SET);
	unsigned nchunks = 0, modules = 0, npads = 0;
	unsigned long long eventbytes = 0;
	static uint64_t words[1 << 20], wide[MEMINST_TRACE_EXPAND_MAX << 20];
	for (;;) {
		long at = ftell(f);
		struct meminst_trace_chunk c;
		size_t got = fread(&c, 1, sizeof c, f);
		if (got == 0)
			break;
		if (got < sizeof c) {
			printf("truncated %ld\n", at);
			break;
		}
		if (c.magic != MEMINST_TRACE_CHUNK_MAGIC)
			return fail("bad chunk magic");
		if (c.words > sizeof words / 8 || c.thread >= MAX_THREADS || c.stream > MEMINST_TRACE_STREAM_PAD)
			return fail("chunk header out of range");
		if (fread(words, 8, c.words, f) != c.words) {
			printf("truncated %ld\n", at);
			break;
		}
		if (meminst_trace_checksum(words, c.words) != c.checksum)
			return fail("chunk checksum mismatch");
		if (c.stream == MEMINST_TRACE_STREAM_PAD) { /* the writer's padding (O_DIRECT) */
			if (pad_bad(&c, words))
				return fail("bad padding chunk");
			npads++;
			continue;
		}
		struct thr *th = &thr[c.thread];
		if (c.seq != th->seq[c.stream])
			return fail("chunk out of sequence");
		th->seq[c.stream]++;
		th->seen = 1;
		nchunks++;
		const uint64_t *recs = words;
		size_t nrec = c.words;
		if (c.stream == MEMINST_TRACE_STREAM_EVENTS && c.thread) {
			eventbytes += 8ull * c.words;
			if (h.version >= 2) { /* CALL32/RET32/LEAF32 as CALL/RETURN */
				size_t used;
				nrec = meminst_trace_expand(words, c.words, wide, &used);
				if (used != c.words)
					return fail("bad record in a version 2 events chunk");
				recs = wide;
			}
		}
		if (records(c.thread, c.stream, recs, nrec, &modules))
			return 1;
	}
	printf("chunks %u\nmodules %u\neventbytes %llu\npads %u\n", nchunks, modules, eventbytes, npads);
	for (unsigned t = 1; t < MAX_THREADS; t++) {
		struct thr *th = &thr[t];
		if (!th->seen)
			continue;
		double sus_ns = h.clock == MEMINST_TRACE_CLOCK_TSC ? th->suspend_ticks * 1e9 / tick_hz
								    : (double)th->suspend_ticks;
		printf("thread %u tid %" PRIu64 " parent %" PRIu64 " calls %" PRIu64 " returns %" PRIu64
		       " suspend %" PRIu64 " %.0f ns alloc %" PRIu64 " on %" PRIu64 " off %" PRIu64
		       " exit %" PRIu64 " lost %" PRIu64 " unordered %" PRIu64 " sites %" PRIu64 "\n",
		       t, th->tid, th->parent, th->calls, th->returns, th->suspend, sus_ns, th->alloc,
		       th->on, th->off, th->exit, th->lost, th->unordered, th->sites);
		for (unsigned k = 0; k < 16; k++) {
			if (k < 8 && th->allocs[k])
				printf("alloc %u %u %" PRIu64 "\n", t, k, th->allocs[k]);
			if (th->reasons[k])
				printf("suspend %u %u %" PRIu64 "\n", t, k, th->reasons[k]);
		}
		if (th->blocks) /* ALLOC_BLOCK records: allocations of mim's map */
			printf("blocks %u %" PRIu64 "\n", t, th->blocks);
	}
	for (unsigned i = 0; i < nfns; i++)
		printf("call %u 0x%" PRIx64 " %" PRIu64 "\n", fns[i].thread, fns[i].addr, fns[i].count);
	return 0;
}
