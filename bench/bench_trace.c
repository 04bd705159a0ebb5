/*
** bench_trace.c — the cost of exact tracing per call+return pair.  Built
** twice from this file: bench_trace (-finstrument-functions) and
** bench_trace_bare (not instrumented); bench/trace.sh runs them bare, with
** an empty hook, under meminst trace=wall/cpu and under uftrace.
**
**   bench_trace [CALLS [stopped]]   prints: calls N ns_per_call X
**
** `stopped`: under libmeminst, meminst_trace_start and meminst_trace_stop
** (found with dlsym) run before the loop, so the loop measures the hooks
** with tracing stopped by the API.
**
**   bench_trace CALLS gapK    each call spins K thousand loop steps
**
** (a volatile increment each, a few ns), so that every gap between two
** hooks is that long: at 50 us or more the tracer looks for a pre-emption
** at each one (<preempted>, trace=wall).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static volatile unsigned long sink;
static unsigned long gap_steps; /* gapK: each step spins K thousand loop steps */

/* One call+return pair per iteration: not inlined, not a tail call. */
__attribute__((noinline)) static unsigned long step(unsigned long i)
{
	sink += i;
	for (unsigned long k = 0; k < gap_steps; k++)
		sink++;
	return i & 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000ul, odd = 0;
	if (argc > 2 && strncmp(argv[2], "gap", 3) == 0)
		gap_steps = strtoul(argv[2] + 3, NULL, 10) * 1000u;
	if (argc > 2 && strcmp(argv[2], "stopped") == 0) {
		int (*start)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "meminst_trace_start");
		int (*stop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "meminst_trace_stop");
		if (!start || !stop || start(NULL) != 0) {
			fprintf(stderr, "bench_trace: stopped needs libmeminst and MEMINST trace_file=\n");
			return 1;
		}
		odd += step(1);
		stop();
	}
	uint64_t t0 = bench_now_ns();
	for (unsigned long i = 0; i < n; i++)
		odd += step(i);
	uint64_t t1 = bench_now_ns();
	printf("calls %lu ns_per_call %.2f odd %lu\n", n, (double)(t1 - t0) / (double)n, odd);
	return 0;
}
