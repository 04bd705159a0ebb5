/*
** snap_peak.c — a program that climbs to one peak and comes down, for
** tests/integration/snap_peak.sh.
**
** Usage: snap_peak KIB [BLOCK [GOFILE]]
**
** Runs preloaded with snapshot_at=…peak….  It allocates blocks of BLOCK
** bytes (default 1024) one by one until KIB KiB of them are alive, frees
** them all, prints "pid N" and "peak BYTES" (the bytes of its blocks at
** the top), and, given GOFILE, waits until the test creates that file (at
** most 30 s, else exit status 4) before it exits: the test decides when
** the peak snapshots it waits for are stored.  Without GOFILE it exits at
** once, and the peak snapshots taken while it climbed must still be stored.
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int wait_for(const char *gofile)
{
	for (int i = 0; i < 3000; i++) {
		if (access(gofile, F_OK) == 0)
			return 0;
		pause_ms(10);
	}
	fprintf(stderr, "snap_peak: %s did not appear within 30 s\n", gofile);
	return 4;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: snap_peak KIB [BLOCK [GOFILE]]\n");
		return 2;
	}
	size_t block = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	size_t n = (size_t)atol(argv[1]) * 1024 / block;
	char **blocks = calloc(n + 1, sizeof *blocks);
	if (!blocks || !block)
		return 1;
	for (size_t i = 0; i < n; i++) {
		blocks[i] = malloc(block);
		if (!blocks[i])
			return 1;
		blocks[i][0] = (char)i;
	}
	for (size_t i = 0; i < n; i++)
		free(blocks[i]);
	free(blocks);
	printf("pid %d\npeak %zu\n", (int)getpid(), n * block);
	fflush(stdout);
	return argc > 3 ? wait_for(argv[3]) : 0;
}
