/*
** prof_live.c — which traced function allocated the blocks still live in
** a snapshot (issue 13: "with the trace, the function that allocated
** them").
**
** A snapshot with a block map gives each live block its allocation number
** (seq); with MEMINST=mim the trace's ALLOC_BLOCK records carry the same
** number (meminst-trace(5)).  The blocks are loaded first, keyed by that
** number; while the trace is read, each ALLOC_BLOCK whose number is one of
** theirs takes the function on top of its thread's simulated stack then
** (prof_read.c calls prof_live_note).  The number is unique in a process,
** so the join is exact where an address would not be: addresses are
** reused, tracing may have been stopped in between, and with trace=cpu
** the threads' time stamps cannot be compared.  Memory grows with the
** live blocks, never with the trace.
**
** Then, per type, the function that allocated most of its live bytes,
** and how many functions did.
*/
#include "prof_int.h"
#include "prof_cmds.h"

#include <stdlib.h>
#include <string.h>

struct live_block {
	uint64_t seq, size, fn;
	int64_t type;
	bool found; /* an ALLOC_BLOCK record came for it */
};

struct live_sum {
	int64_t type;                 /* first: rd_find_id's key          */
	uint64_t fn, fn_bytes, bytes; /* the top function, its bytes; the joined bytes */
	size_t fns;                   /* distinct functions (0: none joined) */
};
_Static_assert(offsetof(struct live_sum, type) == 0, "rd_find_id reads the key first");

static uint64_t live_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ x >> 29;
}

static void live_index(struct prof_live *l)
{
	l->hcap = 64;
	while (l->hcap < 2 * l->n)
		l->hcap *= 2;
	l->hash = rd_xcalloc(l->hcap, sizeof *l->hash);
	for (size_t i = 0; i < l->n; i++) {
		size_t j = live_mix(l->b[i].seq) & (l->hcap - 1);
		while (l->hash[j])
			j = (j + 1) & (l->hcap - 1);
		l->hash[j] = (uint32_t)i + 1;
	}
}

int prof_live_load(struct prof_live *l, rd_db_t *db, int64_t snap)
{
	memset(l, 0, sizeof *l);
	int r = rd_db_select(db, snap, RD_NEED_ANY);
	if (r || strcmp(rd_db_snap(db)->content, "map") != 0) /* mis: no blocks to join */
		return r;
	rd_blocks_t it;
	struct rd_block b;
	size_t cap = 0;
	if ((r = rd_blocks_open(db, NULL, &it)))
		return r;
	while ((r = rd_blocks_next(&it, &b)) == 1) {
		if (l->n == UINT32_MAX - 1)
			break;
		if (l->n == cap) {
			cap = cap ? 2 * cap : 1024;
			l->b = rd_xrealloc(l->b, cap * sizeof *l->b);
		}
		l->b[l->n++] = (struct live_block){(uint64_t)b.seq, b.size, ENG_FN_UNDEFINED, b.type, false};
	}
	rd_blocks_close(&it);
	if (r > 1)
		return r;
	live_index(l);
	return 0;
}

void prof_live_note(struct prof_live *l, uint64_t seq, uint64_t fn)
{
	l->records++;
	if (!l->hcap)
		return;
	for (size_t j = live_mix(seq) & (l->hcap - 1); l->hash[j]; j = (j + 1) & (l->hcap - 1)) {
		struct live_block *b = &l->b[l->hash[j] - 1];
		if (b->seq == seq) {
			b->fn = fn;
			b->found = true;
			return;
		}
	}
}

static int live_by_type_fn(const void *x, const void *y)
{
	const struct live_block *a = x, *b = y;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return (a->fn > b->fn) - (a->fn < b->fn);
}

/* The per-type sums of the blocks the trace named a function for. */
void prof_live_finish(struct prof_live *l)
{
	free(l->hash);
	l->hash = NULL;
	l->hcap = 0;
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->b[i].found)
			l->b[k++] = l->b[i];
	l->n = k;
	qsort(l->b, l->n, sizeof *l->b, live_by_type_fn);
	l->sums = rd_xcalloc(l->n + 1, sizeof *l->sums);
	for (size_t i = 0; i < l->n;) {
		struct live_sum *s = &l->sums[l->nsums++];
		s->type = l->b[i].type;
		for (; i < l->n && l->b[i].type == s->type;) {
			uint64_t fn = l->b[i].fn, bytes = 0;
			for (; i < l->n && l->b[i].type == s->type && l->b[i].fn == fn; i++)
				bytes += l->b[i].size;
			s->fns++;
			s->bytes += bytes;
			if (bytes > s->fn_bytes || s->fns == 1)
				s->fn = fn, s->fn_bytes = bytes;
		}
	}
	free(l->b);
	l->b = NULL;
	l->n = 0;
}

const char *prof_live_function(const struct prof_live *l, const struct prof_model *m, int64_t type,
			       size_t *fns)
{
	const struct live_sum *s = l->sums ? rd_find_id(l->sums, l->nsums, sizeof *l->sums, type) : NULL;
	*fns = s ? s->fns : 0;
	if (!s)
		return NULL;
	if (s->fn == ENG_FN_UNDEFINED)
		return "(no traced function)";
	for (size_t i = 0; m && i < m->nfuncs; i++)
		if (m->funcs[i].addr == s->fn)
			return m->funcs[i].name;
	return NULL;
}

int64_t prof_live_exit_snapshot(rd_db_t *db, int64_t pid)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT max(id) FROM snapshot WHERE pid = ? AND trigger = 'exit'");
	int64_t snap = 0;
	if (st) {
		sqlite3_bind_int64(st, 1, pid);
		snap = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	}
	sqlite3_finalize(st);
	return snap;
}

int prof_live_join(struct prof_live *l, const char *path, const struct rd_opts *o, int64_t pid,
		   bool no_files, struct prof_input *own)
{
	int r = 0;
	if (own && l->n) {
		struct rd_opts quiet = *o; /* the caller's own reading said what the trace lacks */
		quiet.err = fopen("/dev/null", "w");
		own->path = path;
		own->pid = pid;
		own->no_files = no_files;
		own->live = l;
		r = prof_input_read(own, quiet.err ? &quiet : o, PROF_IN_MODEL);
		if (quiet.err)
			fclose(quiet.err);
		if (r == RD_EXIT_NOTFOUND)
			r = 0;
	}
	prof_live_finish(l);
	return r;
}

/* The traced function that allocated most of the type's live bytes, "and
** N more" in text when others did too; nulls without a trace that says. */
void prof_live_put(rd_table_t *t, const struct prof_live *live, const struct prof_model *m, int64_t type,
		   struct rd_pool *pool)
{
	size_t fns = 0;
	const char *fn = live ? prof_live_function(live, m, type, &fns) : NULL;
	if (fn && fns > 1)
		rd_put_str(t, rd_pool_fmt(pool, "%s and %zu more", fn, fns - 1));
	else
		rd_put_str(t, fn);
	rd_put_str(t, fn);
	if (fns)
		rd_put_uint(t, fns);
	else
		rd_put_null(t);
}

void prof_live_free(struct prof_live *l)
{
	free(l->b);
	free(l->hash);
	free(l->sums);
	memset(l, 0, sizeof *l);
}

/* ------------------------------------------ top --live-at-exit's hook -- */

struct live_top {
	struct prof_live live;
	struct prof_input in;
	struct rd_pool pool;
};

static void live_top_close(void *ctx)
{
	struct live_top *c = ctx;
	prof_input_free(&c->in);
	prof_live_free(&c->live);
	rd_pool_free(&c->pool);
	free(c);
}

static void *live_top_open(const char *path, int64_t pid, int64_t snap, const struct rd_opts *o)
{
	rd_db_t *db;
	if (!rd_is_session(path) || rd_db_open(path, o, &db) != 0)
		return NULL;
	struct live_top *c = rd_xcalloc(1, sizeof *c);
	int r = prof_live_load(&c->live, db, snap);
	rd_db_close(db);
	if (!r && c->live.n)
		r = prof_live_join(&c->live, path, o, pid, o->no_symbols, &c->in);
	if (r || !c->live.nsums) {
		live_top_close(c);
		return NULL;
	}
	return c;
}

static void live_top_put(void *ctx, rd_table_t *t, int64_t type)
{
	struct live_top *c = ctx;
	prof_live_put(t, &c->live, c->in.have_model ? &c->in.model : NULL, type, &c->pool);
}

const struct rd_live_fns prof_live_fns = {live_top_open, live_top_put, live_top_close};
