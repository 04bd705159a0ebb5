/*
** sites.c — allocation sites with known event counts, for
** tests/export/sites.sh (built there with gcc -g -O1):
**   temp_site   300 calls of malloc(100), each freed at once: 30000 bytes,
**               300 temporary allocations, nothing live at the peak
**   kept_site   2000 calls of malloc(1000) through an inlined helper
**               (grab): 2000000 bytes, all live at the top (the peak
**               snapshot, taken as the frees begin, has at least 95% of
**               them); 1950 freed later, 50 never: 50000 bytes leaked
** main calls both; the other sites are libc's.
*/
#include <stdio.h>
#include <stdlib.h>

static void *kept[2000];

static inline __attribute__((always_inline)) void *grab(size_t n)
{
	return malloc(n); /* KEPT_SITE */
}

__attribute__((noinline)) void temp_site(void)
{
	for (int i = 0; i < 300; i++) {
		char *volatile p = malloc(100); /* TEMP_SITE */
		p[0] = (char)i;
		free(p);
	}
}

__attribute__((noinline)) void kept_site(void)
{
	for (int i = 0; i < 2000; i++) {
		kept[i] = grab(1000);
		((char *)kept[i])[0] = (char)i;
	}
}

int main(void)
{
	temp_site();
	kept_site();
	for (int i = 0; i < 1950; i++)
		free(kept[i]);
	printf("done\n");
	return 0;
}
