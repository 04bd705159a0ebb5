/*
** exp_pprof.c — the profiles of `inspect export --format pprof`, built
** from what the other exports use (one stack walk per input kind):
**
**   exact trace  the stack tree of prof_stacks.c: per distinct stack, the
**                own time in ns of the trace's clock (wall or cpu), the
**                bytes and the allocations made (alloc_space,
**                alloc_objects); locations are functions (an exact trace
**                has their entries only), at their first line, but for
**                the caller of an allocator call whose site the trace has
**                (PROF_STK_AT): at the site, on the line of the call
**   samples      the address tree of prof_samples.c: per distinct stack,
**                timer samples (samples, and their time in ns of the
**                sampling clock) and allocation samples (alloc_objects,
**                alloc_space: the estimates of `inspect analyse`, rounded
**                per stack); locations are the sampled pc and the call
**                sites, each at its own source line, the functions inlined
**                there as the location's lines; meminst's own frames
**                are one <meminst> frame as in the displays
**   snapshot     Go's heap profile (the heap section below): per
**                allocation site with its site_depth stack, the counters
**                alloc_objects and alloc_space and the live memory
**                inuse_objects and inuse_space; labels "type" and
**                "class", and "thread" and "tid" on a map snapshot's live
**                memory
**
** Where the symboliser gives an inline chain, a location's lines are that
** chain, innermost first (pprof's order: the last line is the function the
** others were inlined into).
**
** A trace's samples carry the thread as labels: "tid" (a number) and
** "thread" (its name, when known).  Mappings are the trace's modules (a
** snapshot's executable segments) with their build-ids, and every location
** has one (exp_pb.c: one at no module's address, a registered type or a
** pseudo frame, has the program's); names come from the shared symboliser, so every mapping says
** it has functions, file names and line numbers (pprof does not look for
** the binaries again).
*/
#include "exp_pprof.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void pp_module(struct pprof *pp, const struct prof_mod *m)
{
	char hex[2 * sizeof m->build_id + 1];
	size_t n = m->build_id_len < sizeof m->build_id ? m->build_id_len : sizeof m->build_id;
	for (size_t k = 0; k < n; k++)
		snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
	hex[2 * n] = 0;
	pprof_mapping(pp, m->start, m->end, m->offset, m->path, hex);
}

/* The program's own mappings first: pprof takes the first as the main
** binary (its "File:" line). */
static void pp_modules(struct pprof *pp, const struct prof_trace *tr)
{
	for (int exe = 1; exe >= 0; exe--)
		for (size_t i = 0; i < tr->nmods; i++)
			if ((tr->exe && tr->mods[i].path && !strcmp(tr->mods[i].path, tr->exe)) == exe)
				pp_module(pp, &tr->mods[i]);
}

static void pp_grow(uint64_t **locs, size_t *cap, size_t n)
{
	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 256;
	*locs = rd_xrealloc(*locs, *cap * sizeof **locs);
}

static int64_t pp_round(double v)
{
	return v > 0 && v < 9.2e18 ? (int64_t)llround(v) : 0;
}

/* A sample with the labels of its thread: tid (when known) and name. */
static void pp_thread_sample(struct pprof *pp, const uint64_t *locs, size_t n, const int64_t *v, int64_t tid,
			     const char *name)
{
	struct pprof_label l[2];
	size_t nl = 0;
	if (tid > 0)
		l[nl++] = (struct pprof_label){.key = "tid", .num = tid};
	if (name && *name)
		l[nl++] = (struct pprof_label){.key = "thread", .str = name};
	pprof_sample(pp, locs, n, v, l, nl);
}

/* ------------------------------------------------------- exact trace -- */

static const struct eng_thread *pp_trace_thread(const struct prof_trace *tr, uint32_t thread)
{
	for (size_t i = 0; i < tr->sim.nthreads; i++)
		if (tr->sim.threads[i]->thread == thread)
			return tr->sim.threads[i];
	return NULL;
}

/* The line of a PROF_STK_AT node (ctx), for pprof_location. */
static size_t pp_at_line(void *ctx, uint64_t addr, struct prof_iframe *out, size_t max)
{
	const struct prof_stk_at *a = ctx;
	(void)addr, (void)max;
	if (!a->line)
		return 0;
	out[0] = (struct prof_iframe){NULL, a->file, a->line};
	return 1;
}

/* The location of path node j, made on first use: a function at its first
** line, or (a PROF_STK_AT node) its caller, the node above, at the site. */
static uint64_t pp_path_location(struct pprof *pp, const struct prof_stacks *s, const struct prof_paths *p,
				 uint32_t j)
{
	uint64_t key = p->t.nodes[j].key;
	const struct prof_stk_at *at = key & PROF_STK_AT && p->t.nodes[p->t.nodes[j].parent].parent != ENG_CCT_NONE
					       ? prof_stacks_at(s, (uint32_t)key) : NULL;
	uint32_t fj = at ? p->t.nodes[j].parent : j;
	uint32_t f = (key & PROF_STK_AT) && !at ? UINT32_MAX : (uint32_t)p->t.nodes[fj].key; /* (under no caller) */
	const struct prof_func *fn = f < s->nfuncs ? &s->funcs[f] : NULL;
	const char *name = f == UINT32_MAX ? "?" : prof_paths_label(p, s, fj);
	struct pprof_fn pf = {name, fn ? fn->file : NULL, fn ? fn->line : 0};
	if (at)
		return pprof_location(pp, at->site, f, &pf, pp_at_line, (void *)at);
	return pprof_location(pp, fn ? fn->addr : 0, f, &pf, NULL, NULL);
}

void pprof_from_stacks(struct pprof *pp, const struct prof_stacks *s, const struct prof_trace *tr)
{
	const char *clock = prof_clock_name(tr->h.clock);
	pprof_sample_type(pp, clock, "nanoseconds");
	pprof_sample_type(pp, "alloc_space", "bytes");
	pprof_sample_type(pp, "alloc_objects", "count");
	pprof_default_type(pp, clock);
	pprof_times(pp, tr->h.t0_realtime_ns, 0);
	pprof_comment(pp, "meminst exact trace: own time, bytes and allocations per call stack");
	char comp[160];
	snprintf(comp, sizeof comp, "times %s: %.3f ms of the tracer's calibrated cost taken off",
		 s->cost.compensated ? "compensated" : s->cost.failed ? "raw: CALIBRATION FAILED" : "raw",
		 (double)s->taken_ns / 1e6);
	pprof_comment(pp, comp);
	pp_modules(pp, tr);
	/* by function path and thread (prof_paths_build: linear in the stacks,
	** frames past PROF_STK_MAX_DEPTH cut into one [truncated] frame) */
	struct prof_paths p;
	prof_paths_build(&p, s, true, false, true);
	uint64_t *loc = rd_xcalloc(p.t.n + 1, sizeof *loc), *locs = NULL;
	size_t cap = 0;
	const struct eng_thread *th = NULL;
	for (uint32_t i = 0; i < p.t.n; i++) {
		const struct eng_cct_node *nd = &p.t.nodes[i];
		if (nd->parent == ENG_CCT_NONE)
			continue;
		int64_t v[3] = {pp_round(nd->self[PROF_STK_TIME]), pp_round(nd->self[PROF_STK_BYTES]),
				pp_round(nd->self[PROF_STK_ALLOCS])};
		if (!v[0] && !v[1] && !v[2])
			continue;
		size_t n = 0;
		for (uint32_t j = i; p.t.nodes[j].parent != ENG_CCT_NONE; j = p.t.nodes[j].parent) {
			if (!loc[j])
				loc[j] = pp_path_location(pp, s, &p, j);
			pp_grow(&locs, &cap, n);
			locs[n++] = loc[j];
			if ((p.t.nodes[j].key & PROF_STK_AT) && p.t.nodes[p.t.nodes[j].parent].parent != ENG_CCT_NONE)
				j = p.t.nodes[j].parent; /* it stood for its caller */
		}
		uint32_t thread = nd->thread; /* the root's key */
		if (!th || th->thread != thread)
			th = pp_trace_thread(tr, thread);
		pp_thread_sample(pp, locs, n, v, th && th->tid ? (int64_t)th->tid : -1, th ? th->name : NULL);
	}
	free(loc);
	free(locs);
	prof_paths_free(&p);
}

/* ----------------------------------------------------------- samples -- */

static size_t pp_sym_lines(void *ctx, uint64_t addr, struct prof_iframe *out, size_t max)
{
	size_t n = prof_symtab_inline(ctx, addr, out, max);
	if (n)
		return n;
	const char *file; /* no inline chain: the line alone */
	int line = prof_symtab_line(ctx, addr, &file);
	if (!line)
		return 0;
	out[0] = (struct prof_iframe){NULL, file, line};
	return 1;
}

static void pp_sample_types(struct pprof *pp, const struct prof_smodel *m, bool timer, bool alloc)
{
	const char *clock = m->sample_clock == MEMINST_TRACE_SAMPLE_WALL ? "wall" : "cpu";
	if (timer) {
		pprof_sample_type(pp, "samples", "count");
		pprof_sample_type(pp, clock, "nanoseconds");
	}
	if (alloc) {
		pprof_sample_type(pp, "alloc_objects", "count");
		pprof_sample_type(pp, "alloc_space", "bytes");
	}
	pprof_default_type(pp, timer ? clock : "alloc_space");
	if (timer && m->sample_hz)
		pprof_period(pp, clock, "nanoseconds", (int64_t)(1e9 / m->sample_hz + 0.5));
	else if (alloc && m->alloc_mean)
		pprof_period(pp, "space", "bytes", (int64_t)m->alloc_mean);
}

static const struct prof_sthread *pp_sample_thread(const struct prof_smodel *m, uint32_t thread)
{
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].thread == thread)
			return &m->threads[i];
	return NULL;
}

/* The samples of m (timer ones when timer, allocation ones when alloc). */
static void pp_samples(struct pprof *pp, const struct prof_smodel *m, bool timer, bool alloc)
{
	const struct eng_cct *at = prof_samples_tree(m->s);
	uint64_t *locs = NULL;
	size_t cap = 0;
	const struct prof_sthread *th = NULL;
	for (uint32_t i = 0; i < at->n; i++) {
		const struct eng_cct_node *nd = &at->nodes[i];
		if (nd->parent == ENG_CCT_NONE || (!nd->self[ENG_M_SAMPLES] && !nd->self[ENG_M_ASAMPLES]))
			continue;
		int64_t v[4];
		size_t k = 0;
		if (timer) {
			v[k++] = pp_round(nd->self[ENG_M_SAMPLES]);
			v[k++] = pp_round(nd->self[ENG_M_TICKS] * m->ns_per_tick);
		}
		if (alloc) {
			v[k++] = pp_round(nd->self[ENG_M_ALLOCS]);
			v[k++] = pp_round(nd->self[ENG_M_BYTES]);
		}
		size_t n = 0;
		for (uint32_t j = i; at->nodes[j].parent != ENG_CCT_NONE; j = at->nodes[j].parent) {
			uint32_t f = m->node_fid[j];
			if (f >= m->nfuncs)
				continue; /* inside a <meminst> frame, or left out */
			const struct prof_func *fn = &m->funcs[f];
			struct pprof_fn pf = {fn->name, fn->file, fn->line};
			bool pseudo = fn->addr <= ENG_FN_PSEUDO_MAX || fn->addr >= PROF_FN_MEMINST;
			uint64_t addr = pseudo ? 0 : at->nodes[j].key;
			pp_grow(&locs, &cap, n);
			locs[n++] = pprof_location(pp, addr, f, &pf, pseudo ? NULL : pp_sym_lines, m->st);
		}
		if (!th || th->thread != nd->thread)
			th = pp_sample_thread(m, nd->thread);
		pp_thread_sample(pp, locs, n, v, th ? th->tid : -1, th ? th->name : NULL);
	}
	free(locs);
}

void pprof_from_samples(struct pprof *pp, const struct prof_smodel *m, const struct prof_trace *tr)
{
	bool timer = m->total[ENG_M_SAMPLES] > 0, alloc = m->total[ENG_M_ASAMPLES] > 0;
	pp_sample_types(pp, m, timer, alloc);
	pprof_times(pp, tr->h.t0_realtime_ns, 0);
	pprof_comment(pp, "meminst samples: timer samples and allocation samples per call stack");
	pp_modules(pp, tr);
	pp_samples(pp, m, timer, alloc);
}

void pprof_from_cpu_samples(struct pprof *pp, const struct prof_smodel *m, const struct prof_trace *tr,
			    unsigned hz, uint64_t start_ns, uint64_t duration_ns)
{
	pprof_sample_type(pp, "samples", "count");
	pprof_sample_type(pp, "cpu", "nanoseconds");
	pprof_default_type(pp, "cpu");
	pprof_period(pp, "cpu", "nanoseconds", (int64_t)(1e9 / hz + 0.5));
	pprof_times(pp, start_ns, duration_ns);
	pprof_comment(pp, "meminst CPU samples of a running process (inspect serve)");
	pp_modules(pp, tr);
	if (m && m->total[ENG_M_SAMPLES] > 0)
		pp_samples(pp, m, true, false);
}

/* ---------------------------------------------------------- mappings -- */

/* The build-id of a segment's module: the module of its path, else the
** one loaded nearest below it (the loader names a module by the path it
** opened, /lib/libc.so.6, the kernel its segments by the file's real path,
** /usr/lib/x86_64-linux-gnu/libc.so.6). */
static const char *pp_seg_build_id(const struct rd_tags *t, const struct rd_seg *seg)
{
	const struct rd_module *below = NULL;
	for (size_t k = 0; k < t->nmodules; k++) {
		const struct rd_module *m = &t->modules[k];
		if (m->path && !strcmp(m->path, seg->path))
			return m->build_id;
		if (m->base <= seg->start && m->path && m->path[0] == '/' && (!below || m->base > below->base))
			below = m;
	}
	return below ? below->build_id : NULL;
}

/* The executable segments of the snapshot's modules, the program's first. */
static int pp_snap_mappings(struct pprof *pp, rd_db_t *db, const struct rd_tags *t)
{
	struct rd_seg *seg;
	size_t n;
	int r = rd_db_segments(db, &seg, &n);
	if (r)
		return r;
	const char *exe = rd_db_snap(db)->exe;
	for (int first = 1; first >= 0; first--)
		for (size_t i = 0; i < n; i++) {
			if (!strchr(seg[i].perms, 'x') || seg[i].path[0] != '/' || (strcmp(seg[i].path, exe) == 0) != first)
				continue;
			pprof_mapping(pp, seg[i].start, seg[i].end, seg[i].offset, seg[i].path, pp_seg_build_id(t, &seg[i]));
		}
	free(seg);
	return 0;
}

/* ------------------------------------------------------ event counters -- */

/* The lines of a location: the frames of one address's inline chain
** (ctx: the first of them, the function's the last). */
struct pp_group {
	const struct exp_site_frame *fr;
	size_t n;
};

static size_t pp_group_lines(void *ctx, uint64_t addr, struct prof_iframe *out, size_t max)
{
	(void)addr;
	const struct pp_group *g = ctx;
	size_t n = g->n < max ? g->n : max;
	for (size_t i = 0; i < n; i++) {
		const struct rd_stack_frame *f = &g->fr[i].fr;
		out[i] = (struct prof_iframe){f->func[0] ? f->func : NULL, f->file[0] ? f->file : NULL, f->line};
	}
	return n;
}

/* A site's stack as locations, innermost first: one per address, its
** inline chain as the location's lines. */
static size_t pp_site_stack(struct pprof *pp, const struct exp_site_frame *fr, size_t n, uint64_t **locs, size_t *cap)
{
	size_t nl = 0;
	for (size_t i = 0; i < n;) {
		size_t end = i;
		while (end + 1 < n && fr[end].fr.inlined)
			end++;
		const struct rd_stack_frame *fn = &fr[end].fr; /* the function the others are inlined into */
		char name[sizeof fn->func];
		snprintf(name, sizeof name, "%.*s", (int)exp_frame_func_len(fn), fn->func);
		struct pprof_fn f = {name[0] ? name : "??", fn->file[0] ? fn->file : NULL, 0};
		struct pp_group g = {fr + i, end + 1 - i};
		pp_grow(locs, cap, nl);
		(*locs)[nl++] = pprof_location(pp, fr[i].addr, (uint32_t)pprof_str(pp, f.name), &f,
					       fn->file[0] ? pp_group_lines : NULL, &g);
		i = end + 1;
	}
	return nl;
}

/* The sample types of the counters, in the order of RD_EV_*. */
static const char *const pp_event_types[RD_EV_N][2] = {
	{"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"temp_objects", "count"},
	{"inuse_space", "bytes"},   {"leaked_space", "bytes"},
};

int pprof_from_sites(struct pprof *pp, struct exp_sites *es)
{
	rd_db_t *db = es->s.db;
	int ntypes = es->p.exit ? RD_EV_N : RD_EV_LEAKED; /* no exit snapshot: nothing says what leaked */
	for (int m = 0; m < ntypes; m++)
		pprof_sample_type(pp, pp_event_types[m][0], pp_event_types[m][1]);
	pprof_default_type(pp, pp_event_types[es->metric >= 0 ? es->metric : RD_EV_ALLOCATED][0]);
	const struct rd_snap *s = rd_db_snap(db);
	pprof_times(pp, s->time_ns > 0 ? (uint64_t)s->time_ns : 0, 0);
	char c[240];
	snprintf(c, sizeof c, "meminst event counters of process %lld per allocation site: alloc_objects, "
		 "alloc_space and temp_objects since the start (snapshot %lld), inuse_space at the peak (snapshot "
		 "%lld)%s", (long long)es->p.pid, (long long)es->p.counts, (long long)es->p.peak,
		 es->p.exit ? ", leaked_space live at exit" : "");
	pprof_comment(pp, c);
	int r = pp_snap_mappings(pp, db, &es->s.tags);
	uint64_t *locs = NULL;
	size_t cap = 0;
	for (size_t i = 0; !r && i < es->n; i++) {
		const struct rd_site_events *e = &es->v[i];
		int64_t v[RD_EV_N];
		bool any = false;
		for (int m = 0; m < ntypes; m++)
			v[m] = (int64_t)e->v[m], any = any || v[m];
		if (!any)
			continue;
		struct exp_site_frame *fr;
		size_t n = exp_sites_frames(es, e->type, &fr);
		size_t nl = pp_site_stack(pp, fr, n, &locs, &cap);
		free(fr);
		const struct rd_name *ty = rd_name_find(&es->s.tags.types, e->type);
		struct pprof_label l[2] = {
			{.key = "type", .str = rd_type_label(db, &es->s.tags, e->type, NULL)},
			{.key = "class", .str = ty ? rd_tag_name(db, &es->s.tags, RD_TAG_CLASS, ty->class_) : ""},
		};
		pprof_sample(pp, locs, nl, v, l, 2);
	}
	free(locs);
	return r;
}

/* -------------------------------------------------------------- heap -- */

static int pp_last_snapshot(rd_db_t *db, int64_t pid, int64_t *snap)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT max(id) FROM snapshot WHERE pid = ?1");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc = sqlite3_step(st);
	*snap = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rd_db_fail(db, "cannot read the snapshot table");
}

/*
** Go's heap profile (runtime/pprof's writeHeapProto): per allocation site
** (a type; its site_depth stack), alloc_objects and alloc_space (the event
** counters: calls and bytes since the start) and inuse_objects and
** inuse_space (live at the snapshot); period type space/bytes with period
** 1 (every allocation counted, none sampled); time_nanos the snapshot's,
** duration_nanos the time the counters cover (since libmeminst started).
** A map snapshot says which thread made each live block: its live memory
** is one sample per (site, thread) with the labels thread and tid, the
** counters one sample per site (they are not kept per thread).  A status
** snapshot (mis) has one sample per site.  Labels type and class on all.
*/
struct pp_heap_site {
	int64_t type;
	uint64_t calls, allocated, blocks, bytes;
};

/* Live blocks by (type, thread) of a map snapshot: open addressing. */
struct pp_live {
	int64_t type, thread;
	uint64_t blocks, bytes;
	bool used;
};
struct pp_live_map {
	struct pp_live *v;
	size_t cap, n;
};

static uint64_t pp_live_hash(int64_t type, int64_t thread)
{
	return ((uint64_t)type * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)thread * 0xc2b2ae3d27d4eb4full);
}

/* The slot of (type, thread): its entry, or the free slot where it goes. */
static struct pp_live *pp_live_slot(const struct pp_live_map *m, int64_t type, int64_t thread)
{
	size_t j = pp_live_hash(type, thread) & (m->cap - 1);
	while (m->v[j].used && (m->v[j].type != type || m->v[j].thread != thread))
		j = (j + 1) & (m->cap - 1);
	return &m->v[j];
}

static void pp_live_add(void *ctx, const struct rd_block *b)
{
	struct pp_live_map *m = ctx;
	if (2 * (m->n + 1) > m->cap) {
		struct pp_live_map g = {rd_xcalloc(m->cap ? 2 * m->cap : 256, sizeof *g.v), m->cap ? 2 * m->cap : 256,
					m->n};
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].used)
				*pp_live_slot(&g, m->v[i].type, m->v[i].thread) = m->v[i];
		free(m->v);
		*m = g;
	}
	struct pp_live *e = pp_live_slot(m, b->type, b->thread);
	if (!e->used)
		*e = (struct pp_live){.type = b->type, .thread = b->thread, .used = true}, m->n++;
	e->blocks++;
	e->bytes += b->size;
}

static int pp_live_cmp(const void *a, const void *b)
{
	const struct pp_live *x = a, *y = b;
	return x->type != y->type ? (x->type < y->type ? -1 : 1) : x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Every type of the snapshot with counters or live memory, by id: the
** counters (0 in a file older than them) and the status's live figures. */
static int pp_heap_sites(rd_db_t *db, struct pp_heap_site **out, size_t *n)
{
	bool events = rd_events_stored(db);
	char *sql = sqlite3_mprintf(
		"SELECT t.id, %s, coalesce(s.blocks_current, 0), coalesce(s.sizes_current, 0) FROM type t "
		"LEFT JOIN status s ON s.snapshot = ?1 AND s.kind = 'types' AND s.id = t.id %s "
		"WHERE t.snapshot = ?1 ORDER BY t.id",
		events ? "coalesce(e.calls, 0), coalesce(e.allocated, 0)" : "0, 0",
		events ? "LEFT JOIN status_event e ON e.snapshot = ?1 AND e.kind = 'types' AND e.id = t.id" : "");
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	sqlite3_free(sql);
	*out = NULL;
	*n = 0;
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			*out = rd_xrealloc(*out, (cap = cap ? 2 * cap : 64) * sizeof **out);
		struct pp_heap_site *h = &(*out)[(*n)++];
		h->type = sqlite3_column_int64(st, 0);
		uint64_t *v[] = {&h->calls, &h->allocated, &h->blocks, &h->bytes};
		for (int c = 0; c < 4; c++)
			*v[c] = (uint64_t)sqlite3_column_int64(st, 1 + c);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read the type and status tables");
}

static void pp_heap_sample(struct pprof *pp, struct exp_sites *es, const uint64_t *locs, size_t nl,
			   int64_t type, const int64_t v[4], int64_t thread)
{
	rd_db_t *db = es->s.db;
	struct rd_tags *t = &es->s.tags;
	const struct rd_name *ty = rd_name_find(&t->types, type);
	const struct rd_name *th = thread >= 0 ? rd_name_find(&t->threads, thread) : NULL;
	struct pprof_label l[4] = {
		{.key = "type", .str = rd_type_label(db, t, type, NULL)},
		{.key = "class", .str = ty ? rd_tag_name(db, t, RD_TAG_CLASS, ty->class_) : ""},
	};
	size_t nlab = 2;
	if (th && th->name && *th->name)
		l[nlab++] = (struct pprof_label){.key = "thread", .str = th->name};
	if (th && th->tid > 0)
		l[nlab++] = (struct pprof_label){.key = "tid", .num = th->tid};
	pprof_sample(pp, locs, nl, v, l, nlab);
}

static int pp_heap_samples(struct pprof *pp, struct exp_sites *es, const struct pp_heap_site *h, size_t n,
			   const struct pp_live_map *live)
{
	struct pp_live *lv = NULL;
	size_t nlive = 0;
	if (live) { /* by type, then thread: each site's threads follow it */
		lv = rd_xcalloc(live->n + 1, sizeof *lv);
		for (size_t i = 0; i < live->cap; i++)
			if (live->v[i].used)
				lv[nlive++] = live->v[i];
		qsort(lv, nlive, sizeof *lv, pp_live_cmp);
	}
	uint64_t *locs = NULL;
	size_t cap = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k < nlive && lv[k].type < h[i].type)
			k++; /* blocks of a type the table does not list: none in a consistent snapshot */
		bool has_live = live ? k < nlive && lv[k].type == h[i].type : h[i].blocks || h[i].bytes;
		if (!h[i].calls && !h[i].allocated && !has_live)
			continue;
		struct exp_site_frame *fr;
		size_t nf = exp_sites_frames(es, h[i].type, &fr);
		size_t nl = pp_site_stack(pp, fr, nf, &locs, &cap);
		free(fr);
		int64_t v[4] = {(int64_t)h[i].calls, (int64_t)h[i].allocated, 0, 0};
		if (!live) {
			v[2] = (int64_t)h[i].blocks, v[3] = (int64_t)h[i].bytes;
			pp_heap_sample(pp, es, locs, nl, h[i].type, v, -1);
			continue;
		}
		if (v[0] || v[1])
			pp_heap_sample(pp, es, locs, nl, h[i].type, v, -1);
		for (; k < nlive && lv[k].type == h[i].type; k++) {
			int64_t w[4] = {0, 0, (int64_t)lv[k].blocks, (int64_t)lv[k].bytes};
			pp_heap_sample(pp, es, locs, nl, h[i].type, w, lv[k].thread);
		}
	}
	free(locs);
	free(lv);
	return 0;
}

static void pp_heap_head(struct pprof *pp, rd_db_t *db, bool allocs)
{
	const struct rd_snap *s = rd_db_snap(db);
	pprof_sample_type(pp, "alloc_objects", "count");
	pprof_sample_type(pp, "alloc_space", "bytes");
	pprof_sample_type(pp, "inuse_objects", "count");
	pprof_sample_type(pp, "inuse_space", "bytes");
	if (allocs) /* as Go's /debug/pprof/allocs; its heap profile names none (pprof takes the last) */
		pprof_default_type(pp, "alloc_space");
	pprof_period(pp, "space", "bytes", 1);
	pprof_times(pp, s->time_ns > 0 ? (uint64_t)s->time_ns : 0, s->elapsed_ns > 0 ? (uint64_t)s->elapsed_ns : 0);
	char c[240];
	snprintf(c, sizeof c, "meminst snapshot %lld (%s, %s) of process %lld: alloc_objects and alloc_space since "
		 "the start%s, inuse_objects and inuse_space live at the snapshot, by allocation site",
		 (long long)s->id, s->content, s->trigger, (long long)s->pid,
		 rd_events_stored(db) ? "" : " (0: the file has no event counters)");
	pprof_comment(pp, c);
}

int pprof_from_heap(struct pprof *pp, const char *path, int64_t pid, int64_t snap, bool allocs,
		    const struct rd_opts *o)
{
	struct exp_sites es = {.metric = -1};
	int r = rd_db_open(path, o, &es.s.db);
	rd_db_t *db = es.s.db;
	int64_t main_pid = 0;
	if (!r && !snap && !(r = rd_db_main_pid(db, pid, &main_pid)))
		r = pp_last_snapshot(db, main_pid, &snap);
	if (!r)
		r = rd_db_select(db, snap, RD_NEED_ANY);
	if (!r && pid && rd_db_snap(db)->pid != pid) {
		rd_errf(o->err, "inspect: %s: snapshot %lld is of process %lld, not %lld\n", path, (long long)snap,
			(long long)rd_db_snap(db)->pid, (long long)pid);
		r = RD_EXIT_NOTFOUND;
	}
	if (!r) {
		struct rd_args a = {.no_symbols = o->no_symbols};
		r = rd_session_tags(&es.s, &a);
	}
	struct pp_heap_site *h = NULL;
	size_t n = 0;
	if (!r)
		r = pp_heap_sites(db, &h, &n);
	bool map = !r && strcmp(rd_db_snap(db)->content, "map") == 0;
	struct pp_live_map live = {0};
	if (map)
		r = rd_blocks_each(db, o, NULL, pp_live_add, &live);
	if (!r) {
		pp_heap_head(pp, db, allocs);
		r = pp_snap_mappings(pp, db, &es.s.tags);
	}
	if (!r)
		r = pp_heap_samples(pp, &es, h, n, map ? &live : NULL);
	free(live.v);
	free(h);
	rd_session_close(&es.s);
	return r;
}
