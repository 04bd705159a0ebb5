/*
** rd_chunk.h — the one decoder of the block chunks of schema 2 (the
** encoding is defined in <meminst-snapshot.h>).  It knows nothing of
** SQLite or of inspect: inspect's block reader (rd_db.c) and the SQLite
** extension (tool_sqlite_ext.c) both compile rd_chunk.c and feed it the
** chunks they read.  It decodes in place, one block at a time, so memory
** does not grow with the snapshot; every byte is checked before use, so a
** damaged chunk is reported, never read past.
*/
#ifndef RD_CHUNK_H
#define RD_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "meminst-snapshot.h"

struct rd_chunk {
	const unsigned char *p, *end;
	uint64_t left; /* blocks still to decode */
	struct meminst_snapshot_block prev;
};

/* Start on one block_chunk row.  Returns NULL, or why the row is damaged. */
const char *rd_chunk_start(struct rd_chunk *c, int64_t first, int64_t count, const void *data,
			     size_t len);

/* The next block into *b: 1, 0 at the end of the chunk, -1 when the chunk
** is damaged (*why says how). */
int rd_chunk_next(struct rd_chunk *c, struct meminst_snapshot_block *b, const char **why);

#endif /* RD_CHUNK_H */
