/*
** phases.c — memory in two phases known in advance, for timeline_by.sh:
**   phase A: grow_x allocates 32 blocks of 64 KiB, one every 5 ms (2 MiB);
**   phase B: grow_y allocates 48 blocks of 64 KiB, one every 5 ms, while
**            an X block is freed at every step until none is left (3 MiB).
** The Y blocks stay live to the end.  Each phase sleeps 160 ms or more in
** all, so that interval snapshots fall inside both (the run takes ~0.4 s).
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK (64 << 10)
#define NX 32
#define NY 48

static void *xs[NX], *ys[NY];

static void nap(void)
{
	struct timespec t = {0, 5000000};
	nanosleep(&t, NULL);
}

__attribute__((noinline)) static void *grow_x(void)
{
	void *p = malloc(BLOCK);
	memset(p, 1, BLOCK);
	return p;
}

__attribute__((noinline)) static void *grow_y(void)
{
	void *p = malloc(BLOCK);
	memset(p, 2, BLOCK);
	return p;
}

int main(void)
{
	for (int i = 0; i < NX; i++) {
		xs[i] = grow_x();
		nap();
	}
	for (int i = 0; i < NY; i++) {
		ys[i] = grow_y();
		if (i < NX) {
			free(xs[i]);
			xs[i] = NULL;
		}
		nap();
	}
	return ys[NY - 1] == NULL;
}
