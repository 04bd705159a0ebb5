/*
** sample_target.c — programs with a known split for the sampling tests
** (built -O1 -fno-inline -g; run preloaded, or linked as sample_counts).
**
**   split MS      burn_big then burn_small, interleaved, for MS ms of CPU
**                 time: 75% in burn_big, 25% in burn_small
**   sleeper MS    split in the main thread while a second thread sleeps
**                 (sleeper_wait) until the main thread is done
**   alloc         alloc_big allocates 300 MB in 4 KiB blocks, alloc_small
**                 100 MB in 64-byte blocks (each freed at once)
**   syscalls MS   burn_kernel: system calls for MS ms of CPU time, most
**                 of it in the kernel; its user+sys time on stderr
**   api MS        burn_small for MS/2 ms, meminst_sample_reset, then split,
**                 sampled by meminst_sample_start/stop (found with dlsym:
**                 the target runs preloaded); prints what each call said
**
** Each prints one line that does not depend on timing, so that a bare run
** and a sampled run can be compared.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin for `ms` ms of this thread's CPU time. */
__attribute__((noinline)) void burn_big(double ms)
{
	double end = cpu_ms() + ms;
	uint64_t x = sink | 1;
	/* Two lines of work, 2:1, so that a per-line view (callgrind's) has
	** more than one line to show whatever the timer's luck. */
	while (cpu_ms() < end) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		for (int i = 0; i < 10000; i++)
			x ^= (x >> 29) * 0x9e3779b97f4a7c15ull;
	}
	sink = x;
}

__attribute__((noinline)) void burn_small(double ms)
{
	double end = cpu_ms() + ms;
	uint64_t x = sink | 1;
	while (cpu_ms() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	sink = x;
}

/* 75/25 in slices of 3.6 ms, so that either mode sees both all along;
** not a multiple of a kernel tick (4 ms at 250 Hz), which would alias. */
static void split(double ms)
{
	for (double done = 0; done < ms; done += 3.6) {
		burn_big(2.7);
		burn_small(0.9);
	}
}

/* Set by main when its CPU work is done. */
static volatile int sleeper_stop;

/* Sleep in 10 ms naps until main is done, so that both threads live for
** the same wall time however long main's CPU time takes on a loaded machine
** (a wall-clock tick ends a nap early, EINTR: nap again).  Not shorter: each
** wake-up is CPU time in the kernel, which cpu sampling counts (1 ms naps
** were 5% of the samples on a loaded machine). */
__attribute__((noinline)) void sleeper_wait(void)
{
	struct timespec nap = {0, 10000000};
	while (!__atomic_load_n(&sleeper_stop, __ATOMIC_ACQUIRE))
		nanosleep(&nap, NULL);
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	sleeper_wait();
	return NULL;
}

__attribute__((noinline)) void alloc_big(void)
{
	for (long i = 0; i < 300L * 1024 * 1024 / 4096; i++) {
		char *p = malloc(4096);
		p[0] = (char)i;
		sink += (uint64_t)p[0];
		free(p);
	}
}

/* CPU time spent mostly in the kernel: each call adds up the CPU clocks of
** the process's threads there. */
__attribute__((noinline)) void burn_kernel(double ms)
{
	struct timespec ts;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int i = 0; i < 1000; i++)
			syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts);
}

__attribute__((noinline)) void alloc_small(void)
{
	for (long i = 0; i < 100L * 1024 * 1024 / 64; i++) {
		char *p = malloc(64);
		p[0] = (char)i;
		sink += (uint64_t)p[0];
		free(p);
	}
}

static int api(double ms)
{
	int (*start)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "meminst_sample_start");
	int (*stop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "meminst_sample_stop");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "meminst_sample_active");
	int (*reset)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "meminst_sample_reset");
	if (!start || !stop || !active || !reset) {
		printf("api: no meminst\n");
		return 0;
	}
	int a0 = active();
	int bad = start("sample=0");
	int rc = start("sample=1000,alloc_sample=64k");
	int a1 = active();
	int again = start("sample=100");
	burn_small(ms / 2); /* dropped by the reset */
	int rs = reset();
	split(ms);
	int st = stop();
	int rs2 = reset();
	printf("api: before %d bad %d start %d active %d again %d reset %d stop %d after %d "
	       "reset %d\n", a0, bad, rc, a1, again, rs, st, active(), rs2);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "split";
	double ms = argc > 2 ? atof(argv[2]) : 1000;
	if (!strcmp(what, "split")) {
		split(ms);
	} else if (!strcmp(what, "sleeper")) {
		pthread_t t;
		pthread_create(&t, NULL, sleeper_main, NULL);
		split(ms);
		__atomic_store_n(&sleeper_stop, 1, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "alloc")) {
		alloc_big();
		alloc_small();
	} else if (!strcmp(what, "syscalls")) {
		burn_kernel(ms);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "user+sys %.0f ms\n",
			(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	} else if (!strcmp(what, "api")) {
		return api(ms);
	} else {
		fprintf(stderr, "usage: sample_target split|sleeper|alloc|syscalls|api [MS]\n");
		return 2;
	}
	printf("%s done\n", what);
	return 0;
}
