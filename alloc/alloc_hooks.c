/*
** alloc_hooks.c — the exported allocation API: libc's names and the C++
** operator new/delete families, written by their mangled names so that
** this file stays C.  No policy lives here: each hook checks the route,
** calls the backend directly when instrumentation is off, and otherwise
** hands the caller's address (the allocation site) to the core.
**
** Route: until alloc_init has finished, blocks come from the bootstrap
** arena; afterwards `off` goes straight to the backend and `mis`/`mim` go
** through alloc_core_*.  malloc, free, new and delete decide it with one
** load of alloc_route (see alloc_int.h); the other entry points test
** alloc_state and alloc_mode.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <malloc.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Present only where the exported hooks are linked (libmeminst.so), not in
** the core the unit tests link: alloc_backend_replaced looks for it. */
const char alloc_hooks_linked = 1;

#define SITE() ((uintptr_t)__builtin_return_address(0))
#define READY() likely(atomic_load_explicit(&alloc_state, memory_order_acquire) == 2)
/* New blocks plain: mode off, dormant, switched off (alloc_plain).  Once a
** process has been switched on, blocks with a header may be anywhere: then
** (HEADED) frees and reallocs of plain blocks go through the core's check,
** which gives glibc's blocks back to glibc (alloc_switch.c). */
#define OFF() (alloc_plain)
#define HEADED() unlikely(alloc_mode != MEMINST_MODE_OFF)
/* Plain, and no block has a header: the backend's frees and sizes as they
** are.  Plain after headers: a free or realloc may meet either kind. */
#define OFF_NEVER_HEADED() (OFF() && !HEADED())
#define OFF_AFTER_HEADED() (OFF() && HEADED())

/*
** Not started yet: start now, unless this thread is the one starting (its
** allocations, dlsym's calloc among them, come from the bootstrap arena).
** Returns true when the layer is ready.
*/
static ALLOC_NOINLINE bool hook_start(void)
{
	if (atomic_load(&alloc_state) == 0)
		alloc_init();
	return atomic_load(&alloc_state) == 2;
}

/* The first line of every hook: false means "use the bootstrap arena". */
#define STARTED() (READY() || hook_start())

/*
** <alloc> events: while trace_alloc_watch is set (exact tracing is on),
** each entry point times its body, hook_NAME, inlined into a timed twin;
** otherwise the body runs as before, after one predictable branch.  While
** only allocation sampling is on (trace_asample_on), the allocating entry
** points go to the same twin, which then just counts the bytes down
** (trace_asample_note) with no time stamps, and frees stay on the plain
** path.  SITE() is taken in the exported function, so the body gets the
** caller's address either way.
*/
#define INLINE static inline __attribute__((always_inline))

/*
** The backend's time inside a timed call (ALLOC_BACKEND adds it up): the
** tracer's ALLOC_AT record carries it, so that readers can tell the
** allocator's time from meminst's.
*/
INLINE uint64_t hook_time_begin(alloc_backend_save_t *save)
{
	uint64_t begin = trace_alloc_begin();
	alloc_backend_open(save, begin != UINT64_MAX);
	return begin;
}
#define TIMED_AT(ret, name, op, sizeexpr, blockexpr, params, args)              \
	static ALLOC_NOINLINE ret timed_##name params                            \
	{                                                                       \
		if (!trace_alloc_watch) { /* allocation sampling only */        \
			trace_asample_count(sizeexpr);                          \
			return hook_##name args;                                \
		}                                                               \
		alloc_backend_save_t t_;                                        \
		uint64_t begin_ = hook_time_begin(&t_);                         \
		ret r_ = hook_##name args;                                      \
		trace_alloc_end(begin_, op, sizeexpr, blockexpr, site, alloc_backend_close(&t_)); \
		return r_;                                                      \
	}
#define TIMED(ret, name, op, sizeexpr, params, args) TIMED_AT(ret, name, op, sizeexpr, r_, params, args)
#define ENTRY(ret, name, params, args)                                         \
	ALLOC_EXPORT ret name params                                           \
	{                                                                      \
		uintptr_t site = SITE();                                       \
		if (unlikely(trace_alloc_watch | trace_asample_on))            \
			return timed_##name args;                              \
		return hook_##name args;                                       \
	}

/* ------------------------------------------------------------ libc ----- */

/*
** The fast routes: malloc, free, new and delete read alloc_route first
** (alloc_int.h).  When it is just the mode, off calls the backend at once
** and mis/mim call their own entry point, where the mode is a constant;
** anything else (not started, tracing, sampling) takes the general path,
** the ROUTED_* function below, which tests each reason in turn.
*/
#define ROUTE() atomic_load_explicit(&alloc_route, memory_order_acquire)

INLINE void *hook_malloc(size_t size, uintptr_t site)
{
	if (!STARTED())
		return alloc_boot_malloc(size, 16);
	if (OFF())
		return ALLOC_BACKEND(alloc_real.malloc(size));
	return alloc_core_malloc(size, ALLOC_A_MALLOC, site, 0);
}
TIMED(void *, malloc, MEMINST_TALLOC_MALLOC, size, (size_t size, uintptr_t site), (size, site))
static ALLOC_NOINLINE void *routed_malloc(size_t size, uintptr_t site)
{
	if (unlikely(trace_alloc_watch | trace_asample_on))
		return timed_malloc(size, site);
	return hook_malloc(size, site);
}
ALLOC_EXPORT void *malloc(size_t size)
{
	unsigned r = ROUTE();
	if (likely(r == ALLOC_ROUTE_OFF))
		return alloc_real.malloc(size);
	if (likely(r == ALLOC_ROUTE_MIS))
		return alloc_core_malloc_mis_plain(size, SITE());
	if (likely(r == ALLOC_ROUTE_MIM))
		return alloc_core_malloc_mim_plain(size, SITE());
	return routed_malloc(size, SITE());
}

INLINE void hook_free(void *p, uintptr_t site)
{
	if (!STARTED())
		return; /* before start every block is in the arena */
	if (OFF_NEVER_HEADED()) {
		if (likely(!alloc_boot_owns(p)))
			ALLOC_BACKEND_VOID(alloc_real.free(p));
		return;
	}
	alloc_core_free(p, site);
}
static ALLOC_NOINLINE void timed_free(void *p, uintptr_t site)
{
	alloc_backend_save_t t;
	uint64_t begin = hook_time_begin(&t);
	hook_free(p, site);
	trace_alloc_end(begin, MEMINST_TALLOC_FREE, 0, NULL, site, alloc_backend_close(&t));
}
static ALLOC_NOINLINE void routed_free(void *p, uintptr_t site)
{
	if (unlikely(trace_alloc_watch))
		return timed_free(p, site);
	hook_free(p, site);
}
ALLOC_EXPORT void free(void *p)
{
	unsigned r = ROUTE();
	if (likely(r == ALLOC_ROUTE_OFF)) {
		if (likely(!alloc_boot_owns(p))) /* blocks from before the start */
			alloc_real.free(p);
		return;
	}
	if (likely(r == ALLOC_ROUTE_MIS))
		return alloc_core_free_mis(p, SITE());
	if (likely(r == ALLOC_ROUTE_MIM))
		return alloc_core_free_mim(p, SITE());
	routed_free(p, SITE());
}

INLINE void *hook_calloc(size_t n, size_t size, uintptr_t site)
{
	if (!STARTED()) {
		size_t total;
		if (__builtin_mul_overflow(n, size, &total))
			return errno = ENOMEM, NULL;
		return alloc_boot_malloc(total, 16);
	}
	if (OFF())
		return ALLOC_BACKEND(alloc_real.calloc(n, size));
	return alloc_core_calloc(n, size, site, 0);
}
TIMED(void *, calloc, MEMINST_TALLOC_CALLOC, n * size, (size_t n, size_t size, uintptr_t site),
      (n, size, site))
ENTRY(void *, calloc, (size_t n, size_t size), (n, size, site))

/* realloc of an arena block in off mode, or any realloc before start. */
static ALLOC_NOINLINE void *hook_realloc_boot(void *p, size_t size)
{
	void *n = malloc(size);
	if (n && p) {
		size_t old = alloc_boot_size(p);
		memcpy(n, p, old < size ? old : size);
	}
	return n;
}

INLINE void *hook_realloc(void *p, size_t size, uintptr_t site)
{
	if (!STARTED())
		return hook_realloc_boot(p, size);
	if (OFF_AFTER_HEADED())
		return alloc_switch_realloc_plain(p, size, site);
	if (OFF())
		return unlikely(alloc_boot_owns(p)) ? hook_realloc_boot(p, size)
						    : ALLOC_BACKEND(alloc_real.realloc(p, size));
	return alloc_core_realloc(p, size, ALLOC_A_REALLOC, site, 0);
}
TIMED(void *, realloc, MEMINST_TALLOC_REALLOC, size, (void *p, size_t size, uintptr_t site),
      (p, size, site))
ENTRY(void *, realloc, (void *p, size_t size), (p, size, site))

INLINE void *hook_reallocarray(void *p, size_t n, size_t size, uintptr_t site)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return errno = ENOMEM, NULL;
	return hook_realloc(p, total, site);
}
TIMED(void *, reallocarray, MEMINST_TALLOC_REALLOC, n * size,
      (void *p, size_t n, size_t size, uintptr_t site), (p, n, size, site))
ENTRY(void *, reallocarray, (void *p, size_t n, size_t size), (p, n, size, site))

/* ---------------------------------------------------------- aligned ---- */

static bool hook_pow2(size_t a) { return a && !(a & (a - 1)); }

INLINE int hook_posix_memalign(void **out, size_t align, size_t size, uintptr_t site)
{
	if (!hook_pow2(align) || align % sizeof(void *))
		return EINVAL;
	if (STARTED() && OFF())
		return ALLOC_BACKEND(alloc_real.posix_memalign(out, align, size));
	int saved_errno = errno;
	void *p = READY() ? alloc_core_aligned(align, size, ALLOC_A_ALIGNED, site)
			  : alloc_boot_malloc(size, align);
	/* glibc's leaves its failed allocation's ENOMEM in errno, and a
	** program's perror after it says so: only a success keeps errno */
	if (!p)
		return errno = ENOMEM, ENOMEM;
	errno = saved_errno;
	*out = p;
	return 0;
}
TIMED_AT(int, posix_memalign, MEMINST_TALLOC_ALIGNED, size, r_ ? NULL : *out,
	 (void **out, size_t align, size_t size, uintptr_t site), (out, align, size, site))
ENTRY(int, posix_memalign, (void **out, size_t align, size_t size), (out, align, size, site))

INLINE void *hook_memalign(size_t align, size_t size, uintptr_t site)
{
	if (STARTED() && OFF())
		return ALLOC_BACKEND(alloc_real.memalign(align, size));
	if (align > SIZE_MAX / 2 + 1)
		return errno = EINVAL, NULL;
	if (!hook_pow2(align)) /* glibc rounds a bad alignment up */
		align = align <= 16 ? 16 : (size_t)1 << (64 - __builtin_clzll(align));
	if (!READY())
		return alloc_boot_malloc(size, align);
	return alloc_core_aligned(align, size, ALLOC_A_ALIGNED, site);
}
TIMED(void *, memalign, MEMINST_TALLOC_ALIGNED, size, (size_t align, size_t size, uintptr_t site),
      (align, size, site))
ENTRY(void *, memalign, (size_t align, size_t size), (align, size, site))

/*
** aligned_alloc follows the glibc the program runs on: from 2.38 on, an
** alignment that is not a power of two is refused (EINVAL); before, it is
** rounded up as memalign does.  Which one is probed at start
** (alloc_aligned_alloc_strict, alloc_backend.c).
*/
INLINE void *hook_aligned_alloc(size_t align, size_t size, uintptr_t site)
{
	if (!STARTED())
		return hook_pow2(align) ? alloc_boot_malloc(size, align) : (errno = EINVAL, NULL);
	if (!hook_pow2(align))
		return alloc_aligned_alloc_strict ? (errno = EINVAL, NULL)
						  : hook_memalign(align, size, site);
	if (OFF())
		return ALLOC_BACKEND(alloc_real.aligned_alloc(align, size));
	return alloc_core_aligned(align, size, ALLOC_A_ALIGNED, site);
}
TIMED(void *, aligned_alloc, MEMINST_TALLOC_ALIGNED, size, (size_t align, size_t size, uintptr_t site),
      (align, size, site))
ENTRY(void *, aligned_alloc, (size_t align, size_t size), (align, size, site))

INLINE void *hook_valloc(size_t size, uintptr_t site)
{
	if (STARTED() && OFF())
		return ALLOC_BACKEND(alloc_real.valloc(size));
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (!READY())
		return alloc_boot_malloc(size, page);
	return alloc_core_aligned(page, size, ALLOC_A_VALLOC, site);
}
TIMED(void *, valloc, MEMINST_TALLOC_ALIGNED, size, (size_t size, uintptr_t site), (size, site))
ENTRY(void *, valloc, (size_t size), (size, site))

INLINE void *hook_pvalloc(size_t size, uintptr_t site)
{
	if (STARTED() && OFF())
		return ALLOC_BACKEND(alloc_real.pvalloc(size));
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded = (size + page - 1) & ~(page - 1);
	if (rounded < size)
		return errno = ENOMEM, NULL;
	if (!READY())
		return alloc_boot_malloc(rounded ? rounded : page, page);
	return alloc_core_aligned(page, rounded ? rounded : page, ALLOC_A_VALLOC, site);
}
TIMED(void *, pvalloc, MEMINST_TALLOC_ALIGNED, size, (size_t size, uintptr_t site), (size, site))
ENTRY(void *, pvalloc, (size_t size), (size, site))

ALLOC_EXPORT size_t malloc_usable_size(void *p)
{
	if (!STARTED() || alloc_boot_owns(p))
		return p && alloc_boot_owns(p) ? alloc_boot_size(p) : 0;
	if (OFF_NEVER_HEADED())
		return p ? alloc_real.usable_size(p) : 0;
	return alloc_core_usable_size(p);
}

/* ----------------------------------------------------------- C++ ------- */

/*
** operator new must call the new-handler and throw std::bad_alloc when it
** cannot allocate; that is C++ we do not want in this library.  On failure
** we call the next definition of the same operator (libstdc++'s), which
** retries through malloc — us again — runs the handler, and throws.
*/
static ALLOC_NOINLINE void *hook_new_failed(const char *mangled, size_t size, size_t align)
{
	void *fn = dlsym(RTLD_NEXT, mangled);
	if (!fn) {
		alloc_log("operator new(%zu) failed and %s cannot be found to throw", size, mangled);
		abort();
	}
	if (align) {
		void *(*f)(size_t, size_t);
		memcpy(&f, &fn, sizeof f);
		return f(size, align);
	}
	void *(*f)(size_t);
	memcpy(&f, &fn, sizeof f);
	return f(size);
}

/*
** The nothrow forms run the new-handler too (libstdc++'s calls the throwing
** operator and catches): a program whose handler frees a reserve gets its
** block on the retry.  On failure we call libstdc++'s nothrow operator,
** which does that and answers NULL; without one, NULL as before.
*/
static ALLOC_NOINLINE void *hook_new_nothrow_failed(const char *mangled, size_t size, size_t align,
						    const void *nt)
{
	void *fn = dlsym(RTLD_NEXT, mangled);
	if (!fn)
		return NULL;
	if (align) {
		void *(*f)(size_t, size_t, const void *);
		memcpy(&f, &fn, sizeof f);
		return f(size, align, nt);
	}
	void *(*f)(size_t, const void *);
	memcpy(&f, &fn, sizeof f);
	return f(size, nt);
}

INLINE void *hook_new_body(size_t size, unsigned allocator, uintptr_t site)
{
	if (!STARTED())
		return alloc_boot_malloc(size, 16);
	if (OFF())
		return ALLOC_BACKEND(alloc_real.malloc(size));
	return alloc_core_malloc(size, allocator, site, 0);
}

INLINE void *hook_new_aligned_body(size_t size, size_t align, unsigned allocator,
				  uintptr_t site)
{
	if (!hook_pow2(align))
		return NULL;
	if (!STARTED())
		return alloc_boot_malloc(size, align);
	if (OFF())
		return ALLOC_BACKEND(alloc_real.memalign(align, size));
	return alloc_core_aligned(align, size, allocator, site);
}

INLINE void hook_delete_body(void *p, uintptr_t site)
{
	hook_free(p, site);
}

static ALLOC_NOINLINE void *timed_new(size_t size, size_t align, unsigned allocator, uintptr_t site)
{
	if (!trace_alloc_watch) { /* allocation sampling only */
		trace_asample_count(size);
		return align ? hook_new_aligned_body(size, align, allocator, site)
			     : hook_new_body(size, allocator, site);
	}
	alloc_backend_save_t t;
	uint64_t begin = hook_time_begin(&t);
	void *p = align ? hook_new_aligned_body(size, align, allocator, site)
			: hook_new_body(size, allocator, site);
	trace_alloc_end(begin, MEMINST_TALLOC_NEW, size, p, site, alloc_backend_close(&t));
	return p;
}

static ALLOC_NOINLINE void timed_delete(void *p, uintptr_t site)
{
	alloc_backend_save_t t;
	uint64_t begin = hook_time_begin(&t);
	hook_delete_body(p, site);
	trace_alloc_end(begin, MEMINST_TALLOC_DELETE, 0, NULL, site, alloc_backend_close(&t));
}

static ALLOC_NOINLINE void *routed_new(size_t size, unsigned allocator, uintptr_t site)
{
	if (unlikely(trace_alloc_watch | trace_asample_on))
		return timed_new(size, 0, allocator, site);
	return hook_new_body(size, allocator, site);
}

INLINE void *hook_new(size_t size, unsigned allocator, uintptr_t site)
{
	unsigned r = ROUTE();
	if (likely(r == ALLOC_ROUTE_OFF))
		return alloc_real.malloc(size);
	if (likely(r == ALLOC_ROUTE_MIS))
		return alloc_core_malloc_mis(size, allocator, site);
	if (likely(r == ALLOC_ROUTE_MIM))
		return alloc_core_malloc_mim(size, allocator, site);
	return routed_new(size, allocator, site);
}

INLINE void *hook_new_aligned(size_t size, size_t align, unsigned allocator, uintptr_t site)
{
	if (unlikely(trace_alloc_watch | trace_asample_on) && hook_pow2(align))
		return timed_new(size, align, allocator, site);
	return hook_new_aligned_body(size, align, allocator, site);
}

static ALLOC_NOINLINE void routed_delete(void *p, uintptr_t site)
{
	if (unlikely(trace_alloc_watch))
		return timed_delete(p, site);
	hook_delete_body(p, site);
}

INLINE void hook_delete(void *p, uintptr_t site)
{
	unsigned r = ROUTE();
	if (likely(r == ALLOC_ROUTE_OFF)) {
		if (likely(!alloc_boot_owns(p)))
			alloc_real.free(p);
		return;
	}
	if (likely(r == ALLOC_ROUTE_MIS))
		return alloc_core_free_mis(p, site);
	if (likely(r == ALLOC_ROUTE_MIM))
		return alloc_core_free_mim(p, site);
	routed_delete(p, site);
}

#define NEW_THROWING(mangled, allocator)                                       \
	ALLOC_EXPORT void *mangled(size_t size)                                \
	{                                                                      \
		void *p = hook_new(size, allocator, SITE());                   \
		return likely(p) ? p : hook_new_failed(#mangled, size, 0);     \
	}
#define NEW_NOTHROW(mangled, allocator)                                        \
	ALLOC_EXPORT void *mangled(size_t size, const void *nothrow)           \
	{                                                                      \
		void *p = hook_new(size, allocator, SITE());                   \
		return likely(p) ? p                                           \
				 : hook_new_nothrow_failed(#mangled, size, 0, nothrow); \
	}
#define NEW_ALIGNED(mangled, allocator)                                        \
	ALLOC_EXPORT void *mangled(size_t size, size_t align)                  \
	{                                                                      \
		void *p = hook_new_aligned(size, align, allocator, SITE());    \
		return likely(p) ? p : hook_new_failed(#mangled, size, align); \
	}
#define NEW_ALIGNED_NOTHROW(mangled, allocator)                                \
	ALLOC_EXPORT void *mangled(size_t size, size_t align, const void *nt)  \
	{                                                                      \
		void *p = hook_new_aligned(size, align, allocator, SITE());    \
		return likely(p) ? p                                           \
				 : hook_new_nothrow_failed(#mangled, size, align, nt); \
	}
#define DELETE_1(mangled)                                                      \
	ALLOC_EXPORT void mangled(void *p) { hook_delete(p, SITE()); }
#define DELETE_2(mangled, T)                                                   \
	ALLOC_EXPORT void mangled(void *p, T x)                                \
	{                                                                      \
		(void)x;                                                       \
		hook_delete(p, SITE());                                        \
	}
#define DELETE_3(mangled, T, U)                                                \
	ALLOC_EXPORT void mangled(void *p, T x, U y)                           \
	{                                                                      \
		(void)x, (void)y;                                              \
		hook_delete(p, SITE());                                        \
	}

NEW_THROWING(_Znwm, ALLOC_A_NEW)                 /* new(size_t)                 */
NEW_THROWING(_Znam, ALLOC_A_NEW_ARRAY)           /* new[](size_t)               */
NEW_NOTHROW(_ZnwmRKSt9nothrow_t, ALLOC_A_NEW)    /* new(size_t, nothrow)        */
NEW_NOTHROW(_ZnamRKSt9nothrow_t, ALLOC_A_NEW_ARRAY)
NEW_ALIGNED(_ZnwmSt11align_val_t, ALLOC_A_NEW)   /* new(size_t, align_val_t)    */
NEW_ALIGNED(_ZnamSt11align_val_t, ALLOC_A_NEW_ARRAY)
NEW_ALIGNED_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t, ALLOC_A_NEW)
NEW_ALIGNED_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t, ALLOC_A_NEW_ARRAY)

DELETE_1(_ZdlPv)                                 /* delete(void*)               */
DELETE_1(_ZdaPv)                                 /* delete[](void*)             */
DELETE_2(_ZdlPvm, size_t)                        /* delete(void*, size_t)       */
DELETE_2(_ZdaPvm, size_t)
DELETE_2(_ZdlPvRKSt9nothrow_t, const void *)     /* delete(void*, nothrow)      */
DELETE_2(_ZdaPvRKSt9nothrow_t, const void *)
DELETE_2(_ZdlPvSt11align_val_t, size_t)          /* delete(void*, align_val_t)  */
DELETE_2(_ZdaPvSt11align_val_t, size_t)
DELETE_3(_ZdlPvmSt11align_val_t, size_t, size_t) /* delete(void*, size_t, al)   */
DELETE_3(_ZdaPvmSt11align_val_t, size_t, size_t)
DELETE_3(_ZdlPvSt11align_val_tRKSt9nothrow_t, size_t, const void *)
DELETE_3(_ZdaPvSt11align_val_tRKSt9nothrow_t, size_t, const void *)

/* ----------------------------------------------------------- dlopen ---- */

/*
** RTLD_DEEPBIND makes a library look up symbols in its own dependencies
** first, so its malloc and free bind to libc's and bypass us: a block
** crossing between it and the rest of the program would reach the wrong
** allocator.  While instrumenting, the flag is removed, with a warning
** (heaptrack does the same).  The real dlopen is reached by a tail call so
** that it still sees the original caller, whose RUNPATH it uses.  Before
** it, and after every dlclose, the sites of modules unloaded since the last
** look leave the caches, so that a library loaded where a closed one was
** has types of its own (alloc_unload.c).
*/
ALLOC_EXPORT void *dlopen(const char *file, int flags)
{
	static void *(*real_dlopen)(const char *, int);
	if (unlikely(!real_dlopen)) {
		void *fn = dlsym(RTLD_NEXT, "dlopen");
		memcpy(&real_dlopen, &fn, sizeof fn);
	}
	if (unlikely(flags & RTLD_DEEPBIND) && READY() && (!OFF() || alloc_switchable)) {
		static _Atomic int warned;
		if (!atomic_exchange(&warned, 1))
			alloc_note("dlopen(%s, RTLD_DEEPBIND): flag removed so that the library's "
				  "allocations go through meminst", file ? file : "NULL");
		flags &= ~RTLD_DEEPBIND;
	}
	if (READY() && !OFF())
		alloc_unload_check();
	return real_dlopen(file, flags);
}

ALLOC_EXPORT int dlclose(void *handle)
{
	static int (*real_dlclose)(void *);
	if (unlikely(!real_dlclose)) {
		void *fn = dlsym(RTLD_NEXT, "dlclose");
		memcpy(&real_dlclose, &fn, sizeof fn);
	}
	int r = real_dlclose(handle);
	if (READY() && !OFF())
		alloc_unload_check();
	return r;
}

/*
** pthread_exit from main: without meminst the process ends (exit(0)) when
** its last thread does, but meminst's own threads (service, trace writer,
** wall sampler) would keep it alive for ever, and, since they block every
** signal, a SIGTERM would stay pending.  So the main thread waits, after
** the program's cleanup handlers, until no thread of the program is left,
** then exits as glibc would (alloc_exit.c); while it waits it takes the
** signals meant for the process.
*/
ALLOC_EXPORT void pthread_exit(void *ret)
{
	static void (*real_exit)(void *);
	if (unlikely(!real_exit)) {
		alloc_guard_enter();
		void *fn = dlsym(RTLD_NEXT, "pthread_exit");
		alloc_guard_exit();
		memcpy(&real_exit, &fn, sizeof fn);
	}
	alloc_exit_main_leaving();
	real_exit(ret);
	__builtin_unreachable();
}

/*
** The program's mappings (alloc_region.c): the kernel is called here, as
** glibc's wrappers do, and the region is noted with the caller's address
** when the layer counts.  mmap64 is mmap on 64-bit systems.
*/
ALLOC_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return alloc_region_mmap(addr, len, prot, flags, fd, off, SITE());
}

ALLOC_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, __off64_t off)
{
	return alloc_region_mmap(addr, len, prot, flags, fd, (off_t)off, SITE());
}

ALLOC_EXPORT int munmap(void *addr, size_t len)
{
	return alloc_region_munmap(addr, len, SITE());
}

ALLOC_EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	return alloc_region_mremap(old, old_len, len, flags, new_addr, SITE());
}

/*
** The break, moved by the program itself (alloc_region_break): glibc's
** sbrk and brk do the work, so that its own idea of the break (which
** malloc's heap grows from) stays true; looked up on the first call
** (alloc_hooks_real, the set*uid hooks' too).
*/
void *alloc_hooks_real(void **fn, const char *name)
{
	void *f = __atomic_load_n(fn, __ATOMIC_ACQUIRE);
	if (unlikely(!f)) {
		int saved_errno = errno; /* the program's call may succeed: errno as it was */
		alloc_guard_enter();
		f = dlsym(RTLD_NEXT, name);
		alloc_guard_exit();
		errno = saved_errno;
		__atomic_store_n(fn, f, __ATOMIC_RELEASE);
	}
	return f;
}

ALLOC_EXPORT void *sbrk(intptr_t increment)
{
	static void *real;
	void *(*fn)(intptr_t);
	void *f = alloc_hooks_real(&real, "sbrk");
	memcpy(&fn, &f, sizeof fn);
	void *old = fn(increment);
	if (old != (void *)-1 && increment)
		alloc_region_break((uintptr_t)old, (uintptr_t)old + (uintptr_t)increment, SITE());
	return old;
}

ALLOC_EXPORT int brk(void *addr)
{
	static void *real_brk, *real_sbrk;
	int (*fn)(void *);
	void *(*now)(intptr_t);
	void *f = alloc_hooks_real(&real_brk, "brk"), *g = alloc_hooks_real(&real_sbrk, "sbrk");
	memcpy(&fn, &f, sizeof fn);
	memcpy(&now, &g, sizeof now);
	void *old = now(0); /* glibc's break: no system call, no errno */
	int rc = fn(addr);
	if (rc == 0)
		alloc_region_break((uintptr_t)old, (uintptr_t)addr, SITE());
	return rc;
}

/* unshare and setns: refused while a thread of meminst's runs beside the
** program when they need a process of one thread (alloc_service.c). */
static long hooks_unshare(long flags, long unused)
{
	static void *real;
	int (*fn)(int);
	void *f = alloc_hooks_real(&real, "unshare");
	(void)unused;
	memcpy(&fn, &f, sizeof fn);
	return fn((int)flags);
}

static long hooks_setns(long fd, long nstype)
{
	static void *real;
	int (*fn)(int, int);
	void *f = alloc_hooks_real(&real, "setns");
	memcpy(&fn, &f, sizeof fn);
	return fn((int)fd, (int)nstype);
}

ALLOC_EXPORT int unshare(int flags)
{
	return (int)alloc_service_single_threaded(hooks_unshare, flags, 0);
}

ALLOC_EXPORT int setns(int fd, int nstype)
{
	return (int)alloc_service_single_threaded(hooks_setns, fd, nstype);
}

/*
** A look at the link count of /proc/self/task ("self/task" under a
** descriptor of /proc, Chromium's way) is how a sandbox makes sure it
** runs alone: meminst's threads end first (alloc_service_alone).  The
** path's end is all the other stat calls pay.
*/
static bool hooks_own_tasks(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	if (n && path[n - 1] == '/')
		n--;
	return unlikely(n >= 9 && memcmp(path + n - 9, "self/task", 9) == 0 && (n == 9 || path[n - 10] == '/'));
}

struct stat; /* <sys/stat.h> would say path is never NULL: it may be (EFAULT) */
struct stat64;
#define HOOK_STAT(name, params, args, path)                       \
	ALLOC_EXPORT int name params                              \
	{                                                         \
		static void *real;                                \
		int(*fn) params;                                  \
		void *f = alloc_hooks_real(&real, #name);         \
		if (!f) { /* a libc without it (before 2.33) */   \
			errno = ENOSYS;                           \
			return -1;                                \
		}                                                 \
		memcpy(&fn, &f, sizeof fn);                       \
		if (hooks_own_tasks(path)) {                      \
			int saved_errno = errno;                  \
			alloc_service_alone();                    \
			errno = saved_errno;                      \
		}                                                 \
		return fn args;                                   \
	}
HOOK_STAT(fstatat, (int dirfd, const char *path, struct stat *st, int flags), (dirfd, path, st, flags), path)
HOOK_STAT(fstatat64, (int dirfd, const char *path, struct stat64 *st, int flags), (dirfd, path, st, flags), path)
HOOK_STAT(stat, (const char *path, struct stat *st), (path, st), path)
HOOK_STAT(stat64, (const char *path, struct stat64 *st), (path, st), path)

#if defined(__x86_64__)
/* The two libc ways a seccomp filter is installed (libseccomp's
** seccomp_load uses the first, or the second on kernels before 3.17): the
** filter is evaluated before it takes effect (alloc_seccomp.c).  A main
** thread leaving by the exit system call may be the program's last
** (alloc_exit.c, alloc_exit_main_raw).  unshare and setns are made again
** with meminst's threads ended when refused for them, as their libc
** names are.  meminst's own raw calls come through `syscall` too: the
** number compare is all they pay. */
ALLOC_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (unlikely(nr == SYS_seccomp))
		alloc_seccomp_before((unsigned long)a1, (unsigned long)a2, (const void *)a3, false);
	else if (unlikely(nr == SYS_unshare)) /* as unshare() (Go's runtime, raw callers) */
		return alloc_service_single_threaded(hooks_unshare, a1, 0);
	else if (unlikely(nr == SYS_setns))
		return alloc_service_single_threaded(hooks_setns, a1, a2);
	else if (unlikely(nr == SYS_exit) && READY())
		alloc_exit_main_raw((int)a1 & 0xff); /* (the exit status's byte) */
	return alloc_seccomp_raw(nr, a1, a2, a3, a4, a5, a6);
}

ALLOC_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	long a2 = va_arg(ap, long), a3 = va_arg(ap, long), a4 = va_arg(ap, long), a5 = va_arg(ap, long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		alloc_seccomp_before((unsigned long)a2, 0, (const void *)a3, true);
	return (int)alloc_seccomp_raw(SYS_prctl, option, a2, a3, a4, a5, 0);
}
#endif
