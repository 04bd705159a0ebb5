/*
** rd_scopes.c — the DIEs with code addresses of a compile unit, read in
** one walk of the unit and kept, so that the scopes around an address
** (its inline chain) cost a descent through a few sibling lists.
**
** libdw's dwarf_getscopes walks the unit's DIE tree again for every
** address: a thousand allocation sites of one program cost half a second
** of CPU (bench/serve.sh's first scrape).  This file walks the tree as
** dwarf_getscopes does, once: the same DIEs are descended into (the
** scopes that can hold code, a DW_TAG_imported_unit's children in its
** place), the same DIEs are left out with their children (those whose
** dwarf_ranges give no address), and a lookup takes, at each level, the
** first DIE that contains the address, as dwarf_getscopes's pruned walk
** does, down to the innermost.  Its parents are then the physical nesting
** dwarf_getscopes_die gives for it.
*/
#include "rd_int.h"
#include "rd_scopes.h"

#include <dwarf.h>
#include <stdlib.h>

#define SCOPES_NONE UINT32_MAX

struct scope_node {
	Dwarf_Die die;
	uint32_t child, next; /* first child and next sibling, or SCOPES_NONE */
	uint32_t range, nrange; /* its [lo, hi) in the unit's ranges */
};

struct scope_unit {
	Dwarf_Die *cu;
	struct scope_node *node;
	size_t n, cap;
	uint64_t (*range)[2];
	size_t nr, rcap;
	uint32_t first; /* the unit's first child with addresses */
};

struct rd_scopes {
	struct scope_unit *unit;
	size_t n, cap;
};

rd_scopes_t *rd_scopes_new(void)
{
	return rd_xcalloc(1, sizeof(struct rd_scopes));
}

void rd_scopes_free(rd_scopes_t *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->unit[i].node);
		free(s->unit[i].range);
	}
	free(s->unit);
	free(s);
}

/* The DIEs dwarf_getscopes descends into (libdw's may_have_scopes). */
static bool scopes_may_nest(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* die as a node with its address ranges; SCOPES_NONE when it has none
** (dwarf_haspc is false for every address then, and nothing below it is
** looked at). */
static uint32_t scopes_add(struct scope_unit *u, Dwarf_Die *die)
{
	size_t r0 = u->nr;
	ptrdiff_t off = 0;
	Dwarf_Addr base, lo, hi;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (u->nr == u->rcap) {
			u->rcap = u->rcap ? 2 * u->rcap : 64;
			u->range = rd_xrealloc(u->range, u->rcap * sizeof *u->range);
		}
		u->range[u->nr][0] = lo;
		u->range[u->nr++][1] = hi;
	}
	if (u->nr == r0 || u->n >= SCOPES_NONE - 1)
		return SCOPES_NONE;
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 64;
		u->node = rd_xrealloc(u->node, u->cap * sizeof *u->node);
	}
	u->node[u->n] = (struct scope_node){*die, SCOPES_NONE, SCOPES_NONE, (uint32_t)r0, (uint32_t)(u->nr - r0)};
	return (uint32_t)u->n++;
}

/* Append the children of parent with addresses to the sibling list that
** ends at *last (*first when empty), each with its own children. */
static void scopes_walk(struct scope_unit *u, Dwarf_Die *parent, unsigned depth, uint32_t *first,
			uint32_t *last)
{
	Dwarf_Die child;
	if (depth >= RD_SCOPES_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_imported_unit) {
			/* its children stand in its place, as siblings */
			Dwarf_Attribute a;
			Dwarf_Die imported;
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &imported))
				scopes_walk(u, &imported, depth + 1, first, last);
			continue;
		}
		uint32_t i = scopes_add(u, &child);
		if (i == SCOPES_NONE)
			continue;
		if (*last == SCOPES_NONE)
			*first = i;
		else
			u->node[*last].next = i;
		*last = i;
		if (scopes_may_nest(tag) && dwarf_haschildren(&child) > 0) {
			uint32_t cfirst = SCOPES_NONE, clast = SCOPES_NONE;
			scopes_walk(u, &child, depth + 1, &cfirst, &clast);
			u->node[i].child = cfirst;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static struct scope_unit *scopes_unit(struct rd_scopes *s, Dwarf_Die *cu)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->unit[i].cu == cu)
			return &s->unit[i];
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->unit = rd_xrealloc(s->unit, s->cap * sizeof *s->unit);
	}
	struct scope_unit *u = &s->unit[s->n++];
	*u = (struct scope_unit){.cu = cu, .first = SCOPES_NONE};
	uint32_t last = SCOPES_NONE;
	scopes_walk(u, cu, 0, &u->first, &last);
	return u;
}

static bool scopes_has(const struct scope_unit *u, const struct scope_node *n, Dwarf_Addr pc)
{
	for (uint32_t r = n->range; r < n->range + n->nrange; r++)
		if (pc >= u->range[r][0] && pc < u->range[r][1])
			return true;
	return false;
}

size_t rd_scopes_at(rd_scopes_t *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **out, size_t max)
{
	struct scope_unit *u = scopes_unit(s, cu);
	uint32_t path[RD_SCOPES_DEPTH];
	size_t n = 0;
	for (uint32_t i = u->first; i != SCOPES_NONE && n < RD_SCOPES_DEPTH;) {
		while (i != SCOPES_NONE && !scopes_has(u, &u->node[i], pc))
			i = u->node[i].next;
		if (i == SCOPES_NONE)
			break;
		path[n++] = i;
		i = u->node[i].child;
	}
	size_t k = 0;
	for (; k < n && k < max; k++)
		out[k] = &u->node[path[n - 1 - k]].die;
	return k;
}
