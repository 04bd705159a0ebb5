/*
** test_symbols.c — offline symbolisation (rd_symbols.c) of call sites in
** this very test program: the module table names /proc/self/exe at its
** load bias, as libmeminst records it, and a site inside a function of
** this file must come back as that function and this file's name.  A wrong
** build-id or a missing file must fall back to the stored name.
*/
#include "ui.h"

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
