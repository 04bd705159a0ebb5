/*
** fork_churn.c — forks beside threads that allocate, for
** tests/integration/fork_churn.sh.
**
** Usage: fork_churn FORKS
**
** Two threads allocate and free without pause, from call chains of random
** depth (so that site_depth= walks the stack with libunwind, and the
** sampler's and alloc_sample's walks land in them), while the main thread
** forks FORKS times; each child allocates, frees and exits (its exit
** snapshot).  A child still there after 10 s is stuck (a lock a thread of
** the parent held at the fork): "stuck PID", it is killed and the run
** stops with status 1.  Then "forks N stuck K".
*/
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

/* n frames of its own above the allocation */
__attribute__((noinline)) static void *deep(int n, size_t size)
{
	if (n == 0) {
		char *p = malloc(size);
		if (p)
			memset(p, 1, size < 64 ? size : 64);
		return p;
	}
	void *r = deep(n - 1, size);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return r;
}

static void *churn(void *arg)
{
	unsigned s = (unsigned)(uintptr_t)arg;
	void *keep[64] = {0};
	while (!atomic_load(&stop)) {
		s = s * 1103515245 + 12345;
		unsigned i = (s >> 8) % 64;
		free(keep[i]);
		keep[i] = deep((s >> 16) % 8, 16 + (s >> 20) % 4000);
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

/* 0 when pid ended within 10 s, 1 when it had to be killed. */
static int reap(pid_t pid)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 10) {
			printf("stuck %d\n", (int)pid);
			fflush(stdout);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1;
		}
		struct timespec nap = {0, 200000};
		nanosleep(&nap, NULL);
	}
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 100, stuck = 0, i;
	pthread_t t[2];
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)) != 0)
			return 2;
	for (i = 0; i < forks && !stuck; i++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			free(deep(3, 100));
			exit(0);
		}
		stuck += reap(p);
	}
	atomic_store(&stop, true);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	printf("forks %d stuck %d\n", i, stuck);
	return stuck ? 1 : 0;
}
