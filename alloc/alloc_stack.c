/*
** alloc_stack.c — deeper allocation sites: MEMINST=…,site_depth=N|user.
**
** By default an automatic type is one return address, the call into the
** allocator.  In a C++ program that call is nearly always inside the
** standard library (std::vector<>::_M_realloc_insert, the map's
** _M_emplace_hint_unique, or libstdc++ itself), so every vector of the
** program shares one type.  site_depth=N keys the type by the first N
** return addresses; site_depth=user by the return addresses up to and
** including the first frame in the user's code: the first one neither in a
** system library (a module under /usr/lib, /lib …) nor in a function of
** namespace std or __gnu_cxx (an instantiation of a system header, found by
** its mangled name in the module's .symtab).
**
** Cost.  A site in the user's own code (an allocation the user wrote, or
** std:: code inlined into the user's function) is its own type as before:
** the thread's site cache answers and no stack is taken.  A site in system
** code asks the thread's cache of caller chains first (stack_cache_hit: the
** same site, this frame at the same address, the same return addresses in
** the stack slots learned before), which answers most allocations of a
** loop with a few compares.  On a miss the stack is walked with libunwind
** (trace_unwind.c, its per-thread cache of frame shapes): step by step,
** keeping the slots, for up to STACK_CACHED frames; else the fast walk,
** the site and its caller first, 32 frames when the caller is system code
** too.
** The symbol ranges of a module are read once, the first time one of its
** addresses is classified, and kept (memory from mmap, never the heap).
*/
#include "alloc_int.h"
#include "../trace/trace_sampler.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int alloc_site_depth;

#define STACK_MODULES_MAX 512
#define STACK_FIRST_WALK 2

/* A loaded object: its code, whether it is a system library, and the
** address ranges of its std:: and __gnu_cxx:: functions, sorted. */
typedef struct stack_module_s {
	uintptr_t lo, hi;
	bool system;
	size_t nstd;
	const uintptr_t *std; /* nstd pairs [lo, hi) */
} stack_module_t;

static stack_module_t stack_mods[STACK_MODULES_MAX];
static _Atomic size_t stack_nmods; /* published entries, read without a lock */
static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;

void alloc_stack_prefork(void) { pthread_mutex_lock(&stack_lock); }
void alloc_stack_postfork_parent(void) { pthread_mutex_unlock(&stack_lock); }
void alloc_stack_postfork_child(void) { pthread_mutex_init(&stack_lock, NULL); }

static _Atomic bool stack_unwind_ready;

/* ---------------------------------------------------------- symbols --- */

/* A mangled name in namespace std or __gnu_cxx ("_ZNSt6vector…",
** "_ZNKSt…", "_ZSt…", "_ZNSaIcE…" and the other std abbreviations). */
static bool stack_std_name(const char *n)
{
	if (strncmp(n, "_ZSt", 4) == 0)
		return true;
	if (strncmp(n, "_ZN", 3) != 0)
		return false;
	n += 3;
	while (*n == 'K' || *n == 'V' || *n == 'r' || *n == 'R' || *n == 'O')
		n++; /* cv- and ref-qualifiers of a member function */
	if (n[0] == 'S' && n[1] && strchr("tabsiod", n[1]))
		return true;
	return strncmp(n, "9__gnu_cxx", 10) == 0;
}

static void stack_sort(uintptr_t *r, size_t n) /* pairs by lo; shell sort, no heap */
{
	for (size_t gap = n / 2; gap > 0; gap /= 2)
		for (size_t i = gap; i < n; i++)
			for (size_t j = i; j >= gap && r[2 * (j - gap)] > r[2 * j]; j -= gap) {
				uintptr_t lo = r[2 * j], hi = r[2 * j + 1];
				r[2 * j] = r[2 * (j - gap)], r[2 * j + 1] = r[2 * (j - gap) + 1];
				r[2 * (j - gap)] = lo, r[2 * (j - gap) + 1] = hi;
			}
}

/* The std:: function ranges of the ELF file at path, loaded at bias. */
static void stack_read_symbols(stack_module_t *m, const char *path, uintptr_t bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	void *map = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= sizeof(ElfW(Ehdr))
			    ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
			    : MAP_FAILED;
	close(fd);
	if (map == MAP_FAILED)
		return;
	size_t size = (size_t)st.st_size;
	const char *f = map;
	const ElfW(Ehdr) *eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum)
		goto out;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
			goto out;
		const ElfW(Sym) *sym = (const void *)(f + sh[i].sh_offset);
		size_t nsym = sh[i].sh_size / sizeof *sym, n = 0;
		for (int pass = 0; pass < 2; pass++) { /* count, then fill */
			uintptr_t *r = pass ? alloc_sys_map(n * 2 * sizeof *r) : NULL;
			if (pass && !r)
				goto out;
			size_t k = 0;
			for (size_t j = 0; j < nsym; j++) {
				if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || !sym[j].st_size ||
				    !sym[j].st_value || sym[j].st_name >= strs->sh_size)
					continue;
				const char *name = f + strs->sh_offset + sym[j].st_name;
				if (memchr(name, 0, strs->sh_size - sym[j].st_name) && stack_std_name(name)) {
					if (pass)
						r[2 * k] = bias + sym[j].st_value,
						r[2 * k + 1] = bias + sym[j].st_value + sym[j].st_size;
					k++;
				}
			}
			n = k;
			if (pass) {
				stack_sort(r, n);
				m->std = r;
				m->nstd = n;
			}
			if (!n)
				break;
		}
		break;
	}
out:
	munmap(map, size);
}

/* ---------------------------------------------------------- modules --- */

struct stack_find {
	uintptr_t addr, lo, hi, bias;
	char path[256];
	bool found;
};

static int stack_find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct stack_find *q = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool in = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		in = in || (q->addr >= a && q->addr < b);
	}
	if (!in)
		return 0;
	q->lo = lo, q->hi = hi, q->bias = info->dlpi_addr, q->found = true;
	alloc_fmt(q->path, sizeof q->path, "%s", info->dlpi_name ? info->dlpi_name : "");
	return 1;
}

static bool stack_system_path(const char *p)
{
	static const char *const roots[] = {"/usr/lib/", "/lib/", "/usr/lib64/", "/lib64/", "/usr/libexec/"};
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (strncmp(p, roots[i], strlen(roots[i])) == 0)
			return true;
	return false;
}

static const stack_module_t *stack_module_find(uintptr_t addr)
{
	size_t n = atomic_load_explicit(&stack_nmods, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (addr >= stack_mods[i].lo && addr < stack_mods[i].hi)
			return &stack_mods[i];
	return NULL;
}

/* The module of addr, read and added on first sight; NULL if none. */
static const stack_module_t *stack_module(uintptr_t addr)
{
	const stack_module_t *m = stack_module_find(addr);
	if (m)
		return m;
	struct stack_find q = {.addr = addr};
	dl_iterate_phdr(stack_find_object, &q);
	if (!q.found)
		return NULL;
	pthread_mutex_lock(&stack_lock);
	m = stack_module_find(addr);
	size_t n = atomic_load(&stack_nmods);
	if (!m && n < STACK_MODULES_MAX) {
		stack_module_t *e = &stack_mods[n];
		*e = (stack_module_t){.lo = q.lo, .hi = q.hi};
		if (!q.path[0])
			alloc_fmt(q.path, sizeof q.path, "/proc/self/exe");
		/* libmeminst's own frames (its pthread_create) are not the user's */
		e->system = stack_system_path(q.path) ||
			    ((uintptr_t)&alloc_stack_type >= q.lo && (uintptr_t)&alloc_stack_type < q.hi);
		if (!e->system)
			stack_read_symbols(e, q.path, q.bias);
		atomic_store_explicit(&stack_nmods, n + 1, memory_order_release);
		m = e;
	}
	pthread_mutex_unlock(&stack_lock);
	return m;
}

/* Whether a code address is the user's: not in a system library, not in
** a std:: function.  An address in no known object counts as the user's. */
static bool stack_is_user(uintptr_t addr)
{
	const stack_module_t *m = stack_module(addr - 1); /* inside the call */
	if (!m)
		return true;
	if (m->system)
		return false;
	size_t lo = 0, hi = m->nstd;
	while (lo < hi) { /* the last range starting at or below addr - 1 */
		size_t mid = lo + (hi - lo) / 2;
		if (m->std[2 * mid] <= addr - 1)
			lo = mid + 1;
		else
			hi = mid;
	}
	return !(lo > 0 && addr - 1 < m->std[2 * (lo - 1) + 1]);
}

/* ------------------------------------------------------------ types --- */

static uint64_t stack_hash(const uint64_t *f, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001b3ull, h ^= h >> 29;
	return h | (1ull << 63);
}

/* The frames from the call into the allocator on; frames[0] == site.
** libunwind is set up by the first walk (guarded: its own allocations, if
** any, are untracked). */
static unsigned stack_walk(uintptr_t site, uint64_t *frames, unsigned max)
{
	if (!atomic_load_explicit(&stack_unwind_ready, memory_order_acquire)) {
		pthread_mutex_lock(&stack_lock);
		if (!stack_unwind_ready)
			trace_unwind_init();
		atomic_store_explicit(&stack_unwind_ready, true, memory_order_release);
		pthread_mutex_unlock(&stack_lock);
	}
	unsigned n = trace_unwind_from(site, frames, max);
	if (n)
		return n;
	/* the walk did not pass the site (a tail call into the allocator):
	** the site and the callers of the code that called it */
	n = trace_unwind_here(frames + 1, max - 1);
	frames[0] = site;
	return n + 1;
}

/* "f+0x1 (m) < g+0x2 (m) …", innermost first, as much as fits. */
static void stack_describe(const uint64_t *f, unsigned n, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	for (unsigned i = 0; i < n && o + 4 < len; i++) {
		char one[MEMINST_NAME_MAX];
		alloc_sys_describe(f[i], one, sizeof one);
		o += (size_t)alloc_fmt(out + o, len - o, "%s%s", i ? " < " : "", one);
	}
}

/*
** The thread's cache of caller chains.  The same site reached with this
** function's frame at the same address, and the same return addresses in
** the stack slots where the learning walk found them, is the same stack
** up to the cut: the type is known without a walk.  A slot that holds
** something else (another caller at the same depth) is a miss, never a
** wrong answer; the slots lie between this frame and the live callers',
** so reading them is safe.  Stacks of up to STACK_CACHED frames.
*/
#define STACK_CACHE 64
#define STACK_CACHED 4

typedef struct alloc_stack_cache_s {
	struct {
		uintptr_t site, sp;
		uint32_t type, n;            /* n: frames checked after the site */
		uint32_t off[STACK_CACHED - 1]; /* slot - sp                      */
		uint64_t ra[STACK_CACHED - 1];
	} e[STACK_CACHE];
	uint64_t hits, learned; /* learning walks are slower: see stack_learn */
} stack_cache_t;

static unsigned stack_cache_index(uintptr_t site, uintptr_t sp)
{
	return (unsigned)(((site ^ (sp >> 4)) * 0x9e3779b97f4a7c15ull) >> 58) & (STACK_CACHE - 1);
}

static bool stack_cache_hit(const stack_cache_t *c, uintptr_t site, uintptr_t sp, uint32_t *type)
{
	const __typeof__(c->e[0]) *e = &c->e[stack_cache_index(site, sp)];
	if (e->site != site || e->sp != sp || !e->type)
		return false;
	for (uint32_t k = 0; k < e->n; k++)
		if (*(const uint64_t *)(sp + e->off[k]) != e->ra[k])
			return false;
	*type = e->type;
	return true;
}

/* Keep what the walk found: frames 1..cut-1 and their slots above sp. */
static void stack_cache_put(alloc_thread_t *t, uintptr_t site, uintptr_t sp, const uint64_t *frames,
			    const uint64_t *slots, unsigned cut, uint32_t type)
{
	if (cut > STACK_CACHED)
		return;
	for (unsigned k = 1; k < cut; k++)
		if (slots[k] <= sp || slots[k] - sp > UINT32_MAX)
			return;
	__typeof__(t->stack_cache->e[0]) *e = &t->stack_cache->e[stack_cache_index(site, sp)];
	e->type = 0; /* a signal handler's allocation never sees half an entry: it is untracked */
	e->site = site, e->sp = sp, e->n = cut - 1;
	for (unsigned k = 1; k < cut; k++)
		e->off[k - 1] = (uint32_t)(slots[k] - sp), e->ra[k - 1] = frames[k];
	e->type = type;
}

/* The type of these frames, made on first sight. */
static uint32_t stack_type(const uint64_t *frames, unsigned n)
{
	uint64_t key = stack_hash(frames, n);
	uint32_t t = alloc_type_of_stack_known(key);
	if (t)
		return t;
	char descr[MEMINST_NAME_MAX];
	stack_describe(frames, n, descr, sizeof descr);
	return alloc_type_of_stack(key, frames, n, descr);
}

static uint32_t stack_type_walked(uintptr_t site, bool user);

/* Whether to walk step by step and keep the slots: while the cache pays
** (a recursive program reaches a site at ever new depths, and would learn
** for every allocation: then the fast walk is cheaper). */
static bool stack_learn(alloc_thread_t *t)
{
	if (!t)
		return false;
	if (!t->stack_cache && !(t->stack_cache = alloc_sys_map(sizeof *t->stack_cache)))
		return false;
	stack_cache_t *c = t->stack_cache;
	if (c->learned >= 256 && c->learned * 8 > c->hits)
		return false;
	c->learned++;
	return true;
}

uint32_t alloc_stack_type(alloc_thread_t *t, uintptr_t site, bool *per_site)
{
	bool user = alloc_site_depth == ALLOC_SITE_DEPTH_USER;
	*per_site = user && stack_is_user(site);
	if (*per_site)
		return alloc_type_of_site(site);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uint32_t type;
	if (t && t->stack_cache && stack_cache_hit(t->stack_cache, site, sp, &type)) {
		t->stack_cache->hits++;
		return type;
	}
	uint64_t frames[ALLOC_SITE_DEPTH_MAX], slots[ALLOC_SITE_DEPTH_MAX];
	unsigned want = user ? STACK_CACHED : (unsigned)alloc_site_depth;
	if (want <= STACK_CACHED && stack_learn(t)) { /* learn the slots as it walks */
		unsigned n = trace_unwind_slots(site, frames, slots, want), cut = n;
		if (user) {
			cut = 1;
			while (cut < n && !stack_is_user(frames[cut]))
				cut++;
			cut = cut < n ? cut + 1 : 0; /* 0: no user frame in reach */
		}
		if (cut) {
			type = stack_type(frames, cut);
			stack_cache_put(t, site, sp, frames, slots, cut, type);
			return type;
		}
	}
	return stack_type_walked(site, user);
}

/* The type of the stack above site, from a fast walk (no cache). */
static uint32_t stack_type_walked(uintptr_t site, bool user)
{
	uint64_t frames[ALLOC_SITE_DEPTH_MAX];
	unsigned want = user ? STACK_FIRST_WALK : (unsigned)alloc_site_depth;
	unsigned n = stack_walk(site, frames, want), cut = n;
	if (user) {
		for (;;) {
			cut = 1;
			while (cut < n && !stack_is_user(frames[cut]))
				cut++;
			if (cut < n || n < want || want == ALLOC_SITE_DEPTH_MAX)
				break;
			want = ALLOC_SITE_DEPTH_MAX; /* no user frame yet: look deeper */
			n = stack_walk(site, frames, want);
		}
		cut = cut < n ? cut + 1 : n;
	}
	return stack_type(frames, cut);
}
