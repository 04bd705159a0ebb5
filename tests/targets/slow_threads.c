/*
** slow_threads.c — a preloaded library (after libmeminst.so) whose
** pthread_create starts new threads late, and each later than every
** thread made after it, as a loaded machine's scheduler may: the k-th
** thread made (from 0) sleeps (8 - k) x SLOW_THREADS_MS ms (default 150)
** before it runs, from the 8th on none.  libmeminst's own threads (the
** CPU profile thread of control=on, made before the service thread, which
** libmeminst waits for) reach it through dlsym(RTLD_NEXT).  tests/integration/snap_exitpaths.sh: a short process
** that ends with _exit before they ran still leaves its exit snapshot.
** No allocation: the start records are a fixed pool.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static struct slow_start {
	void *(*start)(void *);
	void *arg;
	int k; /* made k-th */
	atomic_int used;
} pool[64];

static atomic_int made;

static void *slow_main(void *p)
{
	struct slow_start *s = p;
	void *(*start)(void *) = s->start;
	void *arg = s->arg;
	int k = s->k;
	atomic_store(&s->used, 0);
	const char *ms = getenv("SLOW_THREADS_MS");
	long n = (ms ? atol(ms) : 150) * (k < 8 ? 8 - k : 0);
	struct timespec ts = {n / 1000, n % 1000 * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return start(arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	void *fn = dlsym(RTLD_NEXT, "pthread_create");
	create_fn *real;
	memcpy(&real, &fn, sizeof fn);
	if (!real)
		return EAGAIN;
	for (int i = 0; i < 64; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&pool[i].used, &free_slot, 1)) {
			pool[i].start = start;
			pool[i].arg = arg;
			pool[i].k = atomic_fetch_add(&made, 1);
			int rc = real(th, attr, slow_main, &pool[i]);
			if (rc != 0)
				atomic_store(&pool[i].used, 0);
			return rc;
		}
	}
	return real(th, attr, start, arg);
}
