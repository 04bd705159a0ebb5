/*
** prof_inline.c — the inline frames of sampled addresses, for the exports
** of samples (callgrind, folded, chrome, html).
**
** Code the compiler inlined is, in DWARF, a chain of functions at one
** address: the symbol's function, the function inlined into it at the
** line of that call, and so on to the innermost one at the address's own
** line.  perf and pprof show the chain as frames; so do the exports: the
** frame of each address-tree node becomes its chain, outermost first, each
** frame with its source position (the line of the call into the next one,
** the address's own line for the innermost).  The model's function stays
** the outermost frame (its name, its id); each inlined function gets an id
** after the model's, one per name.
**
** The fold into a function tree (recursion collapsed, as the displays)
** takes one frame per node: each distinct chain of functions is one fold id
** (after the model's function ids) that prof_inline_fold_frames expands back.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>
#include "meminst-hash.h"

/* Inline depth kept per address (the innermost functions beyond it are
** left out); DWARF of real programs rarely nests more than a dozen. */
#define INL_MAX 64
#define INL_NONE UINT32_MAX

void prof_inline_init(struct prof_inline *x, const struct prof_smodel *m)
{
	memset(x, 0, sizeof *x);
	x->m = m;
	x->nfuncs = x->cap = m->nfuncs;
	x->funcs = rd_xcalloc(x->cap + 1, sizeof *x->funcs);
	memcpy(x->funcs, m->funcs, m->nfuncs * sizeof *m->funcs);
	eng_cct_init(&x->by_addr, &prof_libc_allocator);
	eng_cct_init(&x->by_name, &prof_libc_allocator);
	eng_cct_init(&x->chains, &prof_libc_allocator);
	x->nodes = prof_samples_tree(m->s)->n;
	x->node_chain = rd_xcalloc(x->nodes + 1, sizeof *x->node_chain);
	for (size_t i = 0; i < x->nodes; i++)
		x->node_chain[i] = INL_NONE;
}

void prof_inline_free(struct prof_inline *x)
{
	eng_cct_free(&x->by_addr);
	eng_cct_free(&x->by_name);
	eng_cct_free(&x->chains);
	eng_cct_free(&x->ft);
	free(x->funcs);
	free(x->frames);
	free(x->chain);
	free(x->node_chain);
	free(x->fold_first);
	free(x->fs);
	rd_pool_free(&x->pool);
	memset(x, 0, sizeof *x);
}

static uint64_t inl_hash(const char *s)
{
	return meminst_fnv_str(MEMINST_FNV_START, s);
}

/* The id of the inlined function `name` (file: where its code is; outer:
** the function it was inlined into, for its module). */
static uint32_t inl_func(struct prof_inline *x, const char *name, const char *file, uint32_t outer)
{
	/* by name: roots keyed by its hash, children by id (collisions) */
	uint32_t h = prof_cct_child_or_exit(&x->by_name, ENG_CCT_NONE, inl_hash(name));
	for (uint32_t c = x->by_name.nodes[h].child; c != ENG_CCT_NONE; c = x->by_name.nodes[c].next)
		if (!strcmp(x->funcs[x->by_name.nodes[c].key].name, name))
			return (uint32_t)x->by_name.nodes[c].key;
	if (x->nfuncs == x->cap) {
		x->cap = 2 * x->cap + 64;
		x->funcs = rd_xrealloc(x->funcs, (x->cap + 1) * sizeof *x->funcs);
	}
	uint32_t id = (uint32_t)x->nfuncs++;
	x->funcs[id] = (struct prof_func){.addr = x->funcs[outer].addr, .name = rd_pool_str(&x->pool, name),
					  .file = file ? rd_pool_str(&x->pool, file) : NULL,
					  .module = x->funcs[outer].module};
	prof_cct_child_or_exit(&x->by_name, h, id);
	return id;
}

static void inl_push(struct prof_inline *x, uint32_t fn, const char *file, int line)
{
	if (x->nframes == x->frcap) {
		x->frcap = 2 * x->frcap + 256;
		x->frames = rd_xrealloc(x->frames, x->frcap * sizeof *x->frames);
	}
	x->frames[x->nframes++] = (struct prof_inl_frame){fn, file, line};
}

/* The frames of address a of function f, appended to x->frames. */
static void inl_lookup(struct prof_inline *x, uint64_t a, uint32_t f)
{
	const struct prof_func *fn = &x->funcs[f];
	struct prof_iframe ch[INL_MAX];
	size_t n = prof_symtab_inline(x->m->st, a, ch, INL_MAX);
	if (n <= 1) {
		const char *file = n ? ch[0].file : NULL;
		int line = n ? ch[0].line : prof_symtab_line(x->m->st, a, &file);
		inl_push(x, f, line ? file : fn->file, line ? line : fn->line);
		return;
	}
	/* ch[n - 1] is f (the symbol's function) at the line of its call
	** into ch[n - 2], … ch[0] the innermost at a's own line */
	inl_push(x, f, ch[n - 1].file, ch[n - 1].line);
	for (size_t k = n - 1; k-- > 0;)
		if (ch[k].func) /* a scope DWARF does not name stays its caller's */
			inl_push(x, inl_func(x, ch[k].func, ch[k].file, f), ch[k].file, ch[k].line);
}

/* The fold id of the chain at frames [first, first + n). */
static uint32_t inl_chain_id(struct prof_inline *x, size_t first, size_t n)
{
	if (n == 1)
		return x->frames[first].fn;
	uint32_t c = ENG_CCT_NONE; /* a trie of the functions, one node per distinct chain */
	for (size_t k = 0; k < n; k++)
		c = prof_cct_child_or_exit(&x->chains, c, x->frames[first + k].fn);
	struct eng_cct_node *nd = &x->chains.nodes[c];
	if (nd->self[0] == 0) { /* a new chain */
		if (x->nchains == x->fold_cap) {
			x->fold_cap = 2 * x->fold_cap + 64;
			x->fold_first = rd_xrealloc(x->fold_first, 2 * x->fold_cap * sizeof *x->fold_first);
		}
		x->fold_first[2 * x->nchains] = (uint32_t)first;
		x->fold_first[2 * x->nchains + 1] = (uint32_t)n;
		nd = &x->chains.nodes[c];
		nd->self[0] = (double)++x->nchains;
	}
	return (uint32_t)(x->m->nfuncs + (size_t)nd->self[0] - 1);
}

/* Node i's chain: x->chain[3 * k] first frame, [3k + 1] count, [3k + 2]
** fold id, k = x->node_chain[i]. */
static uint32_t inl_node_chain(struct prof_inline *x, uint32_t i)
{
	if (x->node_chain[i] != INL_NONE)
		return x->node_chain[i];
	const struct eng_cct *at = prof_samples_tree(x->m->s);
	uint32_t f = x->m->node_fid[i];
	uint64_t a = at->nodes[i].key;
	const struct prof_func *fn = f < x->m->nfuncs ? &x->m->funcs[f] : NULL;
	bool pseudo = fn && (fn->addr <= ENG_FN_PSEUDO_MAX || fn->addr >= PROF_FN_MEMINST);
	/* every node of an address has its function (<meminst> is pseudo) */
	uint32_t c = fn && !pseudo ? eng_cct_find(&x->by_addr, ENG_CCT_NONE, a) : ENG_CCT_NONE;
	if (c == ENG_CCT_NONE) {
		size_t first = x->nframes;
		if (pseudo)
			inl_push(x, f, fn->file, fn->line);
		else if (fn)
			inl_lookup(x, a, f);
		size_t n = x->nframes - first;
		if (x->nch == x->chcap) {
			x->chcap = 2 * x->chcap + 256;
			x->chain = rd_xrealloc(x->chain, 3 * x->chcap * sizeof *x->chain);
		}
		uint32_t k = (uint32_t)x->nch++;
		x->chain[3 * k] = (uint32_t)first;
		x->chain[3 * k + 1] = (uint32_t)n;
		x->chain[3 * k + 2] = n ? inl_chain_id(x, first, n) : INL_NONE;
		if (fn && !pseudo) { /* (the node first: making it may move the array) */
			uint32_t an = prof_cct_child_or_exit(&x->by_addr, ENG_CCT_NONE, a);
			x->by_addr.nodes[an].self[0] = k;
		}
		return x->node_chain[i] = k;
	}
	return x->node_chain[i] = (uint32_t)x->by_addr.nodes[c].self[0];
}

size_t prof_inline_frames(struct prof_inline *x, uint32_t node, const struct prof_inl_frame **out)
{
	uint32_t k = inl_node_chain(x, node);
	*out = x->frames + x->chain[3 * k];
	return x->chain[3 * k + 1];
}

size_t prof_inline_fold_frames(const struct prof_inline *x, uint32_t id, const struct prof_inl_frame **out,
			      struct prof_inl_frame *one)
{
	if (id < x->m->nfuncs) {
		*one = (struct prof_inl_frame){id, x->funcs[id].file, x->funcs[id].line};
		*out = one;
		return 1;
	}
	id -= (uint32_t)x->m->nfuncs;
	*out = x->frames + x->fold_first[2 * id];
	return x->fold_first[2 * id + 1];
}

/* ------------------------------------------------------------ folding -- */

static uint32_t inl_fold_fid(void *ctx, uint32_t node, uint64_t addr)
{
	(void)addr;
	struct prof_inline *x = ctx;
	if (x->m->node_fid[node] >= x->m->nfuncs)
		return INL_NONE; /* inside a <meminst> frame, or left out */
	return x->chain[3 * inl_node_chain(x, node) + 2];
}

static bool inl_fold_hidden(void *ctx, uint32_t id)
{
	struct prof_inline *x = ctx;
	if (id >= x->m->nfuncs) /* a chain: hidden with its outermost function */
		id = x->frames[x->fold_first[2 * (id - x->m->nfuncs)]].fn;
	return x->m->hidden && x->m->hidden[id];
}

void prof_inline_fold(struct prof_inline *x)
{
	const struct eng_cct *at = prof_samples_tree(x->m->s);
	for (uint32_t i = 0; i < at->n; i++) /* every chain known: the fold's ids are bounded */
		if (at->nodes[i].parent != ENG_CCT_NONE && x->m->node_fid[i] < x->m->nfuncs)
			inl_node_chain(x, i);
	size_t nfids = x->m->nfuncs + x->nchains;
	x->fs = rd_xcalloc(nfids + 1, sizeof *x->fs);
	eng_cct_init(&x->ft, &prof_libc_allocator);
	struct eng_fold f = {inl_fold_fid, inl_fold_hidden, x, nfids, x->m->thread, true};
	if (eng_cct_fold(at, &f, &x->ft, x->fs) != ENG_OK) {
		fputs("inspect: out of memory\n", stderr);
		exit(RD_EXIT_DB);
	}
}
