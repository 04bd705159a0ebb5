/*
** test_symbols.c — offline symbolisation (rd_symbols.c) of call sites in
** this very test program: the module table names /proc/self/exe at its
** load bias, as libmeminst records it, and a site inside a function of
** this file must come back as that function and this file's name.  A wrong
** build-id or a missing file must fall back to the stored name.  Inline
** chains: a site three functions deep in always_inline code gets each
** function and the line it was called from, and the chains of this
** program's own code (the reader toolkit, built -O2) are the ones libdw's
** dwarf_getscopes gives, address by address.
*/
#include "ui.h"
#include "rd_symtab.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The function whose address the tests resolve; noinline and a body of
** its own so that it has a symbol and a line of its own. */
__attribute__((noinline)) int ut_sym_target(int x)
{
	return x * 3 + 1;
}

/* Three functions, the inner two always inlined: the return address of
** the call in the innermost is a site with an inline chain of three. */
static uint64_t ut_inl_site;
static int ut_inl_line[3];

__attribute__((noinline)) static void ut_inl_note(void)
{
	ut_inl_site = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) void ut_inl_inner(void)
{
	ut_inl_line[0] = __LINE__, ut_inl_note();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static inline __attribute__((always_inline)) void ut_inl_middle(void)
{
	ut_inl_line[1] = __LINE__, ut_inl_inner();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void ut_inl_outer(void)
{
	ut_inl_line[2] = __LINE__, ut_inl_middle();
	__asm__ volatile("" ::: "memory");
}

struct self {
	char path[PATH_MAX];
	uint64_t bias;
	char build_id[128];
};

static int self_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct self *s = arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the executable is the entry with an empty name */
	s->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const unsigned char *desc = (const unsigned char *)p + sizeof *n + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID)
				for (unsigned k = 0; k < n->n_descsz && k < 60; k++)
					sprintf(s->build_id + 2 * k, "%02x", desc[k]);
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static struct self self_module(void)
{
	struct self s = {0};
	ssize_t n = readlink("/proc/self/exe", s.path, sizeof s.path - 1);
	cr_assert_gt(n, 0);
	dl_iterate_phdr(self_phdr, &s);
	return s;
}

static uint64_t target_site(void)
{
	/* a return address a few bytes into the function, as a call inside it would give */
	return (uint64_t)(uintptr_t)&ut_sym_target + 4;
}

Test(symbols, resolves_a_function_of_this_program)
{
	struct self s = self_module();
	struct rd_module m = {s.bias, s.path, s.build_id[0] ? s.build_id : NULL};
	rd_syms_t *syms = rd_syms_new(&m, 1);
	struct rd_sym sym;
	cr_assert_eq(rd_syms_lookup(syms, target_site(), &sym), 0, "not resolved: %s at bias 0x%llx",
		     s.path, (unsigned long long)s.bias);
	cr_assert_str_eq(sym.func, "ut_sym_target");
	cr_assert_eq(sym.off, 4);
	cr_assert_str_eq(sym.module, strrchr(s.path, '/') + 1);
	cr_assert_not_null(sym.file, "no line information (built without -g?)");
	UI_HAS(sym.file, "test_symbols.c");
	cr_assert_gt(sym.line, 0);
	rd_sym_clear(&sym);
	cr_assert_neq(rd_syms_lookup(syms, 0x10, &sym), 0, "an address outside every module");
	rd_syms_free(syms);
}

Test(symbols, wrong_build_id_or_missing_file_is_not_used)
{
	struct self s = self_module();
	struct rd_module bad = {s.bias, s.path, "00112233445566778899aabbccddeeff00112233"};
	rd_syms_t *syms = rd_syms_new(&bad, 1);
	struct rd_sym sym;
	cr_assert_neq(rd_syms_lookup(syms, target_site(), &sym), 0, "a different build-id was trusted");
	rd_syms_free(syms);
	struct rd_module gone = {s.bias, "/nonexistent/module.so", NULL};
	syms = rd_syms_new(&gone, 1);
	cr_assert_neq(rd_syms_lookup(syms, target_site(), &sym), 0);
	rd_syms_free(syms);
	struct rd_module dev = {s.bias, "/dev/zero", NULL};
	syms = rd_syms_new(&dev, 1);
	cr_assert_neq(rd_syms_lookup(syms, target_site(), &sym), 0, "a device is never opened");
	rd_syms_free(syms);
}

Test(symbols, demangles_cxx_names)
{
	char *d = rd_demangle("_ZN3foo3barEi");
	cr_assert_str_eq(d, "foo::bar(int)");
	free(d);
	cr_assert_null(rd_demangle("main"));
	cr_assert_null(rd_demangle("_Znot a name"));
}

static void fold_is(const char *name, const char *want)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", name);
	rd_fold_templates(buf);
	cr_assert_str_eq(buf, want, "folding %s", name);
}

Test(symbols, folds_template_arguments)
{
	fold_is("std::map<std::string, int>::operator[](std::string const&)", "std::map<>::operator[](std::string const&)");
	fold_is("void std::vector<long, std::allocator<long> >::_M_realloc_insert<long const&>"
		"(__gnu_cxx::__normal_iterator<long*, std::vector<long, std::allocator<long> > >, long const&)",
		"std::vector<>::_M_realloc_insert<>(__gnu_cxx::__normal_iterator<>, long const&)");
	fold_is("std::_Rb_tree_iterator<std::pair<int const, int> > std::_Rb_tree<int, int>::_M_emplace_hint_unique<int>"
		"(std::_Rb_tree_const_iterator<int>, int&&)",
		"std::_Rb_tree<>::_M_emplace_hint_unique<>(std::_Rb_tree_const_iterator<>, int&&)");
	fold_is("unsigned long f<int>(int)", "f<>(int)");
	fold_is("(anonymous namespace)::g<int>(int)", "(anonymous namespace)::g<>(int)");
	fold_is("std::vector<int>::operator unsigned long<int>()", "std::vector<>::operator unsigned long<>()");
	/* operators keep their brackets */
	fold_is("std::ostream& std::operator<< <std::char_traits<char> >(std::basic_ostream<char>&, char const*)",
		"std::ostream& std::operator<< <>(std::basic_ostream<>&, char const*)");
	fold_is("bool operator< <int>(A<int> const&)", "bool operator< <>(A<> const&)");
	fold_is("void std::__cxx11::list<int>::_M_insert<int>(int&&)", "std::__cxx11::list<>::_M_insert<>(int&&)");
	fold_is("a::operator>>=(int)", "a::operator>>=(int)");
	fold_is("p<int>::operator->() const", "p<>::operator->() const");
	fold_is("x::operator<=>(x const&)", "x::operator<=>(x const&)");
	fold_is("my_operator<int>", "my_operator<>");
	/* brackets that do not balance: left whole */
	fold_is("x<(a>b)>", "x<(a>b)>");
	fold_is("f<int", "f<int");
	fold_is("plain(int)", "plain(int)");
	/* demangled names are folded unless --full-names */
	char *d = rd_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	cr_assert_str_eq(d, "std::vector<>::push_back(int const&)");
	free(d);
	rd_set_full_names(true);
	d = rd_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	cr_assert_str_eq(d, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(d);
	rd_set_full_names(false);
}

/* The label a type gets through the tables: resolved from the module
** table of the snapshot, or the stored (demangled) name. */
Test(symbols, type_labels_through_a_snapshot)
{
	struct self s = self_module();
	const char *db = ui_fixture("basic");
	char sql[8192], err[256];
	snprintf(sql, sizeof sql,
		 "INSERT INTO module VALUES (3, %llu, '%s', NULL);"
		 "INSERT INTO type VALUES (3, 5, 'somewhere+0x4 (test)', 1, %llu);"
		 "INSERT INTO type VALUES (3, 6, '_ZN3foo3barEi+0x10 (libfoo.so)', 1, 16);",
		 (unsigned long long)s.bias, s.path, (unsigned long long)target_site());
	cr_assert_eq(fx_exec(db, sql, err, sizeof err), 0, "%s", err);
	struct rd_opts o = {.out = stdout, .err = stderr};
	rd_db_t *h;
	cr_assert_eq(rd_db_open(db, &o, &h), 0);
	cr_assert_eq(rd_db_select(h, 3, RD_NEED_ANY), 0);
	struct rd_tags t;
	cr_assert_eq(rd_tags_load(h, &t), 0);
	const char *where;
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "ut_sym_target+0x4 (%s)", strrchr(s.path, '/') + 1);
	cr_assert_str_eq(rd_type_label(h, &t, 5, &where), want);
	cr_assert_not_null(where);
	UI_HAS(where, "test_symbols.c:");
	cr_assert_str_eq(rd_type_label(h, &t, 6, &where), "foo::bar(int)+0x10 (libfoo.so)");
	cr_assert_null(where);
	rd_tags_free(&t);
	cr_assert_eq(rd_tags_load(h, &t), 0);
	t.no_symbols = true;
	cr_assert_str_eq(rd_type_label(h, &t, 5, NULL), "somewhere+0x4 (test)", "--no-symbols keeps the stored name");
	rd_tags_free(&t);
	rd_db_close(h);
}

Test(symbols, inline_chain_names_each_function_and_its_call_line)
{
	struct self s = self_module();
	struct rd_module m = {s.bias, s.path, s.build_id[0] ? s.build_id : NULL};
	ut_inl_outer();
	rd_syms_t *syms = rd_syms_new(&m, 1);
	struct rd_sym sym;
	cr_assert_eq(rd_syms_lookup(syms, ut_inl_site, &sym), 0);
	cr_assert_str_eq(sym.func, "ut_inl_outer");
	cr_assert_eq(sym.nchain, 3, "an inline chain of %zu, not 3", sym.nchain);
	static const char *const names[] = {"ut_inl_inner", "ut_inl_middle", "ut_inl_outer"};
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(sym.chain[i].func, names[i], "level %zu", i);
		cr_assert_not_null(sym.chain[i].file);
		UI_HAS(sym.chain[i].file, "test_symbols.c");
		cr_assert_eq(sym.chain[i].line, ut_inl_line[i], "%s at line %d, not %d", names[i], sym.chain[i].line,
			     ut_inl_line[i]);
	}
	rd_sym_clear(&sym);
	rd_syms_free(syms);
}

/* The reference: the inline chain at pc as dwarf_getscopes and
** dwarf_getscopes_die give it, named as rd_symbols.c names a DIE. */
static char *ref_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	char *d = ln ? rd_demangle(ln) : NULL;
	if (d)
		return d;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	char *r = strdup(n ? n : ln ? ln : "?");
	rd_fold_templates(r);
	return r;
}

/* Compare sym's chain with dwarf_getscopes's at pc of the unit cu: 1 when
** the chain has inline levels, 0 when not; fails the test on a difference. */
static int ref_compare(Dwarf_Die *cu, Dwarf_Addr pc, const struct rd_sym *sym)
{
	Dwarf_Die *sc = NULL, inner;
	int n = dwarf_getscopes(cu, pc, &sc);
	bool in_function = false;
	for (int i = 0; i < n; i++)
		in_function |= dwarf_tag(&sc[i]) == DW_TAG_subprogram || dwarf_tag(&sc[i]) == DW_TAG_inlined_subroutine;
	cr_assert_eq(in_function, sym->file != NULL, "pc 0x%llx: in a function %d, but file %s", (unsigned long long)pc,
		     in_function, sym->file ? sym->file : "none");
	if (n > 0) {
		inner = sc[0];
		free(sc);
		sc = NULL;
		n = dwarf_getscopes_die(&inner, &sc);
	}
	size_t level = 0;
	int line = sym->line;
	for (int i = 0; i < n && sym->file; i++) {
		int tag = dwarf_tag(&sc[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		cr_assert_lt(level, sym->nchain, "pc 0x%llx: the chain stops at %zu", (unsigned long long)pc, level);
		cr_assert_eq(sym->chain[level].line, line, "pc 0x%llx level %zu", (unsigned long long)pc, level);
		char *name = tag == DW_TAG_subprogram && sym->func ? strdup(sym->func) : ref_name(&sc[i]);
		cr_assert_str_eq(sym->chain[level].func, name, "pc 0x%llx level %zu", (unsigned long long)pc, level);
		free(name);
		level++;
		Dwarf_Attribute a;
		Dwarf_Word l;
		if (tag == DW_TAG_subprogram || dwarf_formudata(dwarf_attr(&sc[i], DW_AT_call_line, &a), &l) != 0)
			break;
		line = (int)l;
	}
	free(sc);
	cr_assert_eq(level, sym->nchain, "pc 0x%llx: a chain of %zu, libdw's %zu", (unsigned long long)pc, sym->nchain,
		     level);
	return level > 1;
}

/* A Dwfl of its own with the file at path reported at bias, as
** rd_symbols.c reports it: the reference's; *mod its module (NULL when the
** file cannot be read). */
static Dwfl *ut_dwfl_of(const char *path, uint64_t bias, Dwfl_Module **mod)
{
	static char *debuginfo;
	static const Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
					  .find_debuginfo = dwfl_standard_find_debuginfo,
					  .section_address = dwfl_offline_section_address,
					  .debuginfo_path = &debuginfo};
	Dwfl *dwfl = dwfl_begin(&cb);
	cr_assert_not_null(dwfl);
	dwfl_report_begin(dwfl);
	*mod = dwfl_report_elf(dwfl, "m", path, -1, bias, true);
	dwfl_report_end(dwfl, NULL, NULL);
	return dwfl;
}

Test(symbols, inline_chains_are_libdws_address_by_address, .timeout = 600)
{
	struct self s = self_module();
	struct rd_module m = {s.bias, s.path, s.build_id[0] ? s.build_id : NULL};
	Dwfl_Module *mod;
	Dwfl *dwfl = ut_dwfl_of(s.path, s.bias, &mod);
	cr_assert_not_null(mod);
	/* every line-table address of the units that have inline code, a
	** few thousand at most: libdw's walk is slow, which is the point */
	size_t total = 0;
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL;) {
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_getsrclines(cu, &lines, &n) == 0)
			total += n;
	}
	size_t stride = total / 3000 + 1, seen = 0, checked = 0, inlined = 0;
	rd_syms_t *syms = rd_syms_new(&m, 1);
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL;) {
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_getsrclines(cu, &lines, &n) != 0)
			continue;
		for (size_t i = 0; i < n; i++, seen++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr addr;
			bool end;
			if (seen % stride || dwarf_lineaddr(l, &addr) != 0 || dwarf_lineendsequence(l, &end) != 0 || end)
				continue;
			Dwarf_Addr ucbias;
			if (dwfl_module_addrdie(mod, addr + bias, &ucbias) != cu)
				continue; /* rd_symbols.c asks .debug_aranges first: another unit */
			struct rd_sym sym;
			if (rd_syms_lookup(syms, addr + bias + 1, &sym) != 0)
				continue;
			inlined += ref_compare(cu, addr, &sym);
			checked++;
			rd_sym_clear(&sym);
		}
	}
	rd_syms_free(syms);
	dwfl_end(dwfl);
	cr_assert_gt(checked, 500, "only %zu addresses compared", checked);
	cr_assert_gt(inlined, 20, "only %zu addresses in inline code of %zu", inlined, checked);
}

/* The loaded files of this program: the executable, libc, libdw, the C++
** runtime and the rest, each with its load bias. */
struct loaded {
	char path[16][PATH_MAX];
	uint64_t bias[16];
	size_t n;
};

static int loaded_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct loaded *l = arg;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
	char exe[PATH_MAX];
	ssize_t n = name ? 0 : readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (l->n == 16 || n < 0 || (name && (name[0] != '/' || strstr(name, "linux-vdso"))))
		return 0;
	if (!name)
		exe[n] = 0;
	snprintf(l->path[l->n], PATH_MAX, "%s", name ? name : exe);
	l->bias[l->n++] = info->dlpi_addr;
	return 0;
}

/* rd_symtab_find against dwfl_module_addrinfo at addr: the same name (or
** none) and offset.  1 when a symbol was found. */
static int symtab_compare(rd_symtab_t *t, Dwfl_Module *mod, GElf_Addr addr)
{
	GElf_Off want_off = 0, off = 0;
	GElf_Sym es;
	const char *want = dwfl_module_addrinfo(mod, addr, &want_off, &es, NULL, NULL, NULL);
	const char *got = rd_symtab_find(t, mod, addr, &off);
	cr_assert((want == NULL) == (got == NULL) && (!want || (!strcmp(want, got) && off == want_off)),
		  "0x%llx: %s+%llu, libdwfl's %s+%llu", (unsigned long long)addr, got ? got : "(none)",
		  (unsigned long long)off, want ? want : "(none)", (unsigned long long)want_off);
	return want != NULL;
}

/* Every loaded file's symbols (a sample of them in a big table): at each
** one's start, one before and after, its middle, its last byte and its
** end, and addresses spread over the file; aliases, sizeless labels and
** addresses between functions included. */
Test(symbols, symbol_index_names_what_libdwfl_names, .timeout = 600)
{
	struct loaded l = {0};
	dl_iterate_phdr(loaded_phdr, &l);
	size_t compared = 0, found = 0, modules = 0;
	for (size_t k = 0; k < l.n; k++) {
		Dwfl_Module *mod;
		Dwfl *dwfl = ut_dwfl_of(l.path[k], l.bias[k], &mod);
		int n = mod ? dwfl_module_getsymtab(mod) : -1;
		if (n <= 1) {
			dwfl_end(dwfl);
			continue;
		}
		modules++;
		rd_symtab_t *t = rd_symtab_new(mod);
		int stride = n / 300 + 1;
		for (int i = 1; i < n; i += stride) {
			GElf_Sym sym;
			GElf_Addr v;
			if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL) || !v)
				continue;
			GElf_Addr at[] = {v - 1, v, v + 1, v + sym.st_size / 2, v + sym.st_size - 1, v + sym.st_size};
			for (size_t j = 0; j < sizeof at / sizeof at[0]; j++, compared++)
				found += symtab_compare(t, mod, at[j]);
		}
		Dwarf_Addr low, high;
		dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
		for (Dwarf_Addr a = low; a < high; a += (high - low) / 600 + 1, compared++)
			found += symtab_compare(t, mod, a);
		rd_symtab_free(t);
		dwfl_end(dwfl);
	}
	cr_assert_geq(modules, 3, "only %zu files with symbols", modules);
	cr_assert_gt(found, 5000, "%zu of %zu addresses in a symbol", found, compared);
}

/* The stubs objdump names NAME@plt in one loaded file (sections .plt,
** .plt.sec, .plt.got): each address and the reader's name there, at the
** stub's first byte and inside it.  0 when objdump is missing. */
static size_t plt_compare(rd_syms_t *syms, const char *path, uint64_t bias, size_t *abs_stubs)
{
	char cmd[PATH_MAX + 128], line[1024];
	snprintf(cmd, sizeof cmd, "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long a;
		char name[512];
		size_t len;
		if (sscanf(line, "%llx <%511[^>]>:", &a, name) != 2 || (len = strlen(name)) < 5 ||
		    strcmp(name + len - 4, "@plt") != 0)
			continue; /* not a stub, or the binder's entry (strdup@plt-0x10) */
		for (uint64_t in = 0; in < 4; in += 3, n++) {
			struct rd_sym sym;
			cr_assert_eq(rd_syms_lookup(syms, bias + a + in + 1, &sym), 0, "%s: %s not named", path, name);
			if (!strncmp(name, "*ABS*", 5)) /* an ifunc's: the resolver's symbol */
				cr_assert(strstr(sym.func, "@plt") && strcmp(sym.func, ".plt") && sym.off == in + 1,
					  "%s: %s named %s+%llu", path, name, sym.func, (unsigned long long)sym.off);
			else if (strncmp(name, "_Z", 2))
				cr_assert(!strcmp(sym.func, name) && sym.off == in + 1, "%s: %s named %s+%llu", path,
					  name, sym.func, (unsigned long long)sym.off);
			*abs_stubs += !strncmp(name, "*ABS*", 5);
			rd_sym_clear(&sym);
		}
	}
	if (f)
		pclose(f);
	return n;
}

/* A sample in a PLT stub is the stub's function, NAME@plt, as objdump and
** perf name it (tests/export/stripped.sh's program once had one named
** MODULE+0xSTART of the section's unwind entry, or _init+0x20): every
** stub objdump names in the loaded files, libc's calls of its own ifuncs
** (*ABS*+0x...@plt) named after the resolver's symbol. */
Test(symbols, plt_stubs_named_as_objdump_names_them)
{
	if (system("objdump --version >/dev/null 2>&1") != 0)
		cr_skip_test("no objdump");
	struct loaded l = {0};
	dl_iterate_phdr(loaded_phdr, &l);
	struct rd_module m[16];
	for (size_t k = 0; k < l.n; k++)
		m[k] = (struct rd_module){l.bias[k], l.path[k], NULL};
	rd_syms_t *syms = rd_syms_new(m, l.n);
	size_t stubs = 0, abs_stubs = 0, self = 0;
	for (size_t k = 0; k < l.n; k++) {
		size_t n = plt_compare(syms, l.path[k], l.bias[k], &abs_stubs);
		self += l.bias[k] == self_module().bias ? n : 0;
		stubs += n;
	}
	rd_syms_free(syms);
	cr_assert_geq(self, 10, "%zu stubs of this program compared", self);
	cr_assert_geq(abs_stubs, 4, "%zu of libc's ifunc stubs compared (of %zu)", abs_stubs, stubs);
}
