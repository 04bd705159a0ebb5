/*
** small_stack.c — threads on PTHREAD_STACK_MIN stacks (16 KiB on x86-64),
** each using 6000 bytes of it in one frame while it allocates and computes, for
** tests/integration/small_stack.sh.  Bare this runs; under meminst it
** died of SIGSEGV in every mode, off included: glibc takes libmeminst's
** static TLS out of the thread's stack, and the hooks and the sampler's
** handler run on what is left.  Prints one line; its output is compared
** with an uninstrumented run.  The loop is bounded by a count.
*/
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USE 6000    /* bytes of the thread's own frame: 9000 overflows bare */
#define ROUNDS 4000000L

static void *body(void *arg)
{
	volatile unsigned char pad[USE];
	unsigned long *sum = arg;
	memset((void *)pad, 1, sizeof pad);
	for (long i = 0; i < ROUNDS; i++) {
		*sum += (unsigned long)i * pad[i % USE];
		if (i % 2000 == 0)
			free(malloc((size_t)(i % 3000) + 1));
	}
	return NULL;
}

int main(void)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	if (pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN) != 0)
		return 2;
	pthread_t t[3];
	unsigned long sums[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], &at, body, &sums[i]) != 0) {
			puts("pthread_create failed");
			return 1;
		}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* the program's attribute object is its own still */
	size_t size = 0;
	pthread_attr_getstacksize(&at, &size);
	printf("sums %lu %lu %lu, attr stack %s\n", sums[0], sums[1], sums[2],
	       size == PTHREAD_STACK_MIN ? "as set" : "changed");
	pthread_attr_destroy(&at);
	return 0;
}
