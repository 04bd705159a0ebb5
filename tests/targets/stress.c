/*
** stress.c — long-running stress workloads for `make check-long`
** (tests/compat/stress.sh).
**
**   stress xthread THREADS SECONDS  producers allocate, consumers in other
**                                   threads check and free, for SECONDS
**   stress forks SECONDS            allocation storms in 4 threads while
**                                   the main thread forks; each child
**                                   allocates, stores a snapshot through the
**                                   API (when preloaded) and exits cleanly
**   stress dlopen ROUNDS            dlopen/dlclose of libm and libz in a
**                                   loop, allocating in between
**
** Each prints one line of figures that do not depend on timing, so the
** output is the same with and without libmeminst, and exits 0 only when
** every check passed.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ xthread -- */

#define QUEUE 1024
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *slot[QUEUE];
	size_t head, tail;
	int done;
};

static struct queue *queues;
static double deadline;
static atomic_long bad_blocks;
static const char *exe;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i);
}

static void *producer(void *arg)
{
	struct queue *q = arg;
	unsigned seed = (unsigned)(uintptr_t)arg;
	while (now() < deadline) {
		for (int k = 0; k < 256; k++) {
			size_t n = 8 + (seed = seed * 1103515245u + 12345u) % 2000;
			unsigned char *p = malloc(n + sizeof(size_t));
			if (!p)
				continue;
			memcpy(p, &n, sizeof n);
			fill(p + sizeof n, n, (unsigned)n);
			pthread_mutex_lock(&q->lock);
			while (q->head - q->tail == QUEUE)
				pthread_cond_wait(&q->cond, &q->lock);
			q->slot[q->head++ % QUEUE] = p;
			pthread_cond_broadcast(&q->cond);
			pthread_mutex_unlock(&q->lock);
		}
	}
	pthread_mutex_lock(&q->lock);
	q->done = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *consumer(void *arg)
{
	struct queue *q = arg;
	for (;;) {
		pthread_mutex_lock(&q->lock);
		while (q->head == q->tail && !q->done)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->head == q->tail) {
			pthread_mutex_unlock(&q->lock);
			return NULL;
		}
		unsigned char *p = q->slot[q->tail++ % QUEUE];
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		size_t n;
		memcpy(&n, p, sizeof n);
		for (size_t i = 0; i < n; i++)
			if (p[sizeof n + i] != (unsigned char)(n + i)) {
				atomic_fetch_add(&bad_blocks, 1);
				break;
			}
		free(p);
	}
}

static int run_xthread(int threads, double seconds)
{
	int pairs = threads / 2 > 0 ? threads / 2 : 1;
	pthread_t *th = calloc((size_t)pairs * 2, sizeof *th);
	queues = calloc((size_t)pairs, sizeof *queues);
	deadline = now() + seconds;
	for (int i = 0; i < pairs; i++) {
		pthread_mutex_init(&queues[i].lock, NULL);
		pthread_cond_init(&queues[i].cond, NULL);
		pthread_create(&th[2 * i], NULL, producer, &queues[i]);
		pthread_create(&th[2 * i + 1], NULL, consumer, &queues[i]);
	}
	for (int i = 0; i < 2 * pairs; i++)
		pthread_join(th[i], NULL);
	printf("xthread %d threads: bad blocks %ld\n", 2 * pairs, atomic_load(&bad_blocks));
	free(th);
	free(queues);
	probe_reader();
	probe_check_own_class_empty(exe, 1);
	probe_check_sums("after xthread");
	return atomic_load(&bad_blocks) ? 1 : 0;
}

/* -------------------------------------------------------------- forks -- */

static atomic_int storm_stop;

static void *storm(void *arg)
{
	void *keep[64] = {0};
	unsigned seed = (unsigned)(uintptr_t)arg;
	while (!atomic_load(&storm_stop)) {
		unsigned i = (seed = seed * 1103515245u + 12345u) % 64;
		free(keep[i]);
		keep[i] = malloc(16 + seed % 4096);
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

/* A snapshot of the child, through the API found at run time, when the
** test asks for one (STRESS_SNAPSHOT=PATH, %p expands) and we are preloaded. */
static int child_snapshot(void)
{
	const char *path = getenv("STRESS_SNAPSHOT");
	void *sym = dlsym(RTLD_DEFAULT, "meminst_store_memory_data");
	int (*store)(const char *);
	if (!path || !sym || !probe_on())
		return 0;
	memcpy(&store, &sym, sizeof store);
	return store(path) > 0 ? 0 : -1;
}

static int child_work(void)
{
	size_t total = 0;
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(64 + i);
		if (!p)
			return 3;
		memset(p, i, 64 + i);
		total += (unsigned char)p[i];
		free(p);
	}
	if (child_snapshot() < 0)
		return 4;
	return total == 0 ? 5 : 0;
}

static int run_forks(double seconds)
{
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, storm, (void *)(uintptr_t)(i + 1));
	int children = 0, failed = 0;
	for (double end = now() + seconds; now() < end || children < 20;) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(child_work());
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
		children++;
	}
	atomic_store(&storm_stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("forks: failed children %d\n", failed);
	return failed ? 1 : 0;
}

/* ------------------------------------------------------------- dlopen -- */

static int run_dlopen(int rounds)
{
	const char *libs[] = {"libm.so.6", "libz.so.1"};
	int failed = 0;
	for (int r = 0; r < rounds; r++) {
		void *h = dlopen(libs[r % 2], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			failed++;
			continue;
		}
		char *p = malloc(100 + r % 1000);
		if (r % 2 == 0) {
			double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
			if (!cosine || cosine(0.0) != 1.0)
				failed++;
		} else if (!dlsym(h, "zlibVersion")) {
			failed++;
		}
		free(p);
		dlclose(h);
	}
	printf("dlopen %d rounds: failed %d\n", rounds, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	exe = argv[0];
	if (argc >= 4 && !strcmp(argv[1], "xthread"))
		return run_xthread(atoi(argv[2]), atof(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "forks"))
		return run_forks(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(atoi(argv[2]));
	fprintf(stderr, "usage: stress xthread THREADS SECONDS | forks SECONDS | dlopen ROUNDS\n");
	return 2;
}
