/*
** known.c — a program with known allocations per function and a known
** split of CPU time, for tests/session/report.sh.  Built with
** -finstrument-functions, run under `meminst --trace`.
**
**   alloc_big    40 blocks of 256 KiB  (10 MiB), kept until the end
**   alloc_small  10000 blocks of 64 B  (640000 bytes), kept until the end
**   burn_a       3 units of CPU work, burn_b 1 unit (own time 3:1)
**
** Between the allocations and the frees it waits, so that the session's
** timeline has snapshots at the peak.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG_N 40
#define BIG_SIZE (256 * 1024)
#define SMALL_N 10000
#define SMALL_SIZE 64

static void *big[BIG_N], *small[SMALL_N];
static volatile unsigned long sink;

static void alloc_big(void)
{
	for (int i = 0; i < BIG_N; i++) {
		big[i] = malloc(BIG_SIZE);
		memset(big[i], i, BIG_SIZE);
	}
}

static void alloc_small(void)
{
	for (int i = 0; i < SMALL_N; i++)
		small[i] = malloc(SMALL_SIZE);
}

static void work(unsigned long units)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < units * 30000000ul; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

static void burn_a(void) { work(3); }
static void burn_b(void) { work(1); }

int main(void)
{
	alloc_big();
	alloc_small();
	usleep(300000);
	burn_a();
	burn_b();
	for (int i = 0; i < BIG_N; i++)
		free(big[i]);
	for (int i = 0; i < SMALL_N; i++)
		free(small[i]);
	printf("done %lu\n", sink & 1);
	return 0;
}
