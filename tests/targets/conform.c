/*
** conform.c — small points where an interposed allocator must behave as
** glibc does, for tests/integration/conform.sh.  Runs preloaded; its
** stdout must be the same uninstrumented and in every mode.
**
**   - blocks from __libc_malloc, __libc_calloc, __libc_memalign and
**     __libc_realloc (glibc's own, not the interposed malloc) given to
**     free, realloc and malloc_usable_size: glibc takes them back, nothing
**     leaks (glibc's mallinfo2 counts its bytes in use before and after
**     100,000 of them), contents survive realloc;
**   - aligned_alloc with alignments that are and are not powers of two:
**     glibc's answer, whichever version runs (2.38 refuses what is not a
**     power of two, older ones round it up).
*/
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_realloc(void *, size_t);

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", what, ok ? "ok" : "FAILED");
	failures += !ok;
}

/* glibc's bytes in use: allocated from its arenas plus its own mappings. */
static size_t libc_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static void libc_blocks(void)
{
	size_t before = libc_in_use();
	for (int i = 0; i < 100000; i++) {
		char *a = __libc_malloc(1000 + i % 64);
		char *b = __libc_calloc(10, 30);
		char *c = __libc_memalign(64, 200);
		if (!a || !b || !c)
			break;
		a[0] = b[0] = c[0] = 1;
		free(a);
		free(b);
		free(c);
	}
	char *big = __libc_malloc(4 << 20); /* a mapping of its own */
	if (big)
		big[0] = 1;
	free(big);
	size_t after = libc_in_use();
	check(after < before + (256 << 10), "__libc_malloc/calloc/memalign blocks freed through free");

	char *r = __libc_malloc(16);
	strcpy(r, "conformity");
	check(malloc_usable_size(r) >= 16, "malloc_usable_size of a __libc_malloc block");
	r = realloc(r, 100000);
	check(r && strcmp(r, "conformity") == 0, "realloc of a __libc_malloc block keeps its contents");
	free(r);
	char *s = __libc_realloc(NULL, 48);
	strcpy(s, "again");
	s = realloc(s, 24);
	check(s && strcmp(s, "again") == 0, "realloc of a __libc_realloc block");
	free(s);
}

static void aligned(size_t align, size_t size)
{
	errno = 0;
	void *p = aligned_alloc(align, size);
	int e = errno;
	if (!p) {
		printf("aligned_alloc(%zu, %zu): NULL, %s\n", align, size, e == EINVAL ? "EINVAL" : "other");
		return;
	}
	size_t want = align;
	while (want & (want - 1)) /* the power of two glibc would round to */
		want &= want - 1;
	printf("aligned_alloc(%zu, %zu): a block%s\n", align, size,
	       want && (uintptr_t)p % want ? " NOT aligned" : "");
	free(p);
}

int main(void)
{
	libc_blocks();
	aligned(64, 100);
	aligned(4096, 10);
	aligned(24, 48);
	aligned(3, 100);
	aligned(0, 16);
	aligned(48, 1000);
	return failures ? 1 : 0;
}
