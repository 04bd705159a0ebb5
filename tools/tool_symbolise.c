/*
** tool_symbolise.c — meminst-symbolise, the helper that names the
** allocation sites of libmeminst's print= tables (installed in
** $(pkglibexecdir); see meminst(7), print=).
**
** libmeminst does not read debug information inside the program (see
** alloc/alloc_symbolise.c for why): at exit it starts this program and
** hands it, on standard input, the modules loaded and the sites of the
** types it prints; this program names each site with the reader toolkit,
** as inspect names it in a snapshot (inline chain, the user's file:line,
** template arguments folded), and answers on standard output.  One request
** and one answer, all text:
**
**   request   meminst-symbolise 1
**             M <load bias, hex> <build-id, hex, or -> <path>
**             T <type> <bias of its unloaded module, hex, or -> <n>
**               <n frames, hex, the site first>\t<that module's path>\t<name>
**             E
**   answer    <type>\t<name>\t<file:line>\t<inline chain>   (empty: none)
**             E
**
** A malformed request is one line on standard error and exit status 2.
*/
#include "rd_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYM_REQUEST_MAX ((size_t)256 << 20)

static int sym_bad(const char *what, size_t lineno)
{
	rd_errf(stderr, "meminst-symbolise: bad request line %zu: %s\n", lineno, what);
	return 2;
}

/* The whole of standard input, NUL-terminated; NULL when too large. */
static char *sym_read_all(void)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = rd_xmalloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += n;
		if (cap - len - 1 == 0) {
			if (cap >= SYM_REQUEST_MAX) {
				free(buf);
				return NULL;
			}
			buf = rd_xrealloc(buf, cap *= 2);
		}
	}
	buf[len] = 0;
	return buf;
}

/* One field of an answer: tabs and line ends would end it early. */
static void sym_field(const char *s)
{
	for (; s && *s; s++)
		putchar(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

/* "T type bias n f0 f1 …\tpath\tname": parsed into n (frames malloc'd). */
static bool sym_type_line(char *line, int64_t *id, struct rd_module *gone, bool *has_gone,
			  struct rd_name *n)
{
	char *tab = strchr(line, '\t'), *tab2 = tab ? strchr(tab + 1, '\t') : NULL;
	if (!tab2)
		return false;
	*tab = *tab2 = 0;
	char *p = line + 1, *end;
	errno = 0;
	*id = strtoll(p, &end, 10);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	*has_gone = strncmp(p, "- ", 2) != 0;
	gone->base = *has_gone ? strtoull(p, &end, 16) : 0;
	p = *has_gone ? end : p + 1;
	unsigned long long k = strtoull(p, &end, 10);
	if (end == p || k == 0 || k > 64)
		return false;
	n->frames = rd_xcalloc(k, sizeof *n->frames);
	n->nframes = k;
	for (size_t i = 0; i < k; i++) {
		p = end;
		n->frames[i] = strtoull(p, &end, 16);
		if (end == p)
			return false;
	}
	if (*end || errno)
		return false;
	gone->path = tab + 1;
	gone->build_id = NULL;
	*has_gone = *has_gone && *gone->path;
	n->name = tab2 + 1;
	n->has_site = true;
	n->site = n->frames[0];
	return true;
}

/* The unloaded modules named so far, each kept at one address: the
** toolkit knows a module looked at alone by its address. */
struct sym_gone {
	struct rd_module m;
	struct sym_gone *next;
};

static const struct rd_module *sym_gone_find(struct sym_gone **list, const struct rd_module *g)
{
	for (struct sym_gone *e = *list; e; e = e->next)
		if (e->m.base == g->base && strcmp(e->m.path, g->path) == 0)
			return &e->m;
	struct sym_gone *e = rd_xcalloc(1, sizeof *e);
	e->m = *g;
	e->next = *list;
	*list = e;
	return &e->m;
}

/* "M bias build-id path" into the module table. */
static bool sym_module_line(char *line, struct rd_vec *mods)
{
	char *p = line + 2, *end;
	uint64_t bias = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	char *sp = strchr(p, ' ');
	if (!sp || !sp[1])
		return false;
	*sp = 0;
	struct rd_module *m = rd_vec_push(mods);
	m->base = bias;
	m->build_id = strcmp(p, "-") == 0 ? NULL : p;
	m->path = sp + 1;
	return true;
}

static int sym_answer(char *req)
{
	struct rd_vec mods;
	rd_vec_init(&mods, sizeof(struct rd_module));
	struct rd_pool pool = {0};
	struct sym_gone *gones = NULL;
	rd_syms_t *syms = NULL;
	size_t lineno = 0;
	int r = 0;
	bool ended = false;
	for (char *line = req, *next; *line && !ended && !r; line = next) {
		next = strchr(line, '\n');
		if (!next)
			return sym_bad("no line end", lineno + 1);
		*next++ = 0;
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "meminst-symbolise 1") != 0)
				r = sym_bad("not 'meminst-symbolise 1'", lineno);
		} else if (line[0] == 'M' && line[1] == ' ') {
			if (syms || !sym_module_line(line, &mods))
				r = sym_bad(syms ? "a module after the types" : "expected 'M bias build-id path'", lineno);
		} else if (line[0] == 'T' && line[1] == ' ') {
			int64_t id;
			struct rd_module gone;
			bool has_gone;
			struct rd_name n = {0};
			if (!sym_type_line(line, &id, &gone, &has_gone, &n)) {
				free(n.frames);
				r = sym_bad("expected 'T type bias n frames…\\tpath\\tname'", lineno);
				break;
			}
			if (!syms)
				syms = rd_syms_new(mods.v, mods.n);
			rd_name_resolve(&pool, syms, has_gone ? sym_gone_find(&gones, &gone) : NULL, &n);
			printf("%lld\t", (long long)id);
			sym_field(n.label);
			putchar('\t');
			sym_field(n.where);
			putchar('\t');
			sym_field(n.chain);
			putchar('\n');
			free(n.frames);
		} else if (strcmp(line, "E") == 0) {
			ended = true;
		} else {
			r = sym_bad("unknown line", lineno);
		}
	}
	if (!r && !ended)
		r = lineno ? sym_bad("no 'E' line at the end", lineno) : sym_bad("an empty request", 1);
	if (!r)
		puts("E");
	if (syms)
		rd_syms_free(syms);
	rd_pool_free(&pool);
	rd_vec_free(&mods);
	while (gones) {
		struct sym_gone *next = gones->next;
		free(gones);
		gones = next;
	}
	if (fflush(stdout) != 0 && !r)
		r = 1;
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		rd_errf(stderr, "usage: meminst-symbolise < request (libmeminst's helper for print=: "
				"see meminst(7))\n");
		return 2;
	}
	char *req = sym_read_all();
	if (!req) {
		rd_errf(stderr, "meminst-symbolise: the request is larger than %zu MiB\n", SYM_REQUEST_MAX >> 20);
		return 2;
	}
	int r = sym_answer(req);
	free(req);
	return r;
}
