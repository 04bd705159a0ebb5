/*
** peaks.c — max-ever figures when threads take turns and when they run at
** the same time, read from the executable's own class (every block below
** is allocated here, nothing else of the program's is).
**
**   peaks seq    main holds 200,000 B; a worker allocates 1,000,000 B,
**                frees it and exits; main joins.  The true peak is
**                1,200,000 B, and meminst must report exactly that.
**   peaks conc   two workers each hold 100,000 B at the same time (a spin
**                barrier, no blocking call), then free.  The true peak is
**                200,000 B; counting per thread may miss up to one
**                thread's pending change (meminst(7), Precision), so
**                anything in [100,000, 200,000] is right.
**
**   peaks since  reads its class, allocates 1,000,000 B and frees it,
**                sleeps 100 ms (snapshots are taken meanwhile under
**                interval=1ms), reads again: max-since-last is exactly
**                1,000,000 B (the snapshots keep their own), then 0.
**
** Runs preloaded (probe.h).  Prints the same line with and without
** instrumentation; a wrong figure is a "probe:" line and exit status 3.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

static _Atomic int arrived;
static void *volatile sink; /* the blocks escape: the compiler keeps them */

static void *worker_seq(void *arg)
{
	(void)arg;
	char *p = malloc(1000000);
	memset(p, 1, 1000000);
	sink = p;
	free(p);
	return NULL;
}

static void *worker_conc(void *arg)
{
	(void)arg;
	char *p = malloc(100000);
	memset(p, 1, 100000);
	sink = p;
	atomic_fetch_add(&arrived, 1);
	while (atomic_load(&arrived) < 2) /* both hold their block */
		;
	free(p);
	return NULL;
}

/* The executable's class max-ever (or, `since`, max-since-last) bytes, or
** 0 when not instrumented; a read. */
static uint64_t own_figure(const char *exe, bool since)
{
	if (!probe_on())
		return 0;
	const char *slash = strrchr(exe, '/');
	struct probe_table t = probe_table_read(MEMINST_STATUS_CLASSES);
	long i = probe_find(&t, slash ? slash + 1 : exe);
	if (i < 0)
		probe_fail("no class named after %s", exe);
	uint64_t peak = since ? t.e[i].sizes.max_since_last : t.e[i].sizes.max_ever;
	probe_table_free(&t);
	return peak;
}

static uint64_t own_peak(const char *exe)
{
	return own_figure(exe, false);
}

/* max-since-last across 100 ms of snapshots, the program's own */
static int since(const char *exe)
{
	char *p = malloc(1); /* (the class is made at its first block) */
	sink = p;
	free(p);
	own_figure(exe, true);
	p = malloc(1000000);
	memset(p, 1, 1000000);
	sink = p;
	free(p);
	usleep(100000);
	uint64_t sl = own_figure(exe, true), again = own_figure(exe, true);
	if (probe_on() && (sl != 1000000 || again != 0))
		probe_fail("since: max since last %llu B then %llu B, not 1000000 then 0",
			   (unsigned long long)sl, (unsigned long long)again);
	puts("since done");
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	probe_on(); /* looked up before the counts that matter */
	if (argc == 2 && strcmp(argv[1], "seq") == 0) {
		char *held = malloc(200000);
		memset(held, 1, 200000);
		sink = held;
		pthread_create(&th[0], NULL, worker_seq, NULL);
		pthread_join(th[0], NULL);
		uint64_t peak = own_peak(argv[0]);
		if (probe_on() && peak != 1200000)
			probe_fail("seq: max ever %llu B, the true peak is 1200000",
				   (unsigned long long)peak);
		free(held);
		puts("seq done");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "conc") == 0) {
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, worker_conc, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		uint64_t peak = own_peak(argv[0]);
		if (probe_on() && (peak < 100000 || peak > 200000))
			probe_fail("conc: max ever %llu B, outside [100000, 200000]",
				   (unsigned long long)peak);
		if (probe_on())
			fprintf(stderr, "conc: max ever %llu B (true peak 200000)\n",
				(unsigned long long)peak);
		puts("conc done");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "since") == 0)
		return since(argv[0]);
	fprintf(stderr, "usage: peaks seq|conc|since\n");
	return 2;
}
