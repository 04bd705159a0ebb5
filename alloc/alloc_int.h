/*
** alloc_int.h — internal interfaces of libmeminst's allocation layer.
**
** The layer is split by concern; prototypes below are grouped under the
** file that defines them.  Five sections live in headers of their own,
** included in place below (never include them directly):
** alloc_int_thread.h (counting and the thread record), alloc_int_map.h
** (the map of live blocks), alloc_int_snap.h (snapshots),
** alloc_int_region.h (the program's mappings) and alloc_int_sys.h (the OS
** layer).  The lock order and the rules for signal handlers stay here, in
** one place.
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
**   alloc_snap_store.c  where they go: snapshot=PATH, the API, the exit one
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
** no thread inside libunwind or our dl_iterate_phdr calls (trace_sample.c,
** trace_unwind.c: libunwind's locks and the loader's list lock cannot be
** taken from outside, and glibc does not reset the latter in the child, so
** those calls are held at a gate and the fork waits for those under way;
** the store's own call is covered by the store lock), the snapshot store lock
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

#include <sched.h>
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
	const char *run_dir;    /* run_dir=DIR: the launcher's, shared by the run */
	size_t run_dir_len;
	uint64_t run_pidns;     /* run_pidns=INODE: the launcher's pid namespace */
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
	bool quiet_notes;       /* quiet=on|notes: notes to the notes file  */
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
	uint64_t page; /* address >> ALLOC_LEAF_SHIFT; 0: a list's leaves[0] */
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
	uint32_t *dir;      /* leaf numbers by page, open addressing (0: none);
			       one mapping with the leaves, never in the user
			       heap (an empty static one before the first)    */
	alloc_leaf_t *leaves; /* the leaves, in the order made: leaves[0] has
				 no page (what dir's empty entries name),
				 [1 .. nleaves] pages of the list's blocks
				 (some may be empty)                        */
	uint32_t dir_mask;  /* dir's entries - 1                              */
	uint32_t nleaves;
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
/* The next definition of the libc function name (dlsym RTLD_NEXT), looked
** up once into *fn, errno kept (alloc_hooks.c). */
void *alloc_hooks_real(void **fn, const char *name);
void alloc_replaced_report(unsigned replaced, bool exe, const char *lib);
void *alloc_boot_malloc(size_t size, size_t align);
#define ALLOC_BOOT_ARENA_SIZE (1u << 20)
extern char alloc_boot_arena[ALLOC_BOOT_ARENA_SIZE];
static inline bool alloc_boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)alloc_boot_arena < ALLOC_BOOT_ARENA_SIZE;
}
size_t alloc_boot_size(const void *p);

#include "alloc_int_thread.h" /* status and threads: slots, the thread record, TLS */

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
