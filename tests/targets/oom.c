/*
** oom.c — out of memory under RLIMIT_AS: the allocation functions must
** return NULL (errno ENOMEM) as the backend does, never crash, and the
** status must count exactly the blocks that were handed out.  The status
** is read once no page of address space is left (the program maps every
** last page itself), as a program out of memory would read it: the read
** needs no memory of its own.  Linked with libmeminst; prints "ok" or one
** line saying what is wrong, exit status 1.
*/
#include <errno.h>
#include <meminst.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define MIB ((size_t)1 << 20)
#define MAX_BLOCKS 4096
#define MAX_PAGES 4096 /* pieces of what a failed malloc can leave */
#define TYPES 100      /* more than a read adds up on the stack */

static struct meminst_counter sizes, blocks;

static bool read_total(void)
{
	struct meminst_status_info t;
	if (meminst_status_read(MEMINST_STATUS_TOTAL, &t, 1) < 0) {
		sizes = blocks = (struct meminst_counter){0, 0, 0};
		return false;
	}
	sizes = t.sizes;
	blocks = t.blocks;
	return true;
}

/* Map every page of address space left, the largest pieces first: how
** many pieces (MAX_PAGES: not all). */
static struct {
	void *at;
	size_t len;
} pages[MAX_PAGES];
static int use_up_address_space(void)
{
	int n = 0;
	for (size_t len = (size_t)16 << 20; len >= 4096 && n < MAX_PAGES; len /= 2) {
		while (n < MAX_PAGES) {
			void *pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (pg == MAP_FAILED)
				break;
			pages[n].at = pg;
			pages[n++].len = len;
		}
	}
	return n;
}

/* Each of the TYPES types holds one block of 64 bytes (read with no
** page left: more types than fit the reader's stack). */
static meminst_type_t type_no[TYPES];
static struct meminst_status_info type_status[TYPES + 64];
static const char *check_types(void)
{
	long n = meminst_status_read(MEMINST_STATUS_TYPES, type_status, TYPES + 64);
	if (n < 0)
		return "type status could not be read with no memory left";
	for (int i = 0; i < TYPES; i++) {
		const struct meminst_status_info *e = &type_status[type_no[i]];
		if (type_no[i] >= n || e->blocks.current != 1 || e->sizes.current != 64)
			return "type counters wrong with no memory left";
	}
	return NULL;
}

static int fail(const char *what)
{
	printf("%s\n", what);
	return 1;
}

int main(void)
{
	static void *p[MAX_BLOCKS];
	struct rlimit lim = {(rlim_t)768 << 20, (rlim_t)768 << 20};
	if (setrlimit(RLIMIT_AS, &lim) != 0)
		return fail("setrlimit failed");
	bool on = meminst_mode() != MEMINST_MODE_OFF;
	for (int i = 0; on && i < TYPES; i++) {
		char name[32];
		snprintf(name, sizeof name, "oom_type_%d", i);
		type_no[i] = meminst_type_register(name, -1);
		if (!meminst_malloc_typed(64, type_no[i]))
			return fail("typed malloc failed under the limit");
	}
	read_total();
	uint64_t base_sizes = sizes.current, base_blocks = blocks.current;

	int n = 0;
	errno = 0;
	while (n < MAX_BLOCKS && (p[n] = malloc(MIB)) != NULL) {
		memset(p[n], n, 4096);
		n++;
	}
	if (n == MAX_BLOCKS || errno != ENOMEM)
		return fail("malloc did not fail with ENOMEM under the limit");
	/* read with no page left, judge once they are back (printf allocates) */
	int npages = use_up_address_space();
	bool read = !on || read_total();
	const char *why = on ? check_types() : NULL;
	for (int i = 0; i < npages; i++)
		munmap(pages[i].at, pages[i].len);
	if (npages == MAX_PAGES)
		return fail("the address space left after malloc failed could not be used up");
	if (!read)
		return fail("status could not be read with no memory left");
	if (on && (blocks.current != base_blocks + (uint64_t)n || sizes.current != base_sizes + n * MIB))
		return fail("counters wrong after malloc failed");
	if (why)
		return fail(why);

	/* every family fails cleanly too, and leaves the counters alone */
	void *q;
	errno = 0;
	if (calloc(64, MIB) != NULL || errno != ENOMEM)
		return fail("calloc did not fail with ENOMEM");
	if (posix_memalign(&q, 4096, 64 * MIB) != ENOMEM)
		return fail("posix_memalign did not fail with ENOMEM");
	errno = 0;
	if (aligned_alloc(64, 64 * MIB) != NULL || errno != ENOMEM)
		return fail("aligned_alloc did not fail with ENOMEM");
	errno = 0;
	if (realloc(p[0], 64 * MIB) != NULL || errno != ENOMEM)
		return fail("realloc did not fail with ENOMEM");
	if (((unsigned char *)p[0])[100] != 0)
		return fail("realloc failure damaged the old block");
	read_total();
	if (on && (blocks.current != base_blocks + (uint64_t)n || sizes.current != base_sizes + n * MIB))
		return fail("counters wrong after the failed calls");

	for (int i = 0; i < n; i++)
		free(p[i]);
	read_total();
	if (on && (blocks.current != base_blocks || sizes.current != base_sizes))
		return fail("counters not back after free");
	if (on && sizes.max_ever < base_sizes + n * MIB)
		return fail("max_ever lost the peak");
	printf("ok\n"); /* n depends on the backend: not printed */
	return 0;
}
