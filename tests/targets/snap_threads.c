/*
** snap_threads.c — snapshots taken while other threads allocate and free,
** for tests/integration/snap_threads.sh.  Linked with -lmeminst.
**
** Usage: snap_threads PATH
**
** Four threads churn: each keeps 500 slots and, in a loop, frees a slot's
** block and puts a new one of a random size (1..2048 bytes) in it, until
** told to stop.  Meanwhile the main thread stores 20 snapshots with
** meminst_store_memory_data(PATH), waiting before each until every thread
** has done 200 more steps, so that each snapshot falls in the middle of
** the churn.  Every snapshot must still be one instant: the status of each
** kind adds up to the blocks listed (the test checks the database).
** Prints "store I RESULT" for each, after the threads have stopped.
*/
#include <meminst.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define SLOTS 500
#define STORES 20

static atomic_int stop;
static atomic_long steps[THREADS];

static void *churn(void *arg)
{
	long me = (long)(intptr_t)arg;
	void *slot[SLOTS] = {NULL};
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned i = (unsigned)(x % SLOTS);
		free(slot[i]);
		slot[i] = malloc(1 + (size_t)(x >> 32) % 2048);
		atomic_fetch_add_explicit(&steps[me], 1, memory_order_relaxed);
	}
	for (unsigned i = 0; i < SLOTS; i++)
		free(slot[i]);
	return NULL;
}

/* Until every thread has done `more` steps since the call. */
static void let_run(long more)
{
	long from[THREADS];
	for (int t = 0; t < THREADS; t++)
		from[t] = atomic_load(&steps[t]);
	for (int t = 0; t < THREADS; t++)
		while (atomic_load(&steps[t]) - from[t] < more)
			sched_yield();
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	int rc[STORES];
	if (argc != 2) {
		fprintf(stderr, "usage: snap_threads PATH\n");
		return 2;
	}
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, churn, (void *)(intptr_t)t) != 0)
			return 1;
	let_run(2 * SLOTS);
	for (int i = 0; i < STORES; i++) {
		rc[i] = meminst_store_memory_data(argv[1]);
		let_run(200);
	}
	atomic_store(&stop, 1);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int i = 0; i < STORES; i++)
		printf("store %d %d\n", i + 1, rc[i]);
	return 0;
}
