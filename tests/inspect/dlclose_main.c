/*
** dlclose_main.c — sites of libraries unloaded before the exit snapshot
** (tests/inspect/dlclose.sh): dlopen the first library (argv[1]), keep the
** blocks its function allocates, dlclose it; then the same with the second
** (argv[2]), which the loader is likely to map where the first one was.
** One block of the program's own stays live too (run as ./dlmain: dladdr
** names the program by argv[0], the module table by its full path).
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int use(const char *path, const char *fn)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void (*f)(void) = (void (*)(void))dlsym(h, fn);
	if (!f)
		return 1;
	f();
	return dlclose(h) != 0;
}

void *volatile own_block;

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	own_block = malloc(77); /* line of main's block */
	return use(argv[1], "plug_a") || use(argv[2], "plug_b");
}
