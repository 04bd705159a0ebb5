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
#include "alloc_dynsym.h"
#include "../trace/trace_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
** glibc's dladdr reads every dynamic symbol of the module on each call
** (cc1 has 28,898, libbfd thousands): naming each new allocation site
** that way was 40 % of a `make` of eight files under the launcher.  Sites
** come in runs inside the same functions (cc1: 343 sites in 134), so the
** last answers are kept, each a symbol's [start, start + size) with what
** dladdr said of it, while no object has been unloaded since (the
** loader's count): dladdr names the same symbol anywhere in it, unless a
** dynamic symbol starts inside another's range (none in the code a
** compiler makes).  Taken with a try-lock: a thread never waits for it
** (and a fork child whose copy shows it held just asks dladdr).  cc1:
** 363 dladdr calls -> 260; the sites outside any dynamic symbol (108 of
** its 343) still cost a whole search each.
*/
typedef struct {
	uintptr_t lo, hi, base, bias;
	const char *sname, *fname; /* the module's strings; sname NULL: no symbol there,
				    ** fname NULL: the executable */
	unsigned long long subs;
} locate_memo_t;

/* From what the loader said (a memo entry, or dladdr's answer): what
** alloc_sys_locate says. */
static void locate_from(const locate_memo_t *e, uintptr_t addr, uintptr_t *base, uintptr_t *bias, char *path,
			size_t plen, char *descr, size_t dlen)
{
	*base = e->base;
	if (bias)
		*bias = e->bias;
	if (e->fname && e->fname[0])
		alloc_fmt(path, plen, "%s", e->fname);
	else
		alloc_sys_exe_path(path, plen);
	const char *mod = strrchr(path, '/');
	mod = mod ? mod + 1 : path;
	if (e->sname)
		alloc_fmt(descr, dlen, "%s+0x%lx (%s)", e->sname, (unsigned long)(addr - e->lo), mod);
	else
		alloc_fmt(descr, dlen, "0x%lx (%s)", (unsigned long)(addr - e->base), mod);
}

#ifdef HAVE__DL_FIND_OBJECT
#define LOCATE_MEMO 256
static locate_memo_t locate_memo[LOCATE_MEMO];
static unsigned locate_memo_next;
static _Atomic int locate_memo_busy;

static bool locate_memo_find(uintptr_t addr, unsigned long long subs, locate_memo_t *out)
{
	if (atomic_exchange_explicit(&locate_memo_busy, 1, memory_order_acquire))
		return false;
	bool found = false;
	for (unsigned i = 0; i < LOCATE_MEMO && !found; i++)
		if (addr >= locate_memo[i].lo && addr < locate_memo[i].hi && locate_memo[i].subs == subs)
			*out = locate_memo[i], found = true;
	atomic_store_explicit(&locate_memo_busy, 0, memory_order_release);
	return found;
}

static void locate_memo_put(const locate_memo_t *e)
{
	if (atomic_exchange_explicit(&locate_memo_busy, 1, memory_order_acquire))
		return;
	locate_memo[locate_memo_next++ % LOCATE_MEMO] = *e;
	atomic_store_explicit(&locate_memo_busy, 0, memory_order_release);
}

/* The object from _dl_find_object (no symbol search, no lock), the symbol
** from its index of dynamic symbols (alloc_dynsym.c) or else one dladdr1,
** kept when it has a size (a symbol of size 0 holds its own address
** only).  False when the loader knows no object there. */
static bool locate_by_object(uintptr_t addr, unsigned long long subs, locate_memo_t *e)
{
	struct dl_find_object fo;
	if (_dl_find_object((void *)addr, &fo) != 0 || !fo.dlfo_link_map)
		return false;
	const struct link_map *lm = fo.dlfo_link_map;
	const char *sname;
	uintptr_t lo, size;
	*e = (locate_memo_t){.base = (uintptr_t)fo.dlfo_map_start, .bias = (uintptr_t)lm->l_addr,
			     .fname = lm->l_name[0] ? lm->l_name : NULL, .subs = subs};
	if (!alloc_dynsym_find(lm, addr, subs, &sname, &lo, &size)) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		alloc_guard_enter();
		int ok = dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT);
		alloc_guard_exit();
		if (!ok)
			return false;
		alloc_dynsym_missed(lm, (uintptr_t)fo.dlfo_map_start, subs);
		e->base = (uintptr_t)info.dli_fbase;
		sname = info.dli_sname;
		lo = (uintptr_t)info.dli_saddr;
		size = sym ? sym->st_size : 0;
	}
	if (sname) {
		e->sname = sname;
		e->lo = lo;
		e->hi = lo + (size ? size : 1);
		if (size) /* the index's: one byte for a symbol of size 0 */
			locate_memo_put(e);
	}
	return true;
}

#endif

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
#ifdef HAVE__DL_FIND_OBJECT
	unsigned long long adds, subs;
	locate_memo_t e;
	if (alloc_sys_loader_counts(&adds, &subs, true) &&
	    (locate_memo_find(addr, subs, &e) || locate_by_object(addr, subs, &e))) {
		locate_from(&e, addr, base, bias, path, plen, descr, dlen);
		return true;
	}
#endif
	Dl_info info;
	int ok;
	alloc_guard_enter();
#ifdef __GLIBC__ /* dladdr1 and RTLD_DL_LINKMAP (an enum, not a macro) */
	struct link_map *lm = NULL;
	ok = dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP);
	bool exe = ok && lm && !lm->l_name[0]; /* dladdr says argv[0] ("./app") */
	uintptr_t load_bias = ok && lm ? (uintptr_t)lm->l_addr : ok ? (uintptr_t)info.dli_fbase : 0;
#else
	ok = dladdr((void *)addr, &info);
	bool exe = false;
	uintptr_t load_bias = ok ? (uintptr_t)info.dli_fbase : 0;
#endif
	alloc_guard_exit();
	if (!ok) {
		*base = 0;
		if (bias)
			*bias = 0;
		path[0] = 0;
		alloc_fmt(descr, dlen, "%p", (void *)addr);
		return false;
	}
	locate_memo_t said = {.base = (uintptr_t)info.dli_fbase, .bias = load_bias,
			      .fname = exe ? NULL : info.dli_fname, .sname = info.dli_sname,
			      .lo = (uintptr_t)info.dli_saddr};
	locate_from(&said, addr, base, bias, path, plen, descr, dlen);
	return true;
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
static __thread unsigned sys_loader_mine ALLOC_TLS_MODEL; /* the sampler's handler */

int alloc_sys_dl_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	atomic_fetch_add(&sys_loader_inside, 1);
	sys_loader_mine++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int rc = dl_iterate_phdr(cb, data);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sys_loader_mine--;
	atomic_fetch_sub(&sys_loader_inside, 1);
	return rc;
}

bool alloc_sys_loader_mine(void)
{
	return sys_loader_mine != 0;
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
