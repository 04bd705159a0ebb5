/*
** alloc_core.c — the life of an instrumented block.
**
** For mis and mim modes: write the header in front of the block, tag it
** (allocator, type, class, thread), count it, link it into the map (mim),
** and on free check the header before undoing all that.  The layer's
** start-up (alloc_init) is alloc_start.c's.
**
** Order rules (the same in every entry point):
**   - an allocation is counted after the backend call, and only if it
**     succeeded; a free is checked and uncounted before the backend call,
**     so the address cannot be handed out again in between;
**   - realloc uncounts the old block, calls the backend, then counts the
**     result (or, when the backend fails, counts the old block back);
**   - no lock of ours is held across a backend call or a call to libc.
**
** A pointer whose header does not check out is reported on stderr (address,
** thread, caller) and then ignored: it is never passed to the backend, so a
** double or invalid free cannot corrupt the heap or our counters.
*/
#include "alloc_int.h"
#include "alloc_check.h"
#include "alloc_count.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum meminst_mode alloc_mode;
uint64_t alloc_check_key[4];
alloc_options_t alloc_opts;
size_t alloc_hdr_size;
_Atomic int alloc_state;
_Atomic unsigned alloc_route = ALLOC_ROUTE_STARTING;
bool alloc_plain = true;
static _Atomic unsigned long core_bad_frees;

#define CORE_REPORT_MAX 20
#define CORE_SIZE_MAX ((size_t)1 << 47) /* the header's size field holds up to this */

static inline unsigned core_log2(size_t v)
{
	return (unsigned)(63 - __builtin_clzll(v));
}

/* ----------------------------------------------------------- counting --- */

/* (the inline half is alloc_count.h) */

/* The calling thread's record: started on first use, NULL once retired. */
static inline alloc_thread_t *core_thread(void)
{
	alloc_tls_t *tls = &alloc_tls;
	if (likely(tls->thr))
		return tls->thr;
	if (tls->state != ALLOC_TLS_NEW)
		return NULL;
	int saved_errno = errno;
	alloc_guard_enter(); /* a signal handler's allocation must not wait on the registry */
	alloc_thread_t *t = alloc_thread_start(tls);
	alloc_guard_exit();
	errno = saved_errno;
	return t;
}

static ALLOC_NOINLINE uint32_t core_site_type_slow(alloc_thread_t *t, uintptr_t site)
{
	int saved_errno = errno;
	bool per_site = true;
	/* a child of a raw clone walks no stack until it is taken as alone
	** (trace_unwind.c, loader_enter); this thread holds no lock of ours
	** here (core_reentered sent a handler that interrupted us away), so
	** here it is taken, and its sites are typed by their stacks from now */
	if (unlikely(alloc_clone_unadopted()))
		alloc_clone_adopt();
	alloc_guard_enter(); /* a signal handler's allocation must not wait on the tag lock */
	uint32_t type = alloc_site_depth || alloc_site_skip ? alloc_stack_type(t, site, &per_site)
							    : alloc_type_of_site(site);
	alloc_guard_exit();
	errno = saved_errno;
	if (t) {
		/* a type that depends on the stack above the site (site_depth)
		** is not cached: the site's next allocation comes back here */
		unsigned i = alloc_site_cache_index(site);
		/* never a site with another's type, even for a signal handler
		** that comes in between two of these stores (site 0 never hits) */
		if (per_site) {
			t->site_cache[i].site = 0;
			atomic_signal_fence(memory_order_seq_cst);
			t->site_cache[i].type = type;
			atomic_signal_fence(memory_order_seq_cst);
			t->site_cache[i].site = site;
		} else if (t->site_cache[i].site == site) {
			t->site_cache[i].site = 0;
		}
	}
	return type;
}

/* ------------------------------------------------------ block life ----- */

/*
** `counting` is raised while a thread is inside the core's counting, in
** both modes.  mis counts without a lock, so it tells a fork in progress to
** wait until the five updates are done (see thread_quiesce_counting); in
** mim the owner's list lock covers counting and fork takes every list.  In
** both modes it tells a signal handler that interrupted the thread here
** that its slots are half way through an update and that the thread may
** hold a map lock: the handler's allocations are then served untracked
** (core_track), its frees of tracked blocks are deferred to core_leave
** (core_defer), and alloc_thread_park leaves the slots alone.
*/
/* mis, the gate is not clear: fence if we must, wait while a fork copies
** the process or a snapshot reads the status.  Returns with `counting`
** raised. */
static ALLOC_NOINLINE void core_enter_gated(alloc_thread_t *t)
{
	for (;;) {
		uint32_t gate = atomic_load_explicit(&alloc_count_gate, memory_order_relaxed);
		if (gate & ALLOC_GATE_FENCE) {
			atomic_thread_fence(memory_order_seq_cst);
			gate = atomic_load_explicit(&alloc_count_gate, memory_order_relaxed);
		}
		if (!(gate & ALLOC_GATE_STOP))
			return;
		atomic_store_explicit(&t->counting, 0, memory_order_release);
		/* a snapshot's capture: the wait is <snapshot> (see alloc_map.c) */
		bool capture = (gate & ALLOC_GATE_STOP) == ALLOC_GATE_CAPTURE && !alloc_tls.guard;
		uint64_t begin = capture ? trace_suspend_begin() : UINT64_MAX;
		alloc_fork_wait();
		if (capture)
			trace_suspend_end(begin, MEMINST_TSUSPEND_SNAPSHOT);
		atomic_store_explicit(&t->counting, 1, memory_order_relaxed);
	}
}

static inline __attribute__((always_inline)) void core_enter(alloc_thread_t *t, bool mim)
{
	atomic_store_explicit(&t->counting, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (!mim && unlikely(atomic_load_explicit(&alloc_count_gate, memory_order_relaxed) & ALLOC_GATE_BITS))
		core_enter_gated(t);
	atomic_signal_fence(memory_order_seq_cst);
}

static void core_run_deferred(alloc_thread_t *t);

static inline void core_leave(alloc_thread_t *t)
{
	atomic_store_explicit(&t->counting, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	if (unlikely(atomic_load_explicit(&t->ndeferred, memory_order_relaxed)))
		core_run_deferred(t);
}

/*
** The automatic type of a site, through the thread's small cache.  The
** entry's site and type are read with `counting` raised: a signal handler
** coming in between the two reads found it down, and its own allocation
** could put another site's pair there (or this site's where another was),
** so that the site matched and the type was the other's.  A handler now
** finds it raised and leaves the cache alone (its allocation is untracked,
** its free put aside until core_leave).
*/
static inline uint32_t core_site_type(alloc_thread_t *t, uintptr_t site)
{
	if (likely(t)) {
		unsigned i = alloc_site_cache_index(site);
		atomic_store_explicit(&t->counting, 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		bool hit = t->site_cache[i].site == site;
		uint32_t type = t->site_cache[i].type;
		core_leave(t);
		if (likely(hit))
			return type;
	}
	return core_site_type_slow(t, site);
}

/* Is this a signal handler that interrupted the thread inside counting? */
static inline bool core_reentered(const alloc_thread_t *t)
{
	return t && atomic_load_explicit(&t->counting, memory_order_relaxed);
}

/*
** A signal handler frees a tracked block while the thread it interrupted is
** inside counting: uncounting now could lose an update or wait forever on
** the map lock the thread holds, so the block is put aside and freed when
** the interrupted code leaves (core_leave).  The handler runs to its end
** before the thread resumes, so a plain store then a counter bump is
** enough; core_run_deferred takes entries off with a compare-and-swap, as
** a new signal may add one in between.
*/
static ALLOC_NOINLINE void core_defer(alloc_thread_t *t, void *user)
{
	uint32_t n = atomic_load_explicit(&t->ndeferred, memory_order_relaxed);
	if (n >= ALLOC_DEFERRED_MAX) {
		alloc_log("free of %p from a signal handler that interrupted meminst: more than %d "
			  "such frees pending in one thread; aborting", user, ALLOC_DEFERRED_MAX);
		abort();
	}
	t->deferred[n] = user;
	atomic_store_explicit(&t->ndeferred, n + 1, memory_order_relaxed);
	/* for the fast paths' leave (alloc_fast.c, fast_leave) */
	atomic_store_explicit(&t->counting, atomic_load_explicit(&t->counting, memory_order_relaxed) |
						    ALLOC_COUNTING_DEFERRED, memory_order_relaxed);
}

/* What core_untrack did with a block (see there). */
enum core_untracked { CORE_RACED, CORE_UNTRACKED, CORE_DEFERRED };

/* mim, a block the map had no room for (a mapping failed, said once):
** its header becomes an untracked one. */
static ALLOC_NOINLINE void core_unmapped(void *user, uint64_t meta, size_t size)
{
	alloc_hdr_seal((alloc_hdr_t *)user - 1, user, size,
		       alloc_meta_pack(0, 0, alloc_meta_allocator(meta), alloc_meta_pad_log2(meta)) |
			       ALLOC_META_UNTRACKED);
}

/*
** mim, a thread without a record (exiting, after its key destructor: other
** keys' destructors still allocate): its blocks go to the orphans' list and
** are counted directly.  Such a thread has no `counting`, so its TLS has a
** stand-in, `orphan_busy`, raised while it holds the orphans' lock or a
** block's list lock: a signal handler that interrupted it there would spin
** for ever on that lock (tests/integration/sig_threads.sh), so the
** handler's allocations are served untracked and its frees put aside until
** alloc_orphan_leave (alloc_map.c).  (Blocking signals did the same at four
** system calls an allocation; under a storm of signals the handler's own
** calls made the thread lose the race with the next signal for seconds at
** a time.)
*/
static inline void core_orphan_enter(void)
{
	atomic_store_explicit(&alloc_tls.orphan_busy, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

static ALLOC_NOINLINE void core_link_orphan(void *user, uint64_t meta, size_t size)
{
	if (atomic_load_explicit(&alloc_tls.orphan_busy, memory_order_relaxed)) {
		core_unmapped(user, meta, size); /* a signal handler: header only */
		return;
	}
	uint64_t seq = alloc_seq_take(NULL);
	alloc_list_t *l = &alloc_map_orphans;
	core_orphan_enter();
	alloc_list_lock(l);
	bool linked = alloc_map_link(l, (alloc_mhdr_t *)user - 1, seq);
	if (linked)
		core_count_direct(meta, size, +1, true);
	alloc_list_unlock(l);
	alloc_orphan_leave();
	if (!linked)
		core_unmapped(user, meta, size);
}

/* Count a block whose header is written, and link it into the map.  A
** thread without a record counts straight into the global entries. */
static inline __attribute__((always_inline)) void core_install(alloc_thread_t *t, void *user, uint64_t meta,
								uint32_t type, unsigned allocator,
								size_t size, bool mim, bool event)
{
	if (unlikely(!t)) {
		if (mim)
			core_link_orphan(user, meta, size);
		else
			core_count_direct(meta, size, +1, event);
		return;
	}
	core_enter(t, mim);
	if (mim) {
		/* the thread's own list: only a capture, a fork or a free from
		** another thread takes its lock */
		alloc_list_t *l = t->own_list;
		uint64_t seq = alloc_seq_take(t);
		alloc_list_lock(l);
		if (unlikely(!alloc_map_link(l, (alloc_mhdr_t *)user - 1, seq))) {
			alloc_list_unlock(l);
			core_leave(t);
			core_unmapped(user, meta, size);
			return;
		}
		core_count_in(t, meta, type, allocator, size, event ? user : NULL);
		alloc_list_unlock(l);
	} else {
		core_count_in(t, meta, type, allocator, size, event ? user : NULL);
	}
	core_leave(t);
	/* a new peak to snapshot? (this thread's view of the total) */
	int64_t total = core_total_view(t);
	if (unlikely(total > atomic_load_explicit(&alloc_peak_next, memory_order_relaxed)))
		alloc_service_peak(total);
}

/*
** Fold this thread's pending counts in before it blocks (see alloc_int.h).
** A thread interrupted inside its own counting (the caller is a signal
** handler) is left alone: its slots are half way through an update.  In
** mim the flush holds the thread's list lock, as counting does, so that a
** snapshot (which holds every list) sees blocks and counts agree.
*/
void alloc_thread_park_slow(alloc_thread_t *t)
{
	if (atomic_load_explicit(&t->counting, memory_order_relaxed))
		return;
	int saved_errno = errno;
	bool mim = alloc_mode == MEMINST_MODE_MIM;
	core_enter(t, mim);
	if (mim)
		alloc_list_lock(t->own_list);
	alloc_slots_flush_all(t);
	t->parked = 1; /* the next count refreshes every slot's base */
	t->epoch_seen = alloc_gate_epoch() - ALLOC_GATE_EPOCH;
	if (mim)
		alloc_list_unlock(t->own_list);
	core_leave(t);
	errno = saved_errno;
}

/*
** Turn a fresh backend block into a tracked block: header, tags, counts,
** map.  `pad_log2` says how far past `base` the user pointer lies.
*/
static inline __attribute__((always_inline)) void *core_track(void *base, size_t size, unsigned allocator,
							       uintptr_t site, uint32_t type, unsigned pad_log2,
							       bool mim)
{
	char *user = (char *)base + ((size_t)1 << pad_log2);
	alloc_hdr_t *h = alloc_hdr_of(user);
	alloc_tls_t *tls = &alloc_tls;
	uint64_t meta;
	alloc_thread_t *t;
	if (unlikely(tls->guard)) { /* our own allocations: header only */
		tls->probe_hit = 1;
		goto untracked;
	}
	t = core_thread();
	if (unlikely(core_reentered(t))) /* a signal handler: header only too */
		goto untracked;
	if (!type)
		type = tls->scope ? tls->scope : core_site_type(t, site);
	meta = alloc_meta_pack(type, tls->thread_no, allocator, pad_log2);
	alloc_hdr_seal(h, user, size, meta);
	core_install(t, user, meta, type, allocator, size, mim, true);
	return user;
untracked:
	meta = alloc_meta_pack(0, 0, allocator, pad_log2) | ALLOC_META_UNTRACKED;
	alloc_hdr_seal(h, user, size, meta);
	return user;
}

/*
** mim: take a checked block off the list its header names and count it
** out.  This thread's own list is found without a look-up; another's is
** locked through the header (a cross-thread free waits while the owner
** adds a block).  The header is read under the lock: CORE_RACED when
** another thread freed the block first; a header that names no list, or
** a list whose map does not hold the block, stops the process.
*/
static inline __attribute__((always_inline)) enum core_untracked core_untrack_mim(alloc_thread_t *t, void *user,
										    uint64_t meta, size_t size)
{
	alloc_mhdr_t *m = (alloc_mhdr_t *)user - 1;
	alloc_hdr_t *h = &m->h;
	alloc_list_t *l;
	uint64_t at = m->at;
	bool own = likely(t) && at == t->own_at;
	if (likely(t))
		core_enter(t, true);
	if (likely(own)) {
		l = t->own_list;
		alloc_list_lock(l);
	} else if (unlikely(!(l = alloc_map_lock_block(m, &at)))) {
		if (h->meta == meta)
			alloc_map_corrupt(m);
		if (likely(t))
			core_leave(t);
		return CORE_RACED;
	}
	bool ours = h->meta == meta; /* not freed by another thread meanwhile */
	if (likely(ours)) {
		/* (the header's list, read again under the lock: only a
		** hand-over moves a block, and only under both lists' locks) */
		if (unlikely(alloc_at_list(__atomic_load_n(&m->at, __ATOMIC_RELAXED)) != l->id))
			alloc_map_corrupt(m);
		alloc_map_unlink(l, m);
		h->meta = meta | ALLOC_META_FREED;
		if (likely(t))
			core_count_out(t, meta, size, user);
		else
			core_count_direct(meta, size, -1, false);
	}
	if (likely(own))
		alloc_list_unlock(l);
	else
		alloc_map_unlock_other(l);
	if (likely(t))
		core_leave(t);
	return ours ? CORE_UNTRACKED : CORE_RACED;
}

/* mim, a thread without a record frees (see core_link_orphan). */
static ALLOC_NOINLINE enum core_untracked core_untrack_orphan(void *user, uint64_t meta, size_t size)
{
	if (atomic_load_explicit(&alloc_tls.orphan_busy, memory_order_relaxed)) {
		alloc_orphan_defer(user);
		return CORE_DEFERRED;
	}
	core_orphan_enter();
	enum core_untracked r = core_untrack_mim(NULL, user, meta, size);
	alloc_orphan_leave();
	return r;
}

/* Take a checked block out of the counts and the map.  CORE_RACED if
** another thread freed it first (a racing double free); CORE_DEFERRED if
** a signal handler frees it while the thread is inside counting. */
static inline __attribute__((always_inline)) enum core_untracked core_untrack(void *user, uint64_t meta,
									       bool mim)
{
	alloc_hdr_t *h = alloc_hdr_of(user);
	if (meta & ALLOC_META_UNTRACKED) {
		h->meta = meta | ALLOC_META_FREED;
		return CORE_UNTRACKED;
	}
	alloc_thread_t *t = core_thread();
	if (unlikely(core_reentered(t))) {
		core_defer(t, user);
		return CORE_DEFERRED;
	}
	size_t size = alloc_hdr_bytes(h);
	/* the end of a climb? the peak is captured before the block leaves
	** (this thread's view of the total, as for a new peak); unarmed, one
	** compare */
	int64_t turn = atomic_load_explicit(&alloc_peak_turn, memory_order_relaxed);
	if (unlikely(turn != INT64_MIN) && likely(t) && core_total_view(t) - (int64_t)size < turn)
		alloc_service_peak_turn(core_total_view(t));
	if (mim)
		return likely(t) ? core_untrack_mim(t, user, meta, size) : core_untrack_orphan(user, meta, size);
	h->meta = meta | ALLOC_META_FREED;
	if (unlikely(!t)) {
		core_count_direct(meta, size, -1, false);
		return CORE_UNTRACKED;
	}
	core_enter(t, mim);
	core_count_out(t, meta, size, user);
	core_leave(t);
	return CORE_UNTRACKED;
}

enum core_verdict { CORE_OK, CORE_FOREIGN, CORE_DOUBLE };

/*
** Fields that passed the 30-bit check must also make sense: foreign bytes
** (a zeroed page, glibc's tcache key written over a freed header) are then
** all but never taken for a header.
*/
static inline bool core_meta_plausible(uint64_t m, uint64_t size, bool mim)
{
	unsigned pad = alloc_meta_pad_log2(m), least = mim ? 5 : 4; /* log2 of the header size */
	if (alloc_meta_allocator(m) >= ALLOC_A_COUNT || pad - least > 40 - least ||
	    size > (1ull << 47))
		return false;
	if (m & ALLOC_META_UNTRACKED)
		return alloc_meta_type(m) == 0 && alloc_meta_thread(m) == 0;
	uint32_t ntypes = atomic_load_explicit(&alloc_ntypes, memory_order_relaxed);
	uint32_t nthreads = atomic_load_explicit(&alloc_nthreads, memory_order_relaxed);
	return (alloc_meta_type(m) < ntypes || alloc_meta_type(m) == ALLOC_TYPE_MAX) &&
	       (alloc_meta_thread(m) < nthreads || alloc_meta_thread(m) == ALLOC_THREAD_MAX);
}

/*
** Pointers near the start of a page are probed before their header is
** read: large blocks sit there (glibc puts an mmap'd block 16 bytes into its
** first page), and once freed their pages are unmapped, so a double free of
** a large block, like a wild pointer into an unmapped page, would fault.
** Probing is a system call, and small blocks land there too (often, with
** jemalloc), so each thread remembers a few pages it found readable; the
** memory is forgotten whenever any thread frees a block that a backend may
** have mapped on its own (alloc_unmap_epoch).
*/
#define CORE_OWN_MAPPING_MIN (32 << 10) /* smaller blocks are never mapped alone
					   (glibc's mmap threshold starts at 128 KiB) */
_Atomic uint32_t alloc_unmap_epoch;
_Atomic bool alloc_pages_gone; /* (alloc_header_readable) */

static inline bool core_in_start_zone(const void *user)
{
	return alloc_in_start_zone(user);
}

static ALLOC_NOINLINE bool core_probe(const alloc_hdr_t *h)
{
	alloc_thread_t *t = alloc_tls.thr;
	uintptr_t page = (uintptr_t)h & ~(uintptr_t)4095;
	uint32_t epoch = atomic_load_explicit(&alloc_unmap_epoch, memory_order_acquire);
	if (alloc_brk_mapped(h, sizeof *h)) /* glibc's main heap: no system call */
		return true;
	if (t && t->probe_epoch == epoch)
		for (unsigned i = 0; i < 8; i++)
			if (t->probe_pages[i] == page)
				return true;
	if (!alloc_readable(h, sizeof *h))
		return false;
	if (t) {
		if (t->probe_epoch != epoch) {
			memset(t->probe_pages, 0, sizeof t->probe_pages);
			t->probe_epoch = epoch;
		}
		t->probe_pages[alloc_probe_index(page)] = page; /* (alloc_page_known) */
	}
	return true;
}

/* About to give a block back: if its pages may go with it, forget what
** every thread knows about readable pages. */
static inline void core_forget_pages(const void *user, uint64_t size)
{
	if (unlikely(core_in_start_zone(user) && size >= CORE_OWN_MAPPING_MIN)) {
		atomic_store_explicit(&alloc_pages_gone, true, memory_order_release);
		atomic_fetch_add_explicit(&alloc_unmap_epoch, 1, memory_order_release);
	}
}

/*
** Does `user` carry a live header of ours?  Elsewhere than near a page
** start the header shares the page with the block; only a wild pointer into
** an unmapped page at such an offset can still fault, as it does in glibc.
*/
static inline __attribute__((always_inline)) enum core_verdict core_verify(const void *user, uint64_t *meta,
									   bool mim)
{
	if (((uintptr_t)user & 15) != 0)
		return CORE_FOREIGN;
	const alloc_hdr_t *h = alloc_hdr_of(user);
	if (unlikely(core_in_start_zone(user)) && !core_probe(h))
		return CORE_FOREIGN;
	uint64_t m = h->meta, sizew = h->size;
	if (unlikely(alloc_hdr_mismatch(user, sizew, m)))
		return CORE_FOREIGN;
	if (unlikely(!core_meta_plausible(m, sizew & ALLOC_SIZE_MASK, mim)))
		return CORE_FOREIGN;
	*meta = m;
	return (m & ALLOC_META_FREED) ? CORE_DOUBLE : CORE_OK;
}

static ALLOC_NOINLINE void core_report(enum core_verdict v, const char *op, void *user, uintptr_t site)
{
	unsigned long n = atomic_fetch_add(&core_bad_frees, 1) + 1;
	if (alloc_opts.quiet && !alloc_opts.on_error_abort)
		return;
	if (n <= CORE_REPORT_MAX || alloc_opts.on_error_abort) {
		char where[160];
		int saved_errno = errno;
		alloc_sys_describe(site, where, sizeof where);
		alloc_log("%s of %p in thread %u (tid %d), called from %s: %s; %s", op, user,
			  alloc_tls.thread_no, (int)alloc_sys_gettid(), where,
			  v == CORE_DOUBLE ? "the block was already freed"
					   : "not a block allocated by meminst, or already freed",
			  alloc_opts.on_error_abort ? "aborting" : "ignored");
		if (n == CORE_REPORT_MAX)
			alloc_log("further invalid frees are counted but not shown");
		errno = saved_errno;
	}
	if (alloc_opts.on_error_abort)
		abort();
}

/*
** A pointer without a header of ours may still be glibc's: a block from
** __libc_malloc & co. (or made before we were loaded).  It goes back to
** glibc, whatever the backend, rather than being called invalid and
** leaked.  Returns false when it is not such a block.
*/
static ALLOC_NOINLINE bool core_free_libc(void *user)
{
	int saved_errno = errno;
	bool ours = alloc_libc_owns(user);
	errno = saved_errno;
	if (ours) {
		core_forget_pages(user, CORE_OWN_MAPPING_MIN); /* (its size unknown) */
		alloc_libc.free(user);
	}
	return ours;
}

void alloc_core_report_summary(void)
{
	unsigned long n = atomic_load(&core_bad_frees);
	if (n > CORE_REPORT_MAX && !alloc_opts.quiet)
		alloc_log("%lu invalid or double frees in all (the first %d were shown)", n, CORE_REPORT_MAX);
}

/* ------------------------------------------------------ entry points --- */

/*
** The entry points come in a generic form, which looks at alloc_mode, and
** for malloc and free (new and delete too) in one form per mode, which the
** hooks pick by their route (alloc_route): the mode is then a constant and
** every test of it is gone from the hot path.
*/
static inline __attribute__((always_inline)) void *core_malloc(size_t size, unsigned allocator,
								uintptr_t site, uint32_t type, bool mim)
{
	size_t hs = mim ? sizeof(alloc_mhdr_t) : sizeof(alloc_hdr_t);
	if (unlikely(size > CORE_SIZE_MAX))
		return errno = ENOMEM, NULL;
	void *base = ALLOC_BACKEND(alloc_real.malloc(size + hs));
	if (unlikely(!base))
		return NULL;
	return core_track(base, size, allocator, site, type, core_log2(hs), mim);
}

void *alloc_core_malloc(size_t size, unsigned allocator, uintptr_t site, uint32_t type)
{
	if (alloc_mode == MEMINST_MODE_MIM)
		return core_malloc(size, allocator, site, type, true);
	return core_malloc(size, allocator, site, type, false);
}

/* mis, a fresh backend block the fast path (alloc_fast.c) did not take. */
void *alloc_core_track_mis_slow(void *base, size_t size, unsigned allocator, uintptr_t site)
{
	return core_track(base, size, allocator, site, 0, core_log2(sizeof(alloc_hdr_t)), false);
}

/* mis, the fast path has counted a block in and left counting, and found
** frees put aside by a signal handler or a new peak: deal with both. */
void *alloc_core_track_mis_done(alloc_thread_t *t, void *user)
{
	if (atomic_load_explicit(&t->ndeferred, memory_order_relaxed))
		core_run_deferred(t);
	int64_t total = core_total_view(t);
	if (total > atomic_load_explicit(&alloc_peak_next, memory_order_relaxed))
		alloc_service_peak(total);
	return user;
}

/* mim, a fresh backend block the fast path (alloc_fast.c) did not take. */
void *alloc_core_track_mim_slow(void *base, size_t size, unsigned allocator, uintptr_t site)
{
	return core_track(base, size, allocator, site, 0, core_log2(sizeof(alloc_mhdr_t)), true);
}

void *alloc_core_calloc(size_t n, size_t size, uintptr_t site, uint32_t type)
{
	size_t total, hs = alloc_hdr_size;
	if (unlikely(__builtin_mul_overflow(n, size, &total) || total > CORE_SIZE_MAX))
		return errno = ENOMEM, NULL;
	void *base = ALLOC_BACKEND(alloc_real.calloc(1, total + hs));
	if (unlikely(!base))
		return NULL;
	return core_track(base, total, ALLOC_A_CALLOC, site, type, core_log2(hs),
			  alloc_mode == MEMINST_MODE_MIM);
}

/* `align` is a power of two; the caller has checked the entry point's rules. */
void *alloc_core_aligned(size_t align, size_t size, unsigned allocator, uintptr_t site)
{
	size_t hs = alloc_hdr_size;
	if (align <= 16)
		return alloc_core_malloc(size, allocator, site, 0);
	size_t pad = align > hs ? align : hs;
	if (unlikely(size > CORE_SIZE_MAX || pad > CORE_SIZE_MAX))
		return errno = ENOMEM, NULL;
	void *base = ALLOC_BACKEND(alloc_real.memalign(align, size + pad));
	if (unlikely(!base))
		return NULL;
	return core_track(base, size, allocator, site, 0, core_log2(pad), alloc_mode == MEMINST_MODE_MIM);
}

static inline __attribute__((always_inline)) void core_free(void *user, uintptr_t site, bool mim)
{
	uint64_t meta;
	if (unlikely(!user))
		return;
	if (unlikely(alloc_boot_owns(user)))
		return;
	enum core_verdict v = core_verify(user, &meta, mim);
	if (unlikely(v != CORE_OK)) {
		if (v == CORE_FOREIGN && core_free_libc(user))
			return;
		core_report(v, "free", user, site);
		return;
	}
	enum core_untracked u = core_untrack(user, meta, mim);
	if (unlikely(u != CORE_UNTRACKED)) {
		if (u == CORE_RACED)
			core_report(CORE_DOUBLE, "free", user, site);
		return;
	}
	core_forget_pages(user, alloc_hdr_bytes(alloc_hdr_of(user)));
	ALLOC_BACKEND_VOID(alloc_real.free((char *)user - ((size_t)1 << alloc_meta_pad_log2(meta))));
}

void alloc_core_free(void *user, uintptr_t site)
{
	if (alloc_mode == MEMINST_MODE_MIM)
		core_free(user, site, true);
	else
		core_free(user, site, false);
}

void alloc_core_free_mis_slow(void *user, uintptr_t site) { core_free(user, site, false); }

/* mis, the fast path has counted a block out and found frees put aside by
** a signal handler: free them, then the block. */
void alloc_core_free_mis_done(alloc_thread_t *t, void *user)
{
	core_run_deferred(t);
	alloc_real.free(alloc_hdr_of(user));
}
void alloc_core_free_mim_slow(void *user, uintptr_t site) { core_free(user, site, true); }

/* mim, the same after the fast path's free (the header is 32 bytes). */
void alloc_core_free_mim_done(alloc_thread_t *t, void *user)
{
	core_run_deferred(t);
	alloc_real.free((alloc_mhdr_t *)user - 1);
}

/* Free what signal handlers put aside (core_defer), now that the thread
** has left counting; a new signal may add more while this runs. */
static ALLOC_NOINLINE void core_run_deferred(alloc_thread_t *t)
{
	uint32_t n;
	while ((n = atomic_load_explicit(&t->ndeferred, memory_order_relaxed)) != 0) {
		void *user = t->deferred[n - 1];
		if (atomic_compare_exchange_strong(&t->ndeferred, &n, n - 1))
			alloc_core_free(user, 0);
	}
}

/* `old` is the block's usable size, not its requested one: glibc's realloc
** keeps every usable byte, and programs that grow into the slack
** malloc_usable_size gives them (Redis's sds, string builders) rely on it. */
static void *core_realloc_moved(void *user, size_t old, size_t size, unsigned allocator,
				uintptr_t site, uint32_t type)
{
	void *n = alloc_core_malloc(size, allocator, site, type);
	if (n) {
		memcpy(n, user, old < size ? old : size);
		alloc_core_free(user, site);
	}
	return n;
}

/*
** realloc with glibc's rules: NULL behaves as malloc, size 0 frees and
** returns NULL, failure leaves the old block untouched and counted.
*/
void *alloc_core_realloc(void *user, size_t size, unsigned allocator, uintptr_t site, uint32_t type)
{
	uint64_t meta;
	if (!user)
		return alloc_core_malloc(size, allocator, site, type);
	if (unlikely(alloc_boot_owns(user))) {
		void *n = alloc_core_malloc(size, allocator, site, type);
		size_t old = alloc_boot_size(user);
		if (n)
			memcpy(n, user, old < size ? old : size);
		return n;
	}
	if (size == 0) {
		alloc_core_free(user, site);
		return NULL;
	}
	bool mim = alloc_mode == MEMINST_MODE_MIM;
	enum core_verdict v = core_verify(user, &meta, mim);
	if (unlikely(v == CORE_FOREIGN) && alloc_libc_owns(user)) { /* glibc's: move it to us */
		size_t old = alloc_libc.usable_size(user);
		void *n = alloc_core_malloc(size, allocator, site, type);
		if (n) {
			memcpy(n, user, old < size ? old : size);
			alloc_libc.free(user);
		}
		return n;
	}
	if (unlikely(v != CORE_OK)) {
		core_report(v, "realloc", user, site);
		return errno = EINVAL, NULL;
	}
	size_t hs = alloc_hdr_size, old = alloc_hdr_bytes(alloc_hdr_of(user));
	if (alloc_meta_pad_log2(meta) != core_log2(hs) ||
	    unlikely(!(meta & ALLOC_META_UNTRACKED) && core_reentered(alloc_tls.thr)))
		return core_realloc_moved(user, alloc_core_usable_size(user), size, allocator, site, type);
	if (unlikely(size > CORE_SIZE_MAX))
		return errno = ENOMEM, NULL;
	if (unlikely(core_untrack(user, meta, mim) != CORE_UNTRACKED)) {
		core_report(CORE_DOUBLE, "realloc", user, site);
		return errno = EINVAL, NULL;
	}
	core_forget_pages(user, old);
	void *base = ALLOC_BACKEND(alloc_real.realloc((char *)user - hs, size + hs));
	if (unlikely(!base)) { /* the old block is intact: count it back */
		alloc_hdr_of(user)->meta = meta;
		core_install(core_thread(), user, meta, alloc_meta_type(meta), alloc_meta_allocator(meta),
			     old, mim, false);
		return NULL;
	}
	return core_track(base, size, allocator, site, type, core_log2(hs), mim);
}

size_t alloc_core_usable_size(void *user)
{
	uint64_t meta;
	if (!user)
		return 0;
	if (alloc_boot_owns(user))
		return alloc_boot_size(user);
	if (core_verify(user, &meta, alloc_mode == MEMINST_MODE_MIM) != CORE_OK)
		return alloc_libc_owns(user) ? alloc_libc.usable_size(user) : 0;
	size_t pad = (size_t)1 << alloc_meta_pad_log2(meta);
	return alloc_real.usable_size((char *)user - pad) - pad;
}

bool alloc_core_headed(const void *user, size_t *bytes)
{
	uint64_t meta;
	if (!user || alloc_mode == MEMINST_MODE_OFF || alloc_boot_owns(user) ||
	    core_verify(user, &meta, alloc_mode == MEMINST_MODE_MIM) != CORE_OK)
		return false;
	*bytes = alloc_hdr_bytes(alloc_hdr_of(user));
	return true;
}

uint32_t alloc_core_block_type(const void *user)
{
	uint64_t meta;
	if (!user || alloc_mode == MEMINST_MODE_OFF || alloc_boot_owns(user))
		return 0;
	return core_verify(user, &meta, alloc_mode == MEMINST_MODE_MIM) == CORE_OK ? alloc_meta_type(meta) : 0;
}
