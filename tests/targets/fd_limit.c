/*
** fd_limit.c — a program that lowers its descriptor limit (RLIMIT_NOFILE,
** soft) to argv[1] once it runs, then allocates for 25 pauses of 20 ms
** (tests/integration/fd_limit.sh): meminst's service thread polls more
** descriptors than that, and poll(2) refuses it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct rlimit r;
	if (argc < 2 || getrlimit(RLIMIT_NOFILE, &r) != 0)
		return 2;
	r.rlim_cur = (rlim_t)atol(argv[1]);
	if (setrlimit(RLIMIT_NOFILE, &r) != 0)
		return 3;
	void *volatile sink;
	for (int i = 0; i < 25; i++) {
		for (int j = 0; j < 1000; j++) {
			sink = malloc((size_t)(16 + j % 500));
			free(sink);
		}
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	printf("limit %s: done\n", argv[1]);
	return 0;
}
