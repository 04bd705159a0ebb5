/*
** rd_chunk.c — decoding block_chunk.data (see rd_chunk.h).
*/
#include "rd_chunk.h"

const char *rd_chunk_start(struct rd_chunk *c, int64_t first, int64_t count, const void *data,
			     size_t len)
{
	c->p = data;
	c->end = c->p + (data ? len : 0);
	c->left = 0;
	c->prev.addr = (uint64_t)first;
	c->prev.seq = 0;
	if (count < 1 || count > MEMINST_SNAPSHOT_CHUNK_MAX)
		return "block count out of range";
	if ((uint64_t)(c->end - c->p) < 6 * (uint64_t)count)
		return "data shorter than its blocks";
	c->left = (uint64_t)count;
	return NULL;
}

/* One varint; false when cut short or longer than 10 bytes. */
static int chunk_varint(struct rd_chunk *c, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70 && c->p < c->end; shift += 7) {
		unsigned char byte = *c->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return 1;
		}
	}
	return 0;
}

int rd_chunk_next(struct rd_chunk *c, struct meminst_snapshot_block *b, const char **why)
{
	if (!c->left) {
		if (c->p == c->end)
			return 0;
		*why = "bytes after the last block";
		return -1;
	}
	uint64_t v[6];
	for (int i = 0; i < 6; i++)
		if (!chunk_varint(c, &v[i])) {
			*why = c->p < c->end ? "a number longer than 64 bits" : "data cut short";
			return -1;
		}
	c->left--;
	b->addr = c->prev.addr + v[0];
	b->size = v[1];
	b->type = v[2];
	b->thread = v[3];
	b->allocator = v[4];
	b->seq = c->prev.seq + ((v[5] >> 1) ^ (uint64_t) - (int64_t)(v[5] & 1));
	c->prev.addr = b->addr;
	c->prev.seq = b->seq;
	return 1;
}
