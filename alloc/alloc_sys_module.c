/*
** alloc_sys_module.c — the loaded objects, as the runtime sees them.
**
** Where a code address lies (dladdr), a module's path and GNU build-id
** read from its program headers, and the loader's counts of objects
** loaded and unloaded.  Every dl_iterate_phdr of the runtime goes through
** trace_loader_iterate (trace_unwind.c: counted at the fork gate) or,
** for the store's calls made under the store lock, alloc_sys_dl_iterate
** here: in both the call is counted, so that a child of a raw clone can
** tell that the loader's lock may be held for ever in its copy.
** Never allocates.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
** Where a code address lies: its module's load base and path (the
** executable's from /proc/self/exe when the loader gives no name) and
** "function+0xoff (module)", or "0xoff (module)" without a symbol.  dladdr
** takes the loader's lock and may, in some libcs, allocate: call this with
** none of our locks held; it runs guarded.  Returns false when no module
** holds the address (then descr is the bare address).  *bias, when bias is
** not NULL: the module's load bias (what its ELF addresses are moved by),
** which readers need to find the site in the file once the module is
** unloaded (dlclose).
*/
bool alloc_sys_locate(uintptr_t addr, uintptr_t *base, uintptr_t *bias, char *path, size_t plen, char *descr,
		      size_t dlen)
{
	Dl_info info;
	int ok;
	alloc_guard_enter();
#ifdef __GLIBC__ /* dladdr1 and RTLD_DL_LINKMAP (an enum, not a macro) */
	struct link_map *lm = NULL;
	ok = dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP);
	if (bias)
		*bias = ok && lm ? (uintptr_t)lm->l_addr : ok ? (uintptr_t)info.dli_fbase : 0;
#else
	ok = dladdr((void *)addr, &info);
	if (bias)
		*bias = ok ? (uintptr_t)info.dli_fbase : 0;
#endif
	alloc_guard_exit();
	*base = ok ? (uintptr_t)info.dli_fbase : 0;
	path[0] = 0;
#ifdef __GLIBC__ /* dladdr1 and RTLD_DL_LINKMAP (an enum, not a macro) */
	if (ok && lm && !lm->l_name[0]) /* the executable: dladdr says argv[0] ("./app") */
		info.dli_fname = NULL;
#endif
	if (ok && info.dli_fname && info.dli_fname[0]) {
		alloc_fmt(path, plen, "%s", info.dli_fname);
	} else if (ok) {
		alloc_sys_exe_path(path, plen);
	}
	const char *mod = strrchr(path, '/');
	mod = mod ? mod + 1 : path;
	if (!ok)
		alloc_fmt(descr, dlen, "%p", (void *)addr);
	else if (info.dli_sname)
		alloc_fmt(descr, dlen, "%s+0x%lx (%s)", info.dli_sname,
			  (unsigned long)(addr - (uintptr_t)info.dli_saddr), mod);
	else
		alloc_fmt(descr, dlen, "0x%lx (%s)", (unsigned long)(addr - *base), mod);
	return ok;
}

/* "function+0xoff (module)" for a code address (see alloc_sys_locate). */
void alloc_sys_describe(uintptr_t addr, char *buf, size_t len)
{
	uintptr_t base;
	char path[256];
	alloc_sys_locate(addr, &base, NULL, path, sizeof path, buf, len);
}

/* The GNU build-id of a loaded object, from its PT_NOTE segments: its
** length (0: none), at most cap bytes of it in out.  Never allocates. */
size_t alloc_sys_build_id(const struct dl_phdr_info *info, unsigned char *out, size_t cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const char *name = p + sizeof *nh;
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && desc + nh->n_descsz <= end) {
				size_t n = nh->n_descsz < cap ? nh->n_descsz : cap;
				memcpy(out, desc, n);
				return n;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* The executable's path, from /proc/self/exe ("" when it cannot be read).
** Read once and kept: a seccomp filter may refuse readlink later
** (alloc_seccomp.c reads it before a filter comes). */
void alloc_sys_exe_path(char *path, size_t len)
{
	static char exe[4096];
	static _Atomic int state; /* 0 not read, 1 being stored, 2 kept */
	if (atomic_load_explicit(&state, memory_order_acquire) != 2) {
		char now[sizeof exe];
		ssize_t n = syscall(SYS_readlink, "/proc/self/exe", now, sizeof now - 1);
		now[n > 0 ? n : 0] = 0;
		int none = 0;
		if (n <= 0 || !atomic_compare_exchange_strong(&state, &none, 1)) {
			if (len)
				alloc_fmt(path, len, "%s", now);
			return;
		}
		memcpy(exe, now, (size_t)n + 1);
		atomic_store_explicit(&state, 2, memory_order_release);
	}
	if (len)
		alloc_fmt(path, len, "%s", exe);
}

/* A loaded object's path: the loader's name, the executable's from /proc
** (the loader gives the executable no name). */
void alloc_sys_module_path(const struct dl_phdr_info *info, char *path, size_t len)
{
	if (info->dlpi_name && info->dlpi_name[0])
		alloc_fmt(path, len, "%s", info->dlpi_name);
	else
		alloc_sys_exe_path(path, len);
}

/* Its GNU build-id in hex, "" when it has none (or len is too short). */
void alloc_sys_build_id_hex(const struct dl_phdr_info *info, char *out, size_t len)
{
	unsigned char id[64];
	size_t n = alloc_sys_build_id(info, id, sizeof id);
	out[0] = 0;
	for (size_t j = 0; j < n && 2 * j + 2 < len; j++)
		alloc_fmt(out + 2 * j, 3, "%02x", id[j]);
}

/* The loader's counts of objects loaded and unloaded so far (dlpi_adds,
** dlpi_subs): when neither moved, the set of loaded objects is the same. */
static int sys_loader_counts_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1;
}

/* The loader's lock is held inside dl_iterate_phdr: a child of a raw
** clone copied while one of our threads was in it would wait for ever at
** its next call (alloc_clone_adopt reads the count).  The calls of ours
** not counted at the fork gate (trace_loader_iterate counts the others in
** unwind_inside, which trace_unwind_clone_child reads) go through here:
** the store's, under the store lock that fork's prepare handlers take. */
static _Atomic unsigned sys_loader_inside;

int alloc_sys_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	atomic_fetch_add(&sys_loader_inside, 1);
	int rc = dl_iterate_phdr(cb, data);
	atomic_fetch_sub(&sys_loader_inside, 1);
	return rc;
}

bool alloc_sys_loader_busy(void)
{
	return atomic_load(&sys_loader_inside) != 0;
}

bool alloc_sys_loader_counts(unsigned long long *adds, unsigned long long *subs, bool may_wait)
{
	unsigned long long c[2] = {0, 0};
	if (!trace_loader_iterate(sys_loader_counts_cb, c, may_wait))
		return false;
	*adds = c[0], *subs = c[1];
	return true;
}

/* The same for a store, not counted at the fork gate: it holds the store
** lock, which fork's prepare handlers take (trace_unwind.c's comment). */
void alloc_sys_loader_counts_storing(unsigned long long *adds, unsigned long long *subs)
{
	unsigned long long c[2] = {0, 0};
	alloc_sys_dl_iterate(sys_loader_counts_cb, c);
	*adds = c[0], *subs = c[1];
}
