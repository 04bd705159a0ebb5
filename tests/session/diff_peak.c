/*
** diff_peak.c — a peak that no snapshot holds, for tests/session/diff_peak.sh:
** ./diff_peak S keeps 4 MiB to the end and, meanwhile, allocates and frees
** one block of S bytes.  With S under 2.5 % of the 4 MiB the total never
** comes down enough for the launcher's peak trigger, so the highest
** snapshot (the exit one) holds 4 MiB and the peak, 4 MiB + S, is only in
** the counters.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: diff_peak S\n");
		return 2;
	}
	size_t keep = 4u << 20, spike = strtoul(argv[1], NULL, 10);
	char *k = malloc(keep);
	memset(k, 1, keep);
	sink = k;
	char *s = malloc(spike);
	memset(s, 2, spike);
	sink = s;
	free(s);
	return 0;
}
