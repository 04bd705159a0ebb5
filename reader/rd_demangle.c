/*
** rd_demangle.c — the names of C++ functions as the displays show them:
** demangled (the C++ runtime's __cxa_demangle), and unless --full-names
** asks otherwise, with their template arguments folded to "<>" and the
** return type of a template instance dropped (rd_symbols.c names the
** functions of call sites with it).
*/
#include "rd_int.h"

#include <stdlib.h>
#include <string.h>

/* From the C++ runtime (libstdc++), declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The length of the operator spelled at p (after "operator"), so that its
** '<' or '>' is never taken for a template bracket. */
static size_t fold_operator(const char *p)
{
	static const char *const ops[] = {"<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "<", ">"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strncmp(p, ops[i], strlen(ops[i])) == 0)
			return strlen(ops[i]);
	return 0;
}

static bool fold_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of "operator<<" and the like at name + i, or 0. */
static size_t fold_operator_at(const char *name, size_t i)
{
	if (strncmp(name + i, "operator", 8) != 0 || (i > 0 && fold_ident(name[i - 1])) ||
	    fold_ident(name[i + 8]))
		return 0;
	size_t k = 8 + (name[i + 8] == ' ');
	return k + fold_operator(name + i + k);
}

/* One pass over name: checks the brackets balance, or (write) folds. */
static bool fold_pass(char *name, bool write)
{
	size_t o = 0;
	int depth = 0;
	for (size_t i = 0; name[i];) {
		size_t op = fold_operator_at(name, i);
		size_t len = op ? op : 1;
		char c = name[i];
		if (!op && c == '>' && depth == 0)
			return false; /* "x<(a>b)>" and other oddities: left whole */
		bool keep = depth == 0 || (!op && c == '>' && depth == 1);
		if (!op && c == '<')
			depth++;
		else if (!op && c == '>')
			depth--;
		if (write && keep)
			memmove(name + o, name + i, len);
		o += keep ? len : 0;
		i += len;
	}
	if (write)
		name[o] = 0;
	return depth == 0;
}

/*
** The demangler writes the return type of a function template instance
** ("void std::vector<>::_M_realloc_insert<>(…)"): it says nothing about
** where the code is and makes the name longer, so folded names drop it.
** It is what comes before the last space outside any brackets ahead of
** the parameter list; a name with "operator" keeps everything (a
** conversion operator's type is its name).
*/
static void fold_return_type(char *name)
{
	int depth = 0;
	char *space = NULL;
	for (char *p = name; *p; p++) {
		if (depth == 0 && *p == '(' && p > name)
			break;
		if (*p == '<' || *p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == ']' || *p == '}') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0)
			space = p;
	}
	if (space && !strstr(name, "operator"))
		memmove(name, space + 1, strlen(space + 1) + 1);
}

void rd_fold_templates(char *name)
{
	if (name && strchr(name, '<') && fold_pass(name, false)) {
		fold_pass(name, true);
		fold_return_type(name);
	}
}

char *rd_demangle(const char *name)
{
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	if (!rd_full_names())
		rd_fold_templates(d);
	return d;
}
