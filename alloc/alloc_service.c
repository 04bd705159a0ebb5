/*
** alloc_service.c — the service thread: snapshots on signal, at intervals,
** at peaks, and on request through the control channel.
**
** The thread is started from the library's constructor (never from inside
** malloc) when MEMINST asks for one of these triggers.  It blocks every
** signal, so it never takes one meant for the program, and runs guarded
** for its whole life, so SQLite's allocations are not counted.
**
**   signal    the handler only writes one byte to a pipe (async-signal-
**             safe); the thread takes and stores the snapshot.
**   peak      once the total has passed the next peak threshold, the
**             thread whose free would take it down from its highest by
**             a margin captures the snapshot itself (the state at the
**             turn: alloc_service_peak.c) and passes it here to be stored:
**             SQLite never runs on the allocation path.
**   interval  poll's timeout; interval=auto doubles the period after
**             every ALLOC_INTERVAL_AUTO_STEP snapshots, up to
**             ALLOC_INTERVAL_AUTO_MAX_NS.
**   rss, cgroup  snapshot_at=rss:LIMIT, cgroup:LIMIT: the thread reads the
**             counters every ALLOC_WATCH_PERIOD_MS (alloc_watch.c) and
**             stores a map snapshot, made durable, when one is due.
**   control   an abstract UNIX socket "\0meminst-control-<pid>"; a peer
**             of another uid is refused as soon as it is accepted
**             (SO_PEERCRED), and no client is ever waited on; its
**             requests and answers are alloc_control.c's.
**
** In a child created by fork the thread does not exist; with control=on
** the child starts its own (its channel named by its own pid), else it
** still stores its exit snapshot and answers the API (see meminst(7)).
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*
** The thread's stack.  glibc's default is the stack limit (8 MiB), address
** space a program under RLIMIT_AS no longer has; the deepest the thread
** was seen to go (SQLite's stores, a leak scan, a control request) touched
** 24 KiB of it: 512 KiB leaves twenty times that.
*/
#define SVC_STACK ((size_t)512 << 10)

static struct service {
	pthread_mutex_t busy;     /* held while the thread stores a snapshot */
	int wake[2];              /* signal handler and peak -> thread */
	int listen_fd;
	ino_t wake_ino, listen_ino; /* to know them in the program's table */
	bool own_table;           /* the thread's descriptors are its own */
	_Atomic bool table_ready; /* own_table is known */
	bool running;
	_Atomic bool registered;  /* the thread is known as meminst's own */
	_Atomic bool quit, gone;  /* alloc_service_stop: asked, done */
	_Atomic pid_t tid;        /* the thread's, for a stop to wait until it has left */
	bool ending;              /* the exit's flush ran: no interval snapshot
				     more (under busy; see alloc_service_flush) */
} svc = {.busy = PTHREAD_MUTEX_INITIALIZER, .wake = {-1, -1}, .listen_fd = -1};

/* ------------------------------------------------------------ triggers -- */

/* The program's descriptor fd is still ours (a daemon may have closed it
** and opened a file of its own under that number).  Async-signal-safe. */
static bool svc_fd_ours(int fd, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == ino;
}

static ino_t svc_fd_ino(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* A snapshot signal came; the pipe is only the fast way to say so. */
static _Atomic bool svc_sig_pending;
/* Without the pipe (a daemon closed it in its table), the thread still
** looks at svc_sig_pending and the peak image this often. */
#define SVC_RECHECK_MS 1000

/* Wake the thread: one byte to the pipe, never to a file of the program's
** (async-signal-safe). */
void alloc_service_wake(char c)
{
	if (svc_fd_ours(svc.wake[1], svc.wake_ino) && write(svc.wake[1], &c, 1) < 0) {
		/* the pipe is full: a snapshot is pending already */
	}
}

/* A signal handler's whole job (the snapshot and the switch signal): set
** its flag, then wake the thread, which looks at the flags; errno kept. */
void alloc_service_signal_note(_Atomic bool *pending, char c)
{
	int saved_errno = errno;
	atomic_store(pending, true);
	alloc_service_wake(c);
	errno = saved_errno;
}

static void svc_signal_handler(int sig)
{
	(void)sig;
	alloc_service_signal_note(&svc_sig_pending, 's');
}

/* A control request is carried out holding what a store holds. */
void alloc_service_hold(void)
{
	pthread_mutex_lock(&svc.busy);
}

void alloc_service_release(void)
{
	pthread_mutex_unlock(&svc.busy);
}

/* -------------------------------------------------------------- thread -- */

/*
** Processes sharing one snapshot file take turns.  The thread never waits
** for another process's store: its stores return ALLOC_SQ_BUSY at once
** (alloc_sqlite_no_wait), and it tries again once svc_busy_until has
** passed, after a pause that doubles from 1 ms to 64 ms while the file
** stays busy.  Meanwhile a peak image waits (the latest one), a signal
** stays pending, and an interval snapshot is taken afresh when the turn
** comes; the store lock is never held while waiting, so a fork in the
** program does not wait for another process either.  (Waiting in SQLite's
** busy handler, under the store lock, made a parent forking children
** that store into its file wait for their stores in every fork.)
*/
#define SVC_BUSY_PAUSE_MAX_NS 64000000LL
static int64_t svc_busy_until, svc_busy_pause;

static bool svc_busy(void)
{
	return svc_busy_until && alloc_snap_now(CLOCK_MONOTONIC) < svc_busy_until;
}

static void svc_busy_note(int id)
{
	if (id != ALLOC_SQ_BUSY) {
		svc_busy_pause = 0;
		return;
	}
	svc_busy_pause = svc_busy_pause ? svc_busy_pause * 2 : 1000000;
	if (svc_busy_pause > SVC_BUSY_PAUSE_MAX_NS)
		svc_busy_pause = SVC_BUSY_PAUSE_MAX_NS;
	svc_busy_until = alloc_snap_now(CLOCK_MONOTONIC) + svc_busy_pause;
}

/* Store an image and free it; false when the file was busy: a peak then
** waits for the next turn (unless a newer one came), other images go. */
static bool svc_store(alloc_snap_t *im, bool peak)
{
	int id = svc_busy() ? ALLOC_SQ_BUSY : alloc_snap_store_configured(im);
	svc_busy_note(id);
	if (id != ALLOC_SQ_BUSY || !peak || !alloc_service_peak_keep(im))
		alloc_snap_free(im);
	return id != ALLOC_SQ_BUSY;
}

/*
** Store what is pending.  The signal handler sets svc_sig_pending before it
** writes its byte, so the flag alone says whether a signal came: the bytes
** only wake the thread.  Only the thread reads the pipe (from_thread): with
** a table of its own, the program's table no longer holds the read end, and
** its number may be a file of the program's; a byte the exit's flush leaves
** there wakes the thread for nothing (when the bytes counted too, a signal
** raised just before exit gave two signal snapshots).
*/
static void svc_drain_wake(bool from_thread)
{
	char buf[64];
	bool sig = atomic_exchange(&svc_sig_pending, false);
	alloc_switch_signal_take();
	while ((from_thread || !svc.own_table) && read(svc.wake[0], buf, sizeof buf) > 0)
		;
	if (!from_thread)
		svc_busy_until = 0; /* the exit's flush waits for its turn */
	alloc_snap_t *im = alloc_service_peak_take();
	if (im)
		svc_store(im, true);
	if (sig && !svc_busy())
		svc_busy_note(alloc_snap_take_configured("signal", true));
	if (sig && svc_busy()) /* at the file's next turn */
		atomic_store(&svc_sig_pending, true);
}

/*
** An interval snapshot.  A peak captured while the thread was about to take
** it is stored in the order the two were taken, so that the file numbers
** its snapshots in time order (the launcher then takes the file for the
** session as it is, rather than copying it to renumber them).
*/
/* Interval snapshots not taken for want of memory (said at the first). */
static unsigned svc_nomem;

static bool svc_interval(void)
{
	if (alloc_mode == MEMINST_MODE_OFF)
		return true; /* dormant, never switched on: nothing counted */
	alloc_snap_t *im = alloc_snap_capture(!alloc_opts.interval_status, "interval");
	bool said = !im && errno == EIO; /* its temporary file: said */
	alloc_snap_t *peak = alloc_service_peak_take();
	bool peak_first = peak && (!im || peak->time_ns <= im->time_ns), stored = true;
	if (peak_first)
		svc_store(peak, true);
	if (im)
		stored = svc_store(im, false);
	else if (!said && svc_nomem++ == 0) /* every 10 ms under ulimit -v: once */
		alloc_log("no memory for the interval snapshot (skipped while memory is short; said once)");
	if (peak && !peak_first)
		svc_store(peak, true);
	return stored;
}

/*
** snapshot_at=rss:, cgroup: a map snapshot stored with fsync, since the
** process may be killed next.  A file busy with another process's store:
** tried again at the next check.
*/
static void svc_watch(void)
{
	unsigned due = alloc_watch_check();
	if (!due || svc.ending || svc_busy())
		return;
	pthread_mutex_lock(&svc.busy);
	alloc_snap_t *im = svc.ending ? NULL : alloc_snap_capture(true, alloc_watch_trigger(due));
	if (im) {
		im->durable = true;
		int id = alloc_snap_store_configured(im);
		svc_busy_note(id);
		if (id != ALLOC_SQ_BUSY)
			alloc_watch_stored(due);
		alloc_snap_free(im);
	}
	pthread_mutex_unlock(&svc.busy);
}

/*
** With snapshot_at=signal: is the signal still ours to take?  Looked at on
** the thread's recheck (SVC_RECHECK_MS): the program may have set its
** action (SIG_IGN, a handler of its own), or block the signal in every
** thread, so that a kill sent for a snapshot stays pending (ShdPnd) and
** no snapshot comes.  Each is said once, on one line.
*/
static void svc_signal_check(void)
{
	static bool said_action, said_blocked;
	static int pending_seen; /* consecutive checks that found it pending */
	int sig = alloc_opts.snapshot_signal;
	alloc_switch_signal_check();
	if (!alloc_opts.snapshot || !(alloc_opts.snapshot_at & ALLOC_SNAP_SIGNAL))
		return;
	struct sigaction cur;
	if (!said_action && __sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != svc_signal_handler) {
		said_action = true;
		alloc_note("the program set its own action for signal %d (%s), the snapshot signal: snapshots "
			  "on signal are not taken (snapshot_signal= chooses another)", sig,
			  cur.sa_handler == SIG_IGN ? "ignored" : cur.sa_handler == SIG_DFL ? "the default" :
			  "a handler of its own");
	}
	char buf[4096];
	const char *p;
	unsigned long long pend = 0;
	if (said_blocked || alloc_sys_read_file("/proc/self/status", buf, sizeof buf) < 0 ||
	    !(p = strstr(buf, "\nShdPnd:")))
		return;
	pend = strtoull(p + 8, NULL, 16);
	pending_seen = sig <= 64 && (pend >> (sig - 1)) & 1 ? pending_seen + 1 : 0;
	if (pending_seen >= 2) {
		said_blocked = true;
		alloc_note("signal %d, the snapshot signal, is pending: the program blocks it in every thread "
			  "(sigprocmask, pthread_sigmask); no snapshot comes until it unblocks it", sig);
	}
}

/*
** The program set RLIMIT_NOFILE under the number of descriptors the
** thread polls (poll(2) says EINVAL; the loop took it for its end, and
** interval, peak and signal snapshots stopped without a word): it waits
** the timeout without them, and finds signals and peaks by their flags at
** each turn; the control channel's requests wait.  Said once.
*/
static int svc_wait_limited(int timeout)
{
	static bool said;
	if (!said) {
		said = true;
		alloc_note("the program's descriptor limit (RLIMIT_NOFILE) is under the snapshot service's "
			   "descriptors: it polls none of them; control requests are not answered");
	}
	return poll(NULL, 0, timeout);
}

static void *svc_main(void *arg)
{
	(void)arg;
	alloc_tls.guard = 1; /* for life: this thread's allocations are ours */
	atomic_store(&svc.tid, alloc_sys_gettid());
	alloc_own_thread_enter();
	atomic_store(&svc.registered, true);
	int64_t period = (int64_t)alloc_opts.interval_ns, next = 0, checked_ms = 0, watch_ms = 0;
	bool watching = alloc_opts.snapshot && (alloc_opts.snapshot_at & ALLOC_SNAP_WATCH);
	unsigned at_period = 0; /* interval=auto: snapshots taken at this period */
	if (period)
		next = alloc_snap_now(CLOCK_MONOTONIC) + period;
	/* stores open files while the program runs: in a table of our own */
	int keep[] = {STDERR_FILENO, svc.wake[0], svc.listen_fd};
	svc.own_table = alloc_sys_own_fd_table(keep, sizeof keep / sizeof keep[0]) == 0;
	if (svc.own_table) /* its snapshot file stays open between stores */
		alloc_sqlite_keep_here();
	alloc_sqlite_no_wait(true); /* another process's store: later, not waited for */
	atomic_store(&svc.table_ready, true);
	for (;;) {
		struct pollfd p[2 + ALLOC_CONTROL_CONN_MAX] = {{svc.wake[0], POLLIN, 0}, {svc.listen_fd, POLLIN, 0}};
		int nfds = svc.listen_fd >= 0 ? 2 : 1, timeout = -1;
		for (int i = 0; i < ALLOC_CONTROL_CONN_MAX && svc.listen_fd >= 0; i++)
			p[nfds++] = (struct pollfd){alloc_control_fd(i), POLLIN, 0}; /* -1: skipped by poll */
		/* the next interval, not before the file's turn; a pending
		** peak or signal at its turn */
		int64_t at = INT64_MAX;
		if (period)
			at = next > svc_busy_until ? next : svc_busy_until;
		if ((atomic_load(&svc_sig_pending) || alloc_service_peak_pending()) && svc_busy() &&
		    svc_busy_until < at)
			at = svc_busy_until;
		if (at != INT64_MAX) {
			int64_t left = at - alloc_snap_now(CLOCK_MONOTONIC);
			timeout = left > 0 ? (int)((left + 999999) / 1000000) : 0;
		}
		timeout = alloc_control_expire(timeout);
		if (timeout < 0 || timeout > SVC_RECHECK_MS)
			timeout = SVC_RECHECK_MS;
		if (watching && timeout > alloc_watch_period_ms())
			timeout = alloc_watch_period_ms();
		while (nfds > 2 && p[nfds - 1].fd < 0)
			nfds--; /* poll refuses more entries than RLIMIT_NOFILE, -1 ones too */
		int r = poll(p, (nfds_t)nfds, timeout);
		if (r < 0 && errno == EINVAL) /* a limit under that (the program set it): wait blind */
			r = svc_wait_limited(timeout);
		alloc_snap_spare_trim();
		int64_t now_ms = alloc_snap_now(CLOCK_MONOTONIC) / 1000000;
		if (watching && now_ms - watch_ms >= alloc_watch_period_ms() && !atomic_load(&svc.quit)) {
			watch_ms = now_ms;
			svc_watch();
		}
		if (now_ms - checked_ms >= SVC_RECHECK_MS) {
			checked_ms = now_ms;
			svc_signal_check();
			if (svc.own_table) /* (its reads open files: never beside the program's) */
				alloc_exit_if_program_gone();
		}
		if ((r < 0 && errno != EINTR) || atomic_load(&svc.quit))
			break;
		if (r > 0 && ((p[0].revents | (nfds > 1 ? p[1].revents : 0)) & POLLNVAL)) {
			/* The program closed our descriptors (daemons close them
			** all): stop rather than spin; exit and API snapshots
			** still work. */
			alloc_log("the program closed the snapshot service's descriptors; signal, "
				  "interval, peak and control snapshots stop here");
			svc.running = false;
			break;
		}
		if ((r > 0 && (p[0].revents & POLLIN)) ||
		    ((atomic_load(&svc_sig_pending) || alloc_service_peak_pending()) && !svc_busy())) {
			pthread_mutex_lock(&svc.busy);
			svc_drain_wake(true);
			pthread_mutex_unlock(&svc.busy);
		}
		for (int i = 2; r > 0 && i < nfds; i++) {
			if (p[i].fd >= 0 && p[i].revents)
				alloc_control_ready(i - 2, !(p[i].revents & POLLNVAL));
		}
		if (r > 0 && nfds > 1 && (p[1].revents & POLLIN))
			alloc_control_accept(svc.listen_fd);
		if (period && alloc_snap_now(CLOCK_MONOTONIC) >= next && !svc_busy()) {
			pthread_mutex_lock(&svc.busy);
			bool stored = !alloc_opts.snapshot || svc.ending || svc_interval();
			pthread_mutex_unlock(&svc.busy);
			if (!stored) /* taken afresh at the next turn */
				continue;
			next += period;
			if (alloc_opts.interval_auto && ++at_period == ALLOC_INTERVAL_AUTO_STEP &&
			    period < (int64_t)ALLOC_INTERVAL_AUTO_MAX_NS) {
				at_period = 0;
				period = period > (int64_t)ALLOC_INTERVAL_AUTO_MAX_NS / 2 ?
					 (int64_t)ALLOC_INTERVAL_AUTO_MAX_NS : 2 * period;
			}
			/* late by a period or more (the process was stopped, a long
			** snapshot): one snapshot, not a burst catching up the missed ones */
			int64_t now = alloc_snap_now(CLOCK_MONOTONIC);
			if (next <= now)
				next = now + period;
		}
	}
	alloc_sqlite_kept_release();
	alloc_own_thread_leave();
	atomic_store(&svc.gone, true);
	return NULL;
}

/*
** End the thread (a seccomp filter is coming that refuses futex: with a
** thread of ours beside it, the program's own locks would wait in futex
** and be killed).  Waits for a store in progress.  Signal, interval, peak
** and control snapshots stop; exit and API snapshots are the caller's.
*/
void alloc_service_stop(void)
{
	if (!svc.running)
		return;
	alloc_switch_sample_quit();
	alloc_service_peak_off();
	atomic_store(&svc.quit, true);
	alloc_service_wake('q');
	while (!atomic_load(&svc.gone))
		alloc_sys_yield(); /* at most a poll timeout (SVC_RECHECK_MS) without the pipe */
	alloc_own_thread_wait_gone(atomic_load(&svc.tid));
	svc.running = false;
}

/*
** At exit: store what the thread has been asked for and not done yet (a
** peak captured, a signal received, just before the end), waiting for a
** store in progress.  The process is going away with the thread in it:
** an interval snapshot begun after this would be cut by the end of the
** process and leave a hot journal beside the file (one run in five with
** interval=10ms), so none is begun.
*/
bool alloc_service_running(void)
{
	return svc.running;
}

bool alloc_service_own_table(void)
{
	return svc.own_table;
}

void alloc_service_flush(void)
{
	/* A child of a raw clone has a copy of the lock, held by the parent's
	** service thread at that instant in one run in a few: taken as alone
	** first (its copy of svc reset), else it waited for ever in exit(3).
	** A child in its parent's memory (vfork) leaves the parent's alone. */
	if (!alloc_clone_adopt() || !svc.running)
		return;
	pthread_mutex_lock(&svc.busy);
	svc.ending = true;
	svc_drain_wake(false);
	pthread_mutex_unlock(&svc.busy);
}

static bool svc_launch(void);
static void svc_postfork_child(void);

/* The wake pipe and the control socket, where they are still ours in the
** program's table (it may have closed or reused their numbers); the
** control connections in it (else in the ended thread's own table). */
static void svc_forget_fds(void)
{
	for (int i = 0; i < 2; i++)
		if (svc_fd_ours(svc.wake[i], svc.wake_ino))
			close(svc.wake[i]);
	svc.wake[0] = svc.wake[1] = -1;
	if (svc_fd_ours(svc.listen_fd, svc.listen_ino))
		close(svc.listen_fd);
	svc.listen_fd = -1;
	alloc_control_forget(!svc.own_table);
}

/*
** unshare(CLONE_NEWUSER) (unshare -r, nsenter, rootless sandboxes) and
** setns into a user or mount namespace need a process of one thread: the
** kernel refuses them with EINVAL while the service thread runs beside
** the program, and the program took the refusal for its own.  So a call
** refused with EINVAL while the thread runs is made again with the thread
** ended, and the thread starts again afterwards (in the new namespace),
** whatever the second call's answer, which is the program's (its errno
** too).  The wall-clock sampler's two threads likewise.  Snapshots asked for in between are taken when the thread is back.
*/
static int svc_task_count(void)
{
	char buf[4096];
	if (alloc_sys_read_file("/proc/self/status", buf, sizeof buf) < 0)
		return -1;
	const char *t = strstr(buf, "\nThreads:");
	return t ? atoi(t + 9) : -1;
}

/* An ended thread may still be counted a moment after its join. */
static void svc_wait_alone(void)
{
	const struct timespec ms = {0, 1000000};
	for (int waited = 0; waited < 50 && svc_task_count() > 1; waited++)
		nanosleep(&ms, NULL);
}

long alloc_service_single_threaded(long (*call)(long, long), long a, long b)
{
	long rc = call(a, b);
	if (rc == 0 || errno != EINVAL || alloc_tls.guard)
		return rc;
	bool service = svc.running, wall = trace_wall_pause();
	if (!service && !wall) {
		errno = EINVAL;
		return rc;
	}
	if (service)
		alloc_service_stop();
	svc_wait_alone();
	rc = call(a, b);
	int saved_errno = errno;
	if (wall)
		trace_wall_resume();
	if (!service) {
		errno = saved_errno;
		return rc;
	}
	svc_forget_fds(); /* what is left of the ended thread */
	atomic_store(&svc.quit, false);
	atomic_store(&svc.gone, false);
	atomic_store(&svc.registered, false);
	atomic_store(&svc.table_ready, false);
	svc_launch();
	errno = saved_errno;
	return rc;
}

/*
** A program that makes sure it is alone before it drops its capabilities
** or enters its sandbox counts meminst's threads too: Chromium's zygote
** aborts unless the link count of /proc/self/task says one thread (with
** --control, every headless run crashed).  When the program looks (the
** stat hooks, alloc_hooks.c), meminst's threads end, for good in this
** process and the children it forks, as under a seccomp filter that
** refuses them; said once.  Its other threads are its own business.
*/
void alloc_service_alone(void)
{
	/* a child of a raw clone (Chromium's before its exec) has none of
	** them, only the parent's records of them: taken as alone first */
	if (alloc_tls.guard || alloc_own_threads_refused() || !alloc_clone_adopt())
		return;
	bool service = svc.running, wall = trace_wall_pause();
	if (!service && !wall)
		return;
	atomic_fetch_or(&alloc_sc_refused, ALLOC_SC_NEW_THREADS);
	if (service) {
		alloc_service_stop();
		svc_forget_fds();
	}
	svc_wait_alone();
	alloc_log_noted("the program counts its threads (/proc/self/task), as a sandbox does before it "
			"locks itself in: meminst's threads end here (signal, interval, peak and control "
			"snapshots%s off)", wall ? ", wall-clock sampling" : "");
}

/*
** In a child of fork the thread is gone: forget it, and drop what was
** shared with the parent (its pending peak, the wake pipe a signal in the
** child would otherwise use to make the parent store a snapshot, the
** control socket).  With control=on the child starts a service of its own
** (a forked worker answers inspect --pid too, and takes its interval, peak
** and signal snapshots); otherwise its exit snapshot and API calls still
** work.  Child handlers run in the order they were registered, so those of
** the locks and of alloc_exit.c have run: the new thread can allocate and
** register itself.  After a clone without fork (alloc_clone_adopt) no
** thread is started (relaunch false): that is found inside the allocator.
*/
void alloc_service_child_reset(bool relaunch)
{
	bool had_channel = relaunch && svc.listen_fd >= 0;
	svc.running = false;
	svc_nomem = 0;
	atomic_store(&svc.registered, false);
	atomic_store(&svc.table_ready, false);
	pthread_mutex_init(&svc.busy, NULL);
	alloc_service_peak_forget();
	svc_forget_fds(); /* the parent's: only what is still ours in the child's table */
	if (had_channel) {
		int saved_errno = errno; /* fork's caller sees fork's errno */
		svc_launch();
		errno = saved_errno;
	}
}

/*
** The wake pipe, the control socket when asked for, and the thread, with
** every signal blocked while it is created so that it starts with all of
** them blocked.  False (said) if the thread could not be started.
*/
static bool svc_launch(void)
{
	if (alloc_own_threads_refused()) /* a filter's: its calls too */
		return false;
	if (pipe2(svc.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		alloc_log("cannot start the snapshot service: %s", strerror(errno));
		return false;
	}
	alloc_control_forget(false);
	if (alloc_opts.control)
		svc.listen_fd = alloc_sys_fd_high(alloc_control_open());
	svc.wake[0] = alloc_sys_fd_high(svc.wake[0]);
	svc.wake[1] = alloc_sys_fd_high(svc.wake[1]);
	svc.wake_ino = svc_fd_ino(svc.wake[0]);
	svc.listen_ino = svc_fd_ino(svc.listen_fd);
	if (alloc_opts.control) /* before the service thread's table is its own */
		alloc_switch_sample_launch();
	sigset_t old;
	alloc_sys_signals_off(&old);
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, SVC_STACK);
	alloc_guard_enter();
	int rc = alloc_own_thread_create(pthread_create, &th, &at, svc_main, NULL);
	alloc_guard_exit();
	pthread_attr_destroy(&at);
	alloc_sys_signals_on(&old);
	/* its table is a copy of the program's as it is when it is made: that
	** must be before the program runs (it may close our descriptors) */
	while (rc == 0 && !atomic_load(&svc.table_ready))
		alloc_sys_yield();
	if (rc != 0) {
		if (!alloc_own_threads_refused())
			alloc_log("cannot start the snapshot service thread: %s; no interval, peak, signal or "
				  "rss/cgroup snapshots, no control channel (the exit snapshot is still stored)",
				  strerror(rc));
		return false;
	}
	pthread_detach(th);
	/* only the thread reads the pipe and the socket: with a table of its
	** own, the program's keeps just the pipe's write end (for the signal
	** handler and the peak trigger) */
	if (svc.own_table) {
		close(svc.wake[0]);
		if (svc.listen_fd >= 0)
			close(svc.listen_fd);
	}
	/* known as ours before the program goes on: an _exit right after must
	** not take it for a thread of the program (alloc_exit.c) */
	while (!atomic_load(&svc.registered))
		alloc_sys_yield();
	svc.running = true;
	if (alloc_opts.snapshot && (alloc_opts.snapshot_at & ALLOC_SNAP_PEAK))
		alloc_service_peak_arm(0);
	return true;
}

/*
** From the library's constructor: start the thread if MEMINST asks for a
** trigger that needs it.
*/
void alloc_service_start(void)
{
	const alloc_options_t *o = &alloc_opts;
	bool sig = o->snapshot && (o->snapshot_at & ALLOC_SNAP_SIGNAL);
	bool peak = o->snapshot && (o->snapshot_at & ALLOC_SNAP_PEAK);
	bool watch = o->snapshot && (o->snapshot_at & ALLOC_SNAP_WATCH);
	if ((alloc_mode == MEMINST_MODE_OFF && !alloc_switchable) ||
	    !(sig || peak || watch || o->control || (o->interval_ns && o->snapshot)))
		return;
	if (watch)
		alloc_watch_init();
	alloc_sqlite_fork_init(); /* its child handler runs before ours */
	/* the action before the thread: its first look (svc_signal_check)
	** must not find the default there and blame the program */
	struct sigaction sa = {.sa_handler = svc_signal_handler, .sa_flags = SA_RESTART | SA_ONSTACK}, old;
	sigemptyset(&sa.sa_mask);
	if (sig)
		sigaction(o->snapshot_signal, &sa, &old);
	alloc_switch_signal_install();
	if (!svc_launch()) {
		if (sig)
			sigaction(o->snapshot_signal, &old, NULL);
		return;
	}
	pthread_atfork(NULL, NULL, svc_postfork_child);
}

static void svc_postfork_child(void)
{
	int saved_errno = errno; /* fork returns with the program's errno */
	alloc_service_child_reset(true);
	errno = saved_errno;
}
