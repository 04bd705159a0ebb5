/*
** part_malloc.c — a program that replaces part of the malloc family,
** calling glibc's own entry points, for tests/integration/part_malloc.sh.
**
** Built as part_malloc (malloc and free only) and part_malloc_calloc
** (PART_CALLOC: calloc too); with PART_LIB the same definitions make
** libpart_malloc.so (preloaded before libmeminst, or linked), and the
** program part_malloc_user allocates with every other entry point.  Blocks
** of every kind meet the program's free: meminst must not give any of them
** a header.  Prints what it read back; exit status 0.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(PART_USER)
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t size);

void *malloc(size_t size) { return __libc_malloc(size); }
void free(void *p) { __libc_free(p); }
#ifdef PART_CALLOC
void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
#endif
#endif

#if !defined(PART_LIB)
int main(void)
{
	char *s = strdup("partial malloc");
	char *c = calloc(10, 10);
	char *r = realloc(NULL, 50);
	r = realloc(r, 5000);
	void *m = NULL;
	void *a = aligned_alloc(32, 64);
	if (!s || !c || !r || posix_memalign(&m, 64, 100) != 0 || !a)
		return 2;
	c[5] = 1;
	memset(r, 2, 5000);
	printf("%s %d %d\n", s, c[5], r[4999]);
	free(s);
	free(c);
	free(r);
	free(m);
	free(a);
	return 0;
}
#endif
