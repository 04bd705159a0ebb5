/*
** alloc_snap_spill.c — a capture of a running program in bounded memory
** (issue 29: "the capture of a map snapshot in bounded memory").
**
** A peak, interval, signal, API or control capture copies the lists under
** the map's locks into 16-byte records (alloc_snap_rec16_t).  Held whole,
** they cost 16 B a live block at each peak (22 MB for perl's 1.37 M
** blocks).  Here the copy fills a buffer of alloc_snap_spill_run records
** (64 KiB) instead, and each time it is full writes it to a temporary file
** in the database's directory: a write goes to the page cache,
** which is not the program's resident set, and the buffer stays in cache,
** so the pause stays the copy.  After the program goes on, the storing
** thread sorts each run in the same buffer (alloc_snap_sort.c), writes it
** back, and hands the blocks to the store merged (k-way, a small buffer a
** run), window by window (alloc_snap_window): about 1 MiB whatever the
** heap.  (Runs of 1 MiB cost the C++ map of bench/launcher_rss.sh 0.5 MB
** more at its peak than runs of 256 KiB, which cost 0.2 MB more than these:
** the buffer is resident at the peak, and more runs neither lengthen the
** pause nor the store measurably, bench/RESULTS.md, issue 29.)
** A capture that fits one run never writes the file; without a directory
** to write in, the capture stays in memory as before.  A write that fails
** under the locks (a full disk, ulimit -f) fails the capture with one
** line (alloc_snapshot.c); the database is not touched.
**
** The file has a name (.meminst-spill-PID-N beside the database) until the
** image is freed: the service thread has a descriptor table of its own
** (alloc_service.c), so a descriptor means nothing to another thread.  The
** capture closes its descriptor as soon as the copy is done; the storing
** thread opens the file by its name when it sorts or reads it and closes
** it when its store ends (alloc_sqlite_store: a store that found the
** database busy is tried again later, maybe after a program's thread
** replaced the image); whoever frees the image unlinks the name, in the
** process that made it only (a child of fork frees its parent's copy).
** A process killed in between leaves the file behind.
*/
#include "alloc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

size_t alloc_snap_spill_run = 4096;

/* The raw calls: a program's own hooks on pwrite must not see ours. */
static bool spill_io(int fd, void *buf, size_t bytes, uint64_t off, bool write)
{
	for (char *p = buf; bytes;) {
		long got = syscall(write ? SYS_pwrite64 : SYS_pread64, fd, p, bytes, (long)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = write ? ENOSPC : EIO;
			return false;
		}
		p += got;
		off += (uint64_t)got;
		bytes -= (size_t)got;
	}
	return true;
}

bool alloc_snap_spill_open(alloc_snap_t *im, const char *db)
{
	static _Atomic unsigned spill_no;
	char path[4096];
	alloc_snap_spill_close(im);
	im->spill_run = alloc_snap_spill_run;
	if (!db) {
		if (!alloc_opts.snapshot || alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len,
							    alloc_snap_cwd, path, sizeof path) < 0)
			return false;
		db = path;
	}
	const char *slash = strrchr(db, '/');
	size_t n = slash ? (size_t)(slash - db) + 1 : 0;
	if (n + 48 > sizeof im->spill_path)
		return false;
	memcpy(im->spill_path, db, n);
	alloc_fmt(im->spill_path + n, sizeof im->spill_path - n, ".meminst-spill-%d-%u", (int)alloc_sys_pid(),
		  atomic_fetch_add(&spill_no, 1));
	int fd = (int)syscall(SYS_openat, AT_FDCWD, im->spill_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW,
			      0600);
	if (fd < 0) {
		im->spill_path[0] = 0;
		return false;
	}
	im->spill_fd = fd + 1;
	im->spill_pid = alloc_sys_pid();
	return true;
}

/* The file open in this thread's table (by its name: see above). */
static bool spill_attach(alloc_snap_t *im)
{
	if (im->spill_fd)
		return true;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, im->spill_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	im->spill_fd = fd + 1;
	return true;
}

void alloc_snap_spill_detach(alloc_snap_t *im)
{
	if (im->spill_fd)
		syscall(SYS_close, im->spill_fd - 1);
	im->spill_fd = 0;
}

void alloc_snap_spill_captured(alloc_snap_t *im)
{
	alloc_snap_spill_detach(im);
	if (!im->spill_runs)
		alloc_snap_spill_close(im); /* it fitted one run: no file needed */
}

void alloc_snap_spill_close(alloc_snap_t *im)
{
	alloc_snap_spill_detach(im);
	if (im->spill_path[0] && im->spill_pid == alloc_sys_pid())
		syscall(SYS_unlinkat, AT_FDCWD, im->spill_path, 0);
	if (im->merge_map)
		alloc_sys_unmap(im->merge_map, im->merge_bytes);
	im->merge_map = NULL;
	im->spill_fd = 0;
	im->spill_path[0] = 0;
	im->spill_runs = im->merge_bytes = 0;
}

bool alloc_snap_spill_write(alloc_snap_t *im, size_t n)
{
	uint64_t off = (uint64_t)im->spill_runs * im->spill_run * sizeof(alloc_snap_rec16_t);
	if (!spill_io(im->spill_fd - 1, im->rec16, n * sizeof(alloc_snap_rec16_t), off, true))
		return false;
	im->spill_runs++;
	return true;
}

/* ------------------------------------------------------------ merge ---- */

typedef struct spill_src_s {
	uint64_t key;             /* the head's address */
	uint64_t off;             /* the next record to read, in records */
	size_t left;              /* records of the run not read yet */
	uint32_t pos, fill;
	alloc_snap_rec16_t *buf;
} spill_src_t;

typedef struct spill_merge_s {
	size_t k, nheap, per;     /* runs, runs not exhausted, records a buffer */
	size_t total, merged;     /* records in the file; handed out (unique) */
	uint64_t last;            /* the last address handed out */
	spill_src_t *src;
	uint32_t *heap;           /* the runs by their heads' addresses */
} spill_merge_t;

#define SPILL_MERGE_BYTES (128u << 10) /* the runs' buffers in all, about */
#define SPILL_MERGE_PER 256 /* records a run's buffer at most (4 KiB) */

static bool src_refill(const alloc_snap_t *im, spill_src_t *s)
{
	size_t n = s->left < ((spill_merge_t *)im->merge_map)->per ? s->left : ((spill_merge_t *)im->merge_map)->per;
	if (!spill_io(im->spill_fd - 1, s->buf, n * sizeof *s->buf, s->off * sizeof *s->buf, false))
		return false;
	s->off += n;
	s->left -= n;
	s->pos = 0;
	s->fill = (uint32_t)n;
	s->key = alloc_snap_rec16_addr(&s->buf[0], im->recs);
	return true;
}

static void heap_down(spill_merge_t *m, size_t i)
{
	uint32_t x = m->heap[i];
	for (size_t c; (c = 2 * i + 1) < m->nheap; i = c) {
		if (c + 1 < m->nheap && m->src[m->heap[c + 1]].key < m->src[m->heap[c]].key)
			c++;
		if (m->src[x].key <= m->src[m->heap[c]].key)
			break;
		m->heap[i] = m->heap[c];
	}
	m->heap[i] = x;
}

/* Every run from its start. */
static bool merge_reset(alloc_snap_t *im)
{
	spill_merge_t *m = im->merge_map;
	m->nheap = m->merged = 0;
	for (size_t r = 0; r < m->k; r++) {
		spill_src_t *s = &m->src[r];
		s->off = r * im->spill_run;
		s->left = r + 1 < m->k ? im->spill_run : m->total - r * im->spill_run;
		if (!src_refill(im, s))
			return false;
		m->heap[m->nheap++] = (uint32_t)r;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		heap_down(m, i);
	im->win_first = im->win_n = 0;
	return true;
}

/* The next record by address into *out, duplicates too. */
static bool merge_next(alloc_snap_t *im, alloc_snap_rec16_t *out)
{
	spill_merge_t *m = im->merge_map;
	if (!m->nheap) { /* fewer records than counted: the file changed */
		errno = EIO;
		return false;
	}
	spill_src_t *s = &m->src[m->heap[0]];
	*out = s->buf[s->pos++];
	if (s->pos < s->fill)
		s->key = alloc_snap_rec16_addr(&s->buf[s->pos], im->recs);
	else if (s->left) {
		if (!src_refill(im, s))
			return false;
	} else {
		m->heap[0] = m->heap[--m->nheap];
	}
	if (m->nheap)
		heap_down(m, 0);
	return true;
}

/* The next record, each address once (as alloc_snap_sort_unique keeps). */
static bool merge_next_unique(alloc_snap_t *im, alloc_snap_rec16_t *out)
{
	spill_merge_t *m = im->merge_map;
	do {
		if (!merge_next(im, out))
			return false;
	} while (m->merged && alloc_snap_rec16_addr(out, im->recs) == m->last);
	m->last = alloc_snap_rec16_addr(out, im->recs);
	m->merged++;
	return true;
}

bool alloc_snap_spill_sort(alloc_snap_t *im)
{
	size_t k = im->spill_runs, total = im->nblocks, run = im->spill_run;
	if (!spill_attach(im))
		return false;
	for (size_t r = 0; r < k; r++) { /* each run sorted in the capture's buffer */
		size_t n = r + 1 < k ? run : total - r * run;
		uint64_t off = (uint64_t)r * run * sizeof *im->rec16;
		if (!spill_io(im->spill_fd - 1, im->rec16, n * sizeof *im->rec16, off, false))
			return false;
		alloc_snap_sort_rec16(im->rec16, n, im->counts, im->recs);
		if (!spill_io(im->spill_fd - 1, im->rec16, n * sizeof *im->rec16, off, true))
			return false;
	}
	size_t per = SPILL_MERGE_BYTES / sizeof *im->rec16 / k;
	per = per < 64 ? 64 : per > SPILL_MERGE_PER ? SPILL_MERGE_PER : per;
	size_t bytes = sizeof(spill_merge_t) + k * (sizeof(spill_src_t) + sizeof(uint32_t)) + 16 +
		       k * per * sizeof *im->rec16;
	if (!alloc_snap_area(&im->merge_map, &im->merge_bytes, bytes, false)) {
		errno = ENOMEM;
		return false;
	}
	spill_merge_t *m = im->merge_map;
	*m = (spill_merge_t){.k = k, .per = per, .total = total, .src = (spill_src_t *)(m + 1)};
	m->heap = (uint32_t *)(m->src + k);
	alloc_snap_rec16_t *bufs = (alloc_snap_rec16_t *)(((uintptr_t)(m->heap + k) + 15) & ~(uintptr_t)15);
	for (size_t r = 0; r < k; r++)
		m->src[r].buf = bufs + r * per;
	/* a block listed twice (alloc_snap_sort_unique says when) is counted
	** out of the totals now: the store writes them before the blocks */
	if (!merge_reset(im))
		return false;
	uint64_t last = 0;
	for (size_t i = 0; i < total; i++) {
		alloc_snap_rec16_t x;
		if (!merge_next(im, &x))
			return false;
		alloc_snap_rec_t r;
		alloc_snap_rec16_get(&x, im->recs, &r);
		if (i && r.addr == last) {
			im->bytes -= r.size;
			im->nblocks--;
		}
		last = r.addr;
	}
	return merge_reset(im);
}

bool alloc_snap_window(alloc_snap_t *im, size_t i, size_t n)
{
	if (!im->spill_runs || (i >= im->win_first && i + n <= im->win_first + im->win_n))
		return true;
	if (!spill_attach(im))
		return false;
	spill_merge_t *m = im->merge_map;
	if (i < im->win_first && !merge_reset(im))
		return false;
	size_t end = im->win_first + im->win_n; /* == m->merged */
	if (i > end) { /* forward to i */
		alloc_snap_rec16_t x;
		while (m->merged < i)
			if (!merge_next_unique(im, &x))
				return false;
		im->win_first = i;
		im->win_n = 0;
	} else { /* the part of the window still wanted to its start */
		memmove(im->rec16, im->rec16 + (i - im->win_first), (end - i) * sizeof *im->rec16);
		im->win_n = end - i;
		im->win_first = i;
	}
	while (im->win_n < im->spill_run && m->merged < im->nblocks)
		if (!merge_next_unique(im, &im->rec16[im->win_n++]))
			return false;
	return i + n <= im->win_first + im->win_n;
}
