/*
** rd_plt.c — the functions of a module's PLT stubs.
**
** A call to another module's function goes through a stub of the
** caller's PLT: one indirect jump through the function's GOT slot.  No
** symbol covers the stubs (a program's symbol table has none, the unwind
** tables one entry for the whole section), so a sample that lands in one
** was named after the section's start (`prog+0x1020`, or `_init+0x20`):
** a function the program does not have, which tests/export/stripped.sh
** met.  objdump and perf name each stub after the symbol of its slot
** (`puts@plt`); so does this, the same way: the stub's jump decoded for
** its slot's address, the slot's relocation (JUMP_SLOT in .rela.plt, or
** GLOB_DAT in .rela.dyn for .plt.got) for the symbol, or the ifunc
** resolver an IRELATIVE one names (objdump's `*ABS*+0x9d750@plt`), for
** the reader to name after the resolver's symbol.
**
** Only x86-64's stubs are decoded: `jmp *disp(%rip)`, behind `endbr64`
** and `bnd` when the program was built for CET.  A stub of another
** machine, and the lazy binder's entry with the lazy stubs that push an
** index and jump to it, belong to no symbol: a run of those is one
** unnamed range.
*/
#include "rd_int.h"
#include "rd_plt.h"

#include <stdlib.h>
#include <string.h>

struct plt_stub {
	GElf_Addr start, end;
	char *name;       /* NULL: jumps to no symbol */
	GElf_Addr target; /* else the ifunc resolver its slot is filled by, or 0 */
};

struct plt_slot {
	GElf_Addr got; /* the slot's address */
	const char *name;
	GElf_Addr target;
};

struct rd_plt {
	struct plt_stub *v;
	size_t n, cap;
};

static int plt_cmp_slot(const void *a, const void *b)
{
	GElf_Addr x = ((const struct plt_slot *)a)->got, y = ((const struct plt_slot *)b)->got;
	return (x > y) - (x < y);
}

static int plt_cmp_stub(const void *a, const void *b)
{
	GElf_Addr x = ((const struct plt_stub *)a)->start, y = ((const struct plt_stub *)b)->start;
	return (x > y) - (x < y);
}

/* Every relocation of the module's SHT_RELA sections with a symbol, or
** with an addend and no symbol (IRELATIVE: libc's calls of its own ifuncs,
** memcpy's variants): the slot it fills and the symbol's name (elf's
** strings) or the addend, sorted by slot. */
static struct plt_slot *plt_slots(Elf *elf, size_t *n)
{
	struct plt_slot *v = NULL;
	size_t cap = 0;
	*n = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh, lsh;
		Elf_Data *d;
		Elf_Scn *link;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(link = elf_getscn(elf, sh.sh_link)) ||
		    !gelf_getshdr(link, &lsh) || !(d = elf_getdata(scn, NULL)))
			continue;
		Elf_Data *syms = elf_getdata(link, NULL);
		size_t count = sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; syms && i < count; i++) {
			GElf_Rela r;
			GElf_Sym s;
			const char *name;
			if (!gelf_getrela(d, (int)i, &r))
				continue;
			if (GELF_R_SYM(r.r_info) == 0)
				name = NULL;
			else if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s) ||
				 !(name = elf_strptr(elf, lsh.sh_link, s.st_name)) || !*name)
				continue;
			if (!name && r.r_addend <= 0)
				continue;
			if (*n == cap)
				v = rd_xrealloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
			v[(*n)++] = (struct plt_slot){r.r_offset, name, name ? 0 : (GElf_Addr)r.r_addend};
		}
	}
	if (*n)
		qsort(v, *n, sizeof *v, plt_cmp_slot);
	return v;
}

static const struct plt_slot *plt_slot_at(const struct plt_slot *v, size_t n, GElf_Addr got)
{
	size_t below = got ? rd_count_upto(v, n, sizeof *v, got - 1) : n;
	return below < n && v[below].got == got ? &v[below] : NULL;
}

/* The slot an x86-64 stub at address at jumps through, or 0: `ff 25
** disp32` (jmp *disp(%rip)) at its start, after `f2` (bnd), after
** `f3 0f 1e fa` (endbr64), or after both. */
static GElf_Addr plt_x86_64_slot(const unsigned char *b, size_t size, GElf_Addr at)
{
	static const unsigned char endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t i = size >= 4 && memcmp(b, endbr64, 4) == 0 ? 4 : 0;
	if (i < size && b[i] == 0xf2)
		i++;
	if (i + 6 > size || b[i] != 0xff || b[i + 1] != 0x25)
		return 0;
	int32_t disp;
	memcpy(&disp, b + i + 2, 4);
	return at + i + 6 + (GElf_Addr)(int64_t)disp;
}

static void plt_add(struct rd_plt *t, GElf_Addr start, GElf_Addr end, const struct plt_slot *slot)
{
	struct plt_stub *last = t->n ? &t->v[t->n - 1] : NULL;
	if (!slot && last && !last->name && !last->target && last->end == start) {
		last->end = end; /* one unnamed range */
		return;
	}
	if (t->n == t->cap)
		t->v = rd_xrealloc(t->v, (t->cap = t->cap ? 2 * t->cap : 64) * sizeof *t->v);
	t->v[t->n++] = (struct plt_stub){start, end, slot && slot->name ? rd_xstrdup(slot->name) : NULL,
					 slot ? slot->target : 0};
}

/* The stubs of one PLT section. */
static void plt_section(struct rd_plt *t, Elf_Scn *scn, const GElf_Shdr *sh, bool x86_64,
			const struct plt_slot *slots, size_t nslots)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh->sh_size)
		return;
	GElf_Xword step = sh->sh_entsize >= 8 && sh->sh_entsize <= 64 ? sh->sh_entsize : 16;
	for (GElf_Xword o = 0; o < sh->sh_size; o += step) {
		size_t size = sh->sh_size - o < step ? sh->sh_size - o : step;
		GElf_Addr got = x86_64 ? plt_x86_64_slot((const unsigned char *)d->d_buf + o, size, sh->sh_addr + o) : 0;
		plt_add(t, sh->sh_addr + o, sh->sh_addr + o + size, plt_slot_at(slots, nslots, got));
	}
}

rd_plt_t *rd_plt_new(Elf *elf)
{
	size_t shstrndx, nslots = 0;
	GElf_Ehdr eh;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 || !gelf_getehdr(elf, &eh))
		return NULL;
	struct rd_plt *t = rd_xcalloc(1, sizeof *t);
	struct plt_slot *slots = NULL;
	bool read_slots = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (strcmp(name, ".plt") != 0 && strcmp(name, ".plt.sec") != 0 && strcmp(name, ".plt.got") != 0))
			continue;
		if (!read_slots) {
			read_slots = true;
			slots = plt_slots(elf, &nslots);
		}
		plt_section(t, scn, &sh, eh.e_machine == EM_X86_64, slots, nslots);
	}
	free(slots);
	if (!t->n) {
		rd_plt_free(t);
		return NULL;
	}
	qsort(t->v, t->n, sizeof *t->v, plt_cmp_stub);
	return t;
}

bool rd_plt_find(const rd_plt_t *t, GElf_Addr addr, const char **name, GElf_Addr *target, GElf_Off *off)
{
	size_t lo = t ? rd_count_upto(t->v, t->n, sizeof *t->v, addr) : 0;
	if (!lo || addr >= t->v[lo - 1].end)
		return false;
	*name = t->v[lo - 1].name;
	*target = t->v[lo - 1].target;
	*off = addr - t->v[lo - 1].start;
	return true;
}

void rd_plt_free(rd_plt_t *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	free(t);
}
