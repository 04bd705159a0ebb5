/*
** insp_cmd_names.c — the descriptions of numbers: `inspect type N`,
** `class N`, `allocator N` (Erlang's type_descr, class_descr and
** allocator_descr, which answer invalid_type for an unknown number) and
** `inspect types` (type_no_range, plus the whole table).
*/
#include "insp_int.h"

#include <unistd.h>

#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const struct insp_col invalid_cols[] = {
	{"kind", "kind", INSP_K_STR, 0},
	{"given", "given", INSP_K_STR, 0},
};

/* An unknown number: "invalid_type" (a line in text, a table otherwise)
** and exit status 1. */
static int invalid(insp_doc_t *d, const struct insp_opts *o, const struct insp_args *a,
		   const char *kind, const char *given)
{
	if (a->format == INSP_FMT_TEXT && !a->table) {
		fputs("invalid_type\n", o->out);
		return INSP_EXIT_NOTFOUND;
	}
	insp_table_t *t = insp_doc_table(d, "invalid_type", invalid_cols, 2, INSP_T_SINGLE);
	insp_row(t);
	insp_put_str(t, kind);
	insp_put_str(t, given);
	int r = insp_doc_print(d);
	return r ? r : INSP_EXIT_NOTFOUND;
}

/* The entry named by number, or else by name. */
static const struct insp_name *lookup(const struct insp_names *n, const char *given)
{
	int64_t id;
	if (insp_parse_int(given, &id))
		return insp_name_find(n, id);
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->v[i].name, given) == 0)
			return &n->v[i];
	return NULL;
}

static const struct insp_col type_cols[] = {
	{"id", "type", INSP_K_INT, 0},
	{"name", "name", INSP_K_STR, 0},
	{"label", "resolved", INSP_K_STR, 0},
	{"location", "location", INSP_K_LOC, 0},
	{"kind", "kind", INSP_K_STR, 0},
	{"site", "site", INSP_K_ADDR, 0},
	{"class", "class", INSP_K_INT, 0},
	{"class_name", "class name", INSP_K_STR, 0},
	{"inlined", "inlined", INSP_K_STR, INSP_C_OPTIONAL},
};

static void type_row(insp_table_t *t, struct insp_session *s, const struct insp_name *n)
{
	const char *where;
	const char *label = insp_type_label(s->db, &s->tags, n->id, &where);
	insp_row(t);
	insp_put_int(t, n->id);
	insp_put_str(t, n->name);
	insp_put_str(t, label);
	insp_put_str(t, where);
	insp_put_str(t, n->has_site ? "automatic" : "registered");
	if (n->has_site)
		insp_put_uint(t, n->site);
	else
		insp_put_null(t);
	insp_put_int(t, n->class_);
	insp_put_str(t, insp_tag_name(s->db, &s->tags, INSP_TAG_CLASS, n->class_));
	insp_put_str(t, insp_type_chain(s->db, &s->tags, n->id));
}

static const struct insp_col class_cols[] = {
	{"id", "class", INSP_K_INT, 0},
	{"name", "name", INSP_K_STR, 0},
	{"kind", "kind", INSP_K_STR, 0},
	{"module", "module", INSP_K_STR, 0},
	{"types", "types", INSP_K_INT, 0},
};

static void class_row(insp_table_t *t, struct insp_session *s, const struct insp_name *n)
{
	int64_t types = 0;
	for (size_t i = 0; i < s->tags.types.n; i++)
		types += s->tags.types.v[i].class_ == n->id;
	insp_row(t);
	insp_put_int(t, n->id);
	insp_put_str(t, n->name);
	insp_put_str(t, n->module ? "automatic" : "registered");
	insp_put_str(t, n->module);
	insp_put_int(t, types);
}

static const struct insp_col alloc_cols[] = {
	{"id", "allocator", INSP_K_INT, 0},
	{"name", "name", INSP_K_STR, 0},
};

#define DESCR_HELP(what, more)                                                          \
	"Describe " what " number N (or the one named N) of the snapshot.\n" \
	"An unknown number prints invalid_type and exits with status 1\n"    \
	"(Erlang's " more ").\n"

static const struct insp_option names_options[] = {
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

/* The same, for the commands that name call sites. */
static const struct insp_option names_sym_options[] = {
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FORMAT,
	INSP_OPTIONS_SYMBOLS,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec descr_specs[] = {
	{"type", "[options] DB N", DESCR_HELP("the type", "type_descr")
	 "Automatic types (allocation sites) are resolved from the module files.\n",
	 names_sym_options, 2, 2},
	{"class", "[options] DB N", DESCR_HELP("the class", "class_descr"),
	 names_options, 2, 2},
	{"allocator", "[options] DB N", DESCR_HELP("the allocator", "allocator_descr"),
	 names_options, 2, 2},
};

static int describe(int argc, char **argv, const struct insp_opts *o, enum insp_tag_kind k)
{
	const struct insp_cmd_spec *spec = &descr_specs[k == INSP_TAG_TYPE ? 0 : k == INSP_TAG_CLASS ? 1 : 2];
	struct insp_args a;
	int r = insp_args_parse(spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	/* Erlang's order, `type N DB`, is accepted too: N is never a file. */
	if (access(a.pos[0], F_OK) != 0 && access(a.pos[1], F_OK) == 0) {
		const char *db = a.pos[1];
		a.pos[1] = a.pos[0];
		a.pos[0] = db;
	}
	struct insp_session s;
	if (!(r = insp_session_open(&s, o, &a, a.pos[0], INSP_NEED_ANY)) && !(r = insp_session_tags(&s, &a))) {
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], insp_db_snap(s.db));
		const struct insp_name *n = lookup(insp_tags_of(&s.tags, k), a.pos[1]);
		insp_table_t *t;
		if (!n) {
			r = invalid(d, o, &a, spec->name, a.pos[1]);
		} else if (k == INSP_TAG_TYPE) {
			type_row(t = insp_doc_table(d, "type", type_cols, NCOLS(type_cols), INSP_T_SINGLE), &s, n);
		} else if (k == INSP_TAG_CLASS) {
			class_row(t = insp_doc_table(d, "class", class_cols, NCOLS(class_cols), INSP_T_SINGLE), &s, n);
		} else {
			t = insp_doc_table(d, "allocator", alloc_cols, NCOLS(alloc_cols), INSP_T_SINGLE);
			insp_row(t);
			insp_put_int(t, n->id);
			insp_put_str(t, n->name);
		}
		if (n)
			r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}

int insp_cmd_type(int argc, char **argv, const struct insp_opts *o)
{
	return describe(argc, argv, o, INSP_TAG_TYPE);
}

int insp_cmd_class(int argc, char **argv, const struct insp_opts *o)
{
	return describe(argc, argv, o, INSP_TAG_CLASS);
}

int insp_cmd_allocator(int argc, char **argv, const struct insp_opts *o)
{
	return describe(argc, argv, o, INSP_TAG_ALLOCATOR);
}

/* ---------------------------------------------------------------- types -- */

static const struct insp_cmd_spec types_spec = {
	"types", "[options] DB",
	"The range of type numbers of the snapshot (Erlang's type_no_range: every\n"
	"number from min to max is a valid type) and the table of types with their\n"
	"classes.  Automatic types are allocation sites, resolved to function and\n"
	"source line from the module files when possible; registered types are the\n"
	"names the program gave through <meminst.h>.\n",
	names_sym_options, 1, 1,
};

static const struct insp_col range_cols[] = {
	{"min", "lowest type number", INSP_K_INT, 0},
	{"max", "highest type number", INSP_K_INT, 0},
	{"types", "types", INSP_K_INT, 0},
	{"automatic", "automatic", INSP_K_INT, 0},
};

static const struct insp_col types_cols[] = {
	{"id", "type", INSP_K_INT, 0},
	{"kind", "kind", INSP_K_STR, 0},
	{"class", "", INSP_K_INT, INSP_C_DATA_ONLY},
	{"class_name", "class", INSP_K_STR, 0},
	{"site", "", INSP_K_ADDR, INSP_C_DATA_ONLY},
	{"name", "", INSP_K_STR, INSP_C_DATA_ONLY},
	{"label", "name", INSP_K_STR, 0},
	{"location", "location", INSP_K_LOC, INSP_C_OPTIONAL},
	{"inlined", "", INSP_K_STR, INSP_C_DATA_ONLY},
};

static void types_doc(insp_doc_t *d, struct insp_session *s)
{
	const struct insp_names *ty = &s->tags.types;
	int64_t automatic = 0;
	for (size_t i = 0; i < ty->n; i++)
		automatic += ty->v[i].has_site;
	insp_table_t *t = insp_doc_table(d, "range", range_cols, NCOLS(range_cols), INSP_T_SINGLE);
	insp_row(t);
	if (ty->n) {
		insp_put_int(t, ty->v[0].id);
		insp_put_int(t, ty->v[ty->n - 1].id);
	} else {
		insp_put_null(t);
		insp_put_null(t);
	}
	insp_put_int(t, (int64_t)ty->n);
	insp_put_int(t, automatic);
	t = insp_doc_table(d, "types", types_cols, NCOLS(types_cols), 0);
	for (size_t i = 0; i < ty->n; i++) {
		const struct insp_name *n = &ty->v[i];
		const char *where;
		const char *label = insp_type_label(s->db, &s->tags, n->id, &where);
		insp_row(t);
		insp_put_int(t, n->id);
		insp_put_str(t, n->has_site ? "automatic" : "registered");
		insp_put_int(t, n->class_);
		insp_put_str(t, insp_tag_name(s->db, &s->tags, INSP_TAG_CLASS, n->class_));
		if (n->has_site)
			insp_put_uint(t, n->site);
		else
			insp_put_null(t);
		insp_put_str(t, n->name);
		insp_put_str(t, label);
		insp_put_str(t, where);
		insp_put_str(t, insp_type_chain(s->db, &s->tags, n->id));
	}
}

int insp_cmd_types(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&types_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	if (!(r = insp_session_open(&s, o, &a, a.pos[0], INSP_NEED_ANY)) && !(r = insp_session_tags(&s, &a))) {
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], insp_db_snap(s.db));
		types_doc(d, &s);
		r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}
