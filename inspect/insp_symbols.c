/*
** insp_symbols.c — offline symbolisation of call sites with elfutils libdwfl.
**
** An automatic type is an allocation call site: the return address of the
** call into the allocator, in the address space of the process that wrote
** the snapshot.  The snapshot's module table lists the loaded files with
** their load bias and build-id.  Each file is reported to one Dwfl at its
** bias (reported once, then cached: libdwfl keeps the symbol tables and
** DWARF line tables it has read), and a site is resolved to the function
** that contains it and, when debug information is there, the source line.
**
** A module whose file is gone, is not a regular file (never open a FIFO or
** a device named by a database) or whose build-id differs from the stored
** one is not used: its sites keep the name stored at capture time.
** The line is looked up at site - 1, inside the call instruction, so that
** a call at the end of a block reports its own line, not the next one.
*/
#include "insp_int.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* From the C++ runtime (libstdc++), declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct syms_mod {
	Dwfl_Module *mod;
	bool usable;
};

struct insp_syms {
	Dwfl *dwfl;
	struct syms_mod *mods;
	size_t n;
};

static char *syms_debuginfo_path;

static const Dwfl_Callbacks syms_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &syms_debuginfo_path,
};

char *insp_demangle(const char *name)
{
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

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

static void syms_report(struct insp_syms *s, const struct insp_module *m)
{
	struct stat st;
	if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	/* The base is the load bias: add the first segment's p_vaddr. */
	Dwfl_Module *mod = dwfl_report_elf(s->dwfl, syms_basename(m->path), m->path, -1, m->base, true);
	if (!mod)
		return;
	s->mods[s->n++] = (struct syms_mod){mod, syms_same_build_id(mod, m->build_id)};
}

insp_syms_t *insp_syms_new(const struct insp_module *mods, size_t n)
{
	struct insp_syms *s = insp_xcalloc(1, sizeof *s);
	s->mods = insp_xcalloc(n ? n : 1, sizeof *s->mods);
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

static bool syms_usable(const struct insp_syms *s, Dwfl_Module *mod)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->mods[i].mod == mod)
			return s->mods[i].usable;
	return false;
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

int insp_syms_lookup(insp_syms_t *s, uint64_t site, struct insp_sym *sym)
{
	*sym = (struct insp_sym){0};
	if (!s->dwfl || site == 0)
		return -1;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, site - 1);
	if (!mod || !syms_usable(s, mod))
		return -1;
	GElf_Off off = 0;
	GElf_Sym es;
	const char *name = dwfl_module_addrinfo(mod, site - 1, &off, &es, NULL, NULL, NULL);
	if (name) {
		sym->func = insp_demangle(name);
		if (!sym->func)
			sym->func = insp_xstrdup(name);
		sym->off = off + 1; /* the offset of site itself */
	}
	sym->module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	Dwfl_Line *line = dwfl_module_getsrc(mod, site - 1);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL)
				: syms_line_by_units(mod, site - 1, &lineno);
	if (file) {
		sym->file = insp_xstrdup(file);
		sym->line = lineno;
	}
	return sym->func || sym->file ? 0 : -1;
}

void insp_sym_clear(struct insp_sym *sym)
{
	free(sym->func);
	free(sym->file);
	*sym = (struct insp_sym){0};
}

void insp_syms_free(insp_syms_t *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->mods);
	free(s);
}
