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
** snapshot).  A child still there after 10 s that has not used a tick of
** CPU time in 5 s (or still there after 300 s) is stuck (a lock a thread
** of the parent held at the fork): "stuck PID", it is killed and the run
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

/* The CPU time pid has used, its threads' together, in clock ticks, and
** its main thread's state (R, S, D...) in *state; -1 when it cannot be
** read. */
static long cpu_ticks(pid_t pid, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *c = strrchr(buf, ')'); /* fields 14 and 15 after the name */
	unsigned long utime, stime;
	if (!c || sscanf(c + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", state, &utime, &stime) != 3)
		return -1;
	return (long)(utime + stime);
}

/* Where pid's main thread waits in the kernel (/proc/PID/wchan), for the
** report of a stuck child. */
static void wait_channel(pid_t pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(out, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	out[n] = 0;
	if (!n)
		snprintf(out, len, "?");
}

/*
** 0 when pid ended, 1 when it had to be killed as stuck: still there after
** 10 s and not one tick of CPU time in the last 5 s (a child waiting for a
** lock for ever; one that only waits its turn on a loaded machine moves on,
** however slowly, and one waiting for the disk, state D, as its exit
** snapshot's writes may on a loaded machine, is not stuck), or still
** there after 300 s whatever it does.  A stuck child is named with its
** state and where it waits.
*/
static int reap(pid_t pid)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	long ticks = -2, ticks_at = 0;
	for (;;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		char state = '?';
		long waited = (long)(now.tv_sec - start.tv_sec), cpu = waited >= 5 ? cpu_ticks(pid, &state) : -2;
		if (cpu != ticks || state == 'D')
			ticks = cpu, ticks_at = waited;
		if ((waited >= 10 && waited - ticks_at >= 5) || waited >= 300) {
			char wchan[128];
			wait_channel(pid, wchan, sizeof wchan);
			printf("stuck %d (state %c, waiting in %s)\n", (int)pid, state, wchan);
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
