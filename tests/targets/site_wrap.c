/*
** site_wrap.c — an allocation wrapper, for tests/integration/site_skip.sh
** (MEMINST site_skip=).  Runs preloaded.
**
** wrap_alloc calls wrap_inner, which calls malloc: every block's site is
** wrap_inner's call unless site_skip names the two.  fill_a keeps 100
** blocks of 1000 bytes from wrap_alloc, fill_b 10, and main 1 of 5000
** straight from malloc.  The blocks are kept to the exit (print=types).
** Calls are followed by a test so that none is a tail call.
*/
#include <stdio.h>
#include <stdlib.h>

static void *keep[111];
static int nkeep;

__attribute__((noinline)) void *wrap_inner(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}

__attribute__((noinline)) void *wrap_alloc(size_t n)
{
	void *p = wrap_inner(n);
	if (!p)
		abort();
	return p;
}

__attribute__((noinline)) void fill_a(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = wrap_alloc(1000);
}

__attribute__((noinline)) void fill_b(void)
{
	for (int i = 0; i < 10; i++)
		keep[nkeep++] = wrap_alloc(1000);
}

int main(void)
{
	fill_a();
	fill_b();
	keep[nkeep++] = malloc(5000);
	printf("kept %d\n", nkeep);
	return 0;
}
