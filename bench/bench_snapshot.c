/*
** bench_snapshot.c — the cost of one snapshot of a large heap, run under
** libmeminst by bench/snapshot.sh.
**
** Usage: bench_snapshot [-n BLOCKS] [-s SIZE] [-x] PATH
**        bench_snapshot [-n BLOCKS] [-s SIZE] -t THREADS -w GOFILE
**
** Allocates BLOCKS live blocks (default 1,000,000) from 1000 allocation
** sites, of mixed sizes (fixed-seed xorshift64: 70% of 16..128 bytes, 25%
** of 128..1024, 5% of 1..8 KiB), then stores one snapshot of them into
** PATH with meminst_store_memory_data, and prints one key=value line:
**
**   blocks=1000000 store_ms=812.3 rc=1
**
** store_ms is the wall time of the call (capture and SQLite write); the
** pause the program saw is in the database (snapshot.pause_ns), which the
** script reads.  Like bench_alloc, the program links nothing of ours: it
** runs preloaded and finds the store function with dlsym, so it exits with
** status 2 when libmeminst is not there.
**
** -s SIZE makes every block SIZE bytes; -x stores nothing and exits with
** the blocks alive (PATH unused): run with MEMINST=mim,snapshot=FILE the
** exit snapshot is the one measured, and without snapshot= it is the floor
** (bench/snapshot.sh, the exit part).
**
** -t THREADS -w GOFILE: THREADS threads make the blocks (BLOCKS/THREADS
** each, named bench-w1, bench-w2, ...), then the program prints "pid N"
** and "ready" and every thread waits, allocating nothing, until GOFILE
** exists (at most an hour): a live process for `inspect serve` and the
** control channel (bench/serve.sh); nothing is stored.
**
** The 1000 sites are 1000 functions made by the preprocessor, each with a
** different constant in its body so that the compiler cannot fold them
** into one (identical code folding would leave a single site).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define BENCH_NOINLINE __attribute__((noinline))
#define BENCH_SITES 1000

static volatile uintptr_t bench_sink;

#define SITE(n)                                                                \
	static BENCH_NOINLINE void *site_##n(size_t size)                      \
	{                                                                      \
		void *p = malloc(size);                                        \
		bench_sink += __COUNTER__;                                     \
		return p;                                                      \
	}
#define D10(f, p) f(p##0) f(p##1) f(p##2) f(p##3) f(p##4) f(p##5) f(p##6) f(p##7) f(p##8) f(p##9)
#define D100(f, p) D10(f, p##0) D10(f, p##1) D10(f, p##2) D10(f, p##3) D10(f, p##4) \
	D10(f, p##5) D10(f, p##6) D10(f, p##7) D10(f, p##8) D10(f, p##9)
#define D1000(f) D100(f, 0) D100(f, 1) D100(f, 2) D100(f, 3) D100(f, 4) \
	D100(f, 5) D100(f, 6) D100(f, 7) D100(f, 8) D100(f, 9)

D1000(SITE)

#define ENTRY(n) site_##n,
static void *(*const bench_site[BENCH_SITES])(size_t) = {D1000(ENTRY)};


static size_t bench_size(uint64_t r)
{
	unsigned pick = (unsigned)(r % 100);
	r >>= 8;
	if (pick < 70)
		return 16 + r % 113;
	if (pick < 95)
		return 128 + r % 897;
	return 1024 + r % 7169;
}

/* Blocks from the sites, the same sequence for a seed; NULL when out of memory. */
static void **bench_fill(unsigned long n, size_t fixed, uint64_t rng)
{
	void **blocks = malloc(n * sizeof *blocks);
	for (unsigned long i = 0; blocks && i < n; i++) {
		uint64_t r = bench_xorshift(&rng);
		if (!(blocks[i] = bench_site[(r >> 40) % BENCH_SITES](fixed ? fixed : bench_size(r))))
			blocks = NULL;
	}
	return blocks;
}

/* ------------------------------------------------ -t THREADS -w GOFILE -- */

static const char *bench_go;
static unsigned long bench_per_thread;
static size_t bench_fixed;
static pthread_barrier_t bench_made;
static volatile bool bench_failed;

static void bench_wait_go(void)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	for (int i = 0; i < 180000 && access(bench_go, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
}

static void *bench_worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "bench-w%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	if (!bench_fill(bench_per_thread, bench_fixed, 0x9e3779b97f4a7c15ull + (uint64_t)(intptr_t)arg))
		bench_failed = true;
	pthread_barrier_wait(&bench_made);
	bench_wait_go();
	return NULL;
}

static int bench_live(unsigned long n, size_t fixed, unsigned threads, const char *go)
{
	pthread_t t[64];
	bench_go = go;
	bench_per_thread = n / threads;
	bench_fixed = fixed;
	pthread_barrier_init(&bench_made, NULL, threads + 1);
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, bench_worker, (void *)(intptr_t)(i + 1)) != 0)
			return 1;
	pthread_barrier_wait(&bench_made);
	if (bench_failed) {
		fprintf(stderr, "bench_snapshot: out of memory\n");
		_exit(1);
	}
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	bench_wait_go();
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000000, fixed = 0, threads = 0;
	bool exit_only = false;
	const char *go = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "n:s:t:w:x")) != -1) {
		if (opt == 'n')
			n = strtoul(optarg, NULL, 10);
		else if (opt == 's')
			fixed = strtoul(optarg, NULL, 10);
		else if (opt == 't')
			threads = strtoul(optarg, NULL, 10);
		else if (opt == 'w')
			go = optarg;
		else if (opt == 'x')
			exit_only = true;
		else
			return 2;
	}
	if (threads || go) {
		if (!go || threads < 1 || threads > 64 || optind != argc) {
			fprintf(stderr, "usage: bench_snapshot [-n BLOCKS] [-s SIZE] -t THREADS(1-64) -w GOFILE\n");
			return 2;
		}
		return bench_live(n, fixed, (unsigned)threads, go);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: bench_snapshot [-n BLOCKS] [-s SIZE] [-x] PATH\n");
		return 2;
	}
	int (*store)(const char *);
	void *sym = dlsym(RTLD_DEFAULT, "meminst_store_memory_data");
	memcpy(&store, &sym, sizeof store);
	if (!store) {
		fprintf(stderr, "bench_snapshot: run it under libmeminst (LD_PRELOAD)\n");
		return 2;
	}
	void **blocks = bench_fill(n, fixed, 0x9e3779b97f4a7c15ull);
	if (!blocks) {
		fprintf(stderr, "bench_snapshot: out of memory\n");
		return 1;
	}
	if (exit_only)
		return 0;
	uint64_t t0 = bench_now_ns();
	int rc = store(argv[optind]);
	uint64_t t1 = bench_now_ns();
	printf("blocks=%lu store_ms=%.1f rc=%d\n", n, (double)(t1 - t0) / 1e6, rc);
	return rc > 0 ? 0 : 1;
}
