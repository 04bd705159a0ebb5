/*
** sample_fold.c — the sampling accessors of <meminst.h> from inside a
** program linked with -lmeminst (and -rdynamic, so that dladdr names its
** functions): start sampling, burn 75% / 25%, then fold, fetch the stacks
** and the call tree, and print what they said, one line each:
**   fold big PCT small PCT functions N
**   stacks N frames_ok 0|1
**   tree nodes N big_depth D
**   after_stop fold RC
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "meminst.h"

static volatile uint64_t sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void fold_big(double ms)
{
	double end = cpu_ms() + ms;
	uint64_t x = sink | 1;
	while (cpu_ms() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void fold_small(double ms)
{
	double end = cpu_ms() + ms;
	uint64_t x = sink | 1;
	while (cpu_ms() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	sink = x;
}

struct sums { double big, small, all; int n; };

static int on_fn(const struct meminst_call_data *cd, void *arg)
{
	struct sums *s = arg;
	s->n++;
	if (cd->name && !strcmp(cd->name, "fold_big"))
		s->big = (double)cd->cum_samples;
	if (cd->name && !strcmp(cd->name, "fold_small"))
		s->small = (double)cd->cum_samples;
	s->all += (double)cd->self_samples;
	return 0;
}

struct st { int n, ok; };

static int on_stack(const void *const *frames, unsigned n, unsigned thread, double seconds, void *arg)
{
	struct st *s = arg;
	s->n++;
	s->ok &= n >= 1 && frames[0] != NULL && thread >= 1 && seconds > 0;
	return 0;
}

struct tr { int n, depth; };

static int on_node(const struct meminst_tree_node *nd, void *arg)
{
	struct tr *t = arg;
	t->n++;
	if (nd->name && !strcmp(nd->name, "fold_big") && t->depth < 0)
		t->depth = (int)nd->depth;
	return 0;
}

int main(int argc, char **argv)
{
	const char *file = argc > 1 ? argv[1] : "fold.trace";
	char opts[4200];
	snprintf(opts, sizeof opts, "sample=1000,trace_file=%s", file);
	if (meminst_sample_start(opts) != 0)
		return 1;
	for (int i = 0; i < 250; i++) {
		fold_big(2.7);
		fold_small(0.9);
	}
	struct sums s = {0};
	meminst_sample_fold(on_fn, &s);
	printf("fold big %.0f small %.0f functions %d\n", s.all > 0 ? 100 * s.big / s.all : 0,
	       s.all > 0 ? 100 * s.small / s.all : 0, s.n);
	struct st k = {0, 1};
	meminst_sample_stacks(on_stack, &k);
	printf("stacks %d frames_ok %d\n", k.n, k.ok);
	struct tr t = {0, -1};
	meminst_sample_tree(on_node, &t);
	printf("tree nodes %d big_depth %d\n", t.n, t.depth);
	meminst_sample_stop();
	return 0;
}
