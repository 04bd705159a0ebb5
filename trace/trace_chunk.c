/*
** trace_chunk.c — the trace file's format as the writer makes it: the file
** header (trace_header_fill), sealing a stream's words into a chunk with
** its LOST count (trace_chunk_out), and thread 0's stream, the process's
** own records: PROCESS, MODULE, TRACE_COST (meminst-trace(5)).
**
** Separate from trace_buf.c, which keeps the writer's machinery (the
** thread records and their registry, the spares for signal handlers,
** appending and flushing, opening the file and fork), because this is what
** a change to the on-disk format touches, and the writer's locking and
** life cycle are read apart from it.  Like the rest of the writer it never
** calls malloc.
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#define buf_lock trace_spin_lock
#define buf_unlock trace_spin_unlock

/* Thread 0: the process's own records (PROCESS, MODULE). */
trace_chunk_proc_t trace_chunk_proc;

/* ----------------------------------------------------- header, chunks -- */


void trace_header_fill(struct meminst_trace_header *hp)
{
	struct meminst_trace_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, MEMINST_TRACE_MAGIC, 8);
	h.version = MEMINST_TRACE_VERSION;
	h.header_size = sizeof h;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	h.clock = (uint32_t)trace_clock;
	h.flags = (trace_want_clock ? MEMINST_TRACE_F_CALLS : 0) |
		  (trace_all_threads ? MEMINST_TRACE_F_ALL_THREADS : 0) |
		  (alloc_opts.sample_hz ? MEMINST_TRACE_F_SAMPLES : 0) |
		  (alloc_opts.alloc_sample ? MEMINST_TRACE_F_ALLOC_SAMPLES : 0);
	h.tick_hz = trace_ticks_per_second();
	h.t0_tick = trace_t0;
	trace_clock_origin(&h.t0_realtime_ns, &h.t0_mono_ns);
	h.sample_hz = alloc_opts.sample_hz;
	h.sample_clock = alloc_opts.sample_hz ? (alloc_opts.sample_clock == 1 ? MEMINST_TRACE_SAMPLE_WALL
									  : MEMINST_TRACE_SAMPLE_CPU)
				   : 0;
	h.alloc_sample = alloc_opts.alloc_sample;
	h.proc_start = trace_proc_start();
	*hp = h;
}

int trace_chunk_write_header(int fd)
{
	struct meminst_trace_header h;
	trace_header_fill(&h);
	h.flags |= MEMINST_TRACE_F_ENDS; /* trace_writer_close, trace_flush_at_death */
	return trace_write_all(fd, &h, sizeof h);
}

/* Records in n words, for the LOST count of a chunk that could not be written. */
static uint64_t buf_count_records(const uint64_t *w, uint64_t n)
{
	uint64_t count = 0;
	for (uint64_t i = 0; i < n; count++) {
		size_t len = meminst_trec_len(w + i, (size_t)(n - i));
		i += len ? len : 1;
	}
	return count;
}

/* Seal the stream's words into a chunk and write it; then the stream is
** empty, apart from a LOST record if this or earlier chunks were lost.
** The caller owns the stream (owner thread, or the exit flush).  With
** `owner`, an events chunk goes to the writer thread when it runs, and the
** stream goes on in a fresh buffer. */
void trace_chunk_out(uint32_t thread_no, trace_stream_t *s, unsigned stream, trace_thr_t *owner)
{
	uint64_t n = (uint64_t)(s->pos - s->base);
	if (n) {
		struct meminst_trace_chunk *h = (void *)(s->base - TRACE_CHUNK_WORDS);
		h->magic = MEMINST_TRACE_CHUNK_MAGIC;
		h->words = (uint32_t)n;
		h->thread = thread_no;
		h->stream = (uint16_t)stream;
		h->reserved = 0;
		h->seq = s->seq++;
		/* summed here, where the words are still in this core's cache:
		** the writer thread then never reads them (direct writes) */
		if (owner && !trace_sink)
			h->checksum = meminst_trace_checksum(s->base, n);
		if (owner && !trace_sink && trace_writer_handoff(owner) == 0)
			goto lost; /* rebased onto a fresh buffer */
		if (trace_chunk_emit(h) < 0)
			s->lost += buf_count_records(s->base, n);
	}
	trace_stream_restart(s);
lost:
	if (s->lost) {
		s->pos[0] = MEMINST_TREC_HEAD(MEMINST_TREC_LOST, trace_now());
		s->pos[1] = s->lost;
		s->pos += 2;
		s->lost = 0;
		trace_stream_wrote(s);
	}
}

void trace_chunk_write(uint32_t thread_no, trace_stream_t *s, unsigned stream)
{
	trace_chunk_out(thread_no, s, stream, NULL);
}

/* The stream's words move to another buffer (chunk header words before
** base); seq and lost go on. */
void trace_stream_rebase(trace_stream_t *s, uint64_t *base, unsigned words, unsigned reserve)
{
	s->base = base;
	s->end = base + words - reserve;
	trace_stream_restart(s);
}

void trace_chunk_stream_init(trace_stream_t *s, uint64_t *region, unsigned words, unsigned reserve)
{
	trace_stream_rebase(s, region + TRACE_CHUNK_WORDS, words, reserve);
	s->seq = 0;
	s->lost = 0;
}

/* ------------------------------------------------------ process records -- */

void trace_chunk_proc_flush_locked(void)
{
	trace_chunk_write(0, &trace_chunk_proc.s, MEMINST_TRACE_STREAM_EVENTS);
}

/* The file is complete: END, in a chunk of its own after every record
** (meminst-trace(5)); trace_chunk_proc.lock held, the other streams written.  Not for
** the in-process profiler's sink.  Async-signal-safe. */
void trace_chunk_proc_end_locked(void)
{
	trace_chunk_proc_flush_locked();
	if (trace_sink || trace_chunk_proc.s.pos != trace_chunk_proc.s.base)
		return; /* the sink, or thread 0's last records could not go out */
	trace_chunk_proc.s.pos[0] = MEMINST_TREC_HEAD(MEMINST_TREC_END, trace_now());
	trace_chunk_proc.s.pos[1] = MEMINST_TREC_SIZE_WORD(2, 0);
	trace_chunk_proc.s.pos += 2;
	trace_chunk_proc_flush_locked();
}

/* Append a record to thread 0's stream; trace_chunk_proc.lock held. */
static void proc_append_locked(const uint64_t *w, unsigned n)
{
	if (trace_chunk_proc.s.pos + n > trace_chunk_proc.s.end)
		trace_chunk_proc_flush_locked();
	if (trace_chunk_proc.s.pos + n > trace_chunk_proc.s.end) {
		trace_chunk_proc.s.lost++;
		return;
	}
	memcpy(trace_chunk_proc.s.pos, w, n * 8u);
	trace_chunk_proc.s.pos += n;
}

/* A variable record [head, size word, payload words…, text padded to 8]
** built in place on thread 0's stream; trace_chunk_proc.lock held. */
static void proc_append_var(unsigned kind, uint32_t extra, const uint64_t *payload, unsigned np,
			    const void *text, size_t tlen)
{
	uint64_t rec[8 + 512 + 8];
	unsigned tw = (unsigned)((tlen + 7) / 8), n = 2 + np + tw;
	if (n > sizeof rec / 8)
		return;
	rec[0] = MEMINST_TREC_HEAD(kind, trace_now());
	rec[1] = MEMINST_TREC_SIZE_WORD(n, extra);
	memcpy(rec + 2, payload, np * 8u);
	memset(rec + 2 + np, 0, tw * 8u);
	memcpy(rec + 2 + np, text, tlen);
	proc_append_locked(rec, n);
}

/* PROCESS: executable path NUL, then each argument followed by NUL. */
static void proc_process_record(void)
{
	char text[4096];
	alloc_sys_exe_path(text, sizeof text);
	size_t n = strlen(text) + 1;
	int c = alloc_sys_read_file("/proc/self/cmdline", text + n, sizeof text - (size_t)n);
	size_t len = (size_t)n + (c > 0 ? (size_t)c : 0);
	if (c > 0 && text[len - 1] != 0) /* cut short: keep the last argument terminated */
		text[len - 1] = 0;
	proc_append_var(MEMINST_TREC_PROCESS, (uint32_t)len, NULL, 0, text, len);
}


/* One MODULE record per PT_LOAD segment of each loaded object. */
static int proc_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	char path[4096];
	alloc_sys_module_path(info, path, sizeof path);
	size_t plen = strlen(path) + 1;
	uint64_t pay[4 + 8];
	unsigned char *bid = (unsigned char *)(pay + 4);
	memset(bid, 0, 64);
	size_t blen = alloc_sys_build_id(info, bid, 64);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		pay[0] = info->dlpi_addr + ph->p_vaddr;
		pay[1] = pay[0] + ph->p_memsz;
		pay[2] = ph->p_offset;
		pay[3] = blen;
		proc_append_var(MEMINST_TREC_MODULE, (uint32_t)plen, pay, 4 + (unsigned)(blen + 7) / 8,
				path, plen);
	}
	return 0;
}

/* Write MODULE records again when objects were loaded or unloaded since the
** last scan (dlopen, dlclose).  Normal context; cheap when nothing moved. */
void trace_modules_check(void)
{
	if (atomic_load(&trace_fio_fd) < 0 && !trace_sink)
		return;
	unsigned long long c[2];
	trace_tls.busy++;
	/* not waiting for a fork: flushes come inside malloc; the next looks */
	bool read = alloc_sys_loader_counts(&c[0], &c[1], false);
	buf_lock(&trace_chunk_proc.lock);
	if (read && (!trace_chunk_proc.scanned || c[0] != trace_chunk_proc.adds || c[1] != trace_chunk_proc.subs) &&
	    trace_loader_iterate(proc_module_cb, NULL, false)) {
		trace_chunk_proc.adds = c[0], trace_chunk_proc.subs = c[1], trace_chunk_proc.scanned = true;
		trace_chunk_proc_flush_locked();
	}
	buf_unlock(&trace_chunk_proc.lock);
	trace_tls.busy--;
}

/* ------------------------------------------------------- cost record -- */

uint64_t trace_cost_ps[MEMINST_TCOST_N];

static void proc_cost_locked(void)
{
	if (trace_cost_ps[0])
		proc_append_var(MEMINST_TREC_TRACE_COST, 0, trace_cost_ps, MEMINST_TCOST_N, "", 0);
}

void trace_cost_record(void)
{
	buf_lock(&trace_chunk_proc.lock);
	proc_cost_locked();
	trace_chunk_proc_flush_locked();
	buf_unlock(&trace_chunk_proc.lock);
}

/* Thread 0's stream starts with the PROCESS record (and TRACE_COST when it
** is known: a forked child's file); MODULE records follow at the next
** trace_modules_check. */
void trace_chunk_proc_begin(void)
{
	trace_chunk_stream_init(&trace_chunk_proc.s, trace_chunk_proc.words, 8192, 0);
	trace_chunk_proc.scanned = false;
	buf_lock(&trace_chunk_proc.lock);
	proc_process_record();
	proc_cost_locked();
	trace_chunk_proc_flush_locked();
	buf_unlock(&trace_chunk_proc.lock);
}
