/*
** exec_child.c — the program fork_exec execs in each child: it allocates,
** grows and frees a chain of blocks and prints one line.  It starts with a
** fresh libmeminst (the preload is inherited through the environment), so
** its counters must add up as in any new process.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	probe_reader();
	char *s = NULL;
	size_t len = 0;
	for (int i = 0; i < 500 + n; i++) {
		char piece[32];
		int k = snprintf(piece, sizeof piece, "%d,", i * n);
		char *t = realloc(s, len + (size_t)k + 1);
		if (!t)
			return 1;
		s = t;
		memcpy(s + len, piece, (size_t)k + 1);
		len += (size_t)k;
	}
	unsigned long sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = sum * 33 + (unsigned char)s[i];
	free(s);
	probe_check_own_class_empty(argv[0], 1);
	probe_check_sums("in an exec'd child");
	printf("exec_child %d: %zu bytes, hash %lu\n", n, len, sum);
	return 0;
}
