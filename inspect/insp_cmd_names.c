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

static const struct rd_col invalid_cols[] = {
	{"kind", "kind", RD_K_STR, 0},
	{"given", "given", RD_K_STR, 0},
};

/* An unknown number: "invalid_type" (a line in text, a table otherwise)
** and exit status 1. */
static int invalid(rd_doc_t *d, const struct rd_opts *o, const struct rd_args *a,
		   const char *kind, const char *given)
{
	if (a->format == RD_FMT_TEXT && !a->table) {
		fputs("invalid_type\n", o->out);
		return RD_EXIT_NOTFOUND;
	}
	rd_table_t *t = rd_doc_table(d, "invalid_type", invalid_cols, 2, RD_T_SINGLE);
	rd_row(t);
	rd_put_str(t, kind);
	rd_put_str(t, given);
	int r = rd_doc_print(d);
	return r ? r : RD_EXIT_NOTFOUND;
}

/* The entry named by number, or else by name. */
static const struct rd_name *lookup(const struct rd_names *n, const char *given)
{
	int64_t id;
	if (rd_parse_int(given, &id))
		return rd_name_find(n, id);
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->v[i].name, given) == 0)
			return &n->v[i];
	return NULL;
}

static const struct rd_col type_cols[] = {
	{"id", "type", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"label", "resolved", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, 0},
	{"kind", "kind", RD_K_STR, 0},
	{"site", "site", RD_K_ADDR, 0},
	{"class", "class", RD_K_INT, 0},
	{"class_name", "class name", RD_K_STR, 0},
	{"inlined", "inlined", RD_K_STR, RD_C_OPTIONAL},
};

static void type_row(rd_table_t *t, struct rd_session *s, const struct rd_name *n)
{
	const char *where;
	const char *label = rd_type_label(s->db, &s->tags, n->id, &where);
	rd_row(t);
	rd_put_int(t, n->id);
	rd_put_str(t, n->name);
	rd_put_str(t, label);
	rd_put_str(t, where);
	rd_put_str(t, n->has_site ? "automatic" : "registered");
	if (n->has_site)
		rd_put_uint(t, n->site);
	else
		rd_put_null(t);
	rd_put_int(t, n->class_);
	rd_put_str(t, rd_tag_name(s->db, &s->tags, RD_TAG_CLASS, n->class_));
	rd_put_str(t, rd_type_chain(s->db, &s->tags, n->id));
}

static const struct rd_col class_cols[] = {
	{"id", "class", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"kind", "kind", RD_K_STR, 0},
	{"module", "module", RD_K_STR, 0},
	{"types", "types", RD_K_INT, 0},
};

static void class_row(rd_table_t *t, struct rd_session *s, const struct rd_name *n)
{
	int64_t types = 0;
	for (size_t i = 0; i < s->tags.types.n; i++)
		types += s->tags.types.v[i].class_ == n->id;
	rd_row(t);
	rd_put_int(t, n->id);
	rd_put_str(t, n->name);
	rd_put_str(t, n->module ? "automatic" : "registered");
	rd_put_str(t, n->module);
	rd_put_int(t, types);
}

static const struct rd_col alloc_cols[] = {
	{"id", "allocator", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
};

#define DESCR_HELP(what, more)                                                          \
	"Describe " what " number N (or the one named N) of the snapshot.\n" \
	"An unknown number prints invalid_type and exits with status 1\n"    \
	"(Erlang's " more ").\n"

static const struct rd_option names_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

/* The same, for the commands that name call sites. */
static const struct rd_option names_sym_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec descr_specs[] = {
	{"type", "[options] DB N", DESCR_HELP("the type", "type_descr")
	 "Automatic types (allocation sites) are resolved from the module files.\n",
	 names_sym_options, 2, 2},
	{"class", "[options] DB N", DESCR_HELP("the class", "class_descr"),
	 names_options, 2, 2},
	{"allocator", "[options] DB N", DESCR_HELP("the allocator", "allocator_descr"),
	 names_options, 2, 2},
};

static int describe(int argc, char **argv, const struct rd_opts *o, enum rd_tag_kind k)
{
	const struct rd_cmd_spec *spec = &descr_specs[k == RD_TAG_TYPE ? 0 : k == RD_TAG_CLASS ? 1 : 2];
	struct rd_args a;
	int r = rd_args_parse(spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	/* Erlang's order, `type N DB`, is accepted too: N is never a file. */
	if (access(a.pos[0], F_OK) != 0 && access(a.pos[1], F_OK) == 0) {
		const char *db = a.pos[1];
		a.pos[1] = a.pos[0];
		a.pos[0] = db;
	}
	struct rd_session s;
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_ANY)) && !(r = rd_session_tags(&s, &a))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		const struct rd_name *n = lookup(rd_tags_of(&s.tags, k), a.pos[1]);
		rd_table_t *t;
		if (!n) {
			r = invalid(d, o, &a, spec->name, a.pos[1]);
		} else if (k == RD_TAG_TYPE) {
			type_row(t = rd_doc_table(d, "type", type_cols, NCOLS(type_cols), RD_T_SINGLE), &s, n);
		} else if (k == RD_TAG_CLASS) {
			class_row(t = rd_doc_table(d, "class", class_cols, NCOLS(class_cols), RD_T_SINGLE), &s, n);
		} else {
			t = rd_doc_table(d, "allocator", alloc_cols, NCOLS(alloc_cols), RD_T_SINGLE);
			rd_row(t);
			rd_put_int(t, n->id);
			rd_put_str(t, n->name);
		}
		if (n)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}

int insp_cmd_type(int argc, char **argv, const struct rd_opts *o)
{
	return describe(argc, argv, o, RD_TAG_TYPE);
}

int insp_cmd_class(int argc, char **argv, const struct rd_opts *o)
{
	return describe(argc, argv, o, RD_TAG_CLASS);
}

int insp_cmd_allocator(int argc, char **argv, const struct rd_opts *o)
{
	return describe(argc, argv, o, RD_TAG_ALLOCATOR);
}

/* ---------------------------------------------------------------- types -- */

static const struct rd_cmd_spec types_spec = {
	"types", "[options] DB",
	"The range of type numbers of the snapshot (Erlang's type_no_range: every\n"
	"number from min to max is a valid type) and the table of types with their\n"
	"classes.  Automatic types are allocation sites, resolved to function and\n"
	"source line from the module files when possible; registered types are the\n"
	"names the program gave through <meminst.h>.\n",
	names_sym_options, 1, 1,
};

static const struct rd_col range_cols[] = {
	{"min", "lowest type number", RD_K_INT, 0},
	{"max", "highest type number", RD_K_INT, 0},
	{"types", "types", RD_K_INT, 0},
	{"automatic", "automatic", RD_K_INT, 0},
};

static const struct rd_col types_cols[] = {
	{"id", "type", RD_K_INT, 0},
	{"kind", "kind", RD_K_STR, 0},
	{"class", "", RD_K_INT, RD_C_DATA_ONLY},
	{"class_name", "class", RD_K_STR, 0},
	{"site", "", RD_K_ADDR, RD_C_DATA_ONLY},
	{"name", "", RD_K_STR, RD_C_DATA_ONLY},
	{"label", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "", RD_K_STR, RD_C_DATA_ONLY},
};

static void types_doc(rd_doc_t *d, struct rd_session *s)
{
	const struct rd_names *ty = &s->tags.types;
	int64_t automatic = 0;
	for (size_t i = 0; i < ty->n; i++)
		automatic += ty->v[i].has_site;
	rd_table_t *t = rd_doc_table(d, "range", range_cols, NCOLS(range_cols), RD_T_SINGLE);
	rd_row(t);
	if (ty->n) {
		rd_put_int(t, ty->v[0].id);
		rd_put_int(t, ty->v[ty->n - 1].id);
	} else {
		rd_put_null(t);
		rd_put_null(t);
	}
	rd_put_int(t, (int64_t)ty->n);
	rd_put_int(t, automatic);
	t = rd_doc_table(d, "types", types_cols, NCOLS(types_cols), 0);
	for (size_t i = 0; i < ty->n; i++) {
		const struct rd_name *n = &ty->v[i];
		const char *where;
		const char *label = rd_type_label(s->db, &s->tags, n->id, &where);
		rd_row(t);
		rd_put_int(t, n->id);
		rd_put_str(t, n->has_site ? "automatic" : "registered");
		rd_put_int(t, n->class_);
		rd_put_str(t, rd_tag_name(s->db, &s->tags, RD_TAG_CLASS, n->class_));
		if (n->has_site)
			rd_put_uint(t, n->site);
		else
			rd_put_null(t);
		rd_put_str(t, n->name);
		rd_put_str(t, label);
		rd_put_str(t, where);
		rd_put_str(t, rd_type_chain(s->db, &s->tags, n->id));
	}
}

int insp_cmd_types(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&types_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	if (!(r = rd_session_open(&s, o, &a, a.pos[0], RD_NEED_ANY)) && !(r = rd_session_tags(&s, &a))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		types_doc(d, &s);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}
