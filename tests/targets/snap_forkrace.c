/*
** snap_forkrace.c — forks racing with a process's first snapshot store,
** for tests/integration/snap_forkrace.sh.
**
** Usage: snap_forkrace ROUNDS DIR
**
** Runs preloaded with MEMINST=mim,snapshot=DIR/c.%p.db.  Each round forks a
** worker: in it, a thread stores the worker's first snapshot through the
** API (meminst_store_memory_data, DIR/api.PID.db) while the worker's main
** thread forks children as fast as it can until that store is done (at
** most 50; the program's own fork prepare handler takes 2 ms).  Each child allocates and exits at once (its exit snapshot).
** A child still there after 3 s is stuck: it is reported ("stuck PID"),
** killed, and the run stops there with status 1.  Then "rounds N forks M stuck K".
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static int (*store_data)(const char *);

/* The program's own prepare handler, slow (a program that flushes or
** locks something of its own before each fork): glibc runs prepare
** handlers without its fork handler lock, so a handler registered during
** this one is not run by this fork, neither before nor in the child. */
static void slow_prepare(void)
{
	struct timespec two = {0, 2000000};
	nanosleep(&two, NULL);
}
static atomic_bool stored;
static char api_path[4200];

static void *store_first(void *arg)
{
	(void)arg;
	store_data(api_path);
	atomic_store(&stored, true);
	return NULL;
}

/* Wait for pid, 3 s at most: 0 when it ended, 1 when it had to be killed. */
static int reap(pid_t pid)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 3) {
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

/* One worker: its first store, and forks during it. */
static int worker(const char *dir)
{
	snprintf(api_path, sizeof api_path, "%s/api.%d.db", dir, (int)getpid());
	pthread_t t;
	if (pthread_create(&t, NULL, store_first, NULL) != 0)
		return 2;
	int forks = 0, stuck = 0;
	while (!atomic_load(&stored) && forks < 50) {
		pid_t p = fork();
		if (p == 0) {
			void *volatile x = malloc(100);
			(void)x;
			exit(0);
		}
		if (p < 0)
			break;
		forks++;
		stuck += reap(p);
	}
	pthread_join(t, NULL);
	return (stuck ? 100 : 10) + forks; /* 2: an error */
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *fn = dlsym(RTLD_DEFAULT, "meminst_store_memory_data");
	if (!fn) {
		fprintf(stderr, "snap_forkrace: not preloaded\n");
		return 2;
	}
	*(void **)&store_data = fn;
	pthread_atfork(slow_prepare, NULL, NULL);
	int rounds = atoi(argv[1]), forks = 0, stuck = 0;
	for (int i = 0; i < rounds; i++) {
		pid_t w = fork();
		if (w == 0)
			exit(worker(argv[2]));
		int st;
		if (w < 0 || waitpid(w, &st, 0) != w || !WIFEXITED(st) || WEXITSTATUS(st) == 2)
			return 2;
		int code = WEXITSTATUS(st);
		stuck += code >= 100;
		forks += code >= 100 ? code - 100 : code - 10;
		if (stuck) /* one is proof enough; each costs 3 s */
			break;
	}
	printf("rounds %d forks %d stuck %d\n", rounds, forks, stuck);
	return stuck != 0;
}
