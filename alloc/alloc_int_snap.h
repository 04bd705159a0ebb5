/*
** alloc_int_snap.h — a section of alloc_int.h: snapshots, the image a
** capture fills (alloc_snapshot.c) and the store that writes it with the
** private SQLite (alloc_sqlite.c).
**
** A file of its own so that alloc_int.h stays within the size guide; the
** snapshot path is cold and read apart from the allocation path.
** alloc_int.h includes it in place (inside its hidden-visibility region, in
** the order of the sections): include alloc_int.h, never this.  The lock
** order and the signal-handler rules are in alloc_int.h's head comment.
*/
#ifndef ALLOC_INT_SNAP_H
#define ALLOC_INT_SNAP_H
#ifndef ALLOC_INT_H
#error "include alloc_int.h, which includes this file"
#endif

/* ----------------------------------------------------------- snapshots -- */

/*
** A captured block in full: a 32-byte record.  A capture of a running
** program keeps most blocks in 16 bytes (alloc_snap_rec16_t) and the
** others in these (its escapes); with too many escapes, all of them
** (im->wide).  The exit snapshot and the leak checks capture in about 9 B
** a block instead (alloc_snap_compact.c: im->compact, chunks).
*/
typedef struct alloc_snap_rec_s {
	uint64_t addr, size, seq;
	uint32_t type;
	uint32_t thread : 24, allocator : 8;
} alloc_snap_rec_t;

/*
** A block in 16 bytes, copied under the map's locks in list order and
** sorted after (alloc_snap_sort.c), in place: no second buffer, no index.
**   w0: addr << 16 | size            addr 16-aligned below 2^48, size < 2^20
**   w1: seq | type << 36 | thread << 53 | allocator << 60
**       seq < 2^36, type < 2^17, thread < 2^7
** A block whose fields do not fit is an escape: w1 = ALLOC_REC16_ESCAPE |
** i, its full record im->recs[i] (w0 unused).  Packing costs a few shifts,
** no more than the 32-byte copy: the program's pause stays the copy.
*/
typedef struct alloc_snap_rec16_s {
	uint64_t w0, w1;
} alloc_snap_rec16_t;
#define ALLOC_REC16_ESCAPE (1ull << 63)

/* Pack into *r, or false when a field does not fit (one test for all:
** the copy under the locks does this for every block). */
#define ALLOC_REC16_META_OVER ((uint64_t)(ALLOC_TYPE_MAX & ~0x1ffffu) | (uint64_t)(ALLOC_THREAD_MAX & ~0x7fu) << 20)
static inline bool alloc_snap_rec16_pack(alloc_snap_rec16_t *r, uint64_t addr, uint64_t size, uint64_t meta,
					 uint64_t seq)
{
	if ((addr & 15) | (addr >> 48) | (size >> 20) | (seq >> 36) | (meta & ALLOC_REC16_META_OVER))
		return false;
	r->w0 = addr << 16 | size;
	r->w1 = seq | (meta & 0x1ffff) << 36 | (meta >> 20 & 0x7f) << 53 | (meta >> 39 & 7) << 60;
	return true;
}

static inline uint64_t alloc_snap_rec16_addr(const alloc_snap_rec16_t *r, const alloc_snap_rec_t *esc)
{
	return r->w1 & ALLOC_REC16_ESCAPE ? esc[r->w1 & ~ALLOC_REC16_ESCAPE].addr : r->w0 >> 20 << 4;
}

static inline void alloc_snap_rec16_get(const alloc_snap_rec16_t *r, const alloc_snap_rec_t *esc,
					alloc_snap_rec_t *out)
{
	if (r->w1 & ALLOC_REC16_ESCAPE) {
		*out = esc[r->w1 & ~ALLOC_REC16_ESCAPE];
		return;
	}
	*out = (alloc_snap_rec_t){.addr = r->w0 >> 20 << 4, .size = r->w0 & 0xfffff, .seq = r->w1 & ((1ull << 36) - 1),
				  .type = (uint32_t)(r->w1 >> 36) & 0x1ffff, .thread = (uint32_t)(r->w1 >> 53) & 0x7f,
				  .allocator = (uint32_t)(r->w1 >> 60) & 7};
}

/* A block's leak class (memcheck's), as stored in leak_block.class. */
enum { ALLOC_LEAK_REACHABLE = 0, ALLOC_LEAK_DEFINITE = 1, ALLOC_LEAK_INDIRECT = 2,
       ALLOC_LEAK_POSSIBLE = 3, ALLOC_LEAK_CLASSES = 4 };
typedef struct alloc_leak_sum_s {
	uint64_t bytes[ALLOC_LEAK_CLASSES], blocks[ALLOC_LEAK_CLASSES];
	uint64_t scanned_bytes;            /* roots and blocks read */
	uint32_t threads, threads_unstopped; /* unstopped: stack pointer only */
	int64_t scan_ns, scan_cpu_ns;      /* wall; CPU of the scanning thread */
} alloc_leak_sum_t;

/* A definitely lost block with the indirectly lost blocks hanging from it
** (its clique: memcheck's "(D direct, I indirect)"). */
typedef struct alloc_leak_root_s {
	uint32_t key;    /* recs[key] is the definitely lost block */
	uint32_t blocks; /* indirectly lost blocks and their bytes */
	uint64_t bytes;
} alloc_leak_root_t;

/* One captured snapshot, in mmap'd memory (see alloc_snapshot.c). */
typedef struct alloc_snap_s {
	bool with_map;
	bool durable;        /* stored with fsync (snapshot_at=rss:, cgroup:) */
	const char *trigger; /* api exit signal interval peak control rss cgroup */
	pid_t pid, ppid;
	int64_t time_ns, elapsed_ns, pause_ns;
	uint64_t seq, bytes;
	/* the blocks, in capture order until sorted: rec16 and the escapes'
	** full records in recs (nesc of esc_room), or with `wide` all in recs */
	alloc_snap_rec16_t *rec16;
	alloc_snap_rec_t *recs;
	size_t nesc, esc_room;
	bool wide;                        /* this capture in 32-byte records */
	bool widen;                       /* escapes overflowed: the next try wide */
	/* A compact capture (alloc_snap_compact.c: exit and leak checks) has
	** no recs: the blocks are encoded as block_chunk stores them. */
	bool compact;
	/* A capture of a running program larger than alloc_snap_spill_run
	** blocks goes to a temporary file in runs of that many 16-byte records
	** (alloc_snap_spill.c); rec16 is then a window of the merged runs:
	** blocks [win_first, win_first + win_n), see alloc_snap_window. */
	int spill_fd;                     /* the file + 1; 0: none */
	char spill_path[4096];            /* its name (alloc_snap_spill.c) */
	pid_t spill_pid;                  /* the process that made it */
	size_t spill_runs, spill_run;     /* runs written, records in each */
	size_t win_first, win_n;
	void *merge_map;                  /* the merge's runs, heap and buffers */
	size_t merge_bytes;
	unsigned char *chunks;            /* alloc_snap_chunk_t, each with its bytes */
	size_t chunks_used, chunks_bytes;
	size_t *counts;                   /* the sort's digit counts */
	size_t nblocks, room;             /* blocks captured, room for them */
	void *blocks_map;                 /* one mapping holds both */
	size_t blocks_bytes;
	void *esc_map;                    /* the escapes' room (recs with rec16) */
	size_t esc_bytes;
	struct meminst_status_info *status[ALLOC_K_COUNT];
	struct meminst_events *events[ALLOC_K_COUNT]; /* in status[k]'s mapping, after it */
	uint32_t nstatus[ALLOC_K_COUNT];
	size_t status_bytes[ALLOC_K_COUNT];
	bool sorted;                      /* recs already in address order */
	bool unique;                      /* … and each address once (alloc_snap_sort_unique) */
	bool leak_done;                   /* leak_class and leak are filled */
	uint8_t *leak_class;              /* ALLOC_LEAK_* of the i-th block by address */
	size_t leak_class_bytes;
	alloc_leak_root_t *leak_roots;    /* the lost blocks with a clique */
	size_t nleak_roots, leak_roots_bytes;
	alloc_leak_sum_t leak;
	uint64_t (*hist)[ALLOC_HIST_BUCKETS]; /* types' size histograms */
	size_t hist_bytes;
	void *stat_scratch;               /* alloc_stat_read_in's */
	size_t stat_scratch_bytes;
} alloc_snap_t;

/* "alloc_snapshot.c" */
extern char alloc_snap_cwd[4096]; /* where relative snapshot paths start */
void alloc_snap_init(void);
int64_t alloc_snap_now(clockid_t clock);
alloc_snap_t *alloc_snap_capture(bool with_map, const char *trigger);
/* The same for the database at `db` (its directory holds a capture's
** temporary file), NULL: snapshot=PATH's.  NULL with errno ENOMEM, or EIO
** when its temporary file could not be written (said in one line). */
alloc_snap_t *alloc_snap_capture_to(bool with_map, const char *trigger, const char *db);
/* *map of *have bytes made at least `want`: a populated one grown in place
** (a spare's pages are there: only the new ones fault in), else mapped
** anew.  False when out of memory (*map then NULL). */
bool alloc_snap_area(void **map, size_t *have, size_t want, bool populated);
/* With the map and its leak classes (mim), whatever leak_check says. */
alloc_snap_t *alloc_snap_capture_leaks(const char *trigger);
void alloc_snap_free(alloc_snap_t *im);
void alloc_snap_spare_trim(void); /* the service thread: a spare unused for a while goes */
/* "alloc_snap_store.c" */
int alloc_snap_path(const char *in, size_t n, const char *base, char *out, size_t len);
/* A capture's temporary file failed: one line, not repeated while the
** next captures fail the same way. */
void alloc_snap_say_failure_errno(const alloc_snap_t *im, int e);
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
/* One turn of a wait on a lock or flag another thread holds: a yield, and
** every 4096th turn (turns counted from 1) alloc_clone_adopt, since in a
** child of a raw clone that thread is gone and only the adoption's reset
** lets go. */
void alloc_clone_yield(unsigned turn);
/* A page the kernel wipes in a copy of the process's memory (fork, clone
** without CLONE_VM; NULL without MADV_WIPEONFORK), set again once the copy
** is taken as its own (a fork's child handlers, alloc_clone_adopt).  Zero:
** a child of a raw clone not yet adopted, where a walk under way in
** another thread at the clone may have left libunwind's locks or the
** loader's held for ever (trace_unwind.c walks nothing until then).  One
** load, no system call. */
extern _Atomic int *alloc_exit_copy_mark;
static inline bool alloc_clone_unadopted(void)
{
	_Atomic int *mark = alloc_exit_copy_mark;
	return mark && !atomic_load_explicit(mark, memory_order_relaxed);
}
void alloc_exit_postfork_child(void);
/* Copied by a raw clone during a stack walk: no snapshot, no walk, nothing
** at exit that lists the modules (the loader's lock may be held for ever). */
bool alloc_clone_walked(void);
void alloc_thread_child_reset(void);   /* alloc_thread.c: the fork child handler */
void alloc_sqlite_child_reset(void);   /* alloc_sqlite.c: after a clone, no prepare ran */
bool alloc_sqlite_exec_begin(void);    /* before an exec: a store under way waited for */
void alloc_sqlite_exec_end(bool held); /* after a failed exec: stores go on */
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
/* meminst's own threads: each is made by alloc_own_thread_create (with
** the pthread_create given: libc's, or ours for one that is traced as
** internal) and says alloc_own_thread_enter first thing when it runs.
** EPERM, nothing said, when a seccomp filter refuses what it would do
** (alloc_own_threads_refused: the filter's line said it). */
typedef int alloc_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int alloc_own_thread_create(alloc_create_fn *create, pthread_t *th, const pthread_attr_t *attr,
			    void *(*start)(void *), void *arg);
void alloc_own_thread_enter(void);
void alloc_own_thread_leave(void);
/* libc's pthread_create, for threads never traced (trace_write.c) */
alloc_create_fn *trace_real_pthread_create(void);
int alloc_program_threads(pid_t skip);
int alloc_program_threads_each(pid_t skip, void (*fn)(pid_t tid, void *arg), void *arg);
/* The program's main thread ended by the exit system call and no thread
** of the program is left: end the process with its status (the rechecks
** of the service thread and the wall-clock probe); returns while the
** program runs. */
void alloc_exit_if_program_gone(void);
/* The main thread calls syscall(SYS_exit, status): the last of the program? */
void alloc_exit_main_raw(int status);
/* End the process as _exit does (the trace's tail, the exit snapshot);
** `own`: called by a thread of meminst's. */
void alloc_exit_end(int status, bool own) __attribute__((noreturn));
/* Wait until a thread of ours that is ending has left the kernel (<= 2 s). */
void alloc_own_thread_wait_gone(pid_t tid);

/* One chunk of a compact capture: `count` blocks from `first`, encoded in
** the `len` bytes after it (<meminst-snapshot.h>); the next chunk starts
** at the next multiple of 8. */
typedef struct alloc_snap_chunk_s {
	uint64_t first;
	uint32_t count, len;
} alloc_snap_chunk_t;

/* "alloc_snap_compact.c": a capture in about 9 B a block (issue 29).
** Under the map's locks: the blocks' addresses, sorted, each once; the
** leak scan (with `leaks`) on them; then every block encoded. */
bool alloc_snap_compact_reserve(alloc_snap_t *im, size_t room);
int alloc_snap_compact_copy(alloc_snap_t *im, bool leaks); /* 1, 0: no room, -1 */
void alloc_snap_compact_unmap(alloc_snap_t *im);
/* The next chunk after `at` (NULL: the first), or NULL after the last. */
const alloc_snap_chunk_t *alloc_snap_chunk_next(const alloc_snap_t *im, const alloc_snap_chunk_t *at);
/* The addresses of chunk c's blocks, one by one: start, then count times
** alloc_snap_chunk_addr (no array: a store may run on a signal's stack). */
typedef struct alloc_snap_cursor_s {
	const unsigned char *p;
	uint64_t addr;
} alloc_snap_cursor_t;
void alloc_snap_chunk_start(const alloc_snap_chunk_t *c, alloc_snap_cursor_t *cur);
uint64_t alloc_snap_chunk_addr(alloc_snap_cursor_t *cur);

/* "alloc_leak.c": memcheck's leak classes.  prepare before the map is
** held (the loader's lock), scan with it held: addr[0..n-1] the blocks'
** addresses, sorted, each once; their sizes are read from their headers. */
bool alloc_leak_prepare(void);
bool alloc_leak_scan(alloc_snap_t *im, const uint64_t *addr, size_t n);

/* "alloc_leak_stop.c": the program's other threads stopped for the scan.
** prepare (before the map is held: the slots mapped once, the handler
** installed; false when either failed), then stop (buf: 4 KiB of scratch,
** sum->threads and threads_unstopped set), the slots read, resume. */
typedef struct alloc_leak_thread_s { /* one stopped (or looked-at) thread; written by its handler */
	_Atomic pid_t tid;
	_Atomic int state; /* 0 none, 1 signalled, 2 parked, 3 left, 4 not signalled */
	uintptr_t sp, tp;
	uintptr_t regs[NGREG];
	unsigned nregs;
} alloc_leak_thread_t;
bool alloc_leak_stop_prepare(void);
void alloc_leak_stop(char *buf, alloc_leak_sum_t *sum);
const alloc_leak_thread_t *alloc_leak_threads(uint32_t *n); /* *n of them */
void alloc_leak_resume(void);

/* "alloc_leak_maps.c": the process's mappings, for the leak scan. */
#define ALLOC_LEAK_MAPS_MAX 65536
typedef struct alloc_leak_range_s {
	uintptr_t lo, hi;
} alloc_leak_range_t;
typedef struct alloc_leak_vma_s { /* a writable anonymous mapping of the program's */
	uintptr_t lo, hi;
	bool stack; /* mapped MAP_STACK (VmFlags nh): a thread's stack */
} alloc_leak_vma_t;
typedef struct alloc_leak_maps_s {
	alloc_leak_range_t *maps; /* every mapping, by address (ALLOC_LEAK_MAPS_MAX) */
	size_t nmaps;
	alloc_leak_vma_t *anon;   /* the program's anonymous ones (as many)        */
	size_t nanon;
	bool anon_ok;             /* meminst's own mappings read as VmFlags nr    */
} alloc_leak_maps_t;
/* buf: size bytes to read with, one of meminst's mappings (alloc_sys_map). */
void alloc_leak_read_maps(alloc_leak_maps_t *m, char *buf, size_t size);
uintptr_t alloc_leak_map_end(const alloc_leak_maps_t *m, uintptr_t a);
void alloc_exit_main_leaving(void); /* pthread_exit: in the main thread? */
#define ALLOC_SNAP_SORT_COUNTS (8 * 512) /* size_t counts alloc_snap_sort needs */
void alloc_snap_sort(alloc_snap_rec_t *recs, size_t n, size_t *counts);
/* The i-th captured block, whatever its form (not a compact capture's);
** a spilled one's after alloc_snap_window(im, i, n) said it is there. */
static inline void alloc_snap_rec_at(const alloc_snap_t *im, size_t i, alloc_snap_rec_t *out)
{
	if (im->wide)
		*out = im->recs[i];
	else
		alloc_snap_rec16_get(&im->rec16[i - im->win_first], im->recs, out);
}
void alloc_snap_sort_addrs(uint64_t *addr, size_t n, size_t *counts);
void alloc_snap_sort_rec16(alloc_snap_rec16_t *r, size_t n, size_t *counts, const alloc_snap_rec_t *esc);
/* The records sorted, a block listed twice (a raw clone's copy of a map
** half-way through a move) once; before the store writes the totals. */
bool alloc_snap_sort_unique(alloc_snap_t *im); /* false: a spilled one's file (errno) */

/* "alloc_snap_spill.c": a capture in bounded memory (issue 29). */
extern size_t alloc_snap_spill_run; /* records a run: 64 KiB of them (tests: fewer) */
/* Before the locks: the temporary file in db's directory, named (see
** alloc_snap_spill.c); false: none (the capture stays in memory). */
bool alloc_snap_spill_open(alloc_snap_t *im, const char *db);
void alloc_snap_spill_close(alloc_snap_t *im); /* the descriptor, or the name */
/* After the copy (the locks let go): the capturing thread's descriptor
** closed (the storing thread may have a table of its own). */
void alloc_snap_spill_captured(alloc_snap_t *im);
void alloc_snap_spill_detach(alloc_snap_t *im); /* the storing thread, its store done */
/* Under the locks: rec16[0..n) as the next run; false with errno. */
bool alloc_snap_spill_write(alloc_snap_t *im, size_t n);
/* The storing thread: each run sorted, the duplicates counted (false
** with errno when the file fails). */
bool alloc_snap_spill_sort(alloc_snap_t *im);
/* Blocks [i, i + n) (n <= spill_run) readable with alloc_snap_rec_at;
** reads go forward (going back starts the merge again).  True at once
** for a capture in memory; false with errno when the file fails. */
bool alloc_snap_window(alloc_snap_t *im, size_t i, size_t n);

/* "alloc_service_peak.c": the peak trigger; the service thread stores
** what it captures.  arm: armed once the total passes the larger of 1 MiB
** and stored + peak_growth percent; off while the thread ends; forget in a
** child of fork; the image waiting to be stored taken, looked at, or kept
** for the file's next turn (false: a newer one is there). */
extern _Atomic int64_t alloc_peak_next; /* a total above it: call alloc_service_peak;
					  it moves the gate's epoch when it changes */
extern _Atomic int64_t alloc_peak_turn; /* a free taking it below: alloc_service_peak_turn */
void alloc_service_peak(int64_t total);
void alloc_service_peak_turn(int64_t total);
void alloc_service_peak_arm(int64_t stored);
void alloc_service_peak_off(void);
void alloc_service_peak_forget(void);
alloc_snap_t *alloc_service_peak_take(void);
bool alloc_service_peak_pending(void);
bool alloc_service_peak_keep(alloc_snap_t *im);

/* "alloc_service.c" */
void alloc_service_start(void);
void alloc_service_flush(void);
bool alloc_service_running(void);
bool alloc_service_own_table(void); /* its descriptor table is its own */
void alloc_service_stop(void); /* before a seccomp filter that refuses futex */
/* unshare or setns refused (EINVAL) while the thread runs: calls it again
** with the thread ended, then starts the thread again (alloc_hooks.c) */
long alloc_service_single_threaded(long (*call)(long, long), long a, long b);
/* the program counts its threads (a sandbox's look): ours end for good */
void alloc_service_alone(void);
void alloc_service_wake(char c); /* async-signal-safe: one byte to its pipe */
void alloc_service_signal_note(_Atomic bool *pending, char c); /* a handler's: flag, then wake */
void alloc_service_hold(void);    /* what a store holds, for a control request */
void alloc_service_release(void);

/* "alloc_control.c": the control channel's connections (served by the
** service thread, from its poll loop) */
#define ALLOC_CONTROL_CONN_MAX 8
int alloc_control_open(void); /* the listening socket, or -1 (said) */
void alloc_control_accept(int listen_fd);
int alloc_control_fd(int i);
void alloc_control_ready(int i, bool ours);
int alloc_control_expire(int timeout); /* the poll timeout to the next deadline */
void alloc_control_forget(bool close_them);

/* "alloc_watch.c": snapshot_at=rss:LIMIT, cgroup:LIMIT, looked at by the
** service thread every ALLOC_WATCH_PERIOD_MS, never on the allocation
** path; the limits a percentage is of, every ALLOC_WATCH_LIMIT_MS. */
#define ALLOC_WATCH_PERIOD_MS 10
#define ALLOC_WATCH_LIMIT_MS 1000
void alloc_watch_init(void);
unsigned alloc_watch_check(void);          /* the triggers due, a bit set */
const char *alloc_watch_trigger(unsigned due); /* "rss" or "cgroup" */
void alloc_watch_stored(unsigned due);
int alloc_watch_period_ms(void);           /* until the next check */
/* The memory cgroup's folders from the text of /proc/PID/cgroup (changed
** in place) under the mount root (/sys/fs/cgroup): v1's memory folder,
** else v2's where memory.current is; "" each when none. */
void alloc_watch_cgroup_dirs(char *text, const char *root, char *v1, size_t n1, char *v2, size_t n2);
/* Its lowest limit, 0 none: v1 memory.stat's hierarchical_memory_limit
** (else memory.limit_in_bytes); v2 the lowest memory.max or memory.high
** of the folder and its parents below root. */
uint64_t alloc_watch_cgroup_limit(const char *v1, const char *v2, const char *root);
/* Its usage file (v1 memory.usage_in_bytes, v2 memory.current) in f;
** false when the process is in no memory cgroup. */
bool alloc_watch_usage_file(const char *v1, const char *v2, char *f, size_t n);

/* "alloc_sqlite.c" */
/* Store a captured snapshot into the database at path (created 0600, or
** added to).  Returns the snapshot's number, or -1 with one line in err;
** a file that is not a meminst database of this version is left as it was.
** `keep`: snapshot=PATH, whose connection a thread that called
** alloc_sqlite_keep_here keeps open for its next store. */
int alloc_sqlite_store(const char *path, alloc_snap_t *im, bool keep, char *err, size_t errlen);
void alloc_sqlite_keep_here(void);
void alloc_sqlite_kept_release(void); /* the keeping thread ends: close it there */
/* This thread's stores return ALLOC_SQ_BUSY at once, nothing stored nor
** said, when another process is storing into the file (the service
** thread); other threads wait for their turn, without the store lock. */
void alloc_sqlite_no_wait(bool on);
#define ALLOC_SQ_BUSY (-2)

#endif /* ALLOC_INT_SNAP_H */
