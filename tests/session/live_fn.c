/*
** live_fn.c — blocks still live at exit, allocated by known traced
** functions (tests/session/live_fn.sh).  Built with -finstrument-functions
** except make_block, which is not traced: its one allocation site is
** reached from keep_a (20 blocks kept), keep_b (10 kept) and reuse_c
** (one block, freed before keep_b runs, whose address keep_b is likely to
** get again), so the type of that site must name keep_a "and 1 more", and
** never reuse_c.  A thread keeps 5 blocks allocated in in_thread.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile kept[64];
static int nkept;

/* (not a tail call, so that the site is in make_block) */
__attribute__((no_instrument_function, noinline)) static void *make_block(size_t n)
{
	char *p = malloc(n);
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noinline)) static void keep_a(void)
{
	for (int i = 0; i < 20; i++)
		kept[nkept++] = make_block(100);
}

__attribute__((noinline)) static void keep_b(void)
{
	for (int i = 0; i < 10; i++)
		kept[nkept++] = make_block(100);
}

__attribute__((noinline)) static void reuse_c(void)
{
	free(make_block(100));
}

static void *in_thread(void *arg)
{
	void **out = arg;
	for (int i = 0; i < 5; i++)
		out[i] = malloc(300);
	return NULL;
}

int main(void)
{
	static void *from_thread[5];
	pthread_t t;
	keep_a();
	reuse_c();
	keep_b();
	if (pthread_create(&t, NULL, in_thread, from_thread) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	printf("kept %d blocks and 5 in a thread\n", nkept);
	return 0;
}
