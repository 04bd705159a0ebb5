/*
** prof_read.c — the trace file reader.
**
** The file is streamed chunk by chunk (one chunk in memory at a time) and
** every chunk is handed to the simulation engine, so memory follows the
** number of functions, not the length of the trace.  Every check of
** meminst-trace(5) is made here or in eng_rec_size: a bad file gives one
** line and RD_EXIT_DB, never a crash.  A file that ends inside a chunk,
** or whose writer never closed it (no END record), was cut short (the
** program was killed, a write failed): its complete records are used and
** a warning says where it ends.
*/
#include "prof_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void *read_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	return rd_xrealloc(p, n);
}

static void read_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

const struct eng_allocator prof_libc_allocator = {read_realloc, read_free, NULL};

uint32_t prof_cct_child_or_exit(struct eng_cct *t, uint32_t parent, uint64_t key)
{
	uint32_t i;
	if (eng_cct_child(t, parent, key, &i) != ENG_OK) {
		fputs("inspect: out of memory\n", stderr);
		exit(RD_EXIT_DB);
	}
	return i;
}

static int read_fail(const struct rd_opts *o, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int read_fail(const struct rd_opts *o, const char *path, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rd_errf(o->err, "inspect: %s: %s\n", path, msg);
	return RD_EXIT_DB;
}

int prof_is_trace(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (!S_ISREG(st.st_mode)) /* never open a FIFO: that waits for a writer */
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	char magic[8];
	size_t n = fread(magic, 1, sizeof magic, f);
	fclose(f);
	return n == 8 && memcmp(magic, MEMINST_TRACE_MAGIC, 8) == 0;
}

/* The first bytes of path (up to max), its stat; -1: cannot be read. */
static ssize_t read_head(const char *path, unsigned char *h, size_t max, struct stat *st)
{
	if (stat(path, st) != 0)
		return -1;
	if (!S_ISREG(st->st_mode))
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(h, 1, max, f);
	fclose(f);
	return (ssize_t)n;
}

static uint32_t read_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* prof_input_damaged; what: the line for an empty file. */
static int input_damaged(const struct rd_opts *o, const char *path, const char *what)
{
	static const char sqlite_magic[16] = "SQLite format 3"; /* with its NUL */
	unsigned char h[100];
	struct stat st;
	ssize_t got = read_head(path, h, sizeof h, &st);
	if (got < 0)
		return read_fail(o, path, "%s", strerror(errno));
	size_t n = (size_t)got;
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		return read_fail(o, path, "an empty file, %s", what);
	if (n && n < 8 && memcmp(h, MEMINST_TRACE_MAGIC, n) == 0)
		return read_fail(o, path, "a trace file cut short at byte %zu, in its magic (truncated)", n);
	if (!n || memcmp(h, sqlite_magic, n < 16 ? n : 16) != 0)
		return 0;
	if (n < sizeof h)
		return read_fail(o, path, "an SQLite database cut short at byte %zu, in its header (truncated)", n);
	/* the header's page size and page count (SQLite's file format, 1.3):
	** a database shorter than that lost its end */
	uint64_t page = (uint64_t)h[16] << 8 | h[17], pages = read_be32(h + 28);
	if (page == 1)
		page = 65536;
	if (pages && page * pages > (uint64_t)st.st_size)
		return read_fail(o, path, "an SQLite database cut short at byte %lld of %llu (truncated)",
				 (long long)st.st_size, (unsigned long long)(page * pages));
	return 0;
}

int prof_input_damaged(const struct rd_opts *o, const char *path)
{
	return input_damaged(o, path, "not a trace or a database");
}

int prof_input_fail(const struct rd_opts *o, const char *path, const char *what)
{
	int r = input_damaged(o, path, what);
	return r ? r : read_fail(o, path, "%s", what);
}

/* ------------------------------------------------------------- header -- */

static int read_header(FILE *f, const struct rd_opts *o, struct prof_trace *tr)
{
	struct meminst_trace_header *h = &tr->h;
	size_t n = fread(h, 1, sizeof *h, f);
	if (n < 8 || memcmp(h->magic, MEMINST_TRACE_MAGIC, 8) != 0)
		return read_fail(o, tr->path, "not a meminst trace file");
	if (n < 16)
		return read_fail(o, tr->path, "trace header cut short at byte %zu", n);
	if (h->version > MEMINST_TRACE_VERSION)
		return read_fail(o, tr->path, "trace format version %u is newer than this inspect reads (%d to %d)",
				 h->version, MEMINST_TRACE_MIN_READABLE, MEMINST_TRACE_VERSION);
	if (h->version < MEMINST_TRACE_MIN_READABLE)
		return read_fail(o, tr->path, "trace format version %u is not supported", h->version);
	if (n < sizeof *h)
		return read_fail(o, tr->path, "trace header cut short at byte %zu", n);
	if (h->header_size < sizeof *h || h->header_size > (1u << 20))
		return read_fail(o, tr->path, "bad trace header size %u", h->header_size);
	if (h->clock < MEMINST_TRACE_CLOCK_TSC || h->clock > MEMINST_TRACE_CLOCK_CPU)
		return read_fail(o, tr->path, "unknown clock %u in the trace header", h->clock);
	if (!isfinite(h->tick_hz) || h->tick_hz < 1.0 || h->tick_hz > 1e12)
		return read_fail(o, tr->path, "bad tick rate %g in the trace header", h->tick_hz);
	if (fseeko(f, h->header_size, SEEK_SET) != 0)
		return read_fail(o, tr->path, "%s", strerror(errno));
	tr->size = h->header_size;
	return 0;
}

/* ---------------------------------------------------- process records -- */

static void read_module(struct prof_trace *tr, const uint64_t *r, size_t n)
{
	size_t plen = (size_t)(r[1] >> 32), idlen = (size_t)r[5];
	if (idlen > sizeof tr->mods[0].build_id)
		idlen = 0;
	const char *id = (const char *)(r + 6);
	const char *path = (const char *)(r + 6 + (r[5] + 7) / 8);
	if (plen == 0 || plen > 8 * (n - 6))
		return;
	char *p = rd_xcalloc(1, plen + 1);
	memcpy(p, path, plen);
	/* a later mapping of the same range replaces the earlier one */
	for (size_t i = 0; i < tr->nmods; i++) {
		struct prof_mod *m = &tr->mods[i];
		if (m->start < r[3] && r[2] < m->end) {
			free(m->path);
			*m = tr->mods[--tr->nmods];
			i--;
		}
	}
	if (tr->nmods == tr->mods_cap) {
		tr->mods_cap = tr->mods_cap ? 2 * tr->mods_cap : 16;
		tr->mods = rd_xrealloc(tr->mods, tr->mods_cap * sizeof *tr->mods);
	}
	struct prof_mod *m = &tr->mods[tr->nmods++];
	*m = (struct prof_mod){.start = r[2], .end = r[3], .offset = r[4], .build_id_len = idlen, .path = p};
	memcpy(m->build_id, id, idlen);
}

static void read_process(struct prof_trace *tr, const uint64_t *r)
{
	size_t len = (size_t)(r[1] >> 32);
	const char *text = (const char *)(r + 2);
	free(tr->exe);
	free(tr->cmdline);
	size_t elen = strnlen(text, len);
	tr->exe = rd_xcalloc(1, elen + 1);
	memcpy(tr->exe, text, elen);
	tr->cmdline = rd_xcalloc(1, len + 1);
	size_t k = 0;
	for (size_t i = elen < len ? elen + 1 : len; i < len; i++)
		tr->cmdline[k++] = text[i] ? text[i] : ' ';
	while (k && tr->cmdline[k - 1] == ' ')
		k--;
	tr->cmdline[k] = 0;
}

static void read_other(void *ctx, uint32_t thread, const uint64_t *r, size_t n)
{
	struct prof_trace *tr = ctx;
	switch (MEMINST_TREC_KIND(r[0])) {
	case MEMINST_TREC_MODULE: read_module(tr, r, n); break;
	case MEMINST_TREC_PROCESS: read_process(tr, r); break;
	case MEMINST_TREC_PROCESS_EXIT:
		tr->exited = true;
		tr->exit_status = (int64_t)r[2];
		break;
	case MEMINST_TREC_END:
		tr->ended = true;
		break;
	case MEMINST_TREC_ALLOC_BLOCK: /* after its ALLOC: the stack is the allocating function's */
	case MEMINST_TREC_ALLOC_AT: {
		uint64_t seq;
		if (tr->live && tr->sim.feeding && meminst_trec_alloc_seq(r, n, &seq))
			prof_live_note(tr->live, seq, eng_thread_top(tr->sim.feeding));
		break;
	}
	case MEMINST_TREC_TRACE_COST:
		for (size_t k = 0; k < MEMINST_TCOST_N; k++)
			tr->cost_ps[k] = k + 2 < n ? r[k + 2] : 0;
		break;
	case MEMINST_TREC_SAMPLE:
	case MEMINST_TREC_ALLOC_SAMPLE:
	case MEMINST_TREC_COUNTS:
	case MEMINST_TREC_SAMPLE_RESET:
	case MEMINST_TREC_COUNTS_COST:
	case MEMINST_TREC_SAMPLE_COST:
		if (tr->samples)
			prof_samples_record(tr->samples, thread, r, n);
		break;
	}
}

/* ------------------------------------------------------------- chunks -- */

static int read_sim_error(const struct rd_opts *o, const struct prof_trace *tr, enum eng_err e,
			  uint64_t at, const uint64_t *rec)
{
	switch (e) {
	case ENG_E_KIND:
		return read_fail(o, tr->path, "unknown record kind %u at byte %llu", MEMINST_TREC_KIND(rec[0]),
				 (unsigned long long)at);
	case ENG_E_SIZE:
		return read_fail(o, tr->path, "record at byte %llu runs past its chunk", (unsigned long long)at);
	case ENG_E_COUNT:
		return read_fail(o, tr->path, "record at byte %llu: its counts do not fit its size",
				 (unsigned long long)at);
	default:
		return read_fail(o, tr->path, "out of memory");
	}
}

/* The words of the complete records at the start of a cut chunk. */
static size_t read_complete(const uint64_t *w, size_t n)
{
	size_t i = 0, len;
	while (i < n && eng_rec_size(w + i, n - i, &len) == ENG_OK)
		i += len;
	return i;
}

static void read_each(struct prof_trace *tr, const struct meminst_trace_chunk *c, const uint64_t *w,
		      size_t n, prof_each_fn each, void *ctx)
{
	size_t len;
	for (size_t i = 0; i < n && eng_rec_size(w + i, n - i, &len) == ENG_OK; i += len)
		each(ctx, &tr->h, c->thread, c->stream, w + i, len);
}

/* Scratch words: the chunk as read, and a version 2 events chunk expanded
** to version 1 records (meminst_trace_expand: at most
** MEMINST_TRACE_EXPAND_MAX words a word). */
struct read_bufs {
	uint64_t *raw, *wide;
	size_t raw_cap, wide_cap;
};

/* The records of a version 2 events chunk as version 1 ones in b->wide:
** their number of words; *n becomes the raw words they came from.  A
** complete chunk must be all records: else an exit code in *code. */
static size_t read_expand(const struct rd_opts *o, struct prof_trace *tr, struct read_bufs *b, size_t *n,
			  bool cut, uint64_t at, int *code)
{
	if (MEMINST_TRACE_EXPAND_MAX * *n > b->wide_cap) {
		b->wide_cap = MEMINST_TRACE_EXPAND_MAX * *n;
		b->wide = rd_xrealloc(b->wide, b->wide_cap * sizeof *b->wide);
	}
	size_t used, m = meminst_trace_expand(b->raw, *n, b->wide, &used);
	if (used < *n && !cut) {
		uint64_t k = MEMINST_TREC_KIND(b->raw[used]), pos = at + 8 * used;
		*code = meminst_trec_len(b->raw + used, SIZE_MAX) == 0 && k < MEMINST_TREC_VARIABLE
				? read_fail(o, tr->path, "unknown record kind %u at byte %llu", (unsigned)k,
					    (unsigned long long)pos)
				: read_fail(o, tr->path, "record at byte %llu runs past its chunk",
					    (unsigned long long)pos);
	}
	*n = used;
	return m;
}

/* One chunk at tr->size; returns 0, 1 at the end of the file, or an exit
** code. */
static int read_chunk(FILE *f, const struct rd_opts *o, struct prof_trace *tr, struct read_bufs *b,
		      prof_each_fn each, void *ctx)
{
	uint64_t **buf = &b->raw;
	size_t *cap = &b->raw_cap;
	struct meminst_trace_chunk c;
	uint64_t at = tr->size;
	size_t got = fread(&c, 1, sizeof c, f);
	if (got == 0)
		return 1;
	if (got < sizeof c) {
		tr->torn = true;
		rd_errf(o->err, "inspect: %s: trace cut short at byte %llu; read up to there\n", tr->path,
			(unsigned long long)at);
		return 1;
	}
	if (c.magic != MEMINST_TRACE_CHUNK_MAGIC)
		return read_fail(o, tr->path, "corrupt chunk at byte %llu (bad chunk magic)", (unsigned long long)at);
	if (c.words > PROF_MAX_CHUNK_WORDS)
		return read_fail(o, tr->path, "corrupt chunk at byte %llu (it claims %u words)",
				 (unsigned long long)at, c.words);
	if (c.words > *cap) {
		*cap = c.words;
		*buf = rd_xrealloc(*buf, *cap * sizeof **buf);
	}
	size_t bytes = fread(*buf, 1, (size_t)c.words * 8, f);
	size_t n = bytes / 8;
	bool cut = bytes < (size_t)c.words * 8;
	if (!cut && meminst_trace_checksum(*buf, c.words) != c.checksum)
		return read_fail(o, tr->path, "corrupt chunk at byte %llu (checksum mismatch)", (unsigned long long)at);
	if (c.stream == MEMINST_TRACE_STREAM_PAD) { /* the writer's padding: nothing in it */
		tr->size = at + sizeof c + (cut ? bytes : 8 * (uint64_t)c.words);
		return cut ? 1 : 0;
	}
	const uint64_t *recs = *buf;
	size_t nrec;
	bool wide = tr->h.version >= 2 && c.stream == MEMINST_TRACE_STREAM_EVENTS;
	if (wide) {
		int code = 0;
		nrec = read_expand(o, tr, b, &n, cut, at + sizeof c, &code);
		if (code)
			return code;
		recs = b->wide;
	} else {
		if (cut)
			n = read_complete(*buf, n);
		nrec = n;
	}
	size_t bad = 0;
	enum eng_err e = eng_sim_feed(&tr->sim, c.thread, c.stream, recs, nrec, &bad);
	if (e) /* expanded records have no place in the file: the chunk's */
		return read_sim_error(o, tr, e, wide ? at : at + sizeof c + 8 * bad, recs + bad);
	if (each)
		read_each(tr, &c, recs, nrec, each, ctx);
	tr->chunks++;
	if (cut) {
		tr->torn = true;
		tr->size = at + sizeof c + 8 * n;
		rd_errf(o->err, "inspect: %s: trace cut short at byte %llu; read up to there\n", tr->path,
			(unsigned long long)tr->size);
		return 1;
	}
	tr->size = at + sizeof c + 8 * (uint64_t)c.words;
	return 0;
}

static int read_stream(FILE *f, const char *path, uint64_t size, const struct rd_opts *o,
		       struct prof_trace *tr, prof_each_fn each, void *ctx, struct prof_samples *smp,
		       struct prof_live *live)
{
	memset(tr, 0, sizeof *tr);
	tr->path = path;
	tr->live = live;
	tr->samples = smp;
	eng_sim_init(&tr->sim, &prof_libc_allocator);
	tr->sim.keep_sites = true; /* (trace_sites=on: callgrind's call lines) */
	tr->sim.other = read_other;
	tr->sim.other_ctx = tr;
	int r = read_header(f, o, tr);
	if (r == 0 && smp)
		prof_samples_header(smp, &tr->h);
	struct read_bufs b = {0};
	struct rd_progress p;
	rd_progress_start(&p, o, "reading the trace", size);
	while (r == 0) {
		r = read_chunk(f, o, tr, &b, each, ctx);
		/* (the bar looks at multiples of 64 KiB: chunks end anywhere) */
		rd_progress_step(&p, tr->size & ~(uint64_t)0xffff);
	}
	rd_progress_end(&p);
	if (r == 1 && ferror(f))
		r = read_fail(o, path, "read error");
	else if (r == 1)
		r = eng_sim_finish(&tr->sim) ? read_fail(o, path, "out of memory") : 0;
	if (r == 0 && !tr->torn && !tr->ended && (tr->h.flags & MEMINST_TRACE_F_ENDS))
		rd_errf(o->err, "inspect: %s: the trace was cut at byte %llu (it has no end record: the process "
			"crashed, was killed or is still running, or a write failed); read up to there\n",
			path, (unsigned long long)tr->size);
	free(b.raw);
	free(b.wide);
	return r;
}

int prof_trace_read_stream(FILE *f, const char *path, uint64_t size, const struct rd_opts *o,
			   struct prof_trace *tr, prof_each_fn each, void *ctx)
{
	return read_stream(f, path, size, o, tr, each, ctx, NULL, NULL);
}

int prof_trace_read_ex(FILE *f, const char *path, uint64_t size, const struct rd_opts *o,
		       struct prof_trace *tr, prof_each_fn each, void *ctx, struct prof_samples *s)
{
	return read_stream(f, path, size, o, tr, each, ctx, s, NULL);
}

/* A trace file opened for reading, with its size; NULL after one line. */
static FILE *read_open_file(const char *path, const struct rd_opts *o, uint64_t *size, int *code)
{
	struct stat st;
	FILE *f = NULL;
	if (stat(path, &st) != 0)
		*code = read_fail(o, path, "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		*code = read_fail(o, path, "not a regular file");
	else if (!(f = fopen(path, "rb")))
		*code = read_fail(o, path, "%s", strerror(errno));
	*size = f ? (uint64_t)st.st_size : 0;
	return f;
}

int prof_trace_read(const char *path, const struct rd_opts *o, struct prof_trace *tr,
		    prof_each_fn each, void *ctx)
{
	return prof_source_read(path, 0, o, tr, each, ctx, NULL, NULL);
}

FILE *prof_source_open(const char *path, int64_t pid, const struct rd_opts *o, uint64_t *size, int *code)
{
	if (rd_is_session(path))
		return rd_strace_open(path, o, &pid, size, code);
	if (pid || rd_strace_wanted() >= 0) {
		rd_errf(o->err, "inspect: %s: --%s is for session databases\n", path, pid ? "pid" : "image");
		*code = RD_EXIT_USAGE;
		return NULL;
	}
	return read_open_file(path, o, size, code);
}

int prof_source_read(const char *path, int64_t pid, const struct rd_opts *o, struct prof_trace *tr,
		     prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s)
{
	return prof_source_read_live(path, pid, o, tr, each, ctx, restart, s, NULL);
}

int prof_source_read_live(const char *path, int64_t pid, const struct rd_opts *o, struct prof_trace *tr,
			  prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s,
			  struct prof_live *live)
{
	for (int pass = 0;; pass++) {
		uint64_t size;
		int r;
		FILE *f = prof_source_open(path, pid, o, &size, &r);
		if (!f) { /* tr is freed by the caller all the same */
			memset(tr, 0, sizeof *tr);
			eng_sim_init(&tr->sim, &prof_libc_allocator);
			return r;
		}
		if (s)
			prof_samples_begin(s);
		if (pass && restart)
			restart(ctx);
		r = read_stream(f, path, size, o, tr, each, ctx, s, live);
		fclose(f);
		if (r || !s || !prof_samples_reread(s) || pass > 0)
			return r;
		prof_trace_free(tr);
	}
}

void prof_trace_free(struct prof_trace *tr)
{
	eng_sim_free(&tr->sim);
	for (size_t i = 0; i < tr->nmods; i++)
		free(tr->mods[i].path);
	free(tr->mods);
	free(tr->exe);
	free(tr->cmdline);
	memset(tr, 0, sizeof *tr);
}

double prof_ns_per_tick(const struct prof_trace *tr)
{
	double ns = 1e9 / tr->h.tick_hz;
	const struct eng_sim *s = &tr->sim;
	if (tr->h.clock == MEMINST_TRACE_CLOCK_TSC && s->nclock >= 2 && s->clock_t1 > s->clock_t0 &&
	    s->clock_ns1 >= s->clock_ns0 + 10000000ull)
		ns = (double)(s->clock_ns1 - s->clock_ns0) / (double)(s->clock_t1 - s->clock_t0);
	return ns;
}
