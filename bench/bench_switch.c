/*
** bench_switch.c — how long a switch on or off (inspect start / stop)
** holds up the program's threads, at a million live blocks (bench/switch.sh).
**
** The main thread keeps N live 64-byte blocks (-n, default 1,000,000) and
** reads commands from the FIFO given, one a line:
**     fill     N more live blocks (made in whatever state meminst is now)
**     mark     the workers' longest gap between two allocations restarts
**     report   print "gap_us MAX own_us OWN pairs P": the longest gap since
**              the mark, over all workers; the longest of those in which
**              the worker was not preempted; their malloc+free pairs since
**     quit
** Two workers do malloc(32)+free pairs without pause and time each one, so
** that a pause of the program's threads shows as a long gap.  On a loaded
** machine the longest gap is the scheduler's (another job ran): a gap in
** which the worker's count of involuntary context switches (getrusage
** RUSAGE_THREAD) did not move is the worker's own, and a switch that held
** it up (a lock, a futex wait, work done in its thread) shows there.  A
** hypervisor's steal of the virtual CPU is not seen, so the window without
** a switch gives that measure's noise too.
*/
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WORKERS 2

static _Atomic bool quit;
static _Atomic uint64_t gap_max_ns, own_max_ns, pairs;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* *max = the larger of it and v */
static void raise_to(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t m = atomic_load(max);
	while (v > m && !atomic_compare_exchange_weak(max, &m, v))
		;
}

static long preempted(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static void *worker(void *arg)
{
	(void)arg;
	uint64_t last = now_ns();
	long niv_last = preempted();
	while (!atomic_load_explicit(&quit, memory_order_relaxed)) {
		void *volatile p = malloc(32);
		free(p);
		uint64_t t = now_ns();
		long niv = preempted();
		raise_to(&gap_max_ns, t - last);
		if (niv == niv_last)
			raise_to(&own_max_ns, t - last);
		atomic_fetch_add_explicit(&pairs, 1, memory_order_relaxed);
		last = now_ns(); /* the getrusage call is not the program's gap */
		niv_last = niv;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = 1000000;
	if (argc == 4 && strcmp(argv[2], "-n") == 0)
		n = atol(argv[3]);
	else if (argc != 2) {
		fprintf(stderr, "usage: bench_switch FIFO [-n BLOCKS]\n");
		return 2;
	}
	size_t cap = 0, used = 0;
	void **live = NULL;
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_t th[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	FILE *f = fopen(argv[1], "r");
	char line[64];
	for (bool fill = true; fill || fgets(line, sizeof line, f); fill = false) {
		if (fill || strncmp(line, "fill", 4) == 0) {
			cap += (size_t)n;
			live = realloc(live, cap * sizeof *live);
			while (used < cap)
				live[used++] = malloc(64);
			printf("filled %zu\n", used);
		} else if (strncmp(line, "mark", 4) == 0) {
			atomic_store(&gap_max_ns, 0);
			atomic_store(&own_max_ns, 0);
			atomic_store(&pairs, 0);
			printf("marked\n");
		} else if (strncmp(line, "report", 6) == 0) {
			printf("gap_us %.0f own_us %.0f pairs %llu\n", atomic_load(&gap_max_ns) / 1e3,
			       atomic_load(&own_max_ns) / 1e3, (unsigned long long)atomic_load(&pairs));
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		}
	}
	atomic_store(&quit, true);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < used; i++)
		free(live[i]);
	free(live);
	return 0;
}
