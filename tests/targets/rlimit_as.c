/*
** rlimit_as.c — a program that needs NEED MiB of heap and runs under an
** address-space limit (RLIMIT_AS) a little above what it needs bare
** (tests/integration/rlimit_as.sh):
**   rlimit_as NEED           allocates NEED MiB in 1 MiB blocks, touched,
**                            and 20,000 small blocks, then frees them
**   rlimit_as NEED LIMIT     the same after lowering its own RLIMIT_AS to
**                            LIMIT KiB (a sandbox, a judge)
**   rlimit_as NEED 0 peak    the same, then prints its VmPeak in KiB
** and after the blocks, a malloc of 64 TiB and one of 1 GiB (over the
** limits the test sets): whether each gave NULL, and errno, are printed,
** as a program would see them.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long vm_peak_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmPeak:", 7) == 0)
			kib = atol(line + 7);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long need = atol(argv[1]);
	if (argc > 2 && atol(argv[2]) > 0) {
		struct rlimit r = {(rlim_t)atol(argv[2]) << 10, (rlim_t)atol(argv[2]) << 10};
		if (setrlimit(RLIMIT_AS, &r) != 0)
			return perror("setrlimit"), 3;
	}
	static char *big[1024], *small[20000];
	if (need > 1024)
		return 2;
	for (long i = 0; i < need; i++)
		if (!(big[i] = malloc(1 << 20)))
			return printf("malloc of MiB %ld failed: %s\n", i + 1, strerror(errno)), 1;
		else
			memset(big[i], 1, 1 << 20);
	for (int i = 0; i < 20000; i++)
		if (!(small[i] = malloc(16 + i % 1000)))
			return printf("malloc of small block %d failed: %s\n", i, strerror(errno)), 1;
	for (int i = 0; i < 20000; i++)
		free(small[i]);
	for (long i = 0; i < need; i++)
		free(big[i]);
	if (argc > 3)
		printf("VmPeak %ld\n", vm_peak_kib());
	/* over any size (the allocator says no) and over the limit (mmap does) */
	for (int shift = 46; shift >= 30; shift -= 16) {
		errno = 0;
		void *huge = malloc((size_t)1 << shift);
		printf("%ld MiB: done; malloc(2^%d): %s, errno %s\n", need, shift, huge ? "a block" : "NULL",
		       errno == ENOMEM ? "ENOMEM" : strerror(errno));
		free(huge);
	}
	return 0;
}
