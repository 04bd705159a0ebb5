/*
** own_malloc.c — a program with an allocator of its own (a bump arena), so
** libmeminst's malloc is never called: meminst must say so rather than
** report nothing.
*/
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) char own_pool[1 << 22];
static size_t own_used;

void *malloc(size_t n)
{
	void *p = own_pool + own_used;
	own_used += (n + 15) & ~(size_t)15;
	return own_used <= sizeof own_pool ? p : NULL;
}
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t size)
{
	void *p = malloc(n * size);
	return p ? memset(p, 0, n * size) : NULL;
}
void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	if (q && p)
		memcpy(q, p, n); /* the arena only grows: reading past the old block is safe */
	return q;
}

int main(void)
{
	char *s = strdup("own allocator");
	puts(s);
	return 0;
}
