/*
** bad_free.c — frees and reallocs of pointers libmeminst did not hand out,
** for the integration tests (tests/integration/bad_free.sh).  Without
** libmeminst it crashes in glibc; with it (mis or mim) every bad call must
** be reported on stderr and ignored, and the program exits 0.
**
** Usage: bad_free [all|many|large]
**   all    free of a pointer into a page the program unmapped, free of a
**          pointer into the middle of a block, free of a stack address,
**          realloc and free of a pointer whose header would lie on an
**          unmapped page, and a double free, in that order
**   many   25 bad frees: only the first 20 are shown, then a count
**   large  a double free of a 1 MiB block
**
** Before each bad call it prints "OP ADDRESS" on stdout (flushed), so the
** test can look for the report that names the address.  The stack and
** interior pointers are deliberately not 16-byte aligned: libmeminst turns
** those down without reading a header.  For an aligned foreign pointer it
** reads the 16 bytes in front and trusts a 10-bit check, so 1 in 1024 of
** them would pass; a test made of such pointers could not be
** deterministic.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Called through volatile pointers so that the compiler neither warns
** about nor reasons from the bad calls. */
static void (*volatile free_fn)(void *) = free;
static void *(*volatile realloc_fn)(void *, size_t) = realloc;

static void say(const char *op, const void *p)
{
	printf("%s %p\n", op, (void *)(uintptr_t)p);
	fflush(stdout);
}

static void bad_interior(void)
{
	char *p = calloc(1, 64);
	say("free", p + 8);
	free_fn(p + 8);
	free(p);
}

static void bad_stack(void)
{
	_Alignas(16) char buf[64];
	memset(buf, 0x5a, sizeof buf);
	say("free", buf + 4);
	free_fn(buf + 4);
}

/* A page whose predecessor is unmapped: its "header" cannot be read. */
static void bad_foreign(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		exit(99);
	munmap(m, (size_t)pg);
	char *p = m + pg;
	say("realloc", p);
	void *r = realloc_fn(p, 100);
	if (r != NULL && r != p)
		free(r);
	say("free", p);
	free_fn(p);
	munmap(p, (size_t)pg);
}

/* A pointer into a page the program has unmapped itself, its "header" on
** the same page: the first unmap of the run, so the fast frees must have
** seen it (alloc_header_readable) and probe, not read. */
static void bad_unmapped(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		exit(99);
	say("free", m + 48); /* (before the unmap: nothing may map the hole again) */
	munmap(m, (size_t)pg);
	free_fn(m + 48);
}

static void bad_double(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	say("free", p);
	free_fn(p);
	free_fn(p);
}

static void bad_many(void)
{
	_Alignas(16) char buf[32 * 25];
	for (int i = 0; i < 25; i++) {
		say("free", buf + 32 * i + 8);
		free_fn(buf + 32 * i + 8);
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	if (strcmp(what, "all") == 0) {
		bad_unmapped();
		bad_interior();
		bad_stack();
		bad_foreign();
		bad_double(48);
	} else if (strcmp(what, "many") == 0) {
		bad_many();
	} else if (strcmp(what, "large") == 0) {
		bad_double(1 << 20);
	} else {
		fprintf(stderr, "usage: bad_free [all|many|large]\n");
		return 2;
	}
	printf("survived\n");
	return 0;
}
