/*
** rd_names.c — the numbering tables of a snapshot: allocators, classes,
** types and threads, plus its module list, and the filters that refer to
** them by number or by name.
**
** Every snapshot carries its own copy of these tables, so numbers are only
** meaningful within one snapshot.  The tables are small (at most a few
** thousand types) and are read whole into arrays sorted by id.  Labels of
** automatic types are resolved from the module files the first time one is
** asked for, and kept.
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

/* Read one table: columns id, name, then up to two extras by kind. */
static int names_load(rd_db_t *db, const char *sql, enum rd_tag_kind k,
		      struct rd_names *out)
{
	struct rd_vec v;
	rd_vec_init(&v, sizeof(struct rd_name));
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rd_name *n = rd_vec_push(&v);
		n->id = sqlite3_column_int64(st, 0);
		n->name = rd_col_text(db, st, 1);
		if (k == RD_TAG_CLASS && sqlite3_column_type(st, 2) != SQLITE_NULL)
			n->module = rd_col_text(db, st, 2);
		if (k == RD_TAG_TYPE) {
			n->class_ = sqlite3_column_int64(st, 2);
			n->has_site = sqlite3_column_type(st, 3) != SQLITE_NULL;
			n->site = (uint64_t)sqlite3_column_int64(st, 3);
		}
		if (k == RD_TAG_THREAD)
			n->tid = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	out->v = v.v;
	out->n = v.n;
	if (rc != SQLITE_DONE)
		return rd_db_fail(db, "cannot read the name tables");
	return 0;
}

static int names_modules(rd_db_t *db, struct rd_tags *t)
{
	struct rd_vec v;
	rd_vec_init(&v, sizeof(struct rd_module));
	sqlite3_stmt *st = rd_db_prepare(
		db, "SELECT base, path, build_id FROM module WHERE snapshot = " RD_SQL_SNAP_WITH("module") " ORDER BY base");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rd_module *m = rd_vec_push(&v);
		m->base = (uint64_t)sqlite3_column_int64(st, 0);
		m->path = rd_col_text(db, st, 1);
		m->build_id = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : rd_col_text(db, st, 2);
	}
	sqlite3_finalize(st);
	t->modules = v.v;
	t->nmodules = v.n;
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read the module table");
}

/* The file name of a path (what dladdr and the module table may spell
** differently: "./app" and "/home/u/app"). */
static const char *names_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Whether the snapshot's module table has the class's module: the same
** load bias and file name. */
static bool names_loaded(const struct rd_tags *t, uint64_t bias, const char *path)
{
	for (size_t i = 0; i < t->nmodules; i++)
		if (t->modules[i].base == bias && strcmp(names_base(t->modules[i].path), names_base(path)) == 0)
			return true;
	return false;
}

/*
** The modules of automatic classes that are not loaded at the snapshot (a
** dlclose, or another module at their address since): their path and the
** load bias they had when their sites were named (class_load; absent from
** older files, whose sites of unloaded modules keep their stored names).
*/
static void names_gone(rd_db_t *db, struct rd_tags *t)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(rd_db_sqlite(db),
			       "SELECT l.class, l.bias, c.module FROM class_load l JOIN class c ON c.snapshot = "
			       "?1 AND c.id = l.class WHERE l.snapshot = ?1 AND c.module IS NOT NULL "
			       "ORDER BY l.class",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t bias = (uint64_t)sqlite3_column_int64(st, 1);
		const char *path = rd_col_text(db, st, 2);
		if (names_loaded(t, bias, path))
			continue;
		if (t->ngone == cap) {
			cap = cap ? 2 * cap : 8;
			t->gone = rd_xrealloc(t->gone, cap * sizeof *t->gone);
			t->gone_class = rd_xrealloc(t->gone_class, cap * sizeof *t->gone_class);
		}
		t->gone_class[t->ngone] = sqlite3_column_int64(st, 0);
		t->gone[t->ngone++] = (struct rd_module){bias, path, NULL};
	}
	sqlite3_finalize(st);
}

/* The module, unloaded before the snapshot, of a class (NULL: loaded). */
static const struct rd_module *names_gone_module(const struct rd_tags *t, int64_t class_)
{
	for (size_t i = 0; i < t->ngone; i++)
		if (t->gone_class[i] == class_)
			return &t->gone[i];
	return NULL;
}

/* The stacks of site_depth types (type_frame; absent from older files). */
static void names_frames(rd_db_t *db, struct rd_tags *t)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(rd_db_sqlite(db),
			       "SELECT type, addr FROM type_frame WHERE snapshot = ?1 ORDER BY type, depth",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct rd_name *n = (struct rd_name *)rd_name_find(&t->types, sqlite3_column_int64(st, 0));
		if (!n || !n->has_site || n->nframes >= 1024)
			continue;
		n->frames = rd_xrealloc(n->frames, (n->nframes + 1) * sizeof *n->frames);
		n->frames[n->nframes++] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < t->types.n; i++) { /* a stack must start at its type's site */
		struct rd_name *n = &t->types.v[i];
		if (n->nframes && n->frames[0] != n->site) {
			free(n->frames);
			n->frames = NULL;
			n->nframes = 0;
		}
	}
}

int rd_tags_load(rd_db_t *db, struct rd_tags *t)
{
	*t = (struct rd_tags){.no_symbols = rd_db_opts(db)->no_symbols};
	int r = names_load(db, "SELECT id, name FROM allocator WHERE snapshot = ?1 ORDER BY id",
			   RD_TAG_ALLOCATOR, &t->allocators);
	if (!r)
		r = names_load(db, "SELECT id, name, module FROM class WHERE snapshot = ?1 ORDER BY id",
			       RD_TAG_CLASS, &t->classes);
	if (!r)
		r = names_load(db, "SELECT id, name, class, site FROM type WHERE snapshot = ?1 ORDER BY id",
			       RD_TAG_TYPE, &t->types);
	if (!r)
		r = names_load(db, "SELECT id, name, tid FROM thread WHERE snapshot = ?1 ORDER BY id",
			       RD_TAG_THREAD, &t->threads);
	if (!r)
		r = names_modules(db, t);
	if (!r)
		names_frames(db, t);
	if (!r)
		names_gone(db, t);
	return r;
}

void rd_tags_free(struct rd_tags *t)
{
	free(t->allocators.v);
	free(t->classes.v);
	for (size_t i = 0; i < t->types.n; i++)
		free(t->types.v[i].frames);
	free(t->types.v);
	free(t->threads.v);
	free(t->modules);
	free(t->gone);
	free(t->gone_class);
	if (t->syms)
		rd_syms_free(t->syms);
	*t = (struct rd_tags){0};
}

const struct rd_names *rd_tags_of(const struct rd_tags *t, enum rd_tag_kind k)
{
	switch (k) {
	case RD_TAG_ALLOCATOR: return &t->allocators;
	case RD_TAG_CLASS: return &t->classes;
	case RD_TAG_TYPE: return &t->types;
	default: return &t->threads;
	}
}

_Static_assert(offsetof(struct rd_name, id) == 0, "rd_find_id reads the key first");

const struct rd_name *rd_name_find(const struct rd_names *n, int64_t id)
{
	return rd_find_id(n->v, n->n, sizeof *n->v, id);
}

const char *rd_tag_name(rd_db_t *db, struct rd_tags *t, enum rd_tag_kind k, int64_t id)
{
	const struct rd_name *n = rd_name_find(rd_tags_of(t, k), id);
	return n ? n->name : rd_pool_fmt(rd_db_pool(db), "#%lld", (long long)id);
}

const char *rd_thread_label(rd_db_t *db, struct rd_tags *t, int64_t id)
{
	struct rd_name *n = (struct rd_name *)rd_name_find(&t->threads, id);
	if (!n)
		return rd_pool_fmt(rd_db_pool(db), "#%lld", (long long)id);
	if (!n->label)
		n->label = *n->name ? rd_pool_fmt(rd_db_pool(db), "%lld %s", (long long)id, n->name)
				    : rd_pool_fmt(rd_db_pool(db), "%lld", (long long)id);
	return n->label;
}

/* ------------------------------------------------------- symbolisation -- */

/* A stored "_ZN3foo3barEv+0x1c (lib.so)" with its C++ name demangled. */
static const char *names_demangled(struct rd_pool *p, const char *stored)
{
	if (strncmp(stored, "_Z", 2) != 0)
		return stored;
	size_t n = strcspn(stored, "+ ");
	char *mangled = rd_xmalloc(n + 1);
	memcpy(mangled, stored, n);
	mangled[n] = 0;
	char *d = rd_demangle(mangled);
	free(mangled);
	if (!d)
		return stored;
	const char *r = rd_pool_fmt(p, "%s%s", d, stored + n);
	free(d);
	return r;
}

/* One symbolised address as "f at file:line > g at file:line …" (its
** inline chain, outermost first) after `r` and " > ". */
static const char *names_chain_add(struct rd_pool *p, const char *r, const struct rd_sym *sym)
{
	if (!sym->nchain)
		return rd_pool_fmt(p, "%s%s%s at %s:%d", r, *r ? " > " : "", sym->func ? sym->func : "??",
				     sym->file ? sym->file : "??", sym->line);
	for (size_t i = sym->nchain; i-- > 0;) {
		const struct rd_frame *f = &sym->chain[i];
		r = rd_pool_fmt(p, "%s%s%s at %s:%d", r, *r ? " > " : "", f->func ? f->func : "??",
				  f->file ? f->file : "??", f->line);
	}
	return r;
}

static const char *key_stored_part(struct rd_pool *p, const char *stored, size_t i);

/* The frame of a return address in code no symbol names: its function
** as `module+0xSTART` from the unwind tables (rd_syms_fde_entry), the name
** sampled and traced profiles give it, or NULL. */
static const char *names_fde_frame(struct rd_pool *p, rd_syms_t *syms, uint64_t site, const char **module)
{
	uint64_t entry;
	return site && rd_syms_fde_entry(syms, site - 1, &entry, module)
		       ? rd_pool_fmt(p, "%s+0x%llx", *module, (unsigned long long)entry) : NULL;
}

/* `stack` with the frames of one address: its inline chain innermost
** first, else its symbol, else (sym NULL) its function from the unwind
** tables, else the bare address in the module that part `stored` of the
** stored name gives ("0x1f (m)"), if any. */
static const char *names_stack_add(struct rd_pool *p, rd_syms_t *syms, const char *stack, uint64_t addr,
				   const struct rd_sym *sym, const char *stored)
{
	if (!sym) {
		size_t flen;
		const char *module = NULL, *fde = names_fde_frame(p, syms, addr, &module);
		if (fde)
			return rd_stack_add(p, stack, fde, NULL, 0, module, false);
		module = stored ? rd_name_part_module(p, stored, &flen) : NULL;
		return rd_stack_add(p, stack, rd_pool_fmt(p, "0x%llx", (unsigned long long)addr), NULL, 0,
				      module, false);
	}
	for (size_t j = 0; j < sym->nchain; j++)
		stack = rd_stack_add(p, stack, sym->chain[j].func, sym->chain[j].file, sym->chain[j].line,
				       sym->module, j + 1 < sym->nchain);
	if (!sym->nchain)
		stack = rd_stack_add(p, stack,
				       sym->func ? rd_pool_fmt(p, "%s+0x%llx", sym->func, (unsigned long long)sym->off)
						 : rd_pool_fmt(p, "0x%llx", (unsigned long long)addr),
				       sym->file, sym->line, sym->module, false);
	return stack;
}

const char *rd_name_part_module(struct rd_pool *p, const char *part, size_t *flen)
{
	const char *open = strrchr(part, '(');
	const char *module = open && part[strlen(part) - 1] == ')'
				     ? rd_pool_fmt(p, "%.*s", (int)strlen(open + 1) - 1, open + 1) : NULL;
	*flen = module ? (size_t)(open - part) : strlen(part);
	while (*flen && part[*flen - 1] == ' ')
		(*flen)--;
	return module;
}

/* The stack of a type named as stored ("f+0x1 (m) < g+0x2 (m)"), with
** --no-symbols: a frame per part, C++ names demangled. */
static const char *names_stack_stored(struct rd_pool *p, const char *stored)
{
	const char *stack = NULL;
	while (*stored) {
		size_t n = strstr(stored, " < ") ? (size_t)(strstr(stored, " < ") - stored) : strlen(stored);
		const char *part = names_demangled(p, rd_pool_fmt(p, "%.*s", (int)n, stored));
		size_t flen;
		const char *module = rd_name_part_module(p, part, &flen);
		stack = rd_stack_add(p, stack, rd_pool_fmt(p, "%.*s", (int)flen, part), NULL, 0, module, false);
		stored += n + (stored[n] ? 3 : 0);
	}
	return stack;
}

/* Name and location from one resolved address: the user's frame of its
** inline chain (rd_sym_user_frame), else the symbol with its own line. */
static void names_from_sym(struct rd_pool *p, struct rd_name *n, const struct rd_sym *sym)
{
	int u = rd_sym_user_frame(sym);
	const struct rd_frame *f = u >= 0 ? &sym->chain[u] : NULL;
	if (f && (size_t)u + 1 < sym->nchain && f->func)
		n->label = rd_pool_fmt(p, "%s (%s)", f->func, sym->module);
	else if (sym->func)
		n->label = rd_pool_fmt(p, "%s+0x%llx (%s)", sym->func, (unsigned long long)sym->off,
					 sym->module);
	if (f && f->file)
		n->where = rd_pool_fmt(p, "%s:%d", f->file, f->line);
	else if (sym->file)
		n->where = rd_pool_fmt(p, "%s:%d", sym->file, sym->line);
}

/*
** A site_depth type: its stack, innermost first.  It is named after the
** first frame that reaches the user's own source (the line that asked for
** the std:: container's memory), else after the call into the allocator;
** its chain is the whole short stack, outermost first.
*/
static void names_resolve_stack(struct rd_pool *p, rd_syms_t *syms, struct rd_name *n)
{
	const char *chain = "";
	bool named = false;
	for (size_t i = n->nframes; i-- > 0;) {
		struct rd_sym sym;
		if (rd_syms_lookup(syms, n->frames[i], &sym) != 0) {
			const char *module, *fde = names_fde_frame(p, syms, n->frames[i], &module);
			chain = fde ? rd_pool_fmt(p, "%s%s%s (%s)", chain, *chain ? " > " : "", fde, module)
				    : rd_pool_fmt(p, "%s%s0x%llx", chain, *chain ? " > " : "",
						  (unsigned long long)n->frames[i]);
			continue;
		}
		chain = names_chain_add(p, chain, &sym);
		rd_sym_clear(&sym);
	}
	n->stack = NULL;
	for (size_t i = 0; i < n->nframes; i++) {
		struct rd_sym sym;
		bool found = rd_syms_lookup(syms, n->frames[i], &sym) == 0;
		n->stack = names_stack_add(p, syms, n->stack, n->frames[i], found ? &sym : NULL,
					   found ? NULL : key_stored_part(p, n->name, i));
		if (found)
			rd_sym_clear(&sym);
	}
	for (size_t i = 0; i < n->nframes && !named; i++) {
		struct rd_sym sym;
		if (rd_syms_lookup(syms, n->frames[i], &sym) != 0)
			continue;
		if (rd_sym_user_frame(&sym) >= 0) {
			names_from_sym(p, n, &sym);
			named = true;
		}
		rd_sym_clear(&sym);
	}
	struct rd_sym sym; /* no user frame: the call into the allocator */
	if (!named && rd_syms_lookup(syms, n->frames[0], &sym) == 0) {
		names_from_sym(p, n, &sym);
		rd_sym_clear(&sym);
	} else if (!named) { /* the stored short stack's first frame */
		const char *cut = strstr(n->label, " < ");
		if (cut)
			n->label = rd_pool_fmt(p, "%.*s", (int)(cut - n->label), n->label);
	}
	n->chain = chain;
}

/* Name an automatic type from syms, or from the module `gone` alone: what
** names_resolve does, for a reader without a snapshot (meminst-symbolise). */
void rd_name_resolve(struct rd_pool *p, rd_syms_t *syms, const struct rd_module *gone,
		       struct rd_name *n)
{
	n->label = names_demangled(p, n->name);
	if (n->nframes > 1) {
		names_resolve_stack(p, syms, n);
		return;
	}
	struct rd_sym sym;
	if ((gone ? rd_syms_lookup_in(syms, gone, n->site, &sym) : rd_syms_lookup(syms, n->site, &sym)) != 0) {
		const char *module, *fde = gone ? NULL : names_fde_frame(p, syms, n->site, &module);
		n->stack = fde ? rd_stack_add(p, NULL, fde, NULL, 0, module, false) : names_stack_stored(p, n->label);
		return;
	}
	names_from_sym(p, n, &sym);
	n->stack = names_stack_add(p, syms, NULL, n->site, &sym, NULL);
	if (sym.nchain > 1)
		n->chain = names_chain_add(p, "", &sym);
	rd_sym_clear(&sym);
}

/*
** Resolve an automatic type once: "function+0xoff (module)" from the
** module file when it is there and matches, else the stored name.  When
** the site is inside inlined code, the name and line are those of the
** chain's frame in the user's own source (rd_sym_user_frame: where a C++
** allocation inside std:: templates was asked for), else the symbol's
** with the site's own line.
*/
static void names_resolve(rd_db_t *db, struct rd_tags *t, struct rd_name *n)
{
	n->resolved = true;
	n->label = n->name;
	if (!n->has_site)
		return;
	if (t->no_symbols) {
		n->label = names_demangled(rd_db_pool(db), n->name);
		n->stack = names_stack_stored(rd_db_pool(db), n->name);
		return;
	}
	if (!t->syms)
		t->syms = rd_syms_new(t->modules, t->nmodules);
	rd_name_resolve(rd_db_pool(db), t->syms, names_gone_module(t, n->class_), n);
}

const char *rd_type_label(rd_db_t *db, struct rd_tags *t, int64_t id, const char **where)
{
	struct rd_name *n = (struct rd_name *)rd_name_find(&t->types, id);
	if (where)
		*where = NULL;
	if (!n)
		return rd_pool_fmt(rd_db_pool(db), "#%lld", (long long)id);
	if (!n->resolved)
		names_resolve(db, t, n);
	if (where)
		*where = n->where;
	return n->label;
}

const char *rd_type_chain(rd_db_t *db, struct rd_tags *t, int64_t id)
{
	struct rd_name *n = (struct rd_name *)rd_name_find(&t->types, id);
	if (n && !n->resolved)
		names_resolve(db, t, n);
	return n ? n->chain : NULL;
}

const char *rd_type_stack(rd_db_t *db, struct rd_tags *t, int64_t id)
{
	struct rd_name *n = (struct rd_name *)rd_name_find(&t->types, id);
	if (n && !n->resolved)
		names_resolve(db, t, n);
	return n ? n->stack : NULL;
}

/* The function of a call site as a region's name (inspect rss groups
** the program's mappings by it): "function (module)" from the module file
** (the user's frame when inlined), else the unwind tables' entry
** "module+0xSTART (module)", else the stored dladdr name without its
** offset ("f+0x1c (m)" -> "f (m)"; "0x1c (m)" stays). */
const char *rd_site_function(rd_db_t *db, struct rd_tags *t, uint64_t site, const char *stored)
{
	struct rd_pool *p = rd_db_pool(db);
	if (site && !t->no_symbols) {
		if (!t->syms)
			t->syms = rd_syms_new(t->modules, t->nmodules);
		struct rd_sym sym;
		if (rd_syms_lookup(t->syms, site, &sym) == 0) {
			int u = rd_sym_user_frame(&sym);
			const char *f = u >= 0 && sym.chain[u].func ? sym.chain[u].func : sym.func;
			const char *r = f ? rd_pool_fmt(p, "%s (%s)", f, sym.module) : NULL;
			rd_sym_clear(&sym);
			if (r)
				return r;
		}
		const char *module, *fde = names_fde_frame(p, t->syms, site, &module);
		if (fde)
			return rd_pool_fmt(p, "%s (%s)", fde, module);
	}
	size_t flen;
	const char *label = names_demangled(p, stored), *module = rd_name_part_module(p, label, &flen);
	const char *plus = memchr(label, '+', flen);
	if (plus && plus > label)
		flen = (size_t)(plus - label);
	return module ? rd_pool_fmt(p, "%.*s (%s)", (int)flen, label, module) : label;
}

/* ------------------------------------------------------------ matching -- */

/* Part i of a stored name ("f+0x1 (m) < g+0x2 (m)"), or "?" when it is
** missing or a bare address (no module said where it was). */
static const char *key_stored_part(struct rd_pool *p, const char *stored, size_t i)
{
	for (; i > 0 && stored; i--)
		stored = strstr(stored, " < ") ? strstr(stored, " < ") + 3 : NULL;
	if (!stored)
		return "?";
	size_t n = strstr(stored, " < ") ? (size_t)(strstr(stored, " < ") - stored) : strlen(stored);
	const char *part = rd_pool_fmt(p, "%.*s", (int)n, stored);
	return strstr(part, " (") ? part : "?";
}

/* `key` with one frame more: its inline chain's functions and lines,
** innermost first, else its function and offset in its module. */
static const char *key_frame(struct rd_pool *p, const char *key, const struct rd_sym *sym)
{
	const char *sep = *key ? " < " : "";
	if (!sym->nchain && sym->func && sym->file)
		return rd_pool_fmt(p, "%s%s%s %s:%d", key, sep, sym->func, sym->file, sym->line);
	if (!sym->nchain)
		return rd_pool_fmt(p, "%s%s%s+0x%llx (%s)", key, sep, sym->func ? sym->func : "?",
				     (unsigned long long)sym->off, sym->module);
	for (size_t j = 0; j < sym->nchain; j++, sep = " < ")
		key = rd_pool_fmt(p, "%s%s%s %s:%d", key, sep, sym->chain[j].func ? sym->chain[j].func : "?",
				    sym->chain[j].file ? sym->chain[j].file : "?", sym->chain[j].line);
	return key;
}

const char *rd_type_key(rd_db_t *db, struct rd_tags *t, int64_t id)
{
	struct rd_pool *p = rd_db_pool(db);
	struct rd_name *n = (struct rd_name *)rd_name_find(&t->types, id);
	if (!n)
		return rd_pool_fmt(p, "#%lld", (long long)id);
	if (!n->resolved)
		names_resolve(db, t, n); /* loads the symbols */
	if (n->key || !n->has_site)
		return n->key ? n->key : (n->key = n->name);
	size_t nf = n->nframes > 1 ? n->nframes : 1;
	const char *key = "";
	for (size_t i = 0; i < nf; i++) {
		uint64_t addr = n->nframes > 1 ? n->frames[i] : n->site;
		const struct rd_module *gone = nf == 1 ? names_gone_module(t, n->class_) : NULL;
		struct rd_sym sym;
		int r = !t->syms ? -1 : gone ? rd_syms_lookup_in(t->syms, gone, addr, &sym)
					     : rd_syms_lookup(t->syms, addr, &sym);
		if (r == 0) {
			key = key_frame(p, key, &sym);
			rd_sym_clear(&sym);
		} else {
			key = rd_pool_fmt(p, "%s%s%s", key, *key ? " < " : "", key_stored_part(p, n->name, i));
		}
	}
	return n->key = key;
}

/* ------------------------------------------------------------- filters -- */

bool rd_filter_any(const struct rd_filter *f)
{
	return f->type || f->class_ || f->thread || f->allocator;
}

/* A number must be in the table; a name must match one entry's name.
** Returns 0, or -1 when `given` names nothing. */
static int filter_one(const struct rd_names *n, const char *given, bool *has, int64_t *id)
{
	if (!given)
		return 0;
	*has = true;
	if (rd_parse_int(given, id))
		return rd_name_find(n, *id) ? 0 : -1;
	for (size_t i = 0; i < n->n; i++) {
		if (strcmp(n->v[i].name, given) == 0) {
			*id = n->v[i].id;
			return 0;
		}
	}
	return -1;
}

int rd_filter_lookup(const struct rd_tags *t, const struct rd_filter *f,
		       struct rd_filter_ids *ids, const char **what, const char **given)
{
	const struct rd_names *tables[] = {&t->types, &t->classes, &t->threads, &t->allocators};
	const char *const whats[] = {"type", "class", "thread", "allocator"};
	const char *const vals[] = {f->type, f->class_, f->thread, f->allocator};
	bool *has[] = {&ids->has_type, &ids->has_class, &ids->has_thread, &ids->has_allocator};
	int64_t *id[] = {&ids->type, &ids->class_, &ids->thread, &ids->allocator};
	*ids = (struct rd_filter_ids){0};
	for (int i = 0; i < 4; i++) {
		if (filter_one(tables[i], vals[i], has[i], id[i]) != 0) {
			*what = whats[i];
			*given = vals[i];
			return -1;
		}
	}
	return 0;
}

int rd_filter_resolve(rd_db_t *db, const struct rd_tags *t, const struct rd_filter *f,
			struct rd_filter_ids *ids)
{
	const char *what, *given;
	if (rd_filter_lookup(t, f, ids, &what, &given) == 0)
		return 0;
	rd_errf(rd_db_opts(db)->err, "inspect: %s: snapshot %lld has no %s '%s'\n",
		rd_db_path(db), (long long)rd_db_snap(db)->id, what, given);
	return RD_EXIT_NOTFOUND;
}

/* -------------------------------------------------------------- session -- */

int rd_session_open(struct rd_session *s, const struct rd_opts *o,
		      const struct rd_args *a, const char *path, enum rd_need need)
{
	*s = (struct rd_session){0};
	int r = rd_db_open(path, o, &s->db);
	if (!r)
		r = rd_db_select(s->db, a->snapshot, need);
	return r;
}

int rd_session_tags(struct rd_session *s, const struct rd_args *a)
{
	if (s->tags_loaded)
		return 0;
	int r = rd_tags_load(s->db, &s->tags);
	s->tags.no_symbols = s->tags.no_symbols || a->no_symbols;
	s->tags_loaded = true;
	return r;
}

int rd_session_filter(struct rd_session *s, const struct rd_args *a, struct rd_filter_ids *f)
{
	int r = rd_session_tags(s, a);
	return r ? r : rd_filter_resolve(s->db, &s->tags, &a->filter, f);
}

void rd_session_close(struct rd_session *s)
{
	if (s->tags_loaded)
		rd_tags_free(&s->tags);
	rd_db_close(s->db);
	*s = (struct rd_session){0};
}
