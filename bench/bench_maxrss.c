/*
** bench_maxrss.c — run a command, then report its wall time and peak memory.
**
**   bench_maxrss OUTFILE COMMAND [ARG]...
**
** Writes one line to OUTFILE: `wall_ns=N cpu_ns=N maxrss_kb=N status=N`,
** where cpu_ns is the user+system CPU time of the command and of every
** process it waited for, maxrss_kb is the largest resident set of the
** command or of any process it waited for (what `/usr/bin/time -f %M`
** shows), and status is the exit status, or 128 + signal number.  The command keeps this program's stdin,
** stdout and stderr.  bench/peers.sh uses it so that it needs neither GNU
** time nor a shell clock, and so that an LD_PRELOAD given to the command
** (through env) never applies to the measuring process itself.
*/
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t maxrss_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Fork and exec argv; return the raw wait status, or -1. */
static int maxrss_run(char **argv)
{
	int status;
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench_maxrss: fork");
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bench_maxrss: cannot run %s\n", argv[0]);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	return status;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	uint64_t start, wall;
	FILE *out;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_maxrss OUTFILE COMMAND [ARG]...\n");
		return 2;
	}
	start = maxrss_now_ns();
	status = maxrss_run(argv + 2);
	wall = maxrss_now_ns() - start;
	if (status < 0)
		return 1;
	/* RUSAGE_CHILDREN holds the largest peak among all waited-for
	** descendants, so a wrapper (timeout, heaptrack's script) does not
	** hide the program it runs. */
	getrusage(RUSAGE_CHILDREN, &ru);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "wall_ns=%llu cpu_ns=%llu maxrss_kb=%ld status=%d\n",
		(unsigned long long)wall,
		(unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			(unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull,
		ru.ru_maxrss,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fclose(out);
	return 0;
}
