/*
** eng_cct.c — calling-context trees of samples (see eng_cct.h).
**
** Nodes live in one array; a hash of (parent, key) finds a child, and each
** node keeps its first child and next sibling for walks.  Nothing here uses
** stdio or libc allocation.
*/
#include "eng_cct.h"

#include <string.h>

void eng_cct_init(struct eng_cct *t, const struct eng_allocator *a)
{
	memset(t, 0, sizeof *t);
	t->a = *a;
}

void eng_cct_free(struct eng_cct *t)
{
	if (t->nodes)
		t->a.free(t->a.ctx, t->nodes);
	if (t->hash)
		t->a.free(t->a.ctx, t->hash);
	struct eng_allocator a = t->a;
	memset(t, 0, sizeof *t);
	t->a = a;
}

static uint64_t cct_mix(uint32_t parent, uint64_t key)
{
	uint64_t x = (key ^ (uint64_t)parent << 40 ^ parent) * 0x9e3779b97f4a7c15ull;
	return x ^ x >> 29;
}

static enum eng_err cct_rehash(struct eng_cct *t)
{
	size_t cap = t->hcap ? 2 * t->hcap : 1024;
	uint32_t *h = t->a.realloc(t->a.ctx, NULL, cap * sizeof *h);
	if (!h)
		return ENG_E_NOMEM;
	memset(h, 0, cap * sizeof *h);
	for (size_t i = 0; i < t->n; i++) {
		size_t j = cct_mix(t->nodes[i].parent, t->nodes[i].key) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i + 1;
	}
	if (t->hash)
		t->a.free(t->a.ctx, t->hash);
	t->hash = h;
	t->hcap = cap;
	return ENG_OK;
}

uint32_t eng_cct_find(const struct eng_cct *t, uint32_t parent, uint64_t key)
{
	if (!t->hcap)
		return ENG_CCT_NONE;
	size_t j = cct_mix(parent, key) & (t->hcap - 1);
	for (uint32_t v; (v = t->hash[j]) != 0; j = (j + 1) & (t->hcap - 1))
		if (t->nodes[v - 1].parent == parent && t->nodes[v - 1].key == key)
			return v - 1;
	return ENG_CCT_NONE;
}

enum eng_err eng_cct_child(struct eng_cct *t, uint32_t parent, uint64_t key, uint32_t *out)
{
	uint32_t i = eng_cct_find(t, parent, key);
	if (i != ENG_CCT_NONE) {
		*out = i;
		return ENG_OK;
	}
	if (t->n >= ENG_CCT_NONE - 1)
		return ENG_E_NOMEM;
	if (2 * (t->n + 1) > t->hcap && cct_rehash(t) != ENG_OK)
		return ENG_E_NOMEM;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		void *p = t->a.realloc(t->a.ctx, t->nodes, cap * sizeof *t->nodes);
		if (!p)
			return ENG_E_NOMEM;
		t->nodes = p;
		t->cap = cap;
	}
	i = (uint32_t)t->n++;
	struct eng_cct_node *nd = &t->nodes[i];
	memset(nd, 0, sizeof *nd);
	nd->key = key;
	nd->parent = parent;
	nd->child = ENG_CCT_NONE;
	nd->next = ENG_CCT_NONE;
	if (parent == ENG_CCT_NONE) {
		nd->thread = (uint32_t)key;
	} else {
		nd->thread = t->nodes[parent].thread;
		nd->next = t->nodes[parent].child;
		t->nodes[parent].child = i;
	}
	size_t j = cct_mix(parent, key) & (t->hcap - 1);
	while (t->hash[j])
		j = (j + 1) & (t->hcap - 1);
	t->hash[j] = i + 1;
	*out = i;
	return ENG_OK;
}

enum eng_err eng_cct_add(struct eng_cct *t, uint32_t thread, const uint64_t *addr, size_t n,
			   const double m[ENG_M_N])
{
	uint32_t cur;
	enum eng_err e = eng_cct_child(t, ENG_CCT_NONE, thread, &cur);
	if (n > ENG_CCT_MAX_DEPTH)
		n = ENG_CCT_MAX_DEPTH;
	for (size_t k = n; e == ENG_OK && k-- > 0;)
		e = eng_cct_child(t, cur, addr[k], &cur);
	if (e)
		return e;
	for (int i = 0; i < ENG_M_N; i++)
		t->nodes[cur].self[i] += m[i];
	return ENG_OK;
}

void eng_cct_clear(struct eng_cct *t, uint32_t thread)
{
	for (size_t i = 0; i < t->n; i++)
		if (!thread || t->nodes[i].thread == thread)
			memset(t->nodes[i].self, 0, sizeof t->nodes[i].self);
}

size_t eng_cct_path(const struct eng_cct *t, uint32_t i, uint32_t *path, size_t max)
{
	size_t n = 0;
	for (uint32_t j = i; j != ENG_CCT_NONE && t->nodes[j].parent != ENG_CCT_NONE; j = t->nodes[j].parent)
		n++;
	size_t skip = n > max ? n - max : 0, k = n - skip;
	for (uint32_t j = i; k > 0; j = t->nodes[j].parent)
		if (skip) /* the innermost frames beyond max are never asked for */
			skip--;
		else
			path[--k] = j;
	return n > max ? max : n;
}

/* ----------------------------------------------------------- folding -- */

static bool cct_has_self(const struct eng_cct_node *nd)
{
	for (int i = 0; i < ENG_M_N; i++)
		if (nd->self[i] != 0)
			return true;
	return false;
}

static void cct_addv(double *to, const double *m, double sign)
{
	for (int i = 0; i < ENG_M_N; i++)
		to[i] += sign * m[i];
}

/* The node the path goes to for function `fid` from `cur` (SWI's rule:
** an existing child; else, recursion: the same function with the same
** parent higher up; else a new child).  *rec: it was a recursive entry. */
static enum eng_err cct_step(struct eng_cct *ft, uint32_t root, uint32_t cur, uint32_t fid,
			      uint32_t *next, bool *rec)
{
	*rec = false;
	if (cur != root && ft->nodes[cur].key == fid) { /* calls itself */
		*next = cur;
		*rec = true;
		return ENG_OK;
	}
	uint32_t c = eng_cct_find(ft, cur, fid);
	if (c != ENG_CCT_NONE) {
		*next = c;
		return ENG_OK;
	}
	if (cur != root) {
		uint64_t ck = ft->nodes[cur].key;
		for (uint32_t a = ft->nodes[cur].parent; a != root && a != ENG_CCT_NONE; a = ft->nodes[a].parent) {
			uint32_t p = ft->nodes[a].parent;
			if (ft->nodes[a].key == fid && p != root && ft->nodes[p].key == ck) {
				*next = a;
				*rec = true;
				return ENG_OK;
			}
		}
	}
	return eng_cct_child(ft, cur, fid, next);
}

/* One address node's samples through the function tree. */
static enum eng_err cct_fold_one(const struct eng_cct *at, uint32_t i, const struct eng_fold *f,
				  struct eng_cct *ft, struct eng_fsum *fs)
{
	const struct eng_cct_node *an = &at->nodes[i];
	uint32_t path[ENG_CCT_MAX_DEPTH + 1], root;
	/* the outermost frames are the ones kept: a deeper stack was cut at add */
	size_t n = eng_cct_path(at, i, path, ENG_CCT_MAX_DEPTH + 1);
	enum eng_err e = eng_cct_child(ft, ENG_CCT_NONE, f->merge ? 0 : an->thread, &root);
	if (e)
		return e;
	uint32_t cur = root, stamp = ++ft->stamp;
	uint32_t leaf = ENG_CCT_NONE;
	cct_addv(ft->nodes[root].total, an->self, 1);
	ft->nodes[root].stamp = stamp;
	for (size_t k = 0; k < n; k++) {
		uint32_t fid = f->fid(f->ctx, path[k], at->nodes[path[k]].key);
		if (fid >= f->nfids || (f->hidden && f->hidden(f->ctx, fid)))
			continue;
		bool rec;
		if ((e = cct_step(ft, root, cur, fid, &cur, &rec)) != ENG_OK)
			return e;
		struct eng_cct_node *nd = &ft->nodes[cur];
		if (rec)
			cct_addv(nd->recur, an->self, 1);
		if (nd->stamp != stamp) {
			nd->stamp = stamp;
			cct_addv(nd->total, an->self, 1);
		}
		if (fs[fid].stamp != stamp) {
			fs[fid].stamp = stamp;
			cct_addv(fs[fid].cum, an->self, 1);
		}
		leaf = fid;
	}
	cct_addv(ft->nodes[cur].self, an->self, 1);
	if (leaf != ENG_CCT_NONE)
		cct_addv(fs[leaf].self, an->self, 1);
	return ENG_OK;
}

enum eng_err eng_cct_fold(const struct eng_cct *at, const struct eng_fold *f, struct eng_cct *ft,
			    struct eng_fsum *fs)
{
	for (size_t i = 0; i < at->n; i++) {
		const struct eng_cct_node *an = &at->nodes[i];
		if (an->parent == ENG_CCT_NONE || !cct_has_self(an))
			continue;
		if (f->thread && an->thread != f->thread)
			continue;
		enum eng_err e = cct_fold_one(at, (uint32_t)i, f, ft, fs);
		if (e)
			return e;
	}
	return ENG_OK;
}
