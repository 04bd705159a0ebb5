/*
** exp_folded.c — folded stacks, "main;f;g N" a line, for flamegraph.pl,
** inferno and speedscope: the stacks of prof_stacks.c by function name.
*/
#include "exp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fold_ctx {
	const struct prof_stacks *s;
	const struct prof_paths *p;
};

static int fold_cmp(const void *a, const void *b, void *ctx)
{
	const struct fold_ctx *c = ctx;
	return strcmp(prof_paths_label(c->p, c->s, *(const uint32_t *)a), prof_paths_label(c->p, c->s, *(const uint32_t *)b));
}

/* One line "a;b;c N" per stack with a value, in the order of a walk that
** takes children by name (an explicit stack: a deep recursion is deep). */
void exp_folded_write(const struct prof_stacks *s, int metric, FILE *f)
{
	struct prof_paths p;
	prof_paths_build(&p, s, false, true, false);
	struct fold_ctx ctx = {s, &p};
	size_t n = p.t.n;
	/* the children of every node, sorted by name, one block per parent */
	uint32_t *first = rd_xcalloc(n + 1, sizeof *first), *kids = rd_xcalloc(n + 1, sizeof *kids);
	uint32_t *cnt = rd_xcalloc(n + 1, sizeof *cnt), *len = rd_xcalloc(n + 1, sizeof *len);
	for (size_t i = 1; i < n; i++)
		cnt[p.t.nodes[i].parent]++;
	for (size_t i = 0, at = 0; i < n; i++)
		first[i] = (uint32_t)at, at += cnt[i], cnt[i] = 0;
	for (size_t i = 1; i < n; i++) {
		uint32_t up = p.t.nodes[i].parent;
		kids[first[up] + cnt[up]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < n; i++)
		qsort_r(kids + first[i], cnt[i], sizeof *kids, fold_cmp, &ctx);
	/* the walk: stack[] of (node, next child), the line in buf */
	uint32_t (*stack)[2] = rd_xcalloc(PROF_STK_MAX_DEPTH + 4, sizeof *stack);
	size_t sp = 0, cap = 4096, used = 0;
	char *buf = rd_xmalloc(cap);
	if (n)
		stack[sp][0] = 0, stack[sp++][1] = 0;
	while (sp) {
		uint32_t i = stack[sp - 1][0], k = stack[sp - 1][1]++;
		if (k == 0 && i != 0) { /* entering i: its name on the line */
			const char *l = prof_paths_label(&p, s, i);
			size_t ll = strlen(l);
			if (used + ll + 2 > cap)
				buf = rd_xrealloc(buf, cap = 2 * (used + ll + 2));
			len[i] = (uint32_t)used;
			if (used)
				buf[used++] = ';';
			for (; *l; l++) /* ';' and line ends inside names would split frames or lines */
				buf[used++] = *l == ';' || *l == '\n' || *l == '\r' ? '_' : *l;
			uint64_t v = (uint64_t)p.t.nodes[i].self[metric];
			if (v)
				fprintf(f, "%.*s %llu\n", (int)used, buf, (unsigned long long)v);
		}
		if (k < cnt[i]) {
			stack[sp][0] = kids[first[i] + k], stack[sp++][1] = 0;
		} else {
			used = i ? len[i] : 0;
			sp--;
		}
	}
	free(buf);
	free(stack);
	free(first);
	free(kids);
	free(cnt);
	free(len);
	prof_paths_free(&p);
}
