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
**
** Allocation wrappers (the built-in list of meminst-wrappers.h: g_malloc,
** xmalloc, zmalloc …, and the names of site_skip=NAME+NAME…; none with
** site_skip=none): frames inside them are skipped, and the site is the
** first frame outside, then site_depth applies from there as from the call
** into the allocator.  Their ranges come from every module's .symtab and
** .dynsym (a wrapper may be in a system library), read once per module.
** A site outside them is classified once and then cached per thread like
** any site (alloc_core.c); an allocation from a wrapper walks the stack,
** through the cache of caller chains.
*/
#include "alloc_int.h"
#include "../trace/trace_sampler.h"
#include "meminst-wrappers.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int alloc_site_depth;
bool alloc_site_skip;

#define STACK_MODULES_MAX 512
#define STACK_FIRST_WALK 2

/* A loaded object: its code, whether it is a system library, and the
** address ranges of its std:: and __gnu_cxx:: functions, sorted. */
typedef struct stack_module_s {
	uintptr_t lo, hi;
	bool system;
	size_t nstd, nskip;
	const uintptr_t *std;  /* nstd pairs [lo, hi) */
	const uintptr_t *skip; /* nskip pairs: functions named by site_skip */
} stack_module_t;

static stack_module_t stack_mods[STACK_MODULES_MAX];
static _Atomic size_t stack_nmods; /* published entries, read without a lock */
static _Atomic uint32_t stack_gen;  /* moves when modules are unloaded        */
static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;

/* The table's lock.  A child of clone without fork finds it held for ever
** when a thread of its parent, which it does not have, held it at the clone
** (clone_raw.sh: a new site's first allocation in the child): a wait of
** 50 ms looks for that (alloc_clone_adopt makes the lock anew), as the
** other waits of the library do (alloc_fork_wait). */
static void stack_lock_take(void)
{
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (pthread_mutex_timedlock(&stack_lock, &until) == 0)
			return;
		alloc_clone_adopt();
	}
}

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

/*
** A name one of the wrapper lists matches begins with the first two
** characters of one of its entries: two 256-bit masks of them, made once
** (stack_lock held), turn most of a large symbol table down at a glance.
** The lists' loop for each of cc1's 29,000 dynamic symbols ("_Z...", none
** a wrapper) was a fifth of a `gcc -c` under MEMINST=mis.
*/
static struct {
	bool made;
	uint64_t first[4], second[4];
} skip_mask;

static void skip_mask_set(uint64_t *m, unsigned char c) { m[c >> 6] |= 1ull << (c & 63); }
static bool skip_mask_has(const uint64_t *m, unsigned char c) { return m[c >> 6] >> (c & 63) & 1; }

static void skip_mask_add(const char *list, size_t len)
{
	for (const char *v = list, *end = list + len; v < end;) {
		const char *plus = memchr(v, '+', (size_t)(end - v));
		size_t n = (size_t)((plus ? plus : end) - v);
		if (n && v[0] == '*') { /* "*": every name */
			memset(skip_mask.first, 0xff, sizeof skip_mask.first);
			memset(skip_mask.second, 0xff, sizeof skip_mask.second);
		} else if (n) {
			skip_mask_set(skip_mask.first, (unsigned char)v[0]);
			if (n == 1) /* the one-letter name: its second character is its end */
				skip_mask_set(skip_mask.second, 0);
			else if (v[1] == '*')
				memset(skip_mask.second, 0xff, sizeof skip_mask.second);
			else
				skip_mask_set(skip_mask.second, (unsigned char)v[1]);
		}
		v += n + 1;
	}
}

/* Is this symbol a wrapper: a built-in one or one of site_skip's names? */
static bool stack_skip_name(const char *n)
{
	if (!skip_mask.made) {
		skip_mask_add(MEMINST_WRAPPERS, sizeof MEMINST_WRAPPERS - 1);
		skip_mask_add(alloc_opts.site_skip, alloc_opts.site_skip_len);
		skip_mask.made = true;
	}
	if (!skip_mask_has(skip_mask.first, (unsigned char)n[0]) || !skip_mask_has(skip_mask.second, (unsigned char)n[1]))
		return false;
	return meminst_wrapper(n) || meminst_wrapper_in(alloc_opts.site_skip, alloc_opts.site_skip_len, n);
}

/* A symbol table with its strings, where they can be read. */
typedef struct {
	const ElfW(Sym) *sym;
	size_t nsym, strsz;
	const char *str;
	unsigned type; /* SHT_SYMTAB, SHT_DYNSYM */
} stack_symtab_t;

#define STACK_SYMTABS 4 /* symbol tables of the wanted types read in a file */
#define STACK_MAPS 12   /* pieces of the file mapped at once             */

/*
** An ELF file being read, the object loaded from it at bias.  Its pieces
** are mapped one by one, and a section a loaded segment holds (the dynamic
** symbols and their strings) is read there: mapping the whole file made
** the pages around each one read resident until the unmap (64 KiB windows,
** bench/RESULTS.md: libc's file at the C++ map's printf, its heap at the
** peak, 90-120 kB more at the peak), where the loaded object's are
** resident already (the loader looked its symbols up).
*/
typedef struct {
	int fd;
	size_t size; /* the file's */
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	unsigned phnum, nmaps;
	void *maps[STACK_MAPS];
	size_t lens[STACK_MAPS];
} stack_elf_t;

/* Bytes [off, off + len) of the file, or NULL. */
static const char *stack_file_piece(stack_elf_t *o, size_t off, size_t len)
{
	if (!len || off > o->size || len > o->size - off || o->nmaps == STACK_MAPS)
		return NULL;
	size_t at = off & ~(size_t)4095;
	void *m = mmap(NULL, off + len - at, PROT_READ, MAP_PRIVATE, o->fd, (off_t)at);
	if (m == MAP_FAILED)
		return NULL;
	o->maps[o->nmaps] = m;
	o->lens[o->nmaps++] = off + len - at;
	return (const char *)m + (off - at);
}

/* A section's contents: in the segment that loaded it, else the file's. */
static const char *stack_section(stack_elf_t *o, const ElfW(Shdr) *s)
{
	for (unsigned i = 0; (s->sh_flags & SHF_ALLOC) && i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_R) && s->sh_addr >= p->p_vaddr &&
		    s->sh_addr - p->p_vaddr <= p->p_filesz && s->sh_size <= p->p_filesz - (s->sh_addr - p->p_vaddr) &&
		    s->sh_offset - p->p_offset == s->sh_addr - p->p_vaddr)
			return (const char *)(o->bias + s->sh_addr);
	}
	return stack_file_piece(o, s->sh_offset, s->sh_size);
}

/* The symbol tables among the file's sections sh (SHT_DYNSYM's too when
** `dynamic`), into t (STACK_SYMTABS at most); how many. */
static unsigned stack_symtabs(stack_elf_t *o, const ElfW(Shdr) *sh, unsigned shnum, bool dynamic, stack_symtab_t *t)
{
	unsigned k = 0;
	for (unsigned i = 0; i < shnum && k < STACK_SYMTABS; i++) {
		bool wanted = sh[i].sh_type == SHT_SYMTAB || (dynamic && sh[i].sh_type == SHT_DYNSYM);
		if (!wanted || sh[i].sh_link >= shnum)
			continue;
		const char *sym = stack_section(o, &sh[i]);
		const char *str = sym ? stack_section(o, &sh[sh[i].sh_link]) : NULL;
		if (str)
			t[k++] = (stack_symtab_t){(const ElfW(Sym) *)sym, sh[i].sh_size / sizeof(ElfW(Sym)),
						  sh[sh[i].sh_link].sh_size, str, sh[i].sh_type};
	}
	return k;
}

/*
** The [lo, hi) ranges, sorted, of the functions in the symbol tables t
** (the dynamic ones too when `dynamic`) whose names `match`; NULL and *n = 0
** if none.  Counted, then filled.
*/
static uintptr_t *stack_ranges(const stack_symtab_t *t, unsigned nt, bool dynamic, bool (*match)(const char *),
			       uintptr_t bias, size_t *n)
{
	uintptr_t *r = NULL;
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass && (!k || !(r = alloc_sys_map(k * 2 * sizeof *r))))
			break;
		k = 0;
		for (unsigned i = 0; i < nt; i++)
			for (size_t j = 0; (dynamic || t[i].type == SHT_SYMTAB) && j < t[i].nsym; j++) {
				const ElfW(Sym) *sym = &t[i].sym[j];
				if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size || !sym->st_value ||
				    sym->st_name >= t[i].strsz)
					continue;
				const char *name = t[i].str + sym->st_name;
				if (!memchr(name, 0, t[i].strsz - sym->st_name) || !match(name))
					continue;
				if (pass)
					r[2 * k] = bias + sym->st_value, r[2 * k + 1] = bias + sym->st_value + sym->st_size;
				k++;
			}
	}
	*n = r ? k : 0;
	if (r)
		stack_sort(r, k);
	return r;
}

/* The std:: function ranges (the user's modules) and those of site_skip's
** functions (every module) of the ELF file at path, loaded at bias with
** the program headers phdr. */
static void stack_read_symbols(stack_module_t *m, const char *path, uintptr_t bias, const ElfW(Phdr) *phdr,
			       unsigned phnum)
{
	int fd = alloc_seccomp_refuses(ALLOC_SC_OPEN_READ | ALLOC_SC_FSTAT) ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	stack_elf_t o = {.fd = fd, .bias = bias, .phdr = phdr, .phnum = phnum};
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		o.size = (size_t)st.st_size;
	const ElfW(Ehdr) *eh = (const void *)stack_file_piece(&o, 0, sizeof *eh);
	const ElfW(Shdr) *sh = NULL;
	if (eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh->e_shentsize == sizeof(ElfW(Shdr)) && eh->e_shoff <= o.size &&
	    (o.size - eh->e_shoff) / sizeof(ElfW(Shdr)) >= eh->e_shnum)
		sh = (const void *)stack_file_piece(&o, eh->e_shoff, eh->e_shnum * sizeof *sh);
	if (sh) {
		/* read once: std's ranges from the full symbol table, site_skip's
		** from the dynamic one as well */
		stack_symtab_t t[STACK_SYMTABS];
		unsigned nt = stack_symtabs(&o, sh, eh->e_shnum, alloc_site_skip, t);
		if (!m->system)
			m->std = stack_ranges(t, nt, false, stack_std_name, bias, &m->nstd);
		if (alloc_site_skip)
			m->skip = stack_ranges(t, nt, true, stack_skip_name, bias, &m->nskip);
	}
	close(fd);
	while (o.nmaps)
		o.nmaps--, munmap(o.maps[o.nmaps], o.lens[o.nmaps]);
}

/* ---------------------------------------------------------- modules --- */

struct stack_find {
	uintptr_t addr, lo, hi, bias;
	const ElfW(Phdr) *phdr;
	unsigned phnum;
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
	q->phdr = info->dlpi_phdr, q->phnum = info->dlpi_phnum;
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
	if (!trace_loader_iterate(stack_find_object, &q, true) || !q.found)
		return NULL;
	stack_lock_take();
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
		if (!e->system || alloc_site_skip)
			stack_read_symbols(e, q.path, q.bias, q.phdr, q.phnum);
		atomic_store_explicit(&stack_nmods, n + 1, memory_order_release);
		m = e;
	}
	pthread_mutex_unlock(&stack_lock);
	return m;
}

void alloc_stack_unloaded(const alloc_loaded_t *now, size_t n)
{
	stack_lock_take();
	size_t nm = atomic_load(&stack_nmods);
	for (size_t i = 0; i < nm; i++) {
		stack_module_t *m = &stack_mods[i];
		bool loaded = false;
		for (size_t j = 0; j < n && !loaded; j++)
			loaded = now[j].lo == m->lo && now[j].hi == m->hi;
		if (!loaded) { /* never matches again (hi first: no [0, hi) between) */
			atomic_store((_Atomic uintptr_t *)&m->hi, 0);
			atomic_store((_Atomic uintptr_t *)&m->lo, 0);
		}
	}
	atomic_fetch_add(&stack_gen, 1);
	pthread_mutex_unlock(&stack_lock);
}

/* Whether a is inside one of n sorted [lo, hi) pairs. */
static bool stack_in_ranges(const uintptr_t *r, size_t n, uintptr_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the last range starting at or below a */
		size_t mid = lo + (hi - lo) / 2;
		if (r[2 * mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < r[2 * (lo - 1) + 1];
}

/* Whether a code address is the user's: not in a system library, not in
** a std:: function.  An address in no known object counts as the user's. */
static bool stack_is_user(uintptr_t addr)
{
	const stack_module_t *m = stack_module(addr - 1); /* inside the call */
	if (!m)
		return true;
	return !m->system && !stack_in_ranges(m->std, m->nstd, addr - 1);
}

/* Whether a return address is inside a function site_skip names. */
static bool stack_skipped(uintptr_t addr)
{
	if (!alloc_site_skip)
		return false;
	const stack_module_t *m = stack_module(addr - 1);
	return m && stack_in_ranges(m->skip, m->nskip, addr - 1);
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
static void stack_unwind_setup(void)
{
	if (!atomic_load_explicit(&stack_unwind_ready, memory_order_acquire)) {
		stack_lock_take();
		if (!stack_unwind_ready)
			trace_unwind_init();
		atomic_store_explicit(&stack_unwind_ready, true, memory_order_release);
		pthread_mutex_unlock(&stack_lock);
	}
}

static unsigned stack_walk(uintptr_t site, uint64_t *frames, unsigned max)
{
	stack_unwind_setup();
	unsigned n = trace_unwind_from(site, frames, max);
	if (n)
		return n;
	/* the walk did not pass the site (a tail call into the allocator):
	** the site and the callers of the code that called it */
	n = trace_unwind_here(frames + 1, max - 1, true);
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
** so reading them is safe.  Stacks of up to STACK_CACHED frames: a hit
** costs a compare a frame, where a walk costs libunwind's ~100
** instructions a frame, so site_depth=N up to 16 stays cheap per frame
** (bench/site-insn.sh --depths).  site_depth=user and a wrapper learn
** from STACK_USER_LEARN frames: the first frame of the user is nearly
** always among them, and a deeper careful walk would cost more than it
** saves when it is not.
*/
#define STACK_CACHE 64
#define STACK_CACHED 16
#define STACK_USER_LEARN 4

typedef struct alloc_stack_cache_s {
	struct {
		uintptr_t site, sp;
		uint32_t type, n;            /* n: frames checked after the site */
		uint32_t off[STACK_CACHED - 1]; /* slot - sp                      */
		uint64_t ra[STACK_CACHED - 1];
	} e[STACK_CACHE];
	uint64_t hits, learned; /* learning walks are slower: see stack_learn */
	uint32_t gen;           /* stack_gen when the entries were learned     */
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

/* Entries learned before a module was unloaded are forgotten: their
** return addresses may be another module's now. */
static void stack_cache_current(stack_cache_t *c)
{
	uint32_t gen = atomic_load_explicit(&stack_gen, memory_order_acquire);
	if (unlikely(c->gen != gen)) {
		memset(c->e, 0, sizeof c->e);
		c->gen = gen;
	}
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

static uint32_t stack_type_walked(uintptr_t site, bool skip);

/* Whether to walk step by step and keep the slots: while the cache pays
** (a recursive program reaches a site at ever new depths, and would learn
** for every allocation: then the fast walk is cheaper). */
static bool stack_learn(alloc_thread_t *t)
{
	if (!t)
		return false;
	if (!t->stack_cache) {
		if (!(t->stack_cache = alloc_sys_map(sizeof *t->stack_cache)))
			return false;
		t->stack_cache->gen = atomic_load(&stack_gen);
	}
	stack_cache_t *c = t->stack_cache;
	if (c->learned >= 256 && c->learned * 8 > c->hits)
		return false;
	c->learned++;
	return true;
}

/*
** Where the type lies in frames[0..n), frames[0] the site: from the first
** frame outside site_skip's functions (*from), `cut` frames as site_depth
** says (1 by default, N, or with user up to the first frame in the user's
** code).  0 when the n frames do not reach that far, unless `complete` (n
** is the whole stack: then what there is counts).
*/
static unsigned stack_cut(const uint64_t *f, unsigned n, bool complete, unsigned *from)
{
	unsigned k = 0;
	while (k < n && stack_skipped(f[k]))
		k++;
	if (k == n) { /* every frame a wrapper, as far as walked */
		if (!complete || !n)
			return 0;
		k = 0;
	}
	*from = k;
	if (alloc_site_depth == ALLOC_SITE_DEPTH_USER) {
		unsigned c = k;
		while (c < n && !stack_is_user(f[c]))
			c++;
		return c < n ? c - k + 1 : complete ? n - k : 0;
	}
	unsigned want = alloc_site_depth ? (unsigned)alloc_site_depth : 1;
	return n - k >= want ? want : complete ? n - k : 0;
}

/* The type of `cut` frames from f: one frame is a site like any other. */
static uint32_t stack_cut_type(const uint64_t *f, unsigned cut)
{
	return cut == 1 ? alloc_type_of_site((uintptr_t)f[0]) : stack_type(f, cut);
}

/* Frames to walk first: site_depth's, more when a wrapper may come first. */
static unsigned stack_first_want(bool learning, bool skip)
{
	if (alloc_site_depth == ALLOC_SITE_DEPTH_USER || skip)
		return learning ? STACK_USER_LEARN : STACK_FIRST_WALK + (skip ? 2 : 0);
	return alloc_site_depth ? (unsigned)alloc_site_depth : 1;
}

uint32_t alloc_stack_type(alloc_thread_t *t, uintptr_t site, bool *per_site)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uint32_t type;
	/* the cache first: it holds only sites classified as needing the
	** stack (the site's module and functions say so, and an unloaded
	** module empties it), so a hit skips the site's classification, two
	** look-ups of its module and ranges */
	*per_site = false;
	if (t && t->stack_cache) {
		stack_cache_current(t->stack_cache);
		if (stack_cache_hit(t->stack_cache, site, sp, &type)) {
			t->stack_cache->hits++;
			return type;
		}
	}
	bool skip = stack_skipped(site);
	*per_site = !skip && (alloc_site_depth == 0 ||
			      (alloc_site_depth == ALLOC_SITE_DEPTH_USER && stack_is_user(site)));
	if (*per_site)
		return alloc_type_of_site(site);
	uint64_t frames[ALLOC_SITE_DEPTH_MAX], slots[ALLOC_SITE_DEPTH_MAX];
	unsigned want = stack_first_want(true, skip), from = 0;
	if (want <= STACK_CACHED && stack_learn(t)) { /* learn the slots as it walks */
		/* set up first: libunwind's own set-up makes its pipe, which
		** must be known as its (moved to high numbers, trace_sigwrap.c) */
		stack_unwind_setup();
		unsigned n = trace_unwind_slots(site, frames, slots, want);
		unsigned cut = stack_cut(frames, n, n < want, &from);
		if (cut) {
			type = stack_cut_type(frames + from, cut);
			stack_cache_put(t, site, sp, frames, slots, from + cut, type);
			return type;
		}
	}
	return stack_type_walked(site, skip);
}

/* The type of the stack above site, from a fast walk (no cache): deeper
** when the first walk does not reach the frames that make the type. */
static uint32_t stack_type_walked(uintptr_t site, bool skip)
{
	uint64_t frames[ALLOC_SITE_DEPTH_MAX];
	unsigned want = stack_first_want(false, skip), from = 0, n, cut;
	for (;;) {
		n = stack_walk(site, frames, want);
		cut = stack_cut(frames, n, n < want || want == ALLOC_SITE_DEPTH_MAX, &from);
		if (cut || want == ALLOC_SITE_DEPTH_MAX)
			break;
		want = ALLOC_SITE_DEPTH_MAX;
	}
	return cut ? stack_cut_type(frames + from, cut) : alloc_type_of_site(site);
}
