/*
** alloc_status.c — status counters: current, max since last read, max ever.
**
** Each allocator, class, type and thread, and the total, has one global
** entry (alloc_stat_t) per counter pair (sizes, blocks).  Updating shared
** entries on every malloc would make two threads fight over cache lines, so
** each thread keeps a *slot* per entry it touches: the global values `base`
** it saw when it last flushed, its own change since (`d`, both counters in
** one word, see alloc_int.h) and the highest change since.  A thread folds its changed
** slots into their entries (one atomic add, then atomic maxima) when its
** flush budget runs out (alloc_int.h), a slot is flushed when it is reused
** for another entry, when a read has reset the kind (epoch change), and
** every slot when the thread blocks or exits.
**
** Precision, as documented in meminst(7):
**   - current: exact whenever the program is quiescent, because readers add
**     every live thread's pending deltas to the global values;
**   - max figures: exact for a single thread (its base is the true global
**     value), and for threads that take turns: a thread flushes before it
**     blocks, creates a thread or exits, and restarts its slots from the
**     shared values on its next count (alloc_thread_park), so the next
**     thread to run sees the true value as its base; with T threads
**     updating concurrently a peak may be missed or overstated by at most
**     T x ALLOC_FLUSH_BYTES bytes (T x ALLOC_FLUSH_BLOCKS blocks).
** The hot half (changing a slot) is inline in alloc_core.c.
*/
#include "alloc_int.h"

#include <stdint.h>
#include <string.h>


_Atomic uint32_t alloc_epoch[ALLOC_K_COUNT];

/* The entries of each kind, in tables that grow as numbers are handed out
** (alloc_stat_reserve); chunks of 1,024 entries (128 KiB) for the large
** kinds: the first and the overflow number's are mapped at start, and 4,096
** took 4 MiB of the address space of a program under RLIMIT_AS. */
static alloc_table_t stat_tables[ALLOC_K_COUNT] = {
	ALLOC_TABLE("total", alloc_stat_t, 1, 4),
	ALLOC_TABLE("allocators", alloc_stat_t, 16, 4),
	ALLOC_TABLE("classes", alloc_stat_t, 1u << 16, 10),
	ALLOC_TABLE("types", alloc_stat_t, ALLOC_TYPE_MAX + 1, 10),
	ALLOC_TABLE("threads", alloc_stat_t, ALLOC_THREAD_MAX + 1, 10),
};

/* Each type's size histogram (the total's is their sum). */
typedef struct alloc_hist_s {
	_Atomic uint64_t n[ALLOC_HIST_BUCKETS];
} alloc_hist_t;
static alloc_table_t hist_table = ALLOC_TABLE("size histograms", alloc_hist_t, ALLOC_TYPE_MAX + 1, 10);

/* The entries every process uses from the start: the total, the
** allocators, number 0 of each kind and the overflow type and thread.
** Called from alloc_init. */
int alloc_stat_init(void)
{
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++)
		if (!alloc_table_ensure(&stat_tables[k], 0))
			return -1;
	if (!alloc_table_ensure(&stat_tables[ALLOC_K_ALLOCATOR], ALLOC_A_ALL - 1) ||
	    !alloc_table_ensure(&stat_tables[ALLOC_K_TYPE], ALLOC_TYPE_MAX) ||
	    !alloc_table_ensure(&hist_table, 0) || !alloc_table_ensure(&hist_table, ALLOC_TYPE_MAX) ||
	    !alloc_table_ensure(&stat_tables[ALLOC_K_THREAD], ALLOC_THREAD_MAX))
		return -1;
	return 0;
}

/* Before a number of a kind is handed out: its entry.  False if it cannot
** be mapped. */
bool alloc_stat_reserve(unsigned kind, uint32_t id)
{
	return alloc_table_ensure(&stat_tables[kind], id) &&
	       (kind != ALLOC_K_TYPE || alloc_table_ensure(&hist_table, id));
}

alloc_stat_t *alloc_stat_entry(unsigned kind, uint32_t id)
{
	alloc_stat_t *e = alloc_table_at(&stat_tables[kind], id);
	alloc_assert(e != NULL);
	return e;
}

static void stat_atomic_max(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
	while (v > old && !atomic_compare_exchange_weak_explicit(
			      m, &old, v, memory_order_relaxed, memory_order_relaxed))
		;
}

/* Restart a slot's period from the global values g[]. */
static void slot_restart(alloc_slot_t *s, int64_t base[2], const int64_t g[2])
{
	__atomic_store_n(&base[0], g[0], __ATOMIC_RELAXED);
	__atomic_store_n(&base[1], g[1], __ATOMIC_RELAXED);
	__atomic_store_n(&s->d, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->hi, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->hi_blocks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->in, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->temps, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reallocs, 0, __ATOMIC_RELAXED);
}

/*
** The entry of `kind` that also gets a slot's events (alloc_count.h,
** core_events_in counts them in the allocator's and the type's slots
** only): for a type's slot, the total, its class and the thread's own
** entry (every event a thread counts is of its own blocks); else
** ALLOC_KEY_NONE.  The flush folds them in there and a read adds the
** pending ones there, so the total, class and thread figures stay exact.
*/
static const unsigned slot_events_kinds[] = {ALLOC_K_TOTAL, ALLOC_K_CLASS, ALLOC_K_THREAD};
static uint32_t slot_events_also(const alloc_thread_t *t, const alloc_slot_t *s, uint32_t key, unsigned kind)
{
	if (key == ALLOC_KEY_NONE || ALLOC_KEY_KIND(key) != ALLOC_K_TYPE)
		return ALLOC_KEY_NONE;
	if (kind == ALLOC_K_TOTAL)
		return ALLOC_KEY(ALLOC_K_TOTAL, 0);
	if (kind == ALLOC_K_CLASS)
		return ALLOC_KEY(ALLOC_K_CLASS, s->cls);
	if (kind == ALLOC_K_THREAD)
		return __atomic_load_n(&t->slots[ALLOC_SLOTS_FIXED - 1].key, __ATOMIC_ACQUIRE);
	return ALLOC_KEY_NONE;
}

/* A slot's pending events (calls, bytes, temporaries, reallocs). */
static void slot_events(const alloc_slot_t *s, uint64_t ev[ALLOC_EV_COUNT])
{
	int64_t in = __atomic_load_n(&s->in, __ATOMIC_RELAXED);
	ev[ALLOC_EV_CALLS] = (uint64_t)alloc_slot_blocks(in);
	ev[ALLOC_EV_BYTES] = (uint64_t)alloc_slot_bytes(in);
	ev[ALLOC_EV_TEMPS] = __atomic_load_n(&s->temps, __ATOMIC_RELAXED);
	ev[ALLOC_EV_REALLOCS] = __atomic_load_n(&s->reallocs, __ATOMIC_RELAXED);
}

static void stat_add_events(alloc_stat_t *e, const uint64_t ev[ALLOC_EV_COUNT])
{
	for (int k = 0; k < ALLOC_EV_COUNT; k++)
		if (ev[k])
			atomic_fetch_add_explicit(&e->ev[k], ev[k], memory_order_relaxed);
}

/* A slot's pending events into its entry and the one slot_events_also
** names (its type's histogram too). */
static void slot_fold_events(alloc_thread_t *t, unsigned i, alloc_stat_t *e)
{
	alloc_slot_t *s = &t->slots[i];
	uint64_t ev[ALLOC_EV_COUNT];
	slot_events(s, ev);
	stat_add_events(e, ev);
	for (unsigned k = 0; k < sizeof slot_events_kinds / sizeof slot_events_kinds[0]; k++) {
		uint32_t also = slot_events_also(t, s, s->key, slot_events_kinds[k]);
		if (also != ALLOC_KEY_NONE && (ev[ALLOC_EV_CALLS] | ev[ALLOC_EV_TEMPS]))
			stat_add_events(alloc_stat_entry(ALLOC_KEY_KIND(also), ALLOC_KEY_ID(also)), ev);
	}
	if (ALLOC_KEY_KIND(s->key) != ALLOC_K_TYPE || !ev[ALLOC_EV_CALLS])
		return;
	alloc_hist_t *h = alloc_table_at(&hist_table, ALLOC_KEY_ID(s->key));
	uint16_t *p = t->hist[i - (ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS)];
	for (unsigned b = 0; b < ALLOC_HIST_BUCKETS; b++)
		if (p[b]) {
			if (h)
				atomic_fetch_add_explicit(&h->n[b], p[b], memory_order_relaxed);
			__atomic_store_n(&p[b], 0, __ATOMIC_RELAXED);
		}
}

/*
** Fold a change (bytes, blocks) and the highest values reached on the way
** (hi[], absolute) into an entry; g[] gets the entry's new current values.
** The high marks count toward max_since_last only if they were gathered in
** the kind's current epoch (`in_epoch`), that is after the last read reset
** the kind.
*/
static void stat_fold(alloc_stat_t *e, const int64_t d[2], const int64_t hi[2], bool in_epoch,
		      int64_t g[2])
{
	for (int k = 0; k < 2; k++) {
		g[k] = d[k] ? atomic_fetch_add_explicit(&e->cur[k], d[k], memory_order_relaxed) + d[k]
			    : atomic_load_explicit(&e->cur[k], memory_order_relaxed);
		int64_t m = hi[k] > g[k] ? hi[k] : g[k];
		if (m > 0) {
			stat_atomic_max(&e->max_ever[k], (uint64_t)m);
			stat_atomic_max(&e->max_sl[k], (uint64_t)(in_epoch ? m : g[k] > 0 ? g[k] : 0));
		}
	}
}

/*
** The total slot's d past which this thread sees the total pass
** alloc_peak_next: its bytes above the value at the slot's last flush,
** packed as in d with the blocks as high as they go (alloc_slot_t), so
** that the fast path tests the new d with one compare.  Redone whenever the
** slot is flushed and when alloc_peak_next moves (it moves the gate's
** epoch, so every thread comes through alloc_slots_sync_epochs).
*/
static void slot_total_peak(alloc_thread_t *t)
{
	int64_t next = atomic_load_explicit(&alloc_peak_next, memory_order_relaxed);
	int64_t above = next - t->slots[0].base[0];
	if (next == INT64_MAX || above >= INT32_MAX)
		t->peak_d = INT64_MAX;
	else if (above < INT32_MIN)
		t->peak_d = INT64_MIN;
	else
		t->peak_d = (int64_t)((uint64_t)above << 32) + INT32_MAX;
}

/* Fold a slot's pending change into its entry and start a new period. */
void alloc_slot_flush(alloc_thread_t *t, unsigned i)
{
	alloc_slot_t *s = &t->slots[i];
	int64_t *base = s->base;
	if (s->key == ALLOC_KEY_NONE)
		return;
	unsigned kind = ALLOC_KEY_KIND(s->key);
	alloc_stat_t *e = alloc_stat_entry(kind, ALLOC_KEY_ID(s->key));
	uint32_t epoch = atomic_load_explicit(&alloc_epoch[kind], memory_order_acquire);
	int64_t d[2] = {alloc_slot_bytes(s->d), alloc_slot_blocks(s->d)};
	int64_t hi[2] = {base[0] + alloc_slot_bytes(s->hi), base[1] + s->hi_blocks};
	int64_t g[2];
	stat_fold(e, d, hi, s->epoch == epoch, g);
	slot_fold_events(t, i, e);
	slot_restart(s, base, g);
	s->epoch = epoch;
	if (i == 0)
		slot_total_peak(t);
}

/* Flush a slot and leave it pointing nowhere. */
static void slot_release(alloc_thread_t *t, unsigned i)
{
	alloc_slot_flush(t, i);
	__atomic_store_n(&t->slots[i].key, ALLOC_KEY_NONE, __ATOMIC_RELEASE);
	t->slots[i].cls_slot = NULL;
	t->keyed[i / 64] &= ~(1ull << (i % 64));
}

/* The next slot with a key from i on, or ALLOC_SLOTS_ALL. */
static unsigned slot_next_keyed(const alloc_thread_t *t, unsigned i)
{
	for (unsigned w = i / 64; w < sizeof t->keyed / sizeof t->keyed[0]; w++) {
		uint64_t bits = t->keyed[w] & (w == i / 64 ? ~0ull << (i % 64) : ~0ull);
		if (bits)
			return w * 64 + (unsigned)__builtin_ctzll(bits);
	}
	return ALLOC_SLOTS_ALL;
}
#define SLOTS_KEYED(t, i) \
	(unsigned i = slot_next_keyed(t, 0); i < ALLOC_SLOTS_ALL; i = slot_next_keyed(t, i + 1))

/*
** Point a slot at another entry, flushing what it held.  A type slot is
** only ever in place with its class's slot in place (alloc_slot_t), so a
** class slot that changes class first lets go of the type slots that lean
** on it, and a type slot takes its class's slot for its class.
*/
void alloc_slot_retarget(alloc_thread_t *t, unsigned i, uint32_t key)
{
	alloc_slot_t *s = &t->slots[i];
	if (ALLOC_KEY_KIND(s->key) == ALLOC_K_CLASS)
		for (unsigned j = ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS;
		     j < ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS + ALLOC_SLOTS_TYPE; j++)
			if (t->slots[j].key != ALLOC_KEY_NONE && t->slots[j].cls_slot == s)
				slot_release(t, j);
	slot_release(t, i);
	unsigned kind = ALLOC_KEY_KIND(key);
	alloc_stat_t *e = alloc_stat_entry(kind, ALLOC_KEY_ID(key));
	if (kind == ALLOC_K_TYPE) {
		s->cls = alloc_type_class(ALLOC_KEY_ID(key));
		unsigned c = ALLOC_SLOTS_FIXED + (s->cls & (ALLOC_SLOTS_CLASS - 1));
		if (t->slots[c].key != ALLOC_KEY(ALLOC_K_CLASS, s->cls))
			alloc_slot_retarget(t, c, ALLOC_KEY(ALLOC_K_CLASS, s->cls));
		s->cls_slot = &t->slots[c];
	}
	s->epoch = atomic_load_explicit(&alloc_epoch[kind], memory_order_acquire);
	int64_t g[2] = {atomic_load_explicit(&e->cur[0], memory_order_relaxed),
			atomic_load_explicit(&e->cur[1], memory_order_relaxed)};
	slot_restart(s, s->base, g);
	__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
	t->keyed[i / 64] |= 1ull << (i % 64);
	if (i == 0)
		slot_total_peak(t);
}

/*
** A read has reset some kind since this thread last looked: flush the
** slots of reset kinds so their high-water marks start again from the
** present.  The hot path checks one counter per operation to get here.
*/
void alloc_slots_sync_epochs(alloc_thread_t *t)
{
	t->epoch_seen = alloc_gate_epoch();
	if (t->parked) { /* back from a block: start every slot from the present */
		t->parked = 0;
		alloc_slots_flush_all(t);
		return;
	}
	for SLOTS_KEYED(t, i) {
		alloc_slot_t *s = &t->slots[i];
		if (s->epoch != atomic_load_explicit(&alloc_epoch[ALLOC_KEY_KIND(s->key)], memory_order_acquire))
			alloc_slot_flush(t, i);
	}
	slot_total_peak(t); /* (the epoch may have moved for alloc_peak_next) */
}

/* Fold every slot in and restart it from the shared value. */
void alloc_slots_flush_all(alloc_thread_t *t)
{
	for SLOTS_KEYED(t, i)
		alloc_slot_flush(t, i);
	t->budget = ALLOC_FLUSH_BYTES;
}

/* The thread's flush budget ran out: fold in the slots it changed. */
void alloc_slots_flush_budget(alloc_thread_t *t)
{
	for SLOTS_KEYED(t, i) {
		alloc_slot_t *s = &t->slots[i];
		if (s->d | s->hi | s->hi_blocks | s->in | s->temps)
			alloc_slot_flush(t, i);
	}
	t->budget = ALLOC_FLUSH_BYTES;
}

/* Apply a change straight to an entry (threads with no slots of their
** own: exiting threads, the bootstrap; and blocks of ALLOC_COUNT_BIG bytes
** or more, whose size does not fit a slot). */
void alloc_stat_direct(uint32_t key, int64_t dsize, int64_t dblocks)
{
	unsigned kind = ALLOC_KEY_KIND(key);
	alloc_stat_t *e = alloc_stat_entry(kind, ALLOC_KEY_ID(key));
	int64_t d[2] = {dsize, dblocks}, none[2] = {INT64_MIN, INT64_MIN}, g[2];
	stat_fold(e, d, none, true, g);
}

/* The program's mappings changed (alloc_region.c): bytes and regions into
** the "mmap" allocator's entry, and `made` regions of `made_bytes` bytes
** into its events. */
void alloc_stat_region(int64_t dbytes, int64_t dregions, uint64_t made, uint64_t made_bytes)
{
	static alloc_stat_t *mmap_entry; /* mapped at start-up, never moves */
	alloc_stat_t *e = __atomic_load_n(&mmap_entry, __ATOMIC_RELAXED);
	if (unlikely(!e))
		__atomic_store_n(&mmap_entry, e = alloc_stat_entry(ALLOC_K_ALLOCATOR, ALLOC_A_MMAP), __ATOMIC_RELAXED);
	if (dbytes | dregions) {
		int64_t d[2] = {dbytes, dregions}, none[2] = {INT64_MIN, INT64_MIN}, g[2];
		stat_fold(e, d, none, true, g);
	}
	if (made) {
		atomic_fetch_add_explicit(&e->ev[ALLOC_EV_CALLS], made, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->ev[ALLOC_EV_BYTES], made_bytes, memory_order_relaxed);
	}
}

void alloc_stat_direct_events(uint64_t meta, uint64_t size, bool temp)
{
	uint32_t type = alloc_meta_type(meta);
	unsigned allocator = alloc_meta_allocator(meta);
	alloc_stat_t *e[5] = {alloc_stat_entry(ALLOC_K_TOTAL, 0), alloc_stat_entry(ALLOC_K_ALLOCATOR, allocator),
			      alloc_stat_entry(ALLOC_K_CLASS, alloc_type_class(type)),
			      alloc_stat_entry(ALLOC_K_TYPE, type),
			      alloc_stat_entry(ALLOC_K_THREAD, alloc_meta_thread(meta))};
	for (int k = 0; k < 5; k++) {
		if (!e[k])
			continue;
		if (temp) {
			atomic_fetch_add_explicit(&e[k]->ev[ALLOC_EV_TEMPS], 1, memory_order_relaxed);
			continue;
		}
		atomic_fetch_add_explicit(&e[k]->ev[ALLOC_EV_CALLS], 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e[k]->ev[ALLOC_EV_BYTES], size, memory_order_relaxed);
		if (allocator == ALLOC_A_REALLOC)
			atomic_fetch_add_explicit(&e[k]->ev[ALLOC_EV_REALLOCS], 1, memory_order_relaxed);
	}
	alloc_hist_t *h = temp ? NULL : alloc_table_at(&hist_table, type);
	if (h)
		atomic_fetch_add_explicit(&h->n[alloc_hist_bucket(size)], 1, memory_order_relaxed);
}

void alloc_hist_read(uint32_t n, uint64_t (*out)[ALLOC_HIST_BUCKETS])
{
	for (uint32_t id = 0; id < n; id++) {
		alloc_hist_t *h = alloc_table_at(&hist_table, id);
		for (unsigned b = 0; b < ALLOC_HIST_BUCKETS; b++)
			out[id][b] = h ? atomic_load_explicit(&h->n[b], memory_order_relaxed) : 0;
	}
	alloc_thread_lock_registry();
	for (alloc_thread_t *t = alloc_thread_first(); t; t = t->reg_next)
		for (unsigned i = 0; i < ALLOC_SLOTS_TYPE; i++) {
			uint32_t key = __atomic_load_n(&t->slots[ALLOC_SLOTS_FIXED + ALLOC_SLOTS_CLASS + i].key,
						       __ATOMIC_ACQUIRE);
			if (key == ALLOC_KEY_NONE || ALLOC_KEY_KIND(key) != ALLOC_K_TYPE || ALLOC_KEY_ID(key) >= n)
				continue;
			for (unsigned b = 0; b < ALLOC_HIST_BUCKETS; b++)
				out[ALLOC_KEY_ID(key)][b] += __atomic_load_n(&t->hist[i][b], __ATOMIC_RELAXED);
		}
	alloc_thread_unlock_registry();
}

/* ---------------------------------------------------------- reading ----- */

typedef struct stat_acc_s {
	int64_t d[2];
	int64_t hi_sl[2], hi_ever[2];
	uint64_t ev[ALLOC_EV_COUNT];
} stat_acc_t;

/* Add a thread's pending deltas of entries [lo, hi) of a kind to acc[id - lo]. */
static void stat_gather(alloc_thread_t *t, unsigned kind, uint32_t lo, uint32_t hi, stat_acc_t *acc,
			uint32_t epoch)
{
	for (unsigned i = 0; i < ALLOC_SLOTS_ALL; i++) {
		alloc_slot_t *s = &t->slots[i];
		uint32_t key = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		uint64_t ev[ALLOC_EV_COUNT];
		uint32_t also = slot_events_also(t, s, key, kind);
		if (also != ALLOC_KEY_NONE && ALLOC_KEY_ID(also) >= lo && ALLOC_KEY_ID(also) < hi) {
			slot_events(s, ev);
			for (int k = 0; k < ALLOC_EV_COUNT; k++)
				acc[ALLOC_KEY_ID(also) - lo].ev[k] += ev[k];
		}
		if (key == ALLOC_KEY_NONE || ALLOC_KEY_KIND(key) != kind || ALLOC_KEY_ID(key) < lo ||
		    ALLOC_KEY_ID(key) >= hi)
			continue;
		stat_acc_t *a = &acc[ALLOC_KEY_ID(key) - lo];
		int64_t d = __atomic_load_n(&s->d, __ATOMIC_RELAXED);
		int64_t dk[2] = {alloc_slot_bytes(d), alloc_slot_blocks(d)};
		int64_t hk[2] = {alloc_slot_bytes(__atomic_load_n(&s->hi, __ATOMIC_RELAXED)),
				 __atomic_load_n(&s->hi_blocks, __ATOMIC_RELAXED)};
		slot_events(s, ev);
		for (int k = 0; k < ALLOC_EV_COUNT; k++)
			a->ev[k] += ev[k];
		for (int k = 0; k < 2; k++) {
			int64_t base = __atomic_load_n(&s->base[k], __ATOMIC_RELAXED);
			int64_t hi = base + hk[k];
			a->d[k] += dk[k];
			if (hi > a->hi_ever[k])
				a->hi_ever[k] = hi;
			if (s->epoch == epoch && hi > a->hi_sl[k])
				a->hi_sl[k] = hi;
		}
	}
}

static uint64_t stat_pos(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

/*
** One entry's figures: its table's values, the threads' pending deltas
** `a` folded in.  A reader's max_since_last is the highest of max_sl (since
** the last reset by any reader) and what the other readers' resets took
** from it since this reader's last read (held); its read restarts max_sl
** from current, and hands what it took to the others.  (Registry lock
** held: readers never race each other here.)
*/
static void stat_entry(alloc_stat_t *e, const stat_acc_t *a, struct meminst_status_info *out,
		       struct meminst_events *ev_out, unsigned reader)
{
	struct meminst_counter *c[2] = {&out->sizes, &out->blocks};
	if (!e) { /* a thread number whose entries could not be mapped */
		memset(c[0], 0, sizeof *c[0]);
		memset(c[1], 0, sizeof *c[1]);
		memset(ev_out, 0, sizeof *ev_out);
		return;
	}
	uint64_t ev[ALLOC_EV_COUNT];
	for (int k = 0; k < ALLOC_EV_COUNT; k++)
		ev[k] = atomic_load_explicit(&e->ev[k], memory_order_relaxed) + a->ev[k];
	for (int k = 0; k < 2; k++) {
		int64_t cur = atomic_load(&e->cur[k]) + a->d[k];
		uint64_t ever = atomic_load(&e->max_ever[k]), sl = atomic_load(&e->max_sl[k]);
		uint64_t now = stat_pos(cur);
		ever = ever > now ? ever : now;
		ever = ever > stat_pos(a->hi_ever[k]) ? ever : stat_pos(a->hi_ever[k]);
		sl = sl > now ? sl : now;
		sl = sl > stat_pos(a->hi_sl[k]) ? sl : stat_pos(a->hi_sl[k]);
		uint64_t held = reader < ALLOC_READERS ? atomic_load(&e->held[reader][k]) : 0;
		c[k]->current = now;
		c[k]->max_since_last = sl > held ? sl : held;
		c[k]->max_ever = ever > sl ? ever : sl;
		stat_atomic_max(&e->max_ever[k], c[k]->max_ever);
		if (reader < ALLOC_READERS) {
			for (unsigned other = 0; other < ALLOC_READERS; other++)
				if (other != reader)
					stat_atomic_max(&e->held[other][k], sl);
			atomic_store(&e->held[reader][k], 0);
			atomic_store(&e->max_sl[k], now);
		} else {
			stat_atomic_max(&e->max_sl[k], sl);
		}
	}
	/* frees: blocks counted in less those live (a free seen before its
	** block's allocation, in another thread's pending counts, reads 0) */
	*ev_out = (struct meminst_events){
		.calls = ev[ALLOC_EV_CALLS], .allocated = ev[ALLOC_EV_BYTES],
		.frees = ev[ALLOC_EV_CALLS] > c[1]->current ? ev[ALLOC_EV_CALLS] - c[1]->current : 0,
		.temporary = ev[ALLOC_EV_TEMPS], .reallocs = ev[ALLOC_EV_REALLOCS]};
}

/* Entries a read adds up on the stack; more take an mmap'd scratch. */
#define STAT_ACC_STACK 64

/*
** Read entries [0, n) of a kind, the first `cap` of them into out[]
** (counters only), folding in the pending deltas of every live thread.
** A reader other than ALLOC_READ_PEEK resets: each entry's max_since_last
** restarts from its current value (stat_entry) and the kind's epoch moves
** on, so slots gathered before the read no longer count toward it.
** Never allocates and never fails: a small kind is added up on the stack,
** a larger one in mmap'd scratch, and, when none can be mapped (a process
** out of address space, which is when its figures matter), window by window
** on the stack (every thread's slots scanned once per window).
*/
size_t alloc_stat_scratch_bytes(uint32_t n)
{
	return ((size_t)n * sizeof(stat_acc_t) + 4095) & ~(size_t)4095;
}

void alloc_stat_read(unsigned kind, uint32_t n, struct meminst_status_info *out, struct meminst_events *ev,
		     uint32_t cap, unsigned reader)
{
	alloc_stat_read_in(kind, n, out, ev, cap, reader, NULL, 0);
}

void alloc_stat_read_in(unsigned kind, uint32_t n, struct meminst_status_info *out, struct meminst_events *ev,
			uint32_t cap, unsigned reader, void *scratch, size_t scratch_bytes)
{
	bool reset = reader < ALLOC_READERS;
	struct meminst_status_info past_cap; /* read (and reset) but not wanted */
	struct meminst_events ev_past_cap;
	stat_acc_t small[STAT_ACC_STACK], *acc = small;
	uint32_t window = STAT_ACC_STACK;
	size_t bytes = alloc_stat_scratch_bytes(n);
	bool given = n > STAT_ACC_STACK && scratch && scratch_bytes >= bytes;
	stat_acc_t *mapped = n > STAT_ACC_STACK && !given ? alloc_sys_map(bytes) : NULL;
	if (given)
		acc = scratch, window = n;
	else if (mapped)
		acc = mapped, window = n;
	alloc_thread_lock_registry();
	uint32_t epoch = atomic_load(&alloc_epoch[kind]);
	for (uint32_t lo = 0; lo < n; lo += window) {
		uint32_t hi = n - lo > window ? lo + window : n;
		memset(acc, 0, (size_t)(hi - lo) * sizeof *acc);
		for (alloc_thread_t *t = alloc_thread_first(); t; t = t->reg_next)
			stat_gather(t, kind, lo, hi, acc, epoch);
		for (uint32_t id = lo; id < hi; id++)
			stat_entry(alloc_table_at(&stat_tables[kind], id), &acc[id - lo],
				   id < cap && out ? &out[id] : &past_cap, id < cap && ev ? &ev[id] : &ev_past_cap,
				   reader);
	}
	if (reset) {
		atomic_fetch_add(&alloc_epoch[kind], 1);
		atomic_fetch_add(&alloc_count_gate, ALLOC_GATE_EPOCH);
	}
	alloc_thread_unlock_registry();
	if (mapped)
		alloc_sys_unmap(mapped, bytes);
}

/* Fill in the numbers and names of entries [0, n) read by alloc_stat_read.
** Outside every lock of ours: names may come from /proc. */
void alloc_status_describe(unsigned kind, uint32_t n, struct meminst_status_info *e)
{
	for (uint32_t id = 0; id < n; id++) {
		e[id].id = id;
		alloc_tags_name(kind, id, e[id].name, sizeof e[id].name);
		if (kind == ALLOC_K_TYPE) {
			e[id].class_no = alloc_type_class(id);
			e[id].site = alloc_type_site(id);
		}
		if (kind == ALLOC_K_THREAD)
			e[id].tid = alloc_thread_tid(id);
	}
}
