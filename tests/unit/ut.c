/*
** ut.c — helpers shared by the unit tests of the allocation core: starting
** the core in a chosen mode, reading one status entry, allocation sites
** inside the test executable, and capturing stderr.
*/
#include "ut.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const ut_modes[] = {
	"mis", "mim",
#ifdef HAVE_JEMALLOC
	"mis,backend=jemalloc", "mim,backend=jemalloc",
#endif
};
const int ut_nmodes = sizeof ut_modes / sizeof ut_modes[0];

/*
** Criterion starts each test by re-executing the binary, so the core's
** constructor has already run alloc_init with the runner's environment.
** The runner drops MEMINST before any test starts, so that run always finds
** `off`; it resolved the system allocator and nothing else, which makes it
** safe to start again from the beginning with the variable a test sets.
*/
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	unsetenv("MEMINST");
}

void ut_start(const char *meminst)
{
	cr_assert_eq(atomic_load(&alloc_state), 2, "the core's constructor did not run");
	cr_assert_eq(alloc_mode, MEMINST_MODE_OFF, "the core started in a mode before the test");
	cr_assert_eq(setenv("MEMINST", meminst, 1), 0);
	atomic_store(&alloc_state, 0);
	alloc_init();
	cr_assert_eq(atomic_load(&alloc_state), 2);
	cr_assert_neq(meminst_mode(), MEMINST_MODE_OFF, "MEMINST=%s", meminst);
	const char *want = strstr(meminst, "backend=jemalloc") ? "jemalloc" : "system";
	cr_assert_str_eq(meminst_backend(), want, "MEMINST=%s", meminst);
}

/* --------------------------------------------------------------- status -- */

static struct meminst_status_info ut_entry(enum meminst_status_kind kind, uint32_t id, bool reset)
{
	long n = meminst_status_read(kind, NULL, 0);
	cr_assert_gt(n, (long)id, "kind %d has %ld entries, no %u", (int)kind, n, (unsigned)id);
	struct meminst_status_info *all = calloc((size_t)n, sizeof *all), e;
	cr_assert_not_null(all);
	if (reset)
		cr_assert_eq(meminst_status_read(kind, all, (size_t)n), n);
	else
		alloc_stat_read(kind, (uint32_t)n, all, NULL, (uint32_t)n, ALLOC_READ_PEEK);
	e = all[id];
	e.id = id;
	free(all);
	return e;
}

struct meminst_status_info ut_read(enum meminst_status_kind kind, uint32_t id)
{
	return ut_entry(kind, id, true);
}

struct meminst_status_info ut_peek(enum meminst_status_kind kind, uint32_t id)
{
	return ut_entry(kind, id, false);
}

/* ---------------------------------------------------------------- sites -- */

static const char ut_site_area[256 * 16] __attribute__((aligned(16))) = {1};

uintptr_t ut_site(unsigned n)
{
	cr_assert_lt(n, 256u);
	return (uintptr_t)ut_site_area + 16 * n;
}

uint32_t ut_exe_class(void)
{
	return alloc_type_class(alloc_type_of_site(ut_site(0)));
}

/* --------------------------------------------------------------- stderr -- */

void ut_capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	cr_assert_not_null(tmp);
	fflush(stderr);
	int saved = dup(2);
	cr_assert_geq(saved, 0);
	dup2(fileno(tmp), 2);
	alloc_sys_err_retake(); /* else the core writes to the stderr it started with */
	fn(arg);
	dup2(saved, 2);
	close(saved);
	alloc_sys_err_retake();
	rewind(tmp);
	size_t n = fread(buf, 1, len - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
}
