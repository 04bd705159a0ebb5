/*
** clone_raw.c — children made by clone without fork, for
** tests/integration/clone_raw.sh.
**
** Usage: clone_raw ROUNDS
**
** Two threads allocate and free without pause.  Each round the main thread
** makes one child with syscall(SYS_clone, SIGCHLD) and one with clone3 (when
** the kernel has it): glibc runs no fork handler for them.  Each child
** allocates, frees some, and ends with exit(3), so that atexit handlers and
** destructors (meminst's exit snapshot) run in a process that has the
** parent's memory but only one thread.  A child still there after 10 s is
** stuck ("stuck PID", killed); a child that ends otherwise than with status
** 3 is reported ("child status X").  Then "rounds N children M bad K"; the
** exit status is 1 when K > 0.
*/
#define _GNU_SOURCE
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

static void *churn(void *arg)
{
	unsigned s = (unsigned)(uintptr_t)arg;
	void *keep[32] = {0};
	while (!atomic_load(&stop)) {
		s = s * 1103515245 + 12345;
		unsigned i = (s >> 8) % 32;
		free(keep[i]);
		keep[i] = malloc(16 + (s >> 16) % 2000);
	}
	for (int i = 0; i < 32; i++)
		free(keep[i]);
	return NULL;
}

static void child(void)
{
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = malloc(100 * (size_t)(i + 1));
	for (int i = 0; i < 10; i += 2)
		free(p[i]);
	exit(3);
}

static pid_t raw_clone(int kind)
{
#ifdef SYS_clone3
	if (kind == 1) {
		struct clone_args ca;
		memset(&ca, 0, sizeof ca);
		ca.exit_signal = SIGCHLD;
		return (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
	}
#endif
	if (kind == 1)
		return -1;
	return (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
}

/* 0: pid ended with status 3 within 10 s; 1: it did not. */
static int reap(pid_t pid)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int st;
	while (waitpid(pid, &st, WNOHANG) != pid) {
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
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		return 0;
	printf("child status %#x\n", st);
	fflush(stdout);
	return 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20, children = 0, bad = 0, r;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 7)) != 0)
			return 2;
	fflush(stdout); /* the children's exit must not write it again */
	for (r = 0; r < rounds && !bad; r++)
		for (int kind = 0; kind < 2; kind++) {
			pid_t p = raw_clone(kind);
			if (p == 0)
				child();
			if (p < 0)
				continue; /* no clone3 here */
			children++;
			bad += reap(p);
		}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("rounds %d children %d bad %d\n", r, children, bad);
	return bad ? 1 : 0;
}
