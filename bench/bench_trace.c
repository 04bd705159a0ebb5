/*
** bench_trace.c — the cost of exact tracing per call+return pair.  Built
** twice from this file: bench_trace (-finstrument-functions) and
** bench_trace_bare (not instrumented); bench/trace.sh runs them bare, with
** an empty hook, under meminst trace=wall/cpu and under uftrace.
**
**   bench_trace [CALLS]   prints: calls N ns_per_call X
*/
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

static volatile unsigned long sink;

/* One call+return pair per iteration: not inlined, not a tail call. */
__attribute__((noinline)) static unsigned long step(unsigned long i)
{
	sink += i;
	return i & 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000ul, odd = 0;
	uint64_t t0 = bench_now_ns();
	for (unsigned long i = 0; i < n; i++)
		odd += step(i);
	uint64_t t1 = bench_now_ns();
	printf("calls %lu ns_per_call %.2f odd %lu\n", n, (double)(t1 - t0) / (double)n, odd);
	return 0;
}
