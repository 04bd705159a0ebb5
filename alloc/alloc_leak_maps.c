/*
** alloc_leak_maps.c — the mappings the leak check (alloc_leak.c) reads:
** /proc/self/smaps, parsed without allocating into the caller's arrays.
*/
#define _GNU_SOURCE
#include "alloc_int.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
** /proc/self/smaps: every mapping (maps, sorted as the kernel lists
** them), and the program's writable anonymous ones (anon), which are
** roots as memcheck scans every writable mapping of its client (Python's
** pymalloc arenas, a program's own pools).  Not the program's: a mapping
** made MAP_NORESERVE (VmFlags nr): meminst's own (alloc_sys_map: the
** live map, buffers, captures), glibc's arena heaps (its non-main arenas:
** free chunks are no roots), jemalloc's extents; the brk heap ([heap]:
** glibc's main arena); the main stack ([stack], scanned from its stack
** pointer).  anon_ok: meminst's mappings do read as nr (not with
** vm.overcommit_memory=2, where the kernel drops the flag).
*/
static uintptr_t leak_hex(const char **p)
{
	uintptr_t v = 0;
	for (; (**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f'); (*p)++)
		v = v * 16 + (uintptr_t)(**p <= '9' ? **p - '0' : **p - 'a' + 10);
	return v;
}

static bool leak_vmflag(const char *line, const char *flag)
{
	for (const char *p = line + 8; (p = strstr(p, flag)); p += 2)
		if (p[-1] == ' ' && (p[2] == ' ' || p[2] == 0))
			return true;
	return false;
}

/* One line of smaps; *cand: the mapping of the last header is a candidate. */
static void leak_smaps_line(alloc_leak_maps_t *k, const char *buf, const char *line, alloc_leak_vma_t *cur, int *cand)
{
	const char *p = line;
	if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) { /* lo-hi perms off dev inode name */
		cur->lo = leak_hex(&p);
		p += *p == '-';
		cur->hi = leak_hex(&p);
		if (k->nmaps < ALLOC_LEAK_MAPS_MAX && cur->hi > cur->lo)
			k->maps[k->nmaps++] = (alloc_leak_range_t){cur->lo, cur->hi};
		bool rw = p[0] == ' ' && p[1] == 'r' && p[2] == 'w';
		for (int f = 0; f < 3 && *p; f++) { /* to the inode */
			while (*p == ' ')
				p++;
			while (*p && *p != ' ')
				p++;
		}
		while (*p == ' ')
			p++;
		bool inode0 = p[0] == '0' && (p[1] == ' ' || !p[1]);
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
		bool anon = (inode0 && (!*p || !strncmp(p, "[anon", 5))) || !strncmp(p, "/dev/zero", 9) ||
			    !strncmp(p, "/SYSV", 5);
		bool own = (uintptr_t)buf >= cur->lo && (uintptr_t)buf < cur->hi;
		*cand = own ? 2 : rw && anon;
	} else if (!strncmp(p, "VmFlags:", 8)) {
		bool nr = leak_vmflag(p, "nr");
		if (*cand == 2)
			k->anon_ok = nr;
		else if (*cand && !nr && k->nanon < ALLOC_LEAK_MAPS_MAX)
			k->anon[k->nanon++] = (alloc_leak_vma_t){cur->lo, cur->hi, leak_vmflag(p, "nh")};
		*cand = 0;
	}
}

void alloc_leak_read_maps(alloc_leak_maps_t *k, char *buf, size_t size)
{
	k->nmaps = k->nanon = 0;
	k->anon_ok = false;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char line[512];
	size_t len = 0;
	long r;
	alloc_leak_vma_t cur = {0, 0, false};
	int cand = 0;
	while ((r = syscall(SYS_read, fd, buf, size)) > 0) {
		for (long i = 0; i < r; i++) {
			char c = buf[i];
			if (c != '\n') {
				if (len < sizeof line - 1)
					line[len++] = c;
				continue;
			}
			line[len] = 0;
			len = 0;
			leak_smaps_line(k, buf, line, &cur, &cand);
		}
	}
	syscall(SYS_close, fd);
}

/* The end of the mapping holding a (0: none). */
uintptr_t alloc_leak_map_end(const alloc_leak_maps_t *k, uintptr_t a)
{
	size_t lo = 0, hi = k->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->maps[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->nmaps || k->maps[lo].lo > a)
		return 0;
	return k->maps[lo].hi;
}

