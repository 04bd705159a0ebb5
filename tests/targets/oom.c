/*
** oom.c — out of memory under RLIMIT_AS: the allocation functions must
** return NULL (errno ENOMEM) as the backend does, never crash, and the
** status must count exactly the blocks that were handed out.  Linked with
** libmeminst; prints "ok N" (N blocks of 1 MiB before the limit) or one
** line saying what is wrong, exit status 1.
*/
#include <errno.h>
#include <meminst.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MIB ((size_t)1 << 20)
#define MAX_BLOCKS 4096

static struct meminst_counter sizes, blocks;

static void read_total(void)
{
	struct meminst_status_info t;
	if (meminst_status_read(MEMINST_STATUS_TOTAL, &t, 1) < 0) {
		sizes = blocks = (struct meminst_counter){0, 0, 0};
		return;
	}
	sizes = t.sizes;
	blocks = t.blocks;
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
	read_total();
	uint64_t base_sizes = sizes.current, base_blocks = blocks.current;
	bool on = meminst_mode() != MEMINST_MODE_OFF;

	int n = 0;
	errno = 0;
	while (n < MAX_BLOCKS && (p[n] = malloc(MIB)) != NULL) {
		memset(p[n], n, 4096);
		n++;
	}
	if (n == MAX_BLOCKS || errno != ENOMEM)
		return fail("malloc did not fail with ENOMEM under the limit");
	read_total();
	if (on && (blocks.current != base_blocks + (uint64_t)n || sizes.current != base_sizes + n * MIB))
		return fail("counters wrong after malloc failed");

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
