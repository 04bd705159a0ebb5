/*
** site_chain.c — two call chains that differ only in their eighth frame,
** for tests/integration/site_depth.sh (MEMINST site_depth=N and the
** thread's cache of caller chains, alloc_stack.c).  Runs preloaded.
**
** leaf calls malloc; c1 … c6 call each other down to it; top_a and top_b
** both call c6, so an allocation's first seven return addresses are the
** same from either, at the same stack depth, and the eighth is top_a's or
** top_b's.  main calls top_a 50 times, top_b 200 times, top_a 50 times
** again: each run of calls is served by the cache after its first walk,
** and each switch finds the cached chain's eighth slot changed.  The
** blocks are kept to the exit (print=types); no stdio (its buffer would
** be one more block of main's).  Calls are followed by a test so that
** none is a tail call.
*/
#include <stdlib.h>
#include <unistd.h>

static void *keep[300];
static int nkeep;

#define CHAIN(name, callee)                             \
	__attribute__((noinline)) void *name(size_t n)  \
	{                                               \
		void *p = callee(n);                    \
		if (!p)                                 \
			abort();                        \
		return p;                               \
	}
CHAIN(leaf, malloc)
CHAIN(c1, leaf)
CHAIN(c2, c1)
CHAIN(c3, c2)
CHAIN(c4, c3)
CHAIN(c5, c4)
CHAIN(c6, c5)

__attribute__((noinline)) void top_a(void)
{
	keep[nkeep++] = c6(100);
	if (nkeep > 300)
		abort();
}

__attribute__((noinline)) void top_b(void)
{
	keep[nkeep++] = c6(200);
	if (nkeep > 300)
		abort();
}

int main(void)
{
	for (int i = 0; i < 50; i++)
		top_a();
	for (int i = 0; i < 200; i++)
		top_b();
	for (int i = 0; i < 50; i++)
		top_a();
	static const char line[] = "kept 300\n";
	return write(1, line, sizeof line - 1) == sizeof line - 1 ? 0 : 1;
}
