/*
** api_tags.c — checks libmeminst's counters and tags through <meminst.h>,
** for the integration tests (tests/integration/api.sh, print.sh).  Linked
** with -lmeminst, so it runs instrumented without a preload.
**
** Usage: api_tags           run every check
**        api_tags leave     allocate through a registered class and exit
**                           without freeing (for print=…)
**
** The checks take the counters before and after allocations of known
** sizes, in a single thread with nothing else allocating in between, so
** the differences are exact: allocators, types and classes (registered
** and scoped), per-thread figures, max_since_last resetting only for the
** kind read.  Alignment and malloc_usable_size are checked in every mode.
** In `off` mode every reader must answer -1.
**
** The first stdout line says what the library reports (mode, backend,
** header size) so that the test can tell MEMINST reached it.  Each failed
** check prints "FAIL: …" on stderr; the exit status is 1 if any failed.
*/
#include <malloc.h>
#include <meminst.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures, checks;
static void *volatile sink;

__attribute__((format(printf, 2, 3))) static void check(int ok, const char *fmt, ...)
{
	checks++;
	if (ok)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

/* ------------------------------------------------------------ reading -- */

/* A read of one kind, in mmap'd memory so that reading allocates nothing. */
struct table {
	struct meminst_status_info *e;
	long n;
};

#define TABLE_CAP 8192

static struct table table_read(enum meminst_status_kind kind)
{
	static struct meminst_status_info *buf[MEMINST_STATUS_KINDS];
	if (!buf[kind]) {
		void *m = mmap(NULL, TABLE_CAP * sizeof **buf, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			abort();
		buf[kind] = m;
	}
	struct table t = {buf[kind], meminst_status_read(kind, buf[kind], TABLE_CAP)};
	if (t.n < 0 || t.n > TABLE_CAP) {
		fprintf(stderr, "FAIL: meminst_status_read(%d) returned %ld\n", (int)kind, t.n);
		exit(1);
	}
	return t;
}

/* A copy of one entry of a fresh read; a zero entry if id is not there. */
static struct meminst_status_info entry(enum meminst_status_kind kind, uint32_t id)
{
	struct meminst_status_info none;
	struct table t = table_read(kind);
	memset(&none, 0, sizeof none);
	return (long)id < t.n ? t.e[id] : none;
}

static long long cur_size(const struct meminst_status_info *e) { return (long long)e->sizes.current; }
static long long cur_blocks(const struct meminst_status_info *e) { return (long long)e->blocks.current; }

static const char *const alloc_name[] = {"malloc", "calloc", "realloc", "aligned", "valloc"};
#define NALLOC 5

/* --------------------------------------------------------- allocators -- */

struct snapshot {
	long long size[NALLOC], blocks[NALLOC], total_size, total_blocks;
};

static struct snapshot take(void)
{
	struct snapshot s;
	struct table t = table_read(MEMINST_STATUS_ALLOCATORS);
	for (int a = 0; a < NALLOC; a++) {
		s.size[a] = cur_size(&t.e[a]);
		s.blocks[a] = cur_blocks(&t.e[a]);
	}
	t = table_read(MEMINST_STATUS_TOTAL);
	s.total_size = cur_size(&t.e[0]);
	s.total_blocks = cur_blocks(&t.e[0]);
	return s;
}

static void expect_growth(const struct snapshot *a, const struct snapshot *b, const long long *size,
			  const long long *blocks, const char *when)
{
	long long ts = 0, tb = 0;
	for (int i = 0; i < NALLOC; i++) {
		check(b->size[i] - a->size[i] == size[i], "%s: %s grew by %lld bytes, expected %lld",
		      when, alloc_name[i], b->size[i] - a->size[i], size[i]);
		check(b->blocks[i] - a->blocks[i] == blocks[i], "%s: %s grew by %lld blocks, expected %lld",
		      when, alloc_name[i], b->blocks[i] - a->blocks[i], blocks[i]);
		ts += size[i];
		tb += blocks[i];
	}
	check(b->total_size - a->total_size == ts && b->total_blocks - a->total_blocks == tb,
	      "%s: total grew by %lld bytes in %lld blocks, expected %lld in %lld", when,
	      b->total_size - a->total_size, b->total_blocks - a->total_blocks, ts, tb);
}

/* Known sizes through every C entry point; each allocator grows exactly. */
static void check_allocators(void)
{
	void *p[12];
	struct snapshot before = take();
	p[0] = malloc(1000);
	p[1] = calloc(10, 100);
	p[2] = realloc(NULL, 700);
	p[2] = realloc(p[2], 1500);         /* realloc block grown: still 1 */
	p[3] = malloc(100);
	p[3] = realloc(p[3], 200);          /* moves from malloc to realloc */
	p[4] = reallocarray(NULL, 10, 30);
	p[5] = memalign(64, 333);
	if (posix_memalign(&p[6], 256, 444))
		p[6] = NULL;
	p[7] = aligned_alloc(4096, 8192);
	p[8] = memalign(16, 10);            /* small alignment: still "aligned" */
	p[9] = valloc(123);
	for (int i = 0; i < 10; i++)
		check(p[i] != NULL, "allocation %d failed", i);
	struct snapshot after = take();
	const long long size[NALLOC] = {1000, 1000, 1500 + 200 + 300, 333 + 444 + 8192 + 10, 123};
	const long long blocks[NALLOC] = {1, 1, 3, 4, 1};
	expect_growth(&before, &after, size, blocks, "allocating");
	for (int i = 0; i < 10; i++)
		free(p[i]);
	struct snapshot freed = take();
	const long long zero[NALLOC] = {0};
	expect_growth(&before, &freed, zero, zero, "after free");
}

/* max_since_last of a kind is reset by a read of that kind only. */
static void check_max_since_last(void)
{
	struct meminst_status_info m0 = entry(MEMINST_STATUS_ALLOCATORS, 0);
	sink = malloc(1 << 20); /* through `sink`: the pair must not be optimised out */
	free(sink);
	(void)table_read(MEMINST_STATUS_TYPES);
	(void)table_read(MEMINST_STATUS_CLASSES);
	struct meminst_status_info m1 = entry(MEMINST_STATUS_ALLOCATORS, 0);
	check(m1.sizes.max_since_last == m0.sizes.current + (1 << 20),
	      "malloc max_since_last %llu after reading types and classes, expected %llu",
	      (unsigned long long)m1.sizes.max_since_last,
	      (unsigned long long)(m0.sizes.current + (1 << 20)));
	check(m1.sizes.max_ever >= m1.sizes.max_since_last, "max_ever below max_since_last");
	struct meminst_status_info m2 = entry(MEMINST_STATUS_ALLOCATORS, 0);
	check(m2.sizes.max_since_last == m2.sizes.current,
	      "malloc max_since_last %llu right after a read, current %llu",
	      (unsigned long long)m2.sizes.max_since_last, (unsigned long long)m2.sizes.current);
	check(m2.sizes.max_ever == m1.sizes.max_ever, "max_ever changed by a read");
}

/* ----------------------------------------------------- types, classes -- */

static void expect_entry(enum meminst_status_kind kind, uint32_t id, const struct meminst_status_info *before,
			 long long size, long long blocks, const char *what)
{
	struct meminst_status_info now = entry(kind, id);
	check(cur_size(&now) - cur_size(before) == size && cur_blocks(&now) - cur_blocks(before) == blocks,
	      "%s grew by %lld bytes in %lld blocks, expected %lld in %lld", what,
	      cur_size(&now) - cur_size(before), cur_blocks(&now) - cur_blocks(before), size, blocks);
}

static void check_registration(int cls, meminst_type_t widget, meminst_type_t gadget)
{
	check(cls > 0, "meminst_class_register returned %d", cls);
	check(meminst_class_register("itest.api") == cls, "a class registered twice got two numbers");
	check(widget != MEMINST_TYPE_AUTO && gadget != MEMINST_TYPE_AUTO && widget != gadget,
	      "type numbers %u and %u", widget, gadget);
	check(meminst_type_register("widget", cls) == widget, "a type registered twice got two numbers");
	struct meminst_status_info c = entry(MEMINST_STATUS_CLASSES, (uint32_t)cls);
	check(strcmp(c.name, "itest.api") == 0, "class %d is named '%s'", cls, c.name);
	struct meminst_status_info t = entry(MEMINST_STATUS_TYPES, widget);
	check(strcmp(t.name, "widget") == 0 && t.class_no == (uint32_t)cls,
	      "type %u is '%s' in class %u", widget, t.name, t.class_no);
}

/* A type registered with class -1 belongs to the caller's module. */
static void check_module_class(const char *argv0)
{
	meminst_type_t t = meminst_type_register("module-typed", -1);
	struct meminst_status_info ti = entry(MEMINST_STATUS_TYPES, t);
	struct meminst_status_info ci = entry(MEMINST_STATUS_CLASSES, ti.class_no);
	const char *base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
	check(t != MEMINST_TYPE_AUTO && strcmp(ci.name, base) == 0,
	      "type of class -1 is in class %u '%s', expected the module '%s'", ti.class_no, ci.name, base);
}

static void check_types(const char *argv0)
{
	int cls = meminst_class_register("itest.api");
	meminst_type_t widget = meminst_type_register("widget", cls);
	meminst_type_t gadget = meminst_type_register("gadget", cls);
	check_registration(cls, widget, gadget);
	struct meminst_status_info w0 = entry(MEMINST_STATUS_TYPES, widget);
	struct meminst_status_info g0 = entry(MEMINST_STATUS_TYPES, gadget);
	struct meminst_status_info c0 = entry(MEMINST_STATUS_CLASSES, (uint32_t)cls);
	void *p[8];
	for (int i = 0; i < 3; i++)
		p[i] = meminst_malloc_typed(1234, widget);
	meminst_type_t prev = meminst_type_push(gadget);
	p[3] = malloc(100);
	p[4] = calloc(2, 50);
	p[5] = strdup("gadget, allocated by libc"); /* 26 bytes */
	meminst_type_t inner = meminst_type_push(widget);
	p[6] = malloc(10);
	meminst_type_pop(inner);
	p[7] = malloc(20);
	meminst_type_pop(prev);
	check(prev == MEMINST_TYPE_AUTO && inner == gadget, "push returned %u and %u", prev, inner);
	check(meminst_block_type(p[0]) == widget && meminst_block_type(p[6]) == widget,
	      "typed blocks are of type %u, %u", meminst_block_type(p[0]), meminst_block_type(p[6]));
	check(meminst_block_type(p[5]) == gadget && meminst_block_type(p[7]) == gadget,
	      "scoped blocks are of type %u, %u", meminst_block_type(p[5]), meminst_block_type(p[7]));
	expect_entry(MEMINST_STATUS_TYPES, widget, &w0, 3 * 1234 + 10, 4, "type widget");
	expect_entry(MEMINST_STATUS_TYPES, gadget, &g0, 100 + 100 + 26 + 20, 4, "type gadget");
	expect_entry(MEMINST_STATUS_CLASSES, (uint32_t)cls, &c0, 3 * 1234 + 10 + 246, 8, "class itest.api");
	void *after_scope = malloc(8);
	check(meminst_block_type(after_scope) != widget && meminst_block_type(after_scope) != gadget,
	      "a block allocated after the scope ended is of a scoped type");
	free(after_scope);
	for (int i = 0; i < 8; i++)
		free(p[i]);
	expect_entry(MEMINST_STATUS_CLASSES, (uint32_t)cls, &c0, 0, 0, "class itest.api after free");
	check_module_class(argv0);
}

/* ------------------------------------------------------------- threads -- */

struct thread_arg {
	pid_t tid;
	void *blocks[5];
};

static void *thread_body(void *v)
{
	struct thread_arg *a = v;
	a->tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < 5; i++)
		a->blocks[i] = malloc(10000);
	return NULL;
}

static long thread_entry(const struct table *t, pid_t tid)
{
	for (long i = 1; i < t->n; i++)
		if (t->e[i].tid == tid)
			return i;
	return -1;
}

/* A thread's blocks stay on its number after it exits, until freed. */
static void check_threads(void)
{
	struct thread_arg a;
	pthread_t th;
	memset(&a, 0, sizeof a);
	if (pthread_create(&th, NULL, thread_body, &a) || pthread_join(th, NULL))
		abort();
	struct table t = table_read(MEMINST_STATUS_THREADS);
	long i = thread_entry(&t, a.tid);
	check(i > 0, "no thread entry with tid %d", (int)a.tid);
	if (i <= 0)
		return;
	check(cur_size(&t.e[i]) == 50000 && cur_blocks(&t.e[i]) == 5,
	      "exited thread %ld holds %lld bytes in %lld blocks, expected 50000 in 5", i,
	      cur_size(&t.e[i]), cur_blocks(&t.e[i]));
	for (int k = 0; k < 5; k++)
		free(a.blocks[k]);
	struct meminst_status_info e = entry(MEMINST_STATUS_THREADS, (uint32_t)i);
	check(cur_size(&e) == 0 && cur_blocks(&e) == 0 && e.sizes.max_ever == 50000,
	      "after main freed its blocks thread %ld holds %lld bytes, max_ever %llu", i,
	      cur_size(&e), (unsigned long long)e.sizes.max_ever);
}

/* ----------------------------------------------------------- alignment -- */

static void check_block(void *p, size_t size, size_t align, const char *fn)
{
	check(p != NULL, "%s(%zu, align %zu) failed", fn, size, align);
	if (!p)
		return;
	check(((uintptr_t)p & (align - 1)) == 0, "%s(%zu, align %zu) returned %p", fn, size, align, p);
	check(malloc_usable_size(p) >= size, "%s(%zu): usable size %zu", fn, size, malloc_usable_size(p));
	memset(p, (int)(size & 0xff), size);
}

static void check_pattern_and_free(void *p, size_t size)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < size; i += 97)
		if (c[i] != (unsigned char)(size & 0xff)) {
			check(0, "block %p of %zu bytes was overwritten", p, size);
			break;
		}
	check(c[size - 1] == (unsigned char)(size & 0xff), "block %p: last byte overwritten", p);
	free(p);
}

/*
** Every alignment from 16 to 1 MiB through the three aligned calls, and
** malloc of 1 to 300 bytes, all kept live at once so that overlapping
** blocks would show.  malloc promises 16 bytes, except that jemalloc, used
** directly in `off` mode, aligns blocks of 8 bytes or less only to 8 (as
** C11 allows: no object that small needs more).
*/
static void check_alignment(enum meminst_mode mode)
{
	int small8 = mode == MEMINST_MODE_OFF && strcmp(meminst_backend(), "jemalloc") == 0;
	enum { N = 17 * 6 + 300 };
	void *p[N];
	size_t sz[N];
	int n = 0;
	for (size_t a = 16; a <= (1u << 20); a <<= 1)
		for (int k = 0; k < 2; k++) {
			sz[n] = k ? a + 1 : 100;
			check_block(p[n] = memalign(a, sz[n]), sz[n], a, "memalign"), n++;
			sz[n] = k ? 3 * a : 100;
			if (posix_memalign(&p[n], a, sz[n]))
				p[n] = NULL;
			check_block(p[n], sz[n], a, "posix_memalign"), n++;
			sz[n] = k ? a : 64;
			check_block(p[n] = aligned_alloc(a, sz[n]), sz[n], a, "aligned_alloc"), n++;
		}
	for (size_t s = 1; s <= 300; s++) {
		sz[n] = s;
		check_block(p[n] = malloc(s), s, small8 && s <= 8 ? 8 : 16, "malloc"), n++;
	}
	for (int i = 0; i < n; i++)
		if (p[i])
			check_pattern_and_free(p[i], sz[i]);
	long page = sysconf(_SC_PAGESIZE);
	void *v = valloc(10), *pv = pvalloc(10);
	check_block(v, 10, (size_t)page, "valloc");
	check_block(pv, 10, (size_t)page, "pvalloc");
	free(v);
	free(pv);
}

/* calloc zeroes, realloc keeps the contents, realloc(p, 0) frees. */
static void check_contents(void)
{
	unsigned char *z = calloc(1000, 3);
	int zero = z != NULL;
	for (int i = 0; z && i < 3000; i++)
		zero &= z[i] == 0;
	check(zero, "calloc returned memory that is not zeroed");
	for (int i = 0; z && i < 3000; i++)
		z[i] = (unsigned char)i;
	unsigned char *r = realloc(z, 200000);
	int kept = r != NULL;
	for (int i = 0; r && i < 3000; i++)
		kept &= r[i] == (unsigned char)i;
	check(kept, "realloc lost the contents");
	r = realloc(r, 100);
	check(r && r[99] == 99, "realloc shrinking lost the contents");
	check(realloc(r, 0) == NULL, "realloc(p, 0) did not return NULL");
}

/*
** Every usable byte survives a realloc, as glibc's keeps them: the slack
** malloc_usable_size gives is the program's (Redis's sds grows into it).
** An aligned block moves on realloc, and that copy kept only the bytes
** asked for.
*/
static void check_usable_kept(void)
{
	for (int k = 0; k < 5; k++) {
		unsigned char *p = k == 0 ? malloc(100)
			       : k == 1 ? memalign(64, 100)
			       : k == 2 ? aligned_alloc(4096, 100)
			       : k == 3 ? valloc(100)
					: memalign(1 << 16, 5000);
		size_t u = malloc_usable_size(p);
		check(p && u >= 100, "usable size %zu of a block of 100 (kind %d)", u, k);
		if (!p)
			continue;
		unsigned char fill = (unsigned char)(0x50 + k); /* not the last round's: its block is reused */
		memset(p, fill, u);
		unsigned char *r = realloc(p, u + 100000);
		int kept = r != NULL;
		for (size_t i = 0; r && i < u; i++)
			kept &= r[i] == fill;
		check(kept, "realloc lost bytes of the %zu usable (kind %d)", u, k);
		free(r);
	}
}

/* -------------------------------------------------------- abi, events -- */

/* struct meminst_status_info as 0.1.0 laid it out: programs built with that
** header pass arrays of it, so its size and offsets must never change
** (new figures come through calls of their own, meminst_events_read). */
struct status_info_0_1 {
	uint32_t id;
	char name[MEMINST_NAME_MAX];
	struct meminst_counter sizes, blocks;
	uint32_t class_no;
	int32_t tid;
	uintptr_t site;
};
_Static_assert(sizeof(struct meminst_status_info) == sizeof(struct status_info_0_1),
	       "struct meminst_status_info changed size: an ABI break");
_Static_assert(offsetof(struct meminst_status_info, site) == offsetof(struct status_info_0_1, site),
	       "struct meminst_status_info changed layout");

static void check_abi_and_events(void)
{
	/* a read of 2 entries writes 2 entries' bytes, not one more */
	enum { CAP = 2, GUARD = 256 };
	unsigned char *buf = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(buf != MAP_FAILED, "mmap");
	if (buf == MAP_FAILED)
		return;
	size_t used = CAP * sizeof(struct status_info_0_1);
	memset(buf + used, 0xa5, GUARD);
	long n = meminst_status_read(MEMINST_STATUS_ALLOCATORS, (struct meminst_status_info *)buf, CAP);
	int intact = 1;
	for (size_t i = 0; i < GUARD; i++)
		intact &= buf[used + i] == 0xa5;
	check(n == 8 && intact, "status_read of %d entries wrote past them (n %ld)", CAP, n);
	/* the events: counted from the start, never reset, by entry */
	struct meminst_events ev[8], again[8];
	long ne = meminst_events_read(MEMINST_STATUS_ALLOCATORS, ev, 8);
	check(ne == 8, "events_read: %ld allocators (7 of blocks, mmap)", ne);
	for (int i = 0; i < 1000; i++)
		free(sink = malloc(48));
	check(meminst_events_read(MEMINST_STATUS_ALLOCATORS, again, 8) == 8, "events_read again");
	check(again[0].calls >= ev[0].calls + 1000 && again[0].allocated >= ev[0].allocated + 48000 &&
	      again[0].frees >= ev[0].frees + 1000 && again[0].temporary >= ev[0].temporary + 1000,
	      "malloc's events: calls %llu -> %llu, temporary %llu -> %llu",
	      (unsigned long long)ev[0].calls, (unsigned long long)again[0].calls,
	      (unsigned long long)ev[0].temporary, (unsigned long long)again[0].temporary);
	check(meminst_events_read(MEMINST_STATUS_TOTAL, NULL, 0) == 1, "events_read counts");
	munmap(buf, 65536);
}

/* ----------------------------------------------------------------- off -- */

static void check_off(void)
{
	check(meminst_status_read(MEMINST_STATUS_TOTAL, NULL, 0) == -1, "status_read answered when off");
	check(meminst_events_read(MEMINST_STATUS_TOTAL, NULL, 0) == -1, "events_read answered when off");
	check(meminst_status_count(MEMINST_STATUS_TYPES) == -1, "status_count answered when off");
	check(meminst_status_print(MEMINST_STATUS_TOTAL, 2) == -1, "status_print answered when off");
	check(meminst_class_register("itest.api") == -1, "class_register answered when off");
	check(meminst_type_register("widget", -1) == MEMINST_TYPE_AUTO, "type_register answered when off");
	check(meminst_header_size() == 0, "header size %zu when off", meminst_header_size());
	void *p = meminst_malloc_typed(100, 1);
	check(p != NULL && meminst_block_type(p) == MEMINST_TYPE_AUTO, "typed malloc when off");
	free(p);
}

/* ---------------------------------------------------------------- main -- */

/* For print=…: blocks of a registered class, left allocated at exit. */
static int leave(void)
{
	int cls = meminst_class_register("itest.print");
	meminst_type_t kept = meminst_type_register("kept", cls);
	meminst_type_t scoped = meminst_type_register("kept.scoped", cls);
	for (int i = 0; i < 10; i++)
		sink = meminst_malloc_typed(102400, kept);
	meminst_type_t prev = meminst_type_push(scoped);
	for (int i = 0; i < 3; i++)
		sink = malloc(1024);
	meminst_type_pop(prev);
	printf("left 1027072 bytes in 13 blocks\n");
	return 0;
}

int main(int argc, char **argv)
{
	enum meminst_mode mode = meminst_mode();
	printf("mode=%s backend=%s header=%zu\n",
	       mode == MEMINST_MODE_MIM ? "mim" : mode == MEMINST_MODE_MIS ? "mis" : "off",
	       meminst_backend(), meminst_header_size());
	fflush(stdout); /* stdout's buffer now exists: nothing of stdio allocates later */
	if (argc > 1 && strcmp(argv[1], "leave") == 0)
		return leave();
	check(meminst_allocator_name(3) && strcmp(meminst_allocator_name(3), "aligned") == 0 &&
	      meminst_allocator_name(7) && strcmp(meminst_allocator_name(7), "mmap") == 0 &&
	      meminst_allocator_name(8) == NULL, "allocator names");
	if (mode == MEMINST_MODE_OFF) {
		check_off();
	} else {
		check(meminst_header_size() == (mode == MEMINST_MODE_MIM ? 32u : 16u), "header size");
		check_allocators();
		check_max_since_last();
		check_types(argv[0]);
		check_threads();
		check_abi_and_events();
	}
	check_alignment(mode);
	check_contents();
	check_usable_kept();
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
