/*
** rd_symtab.c — the symbol that contains an address, by binary search in
** a module's symbol table sorted once.
**
** libdwfl's dwfl_module_addrinfo reads every symbol of the module for
** every address (a few hundred thousand instructions a site in libc or a
** C++ program: a third of inspect serve's first scrape, bench/RESULTS.md).
** Its answer is kept exactly, since every display and export names
** functions by it.  In elfutils 0.188 it is: among the symbols with a
** name, a section (not SHN_UNDEF) and a type other than SECTION, FILE and
** TLS, at or below the address, first the global ones (a symbol table
** lists its locals first: dwfl_module_getsymtab_first_global), then, if
** none was chosen, the locals; within one pass, of the symbols with a size
** that contain the address, taken in table order, a later one replaces the
** one chosen when it starts higher or binds more strongly (global over
** weak over local), or starts at the same address with a smaller size and
** no weaker binding.  Only when no symbol with a size contains the address
** does the choice turn on symbols without a size (assembly labels: the
** nearest in the same section, unless a sized symbol ends above it) and on
** the order of the whole table: those few addresses are left to libdwfl.
**
** So this index holds, for each pass, the symbols with a size sorted by
** their start, with the highest end of any symbol up to each one: the
** symbols that contain an address are found by going down from the last
** start at or below it while that highest end is above it, and the rule
** above is applied to them in table order.  A module whose symbol values
** libdwfl resolves through function descriptors (ppc64's ELFv1) is left to
** libdwfl whole.
*/
#include "rd_int.h"
#include "rd_symtab.h"

#include <gelf.h>
#include <stdlib.h>

struct symtab_ent {
	GElf_Addr start, end; /* end: start + size, at most UINT64_MAX */
	GElf_Addr end_max;    /* the highest end of this and every entry below */
	const char *name;
	int ndx;              /* its place in the table (the order of libdwfl's walk) */
	int bind;             /* libdwfl's preference: global 3, weak 2, local 1 */
};

struct symtab_pass {
	struct symtab_ent *e;
	size_t n;
};

struct rd_symtab {
	bool whole_libdwfl;         /* every address to libdwfl */
	struct symtab_pass global, local;
	bool have_locals;           /* libdwfl's second pass happens */
	GElf_Addr *sizeless_global; /* starts of the global symbols without a size, sorted */
	size_t nsizeless;
};

static int symtab_bind(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* A symbol libdwfl's search looks at (search_table's test, but the
** address). */
static bool symtab_eligible(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

static int symtab_cmp_ent(const void *a, const void *b)
{
	const struct symtab_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

static int symtab_cmp_addr(const void *a, const void *b)
{
	GElf_Addr x = *(const GElf_Addr *)a, y = *(const GElf_Addr *)b;
	return (x > y) - (x < y);
}

static void symtab_push(struct symtab_pass *p, size_t *cap, const struct symtab_ent *e)
{
	if (p->n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		p->e = rd_xrealloc(p->e, *cap * sizeof *p->e);
	}
	p->e[p->n++] = *e;
}

static void symtab_sort(struct symtab_pass *p)
{
	if (p->n)
		qsort(p->e, p->n, sizeof *p->e, symtab_cmp_ent);
	GElf_Addr high = 0;
	for (size_t i = 0; i < p->n; i++)
		p->e[i].end_max = high = p->e[i].end > high ? p->e[i].end : high;
}

static bool symtab_descriptors(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	return !elf || !gelf_getehdr(elf, &eh) || eh.e_machine == EM_PPC64;
}

rd_symtab_t *rd_symtab_new(Dwfl_Module *mod)
{
	struct rd_symtab *t = rd_xcalloc(1, sizeof *t);
	int n = dwfl_module_getsymtab(mod), first = n > 0 ? dwfl_module_getsymtab_first_global(mod) : -1;
	if (n <= 0 || first < 0 || symtab_descriptors(mod)) {
		t->whole_libdwfl = true;
		return t;
	}
	/* libdwfl's passes: [first or 1, n) then, if first > 1, [1, first) */
	int global_from = first == 0 ? 1 : first;
	t->have_locals = first > 1;
	size_t gcap = 0, lcap = 0, scap = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
		bool global = i >= global_from;
		if (!symtab_eligible(name, &sym) || (!global && !t->have_locals))
			continue;
		if (sym.st_size) {
			GElf_Addr end = value + sym.st_size < value ? UINT64_MAX : value + sym.st_size;
			struct symtab_ent e = {value, end, 0, name, i, symtab_bind(sym.st_info)};
			symtab_push(global ? &t->global : &t->local, global ? &gcap : &lcap, &e);
		} else if (global) {
			if (t->nsizeless == scap) {
				scap = scap ? 2 * scap : 64;
				t->sizeless_global = rd_xrealloc(t->sizeless_global, scap * sizeof *t->sizeless_global);
			}
			t->sizeless_global[t->nsizeless++] = value;
		}
	}
	symtab_sort(&t->global);
	symtab_sort(&t->local);
	if (t->nsizeless)
		qsort(t->sizeless_global, t->nsizeless, sizeof *t->sizeless_global, symtab_cmp_addr);
	return t;
}

void rd_symtab_free(rd_symtab_t *t)
{
	if (!t)
		return;
	free(t->global.e);
	free(t->local.e);
	free(t->sizeless_global);
	free(t);
}

/* Does the sym of e replace the one of c in libdwfl's walk (try_sym_value,
** both with a size and containing the address)? */
static bool symtab_better(const struct symtab_ent *c, const struct symtab_ent *e)
{
	if (c->start < e->start || c->bind < e->bind)
		return true;
	GElf_Addr csize = c->end - c->start, esize = e->end - e->start;
	return c->start == e->start && csize > esize && c->bind <= e->bind;
}

#define SYMTAB_HOLDERS 64 /* symbols containing one address: more go to libdwfl */

static int symtab_cmp_ndx(const void *a, const void *b)
{
	int x = (*(const struct symtab_ent *const *)a)->ndx, y = (*(const struct symtab_ent *const *)b)->ndx;
	return (x > y) - (x < y);
}

/* The symbol libdwfl's pass chooses among those with a size: NULL when
** none contains addr; *more when more than SYMTAB_HOLDERS do. */
static const struct symtab_ent *symtab_pass_find(const struct symtab_pass *p, GElf_Addr addr, bool *more)
{
	size_t lo = rd_count_upto(p->e, p->n, sizeof *p->e, addr); /* the first entry starting above addr */
	const struct symtab_ent *in[SYMTAB_HOLDERS];
	size_t n = 0;
	for (size_t i = lo; i-- > 0 && p->e[i].end_max > addr;) {
		if (p->e[i].end <= addr)
			continue;
		if (n == SYMTAB_HOLDERS) {
			*more = true;
			return NULL;
		}
		in[n++] = &p->e[i];
	}
	/* in the walk's order, the table's */
	if (n > 1)
		qsort(in, n, sizeof *in, symtab_cmp_ndx);
	const struct symtab_ent *best = n ? in[0] : NULL;
	for (size_t i = 1; i < n; i++)
		if (symtab_better(best, in[i]))
			best = in[i];
	return best;
}

static bool symtab_has_sizeless(const rd_symtab_t *t, GElf_Addr addr)
{
	return t->nsizeless &&
	       bsearch(&addr, t->sizeless_global, t->nsizeless, sizeof addr, symtab_cmp_addr) != NULL;
}

const char *rd_symtab_find(rd_symtab_t *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off)
{
	const struct symtab_ent *e = NULL;
	bool more = false;
	if (t && !t->whole_libdwfl) {
		e = symtab_pass_find(&t->global, addr, &more);
		/* libdwfl skips its pass over the locals when a global label
		** without a size sits at the address itself */
		if (!e && !more && t->have_locals && !symtab_has_sizeless(t, addr))
			e = symtab_pass_find(&t->local, addr, &more);
	}
	if (!e)
		return dwfl_module_addrinfo(mod, addr, off, &(GElf_Sym){0}, NULL, NULL, NULL);
	*off = addr - e->start;
	return e->name;
}
