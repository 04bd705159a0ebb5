/*
** alloc_int.h — internal interfaces of libmeminst's allocation layer.
**
** The layer is split by concern; prototypes below are grouped under the
** file that defines them.
**
**   alloc_hooks.c    the exported libc and C++ names; thin, no policy
**   alloc_core.c     block life cycle: header, accounting, map, free checks
**   alloc_count.h    the inline half of counting (alloc_core.c, alloc_fast.c)
**   alloc_check.h    the header check (alloc_core.c, alloc_fast.c)
**   alloc_fast.c     mis: malloc and free when nothing is unusual
**   alloc_backend.c  real allocators (system via dlsym, jemalloc via dlopen)
**                    and the static bootstrap arena
**   alloc_status.c   counters: per-thread pending slots, flush, read
**   alloc_tags.c     allocators, classes, types (sites -> types), threads
**   alloc_unload.c   sites of unloaded modules leave the caches (dlclose)
**   alloc_symbolise.c  print=types named by a helper process at exit
**   alloc_thread.c   per-thread state, registry, thread exit, fork
**   alloc_map.c      mim mode: per-thread arrays of live blocks
**   alloc_options.c  the MEMINST parser (pure, unit tested)
**   alloc_sys.c      OS layer: log without malloc, environ, safe reads
**   alloc_api.c      the public meminst_* functions
**   alloc_sqlite.c   storing snapshots with meminst's private SQLite
**                    (libsqlite3.a linked in, names hidden)
**   alloc_seccomp.c  seccomp filters evaluated before they take effect
**
** C-preprocessor macro summary
**   ALLOC_DEBUG        0 = no checks, 1 = cheap asserts, 2 = expensive ones
**   ALLOC_TLS_MODEL    tls_model("initial-exec") unless configured off
**   HAVE_JEMALLOC      backend=jemalloc available (loaded at run time)
**
** Lock order (take left before right; the hot path holds at most one):
**   map set lock < orphan list < thread lists (by number) < tag table
**   lock < thread registry lock
** No lock is ever held while calling into libc code that may allocate, and
** no lock is held while calling dladdr (which takes the loader's lock).
** fork's prepare handlers take, in this order: the sampling lock, then
** no thread inside libunwind (trace_sample.c, trace_unwind.c: its own
** locks cannot be taken from outside, so walks are held at a gate and the
** fork waits for those under way), the snapshot store lock
** (alloc_sqlite.c; every call into the private SQLite, which has no mutex
** of its own, is made under it), then the map locks, the tag table, the
** stack table and the registry (alloc_thread.c); the parent and child
** handlers release them.  The sampler's reset in the child runs first of
** all (alloc_thread.c's child handler calls it), before alloc_service.c's
** starts a thread there.
** A child of clone without fork got none of this: alloc_clone_adopt
** (alloc_exit.c) finds it by its pid and runs the child handlers then.
*/
#ifndef ALLOC_INT_H
#define ALLOC_INT_H

#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "meminst.h"

/* Everything declared below is internal to the library: hidden, so that
** the hot path reaches its globals directly, not through the GOT. */
#pragma GCC visibility push(hidden)

#define ALLOC_EXPORT __attribute__((visibility("default")))
#define ALLOC_INTERNAL __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ALLOC_NOINLINE __attribute__((noinline))

void alloc_assert_fail(const char *expr, const char *file, int line);
#if ALLOC_DEBUG >= 1
#define alloc_assert(e) ((e) ? (void)0 : alloc_assert_fail(#e, __FILE__, __LINE__))
#else
#define alloc_assert(e) ((void)0)
#endif
#if ALLOC_DEBUG >= 2
#define alloc_assert_expensive(e) alloc_assert(e)
#else
#define alloc_assert_expensive(e) ((void)0)
#endif

/* ------------------------------------------------------------ options -- */

/* One parsed MEMINST value.  Strings point into the environment (in place). */
typedef struct alloc_options_s {
	enum meminst_mode mode;
	int backend;            /* ALLOC_BACKEND_*                          */
	const char *snapshot;   /* snapshot=PATH (not yet supported)        */
	size_t snapshot_len;
	unsigned snapshot_at;   /* bit set of ALLOC_SNAP_*                  */
	bool snapshot_at_given; /* snapshot_at= present (else exit, if a path) */
	uint64_t interval_ns;   /* interval=DURATION                        */
	bool interval_status;   /* interval_content=status: no block map     */
	int trace_clock;        /* 0 none, 1 wall, 2 cpu                    */
	unsigned sample_hz;
	int sample_clock;       /* 0 default(cpu), 1 wall, 2 cpu            */
	uint64_t alloc_sample;  /* alloc_sample=BYTES                       */
	bool sample_counts;     /* sample_counts=on: exact call counts      */
	unsigned sample_depth;  /* sample_depth=N frames; 0: the default    */
	int site_depth;         /* site_depth=N|user; 0: one return address  */
	const char *site_skip;  /* site_skip=NAME+NAME…: wrappers to see through */
	size_t site_skip_len;
	bool site_skip_none;    /* site_skip=none: not even the built-in list */
	const char *trace_file; /* trace_file=PATH                          */
	size_t trace_file_len;
	int trace_threads;      /* trace_threads=: 0 default(all), 1 all, 2 family */
	int trace_output;       /* trace_output=: 0 default(events), 1 events, 2 profile */
	int trace_sites;        /* trace_sites=: 0 default(off), 1 off, 2 on: CALL records with call sites */
	bool control;           /* control=on                               */
	int snapshot_signal;    /* snapshot_signal=USR2 (the default)       */
	unsigned peak_growth;   /* peak_growth=PERCENT (default 10)         */
	bool on_error_abort;    /* on_error=abort                           */
	bool quiet;             /* quiet=on: no invalid-free reports        */
	unsigned print_kinds;   /* print=total+classes…: at exit, to stderr */
	int leak_check;         /* ALLOC_LEAK_CHECK_*: when the leak scan runs */
	int leak_exit_code;     /* leak_exit_code=N: 0 none                */
	uint64_t leak_threshold; /* leak_threshold=BYTES of definitely lost */
} alloc_options_t;

enum { ALLOC_LEAK_CHECK_EXIT = 0, ALLOC_LEAK_CHECK_ON = 1, ALLOC_LEAK_CHECK_OFF = 2 };

enum { ALLOC_BACKEND_SYSTEM = 0, ALLOC_BACKEND_JEMALLOC = 1 };
enum { ALLOC_SNAP_EXIT = 1, ALLOC_SNAP_PEAK = 2, ALLOC_SNAP_SIGNAL = 4 };

#define ALLOC_OPTIONS_ERRMAX 640 /* the longest message (unknown key: the list), with a 92-byte quote escaped */

/* "alloc_options.c" */
/* Parse `value` (may be NULL).  Returns 0, or -1 with a one-line message in
** err (no trailing newline).  Never allocates. */
int alloc_options_parse(const char *value, alloc_options_t *out, char *err,
			size_t errlen);
/* Settings that parse but whose feature is not built yet: their names. */
int alloc_options_unsupported(const alloc_options_t *o, char *err, size_t errlen);

/* ------------------------------------------------------------- header -- */

/*
** Every instrumented block is preceded by a header.  In mis mode it is the
** 16-byte alloc_hdr_t; in mim mode the block's place in the map and its
** allocation number come first (32 bytes).
** Both sizes are powers of two and multiples of 16, so the user pointer keeps
** malloc's alignment, and for an aligned request the padding in front of the
** user pointer is max(header, alignment): a power of two, stored as its log.
**
**   size bits: 0-47 requested bytes (at most 2^47) | 48-63 check (16)
**   meta bits: 0-19 type | 20-38 thread | 39-41 allocator | 42-47 pad log2
**              48 untracked | 49 freed | 50-63 check (14)
**
** The 30 check bits are a keyed hash (a per-process secret) of the user
** address, the size and the meta bits below them except the freed flag: a
** forged or stray header is taken for ours with probability 2^-30 per try
** (see alloc_check.h, and alloc_core.c, core_verify).  Read the size with
** alloc_hdr_bytes.
*/
typedef struct alloc_hdr_s {
	uint64_t size; /* requested bytes, check bits on top */
	uint64_t meta;
} alloc_hdr_t;

#define ALLOC_SIZE_BITS 48
#define ALLOC_SIZE_MASK ((1ull << ALLOC_SIZE_BITS) - 1)
static inline uint64_t alloc_hdr_bytes(const alloc_hdr_t *h) { return h->size & ALLOC_SIZE_MASK; }

/*
** mim: in front of the mis header, where the block sits in the map (its
** list's number and its index in that list's array, see alloc_map.c) and
** its allocation number, in full.
*/
typedef struct alloc_mhdr_s {
	uint64_t at;  /* list number << 32 | index in the list's array */
	uint64_t seq; /* allocation number */
	alloc_hdr_t h;
} alloc_mhdr_t;

static inline uint32_t alloc_at_list(uint64_t at) { return (uint32_t)(at >> 32); }
static inline uint32_t alloc_at_index(uint64_t at) { return (uint32_t)at; }

/* mim: a list of live blocks (see the map section below). */
typedef struct alloc_list_s {
	_Atomic int lock;
	_Atomic uint32_t busy; /* the owner is in its fast path without the lock */
	_Atomic uint32_t stop; /* ALLOC_LIST_*: why the owner must take the lock */
	uint32_t id;        /* its number, in its blocks' headers; 0: the orphans */
	uint32_t owner;     /* thread number; 0: none (orphans, exited threads) */
	uint32_t pool_next; /* in the pool of empty lists, the next one's id */
	uint32_t pooled;    /* in the pool (a racing double free must not put
			       it there twice)                                */
	uint32_t count;     /* blocks in arr[0 .. count-1]                    */
	uint32_t cap;       /* room in arr                                    */
	uint32_t low;       /* a count that shrinks arr (0: never)            */
	struct alloc_mhdr_s **arr; /* mapped, never in the user heap           */
} __attribute__((aligned(64))) alloc_list_t;

#define ALLOC_TYPE_BITS 20
#define ALLOC_THREAD_BITS 19
#define ALLOC_TYPE_MAX ((1u << ALLOC_TYPE_BITS) - 1)     /* overflow type   */
#define ALLOC_THREAD_MAX ((1u << ALLOC_THREAD_BITS) - 1) /* overflow thread */
#define ALLOC_META_UNTRACKED (1ull << 48)
#define ALLOC_META_FREED (1ull << 49) /* not covered by the check */
#define ALLOC_META_CHECK_SHIFT 50

static inline uint64_t alloc_meta_pack(uint32_t type, uint32_t thread,
				       unsigned allocator, unsigned pad_log2)
{
	return (uint64_t)type | (uint64_t)thread << 20 |
	       (uint64_t)allocator << 39 | (uint64_t)pad_log2 << 42;
}
static inline uint32_t alloc_meta_type(uint64_t m) { return m & ALLOC_TYPE_MAX; }
static inline uint32_t alloc_meta_thread(uint64_t m) { return (m >> 20) & ALLOC_THREAD_MAX; }
static inline unsigned alloc_meta_allocator(uint64_t m) { return (m >> 39) & 7; }
static inline unsigned alloc_meta_pad_log2(uint64_t m) { return (m >> 42) & 63; }

/* ---------------------------------------------------------- allocators -- */

enum alloc_allocator {
	ALLOC_A_MALLOC = 0,
	ALLOC_A_CALLOC,
	ALLOC_A_REALLOC,
	ALLOC_A_ALIGNED, /* memalign, posix_memalign, aligned_alloc */
	ALLOC_A_VALLOC,  /* valloc, pvalloc                        */
	ALLOC_A_NEW,
	ALLOC_A_NEW_ARRAY,
	ALLOC_A_COUNT
};

/* ------------------------------------------------------------ backend -- */

typedef struct alloc_backend_s {
	const char *name;
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable_size)(void *);
} alloc_backend_t;

/* "alloc_backend.c" */
extern alloc_backend_t alloc_real;           /* the chosen backend        */
extern alloc_backend_t alloc_libc;           /* glibc's, whatever the backend */
extern bool alloc_aligned_alloc_strict;      /* glibc >= 2.38: aligned_alloc
						refuses a non-power-of-two */
bool alloc_libc_owns(const void *p);         /* a glibc block not from us */
bool alloc_brk_mapped(const void *p, size_t n); /* in the program break's heap */
int alloc_backend_resolve_system(void);      /* 0 or -1                   */
int alloc_backend_load(int which, char *err, size_t errlen);
#define ALLOC_FAMILY_N 15
#define ALLOC_FAMILY_C 0x7ffu    /* malloc .. malloc_usable_size      */
#define ALLOC_FAMILY_CXX 0x7800u /* operator new, new[], delete, delete[] */
extern const char *const alloc_family_names[ALLOC_FAMILY_N];
unsigned alloc_backend_replaced(bool *exe, const char **lib); /* names defined before us */
extern const char alloc_hooks_linked __attribute__((weak)); /* alloc_hooks.c */
void alloc_replaced_report(unsigned replaced, bool exe, const char *lib);
void *alloc_boot_malloc(size_t size, size_t align);
#define ALLOC_BOOT_ARENA_SIZE (1u << 20)
extern char alloc_boot_arena[ALLOC_BOOT_ARENA_SIZE];
static inline bool alloc_boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)alloc_boot_arena < ALLOC_BOOT_ARENA_SIZE;
}
size_t alloc_boot_size(const void *p);

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
** then; see alloc_status.c for the precision this gives.
*/
typedef struct alloc_stat_s {
	_Atomic int64_t cur[2];
	_Atomic uint64_t max_sl[2];
	_Atomic uint64_t max_ever[2];
	_Atomic uint64_t ev[ALLOC_EV_COUNT]; /* events, cumulative (ALLOC_EV_*) */
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
			      d (bytes, calls): the events of ALLOC_EV_*.  64
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
void alloc_stat_read(unsigned kind, uint32_t n, struct meminst_status_info *out, uint32_t cap,
		     bool reset);
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
	uint32_t own_id;               /* own_list->id                        */
	/* Kept when the record is reused:                                   */
	struct alloc_stack_cache_s *stack_cache; /* site_depth (alloc_stack.c):
					  checked entries, so kept for the next thread */
};

/* Where a site's entry is in a thread's site cache (which holds the types
** that depend on the site alone: not those of site_depth's stacks). */
static inline unsigned alloc_site_cache_index(uintptr_t site)
{
	return (unsigned)((site >> 2) ^ (site >> 11)) & (ALLOC_SITE_CACHE - 1);
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
} alloc_tls_t;

extern __thread alloc_tls_t alloc_tls ALLOC_TLS_MODEL;

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

/* -------------------------------------------------------------- tags --- */

/* "alloc_tags.c" */
int alloc_tags_init(void);
uint32_t alloc_type_of_site(uintptr_t site);  /* may take the tag lock */
extern _Atomic uint32_t alloc_ntypes, alloc_nthreads; /* numbers handed out */
uint32_t alloc_type_class(uint32_t type);
uint32_t alloc_thread_number_new(pid_t tid);
uint32_t alloc_tags_count(unsigned kind);
void alloc_tags_name(unsigned kind, uint32_t id, char *buf, size_t len);
uintptr_t alloc_type_site(uint32_t type);
pid_t alloc_thread_tid(uint32_t thread_no);
void alloc_thread_set_tid(uint32_t thread_no, pid_t tid);
const char *alloc_allocator_name(uint32_t allocator);
const char *alloc_class_module(uint32_t class_no);
/* An automatic class's module's load bias when its first site was named
** (0 for registered classes). */
uintptr_t alloc_class_bias(uint32_t class_no);
void alloc_thread_set_name(uint32_t thread_no, const char *name);
int alloc_class_register(const char *name);
uint32_t alloc_type_register(const char *name, int class_no, uintptr_t site);
/* site_depth: the type keyed by a stack (key: its hash, top bit set). */
uint32_t alloc_type_of_stack_known(uint64_t key); /* 0 if none yet, no lock */
uint32_t alloc_type_of_stack(uint64_t key, const uint64_t *frames, unsigned n, const char *descr);
/* The stack of a type made by site_depth (0 frames for the others). */
unsigned alloc_type_frames(uint32_t type, const uint64_t **frames);

/* A loaded module as alloc_unload.c sees it: its load bias, the hash of
** its path (0: the executable) and the range of its code. */
typedef struct alloc_loaded_s {
	uintptr_t bias, lo, hi;
	uint64_t name_hash;
} alloc_loaded_t;
/* Modules unloaded: their classes die and their types' sites leave the
** site table; true when a class died.  Takes the tag lock. */
bool alloc_tags_unloaded(const alloc_loaded_t *now, size_t n);
bool alloc_type_unloaded(uint32_t type); /* its class's module is gone */

/* "alloc_symbolise.c": print=types named by meminst-symbolise. */
typedef struct alloc_sym_name_s {
	const char *label, *where, *chain; /* where, chain: NULL for none */
} alloc_sym_name_t;
typedef struct alloc_sym_names_s {
	size_t bytes, answer_cap;
	char *answer;
	alloc_sym_name_t names[]; /* by type number; label NULL: not named */
} alloc_sym_names_t;
alloc_sym_names_t *alloc_symbolise(const struct meminst_status_info *e, long n, int fd);
void alloc_symbolise_free(alloc_sym_names_t *r);

/* "alloc_unload.c": sites of unloaded modules (dlclose). */
uint64_t alloc_name_hash(const char *path);
void alloc_unload_check(void); /* after dlclose, before dlopen */

/* "alloc_stack.c": deeper sites (site_depth=N|user). */
#define ALLOC_SITE_DEPTH_USER (-1)
#define ALLOC_SITE_DEPTH_MAX 32
extern int alloc_site_depth; /* 0: a type per return address (default) */
extern bool alloc_site_skip; /* wrappers seen through: the built-in list (meminst-wrappers.h), site_skip='s names */
/* The type of an allocation from site with the stack above it; *per_site:
** the answer holds for every allocation from site (it may be cached). */
uint32_t alloc_stack_type(alloc_thread_t *t, uintptr_t site, bool *per_site);
/* Modules unloaded: the caches of caller chains start afresh and the
** modules not among the n loaded now are forgotten. */
void alloc_stack_unloaded(const alloc_loaded_t *now, size_t n);
void alloc_stack_prefork(void);
void alloc_stack_postfork_parent(void);
void alloc_stack_postfork_child(void);
void alloc_tags_prefork(void);
void alloc_tags_postfork_parent(void);
void alloc_tags_postfork_child(void);

/* --------------------------------------------------------------- map --- */

/*
** mim: the map of live blocks is a set of lists, one per thread (its
** owner: the thread that allocated the block) plus the orphan list (number
** 0), which holds the blocks of threads that have exited with few blocks
** and of threads without a list.  A list is an array of pointers to the
** blocks' headers under one lock; a header says which list holds it and
** where (alloc_mhdr_t.at).  The owner adds and counts holding its own list
** (its lock, or without it while the list is biased, below), which no
** other thread takes except to free one of its blocks; whoever holds every
** list (alloc_map_stop) sees blocks and counters that agree.
**
** Lock order: the set lock < the orphan list < the other lists, by number
** < tag table lock < registry lock.  The hot path holds at most one list
** lock, and never while it waits for another lock of ours.
*/
/* (alloc_list_t, a thread's list of live blocks, is defined above.) */

/*
** A list is biased to its owner until another thread frees one of its
** blocks: the owner's fast path (alloc_fast.c) then raises `busy` and, if
** `stop` is clear, works on the list without its lock (two plain stores
** where the lock took two locked exchanges).  Anyone else takes the lock
** and makes the owner keep out: a free from another thread revokes the
** bias for good (ALLOC_LIST_SHARED: from then on the owner takes the lock
** too), a capture or a fork holds the owner off while it holds every list
** (ALLOC_LIST_HELD); either one makes every thread pass a memory barrier
** (membarrier, alloc_thread_fence_all) and then waits until `busy` is
** down, so that the owner either has seen `stop` or was seen inside.
** Without membarrier every list is shared from the start.
*/
enum { ALLOC_LIST_SHARED = 1, ALLOC_LIST_HELD = 2 };
extern bool alloc_map_bias; /* lists start biased (membarrier works) */
void alloc_thread_fence_all(void);

/* "alloc_map.c" */
extern alloc_list_t alloc_map_orphans;
/* Non-zero while a snapshot's capture holds every list (mim) or the
** counting gate (mis): a program thread that waits then is waiting for
** meminst, and its trace says so (<snapshot>, see alloc_spin_lock_slow
** and core_enter_gated). */
extern _Atomic int alloc_map_capturing;
void alloc_spin_lock_slow(_Atomic int *lock);
void alloc_map_corrupt(const alloc_mhdr_t *m) __attribute__((noreturn, cold));
bool alloc_map_grow(alloc_list_t *l);
void alloc_map_shrink(alloc_list_t *l);

/* The small spin locks of the map (and the set lock). */
static inline void alloc_spin_lock(_Atomic int *lock)
{
	if (unlikely(atomic_exchange_explicit(lock, 1, memory_order_acquire)))
		alloc_spin_lock_slow(lock);
}
static inline void alloc_spin_unlock(_Atomic int *lock)
{
	atomic_store_explicit(lock, 0, memory_order_release);
}
static inline void alloc_list_lock(alloc_list_t *l) { alloc_spin_lock(&l->lock); }
static inline void alloc_list_unlock(alloc_list_t *l) { alloc_spin_unlock(&l->lock); }

/* Add a block's header, with its allocation number, at the end of the
** list, which the caller holds.  False when the array cannot grow (the
** block is then not in the map: the caller leaves it untracked). */
static inline bool alloc_map_link(alloc_list_t *l, alloc_mhdr_t *m, uint64_t seq)
{
	uint32_t n = l->count;
	if (unlikely(n == l->cap) && !alloc_map_grow(l))
		return false;
	l->arr[n] = m;
	m->at = (uint64_t)l->id << 32 | n;
	m->seq = seq;
	l->count = n + 1;
	return true;
}

/*
** Take a block off the list, which the caller holds and which its header
** names: the last entry moves into its place.  The header is in front of
** the user's block, where an overrun or an attacker can rewrite it, and an
** unchecked index would have the move write a pointer of ours where they
** choose.  So the entry at the index must be this very block first; if not,
** the process stops (alloc_map_corrupt) before anything is written.
*/
static inline void alloc_map_unlink(alloc_list_t *l, alloc_mhdr_t *m, uint64_t at)
{
	uint32_t i = alloc_at_index(at), n = l->count;
	if (unlikely(i >= n || l->arr[i] != m))
		alloc_map_corrupt(m);
	alloc_mhdr_t *last = l->arr[n - 1];
	l->arr[i] = last;
	/* the same list, index i (m itself when it was last); a free of
	** `last` from another thread may be reading it (alloc_map_lock_block) */
	__atomic_store_n(&last->at, at, __ATOMIC_RELAXED);
	l->count = --n;
	if (unlikely(n == l->low))
		alloc_map_shrink(l);
}

void alloc_map_init(void);
alloc_list_t *alloc_map_list_new(uint32_t thread_no); /* NULL: use the orphans */
/* The list a block's header names, held, and its `at` as read under the
** lock; NULL when the header names no list. */
alloc_list_t *alloc_map_lock_block(const alloc_mhdr_t *m, uint64_t *at);
void alloc_map_unlock_other(alloc_list_t *l);
void alloc_map_list_handover(alloc_list_t *l);

/*
** The one way to see every live block: alloc_map_stop takes the set lock
** and every list's lock (allocation and freeing of tracked blocks wait,
** counting too), then
**     for (uint32_t i = 0, n = alloc_map_nlists(); i < n; i++)
**             l = alloc_map_list(i), its blocks l->arr[0 .. l->count-1]
** and alloc_map_resume lets go.  alloc_map_count_stopped is the number of
** blocks on all lists.  Empty lists (of exited threads) stay numbered, in
** a pool for the next threads.
*/
void alloc_map_stop(void);
void alloc_map_resume(void);
uint32_t alloc_map_nlists(void);
alloc_list_t *alloc_map_list(uint32_t id); /* NULL: no such list */
size_t alloc_map_count_stopped(void);
size_t alloc_map_count(void);               /* takes each list in turn    */
size_t alloc_map_count_ownerless(void);     /* blocks of exited threads   */
void alloc_map_postfork_child(void);
extern _Atomic uint64_t alloc_seq_reserved; /* allocation numbers handed out */
uint64_t alloc_seq_take_slow(alloc_thread_t *t);

/*
** The next allocation number for a block.  Threads reserve numbers in
** batches so that the hot path touches no shared counter; the order
** between threads is therefore right to within a batch.
*/
#define ALLOC_SEQ_BATCH 4096
static inline uint64_t alloc_seq_take(alloc_thread_t *t)
{
	if (likely(t) && likely(t->seq_next != t->seq_end))
		return t->seq_next++;
	return alloc_seq_take_slow(t);
}

/* --------------------------------------------------------------- core --- */

/* "alloc_core.c" */
extern enum meminst_mode alloc_mode;
extern alloc_options_t alloc_opts;
extern size_t alloc_hdr_size;
extern _Atomic int alloc_state; /* 0 new, 1 starting, 2 ready */

/*
** The hooks' route, the one word every malloc/free/new/delete reads first:
** the mode once the layer is ready, with a bit for each reason to leave the
** fast paths (not started, exact tracing, allocation sampling).  So `off`
** is one compare before the backend, and mis/mim reach their own entry
** point (alloc_core_malloc_mis...) after one or two more.
*/
enum { ALLOC_ROUTE_OFF = 0, ALLOC_ROUTE_MIS = 1, ALLOC_ROUTE_MIM = 2,
       ALLOC_ROUTE_STARTING = 4, /* until alloc_init has finished          */
       ALLOC_ROUTE_WATCH = 8,    /* trace_alloc_watch: <alloc> events      */
       ALLOC_ROUTE_ASAMPLE = 16  /* trace_asample_on: allocation sampling  */ };
extern _Atomic unsigned alloc_route;
void alloc_route_flag(unsigned flag, bool on);
void alloc_init(void);
void *alloc_core_malloc(size_t size, unsigned allocator, uintptr_t site, uint32_t type);
void *alloc_core_calloc(size_t n, size_t size, uintptr_t site, uint32_t type);
void *alloc_core_realloc(void *p, size_t size, unsigned allocator, uintptr_t site, uint32_t type);
void *alloc_core_aligned(size_t align, size_t size, unsigned allocator, uintptr_t site);
void alloc_core_free(void *p, uintptr_t site);
/* The same for one mode (the hooks' fast routes): */
void *alloc_core_malloc_mis(size_t size, unsigned allocator, uintptr_t site);
void *alloc_core_malloc_mim(size_t size, unsigned allocator, uintptr_t site);
void *alloc_core_malloc_mis_plain(size_t size, uintptr_t site); /* ALLOC_A_MALLOC */
void *alloc_core_malloc_mim_plain(size_t size, uintptr_t site);
void alloc_core_free_mis(void *p, uintptr_t site);
/* "alloc_core.c", what the mis fast paths ("alloc_fast.c") fall back on: */
void *alloc_core_track_mis_slow(void *base, size_t size, unsigned allocator, uintptr_t site);
void *alloc_core_track_mis_done(alloc_thread_t *t, void *user);
void alloc_core_free_mis_slow(void *p, uintptr_t site);
void alloc_core_free_mis_done(alloc_thread_t *t, void *user);
void alloc_core_free_mim(void *p, uintptr_t site);
void *alloc_core_track_mim_slow(void *base, size_t size, unsigned allocator, uintptr_t site);
void alloc_core_free_mim_slow(void *p, uintptr_t site);
void alloc_core_free_mim_done(alloc_thread_t *t, void *user);
size_t alloc_core_usable_size(void *p);
uint32_t alloc_core_block_type(const void *p);

/*
** mim: the allocation number of a block an allocating entry point has just
** returned (never a pointer of the program's, so that its header is ours
** and needs no checking); UINT64_MAX when the block is not in the map (an
** untracked header, the bootstrap arena) or the mode is not mim.
*/
static inline uint64_t alloc_new_block_seq(const void *user)
{
	if (alloc_mode != MEMINST_MODE_MIM || alloc_boot_owns(user))
		return UINT64_MAX;
	const alloc_mhdr_t *m = (const alloc_mhdr_t *)user - 1;
	return (m->h.meta & ALLOC_META_UNTRACKED) ? UINT64_MAX : m->seq;
}
void alloc_core_report_summary(void);

/* ----------------------------------------------------------- snapshots -- */

/*
** A captured block is a 16-byte key (address, index of its record) and a
** 24-byte record in capture order: the sort by address moves the keys
** only, and the encoder reads each record through its key.
*/
typedef struct alloc_snap_key_s {
	uint64_t addr, at;
} alloc_snap_key_t;

typedef struct alloc_snap_rec_s {
	uint64_t size, seq;
	uint32_t type;
	uint32_t thread : 24, allocator : 8;
} alloc_snap_rec_t;

/* A block's leak class (memcheck's), as stored in leak_block.class. */
enum { ALLOC_LEAK_REACHABLE = 0, ALLOC_LEAK_DEFINITE = 1, ALLOC_LEAK_INDIRECT = 2,
       ALLOC_LEAK_POSSIBLE = 3, ALLOC_LEAK_CLASSES = 4 };
typedef struct alloc_leak_sum_s {
	uint64_t bytes[ALLOC_LEAK_CLASSES], blocks[ALLOC_LEAK_CLASSES];
	uint64_t scanned_bytes;            /* roots and blocks read */
	uint32_t threads, threads_unstopped; /* unstopped: stack pointer only */
	int64_t scan_ns;
} alloc_leak_sum_t;

/* One captured snapshot, in mmap'd memory (see alloc_snapshot.c). */
typedef struct alloc_snap_s {
	bool with_map;
	const char *trigger; /* api exit signal interval peak control */
	pid_t pid, ppid;
	int64_t time_ns, elapsed_ns, pause_ns;
	uint64_t seq, bytes;
	alloc_snap_key_t *keys, *scratch; /* scratch: the sort's second buffer */
	alloc_snap_rec_t *recs;
	size_t *counts;                   /* the sort's digit counts */
	size_t nblocks, room;             /* blocks captured, room for them */
	void *blocks_map;                 /* one mapping holds all four */
	size_t blocks_bytes;
	struct meminst_status_info *status[ALLOC_K_COUNT];
	uint32_t nstatus[ALLOC_K_COUNT];
	size_t status_bytes[ALLOC_K_COUNT];
	bool sorted;                      /* keys already in address order */
	bool leak_done;                   /* leak_class and leak are filled */
	uint8_t *leak_class;              /* ALLOC_LEAK_* of keys[i]'s block */
	size_t leak_class_bytes;
	alloc_leak_sum_t leak;
	uint64_t (*hist)[ALLOC_HIST_BUCKETS]; /* types' size histograms */
	size_t hist_bytes;
} alloc_snap_t;

/* "alloc_snapshot.c" */
extern char alloc_snap_cwd[4096]; /* where relative snapshot paths start */
void alloc_snap_init(void);
int64_t alloc_snap_now(clockid_t clock);
alloc_snap_t *alloc_snap_capture(bool with_map, const char *trigger);
/* With the map and its leak classes (mim), whatever leak_check says. */
alloc_snap_t *alloc_snap_capture_leaks(const char *trigger);
void alloc_snap_free(alloc_snap_t *im);
void alloc_snap_spare_trim(void); /* the service thread: a spare unused for a while goes */
int alloc_snap_path(const char *in, size_t n, const char *base, char *out, size_t len);
int alloc_snap_store_configured(alloc_snap_t *im);
/* At start: says at once that snapshot=PATH cannot be created there. */
void alloc_snap_check_configured(void);
int alloc_snap_take_configured(const char *trigger, bool with_map);
void alloc_sqlite_fork_init(void); /* "alloc_sqlite.c": its fork handlers, first */
void alloc_snap_at_exit(void);     /* once: later calls do nothing */
int alloc_snap_leak_exit_status(void); /* leak_exit_code=N due: N, else 0 */
bool alloc_snap_exit_done(void);
bool alloc_snap_exit_busy(void);

/* "alloc_exit.c": the exit snapshot at _exit/_Exit where it is safe, and
** the tids of meminst's own threads (they do not keep a process alive). */
void alloc_exit_init(void);
void alloc_exit_fast(int status);
/* Death by a signal (trace_death.c): is an exit snapshot due in this
** process (not a vfork child's), and store it from the handler of a thread
** found outside meminst; waits for one another thread has under way. */
bool alloc_exit_own_process(void); /* not a vfork child */
/* A process made by clone without fork is taken as alone (alloc_exit.c):
** false for a child sharing its parent's memory (leave everything as is). */
bool alloc_clone_adopt(void);
void alloc_thread_child_reset(void);   /* alloc_thread.c: the fork child handler */
void alloc_sqlite_child_reset(void);   /* alloc_sqlite.c: after a clone, no prepare ran */
void alloc_service_child_reset(bool relaunch); /* alloc_service.c */
bool alloc_exit_death_wanted(void);
void alloc_exit_at_death(void);
/* The program/meminst boundary: the interposed calls that only pass the
** program's call on (blocking calls, sigwait) and the frames that call
** the program back (thread start, the main thread's end).  A thread
** stopped with one of these as its innermost frame of libmeminst holds
** nothing of meminst's (trace_death.c).  Their own section, never split
** into hot and cold parts. */
#define ALLOC_EDGE __attribute__((section("meminst_edge"), noinline))
void alloc_own_thread_enter(void);
void alloc_own_thread_leave(void);
int alloc_program_threads(pid_t skip);
int alloc_program_threads_each(pid_t skip, void (*fn)(pid_t tid, void *arg), void *arg);

/* "alloc_leak.c": memcheck's leak classes.  prepare before the map is
** held (the loader's lock), scan with it held and the keys sorted. */
bool alloc_leak_prepare(void);
bool alloc_leak_scan(alloc_snap_t *im);
void alloc_exit_main_leaving(void); /* pthread_exit: in the main thread? */
#define ALLOC_SNAP_SORT_COUNTS (6 << 11) /* size_t counts alloc_snap_sort needs */
void alloc_snap_sort(alloc_snap_key_t *keys, size_t n, alloc_snap_key_t *scratch, size_t *counts);

/* "alloc_service.c" */
extern _Atomic int64_t alloc_peak_next; /* a total above it: call alloc_service_peak;
					  it moves the gate's epoch when it changes */
extern _Atomic int64_t alloc_peak_turn; /* a free taking it below: alloc_service_peak_turn */
void alloc_service_start(void);
void alloc_service_peak(int64_t total);
void alloc_service_peak_turn(int64_t total);
void alloc_service_flush(void);
bool alloc_service_running(void);
void alloc_service_stop(void); /* before a seccomp filter that refuses futex */

/* "alloc_sqlite.c" */
/* Store a captured snapshot into the database at path (created 0600, or
** added to).  Returns the snapshot's number, or -1 with one line in err;
** a file that is not a meminst database of this version is left as it was.
** `keep`: snapshot=PATH, whose connection a thread that called
** alloc_sqlite_keep_here keeps open for its next store. */
int alloc_sqlite_store(const char *path, const alloc_snap_t *im, bool keep, char *err, size_t errlen);
void alloc_sqlite_keep_here(void);
/* This thread's stores return ALLOC_SQ_BUSY at once, nothing stored nor
** said, when another process is storing into the file (the service
** thread); other threads wait for their turn, without the store lock. */
void alloc_sqlite_no_wait(bool on);
#define ALLOC_SQ_BUSY (-2)

/* ---------------------------------------------------------------- sys --- */

/*
** A table that grows as numbers are handed out: up to `cap` entries of
** `esize` bytes, in chunks of 2^shift entries, each mapped (zeroed) the
** first time an entry in it is wanted and never unmapped, so a pointer to
** an entry stays good and readers need no lock.  Only the directory, a few
** KiB, is reserved at start: the address space a program sees taken at
** start stays small (meminst(7)).
*/
#define ALLOC_TABLE_DIR_MAX 512
typedef struct alloc_table_s {
	const char *what;   /* for the warning when a chunk cannot be mapped */
	size_t esize;
	uint32_t cap;
	unsigned shift;
	_Atomic int lock;
	char *_Atomic dir[ALLOC_TABLE_DIR_MAX];
} alloc_table_t;
#define ALLOC_TABLE(what_, type_, cap_, shift_) \
	{ .what = (what_), .esize = sizeof(type_), .cap = (cap_), .shift = (shift_) }

/* The entry of number i, or NULL if its chunk was never mapped (a number
** that was never handed out). */
static inline void *alloc_table_at(alloc_table_t *t, uint32_t i)
{
	if (i >= t->cap)
		return NULL;
	char *c = atomic_load_explicit(&t->dir[i >> t->shift], memory_order_acquire);
	return c ? c + (size_t)(i & ((1u << t->shift) - 1)) * t->esize : NULL;
}

/* "alloc_sys.c" */
/* Map the chunk of entry i unless it is there: false when it cannot be
** mapped (the caller falls back on an overflow number and warns, once). */
bool alloc_table_ensure(alloc_table_t *t, uint32_t i);
void alloc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void alloc_log_noted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int alloc_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int alloc_vfmt(char *buf, size_t len, const char *fmt, __builtin_va_list ap);
const char *alloc_getenv(const char *name);
bool alloc_readable(const void *p, size_t n);
void alloc_sys_pid_refresh(void);   /* after fork */
pid_t alloc_sys_pid(void);          /* cached; 0 when getpid was refused */
/* A descriptor of meminst's and the file it was opened on (fstat's device
** and inode), checked before each write: the program may have put a file
** of its own on the number. */
typedef struct alloc_fdid_s {
	int fd;
	dev_t dev;
	ino_t ino;
} alloc_fdid_t;
bool alloc_fdid_take(alloc_fdid_t *id, int fd);
bool alloc_fdid_same(const alloc_fdid_t *id);
void alloc_sys_err_init(void); /* the constructor: stderr as it is now */
void alloc_sys_err_retake(void); /* forget it and take it again */
int alloc_sys_err_fd(void);    /* 2, the copy of the start's stderr, or -1 */
/* The notes file beside the snapshot (alloc_snapshot.c; weak: the options
** fuzzer links alloc_sys.c alone). */
void alloc_snap_note(const char *line, size_t n) __attribute__((weak));

/* System calls a seccomp filter refuses or kills on (alloc_seccomp.c sets
** them when the program installs one; alloc_sys.c holds the set). */
enum {
	ALLOC_SC_WRITE = 1u << 0,    /* messages, print= tables */
	ALLOC_SC_FSTAT = 1u << 1,    /* descriptor checks */
	ALLOC_SC_GETPID = 1u << 2,   /* %p, the snapshot's pid */
	ALLOC_SC_VM_READV = 1u << 3, /* alloc_readable */
	ALLOC_SC_MINCORE = 1u << 4,
	ALLOC_SC_SNAPSHOT = 1u << 5, /* storing snapshots (SQLite's calls) */
	ALLOC_SC_SYMBOLISE = 1u << 6, /* print=types: the helper process */
	ALLOC_SC_TRACE = 1u << 7,    /* trace file, sampling timers */
	ALLOC_SC_THREADS = 1u << 8,  /* meminst's threads beside the program's */
};
extern _Atomic unsigned alloc_sc_refused;
/* "alloc_seccomp.c" */
void alloc_seccomp_init(void); /* the constructor: a filter from the start */
void alloc_seccomp_before(unsigned long mode, const void *prog, bool by_prctl);
long alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
static inline bool alloc_seccomp_refuses(unsigned what)
{
	return unlikely(atomic_load_explicit(&alloc_sc_refused, memory_order_relaxed) & what);
}
void *alloc_sys_map(size_t size);      /* zeroed pages, never the user heap */
void *alloc_sys_map_populated(size_t size);
void alloc_sys_unmap(void *p, size_t size);
void *alloc_sys_remap(void *p, size_t old, size_t size);
void alloc_sys_populate(void *p, size_t size);
pid_t alloc_sys_gettid(void);
bool alloc_sys_random(void *buf, size_t n); /* getrandom(2), never blocks */
/* All of s on fd; fd ALLOC_FD_STDERR: on meminst's stderr, looked up
** (alloc_sys_err_fd) at each call, nothing when there is none. */
void alloc_sys_write(int fd, const char *s, size_t n);
#define ALLOC_FD_STDERR (-2)
bool alloc_sys_locate(uintptr_t addr, uintptr_t *base, uintptr_t *bias, char *path, size_t plen, char *descr,
		      size_t dlen);
void alloc_sys_describe(uintptr_t addr, char *buf, size_t len); /* dladdr, guarded */
bool alloc_sys_thread_comm(pid_t tid, char *buf, size_t len);
struct dl_phdr_info;
size_t alloc_sys_build_id(const struct dl_phdr_info *info, unsigned char *out, size_t cap);
void alloc_sys_build_id_hex(const struct dl_phdr_info *info, char *out, size_t len);
void alloc_sys_exe_path(char *path, size_t len);
void alloc_sys_module_path(const struct dl_phdr_info *info, char *path, size_t len);
void alloc_sys_loader_counts(unsigned long long *adds, unsigned long long *subs);
int alloc_sys_read_file(const char *path, char *buf, size_t len);
void alloc_sys_exit(int status) __attribute__((noreturn));
int alloc_sys_own_fd_table(const int *keep, unsigned nkeep); /* meminst's threads */
int alloc_sys_fd_high(int fd); /* a descriptor of ours, out of the program's way */
/* Every signal blocked (the old mask kept), and the old mask back: around
** code that holds a lock a signal handler's malloc or free would wait on,
** where nothing (`counting`, the guard) tells the handler so. */
/* glibc's own sigaction, under the name meminst interposes
** (trace_sigwrap.c): the action as the kernel has it. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
	__attribute__((visibility("default")));
void alloc_sys_signals_off(sigset_t *old);
void alloc_sys_signals_on(const sigset_t *old);

#pragma GCC visibility pop

#endif /* ALLOC_INT_H */
