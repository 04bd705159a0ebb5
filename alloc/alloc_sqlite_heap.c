/*
** alloc_sqlite_heap.c — the private SQLite's memory: a small heap of
** meminst's own, mapped as it is needed.
**
** Its memory came from the backend allocator.  With glibc, the first
** malloc of a thread gives that thread an arena of its own: 64 MiB of
** address space reserved (128 MiB mapped for a moment, to align it) when
** the snapshot service thread first stored, and SQLite is the only thing
** that thread allocates from glibc.  A program under RLIMIT_AS (ulimit -v,
** a sandbox or a judge that lowers it) lost that much of its limit: its
** own malloc failed where, run bare, it did not.  Here the blocks come
** from chunks of HEAP_CHUNK mapped when needed (never unmapped: SQLite's
** use levels off after the first stores), a block over HEAP_SMALL_MAX from
** a mapping of its own, unmapped when freed.
**
** Every call into the private SQLite is made under its store lock (fork's
** prepare handler takes it too: alloc_sqlite.c), so this heap has no lock.
** A mapping that cannot be made is SQLite's out-of-memory: that store
** fails and says so; the program's allocations never come from here.
**
** Sizes: up to HEAP_FINE_MAX in steps of 16 bytes (SQLite's page-cache
** blocks are a page and a little more: a coarser class would waste the
** little more's worth in every page kept), then eight classes per doubling
** up to HEAP_SMALL_MAX.  Each block has a 16-byte header: its class, or
** for a mapping of its own, the mapping's length.
*/
#include "alloc_int.h"

#include <errno.h>
#include <string.h>

#include "alloc_sqlite_int.h"

#define HEAP_CHUNK ((size_t)1 << 20)
#define HEAP_FINE_MAX 8192u
#define HEAP_SMALL_MAX ((size_t)1 << 18)
#define HEAP_FINE_CLASSES (HEAP_FINE_MAX / 16)
#define HEAP_CLASSES (HEAP_FINE_CLASSES + 5 * 8) /* 8 KiB to 256 KiB: 5 doublings */
#define HEAP_HDR 16u
#define HEAP_OWN_MAPPING ((uint64_t)1 << 63)

typedef struct heap_block {
	struct heap_block *next; /* while free */
} heap_block_t;

static struct {
	heap_block_t *free[HEAP_CLASSES];
	char *bump, *end; /* what is left of the newest chunk */
} heap;

/* The class of a request of n bytes (1 <= n <= HEAP_SMALL_MAX). */
static unsigned heap_class(size_t n)
{
	if (n <= HEAP_FINE_MAX)
		return (unsigned)((n + 15) / 16) - 1;
	unsigned p = 63 - (unsigned)__builtin_clzll(n - 1); /* 13 to 17 */
	size_t step = (size_t)1 << (p - 3);
	unsigned k = (unsigned)((n + step - 1) / step); /* 9 to 16 */
	return HEAP_FINE_CLASSES + (p - 13) * 8 + (k - 9);
}

static size_t heap_class_size(unsigned c)
{
	if (c < HEAP_FINE_CLASSES)
		return ((size_t)c + 1) * 16;
	c -= HEAP_FINE_CLASSES;
	unsigned p = 13 + c / 8, k = 9 + c % 8;
	return (size_t)k << (p - 3);
}

/* errno is the caller's: a failed mapping says nothing to the program. */
static void *heap_map(size_t len)
{
	int saved_errno = errno;
	void *p = alloc_sys_map(len);
	errno = saved_errno;
	return p;
}

static void *heap_carve(unsigned c)
{
	size_t need = HEAP_HDR + heap_class_size(c);
	if ((size_t)(heap.end - heap.bump) < need) {
		char *chunk = heap_map(HEAP_CHUNK);
		if (!chunk)
			return NULL;
		heap.bump = chunk, heap.end = chunk + HEAP_CHUNK; /* the old rest is left */
	}
	char *b = heap.bump;
	heap.bump += need;
	return b;
}

static void *heap_malloc(int n)
{
	if (n <= 0)
		n = 1;
	uint64_t *h;
	if ((size_t)n > HEAP_SMALL_MAX) {
		size_t len = ((size_t)n + HEAP_HDR + 4095) & ~(size_t)4095;
		h = heap_map(len);
		if (!h)
			return NULL;
		h[0] = HEAP_OWN_MAPPING | len;
	} else {
		unsigned c = heap_class((size_t)n);
		heap_block_t *b = heap.free[c];
		if (b) {
			heap.free[c] = b->next;
			return b;
		}
		h = heap_carve(c);
		if (!h)
			return NULL;
		h[0] = c;
	}
	return (char *)h + HEAP_HDR;
}

static void heap_free(void *p)
{
	if (!p)
		return;
	uint64_t *h = (uint64_t *)((char *)p - HEAP_HDR);
	if (h[0] & HEAP_OWN_MAPPING) {
		size_t len = (size_t)(h[0] & ~HEAP_OWN_MAPPING);
		int saved_errno = errno;
		alloc_sys_unmap(h, len);
		errno = saved_errno;
		return;
	}
	heap_block_t *b = p;
	b->next = heap.free[h[0]];
	heap.free[h[0]] = b;
}

static int heap_size(void *p)
{
	if (!p)
		return 0;
	uint64_t w = ((uint64_t *)((char *)p - HEAP_HDR))[0];
	if (w & HEAP_OWN_MAPPING)
		return (int)((w & ~HEAP_OWN_MAPPING) - HEAP_HDR);
	return (int)heap_class_size((unsigned)w);
}

static void *heap_realloc(void *p, int n)
{
	if (!p)
		return heap_malloc(n);
	int have = heap_size(p);
	if (n > 0 && n <= have && (size_t)n > (size_t)have / 2)
		return p; /* SQLite grows its arrays: keep what still fits well */
	void *q = heap_malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, (size_t)(n < have ? n : have));
	heap_free(p);
	return q;
}

static int heap_roundup(int n)
{
	if (n <= 0)
		return 16;
	if ((size_t)n > HEAP_SMALL_MAX)
		return n > INT32_MAX - 4096 ? n : (int)((((size_t)n + HEAP_HDR + 4095) & ~(size_t)4095) - HEAP_HDR);
	return (int)heap_class_size(heap_class((size_t)n));
}

static int heap_init(void *unused)
{
	(void)unused;
	return SQLITE_OK;
}

static void heap_shutdown(void *unused)
{
	(void)unused;
}

const sqlite3_mem_methods alloc_sqlite_heap_methods = {heap_malloc,  heap_free, heap_realloc,  heap_size,
						       heap_roundup, heap_init, heap_shutdown, NULL};
