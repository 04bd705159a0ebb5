/*
** sample_loader.c — a thread that walks the loader's list of objects
** (dl_iterate_phdr) in a loop beside a main thread that computes (burn):
** the sampler's handler walks stacks with libunwind, which calls
** dl_iterate_phdr too.  Usage: sample_loader WALKS ROUNDS; prints
** "loader done".
*/
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long walks;

static int first_only(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(size_t *)arg += info->dlpi_phnum;
	return 1; /* the shortest walk: the lock is most of it */
}

static void *walker(void *arg)
{
	size_t sum = 0;
	for (long i = 0; i < walks; i++)
		dl_iterate_phdr(first_only, &sum);
	*(size_t *)arg = sum;
	return NULL;
}

__attribute__((noinline)) static double burn(long rounds)
{
	volatile double x = 1;
	for (long i = 0; i < rounds; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	walks = atol(argv[1]);
	size_t sum = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, walker, &sum) != 0)
		return 1;
	double x = burn(atol(argv[2]));
	pthread_join(t, NULL);
	printf("%s\n", x > 0 && sum > 0 ? "loader done" : "loader wrong");
	return 0;
}
