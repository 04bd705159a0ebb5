/*
** malloc_tune.c — a program that tunes and inspects glibc's allocator, for
** the compatibility set (tests/compat/runtimes.sh): mallopt, malloc_trim,
** mallinfo2, malloc_info and malloc_stats, from the main thread while four
** threads allocate and free, and between bursts of allocation.
**
** These calls are not interposed (meminst(7), COMPATIBILITY): their figures
** describe glibc's arenas, which meminst's headers (system backend) or
** jemalloc (backend=jemalloc) change.  So stdout prints only what holds for
** any allocator under them: mallopt's return values, that malloc_info's
** report is well-formed, that the blocks survive a trim unchanged, that
** malloc_usable_size covers each request; the figures go to stderr.
** argv[1] scales the work.
*/
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define KEEP 512

static long rounds;

/* Allocate, fill and free blocks of varied sizes; count bad fills. */
static void *churn(void *arg)
{
	long seed = (long)arg, bad = 0;
	char *keep[64] = {0};
	for (long i = 0; i < rounds; i++) {
		size_t n = 8 + (size_t)((i * 7919 + seed) % 3000);
		int slot = (int)(i % 64);
		if (keep[slot] && keep[slot][0] != (char)(slot + 1))
			bad++;
		free(keep[slot]);
		keep[slot] = malloc(n);
		memset(keep[slot], slot + 1, n);
		if (i % 1000 == 999)
			malloc_trim(0);
	}
	for (int s = 0; s < 64; s++)
		free(keep[s]);
	return (void *)bad;
}

/* malloc_info's XML, checked for its outer element only. */
static int info_well_formed(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return 0;
	int rc = malloc_info(0, f);
	fclose(f);
	int ok = rc == 0 && strncmp(text, "<malloc version=", 16) == 0 &&
		 len > 10 && strcmp(text + len - 10, "</malloc>\n") == 0;
	free(text);
	return ok;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 20000;
	printf("mallopt M_MMAP_THRESHOLD %d\n", mallopt(M_MMAP_THRESHOLD, 256 * 1024));
	printf("mallopt M_TRIM_THRESHOLD %d\n", mallopt(M_TRIM_THRESHOLD, 128 * 1024));
	printf("mallopt M_TOP_PAD %d\n", mallopt(M_TOP_PAD, 64 * 1024));
	printf("mallopt M_ARENA_MAX %d\n", mallopt(M_ARENA_MAX, 2));

	char *kept[KEEP];
	long short_usable = 0;
	for (int i = 0; i < KEEP; i++) {
		size_t n = 1 + (size_t)(i * 37 % 5000);
		kept[i] = malloc(n);
		memset(kept[i], i & 0x7f, n);
		short_usable += malloc_usable_size(kept[i]) < n;
	}
	pthread_t t[THREADS];
	for (long k = 0; k < THREADS; k++)
		pthread_create(&t[k], NULL, churn, (void *)k);
	int trims = 0, infos = 0;
	for (int i = 0; i < 20; i++) {
		malloc_trim(64 * 1024);
		trims++;
		infos += info_well_formed();
		struct mallinfo2 mi = mallinfo2();
		fprintf(stderr, "mallinfo2: arena %zu in use %zu mmapped %zu\n", mi.arena, mi.uordblks,
			mi.hblkhd);
	}
	long bad = 0;
	for (int k = 0; k < THREADS; k++) {
		void *r;
		pthread_join(t[k], &r);
		bad += (long)r;
	}
	for (int i = KEEP - 1; i >= 0; i -= 2) { /* free half, trim, check the rest */
		free(kept[i]);
		kept[i] = NULL;
	}
	malloc_trim(0);
	malloc_stats(); /* to stderr */
	long changed = 0;
	for (int i = 0; i < KEEP; i++) {
		if (!kept[i])
			continue;
		size_t n = 1 + (size_t)(i * 37 % 5000);
		for (size_t j = 0; j < n; j++)
			changed += kept[i][j] != (char)(i & 0x7f);
		free(kept[i]);
	}
	printf("trims %d, well-formed malloc_info %d, short usable sizes %ld, bad fills %ld, "
	       "changed bytes %ld\n",
	       trims, infos, short_usable, bad, changed);
	return 0;
}
