/*
** runs.c — one program run twice by tests/session/runs.sh for `inspect
** diff OLD NEW` (two runs): ./runs A B C
**   site_a: A short-lived blocks of 48 bytes (each freed at once);
**   site_b: with B = 1, ten blocks of 64 bytes, freed before the end;
**   site_c: five blocks of 100 bytes, freed before the end unless C = 1
**           (then live at exit: leaked).
** Each site is its own function, kept out of line, so that its blocks
** have one allocation site and one name.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) static void site_a(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = malloc(48);
		memset(p, 1, 48);
		sink = p;
		free(p);
	}
}

__attribute__((noinline)) static void site_b(void **keep)
{
	for (int i = 0; i < 10; i++)
		keep[i] = malloc(64);
}

__attribute__((noinline)) static void site_c(void **keep)
{
	for (int i = 0; i < 5; i++)
		keep[i] = malloc(100);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: runs A B C\n");
		return 2;
	}
	void *b[10] = {0}, *c[5];
	site_a(atol(argv[1]));
	if (atoi(argv[2]))
		site_b(b);
	site_c(c);
	for (int i = 0; i < 10; i++)
		free(b[i]);
	if (!atoi(argv[3]))
		for (int i = 0; i < 5; i++)
			free(c[i]);
	else
		sink = c[4];
	printf("done\n");
	return 0;
}
