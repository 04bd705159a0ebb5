/*
** alloc_region.c — the program's own mappings: every mmap, mmap64, munmap
** and mremap that reaches libmeminst's exported names (alloc_hooks.c; a
** call through the PLT: glibc's malloc and pthread_create map their memory
** inside libc, unseen; a thread's stack is noted when the thread starts,
** alloc_region_thread_begin) as regions [start, end) with the call site, the
** thread and the kind (anonymous or file, private or shared, MAP_STACK),
** stored with each map snapshot (table region, meminst-snapshot(5)) so
** that inspect rss names a mapping by the site that made it (pymalloc's
** _PyObject_ArenaMmap, a program's own arena).
**
** The regions are a tree ordered by start (region_link), in memory mapped
** here by syscall (never through the hooks), under a spin lock that is a leaf of
** the lock order: nothing else is taken while it is held.  A signal
** handler that interrupts the thread holding it, and calls mmap, finds
** region_busy set and leaves its region out (rare; the region is then
** not named).  munmap of part of a region trims or splits it; MAP_FIXED
** over regions replaces them; mremap moves and resizes the region with
** its site.  meminst's own mappings go through the hooks too: they are
** regions with a site inside libmeminst, which inspect rss counts apart
** (libunwind's caches, mapped for the sampler, are given such a site).
** Every change to the other regions is counted in allocator "mmap"
** (alloc_stat_region: bytes and regions, current and maxima, regions
** made), once the lock is let go.
** The hooks call the kernel themselves (syscall(2), as glibc's wrappers
** do), so errno and MAP_FAILED are the kernel's; the bookkeeping never
** touches errno.
*/
#include "alloc_int.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "../trace/trace_sampler.h"

/* The kernel's call, errno set as glibc's wrapper sets it; on x86-64
** straight to the instruction, not through the exported syscall's
** va_list (a third of the hooks' own instructions per mmap+munmap). */
#if defined(__x86_64__)
#define REGION_SYSCALL(nr, a, b, c, d, e, f) \
	alloc_seccomp_raw(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#else
#define REGION_SYSCALL(nr, a, b, c, d, e, f) syscall(nr, a, b, c, d, e, f)
#endif

/*
** The table: a treap of nodes ordered by start (regions never overlap, so
** their ends are in the same order), each node's priority random, so its
** depth is O(log n) expected whatever order the program maps in; every
** walk below is a loop, never recursion (a hook may run on a small
** signal stack).  Nodes come from chunks mapped by syscall that are never
** moved or returned, through a free list: an insert or a remove is
** O(log n) with no copying (the sorted array it replaces moved the whole
** table on each mapping at a low address: microseconds at 1,000 regions).
*/
typedef struct region_node_s {
	alloc_region_t g;
	struct region_node_s *l, *r;
	uint32_t prio;
} region_node_t;

static struct {
	atomic_int lock;
	region_node_t *root, *free;
	size_t n, chunk; /* regions in the tree; nodes in the next chunk */
	uint32_t seed;
} region_g;
static __thread int region_busy ALLOC_TLS_MODEL;

/* A child of clone without fork finds the lock held for ever when a thread
** of its parent was mapping at the clone (clone_raw.sh: its first stdio
** buffer's site named under site_depth): alloc_clone_yield's adoption
** makes it anew. */
static void region_lock(void)
{
	for (unsigned i = 1; atomic_exchange_explicit(&region_g.lock, 1, memory_order_acquire); i++)
		alloc_clone_yield(i);
}

static void region_unlock(void)
{
	atomic_store_explicit(&region_g.lock, 0, memory_order_release);
}

/* The table's own memory, by syscall: a call through the hooks would
** come back here. */
static void *region_map(size_t bytes)
{
	long p = syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p < 0 && p > -4096 ? NULL : (void *)p;
}

/* A free node, with its priority drawn (xorshift32); NULL when the
** kernel gives no more memory (the region is then not named). */
static region_node_t *region_node_new(const alloc_region_t *g)
{
	if (!region_g.free) {
		size_t n = region_g.chunk ? region_g.chunk : 256;
		region_node_t *c = region_map(n * sizeof *c);
		if (!c)
			return NULL;
		for (size_t i = 0; i < n; i++) {
			c[i].l = region_g.free;
			region_g.free = &c[i];
		}
		region_g.chunk = n < 65536 ? n * 2 : n;
	}
	region_node_t *x = region_g.free;
	region_g.free = x->l;
	uint32_t s = region_g.seed ? region_g.seed : 2463534242u;
	s ^= s << 13;
	s ^= s >> 17;
	s ^= s << 5;
	region_g.seed = s;
	*x = (region_node_t){*g, NULL, NULL, s};
	return x;
}

/* The link (root or a node's child) to the first region whose end is
** above addr: *link NULL when there is none. */
static region_node_t **region_find_link(uintptr_t addr)
{
	region_node_t **p = &region_g.root, **best = p;
	while (*p)
		if ((*p)->g.end <= addr)
			p = &(*p)->r;
		else {
			best = p;
			p = &(*p)->l;
		}
	return *best && (*best)->g.end > addr ? best : p;
}

static region_node_t *region_find(uintptr_t addr)
{
	return *region_find_link(addr);
}

/* Link x in, under the first node of lower priority on its key's path,
** whose subtree is split around x's start. */
static void region_link(region_node_t *x)
{
	region_node_t **p = &region_g.root;
	while (*p && (*p)->prio >= x->prio)
		p = x->g.start < (*p)->g.start ? &(*p)->l : &(*p)->r;
	region_node_t *t = *p, **lo = &x->l, **hi = &x->r;
	while (t)
		if (t->g.start < x->g.start) {
			*lo = t;
			lo = &t->r;
			t = t->r;
		} else {
			*hi = t;
			hi = &t->l;
			t = t->l;
		}
	*lo = *hi = NULL;
	*p = x;
	region_g.n++;
}

/* Take the node at *p out, its two subtrees merged in its place, and
** give it back to the free list. */
static void region_unlink(region_node_t **p)
{
	region_node_t *x = *p, *a = x->l, *b = x->r;
	while (a && b)
		if (a->prio > b->prio) {
			*p = a;
			p = &a->r;
			a = a->r;
		} else {
			*p = b;
			p = &b->l;
			b = b->l;
		}
	*p = a ? a : b;
	x->l = region_g.free;
	region_g.free = x;
	region_g.n--;
}

/*
** The change one call made to the program's regions, for the "mmap"
** allocator's figures (alloc_stat_region), gathered under the lock and
** counted after it.  meminst's own mappings (a site inside libmeminst)
** stay in the table, for inspect rss, but out of the figures.
*/
typedef struct region_delta_s {
	int64_t bytes, regions;
	uint64_t made, made_bytes;
} region_delta_t;

/* libmeminst's own code, from its ELF header's program headers (no call
** into libc or the loader: the hooks run before and during start-up). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
static uintptr_t region_self_lo, region_self_hi;

void alloc_region_init(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)&__ehdr_start + __ehdr_start.e_phoff);
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < __ehdr_start.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
			hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
		}
	if (lo < hi) {
		region_self_lo = (uintptr_t)&__ehdr_start + lo;
		region_self_hi = (uintptr_t)&__ehdr_start + hi;
	}
}

/* Called from outside libmeminst's own code (before alloc_region_init:
** from anywhere). */
static bool region_program_site(uintptr_t site)
{
	return site - region_self_lo >= region_self_hi - region_self_lo;
}

static bool region_counted(const alloc_region_t *g)
{
	return region_program_site(g->site);
}

static void region_count(region_delta_t *dt, const alloc_region_t *g, int sign)
{
	if (region_counted(g)) {
		dt->bytes += sign * (int64_t)(g->end - g->start);
		dt->regions += sign;
	}
}

static void region_count_flush(const region_delta_t *dt)
{
	if (dt->bytes | dt->regions | (int64_t)dt->made)
		alloc_stat_region(dt->bytes, dt->regions, dt->made, dt->made_bytes);
}

/* Take [start, end) out of every region (trim, split or drop). */
static void region_cut(uintptr_t start, uintptr_t end, region_delta_t *dt)
{
	region_node_t **link, *x;
	while ((x = *(link = region_find_link(start))) && x->g.start < end) {
		alloc_region_t *g = &x->g;
		region_count(dt, g, -1);
		if (g->start < start && g->end > end) { /* a hole in the middle: two regions */
			alloc_region_t hi = *g;
			hi.start = end;
			region_node_t *y = region_node_new(&hi);
			if (!y) {
				region_count(dt, g, +1);
				return;
			}
			g->end = start;
			region_link(y);
			region_count(dt, g, +1);
			region_count(dt, &y->g, +1);
			if (region_counted(g)) /* the second piece: a region made */
				dt->made++;
			return;
		}
		if (g->start < start) { /* its end goes: found no more */
			g->end = start;
			region_count(dt, g, +1);
		} else if (g->end > end) {
			g->start = end; /* still above its left neighbour's end */
			region_count(dt, g, +1);
			return;
		} else
			region_unlink(link);
	}
}

static void region_insert(const alloc_region_t *g, region_delta_t *dt)
{
	region_cut(g->start, g->end, dt);
	region_node_t *x = region_node_new(g);
	if (!x)
		return;
	region_link(x);
	region_count(dt, g, +1);
	if (region_counted(g)) {
		dt->made++;
		dt->made_bytes += g->end - g->start;
	}
}

/* Whether this call's region is kept: the layer is up, counts, and this
** thread is not inside the table already (a signal handler's call). */
static bool region_wanted(void)
{
	return atomic_load_explicit(&alloc_state, memory_order_acquire) == 2 && alloc_mode != MEMINST_MODE_OFF &&
	       !region_busy;
}

static uint32_t region_kind(int prot, int flags, int fd)
{
	(void)prot;
	uint32_t k = (flags & MAP_ANONYMOUS) || fd < 0 ? 0 : MEMINST_REGION_FILE;
	if (flags & MAP_SHARED)
		k |= MEMINST_REGION_SHARED;
	if (flags & MAP_STACK)
		k |= MEMINST_REGION_STACK;
	return k;
}

/* The calling thread's id, without a system call each time (a thread
** that never allocated has no alloc_tls.thr); forgotten in a fork's child. */
static __thread pid_t region_tid_known ALLOC_TLS_MODEL;

static pid_t region_tid(void)
{
	if (alloc_tls.thr)
		return alloc_tls.thr->tid;
	if (unlikely(!region_tid_known))
		region_tid_known = alloc_sys_gettid();
	return region_tid_known;
}

void *alloc_region_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, uintptr_t site)
{
	long p = REGION_SYSCALL(SYS_mmap, addr, len, prot, flags, fd, off);
	if ((p < 0 && p > -4096) || !region_wanted())
		return (void *)p; /* syscall(2) set errno and gave -1: MAP_FAILED */
	if (unlikely(trace_unwind_busy() || trace_unwind_is_libunwind(site)))
		site = (uintptr_t)alloc_region_mmap; /* libunwind's caches, for meminst */
	alloc_region_t g = {(uintptr_t)p, (uintptr_t)p + ((len + 4095) & ~(size_t)4095), site, region_tid(),
			    region_kind(prot, flags, fd)};
	region_delta_t dt = {0};
	region_busy = 1;
	region_lock();
	region_insert(&g, &dt);
	region_unlock();
	region_count_flush(&dt);
	region_busy = 0;
	return (void *)p;
}

/* The program (not libmeminst's own code: the linked-in jemalloc trims
** what it maps) unmaps or remaps memory: pages a pointer handed to free may
** point into can go (alloc_header_readable). */
static void region_pages_gone(uintptr_t site)
{
	if (region_program_site(site))
		atomic_store_explicit(&alloc_pages_gone, true, memory_order_release);
}

/*
** munmap and mremap make their system call under the table's lock: once
** the kernel has let the range go, another thread's mmap can get it and
** record its own region there, which a cut made after the lock was taken
** late would remove (the program's mremap counted as an unmap, the other
** thread's region lost).  The kernel serializes these calls in a process
** anyway (its mmap lock); an mmap records after its call, which is right
** in either order against them.
*/
int alloc_region_munmap(void *addr, size_t len, uintptr_t site)
{
	region_pages_gone(site);
	if (!region_wanted())
		return (int)REGION_SYSCALL(SYS_munmap, addr, len, 0, 0, 0, 0);
	region_delta_t dt = {0};
	region_busy = 1;
	region_lock();
	long rc = REGION_SYSCALL(SYS_munmap, addr, len, 0, 0, 0, 0);
	if (rc == 0)
		region_cut((uintptr_t)addr, (uintptr_t)addr + ((len + 4095) & ~(size_t)4095), &dt);
	region_unlock();
	if (rc == 0) /* a failed call keeps its errno */
		region_count_flush(&dt);
	region_busy = 0;
	return (int)rc;
}

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif

/* The table after a successful mremap of [old, old + old_len) to p, held:
** the region found at `old` moves (keeping its site, thread and kind). */
static void region_moved(uintptr_t old, size_t old_len, uintptr_t p, size_t len, int flags, region_delta_t *dt)
{
	region_node_t *x = region_find(old);
	bool known = x && x->g.start <= old;
	alloc_region_t g = known ? x->g : (alloc_region_t){0};
	/* old_len 0 maps shared pages a second time, DONTUNMAP keeps the old
	** range (emptied): the old region stays either way */
	if (old_len && !(flags & MREMAP_DONTUNMAP))
		region_cut(old, old + ((old_len + 4095) & ~(size_t)4095), dt);
	if (known) {
		g.start = p;
		g.end = p + ((len + 4095) & ~(size_t)4095);
		region_insert(&g, dt);
	}
}

void *alloc_region_mremap(void *old, size_t old_len, size_t len, int flags, void *new_addr, uintptr_t site)
{
	region_pages_gone(site);
	if (!region_wanted())
		return (void *)REGION_SYSCALL(SYS_mremap, old, old_len, len, flags, new_addr, 0);
	region_delta_t dt = {0};
	region_busy = 1;
	region_lock();
	long p = REGION_SYSCALL(SYS_mremap, old, old_len, len, flags, new_addr, 0);
	bool done = !(p < 0 && p > -4096);
	if (done)
		region_moved((uintptr_t)old, old_len, (uintptr_t)p, len, flags, &dt);
	region_unlock();
	if (done) /* a failed call keeps its errno */
		region_count_flush(&dt);
	region_busy = 0;
	return (void *)p;
}

/*
** The program moved the break from `from` to `to` with its own sbrk or
** brk (alloc_hooks.c): a region of kind MEMINST_REGION_BRK [from, to) as
** it grows, cut as it shrinks.  glibc's malloc calls its internal __sbrk,
** which never comes here: its heap is blocks, never a region too.
*/
void alloc_region_break(uintptr_t from, uintptr_t to, uintptr_t site)
{
	if (from == to || !region_wanted())
		return;
	region_delta_t dt = {0};
	alloc_region_t g = {from, to, site, region_tid(), MEMINST_REGION_BRK};
	region_busy = 1;
	region_lock();
	if (to > from)
		region_insert(&g, &dt);
	else
		region_cut(to, from, &dt);
	region_unlock();
	region_count_flush(&dt);
	region_busy = 0;
}

/* The regions in order of address into out (room for region_g.n), by
** Morris's walk: each left subtree's last node points back up for the
** while (no stack, whatever the depth); the tree is as it was after. */
static void region_walk(alloc_region_t *out)
{
	region_node_t *t = region_g.root;
	while (t) {
		if (!t->l) {
			*out++ = t->g;
			t = t->r;
			continue;
		}
		region_node_t *pre = t->l;
		while (pre->r && pre->r != t)
			pre = pre->r;
		if (!pre->r) {
			pre->r = t;
			t = t->l;
		} else {
			pre->r = NULL;
			*out++ = t->g;
			t = t->r;
		}
	}
}

/*
** A thread made by the program's pthread_create (trace_thread.c), at its
** start: its stack, which glibc mapped inside libc (or took from its
** cache of stacks), as a region of kind MEMINST_REGION_STACK named by the
** site that created the thread, without the guard page below it; until
** the thread ends (alloc_region_thread_end), when the memory goes back
** to glibc's cache.  A stack the program gave (pthread_attr_setstack:
** site 0) is its own memory, a region already or heap: left as it is.
** glibc's pthread_getattr_np allocates (its cpuset): inside the guard,
** so that the program's counts do not see it.  Any region the table still
** holds where glibc's stack now is was unmapped without the hooks seeing
** it (a raw munmap system call, a library's own): the kernel has given
** that memory to this stack and its guard page, so the stale region is
** cut there, not the stack left out.
*/
static __thread uintptr_t region_stack_lo ALLOC_TLS_MODEL;
static __thread uintptr_t region_stack_hi ALLOC_TLS_MODEL;

void alloc_region_thread_begin(uintptr_t site)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t size = 0, guard = 0;
	if (!site || !region_wanted() || alloc_seccomp_refuses(ALLOC_SC_THREAD_STACK))
		return;
	alloc_guard_enter();
	int rc = pthread_getattr_np(pthread_self(), &a);
	if (rc == 0) {
		rc = pthread_attr_getstack(&a, &lo, &size);
		if (rc == 0 && pthread_attr_getguardsize(&a, &guard) != 0)
			guard = 0;
		pthread_attr_destroy(&a);
	}
	alloc_guard_exit();
	if (rc != 0 || !size)
		return;
	alloc_region_t g = {(uintptr_t)lo, (uintptr_t)lo + size, site, region_tid(), MEMINST_REGION_STACK};
	region_delta_t dt = {0};
	region_busy = 1;
	region_lock();
	/* stale regions out, glibc's guard page with them, in one cut (two
	** would count the middle piece of a split as a region made) */
	region_cut(guard <= g.start ? g.start - guard : g.start, g.end, &dt);
	region_insert(&g, &dt);
	region_stack_lo = g.start;
	region_stack_hi = g.end;
	region_unlock();
	region_count_flush(&dt);
	region_busy = 0;
}

void alloc_region_thread_end(void)
{
	if (!region_stack_hi)
		return;
	region_delta_t dt = {0};
	region_busy = 1;
	region_lock();
	region_cut(region_stack_lo, region_stack_hi, &dt);
	region_unlock();
	region_count_flush(&dt);
	region_busy = 0;
	region_stack_lo = region_stack_hi = 0;
}

/* A copy of the regions for a snapshot, in *out (mapped; unmap *bytes);
** their count. */
size_t alloc_region_copy(alloc_region_t **out, size_t *bytes)
{
	*out = NULL;
	*bytes = 0;
	for (int tries = 0; tries < 4; tries++) {
		size_t want = *(volatile size_t *)&region_g.n + 64; /* checked under the lock */
		alloc_region_t *r = region_map(want * sizeof *r);
		if (!r)
			return 0;
		region_busy = 1;
		region_lock();
		size_t n = region_g.n;
		if (n <= want)
			region_walk(r);
		region_unlock();
		region_busy = 0;
		if (n <= want) {
			*out = r;
			*bytes = want * sizeof *r;
			return n;
		}
		syscall(SYS_munmap, r, want * sizeof *r);
	}
	return 0;
}

/* fork: no thread inside the table while the process is copied. */
void alloc_region_prefork(void)
{
	region_lock();
}

void alloc_region_postfork(void)
{
	region_unlock();
}

void alloc_region_postfork_child(void)
{
	region_tid_known = 0;
	region_unlock();
}
