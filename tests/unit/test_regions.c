/*
** test_regions.c — the region table against another thread's mapping
** made while an mremap is under way (alloc/alloc_region.c).
**
** The kernel lets the old range of a moved region go inside the mremap
** call; another thread's mmap can get that range at once.  Its record
** must not take the place of the moved region's: the call and the table's
** bookkeeping are one step under the table's lock.  The core's raw
** system call is wrapped here so that, right
** after the kernel's mremap, another thread maps at the old range, and
** waits a while for it: with the bookkeeping after the lock, that thread
** recorded its region first (the moved region's count was lost).
*/
#include "ut.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#if defined(__x86_64__) /* elsewhere the hooks call syscall(3), not alloc_seccomp_raw */

#define RG_SMALL (64 * 1024L)
#define RG_SITE ((uintptr_t)16) /* outside every module: the program's */

static _Atomic int rg_armed;
static _Atomic int rg_mapped;
static void *rg_other;
static int rg_errno;

static _Atomic(void *) rg_old; /* set: the other thread maps there */

/* Made before the mremap (a thread's stack mapped inside the call would
** take the old range itself): it waits to be told where to map. */
static void *rg_other_thread(void *arg)
{
	(void)arg;
	void *old;
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 5000 && !(old = atomic_load(&rg_old)); i++) /* 5 s at most */
		nanosleep(&ms, NULL);
	if (!old) /* the mremap never reached the wrapped call */
		return NULL;
	rg_other = alloc_region_mmap(old, RG_SMALL, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0, RG_SITE);
	rg_errno = errno;
	atomic_store(&rg_mapped, 1);
	return NULL;
}

/* The core's raw system call (alloc_seccomp.c), wrapped at link time
** (-Wl,--wrap=alloc_seccomp_raw): the region hooks reach the kernel
** through it. */
long __real_alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
long __wrap_alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

long __wrap_alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long rc = __real_alloc_seccomp_raw(nr, a1, a2, a3, a4, a5, a6);
	if (nr == SYS_mremap && rc != -1 && atomic_exchange(&rg_armed, 0)) {
		atomic_store(&rg_old, (void *)a1);
		/* up to half a second for it to record its region (it cannot
		** while the bookkeeping holds the table) */
		struct timespec ms = {0, 1000000};
		for (int i = 0; i < 500 && !atomic_load(&rg_mapped); i++)
			nanosleep(&ms, NULL);
	}
	return rc;
}

Test(regions, mremap_beside_another_threads_mmap)
{
	ut_start("mis");
	struct meminst_status_info before = ut_peek(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MMAP);
	/* where the region moves to: a free range the kernel chose */
	void *to = mmap(NULL, 2 * RG_SMALL, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(to, MAP_FAILED);
	char *r = alloc_region_mmap(NULL, RG_SMALL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0,
				    RG_SITE);
	cr_assert_neq(r, MAP_FAILED);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, rg_other_thread, NULL), 0);
	atomic_store(&rg_armed, 1);
	char *moved = alloc_region_mremap(r, RG_SMALL, 2 * RG_SMALL, MREMAP_MAYMOVE | MREMAP_FIXED, to, RG_SITE);
	cr_assert_eq(moved, to);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert(atomic_load(&rg_old), "the mremap did not reach the wrapped system call");
	cr_assert_eq(rg_other, (void *)r, "the other thread did not get the old range (%p, not %p: %s)", rg_other, (void *)r,
		     strerror(rg_errno));
	/* both regions live: the moved one (128 KiB) and the other's (64 KiB) */
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MMAP, before.sizes.current + 3 * RG_SMALL,
		      before.blocks.current + 2);
	alloc_region_munmap(moved, 2 * RG_SMALL, RG_SITE);
	alloc_region_munmap(rg_other, RG_SMALL, RG_SITE);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MMAP, before.sizes.current, before.blocks.current);
}

#else

Test(regions, mremap_beside_another_threads_mmap)
{
	cr_skip_test("x86-64 only: the raw system call wrapped is alloc_seccomp_raw");
}

#endif
