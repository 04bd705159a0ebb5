/*
** trace_write.c — the writer thread: full events chunks leave the traced
** threads through a queue, and one thread of ours writes them, so that no
** traced thread waits on the file.
**
** A traced thread whose 64 KiB events buffer is full seals the chunk
** header and its checksum (while the words are in its core's cache: the
** writer then never reads them), puts the buffer on the queue and takes an
** empty buffer from the free list (or new ones, by mmap).  Only when WQ_MAX buffers are queued
** (the writer is that far behind) and none is free does it wait, and the wait is written as a SUSPEND record of reason
** MEMINST_TSUSPEND_TRACE, which readers show as the `<trace-wait>` pseudo
** function and keep out of the program's times.
**
** Order: chunks of one thread are queued in order and the writer writes
** the queue in order.  Anything written without the queue (the fallback
** when the writer is not running, the exit flush) is written only while
** the writer is stopped, after the queue is empty.
**
** The queue, the free list and the counters are under one spin lock, held
** for a few instructions.  The writer sleeps on a futex; it runs with every
** signal blocked, alloc_tls.guard raised (its work is ours) and
** trace_tls.busy raised for life (nothing it does is recorded).
**
** The file closed at run time (the end of a CPU profile on request,
** trace_file_close_idle): the writer writes what is queued (its writes
** then find no descriptor) and ends, and none is started until the file
** is open again; the next full chunk after that starts one.
**
** Fork: the child has no writer.  The queue's buffers belong to the
** parent's records (the parent writes them); the child forgets them and
** starts its own writer at its first full chunk.
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define WQ_MAX 256 /* queued buffers (16 MiB): beyond, a full thread waits */
#define WQ_WAKE 64 /* a sleeping writer is woken for this many chunks (4 MiB:
		    * a direct write of less costs more CPU per byte; on a
		    * KVM guest each write is an exit to the host, and 4 MiB
		    * writes took 0.3-0.5 ns a traced call less than 1 MiB) */
#define WQ_BATCH 64 /* chunks a write takes at most */
#define WQ_BUF_WORDS 8192 /* 64 KiB */

#define WQ_REGION (2u << 20) /* buffers are mapped 32 at a time */
#define WQ_REGION_SAMPLING (256u << 10) /* or 4, when no call is traced */

/*
** One events buffer: 64 KiB, page-aligned (for O_DIRECT), in a 2 MiB
** region of 32 that asks for a transparent huge page when calls are
** traced (wq_map): the device's
** direct reads of our buffers then pin one page a region, not sixteen a
** buffer, and the hooks' stores miss the TLB less (together 0.3-0.8 ns a
** traced call on the machine of bench/RESULTS.md).  The chunk header
** words, the records (the stream's base points at them), room for the
** padding chunk after them; the last word is the link while the buffer is
** free or queued (the padding, written once the writer has taken the
** buffer off the queue, may cover it).
*/
typedef union wq_buf_s {
	uint64_t words[WQ_BUF_WORDS];
	struct {
		uint64_t pad[WQ_BUF_WORDS - 1];
		union wq_buf_s *next;
	};
} wq_buf_t;
_Static_assert(TRACE_CHUNK_WORDS + TRACE_EV_WORDS + 6 <= WQ_BUF_WORDS,
	       "a full chunk leaves room for 48 bytes of padding in its buffer");
_Static_assert(sizeof(wq_buf_t) == 65536 && WQ_REGION % sizeof(wq_buf_t) == 0 &&
		       WQ_REGION_SAMPLING % sizeof(wq_buf_t) == 0, "buffers tile a region");

static struct {
	_Atomic int lock;
	wq_buf_t *head, *tail;    /* queued, oldest first                 */
	wq_buf_t *free;           /* empty buffers, used before           */
	wq_buf_t *fresh, *fresh_end; /* the newest region's never used: not
				  * linked, so that their pages stay untouched */
	unsigned queued;          /* buffers queued or being written      */
	unsigned pending;         /* buffers on the queue (not yet taken) */
	bool running;             /* the writer takes queued buffers      */
	bool stopping;            /* exit: write the rest and end         */
	int pid;                  /* the process the writer runs in       */
	_Atomic uint32_t wake;    /* futex: bumped when work is queued    */
	_Atomic uint32_t freed;   /* futex: bumped when a buffer is freed */
	_Atomic uint32_t done;    /* futex: bumped when the writer idles or ends */
	_Atomic int sleeping;     /* the writer waits on `wake`           */
	_Atomic int busy;         /* the writer holds taken buffers       */
	_Atomic int waiters;      /* threads waiting on `freed` or `done` */
} wq;

static void wq_futex_wait(_Atomic uint32_t *addr, uint32_t seen)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

/* The writer's sleep: woken for WQ_WAKE chunks, or after 100 ms at most,
** so that fewer chunks do not wait long. */
static void wq_writer_sleep(uint32_t seen)
{
	struct timespec ts = {0, 100 * 1000 * 1000};
	syscall(SYS_futex, &wq.wake, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

static void wq_futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static wq_buf_t *wq_of(uint64_t *base)
{
	return (wq_buf_t *)(base - TRACE_CHUNK_WORDS);
}

static void wq_free_locked(wq_buf_t *b)
{
	b->next = wq.free;
	wq.free = b;
}

/* An empty buffer (a used one first), or NULL: wq_map for more. */
static wq_buf_t *wq_take_locked(void)
{
	wq_buf_t *b = wq.free;
	if (b)
		wq.free = b->next;
	else if (wq.fresh < wq.fresh_end)
		b = wq.fresh++;
	return b;
}

/* A new region of buffers: one for the caller, the others free.  NULL when
** out of memory.  Normal context (mmap). */
static wq_buf_t *wq_map(void)
{
	/* Sampling only (no calls: trace_want_clock 0, the launcher's CPU
	** sampler) fills a buffer in seconds, not microseconds: a region of
	** four, small pages, so that its first buffer costs 64 KiB of the
	** resident set, not the 2 MiB page (issue 29: the launcher's peak
	** RSS), and 256 KiB of address space, not 2 MiB (4 MiB for a moment, to
	** align it): a program under RLIMIT_AS has the rest (meminst(7)). */
	size_t size = trace_want_clock ? WQ_REGION : WQ_REGION_SAMPLING;
	char *m = alloc_sys_map(trace_want_clock ? 2 * WQ_REGION : size), *r = m;
	if (!m)
		return NULL;
	if (trace_want_clock) { /* the region aligned to its size: keep only it */
		r = (char *)(((uintptr_t)m + WQ_REGION - 1) & ~(uintptr_t)(WQ_REGION - 1));
		if (r > m)
			munmap(m, (size_t)(r - m));
		munmap(r + WQ_REGION, (size_t)(m + WQ_REGION - r));
		/* calls traced: a huge page (refused when THP is off: small pages) */
		madvise(r, WQ_REGION, MADV_HUGEPAGE);
	}
	/* The others are taken in order by wq_take_locked; linking them all
	** here wrote the last word of each, 31 pages (124 KiB) of a region
	** touched before use (a sampling-only session uses two buffers). */
	wq_buf_t *b = (wq_buf_t *)(void *)r;
	trace_spin_lock(&wq.lock);
	while (wq.fresh < wq.fresh_end) /* another thread's region, mapped meanwhile */
		wq_free_locked(wq.fresh++);
	wq.fresh = b + 1;
	wq.fresh_end = b + size / sizeof *b;
	trace_spin_unlock(&wq.lock);
	return b;
}

/* A fresh buffer's record words, or NULL.  Normal context (mmap). */
uint64_t *trace_wbuf_new(void)
{
	trace_spin_lock(&wq.lock);
	wq_buf_t *b = wq_take_locked();
	trace_spin_unlock(&wq.lock);
	if (!b && !(b = wq_map()))
		return NULL;
	return b->words + TRACE_CHUNK_WORDS;
}

/* ------------------------------------------------------------ the thread -- */

/* Up to WQ_BATCH chunks from b on (sealed and summed by their threads),
** padded to 4 KiB when the file takes direct writes, into v; returns how
** many, the first one after them in *rest. */
static int wq_gather(wq_buf_t *b, struct iovec *v, size_t *bytes, bool direct, wq_buf_t **rest)
{
	int n = 0;
	*bytes = 0;
	while (b && n < WQ_BATCH) {
		wq_buf_t *next = b->next; /* before the padding covers it */
		struct meminst_trace_chunk *h = (void *)b->words;
		size_t len = sizeof *h + (size_t)h->words * 8, pad = direct ? trace_pad_bytes(len) : 0;
		if (pad) /* the padding chunk after it, in its buffer */
			trace_pad_chunk((void *)((char *)b->words + len), (uint64_t *)((char *)b->words + len) + 4,
					pad);
		v[n].iov_base = b->words;
		v[n++].iov_len = len + pad;
		*bytes += len + pad;
		b = next;
	}
	*rest = b;
	return n;
}

static void wq_write_list(wq_buf_t *b)
{
	while (b) {
		struct iovec v[WQ_BATCH];
		size_t bytes;
		bool direct = trace_fio_direct();
		int n = wq_gather(b, v, &bytes, direct, &b);
		trace_fio_batch(v, n, bytes, direct);
		trace_spin_lock(&wq.lock);
		for (int i = 0; i < n; i++) /* their links may be padding now */
			wq_free_locked((wq_buf_t *)v[i].iov_base);
		wq.queued -= (unsigned)n;
		trace_spin_unlock(&wq.lock);
		atomic_fetch_add(&wq.freed, 1);
		if (atomic_load(&wq.waiters))
			wq_futex_wake(&wq.freed);
	}
}

static void *wq_main(void *arg)
{
	(void)arg;
	alloc_tls.guard = 1;        /* for life: its allocations are ours */
	trace_tls.busy = 1 << 20;   /* and nothing it does is traced      */
	alloc_own_thread_enter();   /* not a program thread (alloc_exit.c) */
	bool wrote = false;
	for (;;) {
		uint32_t seen = atomic_load(&wq.wake);
		trace_spin_lock(&wq.lock);
		/* right after a write, the few chunks queued meanwhile wait for
		** more (a write of one chunk costs as much CPU as one of
		** sixteen), unless someone waits for them */
		bool closed = atomic_load(&trace_fio_fd) < 0;
		bool take = !wrote || wq.pending >= WQ_WAKE || wq.stopping || closed || atomic_load(&wq.waiters);
		wq_buf_t *list = take ? wq.head : NULL;
		if (take) {
			wq.head = wq.tail = NULL;
			wq.pending = 0;
		}
		bool stop = (wq.stopping || closed) && !list, idle = take && !list;
		if (stop)
			wq.running = false;
		atomic_store(&wq.busy, list != NULL);
		trace_spin_unlock(&wq.lock);
		if (stop)
			break;
		if ((wrote = list != NULL)) {
			trace_file_check();
			wq_write_list(list);
			atomic_store(&wq.busy, 0);
			continue;
		}
		if (idle) {
			atomic_fetch_add(&wq.done, 1);
			if (atomic_load(&wq.waiters))
				wq_futex_wake(&wq.done);
		}
		atomic_store(&wq.sleeping, 1);
		wq_writer_sleep(seen);
		atomic_store(&wq.sleeping, 0);
	}
	alloc_own_thread_leave();
	atomic_fetch_add(&wq.done, 1);
	wq_futex_wake(&wq.done);
	return NULL;
}

/* libc's pthread_create (NULL if it cannot be found): what our own
** (trace_thread.c) calls, and what makes meminst's threads that are never
** traced (the writer, the wall clock's). */
alloc_create_fn *trace_real_pthread_create(void)
{
	static alloc_create_fn *real;
	if (!real) {
		void *fn = dlsym(RTLD_NEXT, "pthread_create");
		memcpy(&real, &fn, sizeof fn);
	}
	return real;
}

/* libc's pthread_create: ours (trace_thread.c) would trace the writer. */
static alloc_create_fn *wq_real_create(void)
{
	alloc_create_fn *real = trace_real_pthread_create();
	return real ? real : pthread_create;
}

/* Start the writer if this process has none.  Any context but a signal
** handler (inside malloc too: the thread's memory comes from the backend
** under alloc_tls.guard).  0, or -1: the caller writes synchronously. */
static int wq_ensure(void)
{
	int pid = getpid();
	trace_spin_lock(&wq.lock);
	bool have = wq.running && wq.pid == pid;
	bool off = wq.stopping;
	trace_spin_unlock(&wq.lock);
	if (have)
		return 0;
	if (off || trace_sink || atomic_load(&trace_fio_fd) < 0)
		return -1; /* no file (closed after a profile): nothing to write to */
	static _Atomic int starting;
	if (atomic_exchange(&starting, 1))
		return -1; /* another thread is starting it: write this one ourselves */
	sigset_t all, old;
	sigfillset(&all);
	alloc_sys_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_t th;
	trace_tls.busy++;
	alloc_guard_enter();
	trace_spin_lock(&wq.lock);
	wq.running = true, wq.pid = pid; /* before it runs: queue from now on */
	trace_spin_unlock(&wq.lock);
	int rc = alloc_own_thread_create(wq_real_create(), &th, &at, wq_main, NULL);
	if (rc != 0) { /* what was queued meanwhile is written here */
		trace_spin_lock(&wq.lock);
		wq.running = false;
		wq_buf_t *list = wq.head;
		wq.head = wq.tail = NULL;
		wq.pending = 0;
		trace_spin_unlock(&wq.lock);
		wq_write_list(list);
	}
	alloc_guard_exit();
	trace_tls.busy--;
	pthread_attr_destroy(&at);
	alloc_sys_sigmask(SIG_SETMASK, &old, NULL);
	atomic_store(&starting, 0);
	return rc == 0 ? 0 : -1;
}

/* ------------------------------------------------------------- handoff -- */

/*
** The owner of t's events stream hands its full buffer (the chunk header
** sealed) to the writer and goes on in an empty one.  0, or -1 when there
** is no writer (the caller writes the chunk itself).  A wait for a free
** buffer is recorded in the new buffer as SUSPEND(TRACE).
*/
int trace_writer_handoff(trace_thr_t *t)
{
	if (wq_ensure() < 0)
		return -1;
	wq_buf_t *full = wq_of(t->ev.base), *fresh;
	uint64_t wait_begin = UINT64_MAX;
	for (;;) {
		trace_spin_lock(&wq.lock);
		if (!wq.running) { /* stopped meanwhile (exit) */
			trace_spin_unlock(&wq.lock);
			return -1;
		}
		fresh = wq_take_locked();
		bool grow = !fresh && wq.queued < WQ_MAX;
		if (fresh || grow) {
			wq.queued++; /* the full one, queued below */
			trace_spin_unlock(&wq.lock);
			if (fresh || (fresh = wq_map()))
				break;
			trace_spin_lock(&wq.lock);
			wq.queued--;
			trace_spin_unlock(&wq.lock);
			return -1; /* out of memory: written by the caller */
		}
		/* every buffer is queued: wait for the writer */
		uint32_t seen = atomic_load(&wq.freed);
		atomic_fetch_add(&wq.waiters, 1);
		trace_spin_unlock(&wq.lock);
		atomic_fetch_add(&wq.wake, 1);
		wq_futex_wake(&wq.wake);
		if (wait_begin == UINT64_MAX)
			wait_begin = trace_now();
		wq_futex_wait(&wq.freed, seen);
		atomic_fetch_sub(&wq.waiters, 1);
	}
	trace_spin_lock(&wq.lock);
	full->next = NULL;
	if (wq.tail)
		wq.tail->next = full;
	else
		wq.head = full;
	wq.tail = full;
	bool wake = ++wq.pending >= WQ_WAKE; /* a wake-up per chunk costs more than it saves */
	trace_spin_unlock(&wq.lock);
	atomic_fetch_add(&wq.wake, 1);
	if (wake && atomic_load(&wq.sleeping))
		wq_futex_wake(&wq.wake);
	trace_stream_rebase(&t->ev, fresh->words + TRACE_CHUNK_WORDS, TRACE_EV_WORDS, TRACE_RESERVE_WORDS);
	if (wait_begin != UINT64_MAX) {
		t->ev.pos[0] = MEMINST_TREC_HEAD(MEMINST_TREC_SUSPEND, wait_begin);
		t->ev.pos[1] = trace_now();
		t->ev.pos[2] = MEMINST_TSUSPEND_TRACE;
		t->ev.pos += 3;
		trace_stream_wrote(&t->ev);
		trace_preempt_waited(t, wait_begin, t->ev.pos[-2]);
	}
	return 0;
}

/* Wait until everything queued so far is written (a flush the caller will
** read back).  Normal context. */
void trace_writer_drain(void)
{
	for (;;) {
		uint32_t seen = atomic_load(&wq.done);
		trace_spin_lock(&wq.lock);
		bool idle = !wq.running || wq.pid != getpid() || (!wq.head && !atomic_load(&wq.busy));
		if (!idle)
			atomic_fetch_add(&wq.waiters, 1);
		trace_spin_unlock(&wq.lock);
		if (idle)
			return;
		atomic_fetch_add(&wq.wake, 1);
		wq_futex_wake(&wq.wake);
		wq_futex_wait(&wq.done, seen);
		atomic_fetch_sub(&wq.waiters, 1);
	}
}

/* At exit: the writer writes what is queued and ends; later chunks are
** written by their flushers.  Normal context. */
static void wq_wait_end(void);

void trace_writer_stop(void)
{
	trace_spin_lock(&wq.lock);
	bool ours = wq.running && wq.pid == getpid();
	wq.stopping = true;
	trace_spin_unlock(&wq.lock);
	if (ours)
		wq_wait_end();
}

/* The file is closed (trace_fio_close): the writer ends by itself once
** its queue is out; wait for that.  Normal context. */
void trace_writer_end_closed(void)
{
	wq_wait_end();
}

static void wq_wait_end(void)
{
	for (;;) {
		uint32_t seen = atomic_load(&wq.done);
		trace_spin_lock(&wq.lock);
		bool ended = !wq.running || wq.pid != getpid();
		if (!ended)
			atomic_fetch_add(&wq.waiters, 1);
		trace_spin_unlock(&wq.lock);
		if (ended)
			return;
		atomic_fetch_add(&wq.wake, 1);
		wq_futex_wake(&wq.wake);
		wq_futex_wait(&wq.done, seen);
		atomic_fetch_sub(&wq.waiters, 1);
	}
}

/*
** At death (a signal handler: trace_flush_at_death): the same as
** trace_writer_stop, but no lock or wait is unbounded, since the thread
** this handler interrupted may hold the queue's lock.  Waits at most about
** a second for the writer.  True when the queue is written (or there is no
** writer of ours), so that the caller may write the rest in order.
*/
bool trace_writer_stop_at_death(void)
{
	for (int tries = 0; atomic_exchange(&wq.lock, 1); tries++) {
		if (tries > 100)
			return false;
		sched_yield();
	}
	bool ours = wq.running && wq.pid == getpid();
	wq.stopping = true;
	trace_spin_unlock(&wq.lock);
	if (!ours)
		return true;
	const struct timespec tick = {0, 5000000};
	for (int i = 0; i < 200; i++) {
		atomic_fetch_add(&wq.wake, 1);
		wq_futex_wake(&wq.wake);
		if (!__atomic_load_n(&wq.running, __ATOMIC_ACQUIRE))
			return true;
		syscall(SYS_nanosleep, &tick, NULL); /* not our wrapped nanosleep */
	}
	return false;
}

/* In the child of fork: no writer; the queued buffers are the parent's. */
void trace_writer_after_fork_child(void)
{
	atomic_store(&wq.lock, 0);
	for (wq_buf_t *b = wq.head, *n; b; b = n) {
		n = b->next;
		wq_free_locked(b);
	}
	wq.head = wq.tail = NULL;
	wq.queued = wq.pending = 0;
	wq.running = false;
	wq.stopping = false;
	atomic_store(&wq.busy, 0);
	atomic_store(&wq.waiters, 0);
	atomic_store(&wq.sleeping, 0);
}
