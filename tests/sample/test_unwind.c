/*
** test_unwind.c — the sampler's stack walks (trace/trace_unwind.c), from a
** signal handler as the sampler does them:
**   - frame 0 is the interrupted pc, then the callers in order;
**   - a storm of timer signals (10 kHz of CPU time) over code built without
**     frame pointers, recursion and libc (qsort, strtod, snprintf) never
**     crashes and every walk yields frames;
**   - the busy flag (a walk in progress: the handler must not re-enter
**     libunwind's per-thread cache) is down again after a walk;
**   - a handler inside one of our dl_iterate_phdr calls does not walk;
**   - the set-up leaves the fast walk's 256 KiB trace cache unmade (a
**     default run's one walker, the exit snapshot's handler, walks
**     carefully): trace_unwind_warm makes it, for the sampled threads.
**   - a thread's first sample is walked carefully, without making the
**     cache (short threads: issue 27); its second makes it, in the handler.
** This file is built with -fomit-frame-pointer -O2 and linked with
** --export-dynamic so that dladdr names its functions.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "trace_sampler.h"

#define NOINLINE __attribute__((noinline, used))

static volatile sig_atomic_t stop_spin;
static uint64_t got[TRACE_FRAMES_MAX];
static volatile unsigned got_n;

static void catch_one(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	got_n = trace_unwind_signal(uc, got, TRACE_FRAMES_MAX);
	stop_spin = 1;
}

NOINLINE void unwind_spin(void)
{
	while (!stop_spin)
		__asm__ volatile("" ::: "memory");
}
NOINLINE void unwind_middle(void)
{
	unwind_spin();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}
NOINLINE void unwind_outer(void)
{
	unwind_middle();
	__asm__ volatile("" ::: "memory");
}

static const char *name_of(uint64_t addr)
{
	Dl_info info;
	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

static void arm_cpu_timer(long usec)
{
	struct itimerval it = {{0, usec}, {0, usec}};
	setitimer(ITIMER_PROF, &it, NULL);
}

static void install(void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
}

Test(unwind, signal_walk_starts_at_the_interrupted_pc)
{
	cr_assert_eq(trace_unwind_init(), 0);
	trace_unwind_warm(); /* as the sampler does for each thread it walks */
	install(catch_one);
	arm_cpu_timer(2000);
	unwind_outer();
	arm_cpu_timer(0);
	cr_assert_geq(got_n, 4, "only %u frames", got_n);
	/* frame 0 is the pc itself; later ones are return addresses */
	cr_assert_str_eq(name_of(got[0]), "unwind_spin");
	cr_assert_str_eq(name_of(got[1] - 1), "unwind_middle");
	cr_assert_str_eq(name_of(got[2] - 1), "unwind_outer");
	bool test_fn = false;
	for (unsigned i = 3; i < got_n; i++)
		test_fn |= strstr(name_of(got[i] - 1), "signal_walk_starts") != NULL;
	cr_assert(test_fn, "the test function is not among the callers");
}

/* ------------------------------------------------------------- storm --- */

static volatile unsigned long storm_samples, storm_empty, storm_frames;

static void storm_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	uint64_t f[TRACE_FRAMES_MAX];
	unsigned n = trace_unwind_signal(uc, f, TRACE_FRAMES_MAX);
	storm_samples++;
	storm_frames += n;
	if (n == 0)
		storm_empty++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

NOINLINE double storm_recurse(int depth, double acc)
{
	if (depth == 0) {
		double v[64];
		char buf[64];
		for (int i = 0; i < 64; i++) {
			snprintf(buf, sizeof buf, "%d.%d", i * 7919 % 1000, i);
			v[i] = strtod(buf, NULL) + acc;
		}
		qsort(v, 64, sizeof v[0], cmp_double);
		return v[0] + v[63];
	}
	return storm_recurse(depth - 1, acc + depth) * 0.5 + 1.0;
}

Test(unwind, storm_of_signals_without_frame_pointers)
{
	cr_assert_eq(trace_unwind_init(), 0);
	trace_unwind_warm(); /* as the sampler does for each thread it walks */
	install(storm_handler);
	arm_cpu_timer(100); /* 10 kHz of CPU time */
	/* 0.7 s of this process's CPU time (the timer counts CPU time too), not
	** of the wall clock: on a loaded machine a wall-clock loop got few
	** signals and failed */
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	double sink = 0;
	do {
		for (int i = 0; i < 200; i++)
			sink += storm_recurse(i % 40, sink * 1e-9);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 700000000L);
	arm_cpu_timer(0);
	cr_assert_gt(storm_samples, 100, "only %lu signals", storm_samples);
	cr_assert_eq(storm_empty, 0, "%lu of %lu walks came back empty", storm_empty,
		     storm_samples);
	/* recursion up to 40 deep: walks must be deep on average */
	cr_assert_gt(storm_frames / storm_samples, 5, "%lu frames per walk",
		     storm_frames / storm_samples);
	cr_assert(sink == sink);
}

/* The busy flag is down outside walks: a SIGPROF raised by hand after a
** normal-context walk still unwinds. */
static volatile unsigned after_n;
static void after_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	uint64_t f[8];
	after_n = trace_unwind_signal(uc, f, 8);
}

Test(unwind, busy_only_during_a_walk)
{
	cr_assert_eq(trace_unwind_init(), 0);
	cr_assert_not(trace_unwind_busy());
	uint64_t f[8];
	(void)trace_unwind_here(f, 8, true);
	cr_assert_not(trace_unwind_busy());
	install(after_handler);
	raise(SIGPROF);
	cr_assert_gt(after_n, 0);
}

/* A handler that interrupts one of our dl_iterate_phdr calls does not walk:
** the loader's lock is recursive, but a thread stopped between taking its
** word and recording itself as the owner waited for itself for ever when
** the walk (libunwind's table look-up) took it again (bash under
** sample=1000, at a new site's module look-up, alloc_sys_locate).  The
** signal here comes inside the callback, where the lock is held: the
** walk's answer is no frames (the sample keeps its pc). */
static volatile int in_loader_n = -1;
static void in_loader_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	uint64_t f[8];
	in_loader_n = (int)trace_unwind_signal(uc, f, 8);
}

static int raise_in_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	if (!*(int *)arg) {
		*(int *)arg = 1;
		raise(SIGPROF);
	}
	return 0;
}

Test(unwind, no_walk_inside_our_loader_iteration)
{
	cr_assert_eq(trace_unwind_init(), 0);
	install(in_loader_handler);
	int raised = 0;
	cr_assert(trace_loader_iterate(raise_in_loader, &raised, true));
	cr_assert_eq(raised, 1);
	cr_assert_eq(in_loader_n, 0, "a handler walked %d frames inside dl_iterate_phdr", in_loader_n);
	raise(SIGPROF); /* and walks again outside */
	cr_assert_gt(in_loader_n, 0);
}

/* ---------------------------------------------------------- the cache --- */

static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

Test(unwind, set_up_without_the_trace_cache)
{
	long before = rss_anon_kb();
	cr_assert_eq(trace_unwind_init(), 0);
	long set_up = rss_anon_kb();
	trace_unwind_warm();
	long warm = rss_anon_kb();
	cr_assert_geq(before, 0);
	/* libunwind's own set-up is a few pages; its trace cache 256 KiB */
	cr_assert_lt(set_up - before, 96, "the set-up made %ld kB resident", set_up - before);
	cr_assert_geq(warm - set_up, 200, "the warm-up made %ld kB resident", warm - set_up);
}

static void *two_samples(void *arg)
{
	long *kb = arg;
	install(catch_one);
	kb[0] = rss_anon_kb();
	for (int i = 1; i <= 2; i++) {
		got_n = 0;
		pthread_kill(pthread_self(), SIGPROF);
		kb[2 * i - 1] = rss_anon_kb();
		kb[2 * i] = (long)got_n;
	}
	return NULL;
}

Test(unwind, a_thread_gets_its_trace_cache_at_its_second_sample)
{
	cr_assert_eq(trace_unwind_init(), 0);
	trace_unwind_warm(); /* the thread that starts sampling: libunwind's key is learnt */
	long kb[5] = {-1, -1, 0, -1, 0};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, two_samples, kb), 0);
	pthread_join(t, NULL);
	cr_assert_geq(kb[0], 0);
	cr_assert_geq(kb[2], 3, "the first sample has %ld frames", kb[2]);
	cr_assert_geq(kb[4], 3, "the second sample has %ld frames", kb[4]);
	cr_assert_lt(kb[1] - kb[0], 96, "the first sample made %ld kB resident", kb[1] - kb[0]);
	cr_assert_geq(kb[3] - kb[1], 200, "the second sample made %ld kB resident", kb[3] - kb[1]);
}
