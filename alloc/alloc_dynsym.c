/*
** alloc_dynsym.c — dladdr's answer from a sorted index of a module's
** dynamic symbols.
**
** glibc's dladdr reads every dynamic symbol of the object for each call:
** cc1's 28,898 for each new allocation site, a fifth of `meminst -- cc1`'s
** CPU even with the last answers kept (alloc_sys_module.c), since a third
** of its sites lie outside any dynamic symbol (its static functions) and
** each such answer costs a whole search.  An object that has sent dladdr a
** few addresses and has many symbols gets an index: its symbols that
** dladdr looks at, sorted by address, with the highest end up to each one.
**
** The answer is dladdr's own (glibc 2.36, elf/dl-addr.c): the symbols of
** the GNU hash table (every one from its first hashed index on, in index
** order), defined or with a value, not SHN_ABS, not TLS, with a name
** inside the string table; one matches when the address is in
** [value, value + size), or is its value for one of size 0 or undefined;
** of those the highest value, and among equal values the lowest index.
** Objects without a GNU hash table, and symbols outside the executable
** segments (no code address is in them), are left to dladdr.
**
** The index's memory is a mapping of meminst's (16 bytes a symbol: cc1's
** 460 kB), made after ALLOC_DYNSYM_MISSES answers from dladdr in an object
** of ALLOC_DYNSYM_MIN symbols or more; all of them are dropped when the
** loader unloads an object.  One try-lock over them all: a thread never
** waits for it, it asks dladdr instead (and so does a fork child whose
** copy shows it held).  Never allocates, never takes the loader's lock.
*/
#include "alloc_int.h"
#include "alloc_dynsym.h"

#include <elf.h>
#include <string.h>

#define ALLOC_DYNSYM_MISSES 8    /* dladdr's answers before an index */
#define ALLOC_DYNSYM_MIN 1024    /* symbols: below, dladdr is cheap */
#define ALLOC_DYNSYM_OBJECTS 16  /* objects followed */

typedef struct {
	uint32_t lo, hi;  /* from the object's load bias; hi = lo + 1 for an exact match */
	uint32_t name;    /* offset in the string table */
	uint32_t key;     /* its index while sorted; then the highest hi up to here */
} dynsym_ent_t;

typedef struct {
	const struct link_map *lm;
	unsigned misses;
	bool failed;            /* no index can be made: dladdr for good */
	dynsym_ent_t *v;        /* NULL: not made */
	size_t n, bytes;
	const char *strtab;
} dynsym_obj_t;

static dynsym_obj_t dynsym_objs[ALLOC_DYNSYM_OBJECTS];
static unsigned long long dynsym_subs;
static _Atomic int dynsym_busy;

static bool dynsym_lock(unsigned long long subs)
{
	if (atomic_exchange_explicit(&dynsym_busy, 1, memory_order_acquire))
		return false;
	if (subs != dynsym_subs) { /* something was unloaded: its pointers may dangle */
		for (unsigned i = 0; i < ALLOC_DYNSYM_OBJECTS; i++)
			if (dynsym_objs[i].v)
				alloc_sys_unmap(dynsym_objs[i].v, dynsym_objs[i].bytes);
		memset(dynsym_objs, 0, sizeof dynsym_objs);
		dynsym_subs = subs;
	}
	return true;
}

static void dynsym_unlock(void)
{
	atomic_store_explicit(&dynsym_busy, 0, memory_order_release);
}

static dynsym_obj_t *dynsym_obj(const struct link_map *lm, bool add)
{
	for (unsigned i = 0; i < ALLOC_DYNSYM_OBJECTS; i++)
		if (dynsym_objs[i].lm == lm || (add && !dynsym_objs[i].lm)) {
			dynsym_objs[i].lm = lm;
			return &dynsym_objs[i];
		}
	return NULL;
}

/* A pointer of the dynamic section: glibc moves them by the load bias in
** place, except where the section is read-only (the vDSO's). */
static uintptr_t dynsym_ptr(const struct link_map *lm, ElfW(Addr) p)
{
	return p < lm->l_addr ? p + lm->l_addr : p;
}

/* The number of symbols the GNU hash table covers, and its first hashed
** index. */
static uint32_t dynsym_count(const uint32_t *gnu, uint32_t *first)
{
	uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] > last)
			last = buckets[b];
	*first = symoffset;
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* The executable segments' range, from the object's program headers. */
static bool dynsym_text(uintptr_t map_start, const struct link_map *lm, uintptr_t *lo, uintptr_t *hi)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)))
		return false;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(map_start + eh->e_phoff);
	*lo = UINTPTR_MAX, *hi = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			uintptr_t a = lm->l_addr + ph[i].p_vaddr;
			*lo = a < *lo ? a : *lo;
			*hi = a + ph[i].p_memsz > *hi ? a + ph[i].p_memsz : *hi;
		}
	return *lo < *hi;
}

static bool dynsym_before(const dynsym_ent_t *a, const dynsym_ent_t *b)
{
	return a->lo < b->lo || (a->lo == b->lo && a->key < b->key);
}

static void dynsym_sift(dynsym_ent_t *v, size_t root, size_t end)
{
	for (size_t child; (child = 2 * root + 1) < end; root = child) {
		if (child + 1 < end && dynsym_before(&v[child], &v[child + 1]))
			child++;
		if (!dynsym_before(&v[root], &v[child]))
			return;
		dynsym_ent_t t = v[root];
		v[root] = v[child], v[child] = t;
	}
}

/* Heapsort by (lo, index): libc's qsort may allocate. */
static void dynsym_sort(dynsym_ent_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		dynsym_sift(v, i, n);
	for (size_t end = n; end-- > 1;) {
		dynsym_ent_t t = v[0];
		v[0] = v[end], v[end] = t;
		dynsym_sift(v, 0, end);
	}
}

/* The index of o's object, loaded at map_start; false when it cannot be
** made (no GNU hash table, addresses beyond 4 GiB of its bias, few
** symbols, no memory). */
static bool dynsym_build(dynsym_obj_t *o, uintptr_t map_start)
{
	const struct link_map *lm = o->lm;
	const ElfW(Sym) *symtab = NULL;
	const uint32_t *gnu = NULL;
	const char *strtab = NULL;
	size_t strsz = 0;
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)dynsym_ptr(lm, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			strtab = (const char *)dynsym_ptr(lm, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
		else if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)dynsym_ptr(lm, d->d_un.d_ptr);
	}
	uintptr_t text_lo, text_hi;
	if (!symtab || !strtab || !gnu || !dynsym_text(map_start, lm, &text_lo, &text_hi) ||
	    text_hi - lm->l_addr > UINT32_MAX)
		return false;
	uint32_t first, count = dynsym_count(gnu, &first);
	if (count - first < ALLOC_DYNSYM_MIN)
		return false;
	size_t bytes = (((size_t)(count - first) * sizeof(dynsym_ent_t)) + 4095) & ~(size_t)4095;
	dynsym_ent_t *v = alloc_sys_map(bytes);
	if (!v)
		return false;
	size_t n = 0;
	for (uint32_t k = first; k < count; k++) {
		const ElfW(Sym) *s = &symtab[k];
		if ((s->st_shndx == SHN_UNDEF && s->st_value == 0) || s->st_shndx == SHN_ABS ||
		    ELF64_ST_TYPE(s->st_info) == STT_TLS || s->st_name >= strsz)
			continue;
		uintptr_t lo = lm->l_addr + s->st_value;
		uintptr_t hi = s->st_shndx == SHN_UNDEF || s->st_size == 0 ? lo + 1 : lo + s->st_size;
		if (hi <= text_lo || lo >= text_hi)
			continue; /* no code address is in it */
		if (hi - lm->l_addr > UINT32_MAX) {
			alloc_sys_unmap(v, bytes);
			return false;
		}
		v[n++] = (dynsym_ent_t){(uint32_t)(lo - lm->l_addr), (uint32_t)(hi - lm->l_addr), s->st_name, k};
	}
	dynsym_sort(v, n);
	for (size_t i = 0; i < n; i++) /* the highest end up to each entry */
		v[i].key = i && v[i - 1].key > v[i].hi ? v[i - 1].key : v[i].hi;
	o->v = v, o->n = n, o->bytes = bytes, o->strtab = strtab;
	return true;
}

/* The entry dladdr names at a (from the bias), or NULL: the highest start
** among the entries that hold it, the lowest symbol index among those. */
static const dynsym_ent_t *dynsym_lookup(const dynsym_obj_t *o, uint32_t a)
{
	size_t lo = 0, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->v[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	const dynsym_ent_t *best = NULL;
	for (size_t i = lo; i-- > 0 && o->v[i].key > a;) {
		if (best && o->v[i].lo < best->lo)
			break;
		if (a < o->v[i].hi)
			best = &o->v[i]; /* going down: a lower index of the same start wins */
	}
	return best;
}

bool alloc_dynsym_find(const struct link_map *lm, uintptr_t addr, unsigned long long subs, const char **name,
		       uintptr_t *lo, uintptr_t *size)
{
	if (!dynsym_lock(subs))
		return false;
	const dynsym_obj_t *o = dynsym_obj(lm, false);
	bool known = o && o->v && addr >= lm->l_addr && addr - lm->l_addr <= UINT32_MAX;
	if (known) {
		const dynsym_ent_t *e = dynsym_lookup(o, (uint32_t)(addr - lm->l_addr));
		*name = e ? o->strtab + e->name : NULL;
		*lo = e ? lm->l_addr + e->lo : 0;
		*size = e ? e->hi - e->lo : 0;
	}
	dynsym_unlock();
	return known;
}

void alloc_dynsym_missed(const struct link_map *lm, uintptr_t map_start, unsigned long long subs)
{
	if (!dynsym_lock(subs))
		return;
	dynsym_obj_t *o = dynsym_obj(lm, true);
	if (o && !o->v && !o->failed && ++o->misses >= ALLOC_DYNSYM_MISSES)
		o->failed = !dynsym_build(o, map_start);
	dynsym_unlock();
}
