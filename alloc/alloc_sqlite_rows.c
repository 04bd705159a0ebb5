/*
** alloc_sqlite_rows.c — what a snapshot puts in each table of its database:
** the process, the status tables, the regions, the modules, the blocks and
** the leaks (the schema: <meminst-snapshot.h>, shared with inspect); the
** memory map's segments are alloc_sqlite_segs.c's.
**
** Separate from alloc_sqlite.c, which keeps the store (meminst's private
** SQLite, the file checks, the store lock and fork, the kept connection),
** because the rows change with the schema and the store does not.  Like
** the store, this runs guarded, under the store lock, on an ordinary thread
** with none of the allocation layer's locks held.
*/
#include "alloc_int.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "alloc_sqlite_int.h"

int alloc_sqlite_write_process(sq_writer_t *w, const alloc_snap_t *im)
{
	char exe[1024] = "", cmd[4096] = "";
	alloc_sys_exe_path(exe, sizeof exe);
	int len = alloc_sys_read_file("/proc/self/cmdline", cmd, sizeof cmd);
	for (int i = 0; i < len - 1; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	bool same_proc = false; /* stored NULL: the chain's base has them (snapshot_delta) */
	if (alloc_sqlite_carry_begin(w, im, exe, cmd, &same_proc) < 0)
		return -1;
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO snapshot VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!st)
		return -1;
	int rc = alloc_sqlite_row(w, st, "issiissssiiiiiii", w->id, im->with_map ? "map" : "status", im->trigger,
			(int64_t)im->pid, (int64_t)im->ppid, same_proc ? NULL : exe, same_proc ? NULL : cmd,
			alloc_mode == MEMINST_MODE_MIM ? "mim" : "mis", alloc_real.name,
			(int64_t)alloc_hdr_size, im->time_ns, im->elapsed_ns, im->pause_ns,
			(int64_t)im->seq, (int64_t)im->nblocks, (int64_t)im->bytes);
	alloc_sqlite_release(w, st);
	return rc;
}

/* The resident set now and at its highest (snapshot_rss), in bytes. */
int alloc_sqlite_write_rss(sq_writer_t *w)
{
	struct rusage ru;
	int64_t resident = alloc_sqlite_resident();
	if (syscall(SYS_getrusage, RUSAGE_SELF, &ru) != 0)
		ru.ru_maxrss = 0;
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO snapshot_rss VALUES(?,?,?)");
	int rc = st ? alloc_sqlite_row(w, st, "iii", w->id, resident > 0 ? resident : 0,
			     (int64_t)ru.ru_maxrss * 1024) : -1;
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/* A process started dormant: since when it counts (snapshot_since). */
int alloc_sqlite_write_since(sq_writer_t *w)
{
	if (!alloc_on_since_ns)
		return 0;
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO snapshot_since VALUES(?,?)");
	int rc = st ? alloc_sqlite_row(w, st, "ii", w->id, alloc_on_since_ns) : -1;
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/* Entry id's row of its kind's name table (st: allocator, class, type, thread). */
static int sq_name_row(sq_writer_t *w, sq_stmt_t *const *st, unsigned k, uint32_t id,
		       const struct meminst_status_info *e)
{
	if (k == ALLOC_K_ALLOCATOR)
		return alloc_sqlite_row(w, st[0], "iis", w->id, (int64_t)id, e->name);
	if (k == ALLOC_K_CLASS)
		return alloc_sqlite_row(w, st[1], "iiss", w->id, (int64_t)id, e->name, alloc_class_module(id));
	if (k == ALLOC_K_TYPE && e->site)
		return alloc_sqlite_row(w, st[2], "iisii", w->id, (int64_t)id, e->name, (int64_t)e->class_no,
					(int64_t)e->site);
	if (k == ALLOC_K_TYPE)
		return alloc_sqlite_row(w, st[2], "iisis", w->id, (int64_t)id, e->name, (int64_t)e->class_no, NULL);
	return alloc_sqlite_row(w, st[3], "iiis", w->id, (int64_t)id, (int64_t)e->tid, e->name);
}

/* The status, name, event and histogram rows: all of them, or those that
** changed (alloc_sqlite_carry.c). */
int alloc_sqlite_write_tables(sq_writer_t *w, const alloc_snap_t *im)
{
	static const char *const kinds[] = {MEMINST_SNAPSHOT_KINDS};
	/* a file from before the event tables; a kept connection made them at its first store */
	int rc = w->kept && w->kept->events_made ? 0 : alloc_sqlite_exec(w, MEMINST_SNAPSHOT_EVENT_TABLES);
	if (rc == 0 && w->kept)
		w->kept->events_made = true;
	sq_stmt_t *st[7] = {
		alloc_sqlite_prepare(w, "INSERT INTO allocator VALUES(?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO class VALUES(?,?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO type VALUES(?,?,?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO thread VALUES(?,?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO status VALUES(?,?,?,?,?,?,?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO status_event VALUES(?,?,?,?,?,?,?,?)"),
		alloc_sqlite_prepare(w, "INSERT INTO size_hist VALUES(?,?,?,?)")};
	for (int i = 0; i < 7; i++)
		if (!st[i])
			rc = -1;
	for (unsigned k = 0; k < ALLOC_K_COUNT && rc == 0; k++) {
		for (uint32_t id = 0; id < im->nstatus[k] && rc == 0; id++) {
			const struct meminst_status_info *e = &im->status[k][id];
			if (k != ALLOC_K_TOTAL && alloc_sqlite_carry_store(w, k, id, SQ_U_NAME))
				rc = sq_name_row(w, st, k, id, e);
			if (rc == 0 && alloc_sqlite_carry_store(w, k, id, SQ_U_STATUS))
				rc = alloc_sqlite_row(w, st[4], "isiiiiiii", w->id, kinds[k], (int64_t)id,
					    (int64_t)e->sizes.current, (int64_t)e->sizes.max_since_last,
					    (int64_t)e->sizes.max_ever, (int64_t)e->blocks.current,
					    (int64_t)e->blocks.max_since_last, (int64_t)e->blocks.max_ever);
			const struct meminst_events *ev = &im->events[k][id];
			if (rc == 0 && ev->calls && alloc_sqlite_carry_store(w, k, id, SQ_U_EVENT))
				rc = alloc_sqlite_row(w, st[5], "isiiiiii", w->id, kinds[k], (int64_t)id,
					    (int64_t)ev->calls, (int64_t)ev->allocated, (int64_t)ev->frees,
					    (int64_t)ev->temporary, (int64_t)ev->reallocs);
		}
	}
	for (uint32_t id = 0; id < im->nstatus[ALLOC_K_TYPE] && rc == 0; id++) {
		bool any = false; /* a type's histogram is one unit: all its buckets, or none */
		for (unsigned b = 0; b < ALLOC_HIST_BUCKETS && !any; b++)
			any = im->hist[id][b] != 0;
		if (!any || !alloc_sqlite_carry_store(w, ALLOC_K_TYPE, id, SQ_U_HIST))
			continue;
		for (unsigned b = 0; b < ALLOC_HIST_BUCKETS && rc == 0; b++)
			if (im->hist[id][b])
				rc = alloc_sqlite_row(w, st[6], "iiii", w->id, (int64_t)id, (int64_t)b, (int64_t)im->hist[id][b]);
	}
	for (int i = 0; i < 7; i++)
		if (st[i])
			alloc_sqlite_release(w, st[i]);
	return rc;
}

/* The stacks of the types made by site_depth (none without it). */
int alloc_sqlite_write_frames(sq_writer_t *w, const alloc_snap_t *im)
{
	sq_stmt_t *st = NULL;
	int rc = 0;
	for (uint32_t id = 1; id < im->nstatus[ALLOC_K_TYPE] && rc == 0; id++) {
		const uint64_t *f;
		unsigned n = alloc_type_frames(id, &f);
		if (n && !alloc_sqlite_carry_store(w, ALLOC_K_TYPE, id, SQ_U_FRAMES))
			continue;
		if (n && !st) {
			rc = w->kept && w->kept->frames_made ? 0 : alloc_sqlite_exec(w, MEMINST_SNAPSHOT_TYPE_FRAME_TABLE);
			if (rc == 0 && w->kept)
				w->kept->frames_made = true;
			st = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO type_frame VALUES(?,?,?,?)") : NULL;
			rc = st ? 0 : -1;
		}
		for (unsigned d = 0; d < n && rc == 0; d++)
			rc = alloc_sqlite_row(w, st, "iiii", w->id, (int64_t)id, (int64_t)d, (int64_t)f[d]);
	}
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/* The load bias of each automatic class's module (class_load). */
int alloc_sqlite_write_class_load(sq_writer_t *w, const alloc_snap_t *im)
{
	/* a file from before it; a kept connection made it at its first store */
	int rc = w->kept && w->kept->class_load_made ? 0 : alloc_sqlite_exec(w, MEMINST_SNAPSHOT_CLASS_LOAD_TABLE);
	if (rc == 0 && w->kept)
		w->kept->class_load_made = true;
	sq_stmt_t *st = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO class_load VALUES(?,?,?)") : NULL;
	rc = st ? 0 : -1;
	for (uint32_t id = 1; id < im->nstatus[ALLOC_K_CLASS] && rc == 0; id++)
		if (alloc_class_module(id) && alloc_sqlite_carry_store(w, ALLOC_K_CLASS, id, SQ_U_LOAD))
			rc = alloc_sqlite_row(w, st, "iii", w->id, (int64_t)id, (int64_t)alloc_class_bias(id));
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/* A leak check's sums, and the class of each block not still reachable. */
int alloc_sqlite_write_leaks(sq_writer_t *w, const alloc_snap_t *im)
{
	if (!im->leak_done)
		return 0;
	int rc = alloc_sqlite_exec(w, MEMINST_SNAPSHOT_LEAK_TABLES);
	sq_stmt_t *st = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO leak_check VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)") : NULL;
	const alloc_leak_sum_t *l = &im->leak;
	rc = st ? alloc_sqlite_row(w, st, "iiiiiiiiiiiii", w->id, (int64_t)l->bytes[ALLOC_LEAK_DEFINITE],
			 (int64_t)l->blocks[ALLOC_LEAK_DEFINITE], (int64_t)l->bytes[ALLOC_LEAK_INDIRECT],
			 (int64_t)l->blocks[ALLOC_LEAK_INDIRECT], (int64_t)l->bytes[ALLOC_LEAK_POSSIBLE],
			 (int64_t)l->blocks[ALLOC_LEAK_POSSIBLE], (int64_t)l->bytes[ALLOC_LEAK_REACHABLE],
			 (int64_t)l->blocks[ALLOC_LEAK_REACHABLE], (int64_t)l->scanned_bytes, (int64_t)l->threads,
			 (int64_t)l->threads_unstopped, l->scan_ns)
		: -1;
	if (st)
		alloc_sqlite_release(w, st);
	sq_stmt_t *cl = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO leak_block VALUES(?,?,?)") : NULL;
	st = cl ? alloc_sqlite_prepare(w, "INSERT INTO leak_clique VALUES(?,?,?,?)") : NULL;
	rc = st ? 0 : -1;
	/* the classes come with a compact capture only (alloc_snap_compact.c):
	** the blocks' addresses are read back from its chunks */
	size_t i = 0, root = 0; /* the roots name blocks by index, in order */
	for (const alloc_snap_chunk_t *c = NULL; rc == 0 && (c = alloc_snap_chunk_next(im, c));) {
		alloc_snap_cursor_t cur;
		alloc_snap_chunk_start(c, &cur);
		for (uint32_t j = 0; j < c->count && rc == 0; j++, i++) {
			uint64_t addr = alloc_snap_chunk_addr(&cur);
			if (im->leak_class[i] != ALLOC_LEAK_REACHABLE)
				rc = alloc_sqlite_row(w, cl, "iii", w->id, (int64_t)addr, (int64_t)im->leak_class[i]);
			for (; rc == 0 && root < im->nleak_roots && im->leak_roots[root].key == i; root++)
				rc = alloc_sqlite_row(w, st, "iiii", w->id, (int64_t)addr,
						      (int64_t)im->leak_roots[root].bytes, (int64_t)im->leak_roots[root].blocks);
		}
	}
	if (cl)
		alloc_sqlite_release(w, cl);
	if (st)
		alloc_sqlite_release(w, st);
	st = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO leak_cpu VALUES(?,?)") : NULL;
	rc = st ? alloc_sqlite_row(w, st, "ii", w->id, l->scan_cpu_ns) : -1;
	if (st)
		alloc_sqlite_release(w, st);
	return rc;
}

/*
** Rows the kept connection stored last time, unchanged (same hash), and
** still the latest of their table (no other process or connection stored
** some since): not stored again, so that a steady program's interval
** snapshots do not repeat its modules.  Otherwise *now is what
** this write stores, recorded in the kept connection once committed.
*/
static bool sq_unchanged(sq_writer_t *w, const sq_same_t *last, uint64_t hash, const char *latest_sql,
			 sq_same_t *now)
{
	now->id = 0;
	if (w->kept && last->id && last->hash == hash && alloc_sqlite_query_int(w, latest_sql) == last->id)
		return true;
	*now = (sq_same_t){w->id, hash};
	return false;
}

/* The program's own mappings (alloc_region.c) at a map snapshot, each
** with its site's name; none stored when there are none. */
int alloc_sqlite_write_regions(sq_writer_t *w, const alloc_snap_t *im)
{
	alloc_region_t *r;
	size_t bytes, n = im->with_map ? alloc_region_copy(&r, &bytes) : 0;
	if (!n) {
		if (im->with_map && bytes)
			alloc_sys_unmap(r, bytes);
		return 0;
	}
	int rc = w->kept && w->kept->regions_made ? 0 : alloc_sqlite_exec(w, MEMINST_SNAPSHOT_REGION_TABLE);
	if (rc == 0 && w->kept)
		w->kept->regions_made = true;
	sq_stmt_t *st = rc == 0 ? alloc_sqlite_prepare(w, "INSERT OR IGNORE INTO region VALUES(?,?,?,?,?,?,?)") : NULL;
	rc = st ? 0 : -1;
	uintptr_t named = 0;
	char name[600] = "", path[512];
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i == 0 || r[i].site != named) { /* a run of regions from one site: one dladdr */
			uintptr_t base;
			named = r[i].site;
			if (!alloc_sys_locate(named, &base, NULL, path, sizeof path, name, sizeof name))
				name[0] = 0;
		}
		rc = alloc_sqlite_row(w, st, "iiiiiis", w->id, (int64_t)r[i].start, (int64_t)r[i].end,
				      (int64_t)r[i].site, (int64_t)r[i].tid, (int64_t)r[i].kind, name);
	}
	if (st)
		alloc_sqlite_release(w, st);
	alloc_sys_unmap(r, bytes);
	return rc;
}

/* Loaded modules with load bias and GNU build-id, for offline symbols. */
typedef struct sq_module_s {
	uint64_t base;
	char path[512];
	char build_id[84];
} sq_module_t;

typedef struct sq_modules_s {
	sq_module_t *m;
	size_t n, cap;
} sq_modules_t;

static int sq_module_count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info, (void)size;
	((sq_modules_t *)arg)->n++;
	return 0;
}

/* The build-id as hex text ("" when there is none). */
static int sq_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	sq_modules_t *ms = arg;
	if (ms->n == ms->cap)
		return 1;
	sq_module_t *m = &ms->m[ms->n++];
	m->base = info->dlpi_addr;
	alloc_sys_module_path(info, m->path, sizeof m->path);
	alloc_sys_build_id_hex(info, m->build_id, sizeof m->build_id);
	return 0;
}

/*
** The modules' rows, not stored again while unchanged (sq_unchanged).
** While the loader's counts of loads and unloads are those of the kept
** connection's last look, the list is the one it hashed: it is neither
** walked nor hashed again (each module's path and build-id: 58 k
** instructions a status snapshot of a small program; bench/RESULTS.md,
** issue 29, session 23).  The counts are read before the walk, so that a
** dlopen between the two leaves them behind the list, never ahead.
*/
int alloc_sqlite_write_modules(sq_writer_t *w)
{
	unsigned long long adds, subs;
	alloc_sys_loader_counts_storing(&adds, &subs);
	sq_kept_t *k = w->kept;
	const char *latest = SQ_SQL_LATEST_MODULE;
	if (k && k->loads_known && adds == k->loads_adds && subs == k->loads_subs &&
	    sq_unchanged(w, &k->modules, k->loads_hash, latest, &w->modules))
		return 0;
	/* room for the modules there are and 64 more (a dlopen meanwhile):
	** 4,096 took 2.4 MB of address space at each store, which a program
	** under RLIMIT_AS no longer had (meminst(7)) */
	sq_modules_t ms = {.cap = SIZE_MAX};
	alloc_sys_dl_iterate(sq_module_count_cb, &ms);
	ms.cap = ms.n + 64, ms.n = 0;
	size_t bytes = (ms.cap * sizeof(sq_module_t) + 4095) & ~(size_t)4095;
	if (!(ms.m = alloc_sys_map(bytes)))
		return alloc_sqlite_fail(w, "out of memory");
	/* not trace_loader_iterate: the store lock, which fork's prepare
	** handler takes after the loader's gate is up, keeps forks out; a raw
	** clone's copy still sees the call (alloc_sys_dl_iterate) */
	alloc_sys_dl_iterate(sq_module_cb, &ms);
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT OR IGNORE INTO module VALUES(?,?,?,?)");
	int rc = st ? 0 : -1;
	uint64_t h = SQ_HASH_START;
	for (size_t i = 0; i < ms.n; i++) {
		h = sq_hash(h, &ms.m[i].base, sizeof ms.m[i].base);
		h = sq_hash(h, ms.m[i].path, strlen(ms.m[i].path) + 1);
		h = sq_hash(h, ms.m[i].build_id, strlen(ms.m[i].build_id) + 1);
	}
	if (k) {
		k->loads_adds = adds;
		k->loads_subs = subs;
		k->loads_hash = h;
		k->loads_known = true;
	}
	if (rc == 0 && ms.n && k && sq_unchanged(w, &k->modules, h, latest, &w->modules))
		ms.n = 0;
	for (size_t i = 0; i < ms.n && rc == 0; i++)
		rc = alloc_sqlite_row(w, st, "iiss", w->id, (int64_t)ms.m[i].base, ms.m[i].path,
			    ms.m[i].build_id[0] ? ms.m[i].build_id : NULL);
	if (st)
		alloc_sqlite_release(w, st);
	alloc_sys_unmap(ms.m, bytes);
	return rc;
}

/*
** The blocks, sorted by address, in chunks of MEMINST_SNAPSHOT_CHUNK
** encoded as <meminst-snapshot.h> defines: a few bytes a block, one row a
** chunk, so that SQLite inserts a thousand times fewer rows.  The records
** (16 or 32 bytes, alloc_snap_sort.c) were sorted in place before the
** store began, so they are read in order (a spilled capture's merged from
** its file, a window at a time: alloc_snap_spill.c).  The buffer is mapped,
** not malloc'd: we run guarded.
*/
/* A compact capture's chunks, encoded already (alloc_snap_compact.c). */
static int sq_write_chunks(sq_writer_t *w, sq_stmt_t *st, const alloc_snap_t *im)
{
	int rc = 0;
	for (const alloc_snap_chunk_t *c = NULL; rc == 0 && (c = alloc_snap_chunk_next(im, c));) {
		rc = alloc_sqlite_row(w, st, "iiib", w->id, (int64_t)c->first, (int64_t)c->count, (const void *)(c + 1),
				      (size_t)c->len);
	}
	return rc;
}

int alloc_sqlite_write_blocks(sq_writer_t *w, alloc_snap_t *im)
{
	if (!im->nblocks)
		return 0;
	if (im->compact) {
		sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO block_chunk VALUES(?,?,?,?)");
		int rc = st ? sq_write_chunks(w, st, im) : -1;
		if (st)
			alloc_sqlite_release(w, st);
		return rc;
	}
	size_t cap = MEMINST_SNAPSHOT_CHUNK * MEMINST_SNAPSHOT_BLOCK_MAX_BYTES;
	unsigned char *buf = alloc_sys_map(cap);
	if (!buf)
		return alloc_sqlite_fail(w, "out of memory");
	sq_stmt_t *st = alloc_sqlite_prepare(w, "INSERT INTO block_chunk VALUES(?,?,?,?)");
	int rc = st ? 0 : -1;
	for (size_t i = 0; i < im->nblocks && rc == 0;) { /* sorted: alloc_snap_sort_unique */
		size_t n = im->nblocks - i < MEMINST_SNAPSHOT_CHUNK ? im->nblocks - i : MEMINST_SNAPSHOT_CHUNK;
		if (!alloc_snap_window(im, i, n)) {
			alloc_fmt(w->err, w->errlen, "snapshot %s: cannot read the capture's temporary file: %s", w->path,
				  strerror(errno));
			rc = -1;
			break;
		}
		alloc_snap_rec_t r;
		alloc_snap_rec_at(im, i, &r);
		uint64_t first = r.addr;
		struct meminst_snapshot_block prev = {.addr = first};
		unsigned char *p = buf;
		for (size_t j = i; j < i + n; j++) {
			alloc_snap_rec_at(im, j, &r);
			struct meminst_snapshot_block e = {r.addr, r.size, r.type, r.thread, r.allocator, r.seq};
			p = meminst_snapshot_put_block(p, &prev, &e);
		}
		rc = alloc_sqlite_row(w, st, "iiib", w->id, (int64_t)first, (int64_t)n, (const void *)buf,
				      (size_t)(p - buf));
		i += n;
	}
	if (st)
		alloc_sqlite_release(w, st);
	alloc_sys_unmap(buf, cap);
	return rc;
}
