/* sites_inline.c — sites.sh's malloc written in the user's own function,
** leak_some, always inlined into main: its site is named after the line
** of the malloc, with main's line of the call in its stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[1000];

static inline __attribute__((always_inline)) void leak_some(int i)
{
	char *p = malloc(100 + i % 7); /* line of the malloc */
	if (!p)
		exit(1);
	memset(p, i, 100);
	keep[i] = p;
}

int main(int argc, char **argv)
{
	(void)argv;
	int n = 900 + argc;
	for (int i = 0; i < n; i++)
		leak_some(i); /* line of the call */
	printf("%d\n", n);
	return 0;
}
