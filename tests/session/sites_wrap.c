/* sites_wrap.c — sites.sh's allocation wrappers in a shared library
** (built with -DWRAP_LIB): xmalloc and jv_mem_alloc, of the built-in list,
** and my_alloc, of no list; and the program (without it) whose functions
** call them: fill_x 100 times, fill_j 10 times, fill_m 5 times. */
#include <stdio.h>
#include <stdlib.h>

#ifdef WRAP_LIB
void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}
void *jv_mem_alloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}
void *my_alloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		abort();
	return p;
}
#else
void *xmalloc(size_t n);
void *jv_mem_alloc(size_t n);
void *my_alloc(size_t n);

static void *keep[200];
static int nkeep;

__attribute__((noinline)) static void fill_x(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = xmalloc(48);
}

__attribute__((noinline)) static void fill_j(void)
{
	for (int i = 0; i < 10; i++)
		keep[nkeep++] = jv_mem_alloc(48);
}

__attribute__((noinline)) static void fill_m(void)
{
	for (int i = 0; i < 5; i++)
		keep[nkeep++] = my_alloc(48);
}

int main(void)
{
	fill_x();
	fill_j();
	fill_m();
	printf("kept %d\n", nkeep);
	return 0;
}
#endif
