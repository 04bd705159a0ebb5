/*
** criterion.h — a stand-in for the part of Criterion's API the core's
** concurrency unit tests use, for the ThreadSanitizer build of
** `make check-sanitize` only.
**
** Real Criterion cannot start under TSan: BoxFort maps its inheritable
** arena with MAP_FIXED at a random address in 0x2000'0000'0000..0x7f00'0000'0000,
** which is TSan's shadow range, and aborts with "Could not initialize
** inheritable arena" (Snaipe/Criterion#274).  This header keeps the test
** sources unchanged; crshim.c runs every test (each parameter) in a fresh
** execution of the binary, as Criterion does, and a failed assertion ends
** that process with status 1.
*/
#ifndef CRSHIM_CRITERION_H
#define CRSHIM_CRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct criterion_test_set;

struct crshim_params {
	void *items;
	size_t size, count;
};

struct crshim_test {
	const char *suite, *name;
	struct crshim_params (*params)(void); /* NULL: not parameterized */
	void (*run)(void *param);
	struct crshim_test *next;
};

void crshim_register(struct crshim_test *t);
extern void (*crshim_pre_all)(struct criterion_test_set *set);
void crshim_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define Test(suite, name, ...)                                                      \
	static void suite##_##name##_impl(void);                                   \
	static void suite##_##name##_run(void *p) { (void)p; suite##_##name##_impl(); } \
	static struct crshim_test suite##_##name##_test = {#suite, #name, NULL,     \
							  suite##_##name##_run, NULL}; \
	__attribute__((constructor)) static void suite##_##name##_reg(void)         \
	{ crshim_register(&suite##_##name##_test); }                               \
	static void suite##_##name##_impl(void)

#define ParameterizedTestParameters(suite, name)                                    \
	static struct crshim_params suite##_##name##_params(void)

#define ParameterizedTest(decl, suite, name, ...)                                   \
	static struct crshim_params suite##_##name##_params(void);                  \
	static void suite##_##name##_impl(decl);                                   \
	static void suite##_##name##_run(void *p) { suite##_##name##_impl(p); }      \
	static struct crshim_test suite##_##name##_test = {#suite, #name,            \
			suite##_##name##_params, suite##_##name##_run, NULL};       \
	__attribute__((constructor)) static void suite##_##name##_reg(void)         \
	{ crshim_register(&suite##_##name##_test); }                               \
	static void suite##_##name##_impl(decl)

#define cr_make_param_array(type, arr, n) \
	((struct crshim_params){(void *)(arr), sizeof(type), (size_t)(n)})

#define ReportHook(kind)                                                            \
	static void crshim_hook_##kind(struct criterion_test_set *);               \
	__attribute__((constructor)) static void crshim_reg_##kind(void)            \
	{ crshim_pre_all = crshim_hook_##kind; }                                   \
	static void crshim_hook_##kind

/* An optional message: a format string literal and its arguments. */
#define CRSHIM_CHECK(ok, expr, ...) crshim_check((ok), __FILE__, __LINE__, expr, "" __VA_ARGS__)
#define cr_assert(c, ...) CRSHIM_CHECK(!!(c), #c, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) CRSHIM_CHECK((a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) CRSHIM_CHECK((a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) CRSHIM_CHECK((a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) CRSHIM_CHECK((a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) CRSHIM_CHECK((a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) CRSHIM_CHECK((a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) CRSHIM_CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) CRSHIM_CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	CRSHIM_CHECK(strcmp((a), (b)) == 0, #a " equals " #b, __VA_ARGS__)

#endif
