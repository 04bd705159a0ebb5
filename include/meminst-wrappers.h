/*
** meminst-wrappers.h — the allocation wrappers seen through by default.
**
** Internal (not installed): shared by the runtime, which skips the frames
** of these functions when it keys an allocation site (alloc_stack.c, with
** MEMINST=site_skip= adding names and site_skip=none turning the list
** off), and by the reader, which names a site inside inlined code after
** the innermost frame of the user's source that is not one of them
** (rd_symbols.c).  A name is a symbol as the object file has it; a
** trailing '*' matches every name it begins.  Each wrapper here only
** forwards a request to malloc, calloc or realloc (and reports failure),
** so the useful site is its caller.
*/
#ifndef MEMINST_WRAPPERS_H
#define MEMINST_WRAPPERS_H

#include <stdbool.h>
#include <string.h>

#define MEMINST_WRAPPERS \
	/* GLib (g_new and friends are macros over g_malloc_n …) */ \
	"g_malloc+g_malloc0+g_realloc+g_try_malloc+g_try_malloc0+g_try_realloc+g_malloc_n+g_malloc0_n+" \
	"g_realloc_n+g_try_malloc_n+g_try_malloc0_n+g_try_realloc_n+g_slice_alloc+g_slice_alloc0+" \
	"g_slice_copy+g_strdup+g_strndup+g_memdup+g_memdup2+" \
	/* the xmalloc family (gnulib, libiberty, git …) */ \
	"xmalloc+xcalloc+xrealloc+xzalloc+xnmalloc+xnrealloc+x2realloc+x2nrealloc+xreallocarray+" \
	"xstrdup+xstrndup+xmemdup+xmemdupz+xcharalloc+ximalloc+xicalloc+xizalloc+xirealloc+" \
	"xireallocarray+ximemdup+ximemdup0+xpalloc+xmallocz+xmallocz_gently+" \
	/* Perl */ \
	"Perl_safesysmalloc+Perl_safesyscalloc+Perl_safesysrealloc+" \
	/* SQLite (the internal ones when the symbols exist) */ \
	"sqlite3_malloc+sqlite3_malloc64+sqlite3_realloc+sqlite3_realloc64+sqlite3Malloc+" \
	"sqlite3MallocZero+sqlite3Realloc+sqlite3MemMalloc+sqlite3MemRealloc+sqlite3DbMallocRaw+" \
	"sqlite3DbMallocRawNN+sqlite3DbMallocZero+sqlite3DbRealloc+sqlite3DbReallocOrFree+" \
	"sqlite3DbStrDup+sqlite3DbStrNDup+dbMallocRawFinish+dbReallocFinish+" \
	/* CPython */ \
	"PyMem_Malloc+PyMem_Calloc+PyMem_Realloc+PyMem_RawMalloc+PyMem_RawCalloc+PyMem_RawRealloc+" \
	"PyObject_Malloc+PyObject_Calloc+PyObject_Realloc+_PyMem_RawMalloc+_PyMem_RawCalloc+" \
	"_PyMem_RawRealloc+_PyObject_Malloc+_PyObject_Calloc+_PyObject_Realloc+_PyMem_DebugRawAlloc+" \
	/* jq, redis, nginx, APR, talloc */ \
	"jv_mem_alloc+jv_mem_alloc_unguarded+jv_mem_calloc+jv_mem_calloc_unguarded+jv_mem_realloc+" \
	"jv_mem_strdup+jv_mem_strdup_unguarded+zmalloc*+zcalloc*+zrealloc*+ztrymalloc*+ztrycalloc*+" \
	"ztryrealloc*+zstrdup+ngx_alloc+ngx_calloc+ngx_memalign+ngx_palloc+ngx_pnalloc+ngx_pcalloc+" \
	"ngx_pmemalign+ngx_palloc_small+ngx_palloc_large+ngx_palloc_block+apr_palloc+apr_pcalloc+" \
	"apr_allocator_alloc+allocator_alloc+_talloc*+talloc_*+__talloc*+" \
	/* libc's own copies */ \
	"strdup+strndup+__strdup+__strndup+wcsdup"

/* Whether `name` is one of the '+'-joined names of list[0..len) (a name
** ending in '*': a prefix of it). */
static inline bool meminst_wrapper_in(const char *list, size_t len, const char *name)
{
	const char *v = list, *end = list + len;
	while (v < end) {
		const char *plus = memchr(v, '+', (size_t)(end - v));
		size_t n = (size_t)((plus ? plus : end) - v);
		if (n && (v[n - 1] == '*' ? strncmp(name, v, n - 1) == 0 : strncmp(name, v, n) == 0 && !name[n]))
			return true;
		v += n + 1;
	}
	return false;
}

/* Whether `name` is one of the built-in wrappers. */
static inline bool meminst_wrapper(const char *name)
{
	return meminst_wrapper_in(MEMINST_WRAPPERS, sizeof MEMINST_WRAPPERS - 1, name);
}

#endif
