/*
** probe.h — lets a preloaded target look at libmeminst's counters, for the
** integration tests in tests/integration/.
**
** The targets are not linked with libmeminst: they run preloaded, or
** uninstrumented as the reference run.  So the API is looked up with dlsym
** and every probe does nothing when it is absent or when the library runs
** in `off` mode.  A probe that finds something wrong prints one line
** starting with "probe:" on stderr and exits with status 3; a probe never
** prints on stdout, so stdout stays comparable with the reference run.
**
** Scratch buffers come from mmap, so that reading the counters does not
** change them.  Header only: each target includes it once.
*/
#ifndef PROBE_H
#define PROBE_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "meminst.h"

#ifdef __cplusplus
#define PROBE_UNUSED [[maybe_unused]]
#else
#define PROBE_UNUSED __attribute__((unused))
#endif

typedef long (*probe_read_fn)(enum meminst_status_kind, struct meminst_status_info *, size_t);

/* One read of a kind, in mmap'd memory: free it with probe_table_free. */
struct probe_table {
	struct meminst_status_info *e;
	long n;
	size_t bytes;
};

PROBE_UNUSED __attribute__((format(printf, 1, 2), noreturn))
static void probe_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("probe: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(3);
}

/* meminst_status_read when libmeminst is loaded and not off, else NULL.
** Looked up once: call it early, before the counts that matter. */
PROBE_UNUSED static probe_read_fn probe_reader(void)
{
	static int looked;
	static probe_read_fn fn;
	if (!looked) {
		void *sym = dlsym(RTLD_DEFAULT, "meminst_status_read");
		looked = 1;
		memcpy(&fn, &sym, sizeof fn);
		if (fn && fn(MEMINST_STATUS_TOTAL, NULL, 0) < 0)
			fn = NULL;
	}
	return fn;
}

PROBE_UNUSED static bool probe_on(void)
{
	return probe_reader() != NULL;
}

PROBE_UNUSED static struct probe_table probe_table_read(enum meminst_status_kind kind)
{
	struct probe_table t = {NULL, 0, 0};
	probe_read_fn rd = probe_reader();
	long n = rd(kind, NULL, 0);
	t.bytes = ((size_t)(n + 16) * sizeof *t.e + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, t.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		probe_fail("mmap of %zu bytes failed", t.bytes);
	t.e = (struct meminst_status_info *)m;
	t.n = rd(kind, t.e, (size_t)n + 16);
	if (t.n < 0 || t.n > n + 16)
		probe_fail("meminst_status_read(%d) returned %ld (count said %ld)", (int)kind, t.n, n);
	return t;
}

PROBE_UNUSED static void probe_table_free(struct probe_table *t)
{
	munmap(t->e, t->bytes);
	t->e = NULL;
}

/*
** In a quiescent process, the current sizes and blocks of every
** allocator (but "mmap", the program's mappings), class, type and thread
** add up to the total.
*/
PROBE_UNUSED static void probe_check_sums(const char *when)
{
	if (!probe_on())
		return;
	struct probe_table total = probe_table_read(MEMINST_STATUS_TOTAL);
	uint64_t ts = total.e[0].sizes.current, tb = total.e[0].blocks.current;
	probe_table_free(&total);
	static const char *const kind_name[] = {"total", "allocators", "classes", "types", "threads"};
	for (int k = MEMINST_STATUS_ALLOCATORS; k < MEMINST_STATUS_KINDS; k++) {
		struct probe_table t = probe_table_read((enum meminst_status_kind)k);
		uint64_t s = 0, b = 0;
		for (long i = 0; i < t.n; i++) {
			if (k == MEMINST_STATUS_ALLOCATORS && strcmp(t.e[i].name, "mmap") == 0)
				continue; /* the program's mappings: not blocks */
			s += t.e[i].sizes.current;
			b += t.e[i].blocks.current;
		}
		probe_table_free(&t);
		if (s != ts || b != tb)
			probe_fail("%s: %s add up to %llu bytes in %llu blocks, the total is %llu in %llu",
				   when, kind_name[k], (unsigned long long)s, (unsigned long long)b,
				   (unsigned long long)ts, (unsigned long long)tb);
	}
}

/* The entry of a named class or thread, or -1 (kind read by the caller). */
PROBE_UNUSED static long probe_find(const struct probe_table *t, const char *name)
{
	for (long i = 0; i < t->n; i++)
		if (strcmp(t->e[i].name, name) == 0)
			return i;
	return -1;
}

/*
** The executable's class (named after its file) holds no block: every
** block the program allocated itself has been freed.  `min_peak` is a
** floor for its max_ever blocks, so that a class that never counted
** anything does not pass.
*/
PROBE_UNUSED static void probe_check_own_class_empty(const char *exe, uint64_t min_peak)
{
	if (!probe_on())
		return;
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	struct probe_table t = probe_table_read(MEMINST_STATUS_CLASSES);
	long i = probe_find(&t, base);
	if (i < 0)
		probe_fail("no class named %s", base);
	struct meminst_status_info e = t.e[i];
	probe_table_free(&t);
	if (e.sizes.current || e.blocks.current)
		probe_fail("class %s keeps %llu bytes in %llu blocks after everything was freed", base,
			   (unsigned long long)e.sizes.current, (unsigned long long)e.blocks.current);
	if (e.blocks.max_ever < min_peak)
		probe_fail("class %s: max_ever blocks %llu, expected at least %llu", base,
			   (unsigned long long)e.blocks.max_ever, (unsigned long long)min_peak);
}

#endif /* PROBE_H */
