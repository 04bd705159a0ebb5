/*
** exec_images.c — a process that computes, then becomes another program
** (exec_images.sh): `exec_images N [PROGRAM ARGS...]` spins N rounds in
** spin_before_exec (a known function, traced with -finstrument-functions
** and where the samples land), prints one line, then executes PROGRAM in
** the same process.  Bounded by the count, not by time.
*/
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void spin_before_exec(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 7;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	spin_before_exec(n);
	printf("spun %ld\n", n);
	if (argc > 2) {
		fflush(stdout);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	return 0;
}
