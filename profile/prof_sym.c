/*
** prof_sym.c — function addresses of a trace to names.
**
** The trace's MODULE records say where each file was mapped (start, end,
** the file offset of start) and its build-id.  Each module file is opened
** once with libelf to find its load bias (the PT_LOAD segment holding the
** mapped offset) and to compare build-ids; files that match are handed to
** inspect's symboliser (rd_symbols.c: libdwfl, DWARF then the ELF symbol
** table, C++ demangled).  Whatever cannot be named that way is shown as
** `module+0xOFFSET` (the ELF address in that file), or as the bare address
** outside every module.  A module whose build-id differs from the traced
** one is warned about once.  Every address is resolved once (a cache that
** is also the table of functions of the profile).
*/
#include "prof_int.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym_mod {
	uint64_t start, end, bias;
	const char *base;        /* basename, in the pool                     */
	bool named;              /* handed to the symboliser                 */
	/* libmeminst: its exported functions, [lo, hi) in the file's
	** addresses, sorted (sym_exports) */
	bool meminst;
	uint64_t (*exports)[2];
	size_t nexports;
};

struct prof_symtab {
	struct rd_pool *pool;
	rd_syms_t *syms;
	struct sym_mod *mods;
	size_t nmods;
	struct prof_func *funcs;
	size_t nfuncs, cap;
	uint32_t *hash;          /* index + 1                                */
	size_t hcap;
};

/* The load bias of the mapping and whether the build-id matches (1), does
** not (0) or the file cannot be read (-1). */
static int sym_elf(const struct prof_mod *m, uint64_t *bias)
{
	struct stat st;
	if (m->path[0] != '/' || stat(m->path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int r = -1;
	size_t nph;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0) {
		r = 1;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t lo = ph.p_offset & ~(uint64_t)0xfff;
			if (m->offset >= lo && m->offset < ph.p_offset + ph.p_filesz) {
				*bias = m->start - ((ph.p_vaddr & ~(uint64_t)0xfff) + (m->offset - lo));
				break;
			}
		}
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(e, &id);
		if (m->build_id_len && (n != (ssize_t)m->build_id_len || memcmp(id, m->build_id, (size_t)n) != 0))
			r = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

static int sym_cmp_range(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The functions libmeminst exports (its dynamic symbol table): they are
** the program's calls it interposes; the rest of its code is its own. */
static void sym_exports(struct sym_mod *sm, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)) ||
		    !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		sm->exports = rd_xcalloc(n + 1, sizeof *sm->exports);
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_shndx != SHN_UNDEF && sym.st_value) {
				sm->exports[sm->nexports][0] = sym.st_value;
				sm->exports[sm->nexports++][1] = sym.st_value + (sym.st_size ? sym.st_size : 1);
			}
		}
		qsort(sm->exports, sm->nexports, sizeof *sm->exports, sym_cmp_range);
		break;
	}
	if (e)
		elf_end(e);
	close(fd);
}

static bool sym_exported(const struct sym_mod *m, uint64_t addr)
{
	uint64_t a = addr - m->bias;
	size_t lo = rd_count_upto(m->exports, m->nexports, sizeof *m->exports, a);
	return lo && a < m->exports[lo - 1][1];
}

static const char *sym_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void sym_modules(prof_symtab_t *st, const struct prof_trace *tr, const struct rd_opts *o,
			bool no_files)
{
	struct rd_module *im = rd_xcalloc(tr->nmods + 1, sizeof *im);
	size_t nim = 0;
	st->mods = rd_xcalloc(tr->nmods + 1, sizeof *st->mods);
	for (size_t i = 0; i < tr->nmods; i++) {
		const struct prof_mod *m = &tr->mods[i];
		struct sym_mod *sm = &st->mods[st->nmods++];
		*sm = (struct sym_mod){.start = m->start, .end = m->end, .bias = m->start - m->offset,
				      .base = sym_basename(m->path)};
		sm->base = rd_pool_str(st->pool, sm->base);
		int ok = no_files ? -1 : sym_elf(m, &sm->bias);
		if (ok == 0) {
			/* once per file, not per mapping */
			bool told = false;
			for (size_t j = 0; j < i; j++)
				told |= strcmp(tr->mods[j].path, m->path) == 0;
			if (!told)
				rd_errf(o->err, "inspect: warning: %s: its build-id differs from the traced one; "
					"its functions are shown as %s+offset\n", m->path, sm->base);
		}
		sm->meminst = strncmp(sm->base, "libmeminst", 10) == 0;
		if (ok != 1)
			continue;
		if (sm->meminst)
			sym_exports(sm, m->path);
		sm->named = true;
		bool dup = false;
		for (size_t j = 0; j < nim; j++)
			dup |= strcmp(im[j].path, m->path) == 0 && im[j].base == sm->bias;
		if (!dup)
			im[nim++] = (struct rd_module){sm->bias, rd_pool_str(st->pool, m->path), NULL};
	}
	st->syms = nim ? rd_syms_new(im, nim) : NULL;
	free(im);
}

static void sym_add(prof_symtab_t *st, uint64_t addr, const char *name)
{
	if (st->nfuncs == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 256;
		st->funcs = rd_xrealloc(st->funcs, st->cap * sizeof *st->funcs);
	}
	st->funcs[st->nfuncs++] = (struct prof_func){.addr = addr, .name = name};
}

prof_symtab_t *prof_symtab_new(const struct prof_trace *tr, const struct rd_opts *o,
			       bool no_files, struct rd_pool *pool)
{
	prof_symtab_t *st = rd_xcalloc(1, sizeof *st);
	st->pool = pool;
	if (tr)
		sym_modules(st, tr, o, no_files);
	sym_add(st, ENG_FN_UNDEFINED, "undefined");
	sym_add(st, ENG_FN_SUSPEND, "suspend");
	sym_add(st, ENG_FN_ALLOC, "<alloc>");
	sym_add(st, ENG_FN_PENDING, "undefined"); /* settled before any display */
	sym_add(st, ENG_FN_TRACE_WAIT, "<trace-wait>");
	sym_add(st, ENG_FN_SNAPSHOT, "<snapshot>");
	sym_add(st, ENG_FN_PREEMPTED, "<preempted>");
	sym_add(st, ENG_FN_MEMINST, "<meminst>");
	return st;
}

static void sym_name(prof_symtab_t *st, struct prof_func *f)
{
	if (f->addr == PROF_FN_TRUNCATED || f->addr == PROF_FN_MEMINST) {
		f->name = f->addr == PROF_FN_TRUNCATED ? "[truncated]" : "<meminst>";
		return;
	}
	const struct sym_mod *m = NULL;
	for (size_t i = 0; i < st->nmods && !m; i++)
		if (f->addr >= st->mods[i].start && f->addr < st->mods[i].end)
			m = &st->mods[i];
	if (!m) {
		f->name = rd_pool_fmt(st->pool, "0x%llx", (unsigned long long)f->addr);
		return;
	}
	f->module = m->base;
	if (m->meminst)
		f->meminst = sym_exported(m, f->addr) ? 2 : 1;
	struct rd_sym s;
	/* the symboliser takes return addresses (it looks at site - 1) */
	if (m->named && st->syms && rd_syms_lookup(st->syms, f->addr + 1, &s) == 0) {
		if (s.func) {
			f->name = s.off == 1 ? rd_pool_str(st->pool, s.func)
					     : rd_pool_fmt(st->pool, "%s+0x%llx", s.func,
							     (unsigned long long)(s.off - 1));
			/* the tracer's hooks are exported but are meminst's own
			** work, not a call of the program's */
			if (f->meminst == 2 && !strncmp(s.func, "__cyg_profile_func_", 19))
				f->meminst = 1;
		}
		/* an exported name (the program's malloc, pthread_create) is
		** the program's call: named, but not placed in meminst's source */
		if (s.file && f->meminst != 2) {
			f->file = rd_pool_str(st->pool, s.file);
			f->line = s.line;
		}
		rd_sym_clear(&s);
		if (f->name)
			return;
	}
	f->name = rd_pool_fmt(st->pool, "%s+0x%llx", m->base, (unsigned long long)(f->addr - m->bias));
}

static uint64_t sym_mix(uint64_t x)
{
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ x >> 32;
}

static void sym_rehash(prof_symtab_t *st)
{
	free(st->hash);
	st->hcap = st->hcap ? 2 * st->hcap : 1024;
	st->hash = rd_xcalloc(st->hcap, sizeof *st->hash);
	for (size_t i = 0; i < st->nfuncs; i++) {
		size_t j = sym_mix(st->funcs[i].addr) & (st->hcap - 1);
		while (st->hash[j])
			j = (j + 1) & (st->hcap - 1);
		st->hash[j] = (uint32_t)i + 1;
	}
}

uint32_t prof_symtab_index(prof_symtab_t *st, uint64_t addr)
{
	if (addr <= ENG_FN_PSEUDO_MAX) /* added first, in order */
		return (uint32_t)addr;
	if (2 * (st->nfuncs + 1) > st->hcap)
		sym_rehash(st);
	size_t j = sym_mix(addr) & (st->hcap - 1);
	for (uint32_t v; (v = st->hash[j]) != 0; j = (j + 1) & (st->hcap - 1))
		if (st->funcs[v - 1].addr == addr)
			return v - 1;
	sym_add(st, addr, NULL);
	st->hash[j] = (uint32_t)st->nfuncs;
	sym_name(st, &st->funcs[st->nfuncs - 1]);
	return (uint32_t)st->nfuncs - 1;
}

uint64_t prof_symtab_entry(prof_symtab_t *st, uint64_t addr)
{
	if (addr <= ENG_FN_PSEUDO_MAX)
		return addr;
	struct sym_mod *m = NULL;
	for (size_t i = 0; i < st->nmods && !m; i++)
		if (addr >= st->mods[i].start && addr < st->mods[i].end)
			m = &st->mods[i];
	if (!m || !m->named)
		return addr;
	struct rd_sym s = {0};
	uint64_t entry = 0;
	if (st->syms && rd_syms_lookup(st->syms, addr + 1, &s) == 0 && s.func && s.off >= 1 &&
	    s.off - 1 <= addr)
		entry = addr - (s.off - 1);
	rd_sym_clear(&s);
	if (!entry)
		entry = rd_syms_fde_entry(st->syms, addr, NULL, NULL);
	return entry ? entry : addr;
}

/* The symbol at a return address or pc of a named module (looked up at
** addr + 1 like every sampled frame); false for pseudo functions and
** addresses outside the modules. */
static bool symtab_lookup(prof_symtab_t *st, uint64_t addr, struct rd_sym *s)
{
	if (addr <= ENG_FN_PSEUDO_MAX || !st->syms)
		return false;
	const struct sym_mod *m = NULL;
	for (size_t i = 0; i < st->nmods && !m; i++)
		if (addr >= st->mods[i].start && addr < st->mods[i].end)
			m = &st->mods[i];
	return m && m->named && rd_syms_lookup(st->syms, addr + 1, s) == 0;
}

int prof_symtab_line(prof_symtab_t *st, uint64_t addr, const char **file)
{
	if (file)
		*file = NULL;
	struct rd_sym s;
	if (!symtab_lookup(st, addr, &s))
		return 0;
	int line = s.file ? s.line : 0;
	if (file && s.file)
		*file = rd_pool_str(st->pool, s.file);
	rd_sym_clear(&s);
	return line;
}

size_t prof_symtab_inline(prof_symtab_t *st, uint64_t addr, struct prof_iframe *out, size_t max)
{
	struct rd_sym s;
	if (!max || !symtab_lookup(st, addr, &s))
		return 0;
	size_t n = s.nchain < max ? s.nchain : max;
	for (size_t i = 0; i < n; i++) /* the innermost kept when the chain is longer */
		out[i] = (struct prof_iframe){s.chain[i].func ? rd_pool_str(st->pool, s.chain[i].func) : NULL,
					     s.chain[i].file ? rd_pool_str(st->pool, s.chain[i].file) : NULL,
					     s.chain[i].line};
	rd_sym_clear(&s);
	return n;
}

const struct prof_func *prof_symtab_funcs(const prof_symtab_t *st, size_t *n)
{
	*n = st->nfuncs;
	return st->funcs;
}

void prof_symtab_free(prof_symtab_t *st)
{
	if (!st)
		return;
	if (st->syms)
		rd_syms_free(st->syms);
	for (size_t i = 0; i < st->nmods; i++)
		free(st->mods[i].exports);
	free(st->mods);
	free(st->funcs);
	free(st->hash);
	free(st);
}
