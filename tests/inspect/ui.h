/*
** ui.h — helpers of the inspect unit tests (tests/inspect/test_*.c):
** fixture databases in a scratch directory, and running a command in
** process with its stdout and stderr captured in memory.
**
** These tests link inspect/libinsp.a and call the reader, the
** computations and the commands directly.  Criterion runs each test in a
** process of its own, so the scratch files are per test.
*/
#ifndef UI_H
#define UI_H

#include "insp_int.h"

#include <criterion/criterion.h>

#include "fx.h"

/* A database made from tests/inspect/fixtures/NAME.sql (NULL: none), with
** the given identification; returns its path (valid until the test ends). */
const char *ui_db(const char *fixture, const struct fx_opts *o);
/* The same with the right identification. */
const char *ui_fixture(const char *fixture);
/* A scratch path (no file is created). */
const char *ui_path(const char *name);

/* The output of one command run. */
struct ui_run {
	int rc;
	char *out, *err;
};

/* Run `inspect ARGS...` (NULL-terminated) in process, symbols off. */
struct ui_run ui_inspect(const char *arg, ...) __attribute__((sentinel));
void ui_free(struct ui_run *r);

/* Assert that haystack contains needle (a macro, for the caller's line). */
#define UI_HAS(hay, needle)                                                           \
	cr_assert(strstr((hay), (needle)) != NULL, "expected to find\n  %s\nin\n%s", \
		  (needle), (hay))
#define UI_HASNT(hay, needle)                                                          \
	cr_assert(strstr((hay), (needle)) == NULL, "did not expect\n  %s\nin\n%s", \
		  (needle), (hay))

#endif /* UI_H */
