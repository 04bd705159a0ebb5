/*
** close_stderr.c — a GNU-style program that closes stdout and stderr in an
** atexit handler (gnulib's close_stdout), on a disk that is full for it.
**
**   close_stderr BLOCKS LIMIT
**
** Keeps BLOCKS blocks alive, sets its own file size limit (RLIMIT_FSIZE)
** to LIMIT bytes (0: none) so that a large snapshot cannot be written,
** prints one line and exits 0 with stdout and stderr closed.  A snapshot
** that fails then has no stderr to be said on.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static void close_std(void)
{
	fclose(stdout);
	close(1);
	close(2);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: close_stderr BLOCKS LIMIT\n");
		return 2;
	}
	long n = atol(argv[1]);
	long limit = atol(argv[2]);
	for (long i = 0; i < n; i++)
		if (!malloc(24 + (size_t)(i % 64)))
			return 1;
	if (limit > 0) {
		struct rlimit r = {(rlim_t)limit, (rlim_t)limit};
		signal(SIGXFSZ, SIG_IGN); /* its own writes fail with EFBIG */
		setrlimit(RLIMIT_FSIZE, &r);
	}
	atexit(close_std);
	printf("kept %ld blocks\n", n);
	return 0;
}
