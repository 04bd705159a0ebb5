/*
** trace_prof.c — the in-process profiler (MEMINST trace_output=profile,
** meminst_trace_start("…,trace_output=profile")): fprof's {tracer, …}.
**
** The writer's chunks do not go to a file: trace_sink hands each one to
** trace_prof_sink, which feeds it to the simulation engine of `inspect
** profile` (engine/eng_sim.c, built into libmeminst too) under one spin
** lock.  Chunks are 64 KiB of records, so the lock is taken once per ~3000
** calls of a thread.  At a stop and at exit the engine's rows are written
** as a PROFILE file (meminst-trace(5)): the header, thread 0's PROCESS,
** MODULE and CLOCK records as they came, then per thread THREAD_START and
** PROF_PAIR rows.  `inspect analyse` reads it like a full trace.
**
** The engine's memory comes from prof_mem_*: size classes carved from
** mmap'd arenas, big blocks mapped alone.  Never the program's malloc: the
** sink runs inside malloc (a flush of <alloc> records) and in any thread.
** Everything here runs under prof.lock, which is never held while calling
** something that may take another lock.
**
** Samples (the signal stream) are not kept: the sink may be called from a
** signal handler for them and takes no lock then.  MEMINST refuses
** sampling together with trace_output=profile.
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"
#include "../engine/eng_sim.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

bool trace_prof_on;

/* ------------------------------------------------------------- memory -- */

#define PM_MIN_SHIFT 5                  /* 32-byte blocks and up      */
#define PM_CLASSES 12                   /* up to 64 KiB in classes    */
#define PM_ARENA (1u << 20)
#define PM_HDR 16u                      /* keeps blocks 16-aligned    */

struct pm_free { struct pm_free *next; };

static struct {
	struct pm_free *free[PM_CLASSES];
	char *arena, *arena_end;
} pm;

/* The size word in front of every block: its class, or the mapping's
** bytes (large blocks) with the low bit set. */
static void *pm_alloc(size_t n)
{
	size_t need = n + PM_HDR;
	if (need > ((size_t)1 << (PM_MIN_SHIFT + PM_CLASSES - 1))) {
		size_t bytes = (need + 4095) & ~(size_t)4095;
		uint64_t *m = alloc_sys_map(bytes);
		if (!m)
			return NULL;
		m[0] = bytes | 1;
		return (char *)m + PM_HDR;
	}
	unsigned c = 0;
	while (((size_t)1 << (PM_MIN_SHIFT + c)) < need)
		c++;
	size_t size = (size_t)1 << (PM_MIN_SHIFT + c);
	char *b = (char *)pm.free[c];
	if (b) {
		pm.free[c] = pm.free[c]->next;
	} else {
		if (!pm.arena || (size_t)(pm.arena_end - pm.arena) < size) {
			char *a = alloc_sys_map(PM_ARENA); /* the rest of the old one is left */
			if (!a)
				return NULL;
			pm.arena = a, pm.arena_end = a + PM_ARENA;
		}
		b = pm.arena;
		pm.arena += size;
	}
	*(uint64_t *)b = (uint64_t)c << 1;
	return b + PM_HDR;
}

static size_t pm_usable(void *p)
{
	uint64_t w = *(uint64_t *)((char *)p - PM_HDR);
	return (w & 1 ? (size_t)(w & ~1ull) : (size_t)1 << (PM_MIN_SHIFT + (w >> 1))) - PM_HDR;
}

static void pm_free_cb(void *ctx, void *p)
{
	(void)ctx;
	char *b = (char *)p - PM_HDR;
	uint64_t w = *(uint64_t *)b;
	if (w & 1) {
		alloc_sys_unmap(b, (size_t)(w & ~1ull));
		return;
	}
	struct pm_free *f = (struct pm_free *)b;
	f->next = pm.free[w >> 1];
	pm.free[w >> 1] = f;
}

static void *pm_realloc_cb(void *ctx, void *p, size_t n)
{
	(void)ctx;
	if (p && pm_usable(p) >= n)
		return p;
	void *q = pm_alloc(n);
	if (q && p) {
		memcpy(q, p, pm_usable(p));
		pm_free_cb(NULL, p);
	}
	return q;
}

static const struct eng_allocator pm_allocator = {pm_realloc_cb, pm_free_cb, NULL};

/* --------------------------------------------------------- the engine -- */

static struct {
	_Atomic int lock;
	struct eng_sim sim;
	bool sim_ok;
	enum eng_err err;       /* the first error of the engine           */
	uint64_t *proc;          /* thread 0's records (PROCESS, MODULE, …)  */
	size_t nproc, proc_cap;
	char path[4096];         /* trace_file, absolute, %p not expanded    */
	int start_pid;
} prof;

/* Thread 0's records are kept as they came, for the result file. */
static void prof_keep_proc(const uint64_t *w, size_t n)
{
	if (prof.nproc + n > prof.proc_cap) {
		size_t cap = prof.proc_cap ? prof.proc_cap : 1024;
		while (cap < prof.nproc + n)
			cap *= 2;
		uint64_t *v = pm_realloc_cb(NULL, prof.proc, cap * 8);
		if (!v)
			return;
		prof.proc = v, prof.proc_cap = cap;
	}
	memcpy(prof.proc + prof.nproc, w, n * 8);
	prof.nproc += n;
}

/* trace_sink: one chunk of one thread.  Signal-stream chunks may come
** from a signal handler: they are dropped without touching the lock. */
static int prof_sink(const void *chunk, size_t bytes)
{
	const struct meminst_trace_chunk *h = chunk;
	if (h->stream != MEMINST_TRACE_STREAM_EVENTS)
		return 0;
	const uint64_t *w = (const uint64_t *)(h + 1);
	size_t n = (bytes - sizeof *h) / 8;
	trace_spin_lock(&prof.lock);
	if (h->thread == 0) {
		prof_keep_proc(w, n);
	} else if (prof.sim_ok && !prof.err) {
		/* CALL32/RET32/LEAF32 as the engine's records (meminst_trace_expand) */
		static uint64_t *wide;
		static size_t wide_cap;
		if (MEMINST_TRACE_EXPAND_MAX * n > wide_cap) {
			uint64_t *v = pm_realloc_cb(NULL, wide, MEMINST_TRACE_EXPAND_MAX * n * 8);
			if (!v) {
				prof.err = ENG_E_NOMEM;
				trace_spin_unlock(&prof.lock);
				return 0;
			}
			wide = v, wide_cap = MEMINST_TRACE_EXPAND_MAX * n;
		}
		size_t bad, used, m = meminst_trace_expand(w, n, wide, &used);
		prof.err = eng_sim_feed(&prof.sim, h->thread, h->stream, wide, m, &bad);
	}
	trace_spin_unlock(&prof.lock);
	return 0;
}

/* Tracing starts with trace_output=profile: chunks go to the engine from
** now on.  0, or -1 with a line logged.  Normal context. */
int trace_prof_start(void)
{
	if (trace_prof_on)
		return 0;
	const char *tmpl = trace_path[0] ? trace_path : "meminst.%p.trace";
	char cwd[2048] = "";
	if (tmpl[0] != '/' && !getcwd(cwd, sizeof cwd)) {
		alloc_log("trace_output=profile: cannot tell the current directory");
		return -1;
	}
	if (alloc_fmt(prof.path, sizeof prof.path, "%s%s%s", cwd, cwd[0] ? "/" : "", tmpl) >=
	    (int)sizeof prof.path) {
		alloc_log("trace file name too long: %s", tmpl);
		return -1;
	}
	trace_spin_lock(&prof.lock);
	if (!prof.sim_ok) {
		eng_sim_init(&prof.sim, &pm_allocator);
		prof.sim_ok = true;
	}
	trace_spin_unlock(&prof.lock);
	prof.start_pid = getpid();
	trace_sink = prof_sink;
	trace_prof_on = true;
	return 0;
}

/* ------------------------------------------------------ the result file -- */

struct prof_out {
	int fd;
	uint64_t *buf;           /* chunk header words, then records        */
	size_t n;                /* record words in buf                     */
	uint32_t thread;
	uint64_t seq;
	bool failed;
	int err;                 /* errno of the first failed write          */
};

#define PO_WORDS 8192

static void po_flush(struct prof_out *o)
{
	if (!o->n)
		return;
	struct meminst_trace_chunk *c = (void *)o->buf;
	uint64_t *w = o->buf + TRACE_CHUNK_WORDS;
	*c = (struct meminst_trace_chunk){MEMINST_TRACE_CHUNK_MAGIC, (uint32_t)o->n, o->thread,
					  MEMINST_TRACE_STREAM_EVENTS, 0, o->seq++,
					  meminst_trace_checksum(w, o->n)};
	if (!o->failed && trace_write_all(o->fd, o->buf, sizeof *c + o->n * 8) < 0)
		o->failed = true, o->err = errno;
	o->n = 0;
}

/* Records must fit a chunk (PROF_PAIR records are cut to fit). */
static void po_put(struct prof_out *o, const uint64_t *w, size_t n)
{
	if (o->n + n > PO_WORDS)
		po_flush(o);
	if (n > PO_WORDS)
		return;
	memcpy(o->buf + TRACE_CHUNK_WORDS + o->n, w, n * 8);
	o->n += n;
}

static void po_thread(struct prof_out *o, uint32_t thread)
{
	po_flush(o);
	o->thread = thread;
	o->seq = 0;
}

/* Thread 0: what came (PROCESS, MODULE), then the first and the last CLOCK
** pair, so that the reader converts ticks as it would for the full trace. */
static void po_process(struct prof_out *o)
{
	po_thread(o, 0);
	for (size_t i = 0, len; i < prof.nproc; i += len) {
		if (eng_rec_size(prof.proc + i, prof.nproc - i, &len) != ENG_OK)
			break;
		po_put(o, prof.proc + i, len);
	}
	const struct eng_sim *s = &prof.sim;
	if (s->nclock) {
		uint64_t c[4] = {MEMINST_TREC_HEAD(MEMINST_TREC_CLOCK, s->clock_t0), s->clock_ns0,
				 MEMINST_TREC_HEAD(MEMINST_TREC_CLOCK, s->clock_t1), s->clock_ns1};
		po_put(o, c, s->nclock > 1 ? 4 : 2);
	}
}

/* One thread: THREAD_START at its first time stamp, LOST if any, then its
** pair rows in PROF_PAIR records stamped with its last time stamp (the
** reader takes the thread's span from these two). */
static void po_thread_rows(struct prof_out *o, const struct eng_thread *t)
{
	uint64_t rows = 0;
	for (size_t i = 0; i < t->npairs; i++) {
		const struct eng_pair_row *p = &t->pairs[i];
		rows += p->caller != t->pend_idx && p->called != t->pend_idx &&
			(p->cnt || p->acc || p->own);
	}
	if (!rows)
		return;
	po_thread(o, t->thread);
	uint64_t start[4] = {MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_START, t->first),
			     (t->tid & 0xffffffffu) | (uint64_t)t->parent << 32, 0, 0};
	memcpy(start + 2, t->name, 16);
	po_put(o, start, 4);
	if (t->lost) {
		uint64_t lost[2] = {MEMINST_TREC_HEAD(MEMINST_TREC_LOST, t->first), t->lost};
		po_put(o, lost, 2);
	}
	const size_t row = MEMINST_TPROF_ROW_MEM, per = (PO_WORDS - 2) / row; /* rows per record */
	uint64_t *rec = o->buf + TRACE_CHUNK_WORDS;
	size_t i = 0;
	while (i < t->npairs) {
		po_flush(o); /* one record per chunk, built in place */
		size_t k = 0;
		for (; i < t->npairs && k < per; i++) {
			const struct eng_pair_row *p = &t->pairs[i];
			if (p->caller == t->pend_idx || p->called == t->pend_idx ||
			    !(p->cnt || p->acc || p->own))
				continue;
			uint64_t *r = rec + 2 + row * k++;
			r[0] = t->fns[p->called].fn;
			r[1] = t->fns[p->caller].fn;
			r[2] = p->cnt, r[3] = p->acc, r[4] = p->own;
			r[5] = p->mem.own_bytes, r[6] = p->mem.own_blocks;
			r[7] = p->mem.acc_bytes, r[8] = p->mem.acc_blocks;
		}
		if (!k)
			break;
		rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_PROF_PAIR, t->last);
		rec[1] = MEMINST_TREC_SIZE_WORD(2 + row * k, row);
		o->n = 2 + row * k;
	}
	po_flush(o);
}

/* The file's name: trace_file with %p expanded; a forked child that has no
** %p in it adds .PID, as for event traces. */
static int prof_out_path(char *out, size_t len)
{
	int pid = getpid(), name = alloc_ids_name(NULL); /* pid namespaces: alloc_ids.c */
	if (trace_path_expand(prof.path, name, out, len) < 0)
		return -1;
	if (pid != prof.start_pid && !strstr(prof.path, "%p")) {
		size_t n = strlen(out);
		if (alloc_fmt(out + n, len - n, ".%d", name) >= (int)(len - n))
			return -1;
	}
	return 0;
}

/* The profile went to tmp (NULL: to path itself), its first failed write
** with errno err (0: none): put it in place, or say why not. */
static void prof_write_finish(const char *path, const char *tmp, int err)
{
	const char *bad = NULL;
	if (err) {
		alloc_log("cannot write the profile to %s: %s (errno %d)%s", path, strerror(err), err,
			  tmp ? "; the file there is left as it was" : "");
	} else if (tmp && (bad = trace_file_refuse(path)) != NULL) {
		alloc_log("trace file %s %s; not overwriting it", path, bad);
	} else if (tmp && rename(tmp, path) != 0) {
		err = errno;
		alloc_log("cannot write the profile to %s: %s (errno %d)", path, strerror(err), err);
	}
	if (tmp && (err || bad))
		unlink(tmp);
}

static void prof_write_locked(void)
{
	char path[4096];
	if (prof_out_path(path, sizeof path) < 0) {
		alloc_log("trace file name too long: %s", prof.path);
		return;
	}
	if (prof.err == ENG_OK)
		prof.err = eng_sim_finish(&prof.sim);
	if (prof.err != ENG_OK) {
		alloc_log("the in-process profile is incomplete (%s); writing what it has",
			  prof.err == ENG_E_NOMEM ? "out of memory" : "a bad record");
	}
	/* written under a name of its own and renamed over the last profile
	** once whole: a failed write (a full disk, ulimit -f) leaves the last
	** one, not a cut one; a pipe or a device is written to directly */
	char tmp[sizeof path + 32];
	struct stat st;
	bool in_place = stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
	if (!in_place && alloc_fmt(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof tmp) {
		alloc_log("trace file name too long: %s", path);
		return;
	}
	struct prof_out o = {.fd = trace_file_create(in_place ? path : tmp)};
	if (o.fd < 0)
		return;
	o.buf = pm_alloc((TRACE_CHUNK_WORDS + PO_WORDS) * 8);
	struct meminst_trace_header h;
	trace_header_fill(&h);
	h.flags = (h.flags & (MEMINST_TRACE_F_CALLS | MEMINST_TRACE_F_ALL_THREADS)) |
		  MEMINST_TRACE_F_CALLS | MEMINST_TRACE_F_PROFILE;
	h.sample_hz = h.sample_clock = 0;
	h.alloc_sample = 0;
	if (!o.buf || trace_write_all(o.fd, &h, sizeof h) < 0) {
		o.failed = true, o.err = o.buf ? errno : ENOMEM;
	} else {
		po_process(&o);
		for (size_t i = 0; i < prof.sim.nthreads; i++)
			if (prof.sim.threads[i]->thread)
				po_thread_rows(&o, prof.sim.threads[i]);
		po_flush(&o);
	}
	if (o.buf)
		pm_free_cb(NULL, o.buf);
	close(o.fd);
	prof_write_finish(path, in_place ? NULL : tmp, o.failed ? o.err : 0);
}

/* At a stop and at exit: the profile so far, written over the last one.
** The caller has flushed the buffers it could. */
void trace_prof_write(void)
{
	if (!trace_prof_on)
		return;
	trace_tls.busy++;
	int saved_errno = errno;
	trace_spin_lock(&prof.lock);
	prof_write_locked();
	trace_spin_unlock(&prof.lock);
	errno = saved_errno;
	trace_tls.busy--;
}

/* In a forked child: the parent's figures are the parent's.  The child
** profiles on from nothing, into its own file. */
void trace_prof_after_fork_child(void)
{
	if (!trace_prof_on)
		return;
	atomic_store(&prof.lock, 0);
	if (prof.sim_ok)
		eng_sim_free(&prof.sim);
	eng_sim_init(&prof.sim, &pm_allocator);
	prof.err = ENG_OK;
}
