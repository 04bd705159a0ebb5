/*
** snap_wait.c — a program that holds known blocks while something outside
** takes snapshots of it, for tests/integration/snap_signal.sh,
** snap_control.sh and snap_interval.sh.
**
** Usage: snap_wait until GOFILE [SIGNAL]   wait until GOFILE exists
**        snap_wait sleep MS [SIGNAL]       sleep MS milliseconds (0: none)
**
** Runs preloaded.  It allocates 77 blocks of 1000 bytes and 3 of 5 bytes
** (80 blocks, 77015 bytes, all in the class named after the executable),
** prints "pid N", raises SIGNAL (USR1, USR2, HUP or RTMIN+N) if given,
** then waits: until the test creates GOFILE (so the test, not a timer,
** decides when the snapshot it waits for has been stored; after 30 seconds
** the program gives up with exit status 4), or for MS milliseconds.  Then
** it frees the 77 large blocks and exits, leaving 3 blocks of 5 bytes for
** the exit snapshot.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* volatile: stores the compiler may not drop, nor the mallocs with them */
static void *volatile big[77], *volatile small[3];

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int signal_of(const char *name)
{
	if (strcmp(name, "USR1") == 0)
		return SIGUSR1;
	if (strcmp(name, "USR2") == 0)
		return SIGUSR2;
	if (strcmp(name, "HUP") == 0)
		return SIGHUP;
	if (strncmp(name, "RTMIN+", 6) == 0)
		return SIGRTMIN + atoi(name + 6);
	fprintf(stderr, "snap_wait: unknown signal %s\n", name);
	exit(2);
}

static int wait_for(const char *gofile)
{
	for (int i = 0; i < 3000; i++) {
		if (access(gofile, F_OK) == 0)
			return 0;
		pause_ms(10);
	}
	fprintf(stderr, "snap_wait: %s did not appear within 30 s\n", gofile);
	return 4;
}

int main(int argc, char **argv)
{
	bool until = argc >= 3 && strcmp(argv[1], "until") == 0;
	if (!until && !(argc >= 3 && strcmp(argv[1], "sleep") == 0)) {
		fprintf(stderr, "usage: snap_wait until GOFILE [SIGNAL] | snap_wait sleep MS [SIGNAL]\n");
		return 2;
	}
	for (int i = 0; i < 77; i++)
		big[i] = malloc(1000);
	for (int i = 0; i < 3; i++)
		small[i] = malloc(5);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 3 && raise(signal_of(argv[3])) != 0)
		return 3;
	int rc = 0;
	if (until)
		rc = wait_for(argv[2]);
	else
		pause_ms(atol(argv[2]));
	for (int i = 0; i < 77; i++)
		free(big[i]);
	return rc;
}
