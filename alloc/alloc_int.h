/*
** alloc_int.h — internal interfaces of libmeminst's allocation layer.
**
** The layer is split by concern; prototypes below are grouped under the
** file that defines them.  Three sections live in headers of their own,
** included in place below (never include them directly):
** alloc_int_map.h (the map of live blocks), alloc_int_snap.h (snapshots)
** and alloc_int_sys.h (the OS layer).  The lock order and the rules for
** signal handlers stay here, in one place.
**
**   alloc_hooks.c    the exported libc and C++ names; thin, no policy
**   alloc_core.c     block life cycle: header, accounting, map, free checks
**   alloc_start.c    start-up: MEMINST, backend, mode, tables (alloc_init)
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
**   alloc_map.c      mim mode: per-thread bitmaps of live blocks
**   alloc_options.c  the MEMINST parser (pure, unit tested)
**   alloc_sys.c      OS layer: log without malloc, environ, safe reads
**   alloc_api.c      the public meminst_* functions
**   alloc_snapshot.c   capturing snapshots (the map as 16-byte records)
**   alloc_snap_sort.c  those records sorted by address after the pause
**   alloc_snap_compact.c  the map in a few bytes a block (exit, leak checks)
**   alloc_sqlite.c   storing snapshots with meminst's private SQLite
**                    (libsqlite3.a linked in, names hidden); the rows of
**                    each table: alloc_sqlite_rows.c (alloc_sqlite_int.h)
**   alloc_seccomp.c  seccomp filters evaluated before they take effect
**   alloc_region.c   the program's mappings (mmap, munmap, mremap) with sites,
**                    counted in allocator mmap
**
** C-preprocessor macro summary
**   ALLOC_DEBUG        0 = no checks, 1 = cheap asserts, 2 = expensive ones
**   ALLOC_TLS_MODEL    tls_model("initial-exec") unless configured off
**   HAVE_JEMALLOC      backend=jemalloc available (loaded at run time)
**   ALLOC_FLOOR        measuring only (bench/churn.sh --floors), never for
**                      use: mis's fast pair without the header check (2),
**                      without the check and the counting too (1), with
**                      the check and counting but no events in (3), or
**                      the total's slot alone counted (4); 5 + N: floor
**                      1 with 10 x N register adds each way (alloc_fast.c)
**
** Lock order (take left before right; the hot path holds at most one):
**   map set lock < orphan list < thread lists (by number) < tag table
**   lock < thread registry lock
** and, apart, the region table's spin lock (alloc_region.c), a leaf:
** nothing is taken while it is held, and fork's prepare takes it last.
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
**
** Signal handlers may allocate and free anywhere.  So a thread never waits,
** in a handler, on a lock it holds outside it: code of ours that takes a
** lock a hook may want runs inside the recursion guard (alloc_guard_enter:
** a handler's blocks then get a header only, untracked), the core's
** counting raises `counting` (a handler's allocations are untracked, its
** frees of tracked blocks deferred to core_leave: alloc_core.c), and where
** neither tells the handler, signals are blocked (alloc_sys_signals_off).
*/
#ifndef ALLOC_INT_H
#define ALLOC_INT_H

#include "config.h"

#ifndef ALLOC_FLOOR
#define ALLOC_FLOOR 0
#endif

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

/* interval=auto: the first period, the snapshots taken at each period
** before it doubles, and the longest (meminst(7)): 0.3 s of run get ~23
** points, 10 s ~96, 3 h ~1,200 (each ~1 ms of the service thread's CPU). */
#define ALLOC_INTERVAL_AUTO_FIRST_NS 10000000ull
#define ALLOC_INTERVAL_AUTO_STEP 16
#define ALLOC_INTERVAL_AUTO_MAX_NS 10000000000ull

/* One parsed MEMINST value.  Strings point into the environment (in place). */
typedef struct alloc_options_s {
	enum meminst_mode mode;
	int backend;            /* ALLOC_BACKEND_*                          */
	const char *snapshot;   /* snapshot=PATH (not yet supported)        */
	size_t snapshot_len;
	unsigned snapshot_at;   /* bit set of ALLOC_SNAP_*                  */
	bool snapshot_at_given; /* snapshot_at= present (else exit, if a path) */
	uint8_t watch_rss_pct, watch_cgroup_pct; /* snapshot_at=rss:N%, cgroup:N% */
	uint64_t watch_rss_bytes, watch_cgroup_bytes; /* rss:SIZE, cgroup:SIZE */
	uint64_t interval_ns;   /* interval=DURATION; auto: the first period */
	bool interval_auto;     /* interval=auto: the period doubles, below */
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
	int switch_signal;      /* switch_signal=: dormant's on/off toggle; 0 none */
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
enum { ALLOC_SNAP_EXIT = 1, ALLOC_SNAP_PEAK = 2, ALLOC_SNAP_SIGNAL = 4, ALLOC_SNAP_RSS = 8,
       ALLOC_SNAP_CGROUP = 16 };
#define ALLOC_SNAP_WATCH (ALLOC_SNAP_RSS | ALLOC_SNAP_CGROUP)

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
** mim: in front of the mis header, the number of the list whose map holds
** the block (see alloc_map.c) and its allocation number, in full.
*/
typedef struct alloc_mhdr_s {
	uint64_t at;  /* list number << 32 (the low half is 0) */
	uint64_t seq; /* allocation number */
	alloc_hdr_t h;
} alloc_mhdr_t;

static inline uint32_t alloc_at_list(uint64_t at) { return (uint32_t)(at >> 32); }

/* mim: a leaf of a list's map, a page of the heap: a bit for each 16 bytes,
** set where a live block's header starts (see the map section below). */
#define ALLOC_LEAF_SHIFT 12
#define ALLOC_LEAF_BLOCKS ((1u << ALLOC_LEAF_SHIFT) / 16)
#define ALLOC_LEAF_WORDS (ALLOC_LEAF_BLOCKS / 64)
typedef struct alloc_leaf_s {
	uint64_t page; /* address >> ALLOC_LEAF_SHIFT; 0: an empty entry */
	uint64_t bits[ALLOC_LEAF_WORDS];
} alloc_leaf_t;

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
	uintptr_t last_base; /* the leaf used last, its page's address (0:
				none) ...                                  */
	uint64_t *last_bits; /* ... and its bits                              */
	size_t count;       /* blocks in the map                              */
	size_t low;         /* a count that rebuilds the directory smaller    */
	alloc_leaf_t *dir;  /* the leaves by page, open addressing; mapped,
			       never in the user heap (NULL: none yet)        */
	uint32_t dir_mask;  /* entries - 1                                    */
	uint32_t dir_used;  /* entries with a page (some may be empty)        */
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
	ALLOC_A_COUNT /* the allocators of blocks (3 bits of the header) */
};
/* The program's mappings (alloc_region.c): an allocator of the status
** tables only, after the blocks' ones.  No block carries it and no slot
** counts it: its entry is changed directly (alloc_stat_region). */
#define ALLOC_A_MMAP ALLOC_A_COUNT
#define ALLOC_A_ALL (ALLOC_A_COUNT + 1)

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
/* Entries [0, cap) of out and ev (either may be NULL: not wanted). */
void alloc_stat_read(unsigned kind, uint32_t n, struct meminst_status_info *out, struct meminst_events *ev,
		     uint32_t cap, bool reset);
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

/* A backend call (alloc_real.X(...)) of the general path.  While exact tracing times an allocator
** call (alloc_hooks.c's timed twins), the backend's own time inside it is added up, so that the
** trace can tell the allocator's time from meminst's around it (ALLOC_AT's inner).  The fast
** paths (alloc_fast.c) never run while tracing: their calls stay plain. */
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

#include "alloc_int_sys.h" /* the bottom layer: the map's look-ups use its tables */
#include "alloc_int_map.h"

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
       ALLOC_ROUTE_ASAMPLE = 16, /* trace_asample_on: allocation sampling  */
       ALLOC_ROUTE_DRAIN = 32,   /* switched off at run time: new blocks plain,
				    frees checked (alloc_switch.c)          */
       ALLOC_ROUTE_MODES = ALLOC_ROUTE_MIS | ALLOC_ROUTE_MIM | ALLOC_ROUTE_DRAIN };
extern _Atomic unsigned alloc_route;
/*
** New blocks get no header: mode off, dormant, or switched off at run time.
** alloc_mode then says which header the blocks made while on carry (off:
** none was ever made, so frees go straight to the backend).
*/
extern bool alloc_plain;
/* "alloc_switch.c": dormant, then on (MEMINST=off,control=on). */
extern bool alloc_switchable;     /* started dormant: may be switched on    */
extern int64_t alloc_on_since_ns; /* wall clock of the first switch on; 0: on from the start */
void *alloc_switch_realloc_plain(void *p, size_t size, uintptr_t site); /* switched off */
/* The switch signal (switch_signal=): installed by alloc_service_start when
** the program has no action for it; taken and rechecked by the service
** thread.  A control line "start mis|mim[ site_depth=N|user][,sample=HZ]"
** or "stop": 0 done, 1 refused (err says why), -1 not such a line. */
void alloc_switch_signal_install(void);
void alloc_switch_signal_take(void);
void alloc_switch_signal_check(void);
int alloc_switch_request(const char *line, char *err, size_t errlen);
/* CPU profiles on request (inspect serve): the thread that switches the
** sampler, made with the service thread (launch) and ended before a
** seccomp filter (quit); a control line "sample start HZ SECONDS /PATH" or
** "sample stop": 0 done (*fd: the answer's number), 1 refused (err), -1
** not such a line. */
#define ALLOC_SWITCH_PATH_MAX 4096
void alloc_switch_sample_launch(void);
void alloc_switch_sample_quit(void);
int alloc_switch_sample_request(const char *line, char *err, size_t errlen, int *fd);
/* "alloc_core.c": does p carry a live header of ours?  *bytes: its size. */
bool alloc_core_headed(const void *p, size_t *bytes);
/* "alloc_start.c" */
void alloc_route_flag(unsigned flag, bool on);
void alloc_init(void);
/* "alloc_core.c" */
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

#include "alloc_int_snap.h"
#include "alloc_int_region.h"

#pragma GCC visibility pop

#endif /* ALLOC_INT_H */
