/*
** dlclose_main.c — sites of libraries unloaded before the exit snapshot
** (tests/inspect/dlclose.sh): dlopen the first library (argv[1]), keep the
** blocks its function allocates, dlclose it; then the same with the second
** (argv[2]), which the loader is likely to map where the first one was.
** One block of the program's own stays live too (run as ./dlmain: dladdr
** names the program by argv[0], the module table by its full path).
** With --same A B: A's plug_same(3), B's plug_same(4), A's again
** plug_same(2), each library closed before the next is opened; prints
** "same" when the three were loaded at one address.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Open path, call its plug_same(n), close it; the function's address in *at. */
static int use_same(const char *path, int n, void **at)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void (*f)(int) = (void (*)(int))dlsym(h, "plug_same");
	if (!f)
		return 1;
	f(n);
	*at = (void *)f;
	return dlclose(h) != 0;
}

void *volatile own_block;

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--same") == 0) {
		void *at[3];
		if (use_same(argv[2], 3, &at[0]) || use_same(argv[3], 4, &at[1]) || use_same(argv[2], 2, &at[2]))
			return 1;
		puts(at[0] == at[1] && at[1] == at[2] ? "same" : "moved");
		return 0;
	}
	if (argc != 3)
		return 2;
	own_block = malloc(77); /* line of main's block */
	return use(argv[1], "plug_a") || use(argv[2], "plug_b");
}
