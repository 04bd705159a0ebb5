/* unchanged.c — unchanged.sh's steady program: the same 1000 blocks
** replaced one by one, with short sleeps between rounds, for argv[1]
** rounds; its mappings and modules do not change after the start.  With
** argv[2], the library there is loaded (dlopen) a third of the way and
** unloaded (dlclose) two thirds of the way. */
#include <dlfcn.h>
#include <stdio.h>
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
	void *lib = NULL;
	for (unsigned r = 0; r < rounds; r++) {
		if (argc > 2 && r == rounds / 3 && !(lib = dlopen(argv[2], RTLD_NOW))) {
			fprintf(stderr, "unchanged: %s\n", dlerror());
			return 1;
		}
		if (lib && r == 2 * rounds / 3) {
			dlclose(lib);
			lib = NULL;
		}
		for (unsigned i = 0; i < 1000; i++) {
			free(keep[i]);
			keep[i] = grow(i);
		}
		struct timespec d = {0, 2000000};
		nanosleep(&d, NULL);
	}
	return 0;
}
