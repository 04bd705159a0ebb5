/*
** meminst-trace.h — the binary layout of meminst trace files.
**
** libmeminst writes these files (MEMINST=trace=…, sample=…, alloc_sample=…,
** or the meminst_trace_* calls of <meminst.h>); `inspect profile` and
** `inspect analyse` read them.  The layout is described for people in
** meminst-trace(5); this header is its definition.
**
** A file is one file header followed by chunks.  Every chunk holds records
** of one thread of one process, written by one write(2) into a range of the
** file that no other write shares, so chunks of different threads
** interleave but never mix.  Within a thread, chunks of the same stream come
** in the order they were written.  Padding chunks (MEMINST_TRACE_STREAM_PAD)
** may come anywhere after the header: readers skip them.  A file that was cut short (the program crashed or was
** killed) is readable up to the last complete record; the checksum of a
** complete chunk tells a damaged file from a short one.
**
** All integers are little-endian (the file is read on the machine family it
** was written on; a reader refuses a file whose magic does not match).
**
** Records are sequences of 64-bit words.  The first word of every record is
**
**     bits 0-7   kind (MEMINST_TREC_*)
**     bits 8-63  time stamp: ticks of the file's clock since the file's t0
**
** Version 2 adds one-word calls and returns to events chunks (CALL32,
** RET32 below: 8 bytes each, 16 per call on average); version 3 adds
** LEAF32, a call and its return in one word (a call that called nothing
** traced, 8 bytes); meminst_trace_expand turns a version 2 or 3 events
** chunk into the version 1 records it stands for, which is how readers
** take them.
**
** Kinds below MEMINST_TREC_VARIABLE have a fixed size (MEMINST_TREC_WORDS).
** Kinds from MEMINST_TREC_VARIABLE up carry their size in their second word
** (bits 0-31: number of words of the whole record, header included; bits
** 32-63: kind-specific), so a reader skips kinds it does not know.  A reader
** rejects an unknown fixed-size kind: it cannot know its length.
*/
#ifndef MEMINST_TRACE_H
#define MEMINST_TRACE_H

#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MEMINST_TRACE_MAGIC "MEMINSTT"  /* 8 bytes, no terminator in the file */
#define MEMINST_TRACE_VERSION 3
#define MEMINST_TRACE_MIN_READABLE 1

/* header.clock: what the ticks of every time stamp in the file count. */
enum meminst_trace_clock {
	MEMINST_TRACE_CLOCK_TSC = 1,  /* wall time, CPU time-stamp counter: see tick_hz, CLOCK records */
	MEMINST_TRACE_CLOCK_MONO = 2, /* wall time, CLOCK_MONOTONIC nanoseconds (no invariant TSC) */
	MEMINST_TRACE_CLOCK_CPU = 3,  /* each thread's CPU time, CLOCK_THREAD_CPUTIME_ID nanoseconds */
};

/* header.flags: what the run asked to record. */
#define MEMINST_TRACE_F_CALLS 0x1u        /* exact call/return events           */
/* The last frame of a sample cut at its depth: where the rest was. */
#define MEMINST_TRACE_FRAME_TRUNCATED 1u
#define MEMINST_TRACE_F_SAMPLES 0x2u      /* timer samples                      */
#define MEMINST_TRACE_F_ALLOC_SAMPLES 0x4u /* allocation samples                 */
#define MEMINST_TRACE_F_ALL_THREADS 0x8u  /* all threads, not only the starter's family */
#define MEMINST_TRACE_F_PROFILE 0x10u     /* in-process profile: PROF_* records, no events */
#define MEMINST_TRACE_F_COUNTS 0x20u      /* exact call counts next to samples  */
#define MEMINST_TRACE_F_ENDS 0x40u        /* written to its end, it holds an END record */

/* header.sample_clock */
enum meminst_trace_sample_clock {
	MEMINST_TRACE_SAMPLE_CPU = 1,  /* ITIMER_PROF-like: process CPU time */
	MEMINST_TRACE_SAMPLE_WALL = 2, /* real time, also while blocked      */
};

/* The file header: exactly header_size bytes at offset 0.  Later versions
** may grow it; readers skip to header_size. */
struct meminst_trace_header {
	char magic[8];           /* MEMINST_TRACE_MAGIC                         */
	uint32_t version;        /* MEMINST_TRACE_VERSION                       */
	uint32_t header_size;    /* sizeof(struct meminst_trace_header) = 128    */
	uint32_t pid, ppid;
	uint32_t clock;          /* enum meminst_trace_clock                    */
	uint32_t flags;          /* MEMINST_TRACE_F_*                           */
	double tick_hz;          /* ticks per second (calibrated at start for TSC) */
	uint64_t t0_tick;        /* raw clock reading that is time stamp 0      */
	uint64_t t0_realtime_ns; /* CLOCK_REALTIME at t0, for people            */
	uint64_t t0_mono_ns;     /* CLOCK_MONOTONIC at t0                       */
	uint32_t sample_hz;      /* 0 when not sampling                         */
	uint32_t sample_clock;   /* enum meminst_trace_sample_clock, 0 if none  */
	uint64_t alloc_sample;   /* mean bytes between allocation samples, 0 if none */
	/* the process's start (/proc/self/stat's starttime, clock ticks after
	** boot; 0 when unknown): the same in every program an exec runs in the
	** process, so that the next image knows an earlier one's file */
	uint64_t proc_start;
	uint64_t reserved[5];    /* zero                                        */
};

/* A chunk: this header, then `words` 64-bit words of records. */
#define MEMINST_TRACE_CHUNK_MAGIC 0x4b4354d1u
struct meminst_trace_chunk {
	uint32_t magic;     /* MEMINST_TRACE_CHUNK_MAGIC                           */
	uint32_t words;     /* record words that follow                            */
	uint32_t thread;    /* trace thread number: 1 is the first thread seen; 0 = the process */
	uint16_t stream;    /* MEMINST_TRACE_STREAM_*                              */
	uint16_t reserved;
	uint64_t seq;       /* chunk number within (thread, stream), from 0        */
	uint64_t checksum;  /* meminst_trace_checksum of the record words          */
};

enum meminst_trace_stream {
	MEMINST_TRACE_STREAM_EVENTS = 0,  /* written in normal context: calls, returns, ... */
	MEMINST_TRACE_STREAM_SIGNAL = 1,  /* written by the sampling signal handler         */
	/* padding (thread 0, seq 0): the writer's direct writes (O_DIRECT) must
	** start and end at file-block boundaries, so it fills what lies
	** between with chunks of this stream; readers skip them.  Their words
	** are one PAD record (or none, for a 32-byte chunk).                  */
	MEMINST_TRACE_STREAM_PAD = 2,
};

/* The checksum of a chunk's words: cheap, order-sensitive.  Four lanes of
** a Fletcher-style pair of sums (word i goes to lane i % 4: the sum of the
** words, and the sum of those running sums, which weighs each word by its
** position), so that the additions of the lanes run side by side; the
** eight sums are mixed at the end.  Any change to one word changes a lane
** sum; moving words changes the position sums.  (Version 1 files written
** before 2026-11-22 used a serial multiply per word; they no longer check.) */
static inline uint64_t meminst_trace_checksum(const uint64_t *w, uint64_t n)
{
	uint64_t i = 0;
#ifdef __SSE2__
	/* the same sums, two lanes to a register: the writer's share of the
	** tracer's CPU time (bench/RESULTS.md) */
	__m128i a01 = _mm_set_epi64x(1, 0x6d656d696e737421ll), a23 = _mm_set_epi64x(3, 2);
	__m128i b01 = _mm_setzero_si128(), b23 = _mm_setzero_si128();
	for (; i + 4 <= n; i += 4) {
		a01 = _mm_add_epi64(a01, _mm_loadu_si128((const __m128i *)(const void *)(w + i)));
		a23 = _mm_add_epi64(a23, _mm_loadu_si128((const __m128i *)(const void *)(w + i + 2)));
		b01 = _mm_add_epi64(b01, a01);
		b23 = _mm_add_epi64(b23, a23);
	}
	uint64_t v[8];
	_mm_storeu_si128((__m128i *)(void *)v, a01);
	_mm_storeu_si128((__m128i *)(void *)(v + 2), a23);
	_mm_storeu_si128((__m128i *)(void *)(v + 4), b01);
	_mm_storeu_si128((__m128i *)(void *)(v + 6), b23);
	for (; i < n; i++) {
		v[0] += w[i];
		v[4] += v[0];
	}
#else
	uint64_t a0 = 0x6d656d696e737421ull, a1 = 1, a2 = 2, a3 = 3, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
	for (; i + 4 <= n; i += 4) {
		a0 += w[i], a1 += w[i + 1], a2 += w[i + 2], a3 += w[i + 3];
		b0 += a0, b1 += a1, b2 += a2, b3 += a3;
	}
	for (; i < n; i++) {
		a0 += w[i];
		b0 += a0;
	}
	const uint64_t v[8] = {a0, a1, a2, a3, b0, b1, b2, b3};
#endif
	uint64_t h = n;
	for (unsigned j = 0; j < 8; j++) {
		h = (h ^ v[j]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h;
}

/* --------------------------------------------------------------- records -- */

#define MEMINST_TREC_KIND(w) ((unsigned)((w) & 0xff))
#define MEMINST_TREC_TIME(w) ((w) >> 8)
#define MEMINST_TREC_HEAD(kind, ticks) ((uint64_t)(kind) | (uint64_t)(ticks) << 8)
#define MEMINST_TREC_VARIABLE 64
#define MEMINST_TREC_SIZE_WORD(nwords, extra) ((uint64_t)(uint32_t)(nwords) | (uint64_t)(extra) << 32)

enum meminst_trec_kind {
	/* fixed size ------------------------------------------------------- */
	/* [head, fn, call_site]: entered fn, called from call_site (a return
	** address into the caller; 0 unknown).  Versions 2 and 3 write it for
	** calls when the run asked for sites (trace_sites=on), else one of
	** the forms below; in events chunks it sets the bases of the one-word
	** forms as CALL_FN does                                            */
	MEMINST_TREC_CALL = 1,
	/* [head, fn]: returned from fn                                      */
	MEMINST_TREC_RETURN = 2,
	/* [head, tid | parent_thread << 32, name[16] as 2 words]: the thread's
	** first record; parent_thread is the trace thread number of the thread
	** that created it (0: unknown or the process's first thread).  A
	** thread that existed before sampling started, given its number by the
	** sampler's handler, has it first in its signal stream too (the same
	** words), so that a trace read while the thread runs names it.      */
	MEMINST_TREC_THREAD_START = 3,
	/* [head]: the thread ends (its last record)                         */
	MEMINST_TREC_THREAD_EXIT = 4,
	/* [head = begin, end ticks, reason]: the thread was blocked from begin
	** to end in the call named by reason (MEMINST_TSUSPEND_*)           */
	MEMINST_TREC_SUSPEND = 5,
	/* [head = begin, end ticks, op | size << 8]: time inside the allocator;
	** op is MEMINST_TALLOC_*, size the bytes requested (allocations) or
	** released (frees, when the mode knows it, else 0)                  */
	MEMINST_TREC_ALLOC = 6,
	/* [head, CLOCK_MONOTONIC ns]: ties ticks to nanoseconds (TSC clock)  */
	MEMINST_TREC_CLOCK = 7,
	/* [head]: tracing starts / stops on this thread (API start/stop, apply);
	** calls still open at a stop are not returned from in the trace     */
	MEMINST_TREC_TRACE_ON = 8,
	MEMINST_TREC_TRACE_OFF = 9,
	/* [head, count]: `count` records of this thread were dropped (buffer
	** could not be written, or re-entered from a signal handler)        */
	MEMINST_TREC_LOST = 10,

	/* version 2, events chunks only: calls and returns in one word.
	**   bits 0-7 kind, bits 8-31 ticks since the chunk's previous call or
	**   return (CALL, RETURN, CALL_FN, CALL32, RET32; 0 at the chunk's
	**   start), bits 32-63 the low half of the function's address, whose
	**   high half is that of the chunk's last CALL, RETURN or CALL_FN
	**   (0 at the chunk's start).
	** A writer uses CALL_FN or RETURN when the time or the address does not
	** fit.  No call site is recorded (CALL records one: trace_sites=on). */
	MEMINST_TREC_CALL32 = 11,
	MEMINST_TREC_RET32 = 12,
	/* [head, fn]: entered fn (version 2: CALL without the call site)    */
	MEMINST_TREC_CALL_FN = 13,
	/* version 3, events chunks only: a call and its return, nothing traced
	** between them, in one word.
	**   bits 0-7 kind, bits 8-19 ticks from the chunk's previous call or
	**   return to the call, bits 20-31 ticks from the call to the return,
	**   bits 32-63 the low half of the function's address (high half as
	**   for CALL32).                                                   */
	MEMINST_TREC_LEAF32 = 14,

	/* variable size: word 1 is MEMINST_TREC_SIZE_WORD(nwords, extra) --- */
	/* timer sample. extra = number of frames n; then [weight ticks, frames n]:
	** frames are code addresses, innermost (the interrupted pc) first;
	** frames after the first are return addresses (symbolise address - 1).
	** weight: the sampling period in ticks of the file's clock, times the
	** ticks the kernel merged into this one (timer overruns).  A stack
	** deeper than sample_depth= ends (root side) with the frame
	** MEMINST_TRACE_FRAME_TRUNCATED.  In wall mode a thread blocked in a
	** wrapped call has the real function's address as frame 0          */
	MEMINST_TREC_SAMPLE = 64,
	/* allocation sample. extra = n; then [bytes represented (estimate),
	** size of the sampled request, frames n] innermost first; every frame
	** is a return address, the first one into the allocator's caller.
	** The count of allocations it stands for is bytes / size.           */
	MEMINST_TREC_ALLOC_SAMPLE = 65,
	/* a mapped module (thread 0 chunks). extra = bytes of path; then [start,
	** end, file offset of start, build-id length, build-id bytes padded
	** to 8, path bytes padded to 8].  Later records for an overlapping
	** range replace earlier ones from their time stamp on. */
	MEMINST_TREC_MODULE = 66,
	/* the process (thread 0, first record). extra = bytes of text; then
	** text padded to 8: executable path NUL command-line arguments each
	** followed by NUL */
	MEMINST_TREC_PROCESS = 67,
	/* exact call counts (precise sampling). extra = number of pairs n; then
	** n × [fn, count] for the chunk's thread                             */
	MEMINST_TREC_COUNTS = 68,
	/* in-process profile results (header flag PROFILE), per thread chunk.
	** extra = words per row w: 0 or 5 for k × [fn, caller fn, cnt, acc
	** ticks, own ticks], 9 for rows that go on with [own bytes, own
	** blocks, acc bytes, acc blocks] (memory allocated, from <alloc>);
	** readers ignore words past those they know (w > 9).  One row per
	** caller→called pair (fn → fn is recursion), with the called
	** function's figures for calls from that caller.  A function's totals
	** are the sums of its rows (no separate total row).  fn and caller may
	** be the pseudo functions MEMINST_TPROF_*.                          */
	MEMINST_TREC_PROF_PAIR = 69,
	/* [head, exit status or -signal]: the process ended (thread 0)       */
	MEMINST_TREC_PROCESS_EXIT = 70,
	/* [head, size word (2, 0)]: meminst_sample_reset() was called (events
	** stream of the calling thread).  Readers drop the SAMPLE, ALLOC_SAMPLE
	** and COUNTS records of every thread with an earlier time stamp (with a
	** CPU-time file clock, only those of the calling thread).           */
	MEMINST_TREC_SAMPLE_RESET = 71,
	/* [head, size word (3, 0), picoseconds]: what one counted call costs
	** the program while sample_counts is on (measured at start), so that
	** a report can show the perturbation: calls x cost.                 */
	MEMINST_TREC_COUNTS_COST = 72,
	/* [head, size word (4, 0), ticks, runs]: what the sampling signal
	** handler cost the program, all threads together, since sampling
	** started (or since the last reset): the summed time of its runs from
	** entry to exit, in ticks of the file's clock, and the number of runs.
	** Written when sampling stops (meminst_sample_stop, exit).  The
	** kernel's signal delivery is not in it.  Readers show the time as the
	** profiler's own share (distortion) and drop records before a reset
	** like samples.                                                      */
	MEMINST_TREC_SAMPLE_COST = 73,
	/* [head, size word (n, 0), n - 2 costs in ps, MEMINST_TCOST_*]
	** (thread 0): the exact tracer's own cost, measured at the start.
	** Files before compensation have n = 4 (call, alloc in), before
	** ALLOC_AT n = 11; readers take what is there and 0 for the rest.  Readers take allocations x alloc
	** in off <alloc> and compensate the functions' times: each interval
	** between two events holds the tracer's cost of its kind (the CC …
	** RC costs; next to an ALLOC record half the mean event cost and half
	** its alloc out cost), taken off the OWN it went to and off the ACC
	** it is inside (meminst-trace(5)).                                  */
	MEMINST_TREC_TRACE_COST = 74,
	/* [head, size word (2, 0)] (thread 0, a chunk of its own): the file
	** was closed in order (exit, _exit, or a fatal signal libmeminst
	** catches) with every record it held before this one.  In a file whose
	** header has MEMINST_TRACE_F_ENDS, no END means the file was cut: the
	** process crashed, was killed (SIGKILL), is still running, or a write
	** failed (a full disk), and records after its last chunk are missing.
	** Chunks of threads still running at exit may follow it.             */
	MEMINST_TREC_END = 75,
	/* [head (time 0), size word (n, 0), n - 2 zero words]: the words of a
	** padding chunk (MEMINST_TRACE_STREAM_PAD); nothing happened.        */
	MEMINST_TREC_PAD = 76,
	/* [head = begin, size word (4, ticks), op | size << 8, allocation
	** number], events chunks only: an ALLOC that returned a block of the
	** map (MEMINST=mim), with the block's allocation number (the `seq` a
	** snapshot gives each live block), so that a reader can tell which
	** traced function was running when a block still live in a snapshot
	** was allocated.  ticks: end - begin; when that does not fit in 32
	** bits the record is 5 words, [head, size word (5, 0), end ticks,
	** op | size << 8, allocation number].  meminst_trace_expand turns it
	** into the ALLOC it stands for, followed by the record itself.       */
	MEMINST_TREC_ALLOC_BLOCK = 96,
	/* [head = begin, size word (n, ticks), op | size << 8, site | inner <<
	** 48] (n = 4), or with the block's allocation number after them for
	** a block of the map (n = 5, as ALLOC_BLOCK), events chunks only: an
	** ALLOC with the address its caller returns to (site: the allocator
	** was called from site - 1) and the ticks of the allocator's own call
	** inside it (inner, the backend's malloc or free), so that a reader can
	** put the allocation on its line and tell meminst's work around the
	** allocator (end - begin - inner) from the allocator's.  inner is 16
	** bits, e << 12 | m for m << e ticks (meminst_trec_at_inner), or
	** MEMINST_TALLOC_INNER_NONE when not measured or too long.
	** ticks: end - begin; when that does not fit in 32 bits the writer
	** writes an ALLOC or ALLOC_BLOCK instead.  meminst_trace_expand turns
	** it into the ALLOC it stands for, followed by the record itself.    */
	MEMINST_TREC_ALLOC_AT = 97,
};

/* ALLOC_AT's inner time: 16 bits above the site (addresses of user space
** take 47), a 4-bit exponent e and a 12-bit mantissa m for m << e ticks
** (exact below 4096, to 1/4096 above, up to 2^27); NONE: not measured, the
** whole call is the allocator's. */
#define MEMINST_TALLOC_INNER_SHIFT 48
#define MEMINST_TALLOC_INNER_NONE 0xffffu
static inline uint64_t meminst_trec_at_site(const uint64_t *w) { return w[3] & ((1ull << MEMINST_TALLOC_INNER_SHIFT) - 1); }
static inline unsigned meminst_trec_at_inner_code(const uint64_t *w) { return (unsigned)(w[3] >> MEMINST_TALLOC_INNER_SHIFT); }
/* The inner ticks, or UINT64_MAX when not measured. */
static inline uint64_t meminst_trec_at_inner(const uint64_t *w)
{
	unsigned c = meminst_trec_at_inner_code(w);
	return c == MEMINST_TALLOC_INNER_NONE ? UINT64_MAX : (uint64_t)(c & 0xfff) << (c >> 12);
}
/* meminst's ticks in an ALLOC_AT call, its time less the allocator's: 0 when
** the allocator's time was not measured (or is above the call's). */
static inline int meminst_trec_at_meminst(const uint64_t *w, uint64_t *ticks)
{
	uint64_t inner = meminst_trec_at_inner(w), d = w[1] >> 32;
	if (inner > d)
		return 0;
	*ticks = d - inner;
	return 1;
}
/* The 16 bits for v ticks. */
static inline unsigned meminst_talloc_inner_code(uint64_t v)
{
	if (v < 4096)
		return (unsigned)v;
	unsigned e = 64 - (unsigned)__builtin_clzll(v) - 12;
	return e < 15 || (e == 15 && (v >> e) < 0xfff) ? e << 12 | (unsigned)(v >> e) : MEMINST_TALLOC_INNER_NONE;
}

/* The allocation number of an ALLOC_BLOCK record, or of an ALLOC_AT one
** for a block of the map, at w (n words): false for any other record. */
static inline int meminst_trec_alloc_seq(const uint64_t *w, size_t n, uint64_t *seq)
{
	unsigned k = (unsigned)(w[0] & 0xff);
	if (!((k == MEMINST_TREC_ALLOC_BLOCK && n >= 4) || (k == MEMINST_TREC_ALLOC_AT && n >= 5)))
		return 0;
	*seq = w[n - 1];
	return 1;
}

/* The parts of an ALLOC_BLOCK record of n words (4 or 5). */
static inline uint64_t meminst_trec_block_end(const uint64_t *w, size_t n)
{
	return n >= 5 ? w[2] : MEMINST_TREC_TIME(w[0]) + (w[1] >> 32);
}
static inline uint64_t meminst_trec_block_op_size(const uint64_t *w, size_t n) { return w[n - 2]; }
static inline uint64_t meminst_trec_block_seq(const uint64_t *w, size_t n) { return w[n - 1]; }

/* Fixed sizes in words, by kind (0: unknown or variable), of the records
** readers take (version 1, and version 2 after meminst_trace_expand). */
#define MEMINST_TREC_WORDS_INIT {0, 3, 2, 4, 1, 3, 3, 2, 1, 1, 2}
#define MEMINST_TREC_FIXED_MAX 10
/* The same with the version 2 and 3 kinds of events chunks (CALL32, RET32,
** CALL_FN, LEAF32). */
#define MEMINST_TREC_WORDS2_INIT {0, 3, 2, 4, 1, 3, 3, 2, 1, 1, 2, 1, 1, 2, 1}
#define MEMINST_TREC_FIXED2_MAX 14
#define MEMINST_TREC_DELTA_BITS 24
#define MEMINST_TREC_LEAF_BITS 12   /* each of LEAF32's two deltas */
/* meminst_trace_expand writes at most this many words per word it reads */
#define MEMINST_TRACE_EXPAND_MAX 5

/* Words of the record at w, any version: 0 when its kind is unknown or it
** runs past the `avail` words left. */
static inline size_t meminst_trec_len(const uint64_t *w, size_t avail)
{
	static const unsigned char fixed[] = MEMINST_TREC_WORDS2_INIT;
	unsigned k = MEMINST_TREC_KIND(w[0]);
	size_t n = k < MEMINST_TREC_VARIABLE ? (k <= MEMINST_TREC_FIXED2_MAX ? fixed[k] : 0)
		   : avail >= 2 ? (uint32_t)w[1] : 0;
	return n && n <= avail ? n : 0;
}

/* A version 2 or 3 events chunk's n words at w, as version 1 records into
** out (room for MEMINST_TRACE_EXPAND_MAX * n words: a one-word call
** becomes [head, fn, 0], a return [head, fn], a LEAF32 both, CALL_FN a
** CALL with call site 0, an ALLOC_BLOCK or ALLOC_AT the ALLOC it stands for and
** then itself; everything else is copied).  Returns the words written; *used is the words of w taken,
** less than n when a record is cut short or of an unknown fixed kind. */
static inline size_t meminst_trace_expand(const uint64_t *w, size_t n, uint64_t *out, size_t *used)
{
	uint64_t last = 0, hi = 0;
	size_t i = 0, o = 0, len;
	while (i < n && (len = meminst_trec_len(w + i, n - i)) != 0) {
		unsigned k = MEMINST_TREC_KIND(w[i]);
		if (k == MEMINST_TREC_CALL32 || k == MEMINST_TREC_RET32) {
			last += (w[i] >> 8) & ((1u << MEMINST_TREC_DELTA_BITS) - 1);
			int call = k == MEMINST_TREC_CALL32;
			out[o++] = MEMINST_TREC_HEAD(call ? MEMINST_TREC_CALL : MEMINST_TREC_RETURN, last);
			out[o++] = hi << 32 | w[i] >> 32;
			if (call)
				out[o++] = 0;
		} else if (k == MEMINST_TREC_LEAF32) {
			uint64_t fn = hi << 32 | w[i] >> 32, m = (1u << MEMINST_TREC_LEAF_BITS) - 1;
			last += (w[i] >> 8) & m;
			out[o++] = MEMINST_TREC_HEAD(MEMINST_TREC_CALL, last);
			out[o++] = fn;
			out[o++] = 0;
			last += (w[i] >> (8 + MEMINST_TREC_LEAF_BITS)) & m;
			out[o++] = MEMINST_TREC_HEAD(MEMINST_TREC_RETURN, last);
			out[o++] = fn;
		} else if (k == MEMINST_TREC_CALL_FN) {
			last = MEMINST_TREC_TIME(w[i]), hi = w[i + 1] >> 32;
			out[o++] = MEMINST_TREC_HEAD(MEMINST_TREC_CALL, last);
			out[o++] = w[i + 1];
			out[o++] = 0;
		} else {
			if (k == MEMINST_TREC_ALLOC_BLOCK && len >= 4) {
				out[o++] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC, MEMINST_TREC_TIME(w[i]));
				out[o++] = meminst_trec_block_end(w + i, len);
				out[o++] = meminst_trec_block_op_size(w + i, len);
			} else if (k == MEMINST_TREC_ALLOC_AT && len >= 4) {
				out[o++] = MEMINST_TREC_HEAD(MEMINST_TREC_ALLOC, MEMINST_TREC_TIME(w[i]));
				out[o++] = MEMINST_TREC_TIME(w[i]) + (w[i + 1] >> 32);
				out[o++] = w[i + 2];
			}
			if (k == MEMINST_TREC_CALL || k == MEMINST_TREC_RETURN)
				last = MEMINST_TREC_TIME(w[i]), hi = w[i + 1] >> 32;
			for (size_t j = 0; j < len; j++)
				out[o++] = w[i + j];
		}
		i += len;
	}
	*used = i;
	return o;
}

/* The costs of a TRACE_COST record, in ps, in order. */
enum meminst_tcost {
	MEMINST_TCOST_CALL,      /* a traced call or return, the mean        */
	MEMINST_TCOST_ALLOC_IN,  /* an ALLOC record's, inside its two stamps */
	MEMINST_TCOST_ALLOC_OUT, /* an ALLOC record's, outside them          */
	MEMINST_TCOST_CC,        /* stamp to stamp with nothing done between: */
	MEMINST_TCOST_CR,        /*   call->call, call->return,               */
	MEMINST_TCOST_RR,        /*   return->return, return->call            */
	MEMINST_TCOST_RC,
	MEMINST_TCOST_LRR,       /* the same after a leaf's return (a return */
	MEMINST_TCOST_LRC,       /*   right after its call): ->return, ->call */
	MEMINST_TCOST_INNER,     /* an ALLOC_AT's inner time around nothing:  */
	                         /*   the measure's own share of it           */
	MEMINST_TCOST_N
};

/* Words per PROF_PAIR row: the size word's extra (0 means the first). */
#define MEMINST_TPROF_ROW_TIME 5
#define MEMINST_TPROF_ROW_MEM 9
static inline unsigned meminst_tprof_row_words(uint64_t size_word)
{
	unsigned w = (unsigned)(size_word >> 32);
	return w ? w : MEMINST_TPROF_ROW_TIME;
}

/* Pseudo function addresses in PROF_PAIR rows (never code addresses). */
#define MEMINST_TPROF_UNDEFINED 0 /* caller of calls whose entry was not traced */
#define MEMINST_TPROF_SUSPEND 1   /* the `suspend` pseudo function             */
#define MEMINST_TPROF_ALLOC 2     /* the `<alloc>` pseudo function             */
#define MEMINST_TPROF_TRACE_WAIT 4 /* `<trace-wait>`: SUSPEND of reason TRACE   */
#define MEMINST_TPROF_SNAPSHOT 5   /* `<snapshot>`: SUSPEND of reason SNAPSHOT  */
#define MEMINST_TPROF_PREEMPTED 6  /* `<preempted>`: SUSPEND of reason PREEMPT  */

/* SUSPEND reasons */
enum meminst_tsuspend {
	MEMINST_TSUSPEND_SLEEP = 1,  /* nanosleep, clock_nanosleep, usleep, sleep  */
	MEMINST_TSUSPEND_POLL = 2,   /* poll, ppoll, select, pselect, epoll_wait…  */
	MEMINST_TSUSPEND_LOCK = 3,   /* a contended pthread mutex / rwlock, sem_wait */
	MEMINST_TSUSPEND_COND = 4,   /* pthread_cond_wait / timedwait              */
	MEMINST_TSUSPEND_JOIN = 5,   /* pthread_join, wait, waitpid                */
	MEMINST_TSUSPEND_IO = 6,     /* read/write/recv/send/accept/connect on a pipe, socket or tty */
	MEMINST_TSUSPEND_OTHER = 7,
	/* the tracer's own wait: the thread's buffers were all waiting for
	** the trace writer (the file is slower than the program).  Readers
	** show it as the `<trace-wait>` pseudo function and keep it out of
	** the program's functions' times. */
	MEMINST_TSUSPEND_TRACE = 8,
	/* a snapshot's pause on the thread that took it (a peak snapshot is
	** captured by the freeing thread, inside its free), or the wait of a
	** thread that allocated or freed while another one copied the map.
	** Readers show it as the `<snapshot>` pseudo function and keep it out
	** of `<alloc>` and of the program's functions' times. */
	MEMINST_TSUSPEND_SNAPSHOT = 9,
	/* trace=wall: the thread was switched out involuntarily (another
	** thread had its CPU) for this long, at the end of a gap between two
	** of its calls or returns.  Readers show it as the `<preempted>`
	** pseudo function and keep it out of the program's functions' times. */
	MEMINST_TSUSPEND_PREEMPT = 10,
};

/* ALLOC operations */
enum meminst_talloc {
	MEMINST_TALLOC_MALLOC = 1, MEMINST_TALLOC_CALLOC, MEMINST_TALLOC_REALLOC,
	MEMINST_TALLOC_ALIGNED, MEMINST_TALLOC_FREE, MEMINST_TALLOC_NEW,
	MEMINST_TALLOC_DELETE,
};

#endif
