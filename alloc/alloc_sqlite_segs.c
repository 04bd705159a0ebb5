/*
** alloc_sqlite_segs.c — a snapshot's segment rows: the process's mappings
** from /proc/self/smaps, with the kernel's figures of each.
**
** A snapshot stored through the kept connection (the interval snapshots)
** compares the mappings with those it stored last, as a reader rebuilds
** them, and stores only the rows that differ, marked in segment_delta
** (meminst-snapshot(5)): a steady program's map changes by a few rows
** between snapshots (its arenas' tops, the pages of libc it touched), and
** storing its 60-odd mappings again each time made most of a session's
** growth.  Other stores (the exit and peak snapshots, another connection
** since) store them all.  Split from alloc_sqlite_rows.c, whose rows do
** not compare with what was stored.
*/
#include "alloc_int.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "alloc_sqlite_int.h"

/* One mapping of /proc/self/smaps: its maps line and the kernel's figures
** (MEMINST_SNAPSHOT_SEGMENT_RSS), in bytes. */
typedef struct sq_seg_s {
	unsigned long long start, stop, off;
	char perms[8];
	const char *path;
	int64_t fig[6]; /* rss pss private shared swap anon_huge */
} sq_seg_t;

/* A mapping as stored, compared by its path's hash: what the kept
** connection's last store left a reader with. */
typedef struct sq_seg_kept_s {
	unsigned long long start, stop, off;
	uint64_t path;
	char perms[8];
	int64_t fig[6];
} sq_seg_kept_t;

/* Two lists, the stored one (sq_same_t.buf) and the one a store under way
** makes, taken once it commits; mapped (the runtime does not malloc) and
** grown to the most mappings seen, kept for the process's life (a child
** made by fork has its own copy, as good as new). */
static sq_seg_kept_t *sq_segs_kept[2];
static size_t sq_segs_cap[2];

/* List b with room for n mappings, NULL if it cannot be had. */
static sq_seg_kept_t *sq_segs_room(unsigned b, size_t n)
{
	if (n <= sq_segs_cap[b])
		return sq_segs_kept[b];
	size_t cap = n + n / 2 + 64;
	sq_seg_kept_t *bigger = alloc_sys_map(cap * sizeof *bigger);
	if (!bigger)
		return NULL;
	if (sq_segs_kept[b])
		alloc_sys_unmap(sq_segs_kept[b], sq_segs_cap[b] * sizeof *bigger);
	sq_segs_kept[b] = bigger;
	sq_segs_cap[b] = cap;
	return bigger;
}

/* The whole of `path` (/proc/self/smaps or maps) in *buf (mapped, grown
** until it fits); its length, 0 if it cannot be read. */
static size_t sq_read_proc(const char *path, char **buf, size_t *cap)
{
	for (;;) {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
		size_t len = 0;
		ssize_t got;
		while (fd >= 0 && len + 1 < *cap && (got = syscall(SYS_read, fd, *buf + len, *cap - 1 - len)) > 0)
			len += (size_t)got;
		if (fd >= 0)
			syscall(SYS_close, fd);
		if (fd < 0 || len + 1 < *cap || *cap >= (256u << 20))
			return fd < 0 ? 0 : len;
		char *bigger = alloc_sys_map(*cap * 2); /* full: read again into twice the room */
		if (!bigger)
			return len;
		alloc_sys_unmap(*buf, *cap);
		*buf = bigger;
		*cap *= 2;
	}
}

/* A token of a maps line and the blanks after it: where the next starts. */
static char *sq_skip_field(char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/* A lower-case hex number at p; *end where it stops. */
static unsigned long long sq_hex(char *p, char **end)
{
	unsigned long long v = 0;
	for (;; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
			   : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 16u;
		if (d == 16)
			break;
		v = v << 4 | d;
	}
	*end = p;
	return v;
}

/*
** The head of a mapping in smaps, "START-STOP PERMS OFFSET DEV INODE
** PATH", into g; false when the line is not one.  Not sscanf: its scanner
** is code of libc's that nothing else runs, and a store running it made
** another 64 KiB of libc resident while the heap is at its peak (file
** pages come in 64 KiB windows: bench/RESULTS.md, issue 29, helper rss41);
** nor strtoull, 250 instructions a number with its locale's checks, three
** numbers a mapping at every store (the kernel writes lower-case hex).
*/
static bool sq_parse_head(char *line, sq_seg_t *g)
{
	char *p;
	g->start = sq_hex(line, &p);
	if (p == line || *p != '-')
		return false;
	g->stop = sq_hex(p + 1, &p);
	if (*p != ' ')
		return false;
	size_t k = 0;
	for (p++; *p && *p != ' ' && k < sizeof g->perms - 1; p++)
		g->perms[k++] = *p;
	g->perms[k] = 0;
	char *off = p = sq_skip_field(p);
	g->off = sq_hex(off, &p);
	if (p == off)
		return false;
	g->path = sq_skip_field(sq_skip_field(sq_skip_field(p))); /* the offset's blanks, DEV, INODE */
	return true;
}

/*
** The figure lines a store keeps, and which figure each adds to.  Only
** these are parsed: a mapping has 20-odd lines and a store reads every
** mapping's, so testing each line against each key with strncmp, strlen
** and strtoll took 60 % of a status snapshot's instructions (1 M of 1.8 M
** on a small program; bench/RESULTS.md, issue 29, session 22).
*/
static const struct sq_smaps_key_s {
	char key[15];
	unsigned char len, fig;
} sq_smaps_keys[] = {{"Rss:", 4, 0},	       {"Pss:", 4, 1},		{"Private_Clean:", 14, 2},
		     {"Private_Dirty:", 14, 2}, {"Shared_Clean:", 13, 3}, {"Shared_Dirty:", 13, 3},
		     {"Swap:", 5, 4},	       {"AnonHugePages:", 14, 5}};

/* A figure line's kB, as bytes; 0 when it is not a number. */
static int64_t sq_smaps_bytes(const char *p)
{
	int64_t kb = 0;
	while (*p == ' ')
		p++;
	for (; *p >= '0' && *p <= '9' && kb < (INT64_MAX >> 10) / 10; p++)
		kb = kb * 10 + (*p - '0');
	return kb * 1024;
}

/* Parse smaps text (NUL-terminated lines in place) into segs; the count. */
static size_t sq_parse_smaps(char *buf, size_t len, sq_seg_t *segs, size_t max)
{
	size_t n = 0;
	for (char *line = buf; line && line < buf + len;) {
		char *end = memchr(line, '\n', (size_t)(buf + len - line));
		if (end)
			*end = 0;
		sq_seg_t *g = &segs[n];
		if ((*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f')) {
			if (n < max && sq_parse_head(line, g)) {
				memset(g->fig, 0, sizeof g->fig);
				n++;
			}
		} else if (n) {
			for (unsigned k = 0; k < sizeof sq_smaps_keys / sizeof sq_smaps_keys[0]; k++) {
				const struct sq_smaps_key_s *key = &sq_smaps_keys[k];
				if (key->key[0] == *line && !strncmp(line, key->key, key->len)) {
					segs[n - 1].fig[key->fig] += sq_smaps_bytes(line + key->len);
					break;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* The smaps columns and segment_delta in a file made before them
** (meminst-snapshot.h). */
static int sq_segment_columns(sq_writer_t *w)
{
	static const char *const cols[] = {MEMINST_SNAPSHOT_SEGMENT_RSS};
	if (w->kept && w->kept->segment_rss_made)
		return 0;
	int64_t have = alloc_sqlite_query_int(w, "SELECT count(*) FROM pragma_table_info('segment') WHERE name = 'rss'");
	int rc = have < 0 ? -1 : alloc_sqlite_exec(w, MEMINST_SNAPSHOT_SEGMENT_DELTA_TABLE);
	for (unsigned i = 0; have == 0 && rc == 0 && i < sizeof cols / sizeof cols[0]; i++) {
		char sql[80];
		alloc_fmt(sql, sizeof sql, "ALTER TABLE segment ADD COLUMN %s INTEGER", cols[i]);
		rc = alloc_sqlite_exec(w, sql);
	}
	if (rc == 0 && w->kept)
		w->kept->segment_rss_made = true;
	return rc;
}

/* The mapping g as kept: its figures are `fig`'s. */
static sq_seg_kept_t sq_seg_keep(const sq_seg_t *g, const int64_t *fig)
{
	sq_seg_kept_t k = {g->start, g->stop, g->off, sq_hash(SQ_HASH_START, g->path, strlen(g->path)), "", {0}};
	strncpy(k.perms, g->perms, sizeof k.perms - 1); /* the rest zero: lists compare with memcmp */
	memcpy(k.fig, fig, sizeof k.fig);
	return k;
}

static bool sq_seg_same_mapping(const sq_seg_kept_t *a, const sq_seg_kept_t *b)
{
	return a->start == b->start && a->stop == b->stop && a->off == b->off && a->path == b->path &&
	       !strcmp(a->perms, b->perms);
}

/* The stored mapping that starts where g does, in was[0..n) (both in
** smaps' order, by address as unsigned); *at moves along. */
static const sq_seg_kept_t *sq_seg_find(const sq_seg_kept_t *was, size_t n, size_t *at, unsigned long long start)
{
	while (*at < n && was[*at].start < start)
		(*at)++;
	return *at < n && was[*at].start == start ? &was[*at] : NULL;
}

/*
** The list a reader is to rebuild from this store, in now[]: the current
** mappings, each with its current figures, except that while the resident
** and swapped bytes of the mappings unchanged since `was`, each compared
** and added up, moved by at most 1/256 of the process's resident set,
** those keep the figures stored (a steady program does not store its map
** at every interval, and a reader's figures are never further off).
*/
static void sq_segs_next(const sq_seg_kept_t *was, size_t nwas, const sq_seg_t *segs, size_t n, sq_seg_kept_t *now)
{
	int64_t total = 0, off = 0;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		now[i] = sq_seg_keep(&segs[i], segs[i].fig);
		const sq_seg_kept_t *k = sq_seg_find(was, nwas, &at, segs[i].start);
		total += segs[i].fig[0];
		if (k && sq_seg_same_mapping(k, &now[i])) {
			int64_t drss = k->fig[0] - segs[i].fig[0], dswap = k->fig[4] - segs[i].fig[4];
			off += (drss < 0 ? -drss : drss) + (dswap < 0 ? -dswap : dswap);
		}
	}
	if (off > total / 256)
		return;
	at = 0;
	for (size_t i = 0; i < n; i++) {
		const sq_seg_kept_t *k = sq_seg_find(was, nwas, &at, segs[i].start);
		if (k && sq_seg_same_mapping(k, &now[i]))
			memcpy(now[i].fig, k->fig, sizeof now[i].fig);
	}
}

static int sq_seg_row(sq_writer_t *w, sq_stmt_t *st, const sq_seg_t *g)
{
	return alloc_sqlite_row(w, st, "iiisisiiiiii", w->id, (int64_t)g->start, (int64_t)g->stop, g->perms,
				(int64_t)g->off, g->path, g->fig[0], g->fig[1], g->fig[2], g->fig[3], g->fig[4], g->fig[5]);
}

/* The rows of now[] that differ from was[], and a row with end = start for
** each mapping of was[] gone (a new one at its start replaces it). */
static int sq_segs_store_changes(sq_writer_t *w, sq_stmt_t *st, const sq_seg_kept_t *was, size_t nwas,
				 const sq_seg_t *segs, const sq_seg_kept_t *now, size_t n)
{
	int rc = 0;
	size_t at = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const sq_seg_kept_t *k = sq_seg_find(was, nwas, &at, segs[i].start);
		if (!k || !sq_seg_same_mapping(k, &now[i]) || memcmp(k->fig, now[i].fig, sizeof k->fig))
			rc = sq_seg_row(w, st, &segs[i]);
	}
	at = 0;
	for (size_t j = 0; rc == 0 && j < nwas; j++)
		if (!sq_seg_find(now, n, &at, was[j].start))
			rc = alloc_sqlite_row(w, st, "iiisisssssss", w->id, (int64_t)was[j].start, (int64_t)was[j].start,
					      "", (int64_t)0, "", NULL, NULL, NULL, NULL, NULL, NULL);
	return rc;
}

int64_t alloc_sqlite_resident(void)
{
	char statm[256];
	if (alloc_sys_read_file("/proc/self/statm", statm, sizeof statm) <= 0)
		return -1;
	char *p;
	(void)strtol(statm, &p, 10); /* the size, then the resident pages; not sscanf (see sq_parse_head) */
	return (int64_t)strtol(p, NULL, 10) * sysconf(_SC_PAGESIZE);
}

/* Whether the maps lines in buf (NUL-terminated in place) are the mappings
** of was[0..n), in the same order. */
static bool sq_maps_same(char *buf, size_t len, const sq_seg_kept_t *was, size_t n)
{
	size_t i = 0;
	for (char *line = buf; line && line < buf + len; i++) {
		char *end = memchr(line, '\n', (size_t)(buf + len - line));
		if (end)
			*end = 0;
		sq_seg_t g;
		if (i >= n || !sq_parse_head(line, &g))
			return false;
		sq_seg_kept_t k = sq_seg_keep(&g, was[i].fig);
		if (!sq_seg_same_mapping(&k, &was[i]))
			return false;
		line = end ? end + 1 : NULL;
	}
	return i == n;
}

/*
** Whether smaps need not be read for a store that compares with `last`:
** the mappings are those stored (/proc/self/maps) and the resident set
** (statm) is within 1/256 of the stored rows' sum, so that sq_segs_next
** would keep what is stored, unless pages moved between mappings and the
** total hid it; smaps is read at least every SQ_SMAPS_NS for that.  Reading smaps
** walks the page tables of every mapping under the process's mmap lock:
** 8 ms a store at a 1 GiB heap on the bench machine, where maps and statm
** read counters (bench/RESULTS.md, issue 29, session 22).  The maps text
** found to list the stored mappings is kept: the same text again, byte for
** byte, is not parsed and hashed again (140 k of a steady program's 346 k
** instructions a status snapshot: bench/RESULTS.md, issue 29, session 23).
*/
#define SQ_SMAPS_NS 10000000000LL
static bool sq_smaps_unneeded(sq_kept_t *kept, const sq_same_t *last, char **buf, size_t *cap)
{
	int64_t resident = alloc_sqlite_resident(), moved = resident - last->resident;
	if (resident < 0 || last->resident <= 0 || (moved < 0 ? -moved : moved) > last->resident / 256 ||
	    alloc_snap_now(CLOCK_MONOTONIC) - kept->smaps_ns > SQ_SMAPS_NS)
		return false;
	size_t len = sq_read_proc("/proc/self/maps", buf, cap);
	if (!len)
		return false;
	if (kept->maps_id == last->id && kept->maps_len == len && !memcmp(kept->maps_text, *buf, len))
		return true;
	kept->maps_id = 0;
	if (len > kept->maps_cap) { /* room for the text before the parse cuts it into lines */
		size_t room = len + len / 2 + 4096;
		char *text = alloc_sys_map(room);
		if (text && kept->maps_text)
			alloc_sys_unmap(kept->maps_text, kept->maps_cap);
		if (text) {
			kept->maps_text = text;
			kept->maps_cap = room;
		}
	}
	bool keep = len <= kept->maps_cap;
	if (keep)
		memcpy(kept->maps_text, *buf, len);
	if (!sq_maps_same(*buf, len, sq_segs_kept[last->buf], last->n))
		return false;
	if (keep) {
		kept->maps_len = len;
		kept->maps_id = last->id;
	}
	return true;
}

void alloc_sqlite_segs_forget(sq_kept_t *kept)
{
	if (kept->maps_text)
		alloc_sys_unmap(kept->maps_text, kept->maps_cap);
	kept->maps_text = NULL;
	kept->maps_cap = kept->maps_len = 0;
	kept->maps_id = 0;
	if (kept->read_buf)
		alloc_sys_unmap(kept->read_buf, kept->read_cap);
	if (kept->segs)
		alloc_sys_unmap(kept->segs, kept->segs_bytes);
	kept->read_buf = kept->segs = NULL;
	kept->read_cap = kept->segs_bytes = 0;
}

/*
** A store's buffers: with a kept connection, those of the last store (each
** mapping let go is a TLB shootdown on the CPUs the program's threads ran
** on: see the status spare in alloc_snapshot.c); the read's stays when it
** holds no more than SQ_READ_KEPT bytes of text (the maps a steady program
** is compared by, not a large smaps read).
*/
#define SQ_READ_KEPT (64u << 10)
static char *sq_read_buf(sq_kept_t *kept, size_t *cap)
{
	char *buf = kept ? kept->read_buf : NULL;
	*cap = buf ? kept->read_cap : 1u << 20;
	if (kept)
		kept->read_buf = NULL;
	return buf ? buf : alloc_sys_map(*cap);
}

static void sq_read_buf_done(sq_kept_t *kept, char *buf, size_t cap, size_t used)
{
	if (!buf)
		return;
	if (kept && used <= SQ_READ_KEPT) {
		kept->read_buf = buf;
		kept->read_cap = cap;
	} else {
		alloc_sys_unmap(buf, cap);
	}
}

static sq_seg_t *sq_segs_buf(sq_kept_t *kept, size_t bytes)
{
	if (kept && kept->segs && kept->segs_bytes >= bytes)
		return kept->segs;
	if (kept && kept->segs) {
		alloc_sys_unmap(kept->segs, kept->segs_bytes);
		kept->segs = NULL;
		kept->segs_bytes = 0;
	}
	sq_seg_t *segs = alloc_sys_map(bytes);
	if (kept && segs) {
		kept->segs = segs;
		kept->segs_bytes = bytes;
	}
	return segs;
}

/*
** /proc/self/smaps, one row per mapping with its figures; through the kept
** connection, when the rows it stored last are still the latest of the
** table (no other process or connection stored some since), only what
** changed (sq_segs_next), and nothing when nothing did.
*/
int alloc_sqlite_write_segments(sq_writer_t *w)
{
	size_t cap, len = 0, max = 0, n = 0;
	char *buf = sq_read_buf(w->kept, &cap);
	int rc = buf ? sq_segment_columns(w) : alloc_sqlite_fail(w, "out of memory");
	const sq_same_t *last = w->kept ? &w->kept->segments : NULL;
	bool changes = rc == 0 && last && last->id && last->n &&
		       alloc_sqlite_query_int(w, SQ_SQL_LATEST_SEGMENT) == last->id;
	if (changes && sq_smaps_unneeded(w->kept, last, &buf, &cap)) {
		/* nothing to store: a reader takes the rows of last->id */
		sq_read_buf_done(w->kept, buf, cap, w->kept->maps_len);
		return 0;
	}
	len = rc == 0 ? sq_read_proc("/proc/self/smaps", &buf, &cap) : 0;
	max = len / 128 + 1;
	sq_seg_t *segs = len ? sq_segs_buf(w->kept, max * sizeof *segs) : NULL;
	if (rc == 0 && len && !segs)
		rc = alloc_sqlite_fail(w, "out of memory");
	if (segs)
		n = sq_parse_smaps(buf, len, segs, max);
	if (w->kept && n)
		w->kept->smaps_ns = alloc_snap_now(CLOCK_MONOTONIC);
	changes = changes && n;
	const sq_seg_kept_t *was = changes ? sq_segs_kept[last->buf] : NULL;
	unsigned next = last ? !last->buf : 0;
	sq_seg_kept_t *now = w->kept && n ? sq_segs_room(next, n) : NULL;
	if (changes && now) {
		sq_segs_next(was, last->n, segs, n, now);
		if (last->n == n && !memcmp(was, now, n * sizeof *now))
			n = 0; /* nothing to store: a reader takes the rows of last->id */
	} else {
		changes = false;
		for (size_t i = 0; now && i < n; i++)
			now[i] = sq_seg_keep(&segs[i], segs[i].fig);
	}
	int64_t stored_rss = 0; /* the resident bytes as a reader adds them up */
	for (size_t i = 0; now && i < n; i++)
		stored_rss += now[i].fig[0];
	if (rc == 0 && n && w->kept)
		w->segments = (sq_same_t){w->id, 0, now ? n : 0, next, stored_rss};
	sq_stmt_t *st = rc == 0 && n ? alloc_sqlite_prepare(w, "INSERT OR IGNORE INTO segment"
			"(snapshot, start, end, perms, offset, path, rss, pss, private, shared, swap, anon_huge) "
			"VALUES(?,?,?,?,?,?,?,?,?,?,?,?)") : NULL;
	if (rc == 0 && n && !st)
		rc = -1;
	if (rc == 0 && n && changes) {
		rc = sq_segs_store_changes(w, st, was, last->n, segs, now, n);
		sq_stmt_t *d = rc == 0 ? alloc_sqlite_prepare(w, "INSERT INTO segment_delta VALUES(?)") : NULL;
		rc = d ? alloc_sqlite_row(w, d, "i", w->id) : -1;
		if (d)
			alloc_sqlite_release(w, d);
	}
	for (size_t i = 0; rc == 0 && n && !changes && i < n; i++)
		rc = sq_seg_row(w, st, &segs[i]);
	if (st)
		alloc_sqlite_release(w, st);
	if (segs && !w->kept)
		alloc_sys_unmap(segs, max * sizeof *segs);
	sq_read_buf_done(w->kept, buf, cap, len);
	return rc;
}
