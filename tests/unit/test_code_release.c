/*
** test_code_release.c — alloc_sys_code_release (alloc/alloc_sys.c), which
** a store ends with: the never-written segments of the object that holds
** it (in libmeminst, its code with SQLite's and its read-only data; here
** this test program, into which the core and SQLite are linked) leave the
** process's page tables, and come back from the page cache when used.
**   - every page of the code read: its resident part is most of it; after
**     the release a small part (what ran since), and the code still runs;
**   - the written segment (.data) keeps its contents.
*/
#include <criterion/criterion.h>

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc_int.h"

extern const ElfW(Ehdr) __ehdr_start;

/* The executable segment of this program: [lo, hi). */
static void code_range(uintptr_t *lo, uintptr_t *hi)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)&__ehdr_start + __ehdr_start.e_phoff);
	*lo = *hi = 0;
	for (unsigned i = 0; i < __ehdr_start.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*lo = (uintptr_t)&__ehdr_start + ph[i].p_vaddr;
			*hi = *lo + ph[i].p_memsz;
		}
}

/* Resident kB of the mapping that starts at or holds lo (smaps). */
static long resident_kb(uintptr_t lo)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kb = -1;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo >= a && lo < b;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

static int written = 12345; /* .data: a release must not take it back to the file's */

Test(code_release, the_code_leaves_the_resident_set_and_runs_again)
{
	uintptr_t lo, hi;
	code_range(&lo, &hi);
	cr_assert_gt(hi - lo, 512 * 1024, "the code is %lu bytes", (unsigned long)(hi - lo));
	unsigned sum = 0;
	for (uintptr_t p = lo & ~(uintptr_t)4095; p < hi; p += 4096)
		sum += *(volatile const unsigned char *)p;
	written = 678;
	long all = resident_kb(lo);
	cr_assert_gt(all, (long)((hi - lo) / 1024) * 3 / 4, "%ld kB resident after reading it all", all);
	alloc_sys_code_release();
	long after = resident_kb(lo);
	cr_assert_lt(after, all / 2, "%ld kB resident after the release (%ld before)", after, all);
	cr_assert_eq(written, 678);
	char buf[32]; /* code of the core runs as before */
	alloc_fmt(buf, sizeof buf, "%d", 42 + (int)(sum & 0));
	cr_assert_str_eq(buf, "42");
}
