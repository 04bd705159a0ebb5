/*
** exit_paths.c — the ways a process ends without exit(3), for
** tests/integration/snap_exitpaths.sh.  It holds 50 blocks of 1000 bytes,
** prints "ready" and then:
**   _exit N / _Exit N   ends with that call and status N;
**   thread N            starts a thread that sleeps, then _exit(N) (no exit
**                       snapshot: other threads run);
**   vfork               a vfork child _exits at once; the parent waits for
**                       it and returns 0;
**   handler N           a SIGALRM handler calls _exit(N) while the main
**                       thread allocates and frees without end;
**   pthread_exit        a worker allocates, sleeps 0.3 s and returns; main
**                       leaves with pthread_exit (status 0 when the worker
**                       ends);
**   pthread_exit_wait   the same, the worker sleeping 60 s (for a SIGTERM).
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile held[50];

static void *worker(void *arg)
{
	void *p = malloc(4000);
	usleep((useconds_t)(long)arg);
	free(p);
	return NULL;
}

static int code;
static void on_alarm(int sig)
{
	(void)sig;
	_exit(code);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *how = argv[1];
	code = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < 50; i++)
		held[i] = malloc(1000);
	printf("ready\n");
	fflush(stdout);
	if (!strcmp(how, "_exit"))
		_exit(code);
	if (!strcmp(how, "_Exit"))
		_Exit(code);
	pthread_t t;
	if (!strcmp(how, "thread")) {
		pthread_create(&t, NULL, worker, (void *)3000000L);
		usleep(100000);
		_exit(code);
	}
	if (!strcmp(how, "vfork")) {
		pid_t pid = vfork();
		if (pid == 0)
			_exit(9);
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) && WEXITSTATUS(st) == 9 ? 0 : 1;
	}
	if (!strcmp(how, "handler")) {
		signal(SIGALRM, on_alarm);
		struct itimerval it = {{0, 1000}, {0, 1000}};
		setitimer(ITIMER_REAL, &it, NULL);
		for (;;) {
			void *volatile p = malloc(64 + (size_t)(rand() % 4096));
			free(p);
		}
	}
	if (!strcmp(how, "pthread_exit") || !strcmp(how, "pthread_exit_wait")) {
		long us = !strcmp(how, "pthread_exit") ? 300000L : 60000000L;
		pthread_create(&t, NULL, worker, (void *)us);
		pthread_exit(NULL);
	}
	return 2;
}
