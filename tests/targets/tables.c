/*
** tables.c — address space and growing tables, for
** tests/integration/tables.sh.  Runs preloaded.
**
** Usage: tables vm      print the process's VmSize in kB (after start-up)
**        tables sites   allocate and free one block from each of 12,000
**                       call sites (12,000 automatic types), then print ok
**
** The sites are distinct call instructions, unrolled by the preprocessor;
** each block is freed at once, so the program's own heap stays at a page
** or two and the memory the run needs is meminst's type tables.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

#define SITE1                                                                  \
	do {                                                                   \
		void *p_ = malloc(16);                                         \
		if (!p_)                                                       \
			return 1;                                              \
		sink = p_;                                                     \
		free(p_);                                                      \
	} while (0);
#define SITE10 SITE1 SITE1 SITE1 SITE1 SITE1 SITE1 SITE1 SITE1 SITE1 SITE1
#define SITE100 SITE10 SITE10 SITE10 SITE10 SITE10 SITE10 SITE10 SITE10 SITE10 SITE10
#define SITE1000 SITE100 SITE100 SITE100 SITE100 SITE100 SITE100 SITE100 SITE100 SITE100 SITE100

static __attribute__((noinline)) int many_sites(void)
{
	SITE1000 SITE1000 SITE1000 SITE1000 SITE1000 SITE1000
	SITE1000 SITE1000 SITE1000 SITE1000 SITE1000 SITE1000
	return 0;
}

static long vm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmSize:", 7) == 0)
			kb = strtol(line + 7, NULL, 10);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "vm") == 0) {
		long kb = vm_kb();
		if (kb < 0)
			return 1;
		printf("%ld\n", kb);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "sites") == 0) {
		if (many_sites() != 0) {
			fprintf(stderr, "tables: malloc failed\n");
			return 1;
		}
		printf("ok\n");
		return 0;
	}
	fprintf(stderr, "usage: tables vm|sites\n");
	return 2;
}
