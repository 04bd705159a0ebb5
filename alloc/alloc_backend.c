/*
** alloc_backend.c — the allocators libmeminst sits on, and the bootstrap.
**
** Two backends fill the same table of function pointers (the shape of
** SQLite's sqlite3_mem_methods):
**   system    the next definition of malloc & co. after us in the symbol
**             search order (normally glibc), found with dlsym(RTLD_NEXT).
**   jemalloc  Debian's jemalloc, linked into libmeminst with every symbol
**             renamed to meminst_je_* at build time (see alloc/Makefile.inc),
**             so it never interposes anything and needs no dlopen: dlopen of
**             libjemalloc.so.2 fails with "cannot allocate memory in static
**             TLS block" because jemalloc uses initial-exec TLS.
**
** The bootstrap arena: dlsym itself calls calloc, and the loader or other
** libraries' constructors may call malloc before we are set up.  Until the
** backend is known, blocks come from a static bump arena; free() recognises
** them by address and never hands them to a real allocator.
*/
#include "alloc_int.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

alloc_backend_t alloc_real;
alloc_backend_t alloc_libc; /* the system allocator, whatever the backend */
bool alloc_aligned_alloc_strict;
static uintptr_t libc_heap_lo; /* the program break when we started */

/* ------------------------------------------------------- bootstrap arena -- */

char alloc_boot_arena[ALLOC_BOOT_ARENA_SIZE] __attribute__((aligned(4096)));
#define BOOT_ARENA_SIZE ALLOC_BOOT_ARENA_SIZE
#define boot_arena alloc_boot_arena
static _Atomic size_t boot_used;

/*
** Serve one block from the static arena: a 16-byte prefix holding the size,
** then the block, aligned to `align` (a power of two, at least 16).  Blocks
** are never reused.  Aborts with a clear message when the arena runs out,
** which would mean something allocates a lot before the process has started.
*/
void *alloc_boot_malloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	size_t need = size + align + 16;
	if (size > BOOT_ARENA_SIZE)
		goto full;
	size_t start = atomic_fetch_add(&boot_used, need);
	if (start + need > BOOT_ARENA_SIZE)
		goto full;
	uintptr_t user = ((uintptr_t)boot_arena + start + 16 + align - 1) & ~(uintptr_t)(align - 1);
	/* the size where a header has its meta word: with padding bits 0, no
	** header of ours, which mis's fast free (alloc_fast.c) relies on */
	((uint64_t *)user)[-1] = size;
	return (void *)user; /* .bss: already zero, so calloc is served too */
full:
	alloc_log("bootstrap arena exhausted (%u bytes) before the allocator was "
		  "resolved; cannot continue", BOOT_ARENA_SIZE);
	alloc_sys_exit(127);
}

size_t alloc_boot_size(const void *p)
{
	return (size_t)((const uint64_t *)p)[-1];
}

/* ----------------------------------------------------------- system ----- */

/*
** Resolve every function of the system backend at once.  Optional ones
** (pvalloc is gone from some libcs) get a fallback; a missing required one
** is fatal with a one-line message.  Runs with alloc_state == starting, so
** dlsym's own allocations land in the bootstrap arena.
*/
int alloc_backend_resolve_system(void)
{
	alloc_backend_t b;
	memset(&b, 0, sizeof b);
	b.name = "system";
#define RESOLVE(field, sym)                                                     \
	do {                                                                   \
		void *fn = dlsym(RTLD_NEXT, sym);                              \
		if (!fn) {                                                     \
			alloc_log("cannot find the system %s: %s", sym,        \
				  "is libmeminst loaded into a static program?"); \
			return -1;                                             \
		}                                                              \
		memcpy(&b.field, &fn, sizeof fn);                              \
	} while (0)
	RESOLVE(malloc, "malloc");
	RESOLVE(calloc, "calloc");
	RESOLVE(realloc, "realloc");
	RESOLVE(free, "free");
	RESOLVE(memalign, "memalign");
	RESOLVE(posix_memalign, "posix_memalign");
	RESOLVE(aligned_alloc, "aligned_alloc");
	RESOLVE(valloc, "valloc");
	RESOLVE(pvalloc, "pvalloc");
	RESOLVE(usable_size, "malloc_usable_size");
#undef RESOLVE
	alloc_real = alloc_libc = b;
	libc_heap_lo = (uintptr_t)sbrk(0);
	/* glibc 2.38 and later refuse an aligned_alloc whose alignment is not
	** a power of two; older ones round it up as memalign does.  Ask the
	** one we run on (its own block, freed at once; errno kept). */
	int saved_errno = errno;
	void *probe = b.aligned_alloc(24, 48);
	alloc_aligned_alloc_strict = probe == NULL;
	if (probe)
		b.free(probe);
	errno = saved_errno;
	return 0;
}

/* ------------------------------------------------- another allocator --- */

/*
** The malloc family as the program's symbol lookup sees it: each name
** found first in an object other than libmeminst (the executable, or a
** library preloaded before it) is a replacement, and a block one of ours
** made (with a header) would reach the other's free, or the other's block
** ours.  So when any name is replaced, every entry point meminst still
** receives serves the system allocator with no header, for the whole
** process (alloc_init: mode off, backend system), from the first
** allocation: this runs before any block is made.  C++'s operators alone
** (ALLOC_FAMILY_CXX) are commonly replaced on top of malloc: those keep the
** instrumentation, and only the system backend is used (blocks of the
** program's operator new reach meminst's delete, which hands blocks it did
** not make to glibc).  Returns the bit set of ALLOC_FAMILY names replaced;
** *exe: they were found in the executable, else *lib names the (first)
** library.
*/
const char *const alloc_family_names[ALLOC_FAMILY_N] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
	"operator new", "operator new[]", "operator delete", "operator delete[]",
};
static const char *const family_symbols[ALLOC_FAMILY_N] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
	"_Znwm", "_Znam", "_ZdlPv", "_ZdaPv",
};

unsigned alloc_backend_replaced(bool *exe, const char **lib)
{
	Dl_info self;
	*exe = false;
	*lib = NULL;
	/* The core without the hooks (the unit tests' link) is called
	** directly: libc's malloc first in the search order is not a rival. */
	if (!&alloc_hooks_linked)
		return 0;
	if (!dladdr((void *)&alloc_backend_replaced, &self))
		return 0;
	unsigned replaced = 0;
	for (unsigned i = 0; i < ALLOC_FAMILY_N; i++) {
		void *fn = dlsym(RTLD_DEFAULT, family_symbols[i]);
		Dl_info at;
		struct link_map *lm = NULL;
		const ElfW(Sym) *sym = NULL;
		if (!fn || !dladdr1(fn, &at, (void **)&lm, RTLD_DL_LINKMAP) || at.dli_fbase == self.dli_fbase)
			continue;
		/* An executable that takes the address of malloc without being
		** position-independent code (python3, gcc) has a canonical PLT
		** entry: the name in its table, undefined, with the PLT's address,
		** which dlsym returns.  It calls ours: not a definition. */
		if (dladdr1(fn, &at, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_shndx == SHN_UNDEF)
			continue;
		replaced |= 1u << i;
		if (lm && !lm->l_name[0])
			*exe = true;
		else if (!*lib)
			*lib = at.dli_fname;
	}
	return replaced;
}

/*
** Is [p, p + n) inside the heap of the program break?  Everything between
** the break's start and its current end is mapped (the kernel keeps it
** so), and the break only moves down by its top: so such bytes can be read
** without a probe.  (A thread shrinking the break at this very moment is
** the one case left; glibc trims only free memory at the top.)
*/
bool alloc_brk_mapped(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	return libc_heap_lo && a >= libc_heap_lo && a + n <= (uintptr_t)sbrk(0);
}

/* ------------------------------------------------- glibc's own blocks --- */

#define LIBC_HEAP_MAX (64ul << 20) /* HEAP_MAX_SIZE of a 64-bit glibc      */
#define LIBC_PREV_INUSE 1
#define LIBC_IS_MMAPPED 2
#define LIBC_NON_MAIN_ARENA 4

/*
** Is `p` a block of glibc's malloc in use that did not come through us: a
** program or library calling __libc_malloc & co., or a block made before
** we were loaded?  free hands such a block to glibc rather than calling it
** invalid.  The chunk must look to glibc as it does at free: aligned, a
** sane size, inside the main heap, a thread arena's heap or a mapping of
** its own (glibc's munmap_chunk test), and marked in use by the next
** chunk.  Every word is probed before it is read.  Anything else stays an
** invalid free, reported and ignored.
*/
bool alloc_libc_owns(const void *p)
{
	const uint64_t *h = (const uint64_t *)p - 2; /* prev_size, size */
	if (((uintptr_t)p & 15) || !alloc_readable(h, 16))
		return false;
	uint64_t size = h[1] & ~(uint64_t)7, chunk = (uintptr_t)h;
	if (size < 32 || (size & 15) || size > (1ull << 47))
		return false;
	if (h[1] & LIBC_IS_MMAPPED) {
		uint64_t block = chunk - h[0], total = h[0] + size;
		return h[0] < 4096 && !((block | total) & 4095);
	}
	if (h[1] & LIBC_NON_MAIN_ARENA) {
		const uint64_t *heap = (const uint64_t *)(chunk & ~(LIBC_HEAP_MAX - 1));
		/* heap_info: ar_ptr, prev, size (bytes in use of the heap) */
		if (!alloc_readable(heap, 24) || !heap[0] || heap[2] > LIBC_HEAP_MAX ||
		    chunk + size > (uintptr_t)heap + heap[2])
			return false;
	} else if (chunk < libc_heap_lo || chunk + size > (uintptr_t)sbrk(0)) {
		return false;
	}
	const uint64_t *next = (const uint64_t *)(chunk + size);
	return alloc_readable(next, 16) && (next[1] & LIBC_PREV_INUSE) && (next[1] & ~(uint64_t)7) >= 16;
}

/* ---------------------------------------------------------- jemalloc ---- */

#ifdef HAVE_JEMALLOC
void *meminst_je_malloc(size_t);
void *meminst_je_calloc(size_t, size_t);
void *meminst_je_realloc(void *, size_t);
void meminst_je_free(void *);
void *meminst_je_memalign(size_t, size_t);
int meminst_je_posix_memalign(void **, size_t, size_t);
void *meminst_je_aligned_alloc(size_t, size_t);
void *meminst_je_valloc(size_t);
size_t meminst_je_malloc_usable_size(void *);

/* jemalloc has no pvalloc: page-align and round the size up to pages. */
static void *je_pvalloc(size_t size)
{
	size_t page = 4096;
	size_t rounded = (size + page - 1) & ~(page - 1);
	if (rounded < size)
		return errno = ENOMEM, NULL;
	return meminst_je_memalign(page, rounded ? rounded : page);
}
#endif

/* Choose the backend.  Returns 0, or -1 with a message in err. */
int alloc_backend_load(int which, char *err, size_t errlen)
{
	if (which == ALLOC_BACKEND_SYSTEM)
		return 0; /* resolved already: off mode needs it before options */
#ifdef HAVE_JEMALLOC
	alloc_backend_t b = {
		.name = "jemalloc",
		.malloc = meminst_je_malloc,
		.calloc = meminst_je_calloc,
		.realloc = meminst_je_realloc,
		.free = meminst_je_free,
		.memalign = meminst_je_memalign,
		.posix_memalign = meminst_je_posix_memalign,
		.aligned_alloc = meminst_je_aligned_alloc,
		.valloc = meminst_je_valloc,
		.pvalloc = je_pvalloc,
		.usable_size = meminst_je_malloc_usable_size,
	};
	alloc_real = b;
	return 0;
#else
	alloc_fmt(err, errlen, "backend=jemalloc: this libmeminst was built without "
			       "jemalloc (configure --with-jemalloc)");
	return -1;
#endif
}
