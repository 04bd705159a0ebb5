/*
** create_file_slow.c — the worked example of exact time profiling: a C
** port of the program fprof's manual profiles.  It writes N 32-bit words
** 0..N-1 to a file: the first 256 as one block built by mapping a function
** over a sequence, then the rest one word per recursive call.
**
**   cc -g -finstrument-functions create_file_slow.c -o create_file_slow
**   MEMINST=trace=wall,trace_file=slow.trace \
**       LD_PRELOAD=libmeminst.so ./create_file_slow slow.dat 1024
**   inspect analyse slow.trace
**
** The walkthrough of its analysis is in meminst(7), EXAMPLE.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A sequence of integers from..to, as a freshly allocated array. */
static uint32_t *seq(uint32_t from, uint32_t to, size_t *n)
{
	*n = to - from + 1;
	uint32_t *s = malloc(*n * sizeof *s);
	if (!s)
		exit(1);
	for (size_t i = 0; i < *n; i++)
		s[i] = from + (uint32_t)i;
	return s;
}

/* The word as it goes to the file: big-endian, like Erlang's <<X:32>>. */
static uint32_t word_of(uint32_t x)
{
	return __builtin_bswap32(x);
}

/* Apply f to every element of in, into a new array. */
static uint32_t *map(uint32_t (*f)(uint32_t), const uint32_t *in, size_t n)
{
	uint32_t *out = malloc(n * sizeof *out);
	if (!out)
		exit(1);
	for (size_t i = 0; i < n; i++)
		out[i] = f(in[i]);
	return out;
}

static void write_block(FILE *fd, const uint32_t *w, size_t n)
{
	if (fwrite(w, sizeof *w, n, fd) != n)
		exit(1);
}

/* Words m..n-1, one per call: the slow part. */
static void create_file_slow_from(FILE *fd, uint32_t m, uint32_t n)
{
	if (m == n)
		return;
	uint32_t w = word_of(m);
	write_block(fd, &w, 1);
	create_file_slow_from(fd, m + 1, n);
}

static int create_file_slow(const char *name, uint32_t n)
{
	FILE *fd = fopen(name, "wb"); /* buffered: fprof's delayed_write */
	if (!fd)
		return -1;
	if (n > 256) {
		size_t len;
		uint32_t *s = seq(0, 255, &len);
		uint32_t *block = map(word_of, s, len);
		write_block(fd, block, len);
		free(block);
		free(s);
		create_file_slow_from(fd, 256, n);
	} else {
		create_file_slow_from(fd, 0, n);
	}
	return fclose(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: create_file_slow FILE N\n");
		return 2;
	}
	char *end;
	unsigned long n = strtoul(argv[2], &end, 10);
	if (*end || n > 1000000) {
		fprintf(stderr, "create_file_slow: N must be a number up to 1000000\n");
		return 2;
	}
	if (create_file_slow(argv[1], (uint32_t)n) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
