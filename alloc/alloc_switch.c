/*
** alloc_switch.c — dormant, then on: a process started with
** MEMINST=off,control=on (meminst --dormant) is switched to mis or mim and
** back at run time, through the control channel (inspect start / stop,
** alloc_service.c) or the switch signal, without a restart or ptrace; and
** the trace module's sampler is switched on for a while for a CPU profile
** (inspect serve; "CPU profiles on request" below).
**
** Dormant costs what off costs: the route word is ALLOC_ROUTE_OFF, so
** malloc and free take the same one compare before the backend.  The
** tables (status, tags, threads) are made at start-up all the same
** (alloc_start.c), untouched and so unbacked, so that the fork handlers are
** registered in the order alloc_int.h states.
**
** Switching never stops the program's threads, because every mix of the
** three words a thread may see while they change is safe:
**   alloc_mode   which header the blocks made while on carry; set once, at
**                the first switch on, and kept (a later start must ask for
**                the same mode);
**   alloc_route  the fast routes: ALLOC_ROUTE_MIS/MIM while on, and after
**                a switch off ALLOC_ROUTE_DRAIN, never ALLOC_ROUTE_OFF again:
**                so a free always looks for a header once one may exist;
**   alloc_plain  new blocks get no header (the hooks' general path).
** A block made while off has no header: the core's check finds none and
** gives it to glibc (core_free_libc; realloc moves it, malloc_usable_size
** asks glibc), which is why dormant needs backend=system.  A block made
** while on and freed while off is checked and counted out as usual, so the
** live counts stay those of the blocks meminst saw made.  A thread that
** read the old route in the middle of a call makes one block the old way:
** either way it is freed right.  Counting starts at the first switch on
** (alloc_on_since_ns, stored with every snapshot, shown as "since" by the
** readers); a switch off stops new blocks from being counted, and a later
** switch on goes on from where the counts were.
*/
#include "alloc_int.h"
#include "../trace/trace_sampler.h"
#include "meminst.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

bool alloc_switchable;
int64_t alloc_on_since_ns;

static pthread_mutex_t switch_lock = PTHREAD_MUTEX_INITIALIZER;

static void switch_route(unsigned modes)
{
	unsigned r = atomic_load(&alloc_route);
	while (!atomic_compare_exchange_weak(&alloc_route, &r, (r & ~(unsigned)ALLOC_ROUTE_MODES) | modes))
		;
}

static const char *switch_mode_name(enum meminst_mode m)
{
	return m == MEMINST_MODE_MIM ? "mim" : "mis";
}

static const char *switch_depth_name(int depth, char *buf, size_t len)
{
	if (depth == ALLOC_SITE_DEPTH_USER)
		return "user";
	alloc_fmt(buf, len, "%d", depth ? depth : 1);
	return buf;
}

/* Why a switch on in `mode`, sites `depth` frames deep (-1: as they are),
** is refused now: 0, or -1 with err.  switch_lock held. */
static int switch_on_refused(enum meminst_mode mode, int depth, char *err, size_t errlen)
{
	char was[16], asked[16];
	if (!alloc_switchable)
		alloc_fmt(err, errlen, "this process was not started dormant (MEMINST=off,control=on, or "
				       "meminst --dormant): its mode is %s for good",
			  alloc_mode == MEMINST_MODE_OFF ? "off" : switch_mode_name(alloc_mode));
	else if (!alloc_plain)
		alloc_fmt(err, errlen, "meminst is on already (%s)", switch_mode_name(alloc_mode));
	else if (alloc_mode != MEMINST_MODE_OFF && alloc_mode != mode)
		alloc_fmt(err, errlen, "this process was on in %s before: it can only be switched on in %s "
				       "again (its blocks carry that header)",
			  switch_mode_name(alloc_mode), switch_mode_name(alloc_mode));
	else if (alloc_mode != MEMINST_MODE_OFF && depth >= 0 && depth != alloc_site_depth)
		alloc_fmt(err, errlen, "this process was on with sites %s frames deep before: --site-depth=%s "
				       "would key the same sites anew (give %s, or none)",
			  switch_depth_name(alloc_site_depth, was, sizeof was),
			  switch_depth_name(depth, asked, sizeof asked), was);
	else
		return 0;
	return -1;
}

/* On in `mode` (not refused); the site depth is set at the first switch
** on only, before any block is typed by it.  switch_lock held. */
static void switch_on_locked(enum meminst_mode mode, int depth)
{
	if (alloc_mode == MEMINST_MODE_OFF) { /* the first time */
		alloc_on_since_ns = alloc_snap_now(CLOCK_REALTIME);
		alloc_hdr_size = mode == MEMINST_MODE_MIM ? sizeof(alloc_mhdr_t) : sizeof(alloc_hdr_t);
		if (depth >= 0)
			alloc_site_depth = depth;
		alloc_mode = mode;
	}
	/* while off the backend freed blocks without the fast frees
	** seeing their pages go (alloc_header_readable) */
	atomic_store(&alloc_pages_gone, true);
	/* the route before alloc_plain: a free must look for a header
	** as soon as any calloc or realloc can make one */
	atomic_thread_fence(memory_order_seq_cst);
	switch_route(mode == MEMINST_MODE_MIM ? ALLOC_ROUTE_MIM : ALLOC_ROUTE_MIS);
	atomic_store((_Atomic bool *)&alloc_plain, false);
}

static int sample_ask(int req, char *err, size_t errlen, int *fd);
static bool switch_sampling; /* start's sample= runs the sampler (switch_lock) */

enum { SAMPLE_REQ_NONE, SAMPLE_REQ_START, SAMPLE_REQ_STOP, SAMPLE_REQ_QUIT, SAMPLE_REQ_OWN_START,
       SAMPLE_REQ_OWN_STOP };

/* On in `mode`; with hz, the sampler too (into the process's own trace
** file); 0, or -1 with err (and nothing switched). */
static int alloc_switch_on(enum meminst_mode mode, int depth, unsigned hz, char *err, size_t errlen)
{
	pthread_mutex_lock(&switch_lock);
	int rc = switch_on_refused(mode, depth, err, errlen), fd;
	if (!rc && hz)
		rc = sample_ask(SAMPLE_REQ_OWN_START, err, errlen, &fd) ? -1 : 0; /* sreq.hz set by the caller */
	if (!rc) {
		switch_sampling = hz != 0;
		switch_on_locked(mode, depth);
	}
	pthread_mutex_unlock(&switch_lock);
	return rc;
}

static int alloc_switch_off(char *err, size_t errlen)
{
	if (!alloc_switchable) {
		alloc_fmt(err, errlen, "this process was not started dormant (MEMINST=off,control=on, or "
				       "meminst --dormant): it cannot be switched off");
		return -1;
	}
	pthread_mutex_lock(&switch_lock);
	int rc = -1, fd;
	if (alloc_plain) {
		alloc_fmt(err, errlen, "meminst is off already");
	} else {
		atomic_store((_Atomic bool *)&alloc_plain, true);
		switch_route(ALLOC_ROUTE_DRAIN);
		if (switch_sampling && sample_ask(SAMPLE_REQ_OWN_STOP, err, errlen, &fd))
			alloc_log("inspect stop: the sampler: %s", err);
		switch_sampling = false;
		rc = 0;
	}
	pthread_mutex_unlock(&switch_lock);
	return rc;
}

/*
** realloc while switched off: a block with a header is copied into a plain
** one and freed through the core (counted out); any other block is the
** backend's (glibc's, as dormant needs), or the bootstrap arena's.
*/
void *alloc_switch_realloc_plain(void *p, size_t size, uintptr_t site)
{
	size_t old;
	if (!p)
		return alloc_real.malloc(size);
	if (alloc_boot_owns(p) || alloc_core_headed(p, &old)) {
		if (size == 0) {
			alloc_core_free(p, site);
			return NULL;
		}
		old = alloc_core_usable_size(p); /* every usable byte, as glibc's realloc */
		void *n = alloc_real.malloc(size);
		if (n) {
			memcpy(n, p, old < size ? old : size);
			alloc_core_free(p, site);
		}
		return n;
	}
	return alloc_real.realloc(p, size);
}

/*
** Dormant's switch signal (switch_signal=, meminst(7)): each one toggles
** meminst on (in the process's first mode, mis if none yet) or off, done by
** the thread.  It is ours only if the program had no action for it when the
** library started; if the program sets one later, it is the program's, said
** once by alloc_switch_signal_check.
*/
static _Atomic bool switch_pending;
static bool switch_installed;

static void switch_handler(int sig)
{
	(void)sig;
	alloc_service_signal_note(&switch_pending, 'w');
}

void alloc_switch_signal_install(void)
{
	int sig = alloc_opts.switch_signal;
	struct sigaction cur, sa = {.sa_handler = switch_handler, .sa_flags = SA_RESTART | SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (!alloc_switchable || !sig || __sigaction(sig, NULL, &cur) != 0)
		return;
	if (cur.sa_handler != SIG_DFL) {
		alloc_note("signal %d, the switch signal, already has an action (%s): it is left to the program "
			  "(switch_signal= chooses another; inspect start works without it)", sig,
			  cur.sa_handler == SIG_IGN ? "ignored" : "a handler");
		return;
	}
	switch_installed = sigaction(sig, &sa, NULL) == 0;
}

/* The service thread, at each wake: toggle if a switch signal came. */
void alloc_switch_signal_take(void)
{
	char err[512];
	if (!atomic_exchange(&switch_pending, false))
		return;
	int rc = alloc_plain ? alloc_switch_on(alloc_mode == MEMINST_MODE_MIM ? MEMINST_MODE_MIM : MEMINST_MODE_MIS,
					       -1, 0, err, sizeof err)
			     : alloc_switch_off(err, sizeof err);
	if (rc < 0)
		alloc_log("switch signal: %s", err);
}

/* The service thread's recheck: is the switch signal still ours? */
void alloc_switch_signal_check(void)
{
	static bool said;
	struct sigaction sw;
	if (switch_installed && !said && __sigaction(alloc_opts.switch_signal, NULL, &sw) == 0 &&
	    sw.sa_handler != switch_handler) {
		said = true;
		alloc_note("the program set its own action for signal %d, the switch signal: it is the program's "
			  "now and switches meminst no more (inspect start and stop still do)", alloc_opts.switch_signal);
	}
}

/*
** CPU profiles on request (inspect serve's /debug/pprof/profile):
**     sample start HZ SECONDS PATH   the trace module's sampler on, at HZ,
**                                    into the trace file PATH (absolute);
**                                    answered "ok FD", FD the file's
**                                    descriptor here (the reader opens
**                                    /proc/PID/fd/FD: PATH may be gone)
**     sample stop                    the sampler off, every thread's
**                                    samples written out; "ok 0"
** The sampler stops by itself SECONDS + SAMPLE_GRACE_S after the start, so
** a client that dies never leaves it on.  At the stop, once every sample is
** written, the file is closed and the trace module's writer thread ends
** (trace_file_close_idle): the reader has opened the file through
** /proc/PID/fd/FD by then, and the process is left with the descriptors
** and threads it had before (a scraper's profiles, one after another, must
** not pile anything up).  The next start opens a new file.  Refused while
** the program samples or traces itself (its file and its samples are its
** own).
**
** The requests are carried out by a thread of their own, made with the
** service thread and sharing the program's descriptor table: the trace
** file, the perf events of the timers and the writer thread must be in the
** table the program's threads flush and stop them from, and the service
** thread's table is its own (alloc_service.c).  It waits on a condition
** variable and is never sampled.
*/
#define SAMPLE_GRACE_S 5
#define SAMPLE_ANSWER_S 10

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake, done; /* CLOCK_MONOTONIC */
	bool running;              /* the thread exists */
	int request;               /* SAMPLE_REQ_*: asked, not yet done */
	unsigned hz, seconds;
	char path[ALLOC_SWITCH_PATH_MAX];
	int rc, fd;
	char err[512];
	bool on;          /* sampling for a request, until stop or the deadline */
	bool file_ours;   /* the trace file was opened for a request */
	bool own_on;      /* sampling for inspect start --sample, into the
			  ** process's own trace file, until the switch off */
	struct timespec deadline;
} sreq = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void sample_off_locked(void)
{
	if (!sreq.on)
		return;
	meminst_sample_stop();
	trace_flush_running(); /* every thread's samples into the file */
	sreq.on = false;
	if (sreq.file_ours && trace_file_close_idle())
		sreq.file_ours = false; /* the next start opens PATH */
}

static void sample_on_locked(void)
{
	sreq.rc = -1;
	if (sreq.own_on) {
		alloc_fmt(sreq.err, sizeof sreq.err, "the sampler runs already, since inspect start --sample "
				       "(its samples go to the process's trace file)");
		return;
	}
	if (sreq.on) {
		alloc_fmt(sreq.err, sizeof sreq.err, "a CPU profile is being taken already (one at a time)");
		return;
	}
	if (meminst_sample_active()) {
		alloc_fmt(sreq.err, sizeof sreq.err, "the program samples itself (MEMINST sample= or "
				       "meminst_sample_start): read its samples from its trace file");
		return;
	}
	if (trace_file_is_open() && !sreq.file_ours) {
		alloc_fmt(sreq.err, sizeof sreq.err, "the program writes a trace file of its own (%s): it is "
				       "not mixed with a profile's samples", trace_fio_path);
		return;
	}
	char opts[ALLOC_SWITCH_PATH_MAX + 64];
	int n = alloc_fmt(opts, sizeof opts, "sample=%u", sreq.hz);
	if (!sreq.file_ours)
		alloc_fmt(opts + n, sizeof opts - (size_t)n, ",trace_file=%s", sreq.path);
	if (meminst_sample_start(opts) < 0) {
		meminst_sample_stop(); /* whatever part started */
		alloc_fmt(sreq.err, sizeof sreq.err, "the sampler could not start (the process's stderr "
				       "says why)");
		return;
	}
	sreq.file_ours = true;
	meminst_sample_reset(); /* the earlier profiles' samples are dropped */
	sreq.on = true;
	clock_gettime(CLOCK_MONOTONIC, &sreq.deadline);
	sreq.deadline.tv_sec += (time_t)sreq.seconds + SAMPLE_GRACE_S;
	sreq.fd = atomic_load(&trace_fio_fd);
	sreq.rc = 0;
}

/* inspect start --sample: the sampler on at sreq.hz into the trace file
** MEMINST's trace_file= names (meminst.PID.trace in the process's directory
** without it), until the switch off. */
static void sample_own_on_locked(void)
{
	sreq.rc = -1;
	if (sreq.on || sreq.file_ours || meminst_sample_active()) {
		alloc_fmt(sreq.err, sizeof sreq.err, "the sampler cannot be switched on: %s",
			  sreq.on || sreq.file_ours ? "its file holds inspect serve's CPU profiles"
						    : "the program samples itself already");
		return;
	}
	char opts[ALLOC_SWITCH_PATH_MAX + 64];
	int n = alloc_fmt(opts, sizeof opts, "sample=%u", sreq.hz);
	size_t len = alloc_opts.trace_file_len; /* a part of MEMINST, not terminated */
	if (len && len < sizeof opts - (size_t)n - 16) {
		n += alloc_fmt(opts + n, sizeof opts - (size_t)n, ",trace_file=");
		memcpy(opts + n, alloc_opts.trace_file, len);
		opts[n + (int)len] = 0;
	}
	if (meminst_sample_start(opts) < 0) {
		meminst_sample_stop(); /* whatever part started */
		alloc_fmt(sreq.err, sizeof sreq.err, "the sampler could not start (the process's stderr says why)");
		return;
	}
	sreq.own_on = true;
	sreq.rc = 0;
}

static void sample_own_off_locked(void)
{
	if (sreq.own_on) {
		meminst_sample_stop();
		trace_flush_running();
		sreq.own_on = false;
	}
	sreq.rc = 0;
}

/* The thread's id: a quit waits until it has left the kernel (an unshare
** made again right after must find the process of one thread). */
static _Atomic pid_t sample_tid;

static void *sample_thread(void *arg)
{
	(void)arg;
	alloc_tls.guard = 1; /* for life: what libc allocates for us is ours */
	atomic_store(&sample_tid, alloc_sys_gettid());
	alloc_own_thread_enter(); /* never sampled: made inside the guard (trace_thread.c) */
	/* libunwind's set-up now, not at the first profile: its descriptors
	** (a pipe it keeps for the process's life) are then among those the
	** process has before any profile, which leaves them as it found them */
	trace_unwind_init();
	pthread_mutex_lock(&sreq.lock);
	for (;;) {
		if (sreq.request == SAMPLE_REQ_NONE) {
			int rc = sreq.on ? pthread_cond_timedwait(&sreq.wake, &sreq.lock, &sreq.deadline)
					 : pthread_cond_wait(&sreq.wake, &sreq.lock);
			if (rc == ETIMEDOUT && sreq.request == SAMPLE_REQ_NONE)
				sample_off_locked(); /* the client never said stop */
			continue;
		}
		int req = sreq.request;
		if (req == SAMPLE_REQ_START)
			sample_on_locked();
		else if (req == SAMPLE_REQ_OWN_START)
			sample_own_on_locked();
		else if (req == SAMPLE_REQ_OWN_STOP)
			sample_own_off_locked();
		else
			sample_off_locked(), sreq.rc = 0, sreq.fd = 0;
		sreq.request = SAMPLE_REQ_NONE;
		pthread_cond_broadcast(&sreq.done);
		if (req == SAMPLE_REQ_QUIT)
			break;
	}
	sreq.running = false;
	pthread_mutex_unlock(&sreq.lock);
	alloc_own_thread_leave();
	return NULL;
}

/* With the service thread, from a thread in the program's table (see
** above).  In a child of fork the thread is gone and the sampler off. */
void alloc_switch_sample_launch(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&sreq.lock, NULL);
	pthread_cond_init(&sreq.wake, &ca);
	pthread_cond_init(&sreq.done, &ca);
	pthread_condattr_destroy(&ca);
	sreq.request = SAMPLE_REQ_NONE;
	sreq.on = sreq.own_on = false;
	sigset_t all, old;
	sigfillset(&all);
	alloc_sys_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	pthread_t th;
	alloc_guard_enter();
	sreq.running = alloc_own_thread_create(pthread_create, &th, &at, sample_thread, NULL) == 0;
	alloc_guard_exit();
	pthread_attr_destroy(&at);
	alloc_sys_sigmask(SIG_SETMASK, &old, NULL);
	if (!sreq.running && !alloc_own_threads_refused())
		alloc_log("cannot start the thread of CPU profiles on request: inspect serve's "
			  "/debug/pprof/profile is refused");
}

/* Before a seccomp filter that refuses futex (alloc_service_stop). */
void alloc_switch_sample_quit(void)
{
	pthread_mutex_lock(&sreq.lock);
	if (sreq.running) {
		sreq.request = SAMPLE_REQ_QUIT;
		pthread_cond_signal(&sreq.wake);
		while (sreq.running)
			pthread_cond_wait(&sreq.done, &sreq.lock);
		pthread_mutex_unlock(&sreq.lock);
		alloc_own_thread_wait_gone(atomic_exchange(&sample_tid, 0));
		return;
	}
	pthread_mutex_unlock(&sreq.lock);
}

/* Hand a request to the thread and wait for its answer (bounded). */
static int sample_ask(int req, char *err, size_t errlen, int *fd)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += SAMPLE_ANSWER_S;
	pthread_mutex_lock(&sreq.lock);
	int rc = 1;
	if (!sreq.running) {
		alloc_fmt(err, errlen, "this process has no thread for CPU profiles (it could not be started)");
	} else if (sreq.request != SAMPLE_REQ_NONE) {
		alloc_fmt(err, errlen, "the sampler is still busy with an earlier request");
	} else {
		sreq.request = req;
		pthread_cond_signal(&sreq.wake);
		int w = 0;
		while (sreq.request == req && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&sreq.done, &sreq.lock, &until);
		if (sreq.request == req)
			alloc_fmt(err, errlen, "the sampler did not answer in %d s", SAMPLE_ANSWER_S);
		else if (sreq.rc < 0)
			alloc_fmt(err, errlen, "%s", sreq.err);
		else
			*fd = sreq.fd, rc = 0;
	}
	pthread_mutex_unlock(&sreq.lock);
	return rc;
}

/* "sample start HZ SECONDS PATH" or "sample stop": 0 done (*fd the
** answer), 1 refused (err says why), -1 not such a line. */
int alloc_switch_sample_request(const char *line, char *err, size_t errlen, int *fd)
{
	if (strncmp(line, "sample ", 7) != 0)
		return -1;
	if (strcmp(line, "sample stop") == 0)
		return sample_ask(SAMPLE_REQ_STOP, err, errlen, fd);
	unsigned hz, seconds;
	int at = 0;
	if (sscanf(line, "sample start %u %u %n", &hz, &seconds, &at) != 2 || !at || line[at] != '/' ||
	    hz < 1 || hz > 10000 || seconds < 1 || seconds > 3600 || strlen(line + at) >= sizeof sreq.path) {
		alloc_fmt(err, errlen, "bad request (expected: sample start HZ SECONDS /PATH, or sample stop)");
		return 1;
	}
	pthread_mutex_lock(&sreq.lock);
	bool busy = sreq.request != SAMPLE_REQ_NONE;
	if (!busy) {
		sreq.hz = hz, sreq.seconds = seconds;
		memcpy(sreq.path, line + at, strlen(line + at) + 1);
	}
	pthread_mutex_unlock(&sreq.lock);
	if (busy) {
		alloc_fmt(err, errlen, "the sampler is still busy with an earlier request");
		return 1;
	}
	return sample_ask(SAMPLE_REQ_START, err, errlen, fd);
}

/*
** "start mis|mim[ ITEMS]": ITEMS are MEMINST's site_depth= and sample=
** (inspect start's --site-depth and --sample), read by the one option
** parser; 0 on, 1 refused (err says why).
*/
static int switch_start_request(const char *line, char *err, size_t errlen)
{
	static const char bad[] = "bad request (expected: start mis|mim [site_depth=N|user][,sample=HZ])";
	enum meminst_mode mode = line[8] == 'm' ? MEMINST_MODE_MIM : MEMINST_MODE_MIS;
	const char *items = line + 9;
	if (*items && *items++ != ' ')
		return alloc_fmt(err, errlen, "%s", bad), 1;
	int depth = -1;
	unsigned hz = 0;
	if (*items) {
		for (const char *p = items; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
			if (strncmp(p, "sample=", 7) != 0 && strncmp(p, "site_depth=", 11) != 0)
				return alloc_fmt(err, errlen, "%s", bad), 1;
		}
		alloc_options_t o;
		char why[ALLOC_OPTIONS_ERRMAX];
		if (alloc_options_parse(items, &o, why, sizeof why) < 0)
			return alloc_fmt(err, errlen, "%s", why), 1;
		if (strstr(items, "site_depth="))
			depth = o.site_depth;
		hz = o.sample_hz;
	}
	if (hz) { /* for the sampler's thread: the request's own fields */
		pthread_mutex_lock(&sreq.lock);
		bool busy = sreq.request != SAMPLE_REQ_NONE;
		if (!busy)
			sreq.hz = hz;
		pthread_mutex_unlock(&sreq.lock);
		if (busy)
			return alloc_fmt(err, errlen, "the sampler is still busy with an earlier request"), 1;
	}
	return alloc_switch_on(mode, depth, hz, err, errlen) < 0;
}

/* A control request: "start mis|mim[ ITEMS]" or "stop" carried out (0, or
** 1 with the reason in err), -1 for any other line. */
int alloc_switch_request(const char *line, char *err, size_t errlen)
{
	if (strncmp(line, "start mis", 9) == 0 || strncmp(line, "start mim", 9) == 0)
		return switch_start_request(line, err, errlen);
	if (strcmp(line, "stop") == 0)
		return alloc_switch_off(err, errlen) < 0;
	if (strncmp(line, "start", 5) == 0)
		return snprintf(err, errlen, "bad request (expected: start mis|mim)"), 1;
	return -1;
}
