/*
** test_fmt.c — unit tests of alloc/alloc_sys.c: alloc_fmt, the malloc-free
** printf subset that every message and status table goes through, and
** (at the end) the SIGXFSZ pair around meminst's own writes and the
** names of code addresses (alloc_sys_describe).
**
** Each conversion is checked against a literal expected string (which is
** also what glibc's snprintf prints for it), then truncation: the output is
** cut to the buffer, always NUL-terminated, nothing is written past the
** buffer, and the return value is the length the full output wanted, as
** with snprintf.
*/
#define _GNU_SOURCE 1 /* dladdr */
#include <criterion/criterion.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc_int.h"
#include "alloc_dynsym.h"

/*
** Format with alloc_fmt and with snprintf; both must give `want`, and
** alloc_fmt must return its length.  A macro so that the arguments keep
** their types and a failure points at the line of the case.
*/
#define FMT_EQ(want, ...)                                                         \
	do {                                                                     \
		char got_[160], libc_[160];                                      \
		int n_ = alloc_fmt(got_, sizeof got_, __VA_ARGS__);              \
		snprintf(libc_, sizeof libc_, __VA_ARGS__);                      \
		cr_assert_str_eq(libc_, want, "the case itself is wrong");       \
		cr_assert_str_eq(got_, want, "alloc_fmt(%s)", #__VA_ARGS__);     \
		cr_assert_eq(n_, (int)strlen(want), "return of alloc_fmt(%s)",   \
			     #__VA_ARGS__);                                      \
	} while (0)

/* The same for cases where glibc differs or the compiler objects. */
#define FMT_OWN(want, ...)                                                        \
	do {                                                                     \
		char got_[160];                                                  \
		int n_ = alloc_fmt(got_, sizeof got_, __VA_ARGS__);              \
		cr_assert_str_eq(got_, want, "alloc_fmt(%s)", #__VA_ARGS__);     \
		cr_assert_eq(n_, (int)strlen(want), "return of alloc_fmt(%s)",   \
			     #__VA_ARGS__);                                      \
	} while (0)

Test(fmt, strings)
{
	FMT_EQ("abc", "%s", "abc");
	FMT_EQ("[abc]", "[%s]", "abc");
	FMT_EQ("     abc", "%8s", "abc");
	FMT_EQ("abc     |", "%-8s|", "abc");
	FMT_EQ("abcdef", "%2s", "abcdef");
	FMT_EQ("", "%s", "");
	const char *volatile none = NULL; /* hidden from -Wformat-overflow */
	FMT_OWN("(null)", "%s", none);
	FMT_EQ("x=Q%", "x=%c%%", 'Q');
	FMT_EQ("plain text", "plain text");
}

Test(fmt, signed)
{
	FMT_EQ("0", "%d", 0);
	FMT_EQ("-1", "%d", -1);
	FMT_EQ("2147483647", "%d", INT_MAX);
	FMT_EQ("-2147483648", "%d", INT_MIN);
	FMT_EQ("17", "%i", 17);
	FMT_EQ("   42", "%5d", 42);
	FMT_EQ("  -42", "%5d", -42);
	FMT_EQ("42   |", "%-5d|", 42);
	FMT_EQ("00042", "%05d", 42);
	FMT_EQ("123456", "%3d", 123456);
	FMT_EQ("-9223372036854775808", "%lld", LLONG_MIN);
	FMT_EQ("9223372036854775807", "%lld", LLONG_MAX);
	FMT_EQ("-5", "%ld", -5L);
}

Test(fmt, unsigned_and_hex)
{
	FMT_EQ("4294967295", "%u", UINT_MAX);
	FMT_EQ("deadbeef", "%x", 0xdeadbeefu);
	FMT_EQ("0000beef", "%08x", 0xbeefu);
	FMT_EQ("ff    |", "%-6x|", 0xffu);
	FMT_EQ("0", "%x", 0u);
	FMT_EQ("18446744073709551615", "%zu", SIZE_MAX);
	FMT_EQ("18446744073709551615", "%llu", ULLONG_MAX);
	FMT_EQ("18446744073709551615", "%lu", ULONG_MAX);
	FMT_EQ("ffffffffffffffff", "%lx", ULONG_MAX);
	FMT_EQ("     4096", "%9zu", (size_t)4096);
	FMT_EQ("000000000001", "%012llu", 1ull);
	FMT_EQ("    1024 B", "%8u B", 1024u);
}

Test(fmt, pointers_and_star_width)
{
	FMT_EQ("0x1234", "%p", (void *)0x1234);
	FMT_EQ("0x7fffdeadbee0", "%p", (void *)0x7fffdeadbee0);
	FMT_EQ("    42", "%*d", 6, 42);
	FMT_EQ("42    |", "%-*d|", 6, 42);
	FMT_EQ("no 7 name     x 3 size", "no %u %-8s x %d %s", 7u, "name", 3, "size");
}

/* Conversions outside the subset are shown, not guessed at: the arguments
** that follow stay in step. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
Test(fmt, unknown_conversion_is_shown)
{
	char buf[64];
	int n = alloc_fmt(buf, sizeof buf, "%q %d", 5);
	cr_assert_str_eq(buf, "%q 5");
	cr_assert_eq(n, 4);
	n = alloc_fmt(buf, sizeof buf, "100%");
	cr_assert_str_eq(buf, "100%");
	cr_assert_eq(n, 4);
}

Test(fmt, minus_beats_zero)
{
	FMT_OWN("42   |", "%-05d|", 42); /* as printf */
}
#pragma GCC diagnostic pop

/* ---------------------------------------------------------- truncation -- */

Test(fmt, truncates_and_terminates)
{
	char buf[16];
	memset(buf, '#', sizeof buf);
	int n = alloc_fmt(buf, 8, "%s", "hello world");
	cr_assert_eq(n, 11, "returns the wanted length");
	cr_assert_str_eq(buf, "hello w");
	for (size_t i = 8; i < sizeof buf; i++)
		cr_assert_eq(buf[i], '#', "wrote past the buffer at %zu", i);

	memset(buf, '#', sizeof buf);
	cr_assert_eq(alloc_fmt(buf, 12, "hello %s", "world"), 11);
	cr_assert_str_eq(buf, "hello world");
	cr_assert_eq(alloc_fmt(buf, 11, "hello %s", "world"), 11);
	cr_assert_str_eq(buf, "hello worl");
	cr_assert_eq(alloc_fmt(buf, 4, "%d", -123456), 7);
	cr_assert_str_eq(buf, "-12");
	cr_assert_eq(alloc_fmt(buf, 5, "%8x", 0xabcu), 8);
	cr_assert_str_eq(buf, "    ");
}

Test(fmt, tiny_buffers)
{
	char buf[4] = "###";
	cr_assert_eq(alloc_fmt(buf, 1, "%s", "abc"), 3);
	cr_assert_eq(buf[0], 0, "a one-byte buffer holds the terminator");
	cr_assert_eq(buf[1], '#');

	memcpy(buf, "###", 4);
	cr_assert_eq(alloc_fmt(buf, 0, "%d", 12345), 5, "length 0 still measures");
	cr_assert_str_eq(buf, "###", "length 0 writes nothing");
}

/* '0' padding goes after the minus sign, as printf does: "-0042". */
Test(fmt, zero_pad_negative)
{
	FMT_EQ("-0042", "%05d", -42);
}

/*
** Our write past ulimit -f inside a mask that blocks every signal (a trace
** flush's): its SIGXFSZ is taken back before the mask is restored, or the
** restore delivered it and the program died (status 153).  A SIGXFSZ the
** program had pending before stays pending.
*/
static void sys_write_past_limit(int fd)
{
	static char page[8192];
	alloc_xfsz_t x;
	alloc_sys_xfsz_block(&x);
	cr_assert_lt(pwrite(fd, page, sizeof page, 8192), 0, "the write met the limit"); /* at it: SIGXFSZ */
	alloc_sys_xfsz_restore(&x);
}

Test(sys, xfsz_under_a_full_mask)
{
	char path[] = "/tmp/meminst-xfsz.XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	struct rlimit old, small;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = (struct rlimit){.rlim_cur = 4096, .rlim_max = old.rlim_max};
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	sigset_t all, before, pending;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	sys_write_past_limit(fd);
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert(!sigismember(&pending, SIGXFSZ), "our write's SIGXFSZ taken back under a full mask");
	/* the program's own, pending before ours: left as it is */
	cr_assert_lt(pwrite(fd, "x", 1, 8192), 0, "the program's own write met the limit");
	sys_write_past_limit(fd);
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert(sigismember(&pending, SIGXFSZ), "the program's own SIGXFSZ left pending");
	sigset_t xfsz;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	cr_assert_eq(sigtimedwait(&xfsz, NULL, &(struct timespec){0, 0}), SIGXFSZ);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	close(fd);
}

/*
** A table's chunk lock held by a thread of another process (the parent of
** a fork or a raw clone, copied while it mapped a chunk) is taken over:
** that holder never lets go here.  Held by this process, it is waited for.
*/
Test(sys, table_lock_of_another_process, .timeout = 20)
{
	static alloc_table_t t = ALLOC_TABLE("test", uint64_t, 1u << 12, 4);
	atomic_store(&t.lock, (int)getppid()); /* not ours: the lock was copied held */
	cr_assert(alloc_table_ensure(&t, 100), "the chunk is mapped");
	cr_assert_eq(atomic_load(&t.lock), 0, "and the lock let go");
	cr_assert(alloc_table_ensure(&t, 101), "the same chunk: no lock taken");
}

/* dladdr's answer, in alloc_sys_locate's words */
static void sys_dladdr_descr(uintptr_t addr, char *buf, size_t len)
{
	Dl_info info;
	cr_assert(dladdr((void *)addr, &info) && info.dli_sname, "dladdr names %#lx", (unsigned long)addr);
	const char *mod = strrchr(info.dli_fname, '/');
	snprintf(buf, len, "%s+0x%lx (%s)", info.dli_sname, (unsigned long)(addr - (uintptr_t)info.dli_saddr),
		 mod ? mod + 1 : info.dli_fname);
}

/*
** Sites in one function are named from the answer kept for the first
** (alloc_sys_module.c's memo): each the same as dladdr's, the first and
** the later ones, in two functions taken in turn.
*/
Test(sys, sites_named_as_dladdr_names_them)
{
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY); /* (&qsort may be this program's PLT) */
	cr_assert(libc);
	const char *names[] = {"qsort_r", "strtod", "getaddrinfo"};
	for (int round = 0; round < 3; round++)
		for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
			uintptr_t fn = (uintptr_t)dlsym(libc, names[f]);
			Dl_info info;
			const ElfW(Sym) *sym = NULL;
			cr_assert(fn && dladdr1((void *)fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
				  sym->st_size > 8, "%s", names[f]);
			uintptr_t offs[] = {1, sym->st_size / 3, sym->st_size / 2, sym->st_size - 1};
			for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
				char got[256], want[256];
				alloc_sys_describe(fn + offs[k], got, sizeof got);
				sys_dladdr_descr(fn + offs[k], want, sizeof want);
				cr_assert_str_eq(got, want, "round %d", round);
			}
		}
}

/* libc's executable range, from its program headers. */
static int sys_libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *r = arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so.6"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			r[0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			r[1] = r[0] + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/*
** The index of an object's dynamic symbols (alloc_dynsym.c), made after a
** few of dladdr's answers in libc (2,900 symbols), answers as dladdr
** does: the same symbol, or none, at addresses all over libc's code (a
** stride of 61 bytes: starts, middles and ends of functions, the space
** between them), and at each symbol dladdr found, its start, one before,
** its last byte and its end.
*/
Test(sys, dynamic_symbol_index_names_what_dladdr_names, .timeout = 120)
{
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	struct dl_find_object fo;
	uintptr_t text[2] = {0, 0};
	unsigned long long adds, subs;
	cr_assert(libc && _dl_find_object(dlsym(libc, "qsort_r"), &fo) == 0);
	dl_iterate_phdr(sys_libc_text, text);
	cr_assert(text[0] < text[1] && alloc_sys_loader_counts(&adds, &subs, true));
	for (int i = 0; i < 16; i++)
		alloc_dynsym_missed(fo.dlfo_link_map, (uintptr_t)fo.dlfo_map_start, subs);
	size_t compared = 0, named = 0;
	for (uintptr_t a = text[0]; a < text[1]; a += 61) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		const char *name;
		uintptr_t lo, size;
		cr_assert(dladdr1((void *)a, &info, (void **)&sym, RTLD_DL_SYMENT));
		uintptr_t at[] = {a, 0, 0, 0, 0};
		if (info.dli_sname) {
			uintptr_t s = (uintptr_t)info.dli_saddr, z = sym->st_size;
			at[1] = s - 1, at[2] = s, at[3] = z ? s + z - 1 : s, at[4] = s + z;
		}
		for (size_t k = 0; k < 5 && at[k]; k++, compared++) {
			cr_assert(dladdr1((void *)at[k], &info, (void **)&sym, RTLD_DL_SYMENT));
			cr_assert(alloc_dynsym_find(fo.dlfo_link_map, at[k], subs, &name, &lo, &size),
				  "no index of libc's symbols");
			cr_assert((name == NULL) == (info.dli_sname == NULL) &&
					  (!name || (!strcmp(name, info.dli_sname) && lo == (uintptr_t)info.dli_saddr)),
				  "%#lx: %s at %#lx, dladdr's %s at %#lx", (unsigned long)at[k], name ? name : "(none)",
				  (unsigned long)lo, info.dli_sname ? info.dli_sname : "(none)",
				  (unsigned long)info.dli_saddr);
			named += name != NULL;
		}
	}
	cr_assert_gt(named, 10000, "%zu of %zu addresses named", named, compared);
}
