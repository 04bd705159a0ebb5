/*
** sig_threads.c — signals whose handler allocates and frees, arriving
** while threads start (their first allocation gives them meminst's record)
** and while they end (allocations in a key destructor that runs after
** meminst's, when the thread has no record any more).  2000 threads, 4 at a
** time; each allocates, passes blocks to the others through a shared slot
** (so that frees cross threads), and its key destructor does the same
** 200 times.
** A storm thread sends the process SIGUSR1 until the last thread is done;
** only the workers leave SIGUSR1 unblocked, so every signal lands in one
** of them.  The handler allocates, frees, and frees the block in the
** shared slot (another thread's).  A thread still running 60 s after its
** batch started is stuck ("stuck", status 1).  Then every block of the
** workers must be counted back out: "ok".
** Linked with libmeminst (meminst_status_read; without MEMINST it reads
** nothing and only the run is checked).  A handler that allocates is
** outside POSIX; glibc's malloc takes it while a thread's cache is set up
** (done first, signals blocked) and until the thread starts to empty it
** (signals blocked again at the end of the late destructor).  jemalloc does not: a free from a handler
** that interrupted its per-thread setup crashes it (backend=jemalloc, with
** or without meminst's counting).
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "worker_blocks.h"

#define THREADS 2000
#define BATCH 4

static _Atomic(void *) slot;
static _Atomic int stop;
static pthread_key_t key;

/* Put a new block in the shared slot and free the one it held. */
static void pass_block(size_t size)
{
	void *b = malloc(size);
	free(atomic_exchange(&slot, b));
}

static void block_usr1(void)
{
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
}

static void on_signal(int sig)
{
	(void)sig;
	free(malloc(40));
	free(atomic_exchange(&slot, NULL));
}

/* Runs after meminst's own key destructor (a later key): the thread has no
** record any more, its allocations go to the orphans. */
static void late_destructor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		void *p = malloc(24 + i % 40);
		pass_block(100);
		free(p);
	}
	/* Next glibc empties the thread's cache (tcache_thread_shutdown) under
	** its arena lock with signals open: a handler's malloc there waits on
	** that lock for ever, with or without meminst. */
	block_usr1();
}

/* glibc's own malloc, not the interposed name: its per-thread cache
** (tcache) is set up under its arena lock at a thread's first malloc, where
** a handler's malloc would wait on that lock with or without meminst. */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);

static void *worker(void *arg)
{
	__libc_free(__libc_malloc(1)); /* SIGUSR1 still blocked */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	pthread_setspecific(key, arg);
	for (int i = 0; i < 40; i++) {
		void *p = malloc(16 + i * 8);
		pass_block(64);
		free(p);
	}
	return NULL;
}

static void *storm(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		kill(getpid(), SIGUSR1);
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	block_usr1(); /* main and the storm: never */
	if (pthread_key_create(&key, late_destructor) != 0)
		return 2;
	pthread_t st;
	if (pthread_create(&st, NULL, storm, NULL) != 0)
		return 2;
	for (int done = 0; done < THREADS; done += BATCH) {
		pthread_t th[BATCH];
		for (int i = 0; i < BATCH; i++)
			if (pthread_create(&th[i], NULL, worker, &key) != 0)
				return 2;
		struct timespec limit;
		clock_gettime(CLOCK_REALTIME, &limit);
		limit.tv_sec += 60;
		for (int i = 0; i < BATCH; i++)
			if (pthread_timedjoin_np(th[i], NULL, &limit) != 0) {
				printf("stuck after %d threads\n", done);
				fflush(stdout);
				_exit(1);
			}
	}
	atomic_store(&stop, 1);
	pthread_join(st, NULL);
	free(atomic_exchange(&slot, NULL));
	uint64_t live = worker_blocks();
	if (live) {
		printf("%llu blocks of the workers still counted\n", (unsigned long long)live);
		return 1;
	}
	printf("ok\n");
	return 0;
}
