/*
** trace_unwind.c — stack walks for timer and allocation samples.
**
** Why libunwind and not a frame-pointer walk: Debian builds its programs
** and libraries without frame pointers, so a frame-pointer walk stops (or
** worse, wanders) at the first frame of libc or python3; libunwind follows
** the .eh_frame unwind tables that every x86-64 object carries.
**
** Async-signal safety.  libunwind's local unwinder (UNW_LOCAL_ONLY) does
** not call malloc: its memory comes from mmap, and it finds unwind tables
** through dl_iterate_phdr, whose lock is recursive (a handler interrupting
** the loader in the same thread passes it, but for two windows, which our
** own calls met (bash under sample=1000 hung at its start, one run in
** ten): see loader_lock below).  Its shared caches are guarded
** by locks taken with signals blocked; the per-thread policy we select
** (UNW_CACHE_PER_THREAD) has no lock at all where libunwind was built with
** it (Debian's was not: it keeps the global cache and its lock) — but then a handler must not
** unwind while the same thread is inside libunwind from normal context
** (allocation sampling), or it would update the cache that the interrupted
** walk is halfway through.  unwind_depth tells the handler so, and that
** sample is dropped.
**
** fork.  libunwind's own locks (taken inside unw_step even with the
** per-thread cache, e.g. while it looks up an object's unwind tables)
** cannot be taken from outside, and a child that inherited one held by a
** thread it does not have waited for ever at its first walk (site_depth,
** alloc_sample, the sampler).  The loader's lock over its list of objects
** is the same: dl_iterate_phdr holds it (libunwind's table look-ups, and
** ours: the trace's MODULE check at each flush, site_depth's first sight of
** a module, the unload check), and glibc 2.36's fork resets the loader's
** other locks in the child but not that one: a child made while another
** thread was in dl_iterate_phdr waited for ever at its own first call
** (the site_depth walk of its first allocation, its exit snapshot's
** walk): fork_churn.sh with alloc_sample=, under load.
** So no thread is inside libunwind or our dl_iterate_phdr calls while a
** fork copies the process: every such call counts itself in unwind_inside
** (trace_loader_iterate for dl_iterate_phdr), and fork's prepare handler
** (trace_unwind_prefork, from trace_sample.c's) raises unwind_gate and
** waits for the count to fall to zero.  A walk that finds the gate raised
** counts itself out again; from normal context with no lock of ours held
** (the allocation-site walks) it waits for the fork to end, anywhere else
** (signal handlers, the forking thread itself) it returns no frames: that
** sample keeps its pc only, or is dropped.  The wait is bounded
** (UNWIND_WAIT_YIELDS): a thread inside libunwind may need a lock the
** waiting one holds (the loader's, when dlopen allocates); past the bound
** the allocation's type is its site's alone.  The forking thread's own
** dl_iterate_phdr calls (in later prepare handlers) run: they end before
** the copy.  The store's module list (alloc_sqlite_rows.c) is not counted:
** it runs under the store lock, which a later prepare handler takes, so no
** fork copies the process while it runs (and counted, it would wait at the
** gate while the fork waits for the store).
**
** The handler starts from the signal's ucontext with UNW_INIT_SIGNAL_FRAME
** (on x86-64 unw_context_t is ucontext_t), so frame 0 is the interrupted pc
** and neither the handler nor the kernel's trampoline appear.  Frames after
** the first are return addresses: a symboliser looks up address - 1.
*/
#define UNW_LOCAL_ONLY
#include "trace_sampler.h"
#include "../alloc/alloc_int.h"

#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

static __thread int unwind_depth ALLOC_TLS_MODEL; /* inside libunwind */
static __thread int loader_depth ALLOC_TLS_MODEL; /* counted in unwind_inside */
static __thread bool unwind_forker ALLOC_TLS_MODEL; /* this thread is forking */
/* This thread's trace cache is made (see trace_unwind_warm), and how many
** of its samples were walked carefully without one; unwind_ended: the
** thread is ending (its keys' destructors may have run: a cache made now
** would never be freed). */
static __thread bool unwind_cache_made ALLOC_TLS_MODEL;
static __thread bool unwind_ended ALLOC_TLS_MODEL;
static __thread unsigned unwind_careful ALLOC_TLS_MODEL;
/* libunwind's key for the trace cache is one of glibc's first 32
** (PTHREAD_KEY_2NDLEVEL_SIZE, whose values sit in the thread's descriptor:
** pthread_setspecific then only stores, where past them it may calloc). */
static _Atomic bool unwind_key_low;
#define UNWIND_KEYS_LOW 32
static _Atomic unsigned unwind_inside;  /* walks inside libunwind or dl_iterate_phdr now */
static _Atomic bool unwind_gate;        /* a fork is copying the process */
static _Atomic bool unwind_off;         /* for good: see trace_unwind_clone_child */
#define UNWIND_WAIT_YIELDS 100000       /* a fork's prepare handlers take far less */
static uintptr_t unwind_self_lo, unwind_self_hi; /* our own code, [lo, hi) */
static uintptr_t unwind_lib_lo, unwind_lib_hi;   /* libunwind's */
static uintptr_t unwind_libc_lo, unwind_libc_hi; /* libc's */

bool trace_unwind_busy(void)
{
	return unwind_depth != 0;
}

/*
** The loader's lock over its list of objects (glibc's dl_load_write_lock,
** in ld.so's _rtld_global), which dl_iterate_phdr and dlopen take, is
** recursive: a handler that interrupts its owner gets in again.  But not
** in two windows of glibc's recursive mutex: taken, its owner not yet
** written; its owner cleared, not yet given back.  A handler that
** interrupted its own thread there and called dl_iterate_phdr (libunwind
** does, for an object's unwind tables) waited for ever on its own thread:
** the sqlite3 shell under `meminst --mim` once in 400 runs (the store's
** module list in the service thread, the main thread's site walk), a
** program walking the list in a loop every time.  So the walks look at
** the lock first (unwind_loader_mine).  It is found at start in ld.so's writable data, as the one recursive mutex this
** thread holds twice, from inside two nested dl_iterate_phdr calls (once
** would also match the other loader lock, held when a dlopen runs our
** constructor); not found (another C library, no ld.so), the handlers
** still keep out of our own dl_iterate_phdr calls (loader_depth).
*/
static const volatile pthread_mutex_t *loader_lock;

static int loader_lock_scan(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	uintptr_t base = (uintptr_t)getauxval(AT_BASE);
	if (!base || info->dlpi_addr != base)
		return 0;
	int tid = (int)alloc_sys_gettid();
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t at = (base + ph->p_vaddr + 7) & ~(uintptr_t)7, end = base + ph->p_vaddr + ph->p_memsz;
		for (; at + sizeof(pthread_mutex_t) <= end; at += 8) {
			const pthread_mutex_t *m = (const pthread_mutex_t *)at;
			if (m->__data.__owner == tid && m->__data.__count == 2 && m->__data.__lock != 0 &&
			    (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP) {
				loader_lock = m;
				return 1;
			}
		}
	}
	return 1;
}

static int loader_lock_nest(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	dl_iterate_phdr(loader_lock_scan, NULL);
	return 1;
}

/*
** Whether this thread holds the loader's lock (the program's own
** dl_iterate_phdr or dlopen, a malloc inside them), or, from a handler
** that interrupted pc, may be in either window above.  No walk then, in
** any context: libunwind takes its lock over the unwind rules it has read
** (its global cache: Debian's is built without the per-thread one) before
** it calls dl_iterate_phdr, so a thread holding that lock waited for the
** loader's while this one waited for libunwind's (tests/sample/loader.sh,
** a handler of the thread in dl_iterate_phdr against one of the thread
** computing beside it).  A thread in a window with pc outside libc (the
** windows are in its pthread_mutex_lock and unlock) is another, which
** leaves it in a few instructions; a program's handler that ran in a
** window and was interrupted in turn is not told apart.  The thread's id
** is asked only while the lock is taken.
*/
static bool unwind_loader_mine(uint64_t pc, bool handler)
{
	const volatile pthread_mutex_t *m = loader_lock;
	if (!m || m->__data.__lock == 0)
		return false;
	int owner = m->__data.__owner;
	if (owner == 0)
		return handler && pc >= unwind_libc_lo && pc < unwind_libc_hi;
	return owner == (int)alloc_sys_gettid();
}

/* Whether a handler that interrupted pc may walk now: not inside
** libunwind or our loader calls in this thread (trace_loader_iterate's,
** alloc_sys_dl_iterate's), nor in the loader.  Our own calls are also
** the loader lock's owner where the lock was found; their flags are kept
** for where it was not (another C library): then they are all we know. */
static bool unwind_signal_may_walk(uint64_t pc)
{
	return !unwind_depth && !loader_depth && !alloc_sys_loader_mine() && !unwind_loader_mine(pc, true);
}

/*
** Before a walk or a dl_iterate_phdr: false when a fork is under way and the
** caller must not wait (then no walk).  Counted in first, gate read second
** (both sequentially consistent), as the fork raises the gate first and
** reads the count second: either the walk sees the gate or the fork sees
** the walk.  A thread already counted in (a handler that interrupted its
** walk) goes on: the fork waits for it anyway.
*/
static bool loader_enter(bool may_wait)
{
	/* a child of a raw clone not yet taken as alone (its exit, a lock
	** waited for long, pthread_create, a new site under site_depth:
	** alloc_exit.c, alloc_core.c) walks nothing: a walk
	** another thread had under way at the clone may have left libunwind's
	** locks or the loader's held for ever in the copy (clone_raw.sh,
	** site_depth=8 beside the sampler); the adoption tells */
	if (__builtin_expect(alloc_clone_unadopted(), 0) && !loader_depth)
		return false;
	for (;;) {
		atomic_fetch_add(&unwind_inside, 1);
		if (__builtin_expect(!atomic_load(&unwind_gate), 1) || loader_depth) {
			loader_depth++;
			__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the flag is up before the walk */
			return true;
		}
		atomic_fetch_sub(&unwind_inside, 1);
		if (!may_wait || unwind_forker || atomic_load(&unwind_off))
			return false;
		/* bounded: this thread may hold the loader's lock (a malloc
		** inside dlopen) that a walk the fork waits for needs */
		for (int i = 0; atomic_load(&unwind_gate); i++) {
			if (i == UNWIND_WAIT_YIELDS)
				return false;
			sched_yield();
		}
	}
}

static void loader_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	loader_depth--;
	atomic_fetch_sub(&unwind_inside, 1);
}

bool trace_unwind_enter(bool may_wait)
{
	if (!loader_enter(may_wait))
		return false;
	unwind_depth++;
	return true;
}

void trace_unwind_leave(void)
{
	unwind_depth--;
	loader_leave();
}

bool trace_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg, bool may_wait)
{
	if (unwind_forker) { /* in a prepare handler: it ends before the copy */
		dl_iterate_phdr(cb, arg);
		return true;
	}
	if (!loader_enter(may_wait))
		return false;
	dl_iterate_phdr(cb, arg);
	loader_leave();
	return true;
}

void trace_unwind_prefork(void)
{
	unwind_forker = true;
	atomic_store(&unwind_gate, true);
	/* this thread's own count: a fork from a handler that interrupted it */
	while (atomic_load(&unwind_inside) > (unsigned)loader_depth)
		sched_yield();
}

void trace_unwind_postfork(bool child)
{
	if (child) { /* a walk that was counting itself out went with its thread */
		atomic_store(&unwind_inside, (unsigned)loader_depth);
		alloc_exit_postfork_child(); /* a process of its own before the gate falls */
	}
	atomic_store(&unwind_gate, atomic_load(&unwind_off));
	unwind_forker = false;
}

/*
** A child of clone without fork, before its fork child handlers run: no
** gate held the walks still while it was copied.  A walk another thread
** had under way may have left libunwind's locks or the loader's (taken by
** dl_iterate_phdr, which libunwind calls) held for ever in the copy: the
** child's next walk, or its exit snapshot's list of modules, waited for
** ever in _exit (clone_raw.sh); so would one of our own calls of it
** (loader_held).  True then: walks stay off in this
** process (the gate up for good, the cheap refusal), and the caller stores
** no snapshot.
*/
bool trace_unwind_clone_child(bool loader_held)
{
	if (!loader_held && !atomic_load(&unwind_inside))
		return false;
	atomic_store(&unwind_off, true);
	return true;
}

bool trace_unwind_proc_entry(uint64_t addr, uint64_t *start)
{
	if (!trace_unwind_enter(true))
		return false;
	unw_proc_info_t pi;
	bool ok = unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)addr, &pi, NULL) == 0 &&
		  pi.start_ip && pi.start_ip <= addr;
	trace_unwind_leave();
	if (ok)
		*start = (uint64_t)pi.start_ip;
	return ok;
}

/* The executable segments of the object holding the code at arg[0]:
** into arg[1], arg[2]. */
static int unwind_self_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t *r = arg, me = r[0];
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	r[1] = lo;
	r[2] = hi;
	return 1;
}

bool trace_unwind_is_libunwind(uintptr_t pc)
{
	return pc >= unwind_lib_lo && pc < unwind_lib_hi;
}

bool trace_unwind_in_self(uintptr_t pc)
{
	return pc >= unwind_self_lo && pc < unwind_self_hi;
}

/* Walk from an initialised cursor: the pc, then return addresses (the
** careful walk, one unw_step after another). */
static unsigned unwind_walk(unw_cursor_t *c, uint64_t *frames, unsigned max)
{
	unsigned n = 0;
	while (n < max) {
		unw_word_t ip;
		if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		frames[n++] = ip;
		if (unw_step(c) <= 0)
			break;
	}
	return n;
}

/*
** The thread's own stack, [home_lo, home_hi): set as it starts
** (trace_thread.c), the main thread's here.  A walk takes about 10 KiB of
** stack below where it starts; on another stack, a coroutine's
** (makecontext, a green-thread library) of a size meminst does not know,
** it would write past the end: an 8 KiB one from malloc died under
** sample=2000.  No walk there: a sample keeps its pc, an allocation is
** typed by its site.  Not known (a thread of a raw clone): walked.
*/
static __thread uintptr_t home_lo ALLOC_TLS_MODEL, home_hi ALLOC_TLS_MODEL;

void trace_unwind_home(uintptr_t lo, uintptr_t hi)
{
	home_lo = lo;
	home_hi = hi;
}

bool trace_unwind_on_home(uintptr_t a)
{
	return !home_hi || (a >= home_lo && a < home_hi);
}

bool trace_unwind_off_home(void)
{
	char here;
	return !trace_unwind_on_home((uintptr_t)&here);
}

/* The main thread's: as deep as its limit lets it grow (1 GiB when there
** is none), and the arguments and environment above this frame. */
static void unwind_main_home(void)
{
	char here;
	struct rlimit rl;
	uint64_t deep = 1ull << 30;
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < deep)
		deep = rl.rlim_cur < (8u << 20) ? 8u << 20 : rl.rlim_cur;
	if (alloc_sys_gettid() == getpid() && (uintptr_t)&here > deep)
		trace_unwind_home((uintptr_t)&here - deep, (uintptr_t)&here + (64u << 20));
}

void trace_unwind_main_home(void)
{
	if (!home_hi)
		unwind_main_home();
}

int trace_unwind_init(void)
{
	static bool done;
	if (done)
		return 0;
	done = true;
	unwind_main_home();
	/* libunwind's range first: its set-up makes its pipe (pipe2) */
	uintptr_t self[3] = {(uintptr_t)&trace_unwind_init, 0, 0};
	uintptr_t lib[3] = {(uintptr_t)&unw_backtrace, 0, 0};
	trace_loader_iterate(unwind_self_range, self, true);
	trace_loader_iterate(unwind_self_range, lib, true);
	uintptr_t libc[3] = {(uintptr_t)&dl_iterate_phdr, 0, 0};
	trace_loader_iterate(unwind_self_range, libc, true);
	trace_loader_iterate(loader_lock_nest, NULL, true);
	unwind_self_lo = self[1], unwind_self_hi = self[2];
	unwind_lib_lo = lib[1], unwind_lib_hi = lib[2];
	unwind_libc_lo = libc[1], unwind_libc_hi = libc[2];
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	/* libunwind's one-time set-up (tables, locks, its memory-validation
	** descriptor) happens on the first walk: do it here, in normal
	** context, rather than inside malloc or a handler.  A careful walk:
	** the fast one would also fill this thread's trace cache (below),
	** which the exit snapshot's handler, the one walker of a default run,
	** never reads. */
	unw_context_t uc;
	unw_cursor_t c;
	uint64_t frames[4];
	int saved_errno = errno; /* its pipe, read empty, leaves EAGAIN */
	if (trace_unwind_enter(true)) {
		if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
			(void)unwind_walk(&c, frames, 4);
		trace_unwind_leave();
	}
	errno = saved_errno;
	return 0;
}

/* unw_backtrace from normal context.  The first in a thread makes its
** trace cache: if a key among the first 32 got a value meanwhile, it is
** libunwind's (nothing else runs here), and handlers may make caches. */
static int unwind_backtrace_normal(void **buf, int want)
{
	if (unwind_cache_made || atomic_load_explicit(&unwind_key_low, memory_order_relaxed)) {
		unwind_cache_made = true;
		return unw_backtrace(buf, want);
	}
	void *before[UNWIND_KEYS_LOW];
	for (unsigned k = 0; k < UNWIND_KEYS_LOW; k++)
		before[k] = pthread_getspecific((pthread_key_t)k);
	int n = unw_backtrace(buf, want);
	for (unsigned k = 0; k < UNWIND_KEYS_LOW; k++)
		if (!before[k] && pthread_getspecific((pthread_key_t)k))
			atomic_store_explicit(&unwind_key_low, true, memory_order_relaxed);
	unwind_cache_made = true;
	return n;
}

/* May this handler make the thread's trace cache (unw_backtrace's first
** run)?  Its pthread_once ran in normal context already, its memory comes
** from mmap and libunwind's pool (a lock taken with signals blocked), and
** pthread_setspecific of a low key only stores.  Only from a thread's
** second sample on (UNWIND_WARM_AFTER careful walks): most threads that
** are sampled once are short, and the cache costs them more than one
** careful walk; a thread that runs on would pay a careful walk a sample
** (about 10 times a fast one, and more with a deep stack). */
#define UNWIND_WARM_AFTER 1
static bool unwind_handler_may_warm(void)
{
	if (unwind_ended || !atomic_load_explicit(&unwind_key_low, memory_order_relaxed))
		return false;
	return ++unwind_careful > UNWIND_WARM_AFTER;
}

void trace_unwind_thread_end(void)
{
	unwind_ended = true;
}

/* unw_backtrace's trace cache is per thread, made at the thread's first
** fast walk: 2^14 frame shapes of 16 B, 256 KiB written whole when it is
** made (64 page faults, and an munmap with its TLB shoot-down to every CPU
** at the thread's exit), and made with pthread_once, pthread_setspecific
** and mmap, which a signal handler had better not be the first to run.
** So it is made here, in normal context, for the thread that starts
** sampling (which also tells unwind_backtrace_normal libunwind's key),
** and by the allocation-site walks; a handler walks a thread without one
** carefully, and makes it at the thread's second sample
** (unwind_handler_may_warm).  Not when a thread starts: most short threads
** are never sampled, and the cache cost them about 10 times what a thread
** costs bare (bench/threads-cpu.sh). */
void trace_unwind_warm(void)
{
	uint64_t frames[4];
	(void)trace_unwind_here(frames, 4, false);
}

/* The fast walk: unw_backtrace follows a per-thread cache of frame
** shapes (no DWARF interpretation once a code address has been seen, and
** no system call), from here through the handler and the kernel's signal
** frame; the interrupted pc is in the list (libunwind reads it from the
** signal frame), and what comes before it is ours to drop.  0 if it is not
** found (then the careful walk runs). */
static unsigned unwind_fast(uint64_t pc, uint64_t *frames, unsigned max)
{
	enum { SKIP_MAX = 8 }; /* our frames and the trampoline, at most */
	unsigned want = max + SKIP_MAX;
	void *buf[want];
	int n = unw_backtrace(buf, (int)want);
	for (int i = 0; i < n && i < SKIP_MAX; i++)
		if ((uint64_t)(uintptr_t)buf[i] == pc) {
			unsigned k = 0;
			for (int j = i; j < n && k < max; j++)
				frames[k++] = (uint64_t)(uintptr_t)buf[j];
			return k;
		}
	return 0;
}

unsigned trace_unwind_signal(void *ucontext, uint64_t *frames, unsigned max)
{
	uint64_t pc = (uint64_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
	if (!unwind_signal_may_walk(pc) || !trace_unwind_enter(false))
		return 0;
	unsigned n = 0;
	if (unwind_cache_made || unwind_handler_may_warm()) {
		unwind_cache_made = true;
		n = unwind_fast(pc, frames, max);
	}
	if (n == 0) { /* from the signal's context: slower, always right */
		unw_cursor_t c;
		if (unw_init_local2(&c, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) == 0)
			n = unwind_walk(&c, frames, max);
	}
	trace_unwind_leave();
	return n;
}

/* The careful walk alone, from a signal's context; *whole: it reached the
** outermost frame (an unwinding error, or max frames, leave it false). */
unsigned trace_unwind_signal_whole(void *ucontext, uint64_t *frames, unsigned max, bool *whole)
{
	*whole = false;
	if (!unwind_signal_may_walk((uint64_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP]) ||
	    !trace_unwind_enter(false))
		return 0;
	unw_cursor_t c;
	unsigned n = 0;
	if (unw_init_local2(&c, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) == 0) {
		while (n < max) {
			unw_word_t ip;
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
				break;
			if (ip == 0) {
				*whole = true;
				break;
			}
			frames[n++] = ip;
			int r = unw_step(&c);
			if (r <= 0) {
				*whole = r == 0;
				break;
			}
		}
	}
	trace_unwind_leave();
	return n;
}

unsigned trace_unwind_here(uint64_t *frames, unsigned max, bool may_wait)
{
	enum { SELF_MAX = 16 }; /* sampler, tracer, hooks, allocator entry */
	unsigned want = max + SELF_MAX;
	void *buf[want];
	if (trace_unwind_off_home() || unwind_loader_mine(0, false) || !trace_unwind_enter(may_wait))
		return 0;
	int n = unwind_backtrace_normal(buf, (int)want);
	trace_unwind_leave();
	/* Our own frames first (sampler, tracer, allocation hooks): the
	** sample starts at the first frame outside libmeminst. */
	int i = 0;
	while (i < n && (uintptr_t)buf[i] >= unwind_self_lo && (uintptr_t)buf[i] < unwind_self_hi)
		i++;
	unsigned k = 0;
	for (; i < n && k < max; i++)
		frames[k++] = (uint64_t)(uintptr_t)buf[i];
	return k;
}

/* One walk of own + max frames: the frames from site on, or 0 when site
** is not among the first `own` (*at: where it was). */
static unsigned unwind_from(uint64_t site, uint64_t *frames, unsigned max, unsigned own, unsigned *at)
{
	unsigned want = max + own;
	void *buf[want];
	if (trace_unwind_off_home() || !trace_unwind_enter(true))
		return 0;
	int n = unwind_backtrace_normal(buf, (int)want);
	trace_unwind_leave();
	for (int i = 0; i < n && i < (int)own; i++)
		if ((uint64_t)(uintptr_t)buf[i] == site) {
			unsigned k = 0;
			for (int j = i; j < n && k < max; j++)
				frames[k++] = (uint64_t)(uintptr_t)buf[j];
			*at = (unsigned)i;
			return k;
		}
	return 0;
}

/* How many of our own frames came before the site in the deepest walk so
** far: the next walks ask for just that many more than the caller wants
** (libunwind's cost is per frame walked). */
static _Atomic unsigned unwind_own_seen = 6;

unsigned trace_unwind_from(uint64_t site, uint64_t *frames, unsigned max)
{
	enum { OWN_MAX = 12 }; /* allocator entry, core, site_depth's lookup, this */
	unsigned own = atomic_load_explicit(&unwind_own_seen, memory_order_relaxed), at;
	unsigned n = unwind_from(site, frames, max, own + 1, &at);
	if (n == 0 && (n = unwind_from(site, frames, max, OWN_MAX, &at)) != 0)
		atomic_store_explicit(&unwind_own_seen, at, memory_order_relaxed);
	return n;
}

unsigned trace_unwind_slots(uint64_t site, uint64_t *frames, uint64_t *slots, unsigned max)
{
	enum { OWN_MAX = 12 };
	unw_context_t uc;
	unw_cursor_t c;
	unsigned n = 0, seen = 0;
	if (trace_unwind_off_home() || !trace_unwind_enter(true))
		return 0;
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0) {
		while (n < max && (n || seen++ <= OWN_MAX)) {
			unw_word_t ip, sp;
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0 || unw_get_reg(&c, UNW_REG_SP, &sp) < 0)
				break;
			if (n || ip == site) {
				/* x86-64: the call pushed the return address just
				** below the caller's stack pointer after the return */
				frames[n] = ip;
				slots[n++] = sp - sizeof(uint64_t);
			}
			if (unw_step(&c) <= 0)
				break;
		}
	}
	trace_unwind_leave();
	return n;
}
