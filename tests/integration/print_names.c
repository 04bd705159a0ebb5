/*
** print_names.c — the program of tests/integration/print_names.sh: what a
** program could notice of the helper that names print=types at exit.
** It counts SIGCHLD (a 'C' on fd 3 each), and a thread of its own reaps
** with waitpid(-1, WNOHANG) until the process is gone (an 'R' on fd 3 for
** each child reaped); it forks one child of its own, keeps a block from
** keep_block (line of keep_block), and exits with status 42 with errno
** set, from the main thread or, with "thread", from a thread of its own.
** Expected on fd 3: one C and one R, whatever meminst does at exit.
*/
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t reaped;
void *volatile kept;

static void on_chld(int sig)
{
	(void)sig;
	int saved = errno;
	(void)!write(3, "C", 1);
	errno = saved;
}

static void *reaper(void *arg)
{
	(void)arg;
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p > 0) {
			(void)!write(3, "R", 1);
			reaped++;
		}
		usleep(200);
	}
	return NULL;
}

__attribute__((noinline)) static void *keep_block(size_t n)
{
	char *p = malloc(n); /* line of keep_block */
	if (p)
		memset(p, 1, n); /* (so that the malloc is no tail call) */
	return p;
}

static void *leave(void *arg)
{
	(void)arg;
	errno = EDOM;
	exit(42);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, reaper, NULL) != 0)
		return 1;
	kept = keep_block(100);
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	while (!reaped)
		usleep(1000);
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		pthread_t l;
		pthread_create(&l, NULL, leave, NULL);
		for (;;)
			pause();
	}
	errno = EDOM;
	exit(42);
}
