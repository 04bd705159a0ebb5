/*
** snap_kill.c — stores map snapshots back to back until it is killed, for
** tests/integration/snap_kill.sh.  Linked with -lmeminst.
**
** Usage: snap_kill PATH BLOCKS
**
** Allocates BLOCKS blocks of 48 bytes, then calls meminst_store_memory_data
** (PATH) in a loop, printing "stored N" (the snapshot's number) after each
** call, flushed, so that the test knows how many snapshots are complete.
** Each store writes one transaction; the test kills the program with
** SIGKILL while one is under way.
*/
#include <meminst.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	void **keep = malloc((size_t)n * sizeof *keep);
	for (long i = 0; keep && i < n; i++)
		keep[i] = malloc(48);
	for (;;) {
		int id = meminst_store_memory_data(argv[1]);
		printf("stored %d\n", id);
		fflush(stdout);
		if (id < 0)
			return 1;
	}
}
