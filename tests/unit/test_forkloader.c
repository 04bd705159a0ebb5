/*
** test_forkloader.c — a fork while another thread is inside one of
** meminst's dl_iterate_phdr calls (trace/trace_unwind.c,
** trace_loader_iterate).
**
** dl_iterate_phdr holds the loader's lock over its list of objects for the
** whole walk, and glibc's fork (2.36) does not reset that lock in the
** child: a child made while another thread was inside the walk waited for
** ever at its own first call (fork_churn.sh under load, with
** alloc_sample=: the trace's MODULE check at each flush calls it from the
** program's threads, inside malloc).  The core's dl_iterate_phdr is wrapped
** here (-Wl,--wrap=dl_iterate_phdr) so that one call, from another thread,
** stays inside the loader's walk a while; the main thread forks meanwhile,
** and the child calls dl_iterate_phdr.  With the fork's prepare handler
** waiting for such calls to end, the child finds the lock free; without,
** it never ends (killed after 20 s: the test fails, it does not hang).
**
** A child of a raw clone (syscall(SYS_clone), no fork handler) got no such
** wait: it walks nothing until it is taken as alone (alloc_clone_adopt),
** which tells whether a call was under way at the clone.
*/
#include "ut.h"

#include "../trace/trace_int.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int __real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);

static _Atomic int fl_hold;   /* the next wrapped call stays inside a while */
static _Atomic int fl_inside; /* it is inside the loader's walk now */

static void fl_nap_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* Called with the loader's lock held: stay, then stop the walk. */
static int fl_slow_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size, (void)arg;
	atomic_store(&fl_inside, 1);
	fl_nap_ms(300);
	return 1;
}

/* The core's calls (alloc_sys_loader_counts and the others) come here. */
int __wrap_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (atomic_exchange(&fl_hold, 0))
		__real_dl_iterate_phdr(fl_slow_cb, NULL); /* the same call, the lock held longer */
	return __real_dl_iterate_phdr(cb, arg);
}

/* The trace's MODULE check from a program thread (trace_modules_check):
** the loader's counts. */
static void *fl_counter(void *arg)
{
	(void)arg;
	unsigned long long adds = 0, subs = 0;
	atomic_store(&fl_hold, 1);
	alloc_sys_loader_counts(&adds, &subs, true);
	return NULL;
}

/* Child pid's exit status, or -1 when it was still there after 20 s
** (then killed). */
static int fl_reap(pid_t pid)
{
	int st = 0;
	pid_t got = 0;
	for (int i = 0; i < 2000 && (got = waitpid(pid, &st, WNOHANG)) == 0; i++) /* 20 s */
		fl_nap_ms(10);
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	return st;
}

Test(forkloader, child_of_fork_during_dl_iterate_phdr, .timeout = 120)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fl_counter, NULL), 0);
	for (int i = 0; i < 5000 && !atomic_load(&fl_inside); i++) /* 5 s at most */
		fl_nap_ms(1);
	cr_assert(atomic_load(&fl_inside), "the other thread never reached the loader's walk");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		unsigned long long adds = 0, subs = 0;
		alloc_sys_loader_counts(&adds, &subs, true);
		_exit(adds > 0 ? 0 : 3);
	}
	int st = fl_reap(pid);
	pthread_join(t, NULL);
	cr_assert_neq(st, -1, "the child of the fork was still waiting for the loader's lock after 20 s");
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ended with status %#x", st);
}

static int fl_count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	++*(int *)arg;
	return 0;
}

/* In the child: 0, or the number of the check that failed. */
static int fl_raw_child(bool walked)
{
	int n = 0;
	if (!alloc_clone_unadopted())
		return 10; /* the copy mark was not wiped */
	if (trace_loader_iterate(fl_count_cb, &n, true) || n)
		return 11; /* walked before it was taken as alone */
	if (alloc_clone_adopt() == walked)
		return 12; /* the adoption missed (or invented) the call under way */
	if (alloc_clone_unadopted())
		return 13;
	bool ok = trace_loader_iterate(fl_count_cb, &n, true);
	if (walked ? ok : !ok || n == 0)
		return 14; /* walks on when the loader's lock may be held, or off when free */
	return 0;
}

/* A raw clone's child, checked by fl_raw_child; its exit status. */
static int fl_raw_clone(bool walked)
{
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fl_raw_child(walked));
	int st = fl_reap(pid);
	cr_assert_neq(st, -1, "the raw clone's child was still waiting after 20 s");
	cr_assert(WIFEXITED(st), "the child ended with status %#x", st);
	return WEXITSTATUS(st);
}

Test(forkloader, raw_clone_child_walks_once_adopted, .timeout = 60)
{
	int rc = fl_raw_clone(false);
	cr_assert_eq(rc, 0, "check %d failed in the child", rc);
}

Test(forkloader, raw_clone_child_during_dl_iterate_phdr, .timeout = 120)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fl_counter, NULL), 0);
	for (int i = 0; i < 5000 && !atomic_load(&fl_inside); i++) /* 5 s at most */
		fl_nap_ms(1);
	cr_assert(atomic_load(&fl_inside), "the other thread never reached the loader's walk");
	int rc = fl_raw_clone(true);
	pthread_join(t, NULL);
	cr_assert_eq(rc, 0, "check %d failed in the child", rc);
}

/* The child's first allocation at a new site, under site_depth, takes it as
** alone (core_site_type_slow: no lock of ours held there), so that its
** sites are typed by their stacks from then on. */
static int fl_alloc_child(void)
{
	if (!alloc_clone_unadopted())
		return 20;
	void *p = alloc_core_malloc(40, ALLOC_A_MALLOC, ut_site(77), 0);
	if (!p)
		return 21;
	return alloc_clone_unadopted() ? 22 : 0;
}

Test(forkloader, raw_clone_child_adopted_at_its_first_site, .timeout = 60)
{
	ut_start("mim,site_depth=4");
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fl_alloc_child());
	int st = fl_reap(pid);
	cr_assert(st != -1 && WIFEXITED(st), "the child ended with status %#x", st);
	cr_assert_eq(WEXITSTATUS(st), 0, "check %d failed in the child", WEXITSTATUS(st));
}
