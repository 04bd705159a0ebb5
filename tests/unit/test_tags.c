/*
** test_tags.c — unit tests of classes and types (alloc/alloc_tags.c and the
** public calls in alloc/alloc_api.c).
**
** Registration must be idempotent by name (and by class, for types); typed
** allocation and scopes (nested, and ended) must tag blocks with the right
** type, and the figures of a type must land in its class.  Automatic types
** are allocation sites: one type per site, in the class of the module the
** site belongs to.
*/
#include "ut.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ classes --- */

Test(tags, class_register_is_by_name)
{
	ut_start("mis");
	int a = meminst_class_register("net");
	int b = meminst_class_register("db");
	cr_assert_gt(a, 0, "class 0 is \"unknown\"");
	cr_assert_gt(b, 0);
	cr_assert_neq(a, b);
	cr_assert_eq(meminst_class_register("net"), a);
	cr_assert_eq(meminst_class_register("db"), b);
	cr_assert_eq(meminst_class_register(""), -1);
	cr_assert_eq(meminst_class_register(NULL), -1);
	cr_assert_str_eq(ut_read(MEMINST_STATUS_CLASSES, (uint32_t)a).name, "net");
	cr_assert_str_eq(ut_read(MEMINST_STATUS_CLASSES, 0).name, "unknown");
}

/* -------------------------------------------------------------- types --- */

Test(tags, type_register_is_by_name_and_class)
{
	ut_start("mis");
	int net = meminst_class_register("net"), db = meminst_class_register("db");
	meminst_type_t t1 = meminst_type_register("buffer", net);
	meminst_type_t t2 = meminst_type_register("buffer", db);
	meminst_type_t t3 = meminst_type_register("packet", net);
	cr_assert(t1 && t2 && t3);
	cr_assert_neq(t1, t2, "same name in another class is another type");
	cr_assert_neq(t1, t3);
	cr_assert_eq(meminst_type_register("buffer", net), t1);
	cr_assert_eq(meminst_type_register("buffer", db), t2);
	cr_assert_eq(meminst_type_register("packet", net), t3);
	cr_assert_eq(meminst_type_register("x", 60000), MEMINST_TYPE_AUTO, "unknown class");
	cr_assert_eq(meminst_type_register("", net), MEMINST_TYPE_AUTO);

	struct meminst_status_info e = ut_read(MEMINST_STATUS_TYPES, t2);
	cr_assert_str_eq(e.name, "buffer");
	cr_assert_eq(e.class_no, (uint32_t)db);
	cr_assert_eq(ut_read(MEMINST_STATUS_TYPES, t3).class_no, (uint32_t)net);
}

/* Class -1 is the class of the calling module: here, the test executable. */
Test(tags, type_register_in_callers_class)
{
	ut_start("mis");
	meminst_type_t t = meminst_type_register("mine", -1);
	cr_assert_neq(t, 0);
	cr_assert_eq(alloc_type_class(t), ut_exe_class());
	cr_assert_eq(meminst_type_register("mine", -1), t);
}

Test(tags, typed_allocation_counts_in_type_and_class)
{
	ut_start("mim");
	int net = meminst_class_register("net"), db = meminst_class_register("db");
	meminst_type_t tn = meminst_type_register("buffer", net);
	meminst_type_t td = meminst_type_register("buffer", db);
	void *a = meminst_malloc_typed(100, tn);
	void *b = meminst_calloc_typed(3, 10, tn);
	cr_assert_eq(meminst_block_type(a), tn);
	cr_assert_eq(meminst_block_type(b), tn);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tn, 130, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, net, 130, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_CALLOC, 30, 1);

	a = meminst_realloc_typed(a, 500, td);
	cr_assert_eq(meminst_block_type(a), td);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tn, 30, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, td, 500, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, net, 30, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, db, 500, 1);
	UT_EXPECT_CUR(MEMINST_STATUS_ALLOCATORS, ALLOC_A_REALLOC, 500, 1);

	alloc_core_free(a, 0);
	alloc_core_free(b, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, net, 0, 0);
	UT_EXPECT_CUR(MEMINST_STATUS_CLASSES, db, 0, 0);
	struct meminst_status_info e = ut_read(MEMINST_STATUS_CLASSES, net);
	UT_EXPECT_COUNTER(e.sizes, 0, 130, 130);
}

/* A number that is not a type falls back to the automatic type. */
Test(tags, typed_allocation_with_unknown_type)
{
	ut_start("mis");
	void *p = meminst_malloc_typed(10, 123456);
	cr_assert_not_null(p);
	uint32_t t = meminst_block_type(p);
	cr_assert_neq(t, 123456);
	cr_assert_neq(t, 0);
	cr_assert_eq(alloc_type_class(t), ut_exe_class());
	alloc_core_free(p, 0);
}

/* ------------------------------------------------------------- scopes --- */

static uint32_t tag_alloc_type(unsigned site)
{
	void *p = alloc_core_malloc(8, ALLOC_A_MALLOC, ut_site(site), 0);
	uint32_t t = meminst_block_type(p);
	alloc_core_free(p, ut_site(site));
	return t;
}

Test(tags, scopes_nest)
{
	ut_start("mis");
	int cls = meminst_class_register("scoped");
	meminst_type_t outer = meminst_type_register("outer", cls);
	meminst_type_t inner = meminst_type_register("inner", cls);
	meminst_type_t other = meminst_type_register("other", cls);
	uint32_t automatic = tag_alloc_type(50);
	cr_assert(automatic && automatic != outer && automatic != inner);

	meminst_type_t prev0 = meminst_type_push(outer);
	cr_assert_eq(prev0, MEMINST_TYPE_AUTO);
	cr_assert_eq(tag_alloc_type(50), outer);
	meminst_type_t prev1 = meminst_type_push(inner);
	cr_assert_eq(prev1, outer);
	cr_assert_eq(tag_alloc_type(50), inner);
	void *p = meminst_malloc_typed(8, other);
	cr_assert_eq(meminst_block_type(p), other, "an explicit type beats the scope");
	alloc_core_free(p, 0);
	cr_assert_eq(meminst_type_push(999999), inner, "an unknown type is not pushed");
	cr_assert_eq(tag_alloc_type(50), inner);
	meminst_type_pop(prev1);
	cr_assert_eq(tag_alloc_type(50), outer);
	meminst_type_pop(prev0);
	cr_assert_eq(tag_alloc_type(50), automatic);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, outer, 0, 0);
	cr_assert_eq(ut_peek(MEMINST_STATUS_TYPES, outer).blocks.max_ever, 1);
	cr_assert_eq(ut_peek(MEMINST_STATUS_TYPES, inner).blocks.max_ever, 1);
}

Test(tags, scope_macro_ends_with_the_block)
{
	ut_start("mis");
	meminst_type_t t = meminst_type_register("macro", meminst_class_register("m"));
	{
		MEMINST_TYPE_SCOPE(t);
		cr_assert_eq(tag_alloc_type(51), t);
	}
	cr_assert_eq(tag_alloc_type(51), alloc_type_of_site(ut_site(51)));
}

/* ------------------------------------------------------ automatic types -- */

Test(tags, automatic_types_are_sites)
{
	ut_start("mim");
	void *a = alloc_core_malloc(16, ALLOC_A_MALLOC, ut_site(60), 0);
	void *b = alloc_core_malloc(16, ALLOC_A_MALLOC, ut_site(61), 0);
	void *c = alloc_core_malloc(16, ALLOC_A_MALLOC, ut_site(60), 0);
	uint32_t ta = meminst_block_type(a), tb = meminst_block_type(b);
	cr_assert(ta && tb);
	cr_assert_neq(ta, tb, "two sites, two types");
	cr_assert_eq(meminst_block_type(c), ta, "one site, one type");
	cr_assert_eq(alloc_type_of_site(ut_site(61)), tb);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, ta, 32, 2);
	UT_EXPECT_CUR(MEMINST_STATUS_TYPES, tb, 16, 1);

	struct meminst_status_info e = ut_read(MEMINST_STATUS_TYPES, tb);
	cr_assert_eq(e.site, ut_site(61));
	cr_assert_eq(e.class_no, ut_exe_class());
	alloc_core_free(a, 0);
	alloc_core_free(b, 0);
	alloc_core_free(c, 0);
}

/*
** An automatic type's class is the module of its site, named by its file.
** For the executable, dladdr gives argv[0] (glibc's _dl_argv[0]), which
** Criterion's worker sets to "boxfort-worker"; either name will do.
*/
Test(tags, automatic_class_is_the_module)
{
	char exe[512];
	ut_start("mis");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	cr_assert_gt(n, 0);
	exe[n] = 0;
	uint32_t cls = ut_exe_class();
	const char *name = ut_read(MEMINST_STATUS_CLASSES, cls).name;
	const char *arg0 = strrchr(program_invocation_name, '/');
	arg0 = arg0 ? arg0 + 1 : program_invocation_name;
	cr_assert(strcmp(name, strrchr(exe, '/') + 1) == 0 || strcmp(name, arg0) == 0,
		  "class of the executable is named '%s', not '%s' or '%s'", name,
		  strrchr(exe, '/') + 1, arg0);
	/* a site in libc lands in another class */
	uint32_t libc = alloc_type_class(alloc_type_of_site((uintptr_t)&strlen));
	cr_assert_neq(libc, cls);
	cr_assert_neq(libc, 0);
	cr_assert(strstr(ut_read(MEMINST_STATUS_CLASSES, libc).name, "libc"));
	/* and an address in no module is class 0, "unknown" */
	cr_assert_eq(alloc_type_class(alloc_type_of_site(0x10)), 0);
}

/* Thousands of sites: the site table grows without losing one. */
Test(tags, many_sites)
{
	enum { N = 10000 };
	ut_start("mis");
	uintptr_t base = ut_site(0);
	static uint32_t types[N];
	for (unsigned i = 0; i < N; i++)
		types[i] = alloc_type_of_site(base + 1 + i);
	for (unsigned i = 0; i < N; i++) {
		cr_assert_eq(alloc_type_of_site(base + 1 + i), types[i], "site %u", i);
		if (i)
			cr_assert_eq(types[i], types[i - 1] + 1, "site %u: types not in order of first use", i);
	}
}
