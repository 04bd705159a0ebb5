/*
** eng_sim_rows.h — the simulation's rows and their hash tables: a thread's
** functions, its caller->called pairs and their call sites (with the rows
** of calls made from the empty stack, PENDING until their caller is
** known), and the threads themselves; each an array grown by doubling
** with an open-addressing index of it.  Memory is the caller's
** eng_allocator's.
**
** Part of eng_sim.c, included once there, never compiled on its own: the
** event loop calls these on every event, and as static functions of the
** same file the compiler inlines them as it did when they were written
** there (a separate file changed the hot loop's code).  Kept apart because
** they are one job, keyed storage, that the state machine only uses.
*/
#ifndef ENG_SIM_C
#error "eng_sim_rows.h is part of eng_sim.c: include it from there only"
#endif

/* ------------------------------------------------------------- memory -- */

static void *sim_grow(struct eng_sim *s, void *p, size_t *cap, size_t elem, size_t need)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = s->a.realloc(s->a.ctx, p, n * elem);
	if (!q)
		return NULL;
	*cap = n;
	return q;
}

static uint64_t sim_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ x >> 29;
}

/* Open-addressing tables of index + 1, load kept under 1/2. */
static uint32_t *sim_rehash(struct eng_sim *s, uint32_t *old, size_t *hcap, size_t n,
			    uint64_t (*key)(const void *rows, uint32_t i), const void *rows)
{
	size_t cap = *hcap ? *hcap * 2 : 64;
	uint32_t *h = s->a.realloc(s->a.ctx, NULL, cap * sizeof *h);
	if (!h)
		return NULL;
	memset(h, 0, cap * sizeof *h);
	for (uint32_t i = 0; i < n; i++) {
		size_t j = sim_mix(key(rows, i)) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = i + 1;
	}
	if (old)
		s->a.free(s->a.ctx, old);
	*hcap = cap;
	return h;
}

static uint64_t sim_fn_key(const void *rows, uint32_t i)
{
	return ((const struct eng_fn_row *)rows)[i].fn;
}

static uint64_t sim_pair_key(const void *rows, uint32_t i)
{
	const struct eng_pair_row *p = &((const struct eng_pair_row *)rows)[i];
	return (uint64_t)p->caller << 32 | p->called;
}

/* The row of fn in t, created on first use; UINT32_MAX when out of memory. */
static uint32_t sim_fn(struct eng_sim *s, struct eng_thread *t, uint64_t fn)
{
	size_t j = t->fn_hcap ? sim_mix(fn) & (t->fn_hcap - 1) : 0;
	if (t->fn_hcap) {
		for (uint32_t v; (v = t->fn_hash[j]) != 0; j = (j + 1) & (t->fn_hcap - 1))
			if (t->fns[v - 1].fn == fn)
				return v - 1;
	}
	if (t->nfns >= UINT32_MAX - 1)
		return UINT32_MAX;
	struct eng_fn_row *f = sim_grow(s, t->fns, &t->fns_cap, sizeof *f, t->nfns + 1);
	if (!f)
		return UINT32_MAX;
	t->fns = f;
	f[t->nfns] = (struct eng_fn_row){.fn = fn};
	uint32_t idx = (uint32_t)t->nfns++;
	if (2 * t->nfns > t->fn_hcap) {
		uint32_t *h = sim_rehash(s, t->fn_hash, &t->fn_hcap, t->nfns, sim_fn_key, t->fns);
		if (!h)
			return UINT32_MAX;
		t->fn_hash = h;
		return idx;
	}
	t->fn_hash[j] = idx + 1;
	return idx;
}

static uint32_t sim_pair(struct eng_sim *s, struct eng_thread *t, uint32_t caller, uint32_t called)
{
	uint64_t key = (uint64_t)caller << 32 | called;
	size_t j = t->pair_hcap ? sim_mix(key) & (t->pair_hcap - 1) : 0;
	if (t->pair_hcap) {
		for (uint32_t v; (v = t->pair_hash[j]) != 0; j = (j + 1) & (t->pair_hcap - 1))
			if (t->pairs[v - 1].caller == caller && t->pairs[v - 1].called == called)
				return v - 1;
	}
	if (t->npairs >= UINT32_MAX - 1)
		return UINT32_MAX;
	struct eng_pair_row *p = sim_grow(s, t->pairs, &t->pairs_cap, sizeof *p, t->npairs + 1);
	if (!p)
		return UINT32_MAX;
	t->pairs = p;
	p[t->npairs] = (struct eng_pair_row){.caller = caller, .called = called};
	uint32_t idx = (uint32_t)t->npairs++;
	if (2 * t->npairs > t->pair_hcap) {
		uint32_t *h = sim_rehash(s, t->pair_hash, &t->pair_hcap, t->npairs, sim_pair_key, t->pairs);
		if (!h)
			return UINT32_MAX;
		t->pair_hash = h;
		return idx;
	}
	t->pair_hash[j] = idx + 1;
	return idx;
}

static uint64_t sim_site_key(const void *rows, uint32_t i)
{
	const struct eng_site_row *r = &((const struct eng_site_row *)rows)[i];
	return r->site ^ (uint64_t)r->pair << 40;
}

/* The row of (pair, site), created on first use; UINT32_MAX when out of
** memory. */
static uint32_t sim_site(struct eng_sim *s, struct eng_thread *t, uint32_t pair, uint64_t site)
{
	uint64_t key = site ^ (uint64_t)pair << 40;
	size_t j = t->site_hcap ? sim_mix(key) & (t->site_hcap - 1) : 0;
	if (t->site_hcap) {
		for (uint32_t v; (v = t->site_hash[j]) != 0; j = (j + 1) & (t->site_hcap - 1))
			if (t->sites[v - 1].pair == pair && t->sites[v - 1].site == site)
				return v - 1;
	}
	if (t->nsites >= UINT32_MAX - 1)
		return UINT32_MAX;
	struct eng_site_row *r = sim_grow(s, t->sites, &t->sites_cap, sizeof *r, t->nsites + 1);
	if (!r)
		return UINT32_MAX;
	t->sites = r;
	r[t->nsites] = (struct eng_site_row){.pair = pair, .site = site};
	uint32_t idx = (uint32_t)t->nsites++;
	if (2 * t->nsites > t->site_hcap) {
		uint32_t *h = sim_rehash(s, t->site_hash, &t->site_hcap, t->nsites, sim_site_key, t->sites);
		if (!h)
			return UINT32_MAX;
		t->site_hash = h;
		return idx;
	}
	t->site_hash[j] = idx + 1;
	return idx;
}

static void sim_mi_add(struct eng_mi *to, const struct eng_mi *m)
{
	to->cnt += m->cnt, to->own += m->own, to->acc += m->acc;
}

/* A site row of a pair whose caller is PENDING is listed, to be settled
** with the pair (as sim_note_pending does for pairs). */
static enum eng_err sim_note_pending_site(struct eng_sim *s, struct eng_thread *t, uint32_t row)
{
	if (t->sites[row].pending)
		return ENG_OK;
	uint32_t *v = sim_grow(s, t->pending_sites, &t->pending_sites_cap, sizeof *v, t->npending_sites + 1);
	if (!v)
		return ENG_E_NOMEM;
	t->pending_sites = v;
	v[t->npending_sites++] = row;
	t->sites[row].pending = true;
	return ENG_OK;
}

/* The calls from the empty stack were made by `caller`: their site rows go
** to the pairs of that caller, as sim_settle moves the pairs (the listed
** rows are emptied, and used again by the next such call). */
static enum eng_err sim_settle_sites(struct eng_sim *s, struct eng_thread *t, uint32_t caller)
{
	for (size_t i = 0; i < t->npending_sites; i++) {
		uint32_t k = t->pending_sites[i];
		struct eng_site_row r = t->sites[k];
		t->sites[k].cnt = t->sites[k].acc = t->sites[k].acc_bytes = t->sites[k].acc_blocks = 0;
		t->sites[k].mi = (struct eng_mi){0};
		memset(t->sites[k].acc_ev, 0, sizeof t->sites[k].acc_ev);
		t->sites[k].pending = false;
		uint32_t q = sim_pair(s, t, caller, t->pairs[r.pair].called);
		uint32_t to = q == UINT32_MAX ? UINT32_MAX : sim_site(s, t, q, r.site);
		if (to == UINT32_MAX)
			return ENG_E_NOMEM;
		struct eng_site_row *d = &t->sites[to];
		d->cnt += r.cnt, d->acc += r.acc, d->acc_bytes += r.acc_bytes, d->acc_blocks += r.acc_blocks;
		eng_ev_add(d->acc_ev, r.acc_ev);
		sim_mi_add(&d->mi, &r.mi);
	}
	t->npending_sites = 0;
	return ENG_OK;
}

/* ------------------------------------------------------------ threads -- */

static enum eng_err sim_thread_new(struct eng_sim *s, uint32_t thread, struct eng_thread **out)
{
	struct eng_thread *t = s->a.realloc(s->a.ctx, NULL, sizeof *t);
	if (!t)
		return ENG_E_NOMEM;
	memset(t, 0, sizeof *t);
	t->thread = thread;
	t->off = true;
	struct eng_thread **v = sim_grow(s, s->threads, &s->threads_cap, sizeof *v, s->nthreads + 1);
	if (!v) {
		s->a.free(s->a.ctx, t);
		return ENG_E_NOMEM;
	}
	s->threads = v;
	v[s->nthreads++] = t;
	/* the pseudo rows first, so their indexes are fixed */
	if (sim_fn(s, t, ENG_FN_UNDEFINED) != 0 || sim_fn(s, t, ENG_FN_PENDING) != 1)
		return ENG_E_NOMEM;
	t->undef_idx = 0;
	t->pend_idx = 1;
	t->last_pair = UINT32_MAX;
	*out = t;
	return ENG_OK;
}

static uint64_t sim_thr_key(const void *rows, uint32_t i)
{
	return ((struct eng_thread *const *)rows)[i]->thread;
}

static enum eng_err sim_thread(struct eng_sim *s, uint32_t thread, struct eng_thread **out)
{
	size_t j = s->thr_hcap ? sim_mix(thread) & (s->thr_hcap - 1) : 0;
	if (s->thr_hcap) {
		for (uint32_t v; (v = s->thr_hash[j]) != 0; j = (j + 1) & (s->thr_hcap - 1)) {
			if (s->threads[v - 1]->thread == thread) {
				*out = s->threads[v - 1];
				return ENG_OK;
			}
		}
	}
	enum eng_err e = sim_thread_new(s, thread, out);
	if (e)
		return e;
	if (2 * s->nthreads > s->thr_hcap) {
		uint32_t *h = sim_rehash(s, s->thr_hash, &s->thr_hcap, s->nthreads, sim_thr_key, s->threads);
		if (!h)
			return ENG_E_NOMEM;
		s->thr_hash = h;
	} else {
		s->thr_hash[j] = (uint32_t)s->nthreads;
	}
	return ENG_OK;
}
