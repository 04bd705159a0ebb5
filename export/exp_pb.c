/*
** exp_pb.c — the writer of pprof's profile.proto: a small protocol
** buffers encoder (varints and length-delimited fields, the only two wire
** types the message uses), the tables of the message (strings, mappings,
** functions, locations) with their ids, and the gzip stream pprof reads.
**
** Samples go straight into the message as they are added; the tables are
** written after them (field order does not matter in protocol buffers), so
** memory follows the distinct stacks, functions and strings.
*/
#include "exp_pprof.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "meminst-hash.h"

/* Fields of profile.proto (github.com/google/pprof/proto/profile.proto). */
enum {
	PF_SAMPLE_TYPE = 1, PF_SAMPLE, PF_MAPPING, PF_LOCATION, PF_FUNCTION, PF_STRING_TABLE,
	PF_TIME_NANOS = 9, PF_DURATION_NANOS, PF_PERIOD_TYPE, PF_PERIOD, PF_COMMENT, PF_DEFAULT_SAMPLE_TYPE
};
enum { WT_VARINT = 0, WT_LEN = 2 };

/* ----------------------------------------------------------- encoder -- */

static void pb_put(struct pb_buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		if (b->cap < b->n + n)
			b->cap = b->n + n;
		b->p = rd_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	do {
		tmp[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_put(b, tmp, n);
}

/* A varint field; zero is the default and is left out. */
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | WT_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | WT_LEN);
	pb_varint(b, n);
	pb_put(b, p, n);
}

/* A sub-message: its bytes, then cleared for the next one. */
static void pb_msg(struct pb_buf *b, unsigned field, struct pb_buf *sub)
{
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

void pb_buf_free(struct pb_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ tables -- */

static uint64_t pp_hash(const void *p, size_t n)
{
	return meminst_fnv(MEMINST_FNV_START, p, n);
}

/* Open addressing over keys of `ksize` bytes (strings: their pointer's
** text); values are ids (index + 1). */
static uint32_t *pp_slot(struct pp_index *x, const void *key, size_t ksize, bool text,
			 const void *(*key_of)(const struct pprof *, uint32_t), const struct pprof *pp)
{
	if (2 * (x->n + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 1024;
		uint32_t *h = rd_xcalloc(cap, sizeof *h);
		for (size_t i = 0; i < x->cap; i++) {
			uint32_t v = x->slot[i];
			if (!v)
				continue;
			const void *k = key_of(pp, v);
			size_t j = pp_hash(k, text ? strlen(k) : ksize) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = v;
		}
		free(x->slot);
		x->slot = h, x->cap = cap;
	}
	size_t len = text ? strlen(key) : ksize;
	size_t j = pp_hash(key, len) & (x->cap - 1);
	for (; x->slot[j]; j = (j + 1) & (x->cap - 1)) {
		const void *k = key_of(pp, x->slot[j]);
		if (text ? !strcmp(k, key) : !memcmp(k, key, ksize))
			break;
	}
	return &x->slot[j];
}

static const void *pp_str_key(const struct pprof *pp, uint32_t v)
{
	return pp->strs[v - 1];
}

int64_t pprof_str(struct pprof *pp, const char *s)
{
	if (!s || !*s)
		return 0;
	uint32_t *slot = pp_slot(&pp->str_ix, s, 0, true, pp_str_key, pp);
	if (*slot)
		return *slot - 1;
	if (pp->nstrs == pp->strs_cap) {
		pp->strs_cap = pp->strs_cap ? 2 * pp->strs_cap : 256;
		pp->strs = rd_xrealloc(pp->strs, pp->strs_cap * sizeof *pp->strs);
	}
	pp->strs[pp->nstrs++] = rd_pool_str(&pp->pool, s);
	pp->str_ix.n++;
	*slot = (uint32_t)pp->nstrs;
	return (int64_t)pp->nstrs - 1;
}

void pprof_init(struct pprof *pp)
{
	memset(pp, 0, sizeof *pp);
	pp->strs_cap = 256;
	pp->strs = rd_xcalloc(pp->strs_cap, sizeof *pp->strs);
	pp->strs[pp->nstrs++] = ""; /* string 0 is always "" */
}

void pprof_free(struct pprof *pp)
{
	pb_buf_free(&pp->msg);
	pb_buf_free(&pp->locs);
	pb_buf_free(&pp->tmp);
	pb_buf_free(&pp->tmp2);
	free(pp->strs);
	free(pp->str_ix.slot);
	free(pp->loc_keys);
	free(pp->loc_ix.slot);
	free(pp->fn_ids);
	free(pp->fn_named);
	free(pp->mods);
	rd_pool_free(&pp->pool);
	memset(pp, 0, sizeof *pp);
}

void pprof_sample_type(struct pprof *pp, const char *type, const char *unit)
{
	pb_uint(&pp->tmp, 1, (uint64_t)pprof_str(pp, type));
	pb_uint(&pp->tmp, 2, (uint64_t)pprof_str(pp, unit));
	pb_msg(&pp->msg, PF_SAMPLE_TYPE, &pp->tmp);
	pp->ntypes++;
}

void pprof_period(struct pprof *pp, const char *type, const char *unit, int64_t period)
{
	pb_uint(&pp->tmp, 1, (uint64_t)pprof_str(pp, type));
	pb_uint(&pp->tmp, 2, (uint64_t)pprof_str(pp, unit));
	pb_msg(&pp->msg, PF_PERIOD_TYPE, &pp->tmp);
	pb_uint(&pp->msg, PF_PERIOD, (uint64_t)period);
}

void pprof_times(struct pprof *pp, uint64_t start_ns, uint64_t duration_ns)
{
	pb_uint(&pp->msg, PF_TIME_NANOS, start_ns);
	pb_uint(&pp->msg, PF_DURATION_NANOS, duration_ns);
}

void pprof_comment(struct pprof *pp, const char *text)
{
	pb_uint(&pp->msg, PF_COMMENT, (uint64_t)pprof_str(pp, text));
}

void pprof_default_type(struct pprof *pp, const char *type)
{
	pb_uint(&pp->msg, PF_DEFAULT_SAMPLE_TYPE, (uint64_t)pprof_str(pp, type));
}

/* Mappings: the modules of the trace or the snapshot, ids 1.. in order. */
void pprof_mapping(struct pprof *pp, uint64_t start, uint64_t limit, uint64_t offset, const char *path,
		   const char *build_id)
{
	pp->mods = rd_xrealloc(pp->mods, (pp->nmods + 1) * sizeof *pp->mods);
	pp->mods[pp->nmods++] = (struct pp_mod){start, limit};
	struct pb_buf *t = &pp->tmp;
	pb_uint(t, 1, pp->nmods);
	pb_uint(t, 2, start);
	pb_uint(t, 3, limit);
	pb_uint(t, 4, offset);
	pb_uint(t, 5, (uint64_t)pprof_str(pp, path));
	pb_uint(t, 6, (uint64_t)pprof_str(pp, build_id));
	for (unsigned f = 7; f <= 9; f++) /* has_functions, _filenames, _line_numbers: named here */
		pb_uint(t, f, 1);
	pb_msg(&pp->msg, PF_MAPPING, t);
}

/* The mapping of an address; one in no module (a registered type's frame,
** a pseudo frame) has the first, the program's: the fleet's profilers key
** a location's symbols by its mapping's build-id. */
static uint64_t pp_mapping_of(const struct pprof *pp, uint64_t addr)
{
	for (size_t i = 0; i < pp->nmods; i++)
		if (addr >= pp->mods[i].start && addr < pp->mods[i].limit)
			return i + 1;
	return pp->nmods ? 1 : 0;
}

static uint64_t pp_function_msg(struct pprof *pp, const struct pprof_fn *fn)
{
	uint64_t id = ++pp->nfns;
	struct pb_buf *t = &pp->tmp2;
	pb_uint(t, 1, id);
	/* no system_name: the names are demangled already, and pprof leaves a
	** name alone when the system name differs (else it "demangles" it
	** again, which empties <alloc> and cuts template arguments) */
	pb_uint(t, 2, (uint64_t)pprof_str(pp, fn->name));
	pb_uint(t, 4, (uint64_t)pprof_str(pp, fn->file));
	pb_uint(t, 5, fn->start_line > 0 ? (uint64_t)fn->start_line : 0);
	pb_msg(&pp->locs, PF_FUNCTION, t);
	return id;
}

static void pp_grow_ids(uint64_t **v, size_t *cap, size_t key)
{
	if (key < *cap)
		return;
	size_t n = 2 * key + 64;
	*v = rd_xrealloc(*v, n * sizeof **v);
	memset(*v + *cap, 0, (n - *cap) * sizeof **v);
	*cap = n;
}

/* Functions by the caller's key (a function-table index), ids 1.. */
static uint64_t pp_function(struct pprof *pp, uint32_t key, const struct pprof_fn *fn)
{
	pp_grow_ids(&pp->fn_ids, &pp->fn_cap, key);
	if (!pp->fn_ids[key])
		pp->fn_ids[key] = pp_function_msg(pp, fn);
	return pp->fn_ids[key];
}

/* An inlined function, by its name. */
static uint64_t pp_function_named(struct pprof *pp, const char *name, const char *file)
{
	struct pprof_fn fn = {name ? name : "??", file, 0};
	size_t key = (size_t)pprof_str(pp, fn.name);
	pp_grow_ids(&pp->fn_named, &pp->named_cap, key);
	if (!pp->fn_named[key])
		pp->fn_named[key] = pp_function_msg(pp, &fn);
	return pp->fn_named[key];
}

static const void *pp_loc_key(const struct pprof *pp, uint32_t v)
{
	return &pp->loc_keys[v - 1];
}

#define PP_MAX_INLINE 64

uint64_t pprof_location(struct pprof *pp, uint64_t addr, uint32_t fn_key, const struct pprof_fn *fn,
			size_t (*lines_of)(void *ctx, uint64_t addr, struct prof_iframe *out, size_t max),
			void *ctx)
{
	struct pp_lkey k = {addr, fn_key};
	uint32_t *slot = pp_slot(&pp->loc_ix, &k, sizeof k, false, pp_loc_key, pp);
	if (*slot)
		return *slot;
	if (pp->nlocs == pp->loc_cap) {
		pp->loc_cap = pp->loc_cap ? 2 * pp->loc_cap : 256;
		pp->loc_keys = rd_xrealloc(pp->loc_keys, pp->loc_cap * sizeof *pp->loc_keys);
	}
	pp->loc_keys[pp->nlocs++] = k;
	pp->loc_ix.n++;
	*slot = (uint32_t)pp->nlocs;
	struct prof_iframe in[PP_MAX_INLINE];
	size_t n = lines_of ? lines_of(ctx, addr, in, PP_MAX_INLINE) : 0;
	uint64_t fids[PP_MAX_INLINE];
	for (size_t i = 0; i + 1 < n; i++) /* the inlined ones (before any message is begun) */
		fids[i] = pp_function_named(pp, in[i].func, in[i].file);
	uint64_t fid = pp_function(pp, fn_key, fn);
	struct pb_buf *t = &pp->tmp, *l = &pp->tmp2;
	pb_uint(t, 1, pp->nlocs);
	pb_uint(t, 2, pp_mapping_of(pp, addr));
	pb_uint(t, 3, addr);
	for (size_t i = 0; i < (n ? n : 1); i++) { /* innermost first: the last is fn itself */
		int line = !n ? fn->start_line : in[i].line;
		pb_uint(l, 1, i + 1 < n ? fids[i] : fid);
		pb_uint(l, 2, line > 0 ? (uint64_t)line : 0);
		pb_msg(t, 4, l);
	}
	pb_msg(&pp->locs, PF_LOCATION, t);
	return pp->nlocs;
}

void pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n, const int64_t *values,
		  const struct pprof_label *labels, size_t nlabels)
{
	struct pb_buf *t = &pp->tmp, *p = &pp->tmp2;
	for (size_t i = 0; i < n; i++)
		pb_varint(p, locs[i]);
	pb_msg(t, 1, p);
	for (size_t i = 0; i < pp->ntypes; i++)
		pb_varint(p, (uint64_t)values[i]);
	pb_msg(t, 2, p);
	for (size_t i = 0; i < nlabels; i++) {
		const struct pprof_label *l = &labels[i];
		if (l->str && !*l->str)
			continue;
		pb_uint(p, 1, (uint64_t)pprof_str(pp, l->key));
		if (l->str)
			pb_uint(p, 2, (uint64_t)pprof_str(pp, l->str));
		else
			pb_uint(p, 3, (uint64_t)l->num);
		pb_msg(t, 3, p);
	}
	pb_msg(&pp->msg, PF_SAMPLE, t);
	pp->nsamples++;
}

/* -------------------------------------------------------------- gzip -- */

static int pp_deflate(z_stream *z, FILE *f, const void *p, size_t n, bool last)
{
	unsigned char out[65536];
	z->next_in = (Bytef *)(uintptr_t)p;
	z->avail_in = (uInt)n;
	int r;
	do {
		z->next_out = out;
		z->avail_out = sizeof out;
		r = deflate(z, last ? Z_FINISH : Z_NO_FLUSH);
		if (r == Z_STREAM_ERROR)
			return -1;
		size_t have = sizeof out - z->avail_out;
		if (have && fwrite(out, 1, have, f) != have)
			return -1;
	} while (z->avail_out == 0 || (last && r != Z_STREAM_END));
	return 0;
}

int pprof_write(struct pprof *pp, FILE *f)
{
	for (size_t i = 0; i < pp->nstrs; i++)
		pb_bytes(&pp->locs, PF_STRING_TABLE, pp->strs[i], strlen(pp->strs[i]));
	z_stream z = {0};
	/* level 1, as Go's runtime/pprof writes its profiles: level 6 took a
	** third of a heap scrape's CPU in inspect serve (bench/RESULTS.md) */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) /* +16: gzip */
		return -1;
	int r = 0;
	/* in pieces: avail_in is an unsigned int */
	for (size_t off = 0; !r && off < pp->msg.n; off += 1u << 30)
		r = pp_deflate(&z, f, pp->msg.p + off, pp->msg.n - off < 1u << 30 ? pp->msg.n - off : 1u << 30,
			       false);
	for (size_t off = 0; !r && off < pp->locs.n; off += 1u << 30)
		r = pp_deflate(&z, f, pp->locs.p + off, pp->locs.n - off < 1u << 30 ? pp->locs.n - off : 1u << 30,
			       false);
	if (!r)
		r = pp_deflate(&z, f, NULL, 0, true);
	deflateEnd(&z);
	return r;
}
