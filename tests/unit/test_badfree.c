/*
** test_badfree.c — unit tests of invalid and double frees through
** alloc_core_free and alloc_core_realloc (alloc/alloc_core.c).
**
** A pointer whose header does not check out must be reported on stderr
** (one line naming the pointer and the thread), left alone (never handed
** to the backend) and must not change any counter.  Cases: a double free
** in mim mode (whose header survives the backend's free), a foreign
** pointer into a static buffer, an unaligned pointer, a pointer whose
** header would lie on an unreadable page, and a bad realloc; then the
** report limit, quiet=on and on_error=abort.
*/
#include "ut.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Every figure a block of this thread from site 70 lands in, kept to be
** compared after a bad free. */
struct bf_figures {
	struct meminst_status_info total, malloc, type, cls, thread;
};

static struct bf_figures bf_snap(void)
{
	struct bf_figures f;
	f.total = ut_peek(MEMINST_STATUS_TOTAL, 0);
	f.malloc = ut_peek(MEMINST_STATUS_ALLOCATORS, ALLOC_A_MALLOC);
	f.type = ut_peek(MEMINST_STATUS_TYPES, alloc_type_of_site(ut_site(70)));
	f.cls = ut_peek(MEMINST_STATUS_CLASSES, ut_exe_class());
	f.thread = ut_peek(MEMINST_STATUS_THREADS, alloc_tls.thread_no);
	return f;
}

static void bf_same(const struct bf_figures *a, const struct bf_figures *b)
{
	cr_assert(memcmp(&a->total.sizes, &b->total.sizes, sizeof a->total.sizes) == 0 &&
		  memcmp(&a->total.blocks, &b->total.blocks, sizeof a->total.blocks) == 0,
		  "total changed: %llu -> %llu bytes", (unsigned long long)a->total.sizes.current,
		  (unsigned long long)b->total.sizes.current);
	cr_assert(memcmp(&a->malloc.sizes, &b->malloc.sizes, sizeof a->malloc.sizes) == 0);
	cr_assert(memcmp(&a->type.blocks, &b->type.blocks, sizeof a->type.blocks) == 0);
	cr_assert(memcmp(&a->cls.sizes, &b->cls.sizes, sizeof a->cls.sizes) == 0);
	cr_assert(memcmp(&a->thread.blocks, &b->thread.blocks, sizeof a->thread.blocks) == 0);
}

static void bf_free(void *p)
{
	alloc_core_free(p, ut_site(71));
}

/*
** Free `p`, which is not a live block, with stderr captured: counters must
** not move, and the one line reported must name the pointer and the thread
** and contain `why`.  Then the heap must still work.
*/
static void bf_expect_ignored(void *p, const char *why)
{
	char out[1024], head[128];
	void *live = alloc_core_malloc(48, ALLOC_A_MALLOC, ut_site(70), 0);
	struct bf_figures before = bf_snap(), after;
	ut_capture_stderr(bf_free, p, out, sizeof out);
	after = bf_snap();
	bf_same(&before, &after);
	snprintf(head, sizeof head, "meminst: free of %p in thread %u (tid %d), called from ", p,
		 alloc_tls.thread_no, (int)alloc_sys_gettid());
	cr_assert(strncmp(out, head, strlen(head)) == 0, "report: %s\nexpected: %s", out, head);
	cr_assert(strstr(out, why), "report lacks \"%s\": %s", why, out);
	cr_assert(strstr(out, "; ignored\n"), "%s", out);
	cr_assert_eq(strchr(out, '\n') - out + 1, (long)strlen(out), "more than one line: %s", out);
	alloc_core_free(live, ut_site(70));
	for (int i = 0; i < 100; i++)
		alloc_core_free(alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(72), 0), ut_site(72));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, before.total.sizes.current - 48,
		      before.total.blocks.current - 1);
}

ParameterizedTestParameters(badfree, double_free_in_mim)
{
	static int idx[] = {1, 3};
	return cr_make_param_array(int, idx, ut_nmodes / 2);
}

ParameterizedTest(int *mode, badfree, double_free_in_mim)
{
	ut_start(ut_modes[*mode]);
	cr_assert_eq(alloc_mode, MEMINST_MODE_MIM);
	void *p = alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0);
	alloc_core_free(p, ut_site(70));
	bf_expect_ignored(p, "already freed");
	bf_expect_ignored(p, "already freed");
	cr_assert_eq(alloc_map_count(), 0);
}

/*
** A foreign pointer's "header" is whatever lies in front of it, and the
** check bits are only 10: an all-zero header passes them once in 1024
** processes.  The fake header here has the freed flag set, so even then the
** pointer is taken for a double free and left alone: the test is
** deterministic, and still fails if the core hands the pointer on.
*/
Test(badfree, foreign_static_buffer)
{
	static _Alignas(16) uint64_t buf[64];
	ut_start("mis");
	buf[6] = 200;
	buf[7] = ALLOC_META_FREED;
	bf_expect_ignored(&buf[8], "ignored");
}

/* An all-zero page in front of 4096 foreign pointers: the 10 check bits
** alone would accept about four of them; the plausibility checks must not. */
Test(badfree, foreign_zero_headers)
{
	static _Alignas(16) char zeros[4096 * 16 + 16];
	ut_start("mis,quiet=on");
	for (size_t off = 16; off < sizeof zeros; off += 16)
		alloc_core_free(zeros + off, ut_site(71));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
}

Test(badfree, unaligned_pointer)
{
	static _Alignas(16) char buf[256];
	ut_start("mim");
	bf_expect_ignored(buf + 72, "not a block allocated by meminst");
	void *p = alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0);
	bf_expect_ignored((char *)p + 8, "not a block allocated by meminst");
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 64, 1);
	alloc_core_free(p, ut_site(70));
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	cr_assert_eq(alloc_map_count(), 0);
}

/* The header of a pointer at the start of a page lies on the page before;
** if that page cannot be read the core must not fault reading it.  (The
** page is made inaccessible rather than unmapped, so that no later mapping,
** such as a reader's scratch page, can land in the hole.) */
Test(badfree, header_on_unreadable_page)
{
	ut_start("mis");
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(two, MAP_FAILED);
	cr_assert_eq(mprotect(two, 4096, PROT_NONE), 0);
	bf_expect_ignored(two + 4096, "not a block allocated by meminst");
	munmap(two, 8192);
}

static void bf_realloc_bad(void *p)
{
	errno = 0;
	cr_assert_null(alloc_core_realloc(p, 100, ALLOC_A_REALLOC, ut_site(71), 0));
	cr_assert_eq(errno, EINVAL);
}

Test(badfree, realloc_of_a_bad_pointer)
{
	static _Alignas(16) char buf[64];
	char out[512];
	ut_start("mim");
	ut_capture_stderr(bf_realloc_bad, buf + 4, out, sizeof out);
	cr_assert(strstr(out, "meminst: realloc of "), "%s", out);
	cr_assert(strstr(out, "; ignored"), "%s", out);
	UT_EXPECT_CUR(MEMINST_STATUS_TOTAL, 0, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_REALLOC, 0, 0);
}

/* ------------------------------------------------------------ policies -- */

static void bf_free_many(void *p)
{
	for (int i = 0; i < 25; i++)
		alloc_core_free((char *)p + i % 15 + 1, ut_site(71));
}

static int bf_count(const char *s, const char *needle)
{
	int n = 0;
	for (; (s = strstr(s, needle)) != NULL; s++)
		n++;
	return n;
}

Test(badfree, twenty_reports_then_counted)
{
	static _Alignas(16) char buf[64];
	char out[16384];
	ut_start("mis");
	ut_capture_stderr(bf_free_many, buf, out, sizeof out);
	cr_assert_eq(bf_count(out, "meminst: free of "), 20, "%s", out);
	cr_assert_eq(bf_count(out, "further invalid frees are counted but not shown"), 1, "%s", out);
	cr_assert_eq(bf_count(out, "\n"), 21, "%s", out);
}

Test(badfree, quiet_reports_nothing)
{
	static _Alignas(16) char buf[64];
	char out[1024];
	ut_start("mim,quiet=on");
	void *p = alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0);
	alloc_core_free(p, ut_site(70));
	struct bf_figures before = bf_snap(), after;
	ut_capture_stderr(bf_free, p, out, sizeof out);
	ut_capture_stderr(bf_free, buf + 3, out + strlen(out), sizeof out - strlen(out));
	after = bf_snap();
	bf_same(&before, &after);
	cr_assert_str_empty(out);
}

Test(badfree, on_error_abort, .signal = SIGABRT)
{
	ut_start("mim,on_error=abort");
	void *p = alloc_core_malloc(64, ALLOC_A_MALLOC, ut_site(70), 0);
	alloc_core_free(p, ut_site(70));
	alloc_core_free(p, ut_site(70));
	cr_assert_fail("a double free with on_error=abort returned");
}
