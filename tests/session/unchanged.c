/* unchanged.c — unchanged.sh's steady program: the same 1000 blocks
** replaced one by one, with short sleeps between rounds, for argv[1]
** rounds; its mappings and modules do not change after the start. */
#include <stdlib.h>
#include <time.h>

static void *volatile keep[1000];

static void *grow(unsigned i)
{
	return malloc(100 + i % 50);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < 1000; i++) {
			free(keep[i]);
			keep[i] = grow(i);
		}
		struct timespec d = {0, 2000000};
		nanosleep(&d, NULL);
	}
	return 0;
}
