/*
** trace_buf.c — the trace-file writer: the file, per-thread buffers and
** flushing (the clock: trace_clock.c; the file header, chunks and the
** process's own records: trace_chunk.c).
**
** Every thread that records gets a trace_thr_t: one mmap holding the record
** and its signal stream, and an events buffer that goes round the writer
** thread (trace_write.c); each has room for a chunk header in front of its
** words so that a chunk leaves with a single write (trace_fio.c).  The records of the process itself (PROCESS, MODULE)
** go out as thread 0 chunks from a static buffer under a small lock.
**
** Nothing here calls malloc: records and scratch buffers are mmap'd or on
** the stack, messages go through alloc_log.  While the runtime works for a
** thread (flushing, making its record), trace_tls.busy is raised so that
** nothing it calls is recorded.
**
** The file is never someone else's data lost: it is created with O_EXCL;
** an existing file is replaced only when it is empty or a meminst trace.
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int trace_want_clock;
char trace_path[4096];
int (*trace_sink)(const void *chunk, size_t bytes);

static bool buf_open_failed;
static bool buf_restate;             /* closed at run time: say the threads again */
static bool buf_reopen_in_child;     /* forked: open the child's file on first use */
static _Atomic int buf_open_lock;
static int buf_owner_pid;            /* the process whose buffers these are */

static struct {
	_Atomic int lock;                /* registry and thread numbers       */
	trace_thr_t *all;                /* every record ever made            */
	trace_thr_t *pool;               /* retired, to reuse                 */
	_Atomic uint32_t next_no;        /* the next trace thread number      */
	pthread_key_t key;
	bool key_ok;
	bool atfork_done;
} reg = {.next_no = 1};

/* Spare records for threads that have none when a sample comes (threads
** that existed before sampling started): the signal handler takes one with
** an atomic exchange, never a lock.  Made in normal context. */
#define BUF_SPARES 64
static _Atomic(trace_thr_t *) buf_spare[BUF_SPARES];
static _Atomic int buf_spares_taken;

/* --------------------------------------------------------------- locks -- */

/* A plain spin lock: the pthread ones are interposed (trace_suspend.c) and
** these are held for a few instructions or one write(2).  In a child of a
** raw clone one may be held for ever by a thread it does not have (the
** writer's queue by a thread making its record, clone_raw.sh under
** alloc_sample): the wait adopts the child now and then, which makes every
** lock here anew (trace_after_fork_child). */
void trace_spin_lock(_Atomic int *l)
{
	for (unsigned i = 1; atomic_exchange_explicit(l, 1, memory_order_acquire); i++)
		alloc_clone_yield(i);
}
void trace_spin_unlock(_Atomic int *l) { atomic_store_explicit(l, 0, memory_order_release); }
#define buf_lock trace_spin_lock
#define buf_unlock trace_spin_unlock

/* ---------------------------------------------------------------- file -- */

/* %p -> pid, %% -> %.  0, or -1 when it does not fit. */
int trace_path_expand(const char *in, int pid, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = in; *p; p++) {
		char num[16];
		const char *add = num;
		if (p[0] == '%' && p[1] == 'p') {
			alloc_fmt(num, sizeof num, "%d", pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			num[0] = '%', num[1] = 0;
			p++;
		} else {
			num[0] = *p, num[1] = 0;
		}
		size_t n = strlen(add);
		if (o + n >= len)
			return -1;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = 0;
	return 0;
}


/* ------------------------------------------------------------- threads -- */

static void buf_thread_key_destructor(void *arg)
{
	(void)arg;
	trace_thread_exit();
}

/* reg.all only grows, by a compare-and-swap: the signal handler reads
** nothing from it, but spares are pushed without the lock. */
static void buf_registry_push(trace_thr_t *t)
{
	trace_thr_t *head = __atomic_load_n(&reg.all, __ATOMIC_ACQUIRE);
	do
		t->next = head;
	while (!__atomic_compare_exchange_n(&reg.all, &head, t, true, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
}

/* A new record with empty streams, or NULL.  Normal context (mmap). */
static trace_thr_t *buf_record_new(void)
{
	size_t bytes = sizeof(trace_thr_t) + 8 * (TRACE_CHUNK_WORDS + TRACE_SIG_WORDS);
	bytes = (bytes + 4095) & ~(size_t)4095;
	uint64_t *ev = trace_wbuf_new(); /* events buffers go round the writer */
	trace_thr_t *t = ev ? alloc_sys_map(bytes) : NULL;
	if (!t)
		return NULL;
	t->map_bytes = bytes;
	uint64_t *region = (uint64_t *)(t + 1);
	trace_stream_rebase(&t->ev, ev, TRACE_EV_WORDS, TRACE_RESERVE_WORDS);
	trace_chunk_stream_init(&t->sig, region, TRACE_SIG_WORDS, 0);
	t->dead = true; /* until a thread takes it */
	buf_registry_push(t);
	return t;
}

/* Give the record to the calling thread: number, tid, THREAD_START as its
** first record (a copy in rec).  Async-signal-safe (prctl and gettid are
** system calls). */
static void buf_record_start(trace_thr_t *t, uint32_t parent_no, uint64_t rec[4])
{
	trace_stream_restart(&t->ev), t->ev.seq = t->ev.lost = 0;
	trace_stream_restart(&t->sig), t->sig.seq = t->sig.lost = 0;
	t->thread_no = atomic_fetch_add(&reg.next_no, 1);
	t->parent_no = parent_no;
	t->tid = alloc_sys_gettid();
	t->gen = 0;
	t->internal = trace_tls.internal;
	t->started = true;
	char name[17] = {0};
	prctl(PR_GET_NAME, name, 0, 0, 0);
	rec[0] = MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_START, trace_now());
	rec[1] = (uint32_t)t->tid | (uint64_t)t->parent_no << 32;
	memcpy(rec + 2, name, 16);
	memcpy(t->ev.pos, rec, 4 * sizeof *rec);
	t->ev.pos += 4;
	trace_stream_wrote(&t->ev);
	atomic_signal_fence(memory_order_seq_cst);
	t->dead = false;
}

/* The calling thread's record, made on first use: THREAD_START is its
** first record.  NULL when the thread is inside the runtime or out of
** memory. */
trace_thr_t *trace_thread_record(void)
{
	trace_tls_t *tl = &trace_tls;
	if (tl->rec) {
		if (trace_unlikely(tl->rec->key_pending) && !tl->busy && reg.key_ok) {
			tl->rec->key_pending = false; /* taken in a signal handler */
			pthread_setspecific(reg.key, tl->rec);
		}
		return tl->rec;
	}
	if (tl->busy)
		return NULL;
	/* busy first: from here on the sampler's handler leaves tl->rec alone */
	tl->busy++;
	atomic_signal_fence(memory_order_seq_cst);
	if (tl->rec) { /* a handler gave the thread a spare meanwhile */
		tl->busy--;
		return tl->rec;
	}
	buf_lock(&reg.lock);
	trace_thr_t *t = reg.pool;
	if (t)
		reg.pool = t->pool_next;
	buf_unlock(&reg.lock);
	if (!t && !(t = buf_record_new())) {
		tl->busy--;
		return NULL;
	}
	uint64_t rec[4];
	buf_record_start(t, tl->parent_no, rec);
	tl->rec = t;
	if (reg.key_ok)
		pthread_setspecific(reg.key, t);
	tl->busy--;
	return t;
}

/* A spare record for a thread that has none, from the sampler's signal
** handler: no lock, no allocation.  NULL when none is left or the thread
** is inside the runtime (its normal context may be making its record).
** Its THREAD_START in rec, for the signal stream too. */
static trace_thr_t *buf_spare_take(uint64_t rec[4])
{
	trace_tls_t *tl = &trace_tls;
	if (tl->busy)
		return NULL;
	for (unsigned i = 0; i < BUF_SPARES; i++) {
		trace_thr_t *t = atomic_exchange(&buf_spare[i], NULL);
		if (!t)
			continue;
		buf_record_start(t, 0, rec);
		t->key_pending = true; /* pthread_setspecific is not signal-safe */
		tl->rec = t;
		atomic_fetch_add(&buf_spares_taken, 1);
		return t;
	}
	return NULL;
}

/* Fill the spare slots, up to `want` records in all.  Normal context. */
static void buf_spares_fill(unsigned want)
{
	atomic_store(&buf_spares_taken, 0);
	for (unsigned i = 0; i < BUF_SPARES && i < want; i++) {
		if (atomic_load(&buf_spare[i]))
			continue;
		buf_lock(&reg.lock);
		trace_thr_t *t = reg.pool;
		if (t)
			reg.pool = t->pool_next;
		buf_unlock(&reg.lock);
		if (!t && !(t = buf_record_new()))
			return;
		trace_thr_t *none = NULL;
		if (!atomic_compare_exchange_strong(&buf_spare[i], &none, t)) {
			buf_lock(&reg.lock); /* filled by someone else meanwhile */
			t->pool_next = reg.pool;
			reg.pool = t;
			buf_unlock(&reg.lock);
		}
	}
}

/* Threads of the process now (from /proc/self/task, read with getdents64
** into a stack buffer: opendir would allocate). */
static unsigned buf_count_threads(void)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	char buf[4096];
	long n;
	unsigned count = 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			count += d->d_name[0] != '.';
		}
	close(fd);
	return count;
}

/* Before sampling starts: a spare record for every thread that exists
** (but this one), so that their samples are kept though they never made
** a record of their own.  Normal context. */
void trace_records_prepare(void)
{
	trace_tls.busy++;
	buf_spares_fill(buf_count_threads());
	trace_tls.busy--;
}

/* The thread ends: THREAD_EXIT, flush both streams, retire the record.
** Nothing the thread does afterwards is recorded. */
void trace_thread_exit(void)
{
	trace_tls_t *tl = &trace_tls;
	trace_thr_t *t = tl->rec;
	tl->busy = 1 << 20; /* for good: later key destructors may still call us */
	if (!t)
		return;
	if (trace_cur) {
		trace_cur_set(NULL);
		trace_arm(-1);
	}
	/* trace_now_thread like every other record of the thread: with
	** trace=cpu its last stamps may be ahead of CLOCK_THREAD_CPUTIME_ID */
	t->in_hook = trace_sp_mark(); /* a handler's calls from here on are dropped */
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t w = MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_EXIT, trace_now_thread());
	trace_ev_append_to(t, &w, 1);
	trace_ev_flush(t);
	trace_ev_release(t);
	tl->rec = NULL; /* the sampler's handler stops here (trace_sig_append) */
	while (atomic_exchange(&t->sig_busy, 1))
		alloc_sys_yield();
	trace_chunk_write(t->thread_no, &t->sig, MEMINST_TRACE_STREAM_SIGNAL);
	t->dead = true;
	buf_lock(&reg.lock);
	t->pool_next = reg.pool;
	reg.pool = t;
	buf_unlock(&reg.lock);
	atomic_store(&t->sig_busy, 0);
}

/* --------------------------------------------------------------- streams -- */

static void buf_reopen_child(void);

/* Write the thread's events chunk, with a CLOCK record first (TSC clock)
** so that the reader can follow the TSC rate. */
void trace_ev_flush(trace_thr_t *t)
{
	/* no signal handler of the program runs inside: one that leaves by
	** longjmp would leave the flag, the count and the writer's lock taken
	** (two system calls a chunk) */
	sigset_t all, old;
	sigfillset(&all);
	alloc_sys_sigmask(SIG_BLOCK, &all, &old);
	if (atomic_exchange(&t->flushing, 1)) {
		alloc_sys_sigmask(SIG_SETMASK, &old, NULL);
		return; /* the exit flush has it */
	}
	int saved_errno = errno; /* flushes happen inside malloc and the wrapped calls */
	trace_tls.busy++;
	if (trace_unlikely(buf_reopen_in_child))
		buf_reopen_child();
	trace_ev_fold_dropped(t);
	if (t->ev.last != trace_t0) /* the chunk restarts its deltas; <preempted> looks back */
		t->pre.run_last = t->ev.last;
	if (trace_clock == MEMINST_TRACE_CLOCK_TSC && t->ev.pos + 2 <= t->ev.end + TRACE_RESERVE_WORDS) {
		t->ev.pos[0] = MEMINST_TREC_HEAD(MEMINST_TREC_CLOCK, trace_now());
		t->ev.pos[1] = trace_clock_ns(CLOCK_MONOTONIC);
		t->ev.pos += 2;
		trace_stream_wrote(&t->ev);
	}
	trace_chunk_out(t->thread_no, &t->ev, MEMINST_TRACE_STREAM_EVENTS, t);
	atomic_store(&t->flushing, 0);
	trace_modules_check();
	trace_tls.busy--;
	alloc_sys_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
}

void trace_ev_append_to(trace_thr_t *t, const uint64_t *w, unsigned n)
{
	if (t->ev.pos + n > t->ev.end)
		trace_ev_flush(t);
	if (t->ev.pos + n > t->ev.end) {
		t->ev.lost++;
		return;
	}
	memcpy(t->ev.pos, w, n * 8u);
	t->ev.pos += n;
	trace_stream_wrote(&t->ev);
}

void trace_ev_append(const uint64_t *words, unsigned n)
{
	trace_thr_t *t = trace_thread_record();
	if (t && trace_ev_claim(t, trace_sp_mark())) {
		trace_ev_append_to(t, words, n);
		trace_ev_release(t);
	}
}

static void buf_sig_append(trace_thr_t *t, int tid, const uint64_t *words, unsigned n);

/* The signal stream: the handler runs on the thread it interrupted, so the
** record is this thread's; sig_busy keeps a nested handler (or the exit
** flush) out, and the record is then dropped rather than waited for. */
void trace_sig_append(const uint64_t *words, unsigned n)
{
	trace_thr_t *t = trace_tls.rec;
	if (trace_unlikely(!t)) {
		/* A thread that existed before sampling started, at its first
		** tick.  Its THREAD_START (tid, name) goes into the signal stream
		** as well: the events stream of a thread that is only sampled is
		** written out at its exit, but its samples are read while it
		** runs (trace_flush_running writes signal streams only), and
		** without it they would carry no thread. */
		uint64_t start[4];
		if (!(t = buf_spare_take(start)))
			return;
		buf_sig_append(t, 0, start, 4);
	}
	buf_sig_append(t, 0, words, n);
}

/* From another thread: only while `t` is still the record of `tid`
** (checked once the stream is ours: the thread's exit flush takes it too). */
void trace_sig_append_to(trace_thr_t *t, int tid, const uint64_t *words, unsigned n)
{
	buf_sig_append(t, tid, words, n);
}

static void buf_sig_append(trace_thr_t *t, int tid, const uint64_t *words, unsigned n)
{
	if (atomic_exchange(&t->sig_busy, 1))
		return;
	if (tid && (t->dead || t->tid != tid)) {
		atomic_store(&t->sig_busy, 0);
		return;
	}
	if (t->sig.pos + n > t->sig.end) {
		int saved_errno = errno;
		trace_chunk_write(t->thread_no, &t->sig, MEMINST_TRACE_STREAM_SIGNAL);
		errno = saved_errno;
	}
	if (t->sig.pos + n > t->sig.end)
		t->sig.lost++;
	else {
		memcpy(t->sig.pos, words, n * 8u);
		t->sig.pos += n;
	}
	atomic_store(&t->sig_busy, 0);
}

/*
** Buffered records of every thread.  The signal streams are safe to take
** from here: their handler claims sig_busy before it writes.  The events
** streams are written with no lock at all (the hot path), so another
** thread's is taken only at exit (others_events), when the program's
** threads are done or about to be: records a thread is writing at that
** very moment may be missed.  At run time only the caller's own is.
*/
static void buf_flush_threads(bool others_events)
{
	trace_tls.busy++;
	trace_thr_t *self = trace_tls.rec;
	if (self && trace_ev_claim(self, trace_sp_mark())) {
		trace_ev_flush(self);
		trace_ev_release(self);
	}
	buf_lock(&reg.lock);
	trace_thr_t *list = reg.all;
	buf_unlock(&reg.lock);
	for (trace_thr_t *t = list; t; t = t->next) {
		if (t->dead)
			continue;
		if (others_events && t != self && !atomic_exchange(&t->flushing, 1)) {
			trace_ev_fold_dropped(t);
			trace_chunk_write(t->thread_no, &t->ev, MEMINST_TRACE_STREAM_EVENTS);
			atomic_store(&t->flushing, 0);
		}
		if (!atomic_exchange(&t->sig_busy, 1)) {
			trace_chunk_write(t->thread_no, &t->sig, MEMINST_TRACE_STREAM_SIGNAL);
			atomic_store(&t->sig_busy, 0);
		}
	}
	buf_lock(&trace_chunk_proc.lock);
	trace_chunk_proc_flush_locked();
	buf_unlock(&trace_chunk_proc.lock);
	trace_tls.busy--;
}

/* The end: the writer thread writes what it has queued and ends first, so
** that every thread's chunks keep their order; from then on flushes write
** themselves. */
void trace_flush_all(void)
{
	trace_writer_stop();
	buf_flush_threads(true);
}

/* The caller reads the file back next: the writer's queue goes out too. */
void trace_flush_running(void)
{
	buf_flush_threads(false);
	trace_writer_drain();
}

/*
** Before an exec (trace_sigwrap.c).  A new program that does not load the
** library (a static binary, a set-user-ID one, an environment without
** LD_PRELOAD: env -i, env LD_PRELOAD=other.so) never ends this process's
** trace, and the launcher said it was cut ("a write failed, the process was
** killed ...", with -q too) although nothing was lost.  So when the caller
** is the only thread of the program left (its buffers are then all it has:
** a dead thread's went out as it ended), everything goes out and END
** follows, as at death: trace_flush_at_death waits for no lock, and an exec
** may come from a signal handler that interrupted the runtime.  A new
** program that loads the library writes a file of its own beside this one
** (trace_file_image);
** after a failed exec the records go on after the END, which readers take
** as the end and read past (the writer thread has ended: each flush writes
** its own chunk).  With other threads of the program alive nothing is
** done: their events streams cannot be taken while they run, so such a
** trace stays cut.  meminst's own thread (the snapshot service of
** interval=) is not the program's: its streams are left, the rest goes
** out and END follows (with it, a traced program's trace before its exec
** was cut after its modules, and the session lost its calls).  Not
** in a vfork child (the buffers are its parent's), nor before the file is
** open (a fork child's opens on first use), nor for the in-process
** profiler's sink.
*/
static void buf_flush_dying(bool program_only);

void trace_end_before_exec(void)
{
	if (trace_sink || !trace_flush_owner() || atomic_load(&trace_fio_fd) < 0)
		return;
	trace_thr_t *self = trace_tls.rec;
	for (trace_thr_t *t = __atomic_load_n(&reg.all, __ATOMIC_ACQUIRE); t; t = t->next)
		if (!t->dead && t != self && !t->internal)
			return;
	buf_flush_dying(true);
}

/* A lock or stream flag taken within a few tries, or not: at death the
** thread that holds it may be the one this handler interrupted. */
static bool buf_try(_Atomic int *l)
{
	for (int i = 0; i < 100; i++) {
		if (!atomic_exchange(l, 1))
			return true;
		alloc_sys_yield();
	}
	return false;
}

bool trace_flush_owner(void) { return getpid() == buf_owner_pid; }

/*
** At death (a fatal signal, _exit; trace_death.c): every thread's buffers
** out, from a signal handler.  The writer thread first writes what it has
** queued and ends (chunks keep their order; it runs with every signal
** blocked, so it is never the interrupted one).  Then no lock is waited
** for, no CLOCK record is added, a stream that stays busy is left; the
** process ends right after, so a thread still writing its events stream
** can at worst repeat or lose its last records.  program_only (before an
** exec, trace_end_before_exec): meminst's own thread's streams are left.
*/
static void buf_flush_dying(bool program_only)
{
	trace_tls.busy++;
	/* the writer's queue first, waited for a bounded time (the thread this
	** handler interrupted may hold the queue's lock); if it does not end,
	** the events streams are left so that no chunks go out of order */
	bool events = trace_writer_stop_at_death(), all = events;
	for (trace_thr_t *t = __atomic_load_n(&reg.all, __ATOMIC_ACQUIRE); t; t = t->next) {
		if (t->dead || (program_only && t->internal))
			continue;
		if (events && buf_try(&t->flushing)) {
			trace_chunk_write(t->thread_no, &t->ev, MEMINST_TRACE_STREAM_EVENTS);
			atomic_store(&t->flushing, 0);
		} else {
			all = false;
		}
		if (buf_try(&t->sig_busy)) {
			trace_chunk_write(t->thread_no, &t->sig, MEMINST_TRACE_STREAM_SIGNAL);
			atomic_store(&t->sig_busy, 0);
		} else {
			all = false;
		}
	}
	if (buf_try(&trace_chunk_proc.lock)) {
		if (all) /* else the file is cut: records of a stream are missing */
			trace_chunk_proc_end_locked();
		else
			trace_chunk_proc_flush_locked();
		buf_unlock(&trace_chunk_proc.lock);
	}
	trace_tls.busy--;
}

void trace_flush_at_death(void)
{
	buf_flush_dying(false);
}

/* At exit: everything out, then the descriptor is closed so that records
** made later (other libraries' destructors) are dropped, not half written. */
void trace_writer_close(void)
{
	trace_writer_stop(); /* what it has queued first: chunks keep their order */
	trace_file_check();  /* the program may have closed our descriptor */
	trace_modules_check();
	trace_flush_all();
	buf_lock(&trace_chunk_proc.lock);
	trace_chunk_proc_end_locked();
	buf_unlock(&trace_chunk_proc.lock);
	trace_fio_close(false);
}

bool trace_file_is_open(void) { return atomic_load(&trace_fio_fd) >= 0 || buf_reopen_in_child; }

/*
** The end of a CPU profile on request (alloc_switch.c): when nothing
** traces or samples any more and every chunk has been written
** (trace_flush_running), the file's descriptors are closed and the writer
** thread ends, so that the process is left as it was before the profile
** (libunwind's own descriptors, made once for the process's life, stay).
** Samples of a handler that outlived the stop are dropped.  The next start
** opens the file again (trace_file_ensure), where the threads that have a
** record say who they are again.  True if the file was closed.
*/
bool trace_file_close_idle(void)
{
	if (trace_sink || atomic_load(&trace_on) || trace_call_hook || trace_prof_on || meminst_sample_active())
		return false;
	buf_lock(&buf_open_lock);
	bool was = trace_fio_close(true);
	buf_restate |= was;
	trace_path[0] = 0; /* the profile's name: a later start names its own file */
	buf_unlock(&buf_open_lock);
	trace_writer_end_closed();
	return was;
}

/* A reopened file: each living thread's THREAD_START, the name it has now,
** into its signal stream (where its samples are; readers take its identity
** from there, as for a spare's, trace_sig_append).  Normal context. */
static void buf_restate_threads(void)
{
	for (trace_thr_t *t = __atomic_load_n(&reg.all, __ATOMIC_ACQUIRE); t; t = t->next) {
		if (t->dead || !t->started)
			continue;
		uint64_t rec[4] = {MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_START, trace_now()),
				   (uint32_t)t->tid | (uint64_t)t->parent_no << 32, 0, 0};
		char path[64], name[17] = {0};
		alloc_fmt(path, sizeof path, "/proc/self/task/%d/comm", t->tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, name, 16) : 0;
		if (fd >= 0)
			close(fd);
		if (n > 0 && name[n - 1] == '\n')
			name[n - 1] = 0;
		memcpy(rec + 2, name, 16);
		trace_sig_append_to(t, t->tid, rec, 4);
	}
}

/* ---------------------------------------------------------------- start -- */

static int buf_open_file(int pid, bool child)
{
	char path[4096];
	if (alloc_seccomp_refuses(ALLOC_SC_TRACE)) /* a child forked under a filter: said when it came */
		return -1;
	const char *tmpl = trace_path[0] ? trace_path : "meminst.%p.trace";
	if (trace_path_expand(tmpl, pid, path, sizeof path) < 0) {
		alloc_log("trace file name too long: %s", tmpl);
		return -1;
	}
	if (child && !strstr(tmpl, "%p")) { /* the parent's name is the parent's */
		size_t n = strlen(path);
		if (alloc_fmt(path + n, sizeof path - n, ".%d", pid) >= (int)(sizeof path - n))
			return -1;
	}
	if (path[0] != '/' && !child) { /* a later chdir must not move a forked child's file */
		char cwd[4096];
		if (getcwd(cwd, sizeof cwd) && strlen(cwd) + strlen(path) + 2 < sizeof trace_fio_path)
			alloc_fmt(trace_fio_path, sizeof trace_fio_path, "%s/%s", cwd, path);
		else
			alloc_fmt(trace_fio_path, sizeof trace_fio_path, "%s", path);
	} else {
		alloc_fmt(trace_fio_path, sizeof trace_fio_path, "%s", path);
	}
	if (trace_file_image(trace_fio_path, sizeof trace_fio_path) < 0)
		return -1;
	int fd = trace_file_create(trace_fio_path);
	if (fd < 0)
		return -1;
	if (trace_chunk_write_header(fd) < 0) {
		alloc_log_run(NULL, "cannot write trace file %s: %s (errno %d)", trace_fio_path, strerror(errno),
			      errno);
		close(fd);
		return -1;
	}
	trace_fio_start(fd, sizeof(struct meminst_trace_header));
	buf_owner_pid = getpid();
	trace_chunk_proc_begin();
	return 0;
}

/* The child of a fork writes its own file: PATH with %p expanded to the
** child's pid, or PATH.PID when PATH has no %p.  Opened on first use,
** from normal context (the atfork handler only marks it). */
static void buf_reopen_child(void)
{
	buf_lock(&buf_open_lock);
	if (buf_reopen_in_child) {
		buf_reopen_in_child = false;
		if (buf_open_file(alloc_ids_name(NULL), true) < 0)
			buf_open_failed = true;
	}
	buf_unlock(&buf_open_lock);
}

/* In the child: only the forking thread is left.  The parent's buffered
** records are the parent's (it writes them); the child starts empty, with
** thread numbers from 1 again, in its own file. */
void trace_after_fork_child(void)
{
	atomic_store(&buf_open_lock, 0);
	atomic_store(&trace_chunk_proc.lock, 0);
	atomic_store(&reg.lock, 0);
	trace_writer_after_fork_child();
	trace_clock_after_fork_child();
	buf_owner_pid = getpid();
	if (trace_fio_close(false)) /* the parent's */
		buf_reopen_in_child = !trace_sink;
	trace_thr_t *self = trace_tls.rec;
	/* the other threads' trace_cur went with them */
	atomic_store(&trace_armed, atomic_load(&trace_on) + (trace_call_hook != NULL) + (trace_cur != NULL));
	reg.pool = NULL;
	reg.next_no = 1;
	for (trace_thr_t *t = reg.all; t; t = t->next) {
		atomic_store(&t->flushing, 0);
		atomic_store(&t->sig_busy, 0);
		if (t != self && !t->dead) {
			t->dead = true;
			t->pool_next = reg.pool;
			reg.pool = t;
		}
	}
	if (self) {
		trace_stream_restart(&self->ev), self->ev.seq = self->ev.lost = 0;
		trace_stream_restart(&self->sig), self->sig.seq = self->sig.lost = 0;
		self->thread_no = reg.next_no++;
		self->parent_no = 0;
		self->pre.at = 0; /* its CPU clock and switch counts start again */
		self->tid = alloc_sys_gettid();
		char name[17] = {0};
		prctl(PR_GET_NAME, name, 0, 0, 0);
		uint64_t rec[4] = {MEMINST_TREC_HEAD(MEMINST_TREC_THREAD_START, trace_now()),
				   (uint32_t)self->tid, 0, 0};
		memcpy(rec + 2, name, 16);
		memcpy(self->ev.pos, rec, sizeof rec);
		self->ev.pos += 4;
		if (self->gen) { /* still tracing: say so at the top of the new file */
			uint64_t on = MEMINST_TREC_HEAD(MEMINST_TREC_TRACE_ON, trace_now());
			*self->ev.pos++ = on;
		}
		trace_stream_wrote(&self->ev);
	}
}

static void buf_atfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	trace_after_fork_child();
	trace_prof_after_fork_child();
	errno = saved_errno;
}

void trace_child_reset(void)
{
	if (reg.atfork_done) /* else nothing was open */
		buf_atfork_child();
	trace_death_postfork_child();
}

/* Open the trace file and write its header, PROCESS and MODULE records,
** once.  Normal context. */
int trace_file_ensure(void)
{
	int rc = 0;
	trace_tls.busy++;
	buf_lock(&buf_open_lock);
	if (buf_reopen_in_child) {
		buf_unlock(&buf_open_lock);
		buf_reopen_child();
		buf_lock(&buf_open_lock);
	}
	if (atomic_load(&trace_fio_fd) >= 0 || (trace_sink && trace_clock))
		goto out;
	if (buf_open_failed) {
		rc = -1;
		goto out;
	}
	trace_clock_setup(trace_want_clock);
	if (!reg.atfork_done) {
		reg.key_ok = pthread_key_create(&reg.key, buf_thread_key_destructor) == 0;
		pthread_atfork(NULL, NULL, buf_atfork_child);
		reg.atfork_done = true;
	}
	if (trace_sink)
		trace_chunk_proc_begin();
	else if (buf_open_file(alloc_ids_name(NULL), false) < 0) {
		buf_open_failed = true;
		rc = -1;
	} else if (buf_restate) {
		buf_restate = false;
		buf_restate_threads();
	}
out:
	buf_unlock(&buf_open_lock);
	if (rc == 0)
		trace_modules_check();
	trace_tls.busy--;
	if (rc == 0 && alloc_opts.sample_hz) /* the sampler is starting */
		trace_records_prepare();
	if (rc == 0)
		trace_death_arm();
	return rc;
}
