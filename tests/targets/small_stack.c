/*
** small_stack.c — threads on PTHREAD_STACK_MIN stacks (16 KiB on x86-64),
** each using 6000 bytes of it in one frame while it allocates and computes, for
** tests/integration/small_stack.sh.  Bare this runs; under meminst it
** died of SIGSEGV in every mode, off included: glibc takes libmeminst's
** static TLS out of the thread's stack, and the hooks and the sampler's
** handler run on what is left.  With the argument "own" the threads run
** on stacks of 16 KiB the program takes from malloc (pthread_attr_setstack),
** using 4000 bytes: under sampling the handler's walk wrote past them into
** the heap ("malloc(): mismatching next->prev_size", SIGABRT).  Prints one
** line; its output is compared with an uninstrumented run.  The loop is
** bounded by a count.
*/
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USE 6000    /* bytes of the thread's own frame: 9000 overflows bare */
#define ROUNDS 4000000L

#define OWN_SIZE 16384
#define OWN_USE 4000

static void burn(unsigned long *sum, volatile unsigned char *pad, size_t use)
{
	for (long i = 0; i < ROUNDS; i++) {
		*sum += (unsigned long)i * pad[i % use];
		if (i % 2000 == 0)
			free(malloc((size_t)(i % 3000) + 1));
	}
}

static void *body(void *arg)
{
	volatile unsigned char pad[USE];
	memset((void *)pad, 1, sizeof pad);
	burn(arg, pad, USE);
	return NULL;
}

static void *body_own(void *arg)
{
	volatile unsigned char pad[OWN_USE];
	memset((void *)pad, 1, sizeof pad);
	burn(arg, pad, OWN_USE);
	return NULL;
}

int main(int argc, char **argv)
{
	int own = argc > 1 && !strcmp(argv[1], "own");
	pthread_attr_t at[3];
	pthread_t t[3];
	unsigned long sums[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		pthread_attr_init(&at[i]);
		if (own ? pthread_attr_setstack(&at[i], aligned_alloc(4096, OWN_SIZE), OWN_SIZE) != 0
			: pthread_attr_setstacksize(&at[i], PTHREAD_STACK_MIN) != 0)
			return 2;
		if (pthread_create(&t[i], &at[i], own ? body_own : body, &sums[i]) != 0) {
			puts("pthread_create failed");
			return 1;
		}
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* the program's attribute object is its own still */
	size_t size = 0;
	pthread_attr_getstacksize(&at[0], &size);
	printf("sums %lu %lu %lu, attr stack %s\n", sums[0], sums[1], sums[2],
	       size == (own ? OWN_SIZE : PTHREAD_STACK_MIN) ? "as set" : "changed");
	return 0;
}
