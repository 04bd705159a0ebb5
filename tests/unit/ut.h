/*
** ut.h — helpers shared by the unit tests that drive the allocation core.
**
** The test binaries link alloc/libmeminst_core.la without the exported
** hooks, so their own malloc stays glibc's and only the blocks a test makes
** through alloc_core_* are instrumented and counted.  Criterion runs each
** test in a process of its own; ut_start() switches that process's core to
** the mode and backend a test wants.
*/
#ifndef UT_H
#define UT_H

#include "config.h" /* first: it defines _GNU_SOURCE */

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdint.h>

#include "alloc_int.h"

/* Start the core with MEMINST=`meminst` (see ut.c for why this restarts). */
void ut_start(const char *meminst);

/* Counters of one entry: ut_read is a read (it resets the kind's
** max_since_last), ut_peek reads without resetting anything. */
struct meminst_status_info ut_read(enum meminst_status_kind kind, uint32_t id);
struct meminst_status_info ut_peek(enum meminst_status_kind kind, uint32_t id);

/* The n-th distinct allocation site (n < 256), an address inside the test
** executable, so its automatic type gets the executable's class. */
uintptr_t ut_site(unsigned n);

/* The class of the test executable, the module ut_site's addresses lie in
** (created on the first lookup of such a site). */
uint32_t ut_exe_class(void);

/* Capture what fn writes on fd 2 into buf (NUL-terminated). */
void ut_capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len);

/* Assert the current sizes and blocks of one entry (a macro, so that a
** failure names the caller's line). */
#define UT_EXPECT_CUR(kind, id, want_size, want_blocks)                           \
	do {                                                                     \
		struct meminst_status_info e_ = ut_peek(kind, id);               \
		cr_assert_eq(e_.sizes.current, (uint64_t)(want_size),            \
			     "%s %u: current size %llu, expected %llu", #kind,   \
			     (unsigned)(id), (unsigned long long)e_.sizes.current, \
			     (unsigned long long)(want_size));                   \
		cr_assert_eq(e_.blocks.current, (uint64_t)(want_blocks),         \
			     "%s %u: current blocks %llu, expected %llu", #kind, \
			     (unsigned)(id), (unsigned long long)e_.blocks.current, \
			     (unsigned long long)(want_blocks));                 \
	} while (0)

/* Assert one counter {current, max_since_last, max_ever}. */
#define UT_EXPECT_COUNTER(c, want_cur, want_sl, want_ever)                        \
	do {                                                                     \
		cr_assert_eq((c).current, (uint64_t)(want_cur),                  \
			     "%s.current = %llu, expected %llu", #c,             \
			     (unsigned long long)(c).current, (unsigned long long)(want_cur)); \
		cr_assert_eq((c).max_since_last, (uint64_t)(want_sl),            \
			     "%s.max_since_last = %llu, expected %llu", #c,      \
			     (unsigned long long)(c).max_since_last, (unsigned long long)(want_sl)); \
		cr_assert_eq((c).max_ever, (uint64_t)(want_ever),                \
			     "%s.max_ever = %llu, expected %llu", #c,            \
			     (unsigned long long)(c).max_ever, (unsigned long long)(want_ever)); \
	} while (0)

/* The MEMINST values a backend-parameterised test runs under. */
extern const char *const ut_modes[];
extern const int ut_nmodes;

#endif /* UT_H */
