/*
** snap_shared.c — forks while another process holds its snapshot file's
** write lock, for tests/integration/snap_shared.sh.
**
** Usage: snap_shared N GO
**
** Prints "pid PID", forks N children (each ends at once with _exit), prints
** "forked N", then waits until the file GO exists and exits 0.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[1]);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return 1;
	}
	printf("forked %d\n", n);
	fflush(stdout);
	while (access(argv[2], F_OK) != 0) {
		void *volatile b = malloc(100); /* the interval snapshots have something to show */
		free(b);
		struct timespec t = {0, 10000000};
		nanosleep(&t, NULL);
	}
	return 0;
}
