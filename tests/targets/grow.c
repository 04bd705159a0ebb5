/*
** grow.c — a program that grows until something ends it: the OOM killer
** in a memory cgroup with a limit, or a SIGKILL (tests/integration/
** snap_oom.sh).
**
**   grow STEPS PAUSE_MS [HOLD_MS]
**
** Allocates STEPS blocks of 256 KiB, each from grow_step (the site the
** map must show) and written through, so that they are resident; sleeps
** PAUSE_MS after each.  Then prints "grown N" (N the KiB held) and, with
** HOLD_MS, sleeps that long in 10 ms naps waiting to be killed; exits 0 if
** nobody did.  Bounded by its arguments: it never runs forever.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEP (256 * 1024)

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *volatile held[1 << 16];

__attribute__((noinline)) static void *grow_step(void)
{
	void *p = malloc(STEP);
	if (p)
		memset(p, 0x5a, STEP);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: grow STEPS PAUSE_MS [HOLD_MS]\n");
		return 2;
	}
	long steps = atol(argv[1]), pause = atol(argv[2]), hold = argc > 3 ? atol(argv[3]) : 0;
	if (steps < 0 || steps > (long)(sizeof held / sizeof held[0]))
		steps = sizeof held / sizeof held[0];
	for (long i = 0; i < steps; i++) {
		if (!(held[i] = grow_step()))
			return 1;
		if (pause > 0)
			nap_ms(pause);
	}
	printf("grown %ld\n", steps * (STEP / 1024));
	fflush(stdout);
	for (long t = 0; t < hold; t += 10)
		nap_ms(10);
	return 0;
}
