/*
** bench_mmap.c — CPU time of mmap+munmap pairs through the PLT, as a
** program's own arena allocator makes them (bench/mmap_cost.sh).
** usage: bench_mmap PAIRS [BYTES] [LIVE]
** LIVE regions stay mapped beside the loop (the table's size); prints
** "ns_per_pair=N" from CLOCK_PROCESS_CPUTIME_ID, and its user and system
** parts from getrusage ("user_ns=N sys_ns=N", a pair each): the hooks'
** bookkeeping is user time, the kernel's work the same with or without
** them, so the user part shows the bookkeeping apart from the kernel's
** noise.
*/
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* user and system CPU of the process so far, ns */
static void rusage_ns(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3;
	*sys = ru.ru_stime.tv_sec * 1e9 + ru.ru_stime.tv_usec * 1e3;
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
	double u0, s0, u1, s1;
	rusage_ns(&u0, &s0);
	double t0 = cpu_ns();
	for (long i = 0; i < pairs; i++) {
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, bytes) != 0)
			return 1;
	}
	double t1 = cpu_ns();
	rusage_ns(&u1, &s1);
	printf("ns_per_pair=%.1f user_ns=%.1f sys_ns=%.1f\n", (t1 - t0) / pairs,
	       (u1 - u0) / pairs, (s1 - s0) / pairs);
	return 0;
}
