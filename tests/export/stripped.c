/* stripped.c — code without symbols for tests/export/stripped.sh: built
** once as a program and once, with -DSTRIPPED_LIB, as libstripped.so, then
** both stripped.  Each burn_* function keeps values across calls of
** mix (callee-saved registers pushed, so its unwind entry has several
** rows) and loops long enough to be sampled at many addresses; only
** stripped_lib_run and stripped_lib_keep are exported by the library.
** lib_keep allocates at two call sites of one function, blocks kept live
** to the exit snapshot: their stacks name it by its entry. */
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

static void *volatile kept[64];

static NOINLINE void lib_keep(int i)
{
	kept[2 * i] = malloc(100 + (size_t)i);
	sink += (unsigned long)kept[2 * i];
	kept[2 * i + 1] = malloc(3000 + (size_t)i);
}

void stripped_lib_keep(void)
{
	for (int i = 0; i < 32; i++)
		lib_keep(i);
}
#else
unsigned long stripped_lib_run(unsigned long seed, long n);
void stripped_lib_keep(void);

static NOINLINE unsigned long burn_a(unsigned long seed, long n) { BURN_BODY(n); }
static NOINLINE unsigned long burn_b(unsigned long seed, long n) { BURN_BODY(2 * n); }
static NOINLINE unsigned long burn_c(unsigned long seed, long n) { BURN_BODY(3 * n); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	stripped_lib_keep();
	unsigned long r = burn_a(1, n) + burn_b(2, n) + burn_c(3, n) + stripped_lib_run(4, n);
	printf("%lu\n", r & 0xff);
	return 0;
}
#endif
