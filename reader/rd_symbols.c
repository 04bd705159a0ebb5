/*
** rd_symbols.c — offline symbolisation of call sites with elfutils libdwfl.
**
** An automatic type is an allocation call site: the return address of the
** call into the allocator, in the address space of the process that wrote
** the snapshot.  The snapshot's module table lists the loaded files with
** their load bias and build-id.  Each file is reported to one Dwfl at its
** bias (reported once, then cached: libdwfl keeps the symbol tables and
** DWARF line tables it has read), and a site is resolved to the function
** that contains it (by binary search in the module's symbols, sorted once:
** rd_symtab.c) and, when debug information is there, the source line.
**
** A module whose file is gone, is not a regular file (never open a FIFO or
** a device named by a database) or whose build-id differs from the stored
** one is not used: its sites keep the name stored at capture time.
** The line is looked up at site - 1, inside the call instruction, so that
** a call at the end of a block reports its own line, not the next one.
**
** Code inlined into the function (an -O1 C++ program's allocations are
** nearly all inside inlined std:: templates) gets its inline chain from the
** DWARF scopes that cover the address: each DW_TAG_inlined_subroutine names
** the inlined function and, in DW_AT_call_file/DW_AT_call_line, the line of
** the caller that it was inlined at.  The scopes come from rd_scopes.c,
** which reads each compile unit's DIE tree once per module (libdw's
** dwarf_getscopes walks the unit again for every address).
**
** A program that reads snapshots of one process again and again (inspect
** serve: each scrape a new snapshot of the same modules) calls
** rd_syms_keep(true): the last rd_syms is then kept when freed, given back
** by rd_syms_new for the same module table (each module's path, bias and
** build-id), with every lookup it made remembered.  The DWARF scopes of a
** thousand sites cost a few tens of milliseconds of CPU (bench/serve.sh); a
** site looked up again costs a hash probe and a copy.
*/
#include "rd_int.h"
#include "rd_plt.h"
#include "rd_scopes.h"
#include "rd_symtab.h"
#include "meminst-wrappers.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct syms_mod {
	Dwfl_Module *mod;
	rd_scopes_t *scopes; /* its units' code scopes, read on first use */
	rd_symtab_t *symtab; /* its symbols by address, read on first use */
	bool usable;
	bool system; /* a system library: all its code is system code */
	/* the starts of its FDEs, sorted, in the file's addresses
	** (syms_fde_table): read on the first rd_syms_fde_entry */
	bool fde_read;
	uint64_t *fde;
	size_t nfde;
	/* its PLT stubs (rd_plt.c), read on the first lookup; NULL: none */
	bool plt_read;
	rd_plt_t *plt;
	GElf_Addr plt_bias;
};

/* A module looked at alone: one unloaded before the snapshot. */
struct syms_alone {
	const struct rd_module *m;
	Dwfl *dwfl;
	struct syms_mod mod;
};

/* A lookup remembered (rd_syms_keep): its result and, when 0, the symbol. */
struct syms_memo {
	uint64_t site;
	int r;
	bool used;
	struct rd_sym sym;
};

struct rd_syms {
	Dwfl *dwfl;
	struct syms_mod *mods;
	size_t n;
	struct syms_alone *alone;
	size_t nalone;
	unsigned users;              /* rd_syms_new's callers not yet freed */
	struct rd_module *keyed;     /* kept: the module table, copied */
	size_t nkeyed;
	struct syms_memo *memo;      /* kept: open addressing by site */
	size_t memo_cap, memo_n;
};

static bool syms_keep;
static struct rd_syms *syms_kept;

static char *syms_debuginfo_path;

static const Dwfl_Callbacks syms_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &syms_debuginfo_path,
};

static const char *syms_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The stored build-id (hex text) against the file's. */
static bool syms_same_build_id(Dwfl_Module *mod, const char *want)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (!want || !*want)
		return true; /* nothing to compare with */
	if (n <= 0 || strlen(want) != (size_t)n * 2)
		return false;
	for (int i = 0; i < n; i++) {
		char hex[3];
		snprintf(hex, sizeof hex, "%02x", bits[i]);
		if (strncasecmp(hex, want + 2 * i, 2) != 0)
			return false;
	}
	return true;
}

/* Report m's file to dwfl at its load bias: its entry in *out, false when
** the file is not there. */
static bool syms_report_to(Dwfl *dwfl, const struct rd_module *m, struct syms_mod *out)
{
	struct stat st;
	if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	/* The base is the load bias: add the first segment's p_vaddr. */
	Dwfl_Module *mod = dwfl_report_elf(dwfl, syms_basename(m->path), m->path, -1, m->base, true);
	if (!mod)
		return false;
	/* libmeminst's own frames (its pthread_create wrapper) are not the
	** program's: a type is named after the program's line that called it */
	bool ours = strncmp(syms_basename(m->path), "libmeminst.so", 13) == 0;
	*out = (struct syms_mod){.mod = mod, .scopes = rd_scopes_new(),
				 .usable = syms_same_build_id(mod, m->build_id),
				 .system = ours || rd_path_is_system(m->path)};
	return true;
}

static void syms_report(struct rd_syms *s, const struct rd_module *m)
{
	if (syms_report_to(s->dwfl, m, &s->mods[s->n]))
		s->n++;
}

static bool syms_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool syms_same_modules(const struct rd_syms *s, const struct rd_module *mods, size_t n)
{
	if (s->nkeyed != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->keyed[i].base != mods[i].base || !syms_same_str(s->keyed[i].path, mods[i].path) ||
		    !syms_same_str(s->keyed[i].build_id, mods[i].build_id))
			return false;
	return true;
}

static void syms_destroy(struct rd_syms *s);

/* Keep s (rd_syms_keep): its module table copied, its lookups remembered
** from now on; the one kept before goes once unused. */
static void syms_keep_this(struct rd_syms *s, const struct rd_module *mods, size_t n)
{
	s->keyed = rd_xcalloc(n ? n : 1, sizeof *s->keyed);
	for (size_t i = 0; i < n; i++)
		s->keyed[i] = (struct rd_module){mods[i].base, mods[i].path ? rd_xstrdup(mods[i].path) : NULL,
						 mods[i].build_id ? rd_xstrdup(mods[i].build_id) : NULL};
	s->nkeyed = n;
	struct rd_syms *old = syms_kept;
	syms_kept = s;
	if (old && !old->users)
		syms_destroy(old);
}

rd_syms_t *rd_syms_new(const struct rd_module *mods, size_t n)
{
	if (syms_kept && syms_same_modules(syms_kept, mods, n)) {
		syms_kept->users++;
		return syms_kept;
	}
	struct rd_syms *s = rd_xcalloc(1, sizeof *s);
	s->users = 1;
	if (syms_keep)
		syms_keep_this(s, mods, n);
	s->mods = rd_xcalloc(n ? n : 1, sizeof *s->mods);
	s->dwfl = dwfl_begin(&syms_callbacks);
	if (!s->dwfl)
		return s;
	dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < n; i++)
		syms_report(s, &mods[i]);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		dwfl_end(s->dwfl);
		s->dwfl = NULL;
	}
	return s;
}

static struct syms_mod *syms_find(struct rd_syms *s, Dwfl_Module *mod)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	return NULL;
}

/*
** The line of an address by walking the compile units.  libdwfl finds a
** unit through .debug_aranges, which clang does not emit (gcc does); every
** unit still says which addresses it covers, so ask each one.
*/
static const char *syms_line_by_units(Dwfl_Module *mod, Dwarf_Addr addr, int *lineno)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = NULL;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL) {
		if (dwarf_haspc(cu, addr - bias) <= 0)
			continue;
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - bias);
		if (l && dwarf_lineno(l, lineno) == 0)
			return dwarf_linesrc(l, NULL, NULL);
		return NULL;
	}
	return NULL;
}

/* The unit that covers addr: by .debug_aranges, else by asking each unit. */
static Dwarf_Die *syms_unit(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(mod, cu, bias)) != NULL)
		if (dwarf_haspc(cu, addr - *bias) > 0)
			return cu;
	return NULL;
}

/* The name of a subprogram or inlined subroutine, through its abstract
** origin and specification: the demangled linkage name, else DW_AT_name. */
static char *syms_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!ln)
		ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	char *d = ln ? rd_demangle(ln) : NULL;
	if (d)
		return d;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	char *r = n ? rd_xstrdup(n) : ln ? rd_xstrdup(ln) : NULL;
	if (!rd_full_names())
		rd_fold_templates(r);
	return r;
}

/* The file and line an inlined subroutine was called from. */
static bool syms_call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word f, l;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &f) != 0 ||
	    dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &l) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || f >= nfiles)
		return false;
	*file = dwarf_filesrc(files, f, NULL, NULL);
	*line = (int)l;
	return *file != NULL;
}

static void syms_push(struct rd_sym *sym, char *func, const char *file, int line)
{
	sym->chain = rd_xrealloc(sym->chain, (sym->nchain + 1) * sizeof *sym->chain);
	sym->chain[sym->nchain++] = (struct rd_frame){func, file ? rd_xstrdup(file) : NULL, line};
}

/* The scopes around addr, innermost first (rd_scopes_at), in path (of
** RD_SCOPES_DEPTH), and in *cu the unit that covers it: their count. */
static size_t syms_scopes(const struct syms_mod *sm, Dwarf_Addr addr, Dwarf_Die **cu, Dwarf_Die **path)
{
	Dwarf_Addr bias;
	*cu = syms_unit(sm->mod, addr, &bias);
	if (!*cu || dwarf_haspc(*cu, addr - bias) <= 0)
		return 0;
	return rd_scopes_at(sm->scopes, *cu, addr - bias, path, RD_SCOPES_DEPTH);
}

static bool syms_is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* Fill sym->chain from the n scopes of the unit cu around its address,
** starting from sym's own line: each inlined subroutine, then the
** subprogram it was inlined into. */
static void syms_chain(Dwarf_Die *cu, Dwarf_Die **scopes, size_t n, struct rd_sym *sym)
{
	const char *file = sym->file;
	int line = sym->line;
	for (size_t i = 0; i < n; i++) {
		if (!syms_is_function(scopes[i]))
			continue;
		if (dwarf_tag(scopes[i]) == DW_TAG_subprogram) {
			/* The symbol's name has the parameters a static function's
			** DW_AT_name lacks. */
			syms_push(sym, sym->func ? rd_xstrdup(sym->func) : syms_die_name(scopes[i]), file, line);
			break;
		}
		char *name = syms_die_name(scopes[i]);
		/* The caller's line is read before pushing: file may point into
		** the unit's file table, which lives as long as the Dwfl. */
		const char *cfile = NULL;
		int cline = 0;
		bool called = syms_call_site(cu, scopes[i], &cfile, &cline);
		syms_push(sym, name, file, line);
		if (!called)
			break;
		file = cfile;
		line = cline;
	}
}

/* Lexically: "/usr/bin/../lib/gcc/x/13/../../../../include/c++/13" is
** /usr/include/c++/13, which is how clang records the C++ headers. */
static void syms_normalise(const char *path, char *out, size_t size)
{
	size_t n = 0;
	out[0] = 0;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[--n] != '/')
				;
			out[n] = 0;
		} else if (len > 0 && !(len == 1 && p[0] == '.') && n + len + 2 < size) {
			out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
			out[n] = 0;
		}
		p += len;
		if (*p == '/')
			p++;
	}
}

bool rd_path_is_system(const char *path)
{
	static const char *const roots[] = {"/usr/include/", "/usr/lib/", "/usr/lib64/", "/lib/",
					    "/lib64/", "/usr/libexec/"};
	if (!path || path[0] != '/')
		return false;
	char norm[4096];
	syms_normalise(path, norm, sizeof norm);
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (strncmp(norm, roots[i], strlen(roots[i])) == 0)
			return true;
	return false;
}

static const char *syms_line(Dwfl_Module *mod, Dwarf_Addr addr, int *lineno)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	return line ? dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL) : syms_line_by_units(mod, addr, lineno);
}

/* A site in a stub of the module's PLT: named `puts@plt` after the
** function the stub jumps to (rd_plt.c), `.plt` for the lazy binder's
** part, as perf names them; no symbol covers the stubs (the nearest one
** below is _init, a stripped module's unwind entry the whole section). */
static bool syms_plt(struct syms_mod *sm, uint64_t site, struct rd_sym *sym)
{
	if (!sm->plt_read) {
		sm->plt_read = true;
		sm->plt = rd_plt_new(dwfl_module_getelf(sm->mod, &sm->plt_bias));
	}
	const char *name;
	GElf_Addr target;
	GElf_Off off, at;
	if (!sm->plt || !rd_plt_find(sm->plt, site - 1 - sm->plt_bias, &name, &target, &off))
		return false;
	if (!name && target) { /* the ifunc whose resolver fills the slot */
		if (!sm->symtab)
			sm->symtab = rd_symtab_new(sm->mod);
		name = rd_symtab_find(sm->symtab, sm->mod, target + sm->plt_bias, &at);
		name = name && at == 0 ? name : NULL;
	}
	char *plain = name ? strndup(name, strcspn(name, "@")) : NULL; /* no version */
	char *bare = plain ? rd_demangle(plain) : NULL;
	const char *shown = bare ? bare : plain;
	size_t len = shown ? strlen(shown) + sizeof "@plt" : sizeof ".plt";
	sym->func = rd_xcalloc(1, len);
	snprintf(sym->func, len, "%s%s", shown ? shown : ".plt", shown ? "@plt" : "");
	free(bare);
	free(plain);
	sym->off = off + 1; /* the offset of site itself */
	sym->module = dwfl_module_info(sm->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	return true;
}

/* Resolve site in the module sm (found for it). */
static int syms_lookup_mod(struct syms_mod *sm, uint64_t site, struct rd_sym *sym)
{
	Dwfl_Module *mod = sm->mod;
	if (!sm->usable)
		return -1;
	sym->system_module = sm->system;
	if (syms_plt(sm, site, sym))
		return 0;
	if (!sm->symtab)
		sm->symtab = rd_symtab_new(mod);
	GElf_Off off = 0;
	const char *name = rd_symtab_find(sm->symtab, mod, site - 1, &off);
	if (name) {
		/* without its version (__libc_start_main@@GLIBC_2.34): the
		** function's name, as every display and export shows it */
		char bare[1024];
		size_t len = strcspn(name, "@");
		if (name[len] && len > 0 && len < sizeof bare) {
			memcpy(bare, name, len);
			bare[len] = 0;
			name = bare;
		}
		sym->func = rd_demangle(name);
		if (!sym->func)
			sym->func = rd_xstrdup(name);
		sym->off = off + 1; /* the offset of site itself */
	}
	sym->module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* Whether a function of the debug information covers the site: code
	** without its own line information (_start, assembly, a library's
	** code built without -g in a module with some) gets no line then,
	** rather than the nearest line of another function, which libdw's
	** line table gives for it. */
	Dwarf_Die *cu, *scopes[RD_SCOPES_DEPTH];
	size_t n = syms_scopes(sm, site - 1, &cu, scopes);
	bool in_function = false;
	for (size_t i = 0; i < n && !in_function; i++)
		in_function = syms_is_function(scopes[i]);
	int lineno = 0;
	const char *file = in_function ? syms_line(mod, site - 1, &lineno) : NULL;
	if (file) {
		sym->file = rd_xstrdup(file);
		sym->line = lineno;
		syms_chain(cu, scopes, n, sym);
	}
	return sym->func || sym->file ? 0 : -1;
}

static void syms_copy(struct rd_sym *to, const struct rd_sym *from)
{
	*to = *from; /* module: the Dwfl's, which lives as long as the memo */
	to->func = from->func ? rd_xstrdup(from->func) : NULL;
	to->file = from->file ? rd_xstrdup(from->file) : NULL;
	to->chain = from->nchain ? rd_xcalloc(from->nchain, sizeof *to->chain) : NULL;
	for (size_t i = 0; i < from->nchain; i++)
		to->chain[i] = (struct rd_frame){from->chain[i].func ? rd_xstrdup(from->chain[i].func) : NULL,
						 from->chain[i].file ? rd_xstrdup(from->chain[i].file) : NULL,
						 from->chain[i].line};
}

/* The memo's slot of site: its entry, or the free slot where it goes. */
static struct syms_memo *syms_memo_slot(struct syms_memo *v, size_t cap, uint64_t site)
{
	size_t j = (size_t)((site * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
	while (v[j].used && v[j].site != site)
		j = (j + 1) & (cap - 1);
	return &v[j];
}

static void syms_memo_put(struct rd_syms *s, uint64_t site, int r, const struct rd_sym *sym)
{
	if (2 * (s->memo_n + 1) > s->memo_cap) {
		size_t cap = s->memo_cap ? 2 * s->memo_cap : 256;
		struct syms_memo *v = rd_xcalloc(cap, sizeof *v);
		for (size_t i = 0; i < s->memo_cap; i++)
			if (s->memo[i].used)
				*syms_memo_slot(v, cap, s->memo[i].site) = s->memo[i];
		free(s->memo);
		s->memo = v;
		s->memo_cap = cap;
	}
	struct syms_memo *m = syms_memo_slot(s->memo, s->memo_cap, site);
	*m = (struct syms_memo){.site = site, .r = r, .used = true};
	if (!r)
		syms_copy(&m->sym, sym);
	s->memo_n++;
}

int rd_syms_lookup(rd_syms_t *s, uint64_t site, struct rd_sym *sym)
{
	*sym = (struct rd_sym){0};
	if (!s->dwfl || site == 0)
		return -1;
	if (s->memo_n) {
		const struct syms_memo *m = syms_memo_slot(s->memo, s->memo_cap, site);
		if (m->used) {
			if (!m->r)
				syms_copy(sym, &m->sym);
			return m->r;
		}
	}
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, site - 1);
	struct syms_mod *sm = mod ? syms_find(s, mod) : NULL;
	int r = sm ? syms_lookup_mod(sm, site, sym) : -1;
	if (s->keyed)
		syms_memo_put(s, site, r, sym);
	return r;
}

/* The size of a pointer in .eh_frame_hdr's encoding (DW_EH_PE_*: the low
** nibble), 0 for one this reader does not take. */
static size_t syms_eh_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x00: case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

static int syms_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The starts of the module's FDEs, sorted, in the file's addresses: the
** binary-search table of .eh_frame_hdr (PT_GNU_EH_FRAME), which every
** linker writes for the unwinder and strip keeps.  Its entries are pairs
** of 4-byte offsets from the table's own address (DW_EH_PE_datarel |
** sdata4, the only encoding linkers write); anything else leaves the
** module without function bounds. */
static void syms_fde_table(struct syms_mod *sm, Elf *elf)
{
	size_t nph;
	const unsigned char *id = (const unsigned char *)elf_getident(elf, NULL);
	if (elf_getphdrnum(elf, &nph) != 0 || !id ||
	    id[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		const unsigned char *h = d ? d->d_buf : NULL;
		size_t skip = h && d->d_size >= 4 ? syms_eh_size(h[1]) : 0;
		if (!skip || h[0] != 1 || h[1] == 0xff || syms_eh_size(h[2]) != 4 || h[3] != 0x3b ||
		    d->d_size < 4 + skip + 4)
			return;
		uint32_t n;
		memcpy(&n, h + 4 + skip, 4);
		const unsigned char *t = h + 4 + skip + 4;
		if (n > (d->d_size - (size_t)(t - h)) / 8)
			return;
		sm->fde = rd_xcalloc((size_t)n + 1, sizeof *sm->fde);
		for (uint32_t k = 0; k < n; k++) {
			int32_t start;
			memcpy(&start, t + 8 * (size_t)k, 4);
			sm->fde[sm->nfde++] = ph.p_vaddr + (uint64_t)(int64_t)start;
		}
		qsort(sm->fde, sm->nfde, sizeof *sm->fde, syms_cmp_u64); /* sorted already, as a rule */
		return;
	}
}

/* The table gives the last FDE start at or below the address; libdw's
** lookup of the address's frame says whether that FDE reaches it (not a
** gap between functions, such as code written without unwind
** information). */
uint64_t rd_syms_fde_entry(rd_syms_t *s, uint64_t pc, uint64_t *file_entry, const char **module)
{
	Dwfl_Module *mod = s && s->dwfl ? dwfl_addrmodule(s->dwfl, pc) : NULL;
	struct syms_mod *sm = mod ? syms_find(s, mod) : NULL;
	GElf_Addr bias = 0;
	Elf *elf = sm && sm->usable ? dwfl_module_getelf(mod, &bias) : NULL;
	if (!elf)
		return 0;
	if (!sm->fde_read) {
		sm->fde_read = true;
		syms_fde_table(sm, elf);
	}
	uint64_t a = pc - bias;
	size_t lo = rd_count_upto(sm->fde, sm->nfde, sizeof *sm->fde, a);
	Dwarf_Addr cfi_bias;
	Dwarf_CFI *cfi = lo ? dwfl_module_eh_cfi(mod, &cfi_bias) : NULL;
	Dwarf_Frame *fr = NULL;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - cfi_bias, &fr) != 0)
		return 0;
	free(fr);
	if (file_entry)
		*file_entry = sm->fde[lo - 1];
	if (module)
		*module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	return sm->fde[lo - 1] + bias;
}

/* The module m alone, in a Dwfl of its own (reported on first use). */
static struct syms_mod *syms_alone(struct rd_syms *s, const struct rd_module *m)
{
	for (size_t i = 0; i < s->nalone; i++)
		if (s->alone[i].m == m)
			return s->alone[i].dwfl ? &s->alone[i].mod : NULL;
	s->alone = rd_xrealloc(s->alone, (s->nalone + 1) * sizeof *s->alone);
	struct syms_alone *a = &s->alone[s->nalone++];
	*a = (struct syms_alone){m, dwfl_begin(&syms_callbacks), {0}};
	if (a->dwfl) {
		dwfl_report_begin(a->dwfl);
		bool ok = syms_report_to(a->dwfl, m, &a->mod);
		if (dwfl_report_end(a->dwfl, NULL, NULL) != 0 || !ok) {
			dwfl_end(a->dwfl);
			a->dwfl = NULL;
		}
	}
	return a->dwfl ? &a->mod : NULL;
}

int rd_syms_lookup_in(rd_syms_t *s, const struct rd_module *m, uint64_t site, struct rd_sym *sym)
{
	*sym = (struct rd_sym){0};
	struct syms_mod *sm = site ? syms_alone(s, m) : NULL;
	Dwarf_Addr low = 0, high = 0;
	if (!sm || !dwfl_module_info(sm->mod, NULL, &low, &high, NULL, NULL, NULL, NULL) || site - 1 < low ||
	    site - 1 >= high)
		return -1; /* not a site of that file: the stored name stays */
	return syms_lookup_mod(sm, site, sym);
}

void rd_sym_clear(struct rd_sym *sym)
{
	free(sym->func);
	free(sym->file);
	for (size_t i = 0; i < sym->nchain; i++) {
		free(sym->chain[i].func);
		free(sym->chain[i].file);
	}
	free(sym->chain);
	*sym = (struct rd_sym){0};
}

int rd_sym_user_frame(const struct rd_sym *sym)
{
	if (sym->system_module || !sym->nchain)
		return -1;
	const struct rd_frame *c = sym->chain;
	if (c[0].file && rd_path_is_system(c[0].file)) {
		/* Inside std:: templates: the user's frame that called into them. */
		for (size_t i = 1; i < sym->nchain; i++)
			if (c[i].file && !rd_path_is_system(c[i].file))
				return (int)i;
		return -1;
	}
	/* The allocation call is in the user's code itself: the line of that
	** call (a malloc in a function inlined into its caller is named after
	** its own line, as the exports name it), unless it is inside an inlined
	** allocation wrapper of the built-in list (a static inline xmalloc):
	** then the frame that called the wrapper. */
	for (size_t i = 0; i < sym->nchain; i++)
		if (c[i].file && !rd_path_is_system(c[i].file) &&
		    (i + 1 == sym->nchain || !c[i].func || !meminst_wrapper(c[i].func)))
			return (int)i;
	return -1;
}

/* What was read of a module (not its Dwfl's part). */
static void syms_mod_free(struct syms_mod *sm)
{
	rd_scopes_free(sm->scopes);
	rd_symtab_free(sm->symtab);
	free(sm->fde);
	rd_plt_free(sm->plt);
}

/* The modules looked at alone, and their Dwfls. */
static void syms_alone_free(struct rd_syms *s)
{
	for (size_t i = 0; i < s->nalone; i++) {
		if (s->alone[i].dwfl)
			dwfl_end(s->alone[i].dwfl);
		syms_mod_free(&s->alone[i].mod);
	}
	free(s->alone);
}

/* A user done with s: kept, it stays (its modules looked at alone are
** the session's, and go); else it goes with its last user. */
void rd_syms_free(rd_syms_t *s)
{
	if (--s->users)
		return;
	if (s != syms_kept) {
		syms_destroy(s);
		return;
	}
	syms_alone_free(s);
	s->alone = NULL;
	s->nalone = 0;
}

void rd_syms_keep(bool on)
{
	syms_keep = on;
	if (!on && syms_kept) {
		struct rd_syms *s = syms_kept;
		syms_kept = NULL;
		if (!s->users)
			syms_destroy(s);
	}
}

static void syms_destroy(struct rd_syms *s)
{
	for (size_t i = 0; i < s->memo_cap; i++)
		if (s->memo[i].used)
			rd_sym_clear(&s->memo[i].sym);
	free(s->memo);
	for (size_t i = 0; i < s->nkeyed; i++) {
		free((char *)s->keyed[i].path);
		free((char *)s->keyed[i].build_id);
	}
	free(s->keyed);
	syms_alone_free(s);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->n; i++)
		syms_mod_free(&s->mods[i]);
	free(s->mods);
	free(s);
}
