/*
** steady_map.c — a program whose mappings stay put while its resident set
** grows: 64 MiB mapped and 8 of them written, NAPS naps of 10 ms; then the
** whole mapping written (no mapping is made or changed) and NAPS naps more.
** tests/session/steady_map.sh reads its interval snapshots.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void naps(int n)
{
	struct timespec t = {0, 10000000};
	for (int i = 0; i < n; i++)
		nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	size_t size = (size_t)64 << 20;
	char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	memset(m, 1, (size_t)8 << 20);
	naps(n);
	memset(m, 2, size);
	naps(n);
	printf("%d\n", m[0] + m[size - 1]);
	return 0;
}
