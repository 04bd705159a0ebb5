/*
** alloc_snap_compact.c — a capture of the map in about 9 bytes a block
** (issue 29: a 10 M-block exit snapshot in at most 160 MB).
**
** The 16-byte records of alloc_snapshot.c are copied under the map's locks
** and sorted after, so that the program waits only for the copy: right for
** the peaks and intervals a running program is paused for.  At exit, and
** for a leak check (which sorts under the locks and stops every thread
** anyway), the program waits in any case, so the work is done there in
** less memory: under the locks, the blocks' addresses (8 B a block, read
** from the lists without touching a header), sorted in place, each once;
** the leak scan on them (alloc_leak.c: the sizes from the headers, which
** stay put while the map is held); then every block's header read in
** address order and encoded as block_chunk stores it (<meminst-snapshot.h>:
** a few bytes a block), the addresses' pages given back as the encoding
** passes them.  The store writes the chunks as they are (alloc_sqlite_rows.c).
** What the snapshot holds is what the records would have given: the same
** instant, blocks, sizes, numbers and classes, in the same order.
*/
#include "alloc_int.h"

#include <string.h>
#include <sys/mman.h>

#include "meminst-snapshot.h"

/* The addresses' mapping: the sort's counts, then room addresses. */
static uint64_t *compact_addrs(const alloc_snap_t *im)
{
	return (uint64_t *)(im->counts + ALLOC_SNAP_SORT_COUNTS);
}

/*
** Room for `room` addresses, populated now so that the copy under the
** locks takes no page fault, and a reservation for the encoding (its
** pages fault in as it is written).  False when out of memory.
*/
bool alloc_snap_compact_reserve(alloc_snap_t *im, size_t room)
{
	im->compact = true;
	im->recs = NULL;
	im->room = 0;
	if (!alloc_snap_area(&im->blocks_map, &im->blocks_bytes, ALLOC_SNAP_SORT_COUNTS * sizeof(size_t) + room * 8,
			     true))
		return false;
	im->room = room;
	im->counts = im->blocks_map;
	size_t want = (room / MEMINST_SNAPSHOT_CHUNK + 1) * sizeof(alloc_snap_chunk_t) + room * 16 + (1 << 20);
	return alloc_snap_area((void **)&im->chunks, &im->chunks_bytes, want, false);
}

void alloc_snap_compact_unmap(alloc_snap_t *im)
{
	if (im->chunks)
		alloc_sys_unmap(im->chunks, im->chunks_bytes);
	im->chunks = NULL;
	im->chunks_bytes = im->chunks_used = 0;
}

/* Every live block's address, sorted, each once (a raw clone's child may
** copy a map half-way through a move: alloc_snap_sort_unique); SIZE_MAX
** when more than the room (the same child: a bit set, not counted yet). */
static size_t compact_collect(alloc_snap_t *im, uint64_t *addr)
{
	size_t n = 0;
	for (uint32_t id = 0, nl = alloc_map_nlists(); id < nl; id++) {
		const alloc_list_t *l = alloc_map_list(id);
		for (size_t e = 1; l->count && e <= l->nleaves; e++)
			ALLOC_LEAF_FOR_EACH(&l->leaves[e], m) {
				if (n == im->room)
					return SIZE_MAX;
				addr[n++] = (uintptr_t)(m + 1);
			}
	}
	alloc_snap_sort_addrs(addr, n, im->counts);
	size_t out = 0;
	for (size_t i = 0; i < n; i++)
		if (!out || addr[i] != addr[out - 1])
			addr[out++] = addr[i];
	return out;
}

/* Room for one more chunk of the most bytes it can take; false when the
** reservation cannot grow. */
static bool compact_room(alloc_snap_t *im)
{
	size_t need = sizeof(alloc_snap_chunk_t) + MEMINST_SNAPSHOT_CHUNK * MEMINST_SNAPSHOT_BLOCK_MAX_BYTES + 8;
	if (im->chunks_used + need <= im->chunks_bytes)
		return true;
	size_t bytes = (im->chunks_bytes * 2 + need + 4095) & ~(size_t)4095;
	unsigned char *grown = alloc_sys_remap(im->chunks, im->chunks_bytes, bytes);
	if (!grown)
		return false;
	im->chunks = grown;
	im->chunks_bytes = bytes;
	return true;
}

/* Ask for the headers this far ahead of the one read (as snap_copy_map). */
#define COMPACT_PREFETCH 16
/* Give the addresses' pages back every this many blocks encoded. */
#define COMPACT_RELEASE 65536

/* Blocks [i, i + n) as one chunk; false when out of memory. */
static bool compact_chunk(alloc_snap_t *im, const uint64_t *addr, size_t i, size_t n, size_t total)
{
	if (!compact_room(im))
		return false;
	alloc_snap_chunk_t *c = (alloc_snap_chunk_t *)(im->chunks + im->chunks_used);
	unsigned char *p = (unsigned char *)(c + 1);
	struct meminst_snapshot_block prev = {.addr = addr[i]};
	for (size_t j = i; j < i + n; j++) {
		if (j + COMPACT_PREFETCH < total)
			__builtin_prefetch((const alloc_mhdr_t *)addr[j + COMPACT_PREFETCH] - 1);
		const alloc_mhdr_t *m = (const alloc_mhdr_t *)addr[j] - 1;
		uint64_t meta = m->h.meta;
		struct meminst_snapshot_block b = {addr[j], alloc_hdr_bytes(&m->h), alloc_meta_type(meta),
						   alloc_meta_thread(meta), alloc_meta_allocator(meta), m->seq};
		im->bytes += b.size;
		p = meminst_snapshot_put_block(p, &prev, &b);
	}
	*c = (alloc_snap_chunk_t){addr[i], (uint32_t)n, (uint32_t)(p - (unsigned char *)(c + 1))};
	im->chunks_used = ((size_t)(p - im->chunks) + 7) & ~(size_t)7;
	return true;
}

/*
** Under the map's locks (alloc_snapshot.c's snap_copy_locked): collect,
** scan for leaks (with `leaks`), encode.  1 done, 0 the map did not fit
** the room (the capture is tried again), -1 no memory for the encoding.
*/
int alloc_snap_compact_copy(alloc_snap_t *im, bool leaks)
{
	uint64_t *addr = compact_addrs(im);
	im->chunks_used = 0;
	im->nblocks = 0;
	if (alloc_map_count_stopped() > im->room)
		return 0;
	size_t n = compact_collect(im, addr);
	if (n == SIZE_MAX)
		return 0;
	im->nblocks = n;
	im->sorted = im->unique = true;
	if (leaks && !alloc_leak_scan(im, addr, n))
		alloc_log("no memory for the leak check");
	char *released = (char *)addr; /* page-aligned: the counts fill 8 pages */
	for (size_t i = 0; i < n; i += MEMINST_SNAPSHOT_CHUNK) {
		if (!compact_chunk(im, addr, i, n - i < MEMINST_SNAPSHOT_CHUNK ? n - i : MEMINST_SNAPSHOT_CHUNK, n))
			return -1;
		char *done = (char *)((uintptr_t)(addr + i) & ~(uintptr_t)4095);
		if (done - released >= COMPACT_RELEASE * 8) {
			madvise(released, (size_t)(done - released), MADV_DONTNEED);
			released = done;
		}
	}
	return 1;
}

const alloc_snap_chunk_t *alloc_snap_chunk_next(const alloc_snap_t *im, const alloc_snap_chunk_t *at)
{
	const unsigned char *p = at ? (const unsigned char *)(at + 1) + ((at->len + 7) & ~(size_t)7) : im->chunks;
	return im->chunks && p < im->chunks + im->chunks_used ? (const alloc_snap_chunk_t *)p : NULL;
}

static const unsigned char *compact_varint(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	for (; *p & 0x80; p++, shift += 7)
		x |= (uint64_t)(*p & 0x7f) << shift;
	*v = x | (uint64_t)*p << shift;
	return p + 1;
}

void alloc_snap_chunk_start(const alloc_snap_chunk_t *c, alloc_snap_cursor_t *cur)
{
	cur->p = (const unsigned char *)(c + 1);
	cur->addr = c->first;
}

uint64_t alloc_snap_chunk_addr(alloc_snap_cursor_t *cur)
{
	uint64_t v;
	cur->p = compact_varint(cur->p, &v);
	cur->addr += v;
	for (unsigned f = 0; f < 5; f++) /* size, type, thread, allocator, seq */
		cur->p = compact_varint(cur->p, &v);
	return cur->addr;
}
