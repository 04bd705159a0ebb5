/*
** regions.c — the program's mappings counted in the "mmap" allocator, for
** tests/integration/regions.sh.  Runs preloaded (probe.h) or alone.
**
** Each family of mapping is made and unmade in one thread with nothing
** else mapping in between, and after each step the allocator's current
** bytes and regions, its maxima and its events must have moved by exactly
** what the step did: anonymous, file-backed (a length that is no multiple
** of the page: counted in whole pages), MAP_STACK used as a thread's
** stack, mremap growth in place or moved, munmap of the middle (a region
** split in two), of the head and of the tail of a region, MAP_FIXED over
** the middle of a region, and calls the kernel refuses (errno and
** MAP_FAILED as without meminst, nothing counted), the program's own
** sbrk and brk; a stale region (unmapped by a raw system call) where
** glibc then maps a thread's stack (with REGIONS_STALE set).  A read resets
** max_since_last: three regions made and unmade between two reads are in
** it, not in current.  Then a churn: 3,000 MAP_FIXED mappings at random
** places over a window of 512 pages (heads, tails and middles of earlier
** ones cut, whole ones replaced, in an order that shapes the region
** table's tree every way), each step's count of regions and of regions
** made checked against a model of the window's pages.  At the end two regions stay mapped: stdout says
** their bytes, which the exit snapshot's mmap row must hold.
**
** Reads go to a static buffer: a mapping of the probe's would count.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#define KIB 1024L
#define MIB (1024L * KIB)
#define PAGE 4096L

typedef long (*events_fn)(enum meminst_status_kind, struct meminst_events *, size_t);

struct fig {
	long long bytes, regions, sl_bytes, sl_regions, ever_bytes, ever_regions, calls, allocated;
};

static struct meminst_status_info info[64];
static struct meminst_events events[64];
static struct fig now;
static int steps;
static int churn_made, churn_most; /* for stdout: regions made, most at once */

/* The "mmap" allocator's figures (a read: max_since_last restarts). */
static struct fig read_mmap(void)
{
	struct fig f = {0};
	probe_read_fn rd = probe_reader();
	if (!rd)
		return f;
	void *sym = dlsym(RTLD_DEFAULT, "meminst_events_read");
	events_fn ev;
	memcpy(&ev, &sym, sizeof ev);
	long n = rd(MEMINST_STATUS_ALLOCATORS, info, 64), ne = ev(MEMINST_STATUS_ALLOCATORS, events, 64);
	long i = 0;
	while (i < n && strcmp(info[i].name, "mmap") != 0)
		i++;
	if (i == n || ne != n)
		probe_fail("no allocator \"mmap\" among %ld (events %ld)", n, ne);
	f = (struct fig){(long long)info[i].sizes.current, (long long)info[i].blocks.current,
			 (long long)info[i].sizes.max_since_last, (long long)info[i].blocks.max_since_last,
			 (long long)info[i].sizes.max_ever, (long long)info[i].blocks.max_ever,
			 (long long)events[i].calls, (long long)events[i].allocated};
	return f;
}

/* After a step: current moved by (bytes, regions), `made` regions of
** `made_bytes` counted in; the maxima at least current. */
static void expect(const char *step, long long bytes, long long regions, long long made, long long made_bytes)
{
	steps++;
	if (!probe_on())
		return;
	struct fig f = read_mmap();
	if (f.bytes - now.bytes != bytes || f.regions - now.regions != regions || f.calls - now.calls != made ||
	    f.allocated - now.allocated != made_bytes)
		probe_fail("%s: current %+lld bytes %+lld regions, %+lld made of %+lld bytes; expected %+lld %+lld, "
			   "%+lld of %+lld",
			   step, f.bytes - now.bytes, f.regions - now.regions, f.calls - now.calls,
			   f.allocated - now.allocated, bytes, regions, made, made_bytes);
	if (f.sl_bytes < f.bytes || f.ever_bytes < f.sl_bytes || f.sl_regions < f.regions ||
	    f.ever_regions < f.sl_regions)
		probe_fail("%s: maxima below current", step);
	now = f;
}

static char *map(size_t n, int flags)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void unmap(void *p, size_t n)
{
	if (munmap(p, n) != 0) {
		perror("munmap");
		exit(1);
	}
}

static void *on_stack(void *arg)
{
	char here;
	return (char *)arg + ((uintptr_t)&here != 0);
}

static void families(void)
{
	char *anon = map(8 * MIB, 0);
	expect("anonymous", 8 * MIB, 1, 1, 8 * MIB);

	char path[] = "/tmp/regions.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 3 * PAGE + 100) != 0)
		exit(1);
	unlink(path);
	char *file = mmap(NULL, 3 * PAGE + 100, PROT_READ, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED)
		exit(1);
	expect("file, 3 pages and 100 bytes", 4 * PAGE, 1, 1, 4 * PAGE);

	char *stack = map(MIB, MAP_STACK | MAP_NORESERVE);
	pthread_attr_t a;
	pthread_t th;
	void *ret;
	pthread_attr_init(&a);
	if (pthread_attr_setstack(&a, stack, MIB) != 0 || pthread_create(&th, &a, on_stack, stack) != 0 ||
	    pthread_join(th, &ret) != 0)
		exit(1);
	pthread_attr_destroy(&a);
	expect("MAP_STACK, a thread's stack", MIB, 1, 1, MIB);

	char *grow = map(MIB, 0);
	memset(grow, 7, MIB);
	expect("before mremap", MIB, 1, 1, MIB);
	grow = mremap(grow, MIB, 6 * MIB, MREMAP_MAYMOVE);
	if (grow == MAP_FAILED || grow[MIB - 1] != 7)
		exit(1);
	expect("mremap 1 -> 6 MiB", 5 * MIB, 0, 1, 6 * MIB);
	char *shrunk = mremap(grow, 6 * MIB, 5 * MIB, 0);
	if (shrunk != grow)
		exit(1);
	expect("mremap 6 -> 5 MiB in place", -MIB, 0, 1, 5 * MIB);

	char *cut = map(6 * MIB, 0);
	expect("before the cuts", 6 * MIB, 1, 1, 6 * MIB);
	unmap(cut + 2 * MIB, 2 * MIB);
	expect("munmap of the middle", -2 * MIB, 1, 1, 0);
	unmap(cut, MIB);
	expect("munmap of the head", -MIB, 0, 0, 0);
	unmap(cut + 5 * MIB, MIB);
	expect("munmap of the tail", -MIB, 0, 0, 0);
	unmap(cut, 6 * MIB); /* the rest, over holes */
	expect("munmap over two regions and holes", -2 * MIB, -2, 0, 0);

	char *fixed = mmap(anon + 2 * MIB, MIB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (fixed != anon + 2 * MIB)
		exit(1);
	expect("MAP_FIXED over the middle", 0, 2, 2, MIB);

	errno = 0;
	if (munmap((void *)1, PAGE) == 0 || errno != EINVAL)
		exit(1);
	errno = 0;
	if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED || errno != EINVAL)
		exit(1);
	errno = 0;
	if (mremap((void *)(16 * PAGE), PAGE, 2 * PAGE, 0) != MAP_FAILED || errno != EFAULT) /* nothing there */
		exit(1);
	expect("refused calls", 0, 0, 0, 0);

	unmap(anon, 8 * MIB);
	expect("munmap of three regions", -8 * MIB, -3, 0, 0);
	unmap(stack, MIB);
	unmap(file, 3 * PAGE + 100);
	close(fd);
	expect("stack and file", -MIB - 4 * PAGE, -2, 0, 0);
	unmap(grow, 5 * MIB);
	expect("the grown one", -5 * MIB, -1, 0, 0);
}

/* The program's own break: sbrk up, sbrk down, brk back (to the byte). */
/* A thread's stack where the table still holds a region the hooks did not
** see unmapped (a raw munmap system call): at the thread's start the
** stale region is cut where glibc mapped the stack and its guard page (an
** mmap inside libc, unseen), the stack counted, never left out; at its
** end the stack goes; the stale pieces left are unmapped through the
** hooks (the kernel takes munmap of an unmapped range).  To put the stale
** region where glibc's stack will be: a first thread tells the size of
** glibc's mapping for a stack size (its guard page with it), a mapping of
** that size made as glibc makes it, by a raw system call, tells where
** the kernel puts it, and the stale region is mapped there (and 8 MiB
** below, when free) and unmapped unseen, leaving the kernel's map as it
** was: the second thread's stack (4 times the first's, so that glibc's
** cache of the first's stack is not used) goes there.  The stale region
** (at most 12 MiB and a page or two) stays below the families' largest
** figure (20 MiB).  Only with REGIONS_STALE set: the place is told right
** only when no other thread maps meanwhile (the launcher's service thread
** does, for its snapshots). */
static pthread_barrier_t stale_b;
static uintptr_t stale_lo, stale_hi;
static size_t stale_guard;

static void *stack_report(void *wait)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &a) != 0 || pthread_attr_getstack(&a, &lo, &size) != 0 ||
	    pthread_attr_getguardsize(&a, &stale_guard) != 0)
		exit(1);
	pthread_attr_destroy(&a);
	stale_lo = (uintptr_t)lo;
	stale_hi = stale_lo + size;
	if (wait) {
		pthread_barrier_wait(&stale_b); /* the main thread reads the figures */
		pthread_barrier_wait(&stale_b);
	}
	return NULL;
}

static void stale_thread(size_t stack, pthread_t *th, void *wait)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, stack) != 0 || pthread_create(th, &a, stack_report, wait) != 0)
		exit(1);
	pthread_attr_destroy(&a);
}

static void stale_under_stack(void)
{
	pthread_t th;
	void *ret;
	stale_thread(MIB, &th, NULL);
	if (pthread_join(th, &ret) != 0)
		exit(1);
	expect("stale: a first thread, begun and ended", 0, 0, 1, (long long)(stale_hi - stale_lo));
	size_t glibc_map = 4 * MIB + (stale_hi - stale_lo + stale_guard - MIB);
	long probe = syscall(SYS_mmap, NULL, glibc_map, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (probe < 0 || syscall(SYS_munmap, probe, glibc_map) != 0)
		exit(1);
	uintptr_t r0 = (uintptr_t)probe - 8 * MIB, r1 = (uintptr_t)probe + glibc_map;
	void *r = mmap((void *)r0, r1 - r0, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (r != (void *)r0) { /* something 8 MiB below: the stack's place alone */
		if (r != MAP_FAILED)
			unmap(r, r1 - r0);
		r0 = (uintptr_t)probe;
		r = mmap((void *)r0, r1 - r0, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (r != (void *)r0)
			exit(1);
	}
	expect("stale: mapped", (long long)(r1 - r0), 1, 1, (long long)(r1 - r0));
	if (syscall(SYS_munmap, r0, r1 - r0) != 0)
		exit(1);
	expect("stale: unmapped by a raw system call, unseen", 0, 0, 0, 0);

	pthread_barrier_init(&stale_b, NULL, 2);
	stale_thread(4 * MIB, &th, &stale_b);
	pthread_barrier_wait(&stale_b);
	uintptr_t m0 = stale_lo - stale_guard, m1 = stale_hi; /* glibc's mapping */
	if (m1 <= r0 || m0 >= r1)
		probe_fail("stale: the stack [%#lx, %#lx) is not where the stale region [%#lx, %#lx) was",
			   (unsigned long)m0, (unsigned long)m1, (unsigned long)r0, (unsigned long)r1);
	long long below = m0 > r0 ? (long long)(m0 - r0) : 0, above = m1 < r1 ? (long long)(r1 - m1) : 0;
	int pieces = (below > 0) + (above > 0);
	long long stack = (long long)(stale_hi - stale_lo);
	expect("stale: the stack cuts the stale region", below + above - (long long)(r1 - r0) + stack, pieces,
	       1 + (pieces == 2), stack);
	pthread_barrier_wait(&stale_b);
	if (pthread_join(th, &ret) != 0)
		exit(1);
	pthread_barrier_destroy(&stale_b);
	expect("stale: the thread's end", -stack, -1, 0, 0);
	if (below)
		unmap((void *)r0, (size_t)below);
	if (above)
		unmap((void *)m1, (size_t)above);
	expect("stale: the pieces unmapped", -(below + above), -pieces, 0, 0);
}

static void program_break(void)
{
	char *start = sbrk(0);
	if (sbrk(64 * KIB + 10) != start)
		exit(1);
	start[64 * KIB] = 1;
	expect("sbrk up", 64 * KIB + 10, 1, 1, 64 * KIB + 10);
	if (sbrk(-16 * KIB) != start + 64 * KIB + 10)
		exit(1);
	expect("sbrk down", -16 * KIB, 0, 0, 0);
	if (brk(start) != 0 || sbrk(0) != start)
		exit(1);
	expect("brk back", -(48 * KIB + 10), -1, 0, 0);
}

/* Three regions made and unmade between two reads: in max_since_last. */
static void peaks(void)
{
	struct fig before = now;
	char *p[3];
	for (int i = 0; i < 3; i++)
		p[i] = map(MIB, 0);
	for (int i = 0; i < 3; i++)
		unmap(p[i], MIB);
	expect("three made and unmade", 0, 0, 3, 3 * MIB);
	if (probe_on() && (now.sl_bytes != before.bytes + 3 * MIB || now.sl_regions != before.regions + 3 ||
			   now.ever_bytes < now.sl_bytes))
		probe_fail("max_since_last %lld bytes %lld regions, expected %lld and %lld", now.sl_bytes,
			   now.sl_regions, before.bytes + 3 * MIB, before.regions + 3);
	expect("a second read", 0, 0, 0, 0);
	if (probe_on() && (now.sl_bytes != now.bytes || now.sl_regions != now.regions))
		probe_fail("max_since_last not reset by the read: %lld bytes", now.sl_bytes);
}

/* A run of pages starts at page i of the window (its owner differs from
** the page before). */
static int run_starts(const int *owner, int i)
{
	return i == 0 || owner[i] != owner[i - 1];
}

static void churn(void)
{
	enum { PAGES = 512, STEPS = 3000 };
	static int owner[PAGES]; /* which region each page is in (a split's right piece: minus) */
	char *w = map(PAGES * PAGE, 0);
	expect("the churn's window", PAGES * PAGE, 1, 1, PAGES * PAGE);
	uint32_t seed = 12345;
	for (int step = 1; step <= STEPS; step++) {
		seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
		int len = 1 + (int)(seed % 48), at = (int)((seed >> 8) % (PAGES - len + 1)), end = at + len;
		int before = 0, after = 0;
		for (int i = 0; i < PAGES; i++)
			before += run_starts(owner, i);
		bool split = at > 0 && end < PAGES && owner[at - 1] == owner[end];
		for (int i = end, was = owner[end]; split && i < PAGES && owner[i] == was; i++)
			owner[i] = -step; /* the right piece of the split: a region of its own */
		for (int i = at; i < end; i++)
			owner[i] = step;
		for (int i = 0; i < PAGES; i++)
			after += run_starts(owner, i);
		if (mmap(w + at * PAGE, len * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) != w + at * PAGE)
			exit(1);
		expect("churn: MAP_FIXED in the window", 0, after - before, 1 + split, len * PAGE);
		churn_made += 1 + split;
		churn_most = after > churn_most ? after : churn_most;
	}
	int runs = 0;
	for (int i = 0; i < PAGES; i++)
		runs += run_starts(owner, i);
	unmap(w, PAGES * PAGE);
	expect("churn: the window unmapped", -PAGES * PAGE, -runs, 0, 0);
}

int main(void)
{
	if (probe_on())
		now = read_mmap();
	families();
	if (getenv("REGIONS_STALE")) /* no other thread mapping meanwhile */
		stale_under_stack();
	program_break();
	peaks();
	churn();
	char *kept = map(3 * MIB, 0);
	char *kept2 = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (kept2 == MAP_FAILED)
		return 1;
	expect("two kept", 3 * MIB + PAGE, 2, 2, 3 * MIB + PAGE);
	kept[0] = kept2[0] = 1;
	printf("%d steps; kept %ld bytes in 2 regions\n", steps, 3 * MIB + PAGE);
	printf("churn: %d regions made, at most %d at once\n", churn_made + 1, churn_most);
	return 0;
}
