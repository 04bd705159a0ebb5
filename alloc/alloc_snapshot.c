/*
** alloc_snapshot.c — taking snapshots: the live map and every status kind
** from one instant, copied into memory of our own, then stored.
**
** Capture and storage are separate.  alloc_snap_capture stops allocation
** and freeing only for as long as it takes to copy: it takes every map
** list lock (in mim mode, counting happens under those locks, so blocks
** and counters agree), copies the lists and reads the status of every kind
** into mmap'd buffers, and lets go.  Nothing is allocated through the
** instrumented heap while the locks are held.  alloc_sqlite_store (in
** alloc_sqlite.c) then writes the copy with SQLite, on a thread holding
** none of our locks, never from a signal handler and never on the
** allocation path: peaks are captured where they happen and stored by the
** service thread (alloc_service.c).  Where and when they are stored, and
** what is said when that fails, is alloc_snap_store.c's.
**
** A read for a snapshot resets max_since_last of every kind, as storing
** the status does in Erlang's instrument.
*/
#include "alloc_int.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t snap_start_ns;
char alloc_snap_cwd[4096];

int64_t alloc_snap_now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* At start-up: the clock origin and the directory relative paths use. */
void alloc_snap_init(void)
{
	snap_start_ns = alloc_snap_now(CLOCK_MONOTONIC);
	if (syscall(SYS_getcwd, alloc_snap_cwd, sizeof alloc_snap_cwd) < 0)
		alloc_snap_cwd[0] = 0;
}

static size_t snap_round(size_t bytes)
{
	return (bytes + 4095) & ~(size_t)4095;
}

static void snap_unmap(alloc_snap_t *im)
{
	if (!im)
		return;
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++)
		if (im->status[k])
			alloc_sys_unmap(im->status[k], im->status_bytes[k]);
	if (im->hist)
		alloc_sys_unmap(im->hist, im->hist_bytes);
	if (im->stat_scratch)
		alloc_sys_unmap(im->stat_scratch, im->stat_scratch_bytes);
	if (im->blocks_map)
		alloc_sys_unmap(im->blocks_map, im->blocks_bytes);
	if (im->esc_map)
		alloc_sys_unmap(im->esc_map, im->esc_bytes);
	if (im->leak_class)
		alloc_sys_unmap(im->leak_class, im->leak_class_bytes);
	if (im->leak_roots)
		alloc_sys_unmap(im->leak_roots, im->leak_roots_bytes);
	alloc_snap_compact_unmap(im);
	alloc_snap_spill_close(im);
	alloc_sys_unmap(im, snap_round(sizeof *im));
}

bool alloc_snap_area(void **map, size_t *have, size_t want, bool populated)
{
	want = snap_round(want);
	if (*map && *have >= want)
		return true;
	void *grown = *map && populated ? alloc_sys_remap(*map, *have, want) : NULL;
	if (grown)
		alloc_sys_populate((char *)grown + *have, want - *have);
	else if (*map)
		alloc_sys_unmap(*map, *have);
	*have = 0;
	*map = grown ? grown : populated ? alloc_sys_map_populated(want) : alloc_sys_map(want);
	if (!*map)
		return false;
	*have = want;
	return true;
}

/*
** The copy a capture of the map needs (tens of MB at a peak) is kept for
** the next capture a while: the pages of a new one are zeroed by the
** kernel, which cost more than the copy itself for a program that climbs
** to peak after peak (the issue-13 churn: 15 peaks, 200 MB zeroed, 70 ms
** of CPU on the program's threads).  Up to two images wait here with their
** buffers (a peak may come while the last one is being stored), while the
** service thread runs; it lets them go once no capture has wanted one for
** SNAP_SPARE_NS.  A capture of the map takes one and grows its buffers in
** place, so that only new pages are zeroed.
*/
#define SNAP_SPARE_NS 5000000000ll
#define SNAP_SPARES 2
static _Atomic(alloc_snap_t *) snap_spare[SNAP_SPARES];
static _Atomic int64_t snap_spare_at;

/*
** A capture of status only keeps its mappings for the next one as well
** (the image, every kind's status, the histograms, the read's scratch):
** each mapping let go is a TLB shootdown on every CPU the program's
** threads ran on, and with about ten of them a store, a status snapshot
** of an idle program cost 2.8 ms of CPU on a 2-vCPU VM, two thirds of it
** in munmap (bench/RESULTS.md, session 27).  Only the pages the figures
** filled stay resident.  Let go with the map's spares.
*/
static _Atomic(alloc_snap_t *) snap_status_spare;

static bool snap_status_only(const alloc_snap_t *im)
{
	return !im->blocks_map && !im->compact && !im->esc_map && !im->leak_class && !im->leak_roots &&
	       !im->merge_map && !im->chunks && !im->counts && !im->spill_fd;
}

/* The status spare, or NULL: every field but its mappings as a new one's. */
static alloc_snap_t *snap_status_take(void)
{
	alloc_snap_t *im = atomic_exchange(&snap_status_spare, NULL), keep;
	if (!im)
		return NULL;
	keep = *im;
	memset(im, 0, sizeof *im);
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++) {
		im->status[k] = keep.status[k];
		im->events[k] = keep.events[k];
		im->status_bytes[k] = keep.status_bytes[k];
	}
	im->hist = keep.hist;
	im->hist_bytes = keep.hist_bytes;
	im->stat_scratch = keep.stat_scratch;
	im->stat_scratch_bytes = keep.stat_scratch_bytes;
	return im;
}

void alloc_snap_free(alloc_snap_t *im)
{
	if (im && snap_status_only(im) && alloc_service_running()) {
		atomic_store(&snap_spare_at, alloc_snap_now(CLOCK_MONOTONIC));
		snap_unmap(atomic_exchange(&snap_status_spare, im));
		return;
	}
	if (!im || !im->blocks_map || im->compact || !alloc_service_running()) {
		snap_unmap(im);
		return;
	}
	alloc_snap_spill_close(im); /* a spare keeps its buffers, not its file */
	atomic_store(&snap_spare_at, alloc_snap_now(CLOCK_MONOTONIC));
	for (unsigned i = 0; im && i < SNAP_SPARES; i++) { /* the larger ones stay */
		alloc_snap_t *old = atomic_load(&snap_spare[i]);
		if ((!old || old->room < im->room) && atomic_compare_exchange_strong(&snap_spare[i], &old, im))
			im = old;
	}
	snap_unmap(im);
}

/* A spare for a capture of the map, or NULL. */
static alloc_snap_t *snap_spare_take(void)
{
	alloc_snap_t *im = NULL;
	for (unsigned i = 0; !im && i < SNAP_SPARES; i++)
		im = atomic_exchange(&snap_spare[i], NULL);
	return im;
}

/* Let the captures of the map that wait go. */
static void snap_spares_release(void)
{
	for (unsigned i = 0; i < SNAP_SPARES; i++)
		if (atomic_load(&snap_spare[i]))
			snap_unmap(atomic_exchange(&snap_spare[i], NULL));
}

void alloc_snap_spare_trim(void)
{
	if (alloc_snap_now(CLOCK_MONOTONIC) - atomic_load(&snap_spare_at) > SNAP_SPARE_NS) {
		snap_spares_release();
		if (atomic_load(&snap_status_spare))
			snap_unmap(atomic_exchange(&snap_status_spare, NULL));
	}
}

/* An entry's figures and its events. */
#define SNAP_STATUS_ENTRY (sizeof(struct meminst_status_info) + sizeof(struct meminst_events))

/* Room for the status of every kind, with a margin for numbers handed out
** while we wait for the locks.  Returns false when out of memory. */
static bool snap_reserve_status(alloc_snap_t *im)
{
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++) {
		uint32_t n = alloc_tags_count(k) + 256;
		size_t bytes = snap_round((size_t)n * SNAP_STATUS_ENTRY);
		if (im->status[k] && im->status_bytes[k] >= bytes)
			continue;
		if (im->status[k])
			alloc_sys_unmap(im->status[k], im->status_bytes[k]);
		im->status[k] = alloc_sys_map(bytes);
		im->status_bytes[k] = bytes;
		if (!im->status[k])
			return false;
		/* the events after the room for the figures */
		im->events[k] = (struct meminst_events *)(im->status[k] + bytes / SNAP_STATUS_ENTRY);
	}
	uint32_t most = 0;
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++)
		if (alloc_tags_count(k) > most)
			most = alloc_tags_count(k);
	size_t scratch = alloc_stat_scratch_bytes(most + 256);
	if (!im->stat_scratch || im->stat_scratch_bytes < scratch) {
		if (im->stat_scratch)
			alloc_sys_unmap(im->stat_scratch, im->stat_scratch_bytes);
		im->stat_scratch = alloc_sys_map(scratch); /* none: the read maps its own */
		im->stat_scratch_bytes = im->stat_scratch ? scratch : 0;
	}
	size_t bytes = snap_round((size_t)(alloc_tags_count(ALLOC_K_TYPE) + 256) * sizeof *im->hist);
	if (im->hist && im->hist_bytes >= bytes)
		return true;
	if (im->hist)
		alloc_sys_unmap(im->hist, im->hist_bytes);
	im->hist = alloc_sys_map(bytes);
	im->hist_bytes = bytes;
	return im->hist != NULL;
}

/* Read every kind (resetting the max_since_last of the snapshots, or of
** the control requests, not the program's).  False if a kind grew past the
** room reserved for it. */
static bool snap_read_status(alloc_snap_t *im)
{
	unsigned reader = strcmp(im->trigger, "control") == 0 ? ALLOC_READ_CONTROL : ALLOC_READ_SNAPSHOT;
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++) {
		uint32_t n = alloc_tags_count(k);
		if ((size_t)n * SNAP_STATUS_ENTRY > im->status_bytes[k])
			return false;
		im->nstatus[k] = n;
	}
	if ((size_t)im->nstatus[ALLOC_K_TYPE] * sizeof *im->hist > im->hist_bytes)
		return false;
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++)
		alloc_stat_read_in(k, im->nstatus[k], im->status[k], im->events[k], im->nstatus[k], reader,
				   im->stat_scratch, im->stat_scratch_bytes);
	alloc_hist_read(im->nstatus[ALLOC_K_TYPE], im->hist);
	return true;
}

/* One block at recs[n] (counts in locals: through im, every store would
** reload them, the records possibly aliasing im). */
static inline void snap_copy_wide(alloc_snap_rec_t *recs, size_t n, uint64_t *bytes, const alloc_mhdr_t *m)
{
	uint64_t meta = m->h.meta;
	alloc_snap_rec_t *r = &recs[n];
	r->addr = (uintptr_t)(m + 1);
	r->size = alloc_hdr_bytes(&m->h);
	r->seq = m->seq;
	r->type = alloc_meta_type(meta);
	r->thread = alloc_meta_thread(meta);
	r->allocator = alloc_meta_allocator(meta);
	*bytes += r->size;
}

/* In 16 bytes, else as an escape (counted past the room: the capture is
** then taken again wide). */
static inline void snap_copy_packed(alloc_snap_t *im, alloc_snap_rec16_t *r, size_t *nesc, uint64_t *bytes,
				    const alloc_mhdr_t *m)
{
	uint64_t meta = m->h.meta, addr = (uintptr_t)(m + 1), size = alloc_hdr_bytes(&m->h);
	*bytes += size;
	if (__builtin_expect(alloc_snap_rec16_pack(r, addr, size, meta, m->seq), 1))
		return;
	if (*nesc < im->esc_room) {
		im->recs[*nesc] = (alloc_snap_rec_t){addr, size, m->seq, alloc_meta_type(meta),
						     alloc_meta_thread(meta), alloc_meta_allocator(meta)};
		r->w1 = ALLOC_REC16_ESCAPE | *nesc;
	}
	++*nesc;
}

/*
** Copy every list; the map is stopped.  False if it did not fit.  Each
** header read is a cache miss, but the map says where the next ones are:
** asking for the next leaf's headers while one leaf's are copied overlaps
** the misses, which shortens the program's pause several times over (with
** the lists' arrays, 16 blocks ahead: the 15 peak captures of
** bench/site-depth.sh's churn, 3.2 M blocks, paused the program 33-34 ms in
** all instead of 38-44 ms).  A leaf is one page, its blocks in address
** order; the leaves come in the order they were made.  COPY reads the
** header `m`.  A child of a raw clone may copy a map in which another
** thread has set a block's bit but not counted it yet: more than `room`
** blocks do not fit (the records' room: SIZE_MAX where COPY bounds them).
*/
#define SNAP_COPY_LISTS(room, COPY)                                                            \
	for (uint32_t id = 0, nl = alloc_map_nlists(); id < nl; id++) {                        \
		const alloc_list_t *l = alloc_map_list(id);                                    \
		const alloc_leaf_t *prev = NULL;                                               \
		for (size_t e = 1; l->count && e <= (size_t)l->nleaves + 1; e++) {             \
			const alloc_leaf_t *leaf = e <= l->nleaves ? &l->leaves[e] : NULL;     \
			if (leaf && !leaf->page)                                               \
				continue;                                                      \
			if (leaf)                                                              \
				ALLOC_LEAF_FOR_EACH(leaf, m) __builtin_prefetch(m);            \
			if (prev)                                                              \
				ALLOC_LEAF_FOR_EACH(prev, m) {                                 \
					if (nb == (room))                                      \
						return 0;                                      \
					COPY;                                                  \
					nb++;                                                  \
				}                                                              \
			prev = leaf;                                                           \
		}                                                                              \
	}
/* The records so far as the next run of the file: false with errno. */
static inline bool snap_spill_full(alloc_snap_t *im, size_t *k)
{
	size_t n = *k;
	*k = 0;
	return alloc_snap_spill_write(im, n);
}

/* 1 copied, 0 did not fit (again), -1 the temporary file failed (errno). */
static int snap_copy_map(alloc_snap_t *im, size_t room)
{
	size_t nb = 0, nesc = 0;
	uint64_t bytes = 0;
	im->nblocks = im->nesc = im->spill_runs = 0;
	if (alloc_map_count_stopped() > room)
		return 0;
	if (im->wide) {
		alloc_snap_rec_t *recs = im->recs;
		SNAP_COPY_LISTS(room, snap_copy_wide(recs, nb, &bytes, m))
	} else if (im->spill_fd) { /* runs of spill_run records: the buffer stays in cache */
		alloc_snap_rec16_t *rec16 = im->rec16;
		size_t k = 0, run = im->spill_run;
		SNAP_COPY_LISTS(SIZE_MAX, {
			snap_copy_packed(im, &rec16[k], &nesc, &bytes, m);
			if (++k == run && !snap_spill_full(im, &k))
				return -1;
		})
		if (im->spill_runs && k && !snap_spill_full(im, &k))
			return -1;
	} else {
		alloc_snap_rec16_t *rec16 = im->rec16;
		SNAP_COPY_LISTS(room, snap_copy_packed(im, &rec16[nb], &nesc, &bytes, m))
	}
	im->nblocks = nb;
	im->nesc = nesc;
	im->bytes += bytes;
	if (nesc <= im->esc_room)
		return 1;
	im->widen = true;
	return 0;
}

/*
** Room for `room` blocks: the sort's counts and the records (16 bytes each,
** 32 with im->widen) in one mapping, populated now so that the copy under
** the locks takes no page fault; the escapes' room in another, faulted in
** as they come (they are few).  False when out of memory.
*/
static bool snap_reserve_blocks(alloc_snap_t *im, size_t room)
{
	bool wide = im->widen;
	if (wide)
		alloc_snap_spill_close(im); /* escapes everywhere: in memory, as before */
	size_t held = im->spill_fd && room > im->spill_run ? im->spill_run : room;
	im->room = 0;
	if (!alloc_snap_area(&im->blocks_map, &im->blocks_bytes,
			     ALLOC_SNAP_SORT_COUNTS * sizeof(size_t) +
				     held * (wide ? sizeof(alloc_snap_rec_t) : sizeof(alloc_snap_rec16_t)),
			     true))
		return false;
	size_t esc = wide ? 0 : room / 16 + 256;
	if (esc && !alloc_snap_area(&im->esc_map, &im->esc_bytes, esc * sizeof(alloc_snap_rec_t), false))
		return false;
	im->wide = wide;
	im->room = room;
	im->esc_room = esc;
	im->counts = im->blocks_map;
	im->rec16 = wide ? NULL : (alloc_snap_rec16_t *)(im->counts + ALLOC_SNAP_SORT_COUNTS);
	im->recs = wide ? (alloc_snap_rec_t *)(im->counts + ALLOC_SNAP_SORT_COUNTS) : im->esc_map;
	im->win_first = im->win_n = 0;
	return true;
}


/* Stop the world of allocations, copy, let go.  Returns false on no memory
** (errno ENOMEM) or when the temporary file failed (EIO, said).
** `compact`: alloc_snap_compact.c's capture (with the leak scan if asked). */
static bool snap_copy_locked(alloc_snap_t *im, bool with_map, bool compact, bool leaks)
{
	errno = ENOMEM;
	for (;;) {
		if (leaks && !alloc_leak_prepare())
			leaks = false; /* no memory, or no signal: the snapshot without */
		if (with_map) {
			size_t live = alloc_map_count(), room = live + live / 32 + 1024;
			if (!(compact ? alloc_snap_compact_reserve(im, room) : snap_reserve_blocks(im, room)))
				return false;
		}
		if (!snap_reserve_status(im))
			return false;
		int64_t t0 = alloc_snap_now(CLOCK_MONOTONIC);
		/* one instant for the blocks and every kind's status: mim counts
		** under the list locks, mis is stopped at its counting gate.  A
		** signal handler of this thread (a program's thread storing through
		** the API, or at exit) would free into a list held here, or wait
		** at the gate this thread closed: signals wait until the end. */
		bool mim = alloc_mode == MEMINST_MODE_MIM;
		sigset_t old;
		alloc_xfsz_t xfsz;
		alloc_sys_xfsz_block(&xfsz); /* a file past ulimit -f: EFBIG, not a kill */
		alloc_sys_signals_off(&old);
		atomic_fetch_add(&alloc_map_capturing, 1);
		if (mim)
			alloc_map_stop(); /* every list, in order */
		else
			alloc_thread_stop_counting();
		im->bytes = 0;
		int got = !with_map ? 1 : compact ? alloc_snap_compact_copy(im, leaks) : snap_copy_map(im, im->room);
		if (got > 0 && !snap_read_status(im))
			got = 0; /* a kind grew past its room: again */
		im->seq = atomic_load(&alloc_seq_reserved);
		if (mim)
			alloc_map_resume();
		else
			alloc_thread_resume_counting();
		atomic_fetch_sub(&alloc_map_capturing, 1);
		alloc_sys_signals_on(&old);
		int spill_errno = errno;
		alloc_sys_xfsz_restore(&xfsz);
		im->pause_ns = alloc_snap_now(CLOCK_MONOTONIC) - t0;
		if (got < 0) {
			alloc_snap_say_failure_errno(im, spill_errno);
			errno = EIO;
		}
		if (got)
			return got > 0;
	}
}

/*
** Capture a snapshot.  `with_map` asks for the live blocks (mim mode only;
** in mis mode a snapshot holds status only).  Returns NULL when out of
** memory.  Takes no lock on entry; runs guarded (the process must not
** allocate through itself while copying).
*/
static alloc_snap_t *snap_capture(bool with_map, bool leaks, const char *trigger, const char *db)
{
	if (!alloc_clone_adopt()) /* a child in its parent's memory: hands off */
		return NULL;
	with_map = with_map && alloc_mode == MEMINST_MODE_MIM;
	/* at exit and for a leak check the program waits for the whole scan
	** in any case: the capture in less memory (alloc_snap_compact.c) */
	bool compact = with_map && (leaks || !strcmp(trigger, "exit"));
	/* a compact capture takes no spare: they go first, so that the exit
	** snapshot does not hold the last peak's copy beside its own (the
	** process's peak at its end, bench/launcher_rss.sh) */
	if (compact)
		snap_spares_release();
	alloc_snap_t *im = with_map && !compact ? snap_spare_take() : !with_map ? snap_status_take() : NULL;
	if (!im && !(im = alloc_sys_map(snap_round(sizeof *im))))
		return NULL;
	if (im->leak_class)
		alloc_sys_unmap(im->leak_class, im->leak_class_bytes);
	if (im->leak_roots)
		alloc_sys_unmap(im->leak_roots, im->leak_roots_bytes);
	im->leak_class = NULL;
	im->leak_roots = NULL;
	im->nleak_roots = 0;
	im->leak_done = im->sorted = im->unique = im->widen = false;
	im->trigger = trigger;
	alloc_guard_enter();
	if (with_map && !compact)
		alloc_snap_spill_open(im, db);
	bool ok = snap_copy_locked(im, with_map, compact, with_map && leaks);
	alloc_guard_exit();
	if (!ok) {
		int e = errno;
		alloc_snap_free(im);
		errno = e;
		return NULL;
	}
	alloc_snap_spill_captured(im);
	for (unsigned k = 0; k < ALLOC_K_COUNT; k++)
		alloc_status_describe(k, im->nstatus[k], im->status[k]);
	im->with_map = with_map;
	im->trigger = trigger;
	int ppid;
	im->pid = alloc_ids_name(&ppid); /* its pid outside a pid namespace of its own */
	im->ppid = ppid;
	im->time_ns = alloc_snap_now(CLOCK_REALTIME);
	im->elapsed_ns = alloc_snap_now(CLOCK_MONOTONIC) - snap_start_ns;
	return im;
}

/* leak_check=on: every map snapshot; exit (the default): the exit one. */
alloc_snap_t *alloc_snap_capture_to(bool with_map, const char *trigger, const char *db)
{
	/* not at peaks: they are captured inside the allocating thread */
	bool leaks = (alloc_opts.leak_check == ALLOC_LEAK_CHECK_ON && strcmp(trigger, "peak") != 0) ||
		     (alloc_opts.leak_check == ALLOC_LEAK_CHECK_EXIT && !strcmp(trigger, "exit"));
	return snap_capture(with_map, leaks, trigger, db);
}

alloc_snap_t *alloc_snap_capture(bool with_map, const char *trigger)
{
	return alloc_snap_capture_to(with_map, trigger, NULL);
}

alloc_snap_t *alloc_snap_capture_leaks(const char *trigger)
{
	return snap_capture(true, true, trigger, NULL);
}
