/* stripped.c — code without symbols for tests/export/stripped.sh: built
** once as a program and once, with -DSTRIPPED_LIB, as libstripped.so, then
** both stripped.  Each burn_* function keeps values across calls of
** mix (callee-saved registers pushed, so its unwind entry has several
** rows) and loops long enough to be sampled at many addresses; only
** stripped_lib_run is exported by the library. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static NOINLINE unsigned long mix(unsigned long x)
{
	return x * 6364136223846793005ul + 1442695040888963407ul;
}

/* a loop of `rounds`: arithmetic, then a call that keeps a, b and c live */
#define BURN_BODY(rounds)                                                  \
	unsigned long a = seed, b = seed ^ 0x5555, c = seed + 7;               \
	for (long i = 0; i < (rounds); i++) {                                  \
		a += b * 3 + (unsigned long)i;                                     \
		b ^= a >> 7;                                                       \
		c = mix(c + a) ^ b;                                                \
		if ((c & 0xff) == 0)                                               \
			sink += a;                                                     \
	}                                                                      \
	return a ^ b ^ c

#ifdef STRIPPED_LIB
static NOINLINE unsigned long lib_burn_x(unsigned long seed, long n) { BURN_BODY(n); }
static NOINLINE unsigned long lib_burn_y(unsigned long seed, long n) { BURN_BODY(2 * n); }

unsigned long stripped_lib_run(unsigned long seed, long n)
{
	return lib_burn_x(seed, n) + lib_burn_y(seed + 1, n);
}
#else
unsigned long stripped_lib_run(unsigned long seed, long n);

static NOINLINE unsigned long burn_a(unsigned long seed, long n) { BURN_BODY(n); }
static NOINLINE unsigned long burn_b(unsigned long seed, long n) { BURN_BODY(2 * n); }
static NOINLINE unsigned long burn_c(unsigned long seed, long n) { BURN_BODY(3 * n); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	unsigned long r = burn_a(1, n) + burn_b(2, n) + burn_c(3, n) + stripped_lib_run(4, n);
	printf("%lu\n", r & 0xff);
	return 0;
}
#endif
