/*
** bench_alloc.c — allocation micro-benchmarks, run bare or under libmeminst.
**
** The program links nothing of ours: bench/run.sh runs it with and without
** LD_PRELOAD of libmeminst (and of jemalloc) so that every configuration
** executes the same machine code.  Workloads, chosen by argument:
**
**   pairs    malloc+free of one size in a tight loop, for each of 16, 64,
**            256, 1024 and 4096 bytes: the fixed cost of the hooks.
**   churn    100k live blocks; each step frees a random slot and puts a new
**            block of a random size (16..1024) in it: cache misses on our
**            headers and on the allocator's metadata, as real programs see.
**   churn2   churn in 2 threads at once, each with its own 100k slots: what
**            sharing costs (counters, list locks, false sharing).
**   xfree    blocks of 64 bytes (-s SIZE) malloc'ed by one thread in
**            batches of 256 and freed by another: the cost of a free from a
**            thread other than the block's (issue 29; not in `all`).
**   deep     malloc(64)+free pairs made DEPTH calls below the loop (-d
**            DEPTH, default 24): what site_depth=N costs per frame walked
**            (issue 29; bench/site-insn.sh --depths; not in `all`).
**   all      pairs, churn and churn2, in that order (the default).
**
** Output is one line per measurement, key=value, for run.sh to parse:
**   workload=pairs size=64 iters=2000000 ns_per_pair=12.3
** For xfree, ns_per_pair is wall time over the pairs, both threads' turns
** together.  For churn2, ns_per_pair is wall time over all pairs of both threads
** (inverse throughput); ns_per_pair_thread is wall time over one thread's
** pairs, which equals churn's ns_per_pair when two threads scale perfectly.
**
** Options: -n SCALE multiplies every iteration count (e.g. -n 0.1 for a
** quick run); -s SIZE makes pairs run that size only (any size, e.g. for
** an instruction count of `-s 64 pairs` under callgrind); -L LIVE makes
** churn and churn2 hold LIVE blocks instead of 100k, and -m MAX makes their
** sizes 16..MAX (issue 29's churn: `-L 1000000 -m 79 churn`, bench/churn.sh);
** -w WARM takes WARM untimed steps first (churn also prints the process's
** CPU time per timed step, cpu_ns_per_step).
** Random numbers come from a fixed-seed xorshift64 so every run performs
** the same sequence of sizes and slots.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define BENCH_SLOTS 100000
#define BENCH_PAIRS_ITERS 2000000
#define BENCH_CHURN_STEPS 2000000
#define BENCH_XFREE_BATCH 256
#define BENCH_MIN_SIZE 16
#define BENCH_MAX_SIZE 1024
#define BENCH_NOINLINE __attribute__((noinline))

/* Every block's address and first byte end up here, so the compiler can
** neither drop a malloc/free pair nor skip the write to the block. */
static volatile uintptr_t bench_sink;

static double bench_scale = 1.0;
static size_t bench_only_size; /* -s: pairs of this size only */
static unsigned long bench_slots = BENCH_SLOTS;  /* -L: churn's live blocks */
static size_t bench_max_size = BENCH_MAX_SIZE;   /* -m: churn's largest size */
static unsigned long bench_warm;                 /* -w: churn's untimed steps */
static unsigned bench_depth = 24;                /* -d: deep's frames below the loop */

/* --------------------------------------------------------------- util -- */


static unsigned long bench_count(unsigned long base)
{
	unsigned long n = (unsigned long)(base * bench_scale);
	return n ? n : 1;
}

static void *bench_malloc(size_t size)
{
	char *p = malloc(size);
	if (!p) {
		fprintf(stderr, "bench_alloc: malloc(%zu) failed\n", size);
		exit(1);
	}
	return p;
}

/* -------------------------------------------------------------- pairs -- */

/* One size: a short warm-up (the allocator's caches, our site cache), then
** the timed loop.  Returns ns per malloc+free.  Never inlined, so that
** callgrind --toggle-collect=bench_pairs_one counts this loop alone. */
static BENCH_NOINLINE double bench_pairs_one(size_t size, unsigned long iters)
{
	uintptr_t acc = 0;
	for (unsigned long i = 0; i < 1000; i++) {
		char *p = bench_malloc(size);
		p[0] = (char)i;
		acc += (uintptr_t)p + (unsigned char)p[0];
		free(p);
	}
	uint64_t t0 = bench_now_ns();
	for (unsigned long i = 0; i < iters; i++) {
		char *p = malloc(size);
		p[0] = (char)i;
		acc += (uintptr_t)p + (unsigned char)p[0];
		free(p);
	}
	uint64_t t1 = bench_now_ns();
	bench_sink = acc;
	return (double)(t1 - t0) / (double)iters;
}

static void bench_pairs_report(size_t size, unsigned long iters)
{
	double ns = bench_pairs_one(size, iters);
	printf("workload=pairs size=%zu iters=%lu ns_per_pair=%.2f\n", size, iters, ns);
	fflush(stdout);
}

static void bench_pairs(void)
{
	static const size_t sizes[] = {16, 64, 256, 1024, 4096};
	unsigned long iters = bench_count(BENCH_PAIRS_ITERS);
	if (bench_only_size) {
		bench_pairs_report(bench_only_size, iters);
		return;
	}
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		bench_pairs_report(sizes[i], iters);
}

/* --------------------------------------------------------------- deep -- */

/* The pairs at the bottom of `depth` frames of bench_deep_down: each
** allocation's stack is the same, its return addresses the same above
** the first.  callgrind --toggle-collect=bench_deep_one counts it all. */
static BENCH_NOINLINE uintptr_t bench_deep_down(unsigned depth, unsigned long iters)
{
	uintptr_t acc = 0;
	if (depth > 1) {
		acc = bench_deep_down(depth - 1, iters);
		bench_sink += acc; /* after the call: no tail call, the frame stays */
		return acc + 1;
	}
	for (unsigned long i = 0; i < iters; i++) {
		char *p = malloc(64);
		p[0] = (char)i;
		acc += (uintptr_t)p + (unsigned char)p[0];
		free(p);
	}
	return acc;
}

static BENCH_NOINLINE double bench_deep_one(unsigned long iters)
{
	bench_deep_down(bench_depth, 1000); /* warm-up: the stack's types, caches */
	uint64_t t0 = bench_now_ns();
	bench_sink += bench_deep_down(bench_depth, iters);
	return (double)(bench_now_ns() - t0) / (double)iters;
}

static void bench_deep(void)
{
	unsigned long iters = bench_count(BENCH_PAIRS_ITERS);
	double ns = bench_deep_one(iters);
	printf("workload=deep depth=%u iters=%lu ns_per_pair=%.2f\n", bench_depth, iters, ns);
	fflush(stdout);
}

/* -------------------------------------------------------------- churn -- */

typedef struct bench_churn_s {
	uint64_t seed;
	unsigned long steps;
	pthread_barrier_t *start; /* NULL: single thread */
	uint64_t t0, t1;          /* timed section       */
	uint64_t cpu0, cpu1;      /* the process's CPU time over it */
	char **slot;
} bench_churn_t;

static inline size_t bench_churn_size(uint64_t *rng)
{
	return BENCH_MIN_SIZE + bench_xorshift(rng) % (bench_max_size - BENCH_MIN_SIZE + 1);
}

/* `n` steps: free a random slot's block, put a new one of a random size in
** it. */
static inline uintptr_t bench_churn_loop(bench_churn_t *c, uint64_t *rng, unsigned long n)
{
	uintptr_t acc = 0;
	for (unsigned long i = 0; i < n; i++) {
		unsigned long k = (unsigned long)(bench_xorshift(rng) % bench_slots);
		acc += (unsigned char)c->slot[k][0];
		free(c->slot[k]);
		char *p = malloc(bench_churn_size(rng));
		p[0] = (char)i;
		c->slot[k] = p;
	}
	return acc;
}

/* The untimed steps (-w) and the timed ones, apart, so that callgrind
** --toggle-collect=bench_churn_steps counts the timed ones alone. */
static BENCH_NOINLINE __attribute__((noipa)) uintptr_t bench_churn_warm(bench_churn_t *c, uint64_t *rng, unsigned long n)
{
	return bench_churn_loop(c, rng, n);
}

static BENCH_NOINLINE __attribute__((noipa)) uintptr_t bench_churn_steps(bench_churn_t *c, uint64_t *rng, unsigned long n)
{
	return bench_churn_loop(c, rng, n);
}

static uint64_t bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Fill the slots and take the warm-up steps (untimed), then replace random
** slots `steps` times. */
static BENCH_NOINLINE void *bench_churn_run(void *arg)
{
	bench_churn_t *c = arg;
	uint64_t rng = c->seed;
	uintptr_t acc = 0;
	c->slot = bench_malloc(bench_slots * sizeof *c->slot);
	for (unsigned long i = 0; i < bench_slots; i++) {
		c->slot[i] = bench_malloc(bench_churn_size(&rng));
		c->slot[i][0] = (char)i;
	}
	if (bench_warm)
		acc += bench_churn_warm(c, &rng, bench_warm);
	if (c->start)
		pthread_barrier_wait(c->start);
	c->cpu0 = bench_cpu_ns();
	c->t0 = bench_now_ns();
	acc += bench_churn_steps(c, &rng, c->steps);
	c->t1 = bench_now_ns();
	c->cpu1 = bench_cpu_ns();
	for (unsigned long i = 0; i < bench_slots; i++)
		free(c->slot[i]);
	free(c->slot);
	bench_sink = acc;
	return NULL;
}

static void bench_churn(void)
{
	bench_churn_t c = {.seed = 0x9e3779b97f4a7c15ull, .steps = bench_count(BENCH_CHURN_STEPS)};
	bench_churn_run(&c);
	printf("workload=churn slots=%lu steps=%lu ns_per_pair=%.2f wall_ms=%.1f cpu_ns_per_step=%.2f\n",
	       bench_slots, c.steps, (double)(c.t1 - c.t0) / (double)c.steps, (c.t1 - c.t0) / 1e6,
	       (double)(c.cpu1 - c.cpu0) / (double)c.steps);
	fflush(stdout);
}

/* Two threads, each as churn with its own slots and seed.  Wall time runs
** from the first thread's start to the last thread's end. */
static void bench_churn2(void)
{
	enum { N = 2 };
	pthread_barrier_t start;
	pthread_t th[N];
	bench_churn_t c[N];
	pthread_barrier_init(&start, NULL, N);
	for (int i = 0; i < N; i++) {
		c[i] = (bench_churn_t){.seed = 0x9e3779b97f4a7c15ull + 0x1234567ull * (uint64_t)i,
				       .steps = bench_count(BENCH_CHURN_STEPS), .start = &start};
		if (pthread_create(&th[i], NULL, bench_churn_run, &c[i]) != 0) {
			fprintf(stderr, "bench_alloc: pthread_create failed\n");
			exit(1);
		}
	}
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		t0 = c[i].t0 < t0 ? c[i].t0 : t0;
		t1 = c[i].t1 > t1 ? c[i].t1 : t1;
	}
	pthread_barrier_destroy(&start);
	double wall = (double)(t1 - t0);
	printf("workload=churn2 threads=%d slots=%lu steps=%lu ns_per_pair=%.2f "
	       "ns_per_pair_thread=%.2f wall_ms=%.1f\n",
	       N, bench_slots, c[0].steps, wall / (double)(N * c[0].steps),
	       wall / (double)c[0].steps, wall / 1e6);
	fflush(stdout);
}

/* -------------------------------------------------------------- xfree -- */

typedef struct bench_xfree_s {
	pthread_barrier_t turn; /* the batch is full; the batch is freed */
	void *block[BENCH_XFREE_BATCH];
	unsigned long batches;
	size_t size;
} bench_xfree_t;

/* The two halves of a pair, apart, so that callgrind
** --toggle-collect=bench_xfree_alloc --toggle-collect=bench_xfree_free
** counts them alone (not the turns between the threads). */
static BENCH_NOINLINE __attribute__((noipa)) uintptr_t bench_xfree_alloc(bench_xfree_t *x)
{
	uintptr_t acc = 0;
	for (unsigned i = 0; i < BENCH_XFREE_BATCH; i++) {
		char *p = malloc(x->size);
		p[0] = (char)i;
		acc += (uintptr_t)p;
		x->block[i] = p;
	}
	return acc;
}

static BENCH_NOINLINE __attribute__((noipa)) void bench_xfree_free(bench_xfree_t *x)
{
	for (unsigned i = 0; i < BENCH_XFREE_BATCH; i++)
		free(x->block[i]);
}

static void *bench_xfree_freer(void *arg)
{
	bench_xfree_t *x = arg;
	for (unsigned long b = 0; b < x->batches; b++) {
		pthread_barrier_wait(&x->turn);
		bench_xfree_free(x);
		pthread_barrier_wait(&x->turn);
	}
	return NULL;
}

/* The calling thread allocates a batch, the other frees it, by turns; the
** first batch (whose free makes the list shared) is a warm-up, untimed. */
static void bench_xfree(void)
{
	static bench_xfree_t x;
	unsigned long timed = bench_count(BENCH_PAIRS_ITERS) / BENCH_XFREE_BATCH;
	x.batches = (timed ? timed : 1) + 1;
	x.size = bench_only_size ? bench_only_size : 64;
	pthread_barrier_init(&x.turn, NULL, 2);
	pthread_t th;
	if (pthread_create(&th, NULL, bench_xfree_freer, &x) != 0) {
		fprintf(stderr, "bench_alloc: pthread_create failed\n");
		exit(1);
	}
	uintptr_t acc = 0;
	uint64_t t0 = 0;
	for (unsigned long b = 0; b < x.batches; b++) {
		if (b == 1)
			t0 = bench_now_ns();
		acc += bench_xfree_alloc(&x);
		pthread_barrier_wait(&x.turn);
		pthread_barrier_wait(&x.turn);
	}
	uint64_t t1 = bench_now_ns();
	pthread_join(th, NULL);
	pthread_barrier_destroy(&x.turn);
	bench_sink = acc;
	unsigned long iters = (x.batches - 1) * BENCH_XFREE_BATCH;
	printf("workload=xfree size=%zu iters=%lu ns_per_pair=%.2f\n", x.size, iters,
	       (double)(t1 - t0) / (double)iters);
	fflush(stdout);
}

/* --------------------------------------------------------------- main -- */

static void bench_usage(void)
{
	fprintf(stderr, "usage: bench_alloc [-n SCALE] [-s SIZE] [-L LIVE] [-m MAX] [-w WARM] [-d DEPTH] [pairs|churn|churn2|xfree|deep|all]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int ran = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-n") && i + 1 < argc) {
			bench_scale = strtod(argv[++i], NULL);
			if (!(bench_scale > 0))
				bench_usage();
			continue;
		}
		if (!strcmp(a, "-s") && i + 1 < argc) {
			bench_only_size = strtoul(argv[++i], NULL, 10);
			continue;
		}
		if (!strcmp(a, "-L") && i + 1 < argc) {
			bench_slots = strtoul(argv[++i], NULL, 10);
			if (!bench_slots)
				bench_usage();
			continue;
		}
		if (!strcmp(a, "-w") && i + 1 < argc) {
			bench_warm = strtoul(argv[++i], NULL, 10);
			continue;
		}
		if (!strcmp(a, "-d") && i + 1 < argc) {
			bench_depth = (unsigned)strtoul(argv[++i], NULL, 10);
			if (!bench_depth)
				bench_usage();
			continue;
		}
		if (!strcmp(a, "-m") && i + 1 < argc) {
			bench_max_size = strtoul(argv[++i], NULL, 10);
			if (bench_max_size < BENCH_MIN_SIZE)
				bench_usage();
			continue;
		}
		int all = !strcmp(a, "all");
		if (all || !strcmp(a, "pairs"))
			bench_pairs(), ran = 1;
		if (all || !strcmp(a, "churn"))
			bench_churn(), ran = 1;
		if (all || !strcmp(a, "churn2"))
			bench_churn2(), ran = 1;
		if (!strcmp(a, "xfree"))
			bench_xfree(), ran = 1;
		if (!strcmp(a, "deep"))
			bench_deep(), ran = 1;
		if (!all && strcmp(a, "pairs") && strcmp(a, "churn") && strcmp(a, "churn2") && strcmp(a, "xfree") &&
		    strcmp(a, "deep"))
			bench_usage();
	}
	if (!ran) {
		bench_pairs();
		bench_churn();
		bench_churn2();
	}
	return 0;
}
