/*
** alloc_unload.c — allocation sites of modules that were unloaded.
**
** Types are cached by site address: in the site table (alloc_tags.c), in
** each thread's site cache (read by the allocation fast path) and, for
** site_depth, in each thread's cache of caller chains and the table of
** modules (alloc_stack.c).  After dlclose another library may be loaded at
** the same address, and its allocations from an address that was a site of
** the closed one would be counted under that site's type.
**
** The fast path stays as it is: nothing there checks for unloads.
** Instead, libmeminst's dlclose (and its dlopen, before loading, for
** modules libc unloaded on its own) looks at the loader's count of
** unloads (dl_iterate_phdr's dlpi_subs); when it moved, the classes whose
** module is gone die, their types' sites leave the site table and every
** thread's site cache, and the site_depth caches start afresh.  A thread
** cannot be allocating from a site of a module while it is unloaded (its
** code is gone), so clearing another thread's cache entry races with
** nothing that matters: a cleared entry is a miss.
*/
#include "alloc_int.h"

#include <errno.h>
#include <link.h>
#include <string.h>
#include "meminst-hash.h"

static _Atomic unsigned long long unload_subs_seen;

/* FNV-1a of a module's path; 0 only for none (the executable). */
uint64_t alloc_name_hash(const char *name)
{
	if (!name || !*name)
		return 0;
	return meminst_fnv_str(MEMINST_FNV_START, name) | 1;
}

struct unload_list {
	alloc_loaded_t *v;
	size_t n, cap;
};

static int unload_list_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct unload_list *l = arg;
	if (l->n < l->cap) {
		alloc_loaded_t *e = &l->v[l->n];
		e->bias = info->dlpi_addr;
		e->name_hash = alloc_name_hash(info->dlpi_name);
		e->lo = UINTPTR_MAX, e->hi = 0;
		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
				continue;
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			e->lo = a < e->lo ? a : e->lo;
			e->hi = a + ph->p_memsz > e->hi ? a + ph->p_memsz : e->hi;
		}
	}
	l->n++;
	return 0;
}

/* Every thread's site cache forgets the sites of dead classes. */
static void unload_thread_caches(void)
{
	alloc_thread_lock_registry();
	for (alloc_thread_t *t = alloc_thread_first(); t; t = t->reg_next)
		for (unsigned i = 0; i < ALLOC_SITE_CACHE; i++) {
			uintptr_t site = __atomic_load_n(&t->site_cache[i].site, __ATOMIC_RELAXED);
			if (site && alloc_type_unloaded(__atomic_load_n(&t->site_cache[i].type, __ATOMIC_RELAXED)))
				__atomic_store_n(&t->site_cache[i].site, 0, __ATOMIC_RELAXED);
		}
	alloc_thread_unlock_registry();
}

/* The loaded modules, in memory of our own: *n of them (NULL: none). */
static alloc_loaded_t *unload_list_now(size_t *n, size_t *bytes)
{
	struct unload_list l = {0};
	alloc_sys_dl_iterate(unload_list_cb, &l); /* count */
	for (int tries = 0; tries < 4; tries++) {
		l.cap = l.n + 16;
		*bytes = (l.cap * sizeof *l.v + 4095) & ~(size_t)4095;
		if (!(l.v = alloc_sys_map(*bytes)))
			return NULL;
		l.n = 0;
		alloc_sys_dl_iterate(unload_list_cb, &l);
		if (l.n <= l.cap) {
			*n = l.n;
			return l.v;
		}
		alloc_sys_unmap(l.v, *bytes); /* many loaded meanwhile: again */
	}
	return NULL;
}

/*
** After a dlclose, and before a dlopen: when the loader has unloaded
** anything since the last look, forget the sites of modules that are gone.
** Normal context, none of our locks held; errno is kept.
*/
void alloc_unload_check(void)
{
	unsigned long long adds, subs;
	alloc_sys_loader_counts(&adds, &subs);
	if (subs == atomic_load_explicit(&unload_subs_seen, memory_order_relaxed))
		return;
	int saved_errno = errno;
	alloc_guard_enter(); /* a signal handler's allocation must not wait on our locks */
	size_t n = 0, bytes = 0;
	alloc_loaded_t *now = unload_list_now(&n, &bytes);
	if (now) {
		atomic_store(&unload_subs_seen, subs);
		if (alloc_tags_unloaded(now, n))
			unload_thread_caches();
		alloc_stack_unloaded(now, n);
		alloc_sys_unmap(now, bytes);
	}
	alloc_guard_exit();
	errno = saved_errno;
}
