/*
** alloc_int_sys.h — a section of alloc_int.h: the OS layer, growing
** tables, logging without malloc, descriptors of our own, seccomp,
** mappings, signals (alloc_sys.c, alloc_seccomp.c).
**
** A file of its own so that alloc_int.h stays within the size guide; it is
** the bottom layer, below every other section.  alloc_int.h includes it in
** place (inside its hidden-visibility region, in the order of the
** sections): include alloc_int.h, never this.  The lock order and the
** signal-handler rules are in alloc_int.h's head comment.
*/
#ifndef ALLOC_INT_SYS_H
#define ALLOC_INT_SYS_H
#ifndef ALLOC_INT_H
#error "include alloc_int.h, which includes this file"
#endif

/* ---------------------------------------------------------------- sys --- */

/*
** A table that grows as numbers are handed out: up to `cap` entries of
** `esize` bytes, in chunks of 2^shift entries, each mapped (zeroed) the
** first time an entry in it is wanted and never unmapped, so a pointer to
** an entry stays good and readers need no lock.  Only the directory, a few
** KiB, is reserved at start: the address space a program sees taken at
** start stays small (meminst(7)).
*/
#define ALLOC_TABLE_DIR_MAX 1024 /* chunks of 1,024 entries: 2^20 types */
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
void alloc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void alloc_log_run(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int alloc_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int alloc_vfmt(char *buf, size_t len, const char *fmt, __builtin_va_list ap);
const char *alloc_getenv(const char *name);
bool alloc_readable(const void *p, size_t n);
void alloc_sys_pid_refresh(void);   /* after fork */
/* "alloc_ids.c": the number of %p and of a snapshot's pid (pid namespaces) */
void alloc_ids_init(void);
void alloc_ids_forget(void);        /* after fork */
int alloc_ids_name(int *ppid);
/* a set*uid call making `to` the effective user: real(a, b, c) made, the
** process's files moved where the new user can make them */
long alloc_ids_switch_user(uid_t to, long (*real)(long, long, long), long a, long b, long c);
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
/* SIGXFSZ blocked around a write of ours; restored, one our write raised
** taken back first, whatever the mask before (alloc_sys.c). */
typedef struct alloc_xfsz_s {
	sigset_t old;     /* the thread's mask before */
	bool was_pending; /* SIGXFSZ pending already, blocked before: not ours */
} alloc_xfsz_t;
void alloc_sys_xfsz_block(alloc_xfsz_t *x);
void alloc_sys_xfsz_restore(const alloc_xfsz_t *x);
int alloc_sys_err_fd(void);    /* 2, the copy of the start's stderr, or -1 */
/* The notes file beside the snapshot (alloc_snap_store.c; weak: the options
** fuzzer links alloc_sys.c alone). */
void alloc_snap_note(const char *line, size_t n) __attribute__((weak));
/* What a line is, and where alloc_snap_route (alloc_snap_store.c, weak as
** above) sends it: said (stderr), said and kept in the notes file (a run
** file's failure under the launcher, which keeps the notes in the
** session), the notes file only, or nowhere. */
enum { ALLOC_LINE_ERROR, ALLOC_LINE_NOTE, ALLOC_LINE_NOTED, ALLOC_LINE_RUN };
enum { ALLOC_ROUTE_SAY, ALLOC_ROUTE_SAY_KEEP, ALLOC_ROUTE_NOTES, ALLOC_ROUTE_NONE };
int alloc_snap_route(int kind, const char *key) __attribute__((weak));

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
	/* a filter that holds the threads made from now on refuses calls
	** meminst's threads make: none is made (alloc_own_thread_create) */
	ALLOC_SC_NEW_THREADS = 1u << 9,
	/* membarrier (biased lists, fork): counting fences itself instead */
	ALLOC_SC_MEMBARRIER = 1u << 10,
	/* a new thread's stack as a region (pthread_getattr_np's calls) */
	ALLOC_SC_THREAD_STACK = 1u << 11,
	/* a thread's own name (prctl PR_GET_NAME) */
	ALLOC_SC_THREAD_NAME = 1u << 12,
	/* a file read by a program's thread: /proc (alloc_sys_read_file), a
	** module's ELF file (alloc_stack.c); refused, as if it were not there */
	ALLOC_SC_OPEN_READ = 1u << 13,
	/* a wait for a lock gives the processor up (alloc_sys_yield) */
	ALLOC_SC_YIELD = 1u << 14,
	/* meminst's files and sockets: a filter meminst could not read fails
	** them with ENOSYS (set only by alloc_seccomp_enosys, which said so) */
	ALLOC_SC_FILES = 1u << 15,
	/* the launcher's store service (alloc_sqlite_link.c): refused, the
	** stores run in the process, nothing said */
	ALLOC_SC_STORE_LINK = 1u << 16,
};
extern _Atomic unsigned alloc_sc_refused;
/* "alloc_seccomp.c" */
void alloc_seccomp_init(void); /* the constructor: a filter from the start */
void alloc_seccomp_before(unsigned long mode, unsigned long flags, const void *prog, bool by_prctl);
/* A call of meminst's failed with err: ENOSYS is a filter's (true: said) */
bool alloc_seccomp_enosys(const char *call, int err);
long alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
static inline bool alloc_seccomp_refuses(unsigned what)
{
	return unlikely(atomic_load_explicit(&alloc_sc_refused, memory_order_relaxed) & what);
}
/* A waiting thread gives the processor up: sched_yield, or, under a
** seccomp filter that refuses it, a pause in the spin (a program's threads
** wait for meminst's locks too: they must not die there). */
static inline void alloc_sys_yield(void)
{
	if (!alloc_seccomp_refuses(ALLOC_SC_YIELD))
		sched_yield();
#if defined(__x86_64__) || defined(__i386__)
	else
		__builtin_ia32_pause();
#endif
}
/* No thread of meminst's may be made (alloc_own_thread_create says EPERM):
** a filter refuses what they would do.  Said when the filter came. */
static inline bool alloc_own_threads_refused(void)
{
	return alloc_seccomp_refuses(ALLOC_SC_THREADS | ALLOC_SC_NEW_THREADS);
}
/* Zeroed pages, never the user heap.  Every mapping of meminst's is made
** MAP_NORESERVE (VmFlags nr), which the leak check takes as not the
** program's (alloc_leak.c): mmap it so, or through these. */
void *alloc_sys_map(size_t size);
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
/* false when not read (a fork under way: trace_loader_iterate) */
bool alloc_sys_loader_counts(unsigned long long *adds, unsigned long long *subs, bool may_wait);
void alloc_sys_loader_counts_storing(unsigned long long *adds, unsigned long long *subs);
struct dl_phdr_info;
int alloc_sys_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
bool alloc_sys_loader_busy(void); /* a thread of ours is inside dl_iterate_phdr */
bool alloc_sys_loader_mine(void); /* this thread is, by alloc_sys_dl_iterate */
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
/* pthread_sigmask for meminst's own critical sections: straight to the
** kernel, never through the program's wrapper (trace_sigwrap.c), which
** stops the thread's sampling timer while SIGPROF is blocked.  Like libc's,
** it never blocks libc's own signals; returns the error, errno untouched. */
int alloc_sys_sigmask(int how, const sigset_t *set, sigset_t *old);
void alloc_sys_signals_off(sigset_t *old);
void alloc_sys_signals_on(const sigset_t *old);

#endif /* ALLOC_INT_SYS_H */
