/*
** trace_fold.c — the sampled data from inside the program: statprof's
** accessors (meminst_sample_fold, meminst_sample_stacks, meminst_sample_tree
** of <meminst.h>).
**
** Where the data comes from.  The signal handler keeps nothing but the
** per-thread buffers that go to the trace file (an in-memory aggregate
** would need a lock-free tree updated from the handler).  So an accessor
** flushes what can be taken while threads run (trace_flush_running: every
** thread's samples, the caller's allocation samples) and reads the process's
** own trace file back: the descriptor it writes to is found in
** /proc/self/fd (a regular file that starts with the trace magic and names
** this pid), and a new read-only descriptor is opened on it, so a file
** since renamed or a changed working directory do not matter.  Another
** thread's allocation samples (events stream) count once its buffer has
** gone out (every 64 KiB of records, or when it ends), and a run whose
** chunks go elsewhere (trace_sink) has no file: -1.
**
** The cost: one read of the whole trace file per call (twice when it holds
** SAMPLE_RESET records: the first pass finds them), and memory in
** proportion to the distinct stacks (the calling-context trees of
** engine/eng_cct.c), taken from mmap and returned before the call ends.
** Nothing here runs on the sampling path, and libc's allocations made for
** us (dladdr's) go untracked under the allocation layer's guard.
**
** Functions: an address is mapped to its function's entry with dladdr (the
** dynamic symbol table) or, when that knows no symbol, libunwind's
** unwind-table lookup (static functions too); names come from dladdr only,
** so they are NULL for functions that are not exported (link with
** -rdynamic to name them all).
*/
#define _GNU_SOURCE
#include "trace_sampler.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../alloc/alloc_int.h"
#include "../engine/eng_cct.h"
#include "meminst.h"

/* ------------------------------------------------------------- memory -- */

static void *fold_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	size_t *h = mmap(NULL, n + 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	h[0] = n + 16;
	if (p) {
		size_t *old = (size_t *)p - 2;
		memcpy(h + 2, p, old[0] - 16 < n ? old[0] - 16 : n);
		munmap(old, old[0]);
	}
	return h + 2;
}

static void fold_free(void *ctx, void *p)
{
	(void)ctx;
	size_t *old = (size_t *)p - 2;
	munmap(old, old[0]);
}

static const struct eng_allocator fold_alloc = {fold_realloc, fold_free, NULL};

/* ------------------------------------------------------- the trace file -- */

/* A new read-only descriptor on this process's trace file, or -1. */
static int fold_open_trace(void)
{
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	char buf[4096];
	long n;
	int found = -1;
	while (found < 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
		for (long off = 0; off < n && found < 0;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			struct stat st;
			int fd = atoi(d->d_name);
			if (d->d_name[0] < '0' || d->d_name[0] > '9' || fd == dir || fstat(fd, &st) != 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			char path[64];
			snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
			int r = open(path, O_RDONLY | O_CLOEXEC);
			struct meminst_trace_header h;
			if (r >= 0 && pread(r, &h, sizeof h, 0) == (ssize_t)sizeof h &&
			    !memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) && h.pid == (uint32_t)getpid())
				found = r;
			else if (r >= 0)
				close(r);
		}
	close(dir);
	return found;
}

struct fold_run {
	int fd;
	struct meminst_trace_header h;
	uint64_t *buf;           /* one chunk's words (fold_alloc)             */
	size_t cap;
	/* resets (first pass): samples earlier than these are dropped */
	uint64_t drop_all;
	struct eng_cct drops;   /* roots keyed by thread, self[0] = time     */
	bool per_thread;
};

static size_t fold_rec_size(const uint64_t *w, size_t avail)
{
	return meminst_trec_len(w, avail); /* CALL32/RET32 of version 2 too */
}

typedef void (*fold_rec_fn)(struct fold_run *r, uint32_t thread, const uint64_t *rec, size_t n, void *ctx);

/* Every record of the file, chunk by chunk. */
static int fold_each(struct fold_run *r, fold_rec_fn fn, void *ctx)
{
	off_t at = r->h.header_size;
	struct meminst_trace_chunk c;
	while (pread(r->fd, &c, sizeof c, at) == (ssize_t)sizeof c && c.magic == MEMINST_TRACE_CHUNK_MAGIC) {
		if (c.words > r->cap) {
			void *p = fold_realloc(NULL, r->buf, (size_t)c.words * 8);
			if (!p)
				return -1;
			r->buf = p;
			r->cap = c.words;
		}
		ssize_t got = pread(r->fd, r->buf, (size_t)c.words * 8, at + (off_t)sizeof c);
		if (got != (ssize_t)c.words * 8)
			break; /* a chunk being written: the data ends here */
		at += (off_t)sizeof c + got;
		if (c.stream == MEMINST_TRACE_STREAM_PAD)
			continue; /* the writer's padding */
		for (size_t i = 0, len; i < c.words; i += len) {
			if ((len = fold_rec_size(r->buf + i, c.words - i)) == 0)
				break;
			fn(r, c.thread, r->buf + i, len, ctx);
		}
	}
	return 0;
}

static void fold_find_resets(struct fold_run *r, uint32_t thread, const uint64_t *rec, size_t n, void *ctx)
{
	(void)n, (void)ctx;
	uint64_t t = MEMINST_TREC_TIME(rec[0]);
	uint32_t root;
	if (MEMINST_TREC_KIND(rec[0]) != MEMINST_TREC_SAMPLE_RESET)
		return;
	if (!r->per_thread) {
		r->drop_all = t > r->drop_all ? t : r->drop_all;
	} else if (eng_cct_child(&r->drops, ENG_CCT_NONE, thread, &root) == ENG_OK &&
		   (double)t > r->drops.nodes[root].self[0]) {
		r->drops.nodes[root].self[0] = (double)t;
	}
}

static bool fold_dropped(const struct fold_run *r, uint32_t thread, uint64_t t)
{
	if (t < r->drop_all)
		return true;
	uint32_t i = eng_cct_find(&r->drops, ENG_CCT_NONE, thread);
	return i != ENG_CCT_NONE && (double)t < r->drops.nodes[i].self[0];
}

static pthread_mutex_t fold_lock = PTHREAD_MUTEX_INITIALIZER;

/* Flush, open and scan for resets.  0, or -1 (no trace file). */
static int fold_start(struct fold_run *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	eng_cct_init(&r->drops, &fold_alloc);
	if (trace_sink || !trace_file_is_open())
		return -1;
	trace_flush_running();
	if ((r->fd = fold_open_trace()) < 0 || pread(r->fd, &r->h, sizeof r->h, 0) != (ssize_t)sizeof r->h)
		return -1;
	r->per_thread = r->h.clock == MEMINST_TRACE_CLOCK_CPU;
	return fold_each(r, fold_find_resets, NULL);
}

static void fold_end(struct fold_run *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->buf)
		fold_free(NULL, r->buf);
	eng_cct_free(&r->drops);
}

/* ------------------------------------------------------------- stacks -- */

struct fold_stacks {
	int (*fn)(const void *const *frames, unsigned n, unsigned thread, double seconds, void *arg);
	void *arg;
	int stop;
};

static void fold_stack_rec(struct fold_run *r, uint32_t thread, const uint64_t *rec, size_t n, void *ctx)
{
	struct fold_stacks *s = ctx;
	if (s->stop || MEMINST_TREC_KIND(rec[0]) != MEMINST_TREC_SAMPLE || fold_dropped(r, thread, MEMINST_TREC_TIME(rec[0])))
		return;
	unsigned k = (unsigned)(rec[1] >> 32);
	if (k + 3 > n)
		return;
	s->stop = s->fn((const void *const *)(rec + 3), k, thread, (double)rec[2] / r->h.tick_hz, s->arg);
}

ALLOC_EXPORT int meminst_sample_stacks(int (*fn)(const void *const *frames, unsigned n, unsigned thread,
						 double seconds, void *arg),
				       void *arg)
{
	struct fold_run r;
	alloc_guard_enter();
	pthread_mutex_lock(&fold_lock);
	struct fold_stacks s = {fn, arg, 0};
	int rc = fold_start(&r) < 0 ? -1 : 0;
	if (rc == 0 && fn)
		fold_each(&r, fold_stack_rec, &s);
	fold_end(&r);
	pthread_mutex_unlock(&fold_lock);
	alloc_guard_exit();
	return rc ? rc : s.stop;
}

/* ---------------------------------------------------- the aggregate --- */

struct fold_agg {
	struct eng_cct at;      /* address tree of the timer samples          */
	struct eng_cct funcs;   /* roots keyed by entry: the function ids     */
	struct eng_cct counts;  /* roots keyed by function address           */
	struct eng_cct cache;   /* roots keyed by address: self[0] = id       */
	struct eng_cct ft;
	struct eng_fsum *fs;
};

static void fold_agg_rec(struct fold_run *r, uint32_t thread, const uint64_t *rec, size_t n, void *ctx)
{
	struct fold_agg *a = ctx;
	unsigned kind = MEMINST_TREC_KIND(rec[0]);
	uint64_t frames[ENG_CCT_MAX_DEPTH];
	size_t k = (size_t)(rec[1] >> 32);
	if (fold_dropped(r, thread, MEMINST_TREC_TIME(rec[0])))
		return;
	if (kind == MEMINST_TREC_SAMPLE && k && k + 3 <= n) {
		k = k < ENG_CCT_MAX_DEPTH ? k : ENG_CCT_MAX_DEPTH;
		for (size_t i = 0; i < k; i++)
			frames[i] = i && rec[3 + i] ? rec[3 + i] - 1 : rec[3 + i];
		double m[ENG_M_N] = {[ENG_M_TICKS] = (double)rec[2], [ENG_M_SAMPLES] = 1};
		(void)eng_cct_add(&a->at, thread, frames, k, m);
	} else if (kind == MEMINST_TREC_COUNTS && 2 * k + 2 <= n) {
		for (size_t i = 0; i < k; i++) {
			uint32_t c;
			if (eng_cct_child(&a->counts, ENG_CCT_NONE, rec[2 + 2 * i], &c) == ENG_OK)
				a->counts.nodes[c].self[0] += (double)rec[3 + 2 * i];
		}
	}
}

static uint64_t fold_entry(uint64_t addr)
{
	Dl_info di;
	if (dladdr((void *)addr, &di) && di.dli_sname && di.dli_saddr)
		return (uint64_t)di.dli_saddr;
	uint64_t start;
	return trace_unwind_proc_entry(addr, &start) ? start : addr;
}

static uint32_t fold_fid(void *ctx, uint32_t node, uint64_t addr)
{
	struct fold_agg *a = ctx;
	(void)node;
	uint32_t c = eng_cct_find(&a->cache, ENG_CCT_NONE, addr), f;
	if (c != ENG_CCT_NONE)
		return (uint32_t)a->cache.nodes[c].self[0];
	if (eng_cct_child(&a->funcs, ENG_CCT_NONE, fold_entry(addr), &f) != ENG_OK ||
	    eng_cct_child(&a->cache, ENG_CCT_NONE, addr, &c) != ENG_OK)
		return UINT32_MAX;
	a->cache.nodes[c].self[0] = f;
	return f;
}

/* Read and fold the samples of every thread.  0, or -1. */
static int fold_aggregate(struct fold_run *r, struct fold_agg *a)
{
	memset(a, 0, sizeof *a);
	eng_cct_init(&a->at, &fold_alloc);
	eng_cct_init(&a->funcs, &fold_alloc);
	eng_cct_init(&a->counts, &fold_alloc);
	eng_cct_init(&a->cache, &fold_alloc);
	eng_cct_init(&a->ft, &fold_alloc);
	if (fold_start(r) < 0 || fold_each(r, fold_agg_rec, a) < 0)
		return -1;
	/* every address to a function first: the fold needs their number */
	for (size_t i = 0; i < a->at.n; i++)
		if (a->at.nodes[i].parent != ENG_CCT_NONE)
			(void)fold_fid(a, (uint32_t)i, a->at.nodes[i].key);
	for (size_t i = 0; i < a->counts.n; i++)
		(void)fold_fid(a, 0, a->counts.nodes[i].key);
	a->fs = fold_realloc(NULL, NULL, (a->funcs.n + 1) * sizeof *a->fs);
	if (!a->fs)
		return -1;
	memset(a->fs, 0, (a->funcs.n + 1) * sizeof *a->fs);
	struct eng_fold f = {fold_fid, NULL, a, a->funcs.n, 0, true};
	return eng_cct_fold(&a->at, &f, &a->ft, a->fs) == ENG_OK ? 0 : -1;
}

static void fold_agg_free(struct fold_agg *a)
{
	eng_cct_free(&a->at);
	eng_cct_free(&a->funcs);
	eng_cct_free(&a->counts);
	eng_cct_free(&a->cache);
	eng_cct_free(&a->ft);
	if (a->fs)
		fold_free(NULL, a->fs);
}

static void fold_name(uint64_t entry, const char **name, const char **module)
{
	Dl_info di;
	*name = *module = NULL;
	if (dladdr((void *)entry, &di)) {
		*module = di.dli_fname;
		if (di.dli_sname && (uint64_t)di.dli_saddr == entry)
			*name = di.dli_sname;
	}
}

ALLOC_EXPORT int meminst_sample_fold(int (*fn)(const struct meminst_call_data *cd, void *arg), void *arg)
{
	struct fold_run r;
	struct fold_agg a;
	int rc = 0;
	alloc_guard_enter();
	pthread_mutex_lock(&fold_lock);
	if (fold_aggregate(&r, &a) < 0)
		rc = -1;
	double sec = r.h.tick_hz > 0 ? 1 / r.h.tick_hz : 0;
	for (size_t i = 0; rc == 0 && fn && i < a.funcs.n; i++) {
		const struct eng_fsum *s = &a.fs[i];
		struct meminst_call_data cd = {.addr = (const void *)a.funcs.nodes[i].key};
		uint32_t c = eng_cct_find(&a.counts, ENG_CCT_NONE, a.funcs.nodes[i].key);
		cd.calls = c != ENG_CCT_NONE ? (unsigned long long)a.counts.nodes[c].self[0] : 0;
		if (s->cum[ENG_M_SAMPLES] == 0 && cd.calls == 0)
			continue;
		fold_name(a.funcs.nodes[i].key, &cd.name, &cd.module);
		cd.self_samples = (unsigned long long)s->self[ENG_M_SAMPLES];
		cd.cum_samples = (unsigned long long)s->cum[ENG_M_SAMPLES];
		cd.self_seconds = s->self[ENG_M_TICKS] * sec;
		cd.cum_seconds = s->cum[ENG_M_TICKS] * sec;
		rc = fn(&cd, arg);
	}
	fold_agg_free(&a);
	fold_end(&r);
	pthread_mutex_unlock(&fold_lock);
	alloc_guard_exit();
	return rc;
}

/* Node i and its subtree, depth first, children in the order made. */
static int fold_tree_walk(const struct fold_agg *a, uint32_t i, unsigned depth,
			  int (*fn)(const struct meminst_tree_node *node, void *arg), void *arg)
{
	const struct eng_cct_node *nd = &a->ft.nodes[i];
	struct meminst_tree_node tn = {.addr = (const void *)a->funcs.nodes[nd->key].key, .depth = depth};
	const char *module;
	fold_name(a->funcs.nodes[nd->key].key, &tn.name, &module);
	tn.samples = (unsigned long long)nd->total[ENG_M_SAMPLES];
	tn.self_samples = (unsigned long long)nd->self[ENG_M_SAMPLES];
	tn.recursive = (unsigned long long)nd->recur[ENG_M_SAMPLES];
	int rc = fn(&tn, arg);
	for (uint32_t c = nd->child; rc == 0 && c != ENG_CCT_NONE; c = a->ft.nodes[c].next)
		rc = fold_tree_walk(a, c, depth + 1, fn, arg);
	return rc;
}

ALLOC_EXPORT int meminst_sample_tree(int (*fn)(const struct meminst_tree_node *node, void *arg), void *arg)
{
	struct fold_run r;
	struct fold_agg a;
	int rc = 0;
	alloc_guard_enter();
	pthread_mutex_lock(&fold_lock);
	if (fold_aggregate(&r, &a) < 0)
		rc = -1;
	if (rc == 0 && fn && a.ft.n)
		for (uint32_t c = a.ft.nodes[0].child; rc == 0 && c != ENG_CCT_NONE; c = a.ft.nodes[c].next)
			rc = fold_tree_walk(&a, c, 0, fn, arg);
	fold_agg_free(&a);
	fold_end(&r);
	pthread_mutex_unlock(&fold_lock);
	alloc_guard_exit();
	return rc;
}
