/*
** alloc_libc.c — three functions of libc's that libmeminst has its own
** copies of, hidden: only libmeminst's code (SQLite's included) calls them;
** the program keeps libc's.
**
** Why: file pages come into the resident set in 64 KiB windows around each
** fault (fault-around), and each of these was the only code a snapshot
** store runs in its window of libc: SQLite's strcspn and fortified memcpy
** (Debian builds libsqlite3.a with _FORTIFY_SOURCE), and the yield of
** meminst's spin waits, which a program thread meets while a capture holds
** its list.  Each made another 64 kB of libc resident while the heap is at
** its peak (bench/RESULTS.md, issue 29, helper rss41).  They are small and
** not hot: a store's strcspn scans a few short strings (SQL text).
*/
#include "alloc_int.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

size_t strcspn(const char *s, const char *reject)
{
	size_t n = 0;
	for (; s[n]; n++)
		for (const char *r = reject; *r; r++)
			if (s[n] == *r)
				return n;
	return n;
}

/* glibc's contract: the copy fits the destination's known size, else the
** process stops (glibc's __chk_fail says "buffer overflow detected"). */
void *__memcpy_chk(void *dest, const void *src, size_t len, size_t destlen)
{
	if (len > destlen)
		abort();
	return memcpy(dest, src, len);
}

#if defined(__x86_64__)
/* the system call itself, as libc's does (through meminst's raw path, whose
** code runs anyway; alloc_seccomp.c) */
int sched_yield(void)
{
	return (int)alloc_seccomp_raw(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}
#endif
