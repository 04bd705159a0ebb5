/*
** sig_blocked.c — a program that keeps a signal from being delivered.
**
**   sig_blocked block|ignore|handler SIGNO
**
** block: blocks SIGNO in its only thread (sigprocmask); ignore: sets it to
** SIG_IGN; handler: installs a handler of its own.  Then it prints its pid
** and "ready", waits for a line on stdin (the test sends SIGNO and asks
** for a snapshot meanwhile), allocates, and exits 0.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void own(int sig)
{
	(void)sig;
	got = 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sig_blocked block|ignore|handler SIGNO\n");
		return 2;
	}
	int sig = atoi(argv[2]);
	if (!strcmp(argv[1], "block")) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_BLOCK, &set, NULL);
	} else if (!strcmp(argv[1], "ignore")) {
		signal(sig, SIG_IGN);
	} else {
		signal(sig, own);
	}
	char *keep = malloc(1000);
	printf("%ld ready\n", (long)getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		line[0] = 0;
	free(keep);
	printf("done\n");
	return 0;
}
