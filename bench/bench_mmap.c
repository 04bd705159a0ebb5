/*
** bench_mmap.c — CPU time of mmap+munmap pairs through the PLT, as a
** program's own arena allocator makes them (bench/mmap_cost.sh).
** usage: bench_mmap PAIRS [BYTES] [LIVE]
** LIVE regions stay mapped beside the loop (the table's size); prints
** "ns_per_pair=N" from CLOCK_PROCESS_CPUTIME_ID.
*/
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 200000;
	size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : 65536;
	long live = argc > 3 ? atol(argv[3]) : 0;
	if (pairs <= 0 || bytes == 0 || live < 0) {
		fprintf(stderr, "usage: bench_mmap PAIRS [BYTES] [LIVE]\n");
		return 2;
	}
	for (long i = 0; i < live; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
			return 1;
	double t0 = cpu_ns();
	for (long i = 0; i < pairs; i++) {
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, bytes) != 0)
			return 1;
	}
	printf("ns_per_pair=%.1f\n", (cpu_ns() - t0) / pairs);
	return 0;
}
