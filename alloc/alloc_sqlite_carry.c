/*
** alloc_sqlite_carry.c — which rows of the status and name tables a store
** stores: all of them, or only those that changed (meminst-snapshot(5),
** snapshot_delta).
**
** A steady program's interval snapshots repeated the same status figures,
** names, event counts and histograms, and its executable and command line,
** in every snapshot: ~1.2 KB a snapshot, most of what its session grew by
** once the mappings were stored as their changes.  A store through the kept
** connection (the service thread's: interval and peak snapshots) now
** stores, for each unit (a status row, a name row, an entry's event row, a
** type's histogram or stack, a class's load bias), only the units whose
** content differs from the store it made last, and lists itself in
** snapshot_delta with its chain's base, the latest snapshot it stored
** whole; readers take each unit from the latest snapshot of the chain that
** has it.  A store stores everything (and starts a chain) when there is no
** kept connection (the exit snapshot, the API's, control requests), when
** an entry or a unit went away (nothing to say "gone" with), and when the
** units stored since the base reach SQ_CARRY_RATIO times the base's, so
** that a reader never reads more than that many times a whole snapshot.
**
** Units are compared by a 64-bit FNV-1a hash of their stored values: two
** contents of one unit that differ in one field differ in their hash
** (each byte step of FNV-1a is a bijection of the state), and the chance
** of two that differ in several fields colliding is 2^-64.
*/
#include "alloc_int.h"

#include <string.h>

#include "meminst-snapshot.h"
#include "alloc_sqlite_int.h"

/* The units stored since a chain's base, at most this many times the
** base's: a reader's cost for one snapshot, in whole snapshots, is 1 more;
** and its snapshots, at most SQ_CARRY_LENGTH more than 1/8 of the base's
** units (a reader looks each of them up: a chain of a program that changes
** nothing would otherwise grow for ever, and a timeline with it). */
#define SQ_CARRY_RATIO 4
#define SQ_CARRY_LENGTH 32

/* Each entry's unit hashes, per kind: the stored list (sq_carry_t.buf) and
** the one a store under way makes; mapped, grown, kept for the process's
** life (a child of fork starts again: its kept connection is forgotten). */
typedef struct sq_unit_s {
	uint64_t h[SQ_UNITS];
} sq_unit_t;
static sq_unit_t *sq_units[2][ALLOC_K_COUNT];
static size_t sq_units_cap[2][ALLOC_K_COUNT];

static sq_unit_t *sq_units_room(unsigned b, unsigned k, size_t n)
{
	if (n <= sq_units_cap[b][k])
		return sq_units[b][k];
	size_t cap = n + n / 2 + 64;
	sq_unit_t *bigger = alloc_sys_map(cap * sizeof *bigger);
	if (!bigger)
		return NULL;
	if (sq_units[b][k])
		alloc_sys_unmap(sq_units[b][k], sq_units_cap[b][k] * sizeof *bigger);
	sq_units[b][k] = bigger;
	sq_units_cap[b][k] = cap;
	return bigger;
}

/* A hash that is never 0: 0 is a unit without rows. */
static uint64_t sq_present(uint64_t h)
{
	return h ? h : 1;
}

static uint64_t sq_hash_text(uint64_t h, const char *s)
{
	return s ? sq_hash(h, s, strlen(s) + 1) : sq_hash(h, "\377", 1); /* NULL is not "" */
}

/* The name row of entry id of kind k, hashed (the total has none). */
static uint64_t sq_name_hash(const struct meminst_status_info *e, unsigned k, uint32_t id)
{
	if (k == ALLOC_K_TOTAL)
		return 0;
	uint64_t h = sq_hash_text(SQ_HASH_START, e->name);
	int64_t v[2] = {0, 0};
	if (k == ALLOC_K_CLASS)
		h = sq_hash_text(h, alloc_class_module(id));
	if (k == ALLOC_K_TYPE)
		v[0] = e->class_no, v[1] = (int64_t)e->site;
	if (k == ALLOC_K_THREAD)
		v[0] = e->tid;
	return sq_present(sq_hash(h, v, sizeof v));
}

/* Unit u of entry id of kind k, hashed as the rows it stores; 0: no rows. */
static uint64_t sq_unit_hash(const alloc_snap_t *im, unsigned k, uint32_t id, unsigned u)
{
	const struct meminst_status_info *e = &im->status[k][id];
	const struct meminst_events *ev = &im->events[k][id];
	const uint64_t *f;
	unsigned n;
	switch (u) {
	case SQ_U_STATUS: {
		uint64_t v[6] = {e->sizes.current, e->sizes.max_since_last, e->sizes.max_ever,
				 e->blocks.current, e->blocks.max_since_last, e->blocks.max_ever};
		return sq_present(sq_hash(SQ_HASH_START, v, sizeof v));
	}
	case SQ_U_EVENT:
		return ev->calls ? sq_present(sq_hash(SQ_HASH_START, ev, sizeof *ev)) : 0;
	case SQ_U_NAME:
		return sq_name_hash(e, k, id);
	case SQ_U_HIST:
		if (k != ALLOC_K_TYPE)
			return 0;
		for (unsigned b = 0; b < ALLOC_HIST_BUCKETS; b++)
			if (im->hist[id][b])
				return sq_present(sq_hash(SQ_HASH_START, im->hist[id], sizeof im->hist[id]));
		return 0;
	case SQ_U_FRAMES:
		n = k == ALLOC_K_TYPE && id ? alloc_type_frames(id, &f) : 0;
		return n ? sq_present(sq_hash(SQ_HASH_START, f, n * sizeof *f)) : 0;
	default: { /* SQ_U_LOAD */
		if (k != ALLOC_K_CLASS || !id || !alloc_class_module(id))
			return 0;
		uintptr_t bias = alloc_class_bias(id);
		return sq_present(sq_hash(SQ_HASH_START, &bias, sizeof bias));
	}
	}
}

/*
** Hash every unit into the list not stored (was: the stored one, or NULL),
** and say whether the changes can be stored: no entry and no unit went
** away since `was`.  False also when there is no room for the list.
*/
static bool sq_carry_hash_all(const alloc_snap_t *im, const sq_carry_t *last, unsigned next, bool have_was)
{
	bool can = have_was;
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++) {
		sq_unit_t *now = sq_units_room(next, k, im->nstatus[k] ? im->nstatus[k] : 1);
		if (!now)
			return false;
		if (have_was && im->nstatus[k] < last->n[k])
			can = false;
		const sq_unit_t *was = have_was ? sq_units[last->buf][k] : NULL;
		for (uint32_t id = 0; id < im->nstatus[k]; id++)
			for (unsigned u = 0; u < SQ_UNITS; u++) {
				now[id].h[u] = sq_unit_hash(im, k, id, u);
				if (can && id < last->n[k] && was[id].h[u] && !now[id].h[u])
					can = false;
			}
	}
	return can;
}

/*
** Before the rows: decide whether this store stores the changes, record
** what it stores in w->carry (taken by the kept connection once
** committed) and list the snapshot in snapshot_delta if so.  *same_proc:
** exe and cmdline are the base's (stored NULL).
*/
int alloc_sqlite_carry_begin(sq_writer_t *w, const alloc_snap_t *im, const char *exe, const char *cmd,
			     bool *same_proc)
{
	const sq_carry_t *last = w->kept ? &w->kept->carry : NULL;
	uint64_t proc = sq_hash_text(sq_hash_text(SQ_HASH_START, exe), cmd);
	bool have_was = last && last->id && last->rows < SQ_CARRY_RATIO * (last->base_units + 1) &&
			last->length < SQ_CARRY_LENGTH + last->base_units / 8;
	unsigned next = last && last->id ? !last->buf : 0;
	bool room = w->kept != NULL;
	bool delta = room && sq_carry_hash_all(im, last, next, have_was);
	for (unsigned k = 0; room && !delta && k < ALLOC_K_COUNT; k++)
		room = sq_units_cap[next][k] >= im->nstatus[k];
	if (w->kept && !room)
		w->kept->carry.id = 0; /* nothing kept to compare with: the next store stores all */
	w->carry = (sq_carry_t){.id = room ? w->id : 0, .base = w->id, .proc = proc, .buf = next, .delta = delta};
	memcpy(w->carry.n, im->nstatus, sizeof w->carry.n);
	*same_proc = delta && proc == last->proc;
	if (!delta)
		return 0;
	w->carry.base = last->base;
	w->carry.proc = last->proc;
	w->carry.base_units = last->base_units;
	w->carry.rows = last->rows;
	w->carry.length = last->length + 1;
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO snapshot_delta VALUES(?,?)");
	int rc = st ? alloc_sqlite_row(w, st, "ii", w->id, last->base) : -1;
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/* Whether unit u of entry id of kind k is to be stored: always in a whole
** store, when it changed in a store of the changes. */
bool alloc_sqlite_carry_store(sq_writer_t *w, unsigned k, uint32_t id, unsigned u)
{
	sq_carry_t *c = &w->carry;
	if (!c->delta) {
		c->base_units++;
		return true;
	}
	const sq_carry_t *last = &w->kept->carry;
	if (id < last->n[k] && sq_units[last->buf][k][id].h[u] == sq_units[c->buf][k][id].h[u])
		return false;
	c->rows++;
	return true;
}
