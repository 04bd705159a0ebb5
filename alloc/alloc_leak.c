/*
** alloc_leak.c — memcheck's leak classes from the live map (mim).
**
** A reachability scan as LeakSanitizer and Valgrind's memcheck make it.
** The roots are the writable segments (PT_LOAD with PF_W: .data, .bss,
** the GOT) of every loaded object but meminst's own and the libraries it
** loads for itself (SQLite, jemalloc) and glibc's main arena (below), the stack of every thread from its
** stack pointer (less the 128-byte red zone) to the top of its mapping,
** every thread's registers, and its static TLS block and thread descriptor
** around its thread pointer (a thread's dynamic TLS blocks and its DTV are
** malloc'd by glibc and reached from there; the loader's own malloc'd
** blocks from ld.so's data).  From the roots a flood fill follows every
** aligned 8-byte word that points into a live block, and each block gets
** memcheck's class (mc_leakcheck.c):
**   still reachable   a start pointer from a root or a reachable block;
**   possibly lost     reached, but only through an interior pointer (or
**                     from a possibly lost block);
**   definitely lost   no pointer at all: the leader of a clique of lost
**                     blocks, the first in address order not reached from
**                     another lost block;
**   indirectly lost   reachable only from lost blocks; its bytes count
**                     in the clique of the definitely lost block that
**                     reached it first (a leader reached later from
**                     another clique hands its own over, as memcheck).
**
** The scan runs inside a snapshot's capture (alloc_snapshot.c), with every
** map list held, so no tracked block can be freed meanwhile.  The other
** threads of the program are stopped first, their registers and stack
** pointers saved (alloc_leak_stop.c).  Roots are read with
** process_vm_readv, so a mapping that goes away cannot fault the scan;
** blocks are read in place (they cannot be freed while the map is held).
** Nothing here allocates: working memory is mapped and unmapped.
*/
#define _GNU_SOURCE
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define LEAK_REDZONE 128
#define LEAK_MODULES_MAX 4096

/* A block's state during the scan (memcheck's names), and ST_PENDING:
** its words are still to be read in that state (on the stack, or left off
** it when the stack was full). */
enum { ST_UNREACHED = 0, ST_POSSIBLE, ST_REACHABLE, ST_INDIRECT, ST_MASK = 3, ST_PENDING = 4,
       ST_LEADER = 8 /* led a clique: its sums in ind_bytes, ind_blocks */ };

typedef alloc_leak_range_t leak_range_t;
typedef alloc_leak_vma_t leak_vma_t;

static size_t leak_tls_static = 8192;

/* Everything one scan works on. */
typedef struct leak_s {
	size_t n;                   /* blocks, by address: addr */
	uint8_t *state;             /* ST_*, in the snapshot's leak_class */
	uint64_t *ind_bytes;        /* a clique leader's indirectly lost bytes */
	uint32_t *ind_blocks;       /* and blocks                              */
	const uint64_t *addr;       /* the blocks' addresses, sorted           */
	uint32_t *bucket;           /* first block of each address bucket */
	unsigned shift;
	uint64_t lo, span;
	uint32_t *stack;            /* blocks to scan */
	size_t depth, stack_cap;
	bool overflow;              /* a block was left off the full stack */
	uint32_t clique;            /* the leader, in the clique phase; else UINT32_MAX */
	bool absorbed;              /* the leader's clique has a block */
	void *map;
	size_t map_bytes;
	leak_range_t *modules;
	size_t nmodules;
	leak_range_t *segs;         /* every object's writable segments, ours too */
	size_t nsegs;
	alloc_leak_maps_t mp;       /* the mappings; the program's anonymous ones */
	char *buf;                  /* for roots read with process_vm_readv */
	bool vm_readv;              /* process_vm_readv works here */
	uint64_t scanned;
} leak_t;

static leak_t leak_ctx; /* prepared before the map is held */

/* ------------------------------------------------------- the flood --- */

/* Block i's first byte, its size and the byte after it (a pointer to a
** 0-byte block is its start): the address from the capture, the size from
** the block's header (the map is held: it stays), rather than from arrays
** of their own (issue 29: 16 B a block more at an exit snapshot). */
static inline uint64_t leak_start(const leak_t *k, size_t i)
{
	return k->addr[i];
}

static inline uint64_t leak_size(const leak_t *k, size_t i)
{
	return alloc_hdr_bytes(&((const alloc_mhdr_t *)k->addr[i] - 1)->h);
}

static inline uint64_t leak_end(const leak_t *k, size_t i)
{
	uint64_t size = leak_size(k, i);
	return k->addr[i] + (size ? size : 1);
}

/* The block v points into, or -1. */
static inline int64_t leak_find(const leak_t *k, uint64_t v)
{
	uint64_t off = v - k->lo;
	if (off >= k->span)
		return -1;
	size_t b = off >> k->shift;
	size_t lo = k->bucket[b], hi = k->bucket[b + 1]; /* the answer is in [lo-1, hi) */
	if (lo > 0)
		lo--;
	while (lo < hi) { /* the last block starting at or below v */
		size_t mid = (lo + hi) / 2;
		if (leak_start(k, mid) <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	return v < leak_end(k, lo) ? (int64_t)lo : -1;
}

static inline void leak_push(leak_t *k, uint32_t i)
{
	k->state[i] |= ST_PENDING;
	if (k->depth < k->stack_cap)
		k->stack[k->depth++] = i;
	else
		k->overflow = true; /* found again by leak_drain's sweep */
}

/* A word v found in a root (prior_definite) or in a block. */
static inline void leak_word(leak_t *k, uint64_t v, bool prior_definite)
{
	int64_t f = leak_find(k, v);
	if (f < 0)
		return;
	uint32_t i = (uint32_t)f;
	uint8_t *s = &k->state[i], st = *s & ST_MASK;
	if (k->clique != UINT32_MAX) { /* memcheck: start or interior alike */
		if (st == ST_UNREACHED && i != k->clique) {
			k->ind_bytes[k->clique] += leak_size(k, i);
			k->ind_blocks[k->clique] += 1;
			if (*s & ST_LEADER) { /* a former leader's sums, handed over */
				k->ind_bytes[k->clique] += k->ind_bytes[i];
				k->ind_blocks[k->clique] += k->ind_blocks[i];
			}
			k->absorbed = true;
			*s = ST_INDIRECT;
			leak_push(k, i);
		}
	} else if (v == leak_start(k, i) && prior_definite && st != ST_REACHABLE) {
		*s = ST_REACHABLE;
		leak_push(k, i);
	} else if (st == ST_UNREACHED) {
		*s = ST_POSSIBLE;
		leak_push(k, i);
	}
}

static void leak_words(leak_t *k, const uint64_t *w, size_t n, bool prior_definite)
{
	k->scanned += n * 8;
	for (size_t j = 0; j < n; j++) {
		uint64_t v = w[j];
		if (v - k->lo < k->span)
			leak_word(k, v, prior_definite);
	}
}

/* Scan what the stack holds until it is empty. */
static void leak_drain_stack(leak_t *k)
{
	while (k->depth) {
		uint32_t i = k->stack[--k->depth];
		if (!(k->state[i] & ST_PENDING))
			continue; /* pushed twice (POSSIBLE, then REACHABLE): read once, as it is now */
		k->state[i] &= ST_MASK;
		bool definite = k->state[i] == ST_REACHABLE;
		leak_words(k, (const uint64_t *)leak_start(k, i), (leak_end(k, i) - leak_start(k, i)) / 8, definite);
	}
}

/* ... and the blocks left off it when it was full, found by a sweep: the
** stack is bounded (LEAK_STACK_MAX) rather than a word a block. */
static void leak_drain(leak_t *k)
{
	leak_drain_stack(k);
	while (k->overflow) {
		k->overflow = false;
		for (size_t i = 0; i < k->n; i++)
			if (k->state[i] & ST_PENDING) {
				k->stack[k->depth++] = (uint32_t)i;
				leak_drain_stack(k);
			}
	}
}

/*
** A root range, read through process_vm_readv (a mapping unmapped meanwhile
** reads as nothing) a chunk at a time; a chunk that does not read whole is
** read a page at a time.  Without the system call, in place when readable.
*/
#define LEAK_CHUNK 65536
static size_t leak_read(leak_t *k, uintptr_t at, size_t n)
{
	if (!k->vm_readv)
		return alloc_readable((void *)at, n) && alloc_readable((void *)(at + n - 1), 1)
			       ? (memcpy(k->buf, (void *)at, n), n)
			       : 0;
	struct iovec local = {k->buf, n}, remote = {(void *)at, n};
	ssize_t r = syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL);
	return r < 0 ? 0 : (size_t)r;
}

static void leak_root(leak_t *k, uintptr_t lo, uintptr_t hi)
{
	lo = (lo + 7) & ~(uintptr_t)7;
	while (lo + 8 <= hi) {
		size_t n = hi - lo < LEAK_CHUNK ? (hi - lo) & ~(size_t)7 : LEAK_CHUNK;
		size_t page = 4096 - (lo & 4095);
		size_t got = leak_read(k, lo, n);
		if (got < n && got < page) /* a hole: this page only */
			got = leak_read(k, lo, n < page ? n : page), n = n < page ? n : page;
		leak_words(k, (const uint64_t *)k->buf, got / 8, true);
		lo += n;
	}
	leak_drain(k);
}

/* ----------------------------------------------------- the roots --- */

static bool leak_module_own(const struct dl_phdr_info *info)
{
	/* libmeminst (its private SQLite inside it) and the backend's
	** library: a libsqlite3 the program loaded is the program's */
	uintptr_t own[2] = {(uintptr_t)&leak_ctx,
			    alloc_opts.backend != ALLOC_BACKEND_SYSTEM ? (uintptr_t)alloc_real.malloc : 0};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		for (int j = 0; ph->p_type == PT_LOAD && j < 2; j++)
			if (own[j] && own[j] >= lo && own[j] < hi)
				return true;
	}
	return false;
}

/*
** glibc's main_arena, in libc's .data, holds pointers to the headers of its
** free chunks (fastbins, bins, top).  Behind mim's 32-byte header, a block
** of 0 to 8 bytes sits in a 48-byte chunk and its user pointer is the next
** chunk's header: when that chunk is free, the arena holds a start pointer
** to the block, which memcheck, whose allocator is its own, never sees (troff
** kept 3 lost 8-byte blocks reachable so).  So the arena is no root.  It has
** no exported symbol; it is found by its empty bins, each a pair of words
** pointing 16 bytes below the pair (glibc's bin_at): the 254 words of bins
** start 112 bytes into the 2200-byte struct malloc_state (x86-64 and
** aarch64, glibc 2.26 on), so the range left out is every placement of the
** struct that holds the pairs found.
*/
#define LEAK_ARENA_BINS 112
#define LEAK_ARENA_BINS_SPAN 2016 /* the last pair's offset in bins */
#define LEAK_ARENA_SIZE 2200
static leak_range_t leak_arena;

static void leak_find_arena(uintptr_t lo, uintptr_t hi)
{
	uintptr_t first = 0, last = 0;
	unsigned pairs = 0;
	for (uintptr_t a = (lo + 7) & ~(uintptr_t)7; a + 16 <= hi; a += 8) {
		const uintptr_t *w = (const uintptr_t *)a;
		if (w[0] == a - 16 && w[1] == a - 16) {
			first = first ? first : a;
			last = a;
			pairs++;
		}
	}
	if (pairs >= 32 && last - first <= LEAK_ARENA_BINS_SPAN)
		leak_arena = (leak_range_t){last - LEAK_ARENA_BINS_SPAN - LEAK_ARENA_BINS,
					    first - LEAK_ARENA_BINS + LEAK_ARENA_SIZE};
}

static void leak_add_module(leak_t *k, uintptr_t lo, uintptr_t hi)
{
	if (leak_arena.hi > lo && leak_arena.lo < hi) { /* around the arena */
		if (leak_arena.lo > lo)
			leak_add_module(k, lo, leak_arena.lo);
		if (leak_arena.hi < hi)
			leak_add_module(k, leak_arena.hi, hi);
	} else if (k->nmodules < LEAK_MODULES_MAX) {
		k->modules[k->nmodules++] = (leak_range_t){lo, hi};
	}
}

static int leak_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	leak_t *k = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) { /* not anonymous roots: below */
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && k->nsegs < LEAK_MODULES_MAX)
			k->segs[k->nsegs++] = (leak_range_t){lo & ~(uintptr_t)4095,
							     (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095};
	}
	if (leak_module_own(info))
		return 0;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	bool libc = base && !strncmp(base + 1, "libc.so", 7);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		if (libc && !leak_arena.hi)
			leak_find_arena(lo, hi);
		leak_add_module(k, lo, hi);
	}
	return 0;
}

static inline uintptr_t leak_map_end(const leak_t *k, uintptr_t a) { return alloc_leak_map_end(&k->mp, a); }

/* A thread's stack from sp up, its registers, its TLS and descriptor. */
static void leak_thread_roots(leak_t *k, uintptr_t sp, uintptr_t tp, const uintptr_t *regs, unsigned nregs)
{
	leak_words(k, (const uint64_t *)regs, nregs, true);
	leak_drain(k);
	if (sp) {
		int64_t in = leak_find(k, sp); /* a stack inside a block (a coroutine's) */
		uintptr_t top = in >= 0 ? leak_end(k, (size_t)in) : leak_map_end(k, sp);
		uintptr_t from = sp - LEAK_REDZONE;
		if (leak_map_end(k, from) == 0)
			from = sp;
		if (top)
			leak_root(k, from, top);
	}
	if (tp) {
		uintptr_t end = leak_map_end(k, tp), lo = tp > leak_tls_static ? tp - leak_tls_static : 0;
		uintptr_t hi = tp + 4096 < end ? tp + 4096 : end;
		if (end)
			leak_root(k, lo, hi);
	}
}

/*
** Part of an anonymous mapping as a root, less what lies in it that is no
** root: a loaded object's segment (its .bss runs on in anonymous memory;
** scanned as the object's, glibc's arena left out) and the live blocks
** (glibc maps a large block as a mapping of its own, next to the
** program's: a block is reached through the flood, never a root).
*/
static void leak_root_gaps(leak_t *k, uintptr_t lo, uintptr_t hi)
{
	for (size_t s = 0; s < k->nsegs && lo < hi; s++) {
		const leak_range_t *g = &k->segs[s];
		if (g->hi <= lo || g->lo >= hi)
			continue;
		if (g->lo > lo)
			leak_root_gaps(k, lo, g->lo);
		lo = g->hi;
	}
	size_t a = 0, b = k->n; /* the first block ending above lo */
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (leak_end(k, mid) <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; lo < hi; i++) {
		uintptr_t stop = i < k->n && leak_start(k, i) < hi ? leak_start(k, i) : hi;
		if (stop > lo)
			leak_root(k, lo, stop);
		if (stop == hi)
			break;
		lo = leak_end(k, i);
	}
}

/*
** A thread stack no running thread is on (MAP_STACK, not a live thread's).
** A thread that ended and was not joined yet keeps its descriptor (its
** result) and static TLS at the top, which memcheck sees too; what it left
** below is no root (stale frames).  A stack in glibc's cache (the thread
** joined or detached: TERMINATED in its cancelhandling, at the offset
** libc gives libthread_db) is glibc's alone: memcheck's __libc_freeres
** unmaps it, so what only its TLS or result held is lost; only the DTV
** word stays a root (glibc reuses it).  x86-64: the descriptor is found by
** its tcb and self words, which hold its address; elsewhere, or when it is
** not found (a coroutine's stack), the whole mapping.
*/
static size_t leak_cancel_off;
#define LEAK_TERMINATED 0x20 /* glibc's TERMINATED_BITMASK */
static void leak_dead_stack(leak_t *k, uintptr_t lo, uintptr_t hi)
{
#if defined(__x86_64__)
	uintptr_t from = hi - lo > LEAK_CHUNK ? hi - LEAK_CHUNK : lo;
	size_t got = leak_read(k, from, hi - from) / 8;
	const uint64_t *w = (const uint64_t *)k->buf;
	for (size_t j = got >= 3 ? got - 3 : 0; got >= 3; j--) {
		uintptr_t at = from + j * 8;
		if (w[j] == at && w[j + 2] == at) {
			size_t c = j * 8 + leak_cancel_off;
			if (leak_cancel_off && c + 4 <= got * 8 && (*(const uint32_t *)(k->buf + c) & LEAK_TERMINATED)) {
				leak_root(k, at + 8, at + 16);
				return;
			}
			lo = at > lo + leak_tls_static ? at - leak_tls_static : lo;
			break;
		}
		if (j == 0)
			break;
	}
#endif
	leak_root_gaps(k, lo, hi);
}

/* The program's anonymous mappings, but the stacks of running threads
** (this one's holds here; scanned from their stack pointers). */
static void leak_anon_roots(leak_t *k, uintptr_t here)
{
	if (!k->mp.anon_ok)
		return;
	for (size_t i = 0; i < k->mp.nanon; i++) {
		const leak_vma_t *v = &k->mp.anon[i];
		bool running = here >= v->lo && here < v->hi;
		uint32_t n;
		const alloc_leak_thread_t *th = alloc_leak_threads(&n);
		for (uint32_t t = 0; t < n && !running; t++) {
			uintptr_t sp = th[t].sp;
			int st = atomic_load(&th[t].state);
			running = (st == 1 || st == 2 || st == 4) && sp >= v->lo && sp < v->hi;
		}
		if (!running && v->stack)
			leak_dead_stack(k, v->lo, v->hi);
		else if (!running)
			leak_root_gaps(k, v->lo, v->hi);
	}
}

/* ------------------------------------------------------ the scan --- */

/* Before the map is held: the loaded objects' segments (dl_iterate_phdr
** takes the loader's lock, which a thread waiting for a map lock may hold),
** the handler, the size of static TLS.  False when out of memory. */
bool alloc_leak_prepare(void)
{
	leak_t *k = &leak_ctx;
	size_t bytes = (2 * LEAK_MODULES_MAX + ALLOC_LEAK_MAPS_MAX) * sizeof(leak_range_t) +
		       ALLOC_LEAK_MAPS_MAX * sizeof(leak_vma_t) + LEAK_CHUNK;
	if (!k->buf && !(k->buf = alloc_sys_map(bytes)))
		return false;
	k->modules = (leak_range_t *)(k->buf + LEAK_CHUNK);
	k->mp.maps = k->modules + LEAK_MODULES_MAX;
	k->segs = k->mp.maps + ALLOC_LEAK_MAPS_MAX;
	k->mp.anon = (leak_vma_t *)(k->segs + LEAK_MODULES_MAX);
	k->nmodules = k->nsegs = 0;
	alloc_guard_enter();
	if (!trace_loader_iterate(leak_module_cb, k, true)) {
		alloc_guard_exit();
		return false;
	}
	for (size_t i = 1; i < k->nsegs; i++) /* by address (a few hundred) */
		for (size_t j = i; j > 0 && k->segs[j - 1].lo > k->segs[j].lo; j--) {
			leak_range_t t = k->segs[j];
			k->segs[j] = k->segs[j - 1], k->segs[j - 1] = t;
		}
	static bool tls_asked;
	if (!tls_asked) {
		void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
		size_t size = 0, align = 0;
		if (info)
			info(&size, &align);
		if (size)
			leak_tls_static = size;
		/* libthread_db's descriptor of the field: bits, count, offset */
		const uint32_t *ch = dlsym(RTLD_DEFAULT, "_thread_db_pthread_cancelhandling");
		leak_cancel_off = ch && ch[0] == 32 ? ch[2] : 0;
		tls_asked = true;
	}
	alloc_guard_exit();
	struct iovec local = {k->buf, 8}, remote = {&leak_ctx, 8};
	k->vm_readv = syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) == 8;
	return alloc_leak_stop_prepare();
}

/*
** Working memory for n blocks and the address index: a bucket for about 8
** blocks (4 bytes), a bounded stack, and the cliques' sums (their pages are
** written only for the leaders of cliques: read as zero elsewhere).  The states are the
** snapshot's leak_class, turned into classes at the end.
*/
#define LEAK_STACK_MAX (1u << 16)
static bool leak_index(leak_t *k, alloc_snap_t *im, const uint64_t *addr, size_t n)
{
	size_t nb = 1;
	while (nb * 8 < n)
		nb <<= 1;
	k->stack_cap = n < LEAK_STACK_MAX ? n + 16 : LEAK_STACK_MAX;
	k->map_bytes = (n * 8 + (nb + 2) * 4 + k->stack_cap * 4 + n * 4 + 4095) & ~(size_t)4095;
	if (!(k->map = alloc_sys_map(k->map_bytes)))
		return false;
	k->ind_bytes = k->map;
	k->bucket = (uint32_t *)(k->ind_bytes + n);
	k->stack = k->bucket + nb + 2;
	k->ind_blocks = k->stack + k->stack_cap;
	k->state = im->leak_class;
	k->addr = addr;
	k->n = n, k->depth = 0, k->clique = UINT32_MAX, k->scanned = 0, k->overflow = false;
	k->lo = n ? leak_start(k, 0) : 1;
	k->span = n ? leak_end(k, n - 1) - k->lo : 0;
	k->shift = 0;
	while (n && (k->span >> k->shift) >= nb)
		k->shift++;
	for (size_t b = 0, i = 0; b <= nb + 1; b++) {
		while (i < n && ((leak_start(k, i) - k->lo) >> k->shift) < b)
			i++;
		k->bucket[b] = (uint32_t)i;
	}
	return true;
}

/* Every root: threads (this one first), then the loaded objects. */
static void leak_scan_roots(leak_t *k)
{
	ucontext_t uc;
	getcontext(&uc);
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	leak_thread_roots(k, here, (uintptr_t)__builtin_thread_pointer(), (const uintptr_t *)&uc.uc_mcontext.gregs,
			  NGREG);
	uint32_t n;
	const alloc_leak_thread_t *th = alloc_leak_threads(&n);
	for (uint32_t i = 0; i < n; i++) {
		const alloc_leak_thread_t *t = &th[i];
		int st = atomic_load(&t->state);
		if (st == 2)
			leak_thread_roots(k, t->sp, t->tp, t->regs, t->nregs);
		else if (st == 4 || st == 1)
			leak_thread_roots(k, t->sp, 0, NULL, 0);
	}
	for (size_t i = 0; i < k->nmodules; i++)
		leak_root(k, k->modules[i].lo, k->modules[i].hi);
	leak_anon_roots(k, here);
}

/*
** The clique phase, then the cliques of the definitely lost blocks and
** each block's class and the sums.  The sums of a block are read only if
** it led a clique (ST_LEADER): their pages, never written for the others,
** stay out of the resident set.  False when out of memory for the cliques
** (then no check rather than a wrong one).
*/
static bool leak_classify(leak_t *k, alloc_snap_t *im)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->state[i] != ST_UNREACHED)
			continue;
		k->clique = (uint32_t)i;
		k->absorbed = false;
		leak_push(k, (uint32_t)i);
		leak_drain(k);
		if (k->absorbed)
			k->state[i] |= ST_LEADER;
	}
	k->clique = UINT32_MAX;
	for (size_t i = 0; i < k->n; i++) /* leaders still lost: not absorbed since */
		im->nleak_roots += k->state[i] == (ST_UNREACHED | ST_LEADER);
	im->leak_roots_bytes = (im->nleak_roots * sizeof *im->leak_roots + 4095) & ~(size_t)4095;
	if (im->nleak_roots && !(im->leak_roots = alloc_sys_map(im->leak_roots_bytes))) {
		im->nleak_roots = 0;
		return false;
	}
	static const uint8_t cls[] = {[ST_UNREACHED] = ALLOC_LEAK_DEFINITE, [ST_POSSIBLE] = ALLOC_LEAK_POSSIBLE,
				      [ST_REACHABLE] = ALLOC_LEAK_REACHABLE, [ST_INDIRECT] = ALLOC_LEAK_INDIRECT};
	for (size_t i = 0, j = 0; i < k->n; i++) {
		if (k->state[i] == (ST_UNREACHED | ST_LEADER))
			im->leak_roots[j++] = (alloc_leak_root_t){(uint32_t)i, k->ind_blocks[i], k->ind_bytes[i]};
		uint8_t c = cls[k->state[i] & ST_MASK];
		im->leak_class[i] = c;
		im->leak.bytes[c] += leak_size(k, i);
		im->leak.blocks[c]++;
	}
	return true;
}

/*
** The scan, with the map held, on the blocks at addr[0..n-1] (sorted):
** im->leak_class[i] is the class of the block at addr[i].  False when out
** of memory (the snapshot then has no classes).
*/
bool alloc_leak_scan(alloc_snap_t *im, const uint64_t *addr, size_t n)
{
	leak_t *k = &leak_ctx;
	int64_t t0 = alloc_snap_now(CLOCK_MONOTONIC), cpu0 = alloc_snap_now(CLOCK_THREAD_CPUTIME_ID);
	memset(&im->leak, 0, sizeof im->leak);
	im->nleak_roots = 0;
	im->leak_class_bytes = (n + 4095) & ~(size_t)4095;
	if (n && !(im->leak_class = alloc_sys_map(im->leak_class_bytes)))
		return false;
	if (!leak_index(k, im, addr, n)) {
		alloc_sys_unmap(im->leak_class, im->leak_class_bytes);
		im->leak_class = NULL;
		return false;
	}
	alloc_leak_stop(k->buf, &im->leak);
	alloc_leak_read_maps(&k->mp, k->buf, LEAK_CHUNK);
	leak_scan_roots(k);
	bool roots = leak_classify(k, im);
	alloc_leak_resume();
	im->leak.scanned_bytes = k->scanned;
	alloc_sys_unmap(k->map, k->map_bytes);
	k->map = NULL;
	im->leak.scan_ns = alloc_snap_now(CLOCK_MONOTONIC) - t0;
	im->leak.scan_cpu_ns = alloc_snap_now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	if (!roots) { /* no memory for the cliques: no check rather than a wrong one */
		alloc_sys_unmap(im->leak_class, im->leak_class_bytes);
		im->leak_class = NULL;
		return false;
	}
	im->leak_done = true;
	return true;
}
