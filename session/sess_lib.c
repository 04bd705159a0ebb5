/*
** sess_lib.c — is the library given to the launcher a libmeminst?
**
** The dynamic loader ignores a preloaded file it cannot load (one line on
** stderr, easily lost) and runs the program uninstrumented, so that a wrong
** --library would end in an empty session with exit status 0.  The launcher
** reads the file's ELF headers instead, before anything runs: a shared
** object of this machine whose SONAME is libmeminst.so.N.  Only headers
** are read; nothing of the file is loaded or run.
*/
#include "sess_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SESS_SONAME_PREFIX "libmeminst.so"

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	return off <= INT64_MAX && pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* The file offset of virtual address `va`, from the PT_LOAD headers. */
static bool file_offset(int fd, const ElfW(Ehdr) *eh, uint64_t va, uint64_t *off)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		ElfW(Phdr) ph;
		if (!read_at(fd, &ph, sizeof ph, eh->e_phoff + (uint64_t)i * eh->e_phentsize))
			return false;
		if (ph.p_type == PT_LOAD && va >= ph.p_vaddr && va - ph.p_vaddr < ph.p_filesz) {
			*off = va - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* The SONAME of the shared object open on fd, into name; false if none. */
static bool soname_of(int fd, const ElfW(Ehdr) *eh, char *name, size_t len)
{
	ElfW(Phdr) ph;
	unsigned i = 0;
	for (; i < eh->e_phnum; i++) {
		if (!read_at(fd, &ph, sizeof ph, eh->e_phoff + (uint64_t)i * eh->e_phentsize))
			return false;
		if (ph.p_type == PT_DYNAMIC)
			break;
	}
	if (i == eh->e_phnum)
		return false;
	uint64_t strtab = 0, soname = UINT64_MAX;
	for (uint64_t o = 0; o + sizeof(ElfW(Dyn)) <= ph.p_filesz; o += sizeof(ElfW(Dyn))) {
		ElfW(Dyn) d;
		if (!read_at(fd, &d, sizeof d, ph.p_offset + o) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB)
			strtab = d.d_un.d_ptr;
		else if (d.d_tag == DT_SONAME)
			soname = d.d_un.d_val;
	}
	uint64_t off;
	if (soname == UINT64_MAX || !file_offset(fd, eh, strtab, &off) || soname > UINT64_MAX - off)
		return false;
	ssize_t n = pread(fd, name, len - 1, (off_t)(off + soname));
	if (n <= 0)
		return false;
	name[n] = 0;
	return strnlen(name, (size_t)n) < (size_t)n; /* NUL-terminated within len */
}

int sess_check_library(const char *path, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	struct stat st;
	ElfW(Ehdr) eh, self;
	char name[128];
	const char *bad = NULL;
	int sfd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	bool have_self = sfd >= 0 && read_at(sfd, &self, sizeof self, 0);
	if (sfd >= 0)
		close(sfd);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		bad = "not an ELF file";
	else if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
		 (have_self && eh.e_machine != self.e_machine))
		bad = "built for another machine or word size";
	else if (eh.e_type != ET_DYN || eh.e_phentsize != sizeof(ElfW(Phdr)))
		bad = "not a shared library";
	else if (!soname_of(fd, &eh, name, sizeof name) ||
		 strncmp(name, SESS_SONAME_PREFIX, strlen(SESS_SONAME_PREFIX)) != 0)
		bad = "not a meminst library (its SONAME is not " SESS_SONAME_PREFIX ".N)";
	close(fd);
	if (bad)
		snprintf(why, len, "%s", bad);
	return bad ? -1 : 0;
}
