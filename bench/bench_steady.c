/* bench_steady.c — bench/growth.sh's steady program: the same 1000 blocks
** (100–149 bytes) replaced one by one, with a 1 ms sleep every 1000
** replacements, for argv[1] seconds (tests/session/unchanged.c bounded by
** time): nothing in its memory changes but its call counts. */
#include <stdlib.h>
#include <time.h>

static void *volatile keep[1000];

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5, end = now_s() + seconds;
	while (now_s() < end) {
		for (unsigned i = 0; i < 1000; i++) {
			free(keep[i]);
			keep[i] = malloc(100 + i % 50);
		}
		struct timespec d = {0, 1000000};
		nanosleep(&d, NULL);
	}
	return 0;
}
