/*
** alloc_switch.c — dormant, then on: a process started with
** MEMINST=off,control=on (meminst --dormant) is switched to mis or mim and
** back at run time, through the control channel (inspect start / stop,
** alloc_service.c) or the switch signal, without a restart or ptrace.
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

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

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

int alloc_switch_on(enum meminst_mode mode, char *err, size_t errlen)
{
	if (!alloc_switchable) {
		alloc_fmt(err, errlen, "this process was not started dormant (MEMINST=off,control=on, or "
				       "meminst --dormant): its mode is %s for good",
			  alloc_mode == MEMINST_MODE_OFF ? "off" : switch_mode_name(alloc_mode));
		return -1;
	}
	pthread_mutex_lock(&switch_lock);
	int rc = -1;
	if (!alloc_plain) {
		alloc_fmt(err, errlen, "meminst is on already (%s)", switch_mode_name(alloc_mode));
	} else if (alloc_mode != MEMINST_MODE_OFF && alloc_mode != mode) {
		alloc_fmt(err, errlen, "this process was on in %s before: it can only be switched on in %s "
				       "again (its blocks carry that header)",
			  switch_mode_name(alloc_mode), switch_mode_name(alloc_mode));
	} else {
		if (alloc_mode == MEMINST_MODE_OFF) { /* the first time */
			alloc_on_since_ns = alloc_snap_now(CLOCK_REALTIME);
			alloc_hdr_size = mode == MEMINST_MODE_MIM ? sizeof(alloc_mhdr_t) : sizeof(alloc_hdr_t);
			alloc_mode = mode;
		}
		/* the route before alloc_plain: a free must look for a header
		** as soon as any calloc or realloc can make one */
		atomic_thread_fence(memory_order_seq_cst);
		switch_route(mode == MEMINST_MODE_MIM ? ALLOC_ROUTE_MIM : ALLOC_ROUTE_MIS);
		atomic_store((_Atomic bool *)&alloc_plain, false);
		rc = 0;
	}
	pthread_mutex_unlock(&switch_lock);
	return rc;
}

int alloc_switch_off(char *err, size_t errlen)
{
	if (!alloc_switchable) {
		alloc_fmt(err, errlen, "this process was not started dormant (MEMINST=off,control=on, or "
				       "meminst --dormant): it cannot be switched off");
		return -1;
	}
	pthread_mutex_lock(&switch_lock);
	int rc = -1;
	if (alloc_plain) {
		alloc_fmt(err, errlen, "meminst is off already");
	} else {
		atomic_store((_Atomic bool *)&alloc_plain, true);
		switch_route(ALLOC_ROUTE_DRAIN);
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
		if (alloc_boot_owns(p))
			old = alloc_boot_size(p);
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
	int saved_errno = errno;
	(void)sig;
	atomic_store(&switch_pending, true);
	alloc_service_wake('w');
	errno = saved_errno;
}

void alloc_switch_signal_install(void)
{
	int sig = alloc_opts.switch_signal;
	struct sigaction cur, sa = {.sa_handler = switch_handler, .sa_flags = SA_RESTART | SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (!alloc_switchable || !sig || __sigaction(sig, NULL, &cur) != 0)
		return;
	if (cur.sa_handler != SIG_DFL) {
		alloc_log("signal %d, the switch signal, already has an action (%s): it is left to the program "
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
					       err, sizeof err)
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
		alloc_log("the program set its own action for signal %d, the switch signal: it is the program's "
			  "now and switches meminst no more (inspect start and stop still do)", alloc_opts.switch_signal);
	}
}

/* A control request: "start mis|mim" or "stop" carried out (0, or 1 with
** the reason in err), -1 for any other line. */
int alloc_switch_request(const char *line, char *err, size_t errlen)
{
	int rc;
	if (strcmp(line, "start mis") == 0 || strcmp(line, "start mim") == 0)
		rc = alloc_switch_on(line[8] == 'm' ? MEMINST_MODE_MIM : MEMINST_MODE_MIS, err, errlen);
	else if (strcmp(line, "stop") == 0)
		rc = alloc_switch_off(err, errlen);
	else if (strncmp(line, "start", 5) == 0)
		return snprintf(err, errlen, "bad request (expected: start mis|mim)"), 1;
	else
		return -1;
	return rc < 0;
}
