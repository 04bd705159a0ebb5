/*
** fuzz_options.c — libFuzzer target for the MEMINST parser
** (alloc_options_parse and alloc_options_unsupported, alloc/alloc_options.c).
**
** The parser runs on the first malloc of every instrumented process, on a
** string the user controls, so any crash or overread there takes the user's
** program down before main.  Each input is one MEMINST value: it is cut at
** its first NUL and copied into a heap buffer of exactly that length plus
** the NUL, so ASan sees any read past the terminator.  Beyond "no crash",
** every input checks the parser's contract:
**   - it returns 0 or -1;
**   - on -1 the message is one non-empty line starting with "bad MEMINST"
**     that fits the library's ALLOC_OPTIONS_ERRMAX buffer uncut, and the
**     caller's struct is left byte for byte as it was;
**   - on 0 the strings it hands back point inside the value (or are the
**     built-in default path) and the enums are in range;
**   - with a short error buffer it never writes past errlen and still
**     terminates the message, and gives the same answer.
** alloc_options_unsupported is then run on every accepted value with the
** same checks on its message (which starts with "MEMINST").
**
** Built by `make check-fuzz` (tests/fuzz/Makefile.inc) from this file,
** alloc/alloc_options.c and alloc/alloc_sys.c.  alloc_sys.c's dladdr
** wrapper needs the recursion guard's TLS, and its table lock the wait of
** a lock held by a copied parent (alloc_clone_yield, alloc/alloc_exit.c);
** both are defined below so that none of the rest of the library is
** linked in.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"

/* alloc_sys_describe's guard; nothing here runs under an interposer. */
__thread alloc_tls_t alloc_tls ALLOC_TLS_MODEL;

/* table_lock's wait; the parser maps no table, and this is one thread. */
void alloc_clone_yield(unsigned turn)
{
	(void)turn;
}

#define FZ_CHECK(cond, ...)                                                   \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "fuzz_options: %s: ", #cond);         \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			abort();                                              \
		}                                                             \
	} while (0)

/* Bytes written after the message's end must stay as they were. */
#define FZ_CANARY 0xc5
#define FZ_SHORT 24

/* A message: non-empty, one line, NUL-terminated within len, with prefix. */
static void fz_check_message(const char *err, size_t len, const char *prefix,
			     const char *value)
{
	size_t n = strnlen(err, len);
	FZ_CHECK(n < len, "message not terminated for '%s'", value);
	FZ_CHECK(n > 0, "empty message for '%s'", value);
	FZ_CHECK(!memchr(err, '\n', n),
		 "message for '%s' is not one line: %s", value, err);
	FZ_CHECK(strncmp(err, prefix, strlen(prefix)) == 0,
		 "message for '%s' lacks \"%s\": %s", value, prefix, err);
}

/* A string option must lie inside the value, or be the default path. */
static void fz_check_span(const char *p, size_t n, const char *value, size_t len,
			  const char *what)
{
	if (!p) {
		FZ_CHECK(n == 0, "%s: NULL with length %zu", what, n);
		return;
	}
	if (strcmp(what, "snapshot") == 0 && n == strlen(p) && strcmp(p, "meminst.%p.db") == 0 &&
	    (p < value || p >= value + len))
		return;
	FZ_CHECK(p >= value && p + n <= value + len && n > 0,
		 "%s points outside the value '%s'", what, value);
}

static void fz_check_accepted(const alloc_options_t *o, const char *value, size_t len)
{
	FZ_CHECK(o->mode == MEMINST_MODE_OFF || o->mode == MEMINST_MODE_MIS ||
		 o->mode == MEMINST_MODE_MIM, "mode %d for '%s'", (int)o->mode, value);
	FZ_CHECK(o->backend == ALLOC_BACKEND_SYSTEM || o->backend == ALLOC_BACKEND_JEMALLOC,
		 "backend %d for '%s'", o->backend, value);
	FZ_CHECK(o->snapshot_at <= 7, "snapshot_at %u for '%s'", o->snapshot_at, value);
	FZ_CHECK(o->print_kinds < 32, "print %u for '%s'", o->print_kinds, value);
	FZ_CHECK(o->peak_growth >= 1 && o->peak_growth <= 10000, "peak_growth %u", o->peak_growth);
	FZ_CHECK(o->sample_hz <= 100000, "sample %u for '%s'", o->sample_hz, value);
	fz_check_span(o->snapshot, o->snapshot_len, value, len, "snapshot");
	fz_check_span(o->trace_file, o->trace_file_len, value, len, "trace_file");
}

static void fz_check_unsupported(const alloc_options_t *o, const char *value)
{
	char err[ALLOC_OPTIONS_ERRMAX];
	memset(err, FZ_CANARY, sizeof err);
	int rc = alloc_options_unsupported(o, err, sizeof err);
	FZ_CHECK(rc == 0 || rc == -1, "unsupported returned %d for '%s'", rc, value);
	if (rc == -1)
		fz_check_message(err, sizeof err, "MEMINST ", value);
}

/*
** The library's buffer is ALLOC_OPTIONS_ERRMAX bytes: a message cut there
** loses its reason, so it must read the same with a wide buffer.
*/
static void fz_check_fits(const char *value, const char *err)
{
	alloc_options_t o;
	char wide[4 * ALLOC_OPTIONS_ERRMAX + 4096];
	alloc_options_parse(value, &o, wide, sizeof wide);
	FZ_CHECK(strcmp(err, wide) == 0, "message for '%s' cut at %d bytes: %s", value,
		 ALLOC_OPTIONS_ERRMAX, wide);
}

/* The same value with a short error buffer: same answer, no overflow. */
static void fz_check_short(const char *value, int rc_full, size_t errlen)
{
	alloc_options_t o;
	char err[FZ_SHORT + 8];
	memset(err, FZ_CANARY, sizeof err);
	int rc = alloc_options_parse(value, &o, err, errlen);
	FZ_CHECK(rc == rc_full, "errlen %zu changed the result for '%s'", errlen, value);
	for (size_t i = errlen; i < sizeof err; i++)
		FZ_CHECK((unsigned char)err[i] == FZ_CANARY, "errlen %zu: byte %zu written", errlen, i);
	if (rc == -1 && errlen > 0)
		FZ_CHECK(memchr(err, 0, errlen), "errlen %zu: message not terminated", errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = strnlen((const char *)data, size);
	char *value = malloc(len + 1);
	memcpy(value, data, len);
	value[len] = 0;

	alloc_options_t o, before;
	char err[ALLOC_OPTIONS_ERRMAX];
	memset(&o, 0xa5, sizeof o);
	memcpy(&before, &o, sizeof o);
	memset(err, FZ_CANARY, sizeof err);
	int rc = alloc_options_parse(value, &o, err, sizeof err);
	FZ_CHECK(rc == 0 || rc == -1, "returned %d for '%s'", rc, value);
	if (rc == -1) {
		fz_check_message(err, sizeof err, "bad MEMINST", value);
		fz_check_fits(value, err);
		FZ_CHECK(memcmp(&o, &before, sizeof o) == 0, "'%s' was refused but changed the options",
			 value);
	} else {
		fz_check_accepted(&o, value, len);
		fz_check_unsupported(&o, value);
	}
	fz_check_short(value, rc, size % (FZ_SHORT + 1));
	free(value);
	return 0;
}
