/*
** alloc_int_thread.h — a section of alloc_int.h: counting and the thread
** (alloc_status.c, alloc_thread.c): the shared entries, a thread's slots
** and flush budget, its record, the layer's TLS, the counting gate and the
** recursion guard.
**
** A file of its own so that alloc_int.h stays within the size guide; the
** hot paths (alloc_count.h, alloc_fast.c) read it on its own.  alloc_int.h
** includes it in place (inside its hidden-visibility region, in the order
** of the sections): include alloc_int.h, never this.  The lock order and
** the signal-handler rules are in alloc_int.h's head comment.
*/
#ifndef ALLOC_INT_THREAD_H
#define ALLOC_INT_THREAD_H
#ifndef ALLOC_INT_H
#error "include alloc_int.h, which includes this file"
#endif

/* ------------------------------------------------------------ status --- */

/*
** Event counters, cumulative from the start: blocks counted in (calls to
** an allocation function that returned a block), their requested bytes,
** temporary blocks (freed by the thread that allocated them before it
** allocated or freed anything else: meminst(7)), and blocks made by
** realloc.  Frees are not counted: they are calls less live blocks.
*/
enum { ALLOC_EV_CALLS = 0, ALLOC_EV_BYTES, ALLOC_EV_TEMPS, ALLOC_EV_REALLOCS, ALLOC_EV_COUNT };
/* Requested sizes by log2: bucket b holds [2^b, 2^(b+1)), bucket 0 also 0;
** requests stop at 2^47 (the header's size field). */
#define ALLOC_HIST_BUCKETS 48
static inline unsigned alloc_hist_bucket(uint64_t size)
{
	return 63u - (unsigned)__builtin_clzll(size | 1);
}

/*
** One status entry: the global part of a counter pair (sizes, blocks).
** Threads keep pending deltas in alloc_slot_t and fold them in here now and
** then; see alloc_status.c for the precision this gives.  Three readers
** reset max_since_last, each for itself: the program (its
** meminst_status_read and meminst_status_print calls, print= at exit), the
** snapshots it stores (the timeline, peaks, exit, signals, its API calls)
** and those `inspect --pid` asks for (control).  max_sl is the highest
** since the last reset by any; held[R], what the others' resets took from
** max_sl since R's own last read (alloc_stat_read).
*/
enum { ALLOC_READ_PROGRAM = 0, ALLOC_READ_SNAPSHOT, ALLOC_READ_CONTROL, ALLOC_READERS,
       ALLOC_READ_PEEK = ALLOC_READERS /* no reset: events only */ };

typedef struct alloc_stat_s {
	_Atomic int64_t cur[2];
	_Atomic uint64_t max_sl[2];
	_Atomic uint64_t max_ever[2];
	_Atomic uint64_t ev[ALLOC_EV_COUNT]; /* events, cumulative (ALLOC_EV_*) */
	_Atomic uint64_t held[ALLOC_READERS][2];
} __attribute__((aligned(64))) alloc_stat_t;

enum { ALLOC_K_TOTAL = 0, ALLOC_K_ALLOCATOR, ALLOC_K_CLASS, ALLOC_K_TYPE,
       ALLOC_K_THREAD, ALLOC_K_COUNT };

/* key of a slot: kind in the top 4 bits, the number below */
#define ALLOC_KEY(kind, id) ((uint32_t)(kind) << 28 | (id))
#define ALLOC_KEY_KIND(k) ((k) >> 28)
#define ALLOC_KEY_ID(k) ((k)&0x0fffffffu)
#define ALLOC_KEY_NONE 0xffffffffu

/*
** A thread's view of one entry: `base`, the entry's value when the slot
** was last flushed, and the thread's change since, `d`, with both counters
** in one word: bytes in the high half, blocks in the low half (a signed
** 32-bit number borrowed from the bytes, see alloc_slot_bytes).  So one add
** counts a block in, one subtract counts it out, and one compare finds a
** new highest byte count (hi; the packed order is the order of the bytes
** first).  The highest block count is compared on its own (hi_blocks).
** A change stays far inside 32 bits (the flush budget below) as long as a
** block counted through a slot is smaller than ALLOC_COUNT_BIG; larger ones
** go straight to the entries.  d and the high marks are read by readers in
** other threads, so they are written with relaxed atomic stores.  Type
** slots also hold the type's class and the thread's slot of that class,
** which is kept in place as long as the type slot is (alloc_status.c,
** alloc_slot_retarget), so that counting never reads the global class
** table nor checks the class slot's key.
*/
typedef struct alloc_slot_s {
	uint32_t key;
	uint32_t epoch;    /* the kind's reset epoch this slot's hi belongs to */
	uint16_t cls;      /* type slots: the class of the type (< 2^16)      */
	uint16_t temps;    /* temporary blocks since the last flush          */
	int16_t hi_blocks; /* highest block change since the last flush       */
	uint16_t reallocs; /* blocks made by realloc since the last flush    */
	int64_t d;         /* change since the last flush, packed             */
	int64_t hi;        /* highest d since the last flush                  */
	int64_t base[2];   /* global values (bytes, blocks) at the last flush */
	struct alloc_slot_s *cls_slot; /* type slots: the slot of the class  */
	int64_t in;        /* blocks counted in since the last flush, packed as
			      d (bytes, calls): the events of ALLOC_EV_*, with
			      temps and reallocs kept in allocator and type
			      slots only (the total's, a class's and a thread's
			      are their types' sum: alloc_status.c).  64
			      bytes in all: a slot's address is one shift away,
			      which gcc keeps to better than 32 or 48 (bench);
			      the budget below keeps the 16-bit counts small */
} alloc_slot_t;

#define ALLOC_COUNT_BIG ((uint64_t)1 << 30)
static inline int64_t alloc_slot_pack(int64_t bytes, int32_t blocks)
{
	return (int64_t)((uint64_t)bytes << 32) + blocks;
}
static inline int32_t alloc_slot_blocks(int64_t d) { return (int32_t)(uint32_t)d; }
static inline int64_t alloc_slot_bytes(int64_t d) { return (d - alloc_slot_blocks(d)) >> 32; }

/*
** One flush budget per thread rather than a test per slot: every count
** takes its size plus ALLOC_FLUSH_BLOCK_COST from the budget, and when the
** budget runs out every slot the thread changed is folded in.  No slot's
** pending change can then pass ALLOC_FLUSH_BYTES bytes or
** ALLOC_FLUSH_BLOCKS blocks, the bound meminst(7) states.
*/
#define ALLOC_FLUSH_BYTES (256 * 1024)
#define ALLOC_FLUSH_BLOCKS 1024
#define ALLOC_FLUSH_BLOCK_COST (ALLOC_FLUSH_BYTES / ALLOC_FLUSH_BLOCKS)
#define ALLOC_SLOTS_FIXED (1 + ALLOC_A_COUNT + 1) /* total, allocators, self */
#define ALLOC_SLOTS_CLASS 32
#define ALLOC_SLOTS_TYPE 128
#define ALLOC_SLOTS_OTHER 16 /* other threads (cross-thread frees) */
#define ALLOC_SLOTS_ALL (ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS + ALLOC_SLOTS_TYPE + ALLOC_SLOTS_OTHER)
#define ALLOC_SITE_CACHE 256
#define ALLOC_DEFERRED_MAX 64
#define ALLOC_COUNTING_DEFERRED 2 /* in alloc_thread_t.counting */

struct alloc_thread_s;
typedef struct alloc_thread_s alloc_thread_t;
/* "alloc_status.c" */
extern _Atomic uint32_t alloc_epoch[ALLOC_K_COUNT];
alloc_stat_t *alloc_stat_entry(unsigned kind, uint32_t id);
int alloc_stat_init(void);
bool alloc_stat_reserve(unsigned kind, uint32_t id);
void alloc_slot_flush(alloc_thread_t *t, unsigned i);
void alloc_slot_retarget(alloc_thread_t *t, unsigned i, uint32_t key);
void alloc_slots_sync_epochs(alloc_thread_t *t);
void alloc_slots_flush_all(alloc_thread_t *t);
void alloc_slots_flush_budget(alloc_thread_t *t);
void alloc_stat_direct(uint32_t key, int64_t dsize, int64_t dblocks);
void alloc_stat_region(int64_t dbytes, int64_t dregions, uint64_t made, uint64_t made_bytes);
/* Entries [0, cap) of out and ev (either may be NULL: not wanted), read by
** `reader` (ALLOC_READ_*). */
void alloc_stat_read(unsigned kind, uint32_t n, struct meminst_status_info *out, struct meminst_events *ev,
		     uint32_t cap, unsigned reader);
/* The same adding up in `scratch` when it holds alloc_stat_scratch_bytes(n)
** (a snapshot's, kept between snapshots: no mapping made and let go under
** its locks). */
void alloc_stat_read_in(unsigned kind, uint32_t n, struct meminst_status_info *out, struct meminst_events *ev,
			uint32_t cap, unsigned reader, void *scratch, size_t scratch_bytes);
size_t alloc_stat_scratch_bytes(uint32_t n);
void alloc_status_describe(unsigned kind, uint32_t n, struct meminst_status_info *e);
/* The size histograms of types [0, n) into out[type][bucket], the threads'
** pending counts added (a snapshot calls it with counting stopped). */
void alloc_hist_read(uint32_t n, uint64_t (*out)[ALLOC_HIST_BUCKETS]);
/* The event counters of one block counted straight into the entries. */
void alloc_stat_direct_events(uint64_t meta, uint64_t size, bool temp);

/* ------------------------------------------------------------ threads -- */

/* The per-thread record, kept in a recycled pool outside the user heap. */
struct alloc_thread_s {
	struct alloc_thread_s *reg_next, *reg_prev; /* registry (live threads) */
	uint32_t thread_no;
	uint32_t epoch_seen;   /* the gate's epoch when the slots were last synced
				  (gate bits clear: see alloc_count_gate)      */
	uint64_t meta_own;     /* the meta bits of its own plain blocks: thread
				  and header size (alloc_fast.c)               */
	_Atomic int counting;  /* inside the core's counting (mis: see alloc_fork;
				  both modes: alloc_thread_park); a signal
				  handler's deferred free adds
				  ALLOC_COUNTING_DEFERRED (alloc_fast.c)       */
	uint32_t parked;       /* slots flushed before a block: refresh on next use */
	int64_t budget;        /* bytes (and blocks) left before the next flush  */
	int64_t peak_d;        /* slot 0's d past which the total passes
				  alloc_peak_next (kept by alloc_status.c)     */
	_Atomic uint32_t ndeferred;         /* frees left by a signal handler */
	void *deferred[ALLOC_DEFERRED_MAX]; /* (see alloc_core.c, core_defer) */
	uint64_t seq_next, seq_end; /* mim: allocation numbers reserved by the thread */
	uint32_t probe_epoch;       /* alloc_unmap_epoch when probe_pages was valid  */
	uintptr_t probe_pages[8];   /* pages near which headers were found readable  */
	pid_t tid;
	const void *last_block; /* the last block it allocated, until it frees
				  anything: a free of it is temporary        */
	alloc_slot_t slots[ALLOC_SLOTS_ALL];
	/* pending size histograms of the type slots, folded in with them */
	uint16_t hist[ALLOC_SLOTS_TYPE][ALLOC_HIST_BUCKETS];
	uint64_t keyed[(ALLOC_SLOTS_ALL + 63) / 64]; /* slots with a key: what a
				  flush looks at (most of the others are cold) */
	struct { uintptr_t site; uint32_t type; } site_cache[ALLOC_SITE_CACHE];
	struct alloc_list_s *own_list; /* mim: where its blocks go (its own list,
					  or the orphans when none can be had) */
	uint64_t own_at;               /* own_list->id << 32: its blocks' `at` */
	/* Kept when the record is reused:                                   */
	struct alloc_stack_cache_s *stack_cache; /* site_depth (alloc_stack.c):
					  checked entries, so kept for the next thread */
};

/*
** Pointers near a page start have their header's page probed before it is
** read (alloc_core.c, core_probe); the pages a thread found readable are
** remembered in t->probe_pages, each at its own index, until a block that
** a backend may have mapped alone is freed (alloc_unmap_epoch moves on).
** The fast frees (alloc_fast.c) look there inline, when they must
** (alloc_header_readable): with jemalloc, small blocks often start a page.
*/
#define ALLOC_PAGE_START_ZONE 64 /* covers page + header (+16 for glibc) */
extern _Atomic uint32_t alloc_unmap_epoch;
static inline bool alloc_in_start_zone(const void *user)
{
	return ((uintptr_t)user & 4095) <= ALLOC_PAGE_START_ZONE;
}
static inline unsigned alloc_probe_index(uintptr_t page)
{
	return (unsigned)(page >> 12) & 7;
}
static inline bool alloc_page_known(const alloc_thread_t *t, const void *hdr)
{
	uintptr_t page = (uintptr_t)hdr & ~(uintptr_t)4095;
	return t->probe_pages[alloc_probe_index(page)] == page &&
	       t->probe_epoch == atomic_load_explicit(&alloc_unmap_epoch, memory_order_acquire);
}

/*
** May a fast free read the `hs` bytes of header before `user` without a
** probe?  Away from a page start, yes.  Near one: when the header lies on
** the pointer's own page and no page has gone yet that a pointer handed to
** free could still point into (alloc_pages_gone, sticky: raised when a
** block that a backend may have mapped alone is freed, when the program
** unmaps or remaps memory itself, when a block of glibc's from before the
** start is freed and at every switch on, as the backend may have freed
** such blocks unseen while off); or when the thread knows the header's
** page readable.  With jemalloc small blocks start a page often: the
** first case makes their frees a compare, not a look-up.  (A raw munmap
** system call is not seen: a free into such a page faults, as it would
** without the layer.)
*/
extern _Atomic bool alloc_pages_gone;
static inline bool alloc_header_readable(const alloc_thread_t *t, const void *user, size_t hs)
{
	uintptr_t off = (uintptr_t)user & 4095;
	if (likely(off > ALLOC_PAGE_START_ZONE))
		return true;
	if (off >= hs && !atomic_load_explicit(&alloc_pages_gone, memory_order_acquire))
		return true;
	return alloc_page_known(t, (const char *)user - hs);
}

/* Where a site's entry is in a thread's site cache (which holds the types
** that depend on the site alone: not those of site_depth's stacks).  The
** top byte of a multiplication by an odd constant (Fibonacci hashing's
** 2^32/phi, sign-extended so that it is an instruction's immediate): every
** address bit below the top byte reaches it, in two instructions where two
** shifts, an xor and a zero-extension took six. */
static inline unsigned alloc_site_cache_index(uintptr_t site)
{
	_Static_assert(ALLOC_SITE_CACHE == 256, "the index is the product's top byte");
	return (unsigned)(((uint64_t)site * (uint64_t)(int64_t)(int32_t)0x9e3779b1u) >> 56);
}

enum { ALLOC_TLS_NEW = 0, ALLOC_TLS_LIVE, ALLOC_TLS_DEAD };

/* The only TLS of the layer.  All-zero is "not started yet". */
typedef struct alloc_tls_s {
	int guard;             /* >0: inside meminst; allocations untracked */
	int state;             /* ALLOC_TLS_*                               */
	alloc_thread_t *thr;   /* NULL until started and after death        */
	uint32_t thread_no;    /* kept after death for late frees           */
	meminst_type_t scope;  /* meminst_type_push                         */
	int probe_hit;         /* a guarded allocation reached us (api.c)   */
	int backend_timed;     /* an <alloc> event is open (alloc_hooks.c)  */
	uint64_t backend_tsc;  /*   the backend's calls in it, TSC ticks    */
	_Atomic int orphan_busy;           /* mim, no record: its `counting` (alloc_core.c) */
	_Atomic uint32_t orphan_ndeferred; /*   and `deferred`, in static TLS: kept small   */
	void *orphan_deferred[16];
} alloc_tls_t;

extern __thread alloc_tls_t alloc_tls ALLOC_TLS_MODEL;

/*
** A backend call (alloc_real.X(...)) of the general path.  While exact
** tracing times an allocator call (alloc_hooks.c's timed twins), the
** backend's own time inside it is added up, so that the trace can tell the
** allocator's time from meminst's around it (ALLOC_AT's inner).  The fast
** paths (alloc_fast.c) never run while tracing: their calls stay plain.
*/
#define ALLOC_BACKEND(call)                                                    \
	({                                                                     \
		__typeof__(call) r_;                                           \
		if (__builtin_expect(alloc_tls.backend_timed, 0)) {            \
			uint64_t t_ = __builtin_ia32_rdtsc();                  \
			r_ = call;                                             \
			alloc_tls.backend_tsc += __builtin_ia32_rdtsc() - t_;  \
		} else {                                                       \
			r_ = call;                                             \
		}                                                              \
		r_;                                                            \
	})
#define ALLOC_BACKEND_VOID(call) ((void)ALLOC_BACKEND(((call), 0)))

/*
** A measure of the backend's calls opened around a timed allocator call
** (alloc_hooks.c) or the calibration's calls of nothing (trace_clock.c).
** A signal handler's allocation inside a timed call opens its own: the
** outer one's figures are kept in *save and given back at the close.
*/
typedef struct alloc_backend_save_s {
	int timed;
	uint64_t tsc;
} alloc_backend_save_t;

static inline __attribute__((always_inline)) void alloc_backend_open(alloc_backend_save_t *save, bool timed)
{
	save->timed = alloc_tls.backend_timed, save->tsc = alloc_tls.backend_tsc;
	alloc_tls.backend_tsc = 0;
	alloc_tls.backend_timed = timed;
}

/* The ticks of the backend's calls since the open; UINT64_MAX: not timed. */
static inline __attribute__((always_inline)) uint64_t alloc_backend_close(const alloc_backend_save_t *save)
{
	uint64_t tsc = alloc_tls.backend_timed ? alloc_tls.backend_tsc : UINT64_MAX;
	alloc_tls.backend_timed = save->timed, alloc_tls.backend_tsc = save->tsc;
	return tsc;
}

/* "alloc_thread.c" */
alloc_thread_t *alloc_thread_start(alloc_tls_t *tls);
int alloc_thread_init(void);
void alloc_thread_lock_registry(void);
void alloc_thread_unlock_registry(void);
alloc_thread_t *alloc_thread_first(void);  /* registry held */
/*
** mis: counting passes this gate, one load (see alloc_thread.c).  Its low
** bits say why to stop; above them runs the status epoch, which moves on
** (by ALLOC_GATE_EPOCH) whenever a read resets a kind, so that a thread
** whose slots are in step (t->epoch_seen) with no reason to stop sees the
** gate word equal to t->epoch_seen: one compare for both.
*/
enum { ALLOC_GATE_FORKING = 1, /* a fork is copying the process          */
       ALLOC_GATE_FENCE = 2,   /* no membarrier: counting fences itself  */
       ALLOC_GATE_CAPTURE = 4, /* mis: a snapshot reads every kind       */
       ALLOC_GATE_STOP = ALLOC_GATE_FORKING | ALLOC_GATE_CAPTURE,
       ALLOC_GATE_BITS = 0xff,
       ALLOC_GATE_EPOCH = 0x100 };
extern _Atomic uint32_t alloc_count_gate;
static inline uint32_t alloc_gate_epoch(void)
{
	return atomic_load_explicit(&alloc_count_gate, memory_order_acquire) & ~(uint32_t)ALLOC_GATE_BITS;
}
void alloc_thread_stop_counting(void);   /* mis: see alloc_thread.c */
void alloc_thread_resume_counting(void);
void alloc_fork_wait(void);

/*
** Exact peaks when threads take turns: a thread about to block (join,
** waits, sleeps, polls: trace_suspend.c), to create a thread, or to exit
** folds its pending counts into the shared entries, and refreshes its
** slots' bases on its next count (after the others have folded theirs).
** The fast test is one TLS load: nothing to do in off mode, in a thread
** that never allocated, or twice in a row without a count in between.
*/
void alloc_thread_park_slow(alloc_thread_t *t);
static inline void alloc_thread_park(void)
{
	alloc_thread_t *t = alloc_tls.thr;
	if (t && !t->parked)
		alloc_thread_park_slow(t);
}

/* Recursion guard: every path from a hook into code that may re-enter
** malloc (libc, dladdr, the loader) runs inside it. */
static inline void alloc_guard_enter(void) { alloc_tls.guard++; }
static inline void alloc_guard_exit(void) { alloc_tls.guard--; }

#endif /* ALLOC_INT_THREAD_H */
