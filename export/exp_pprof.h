/*
** exp_pprof.h — pprof's profile.proto (`inspect export --format pprof`).
**
**   exp_pb.c     the encoder: protocol buffers fields, the message's
**                 tables with their ids, gzip
**   exp_pprof.c  the profiles: an exact trace's stacks, a trace's samples,
**                 Go's heap profile of a snapshot (counters and live
**                 memory by site stack), the event counters by site stack
*/
#ifndef PROF_PPROF_H
#define PROF_PPROF_H

#include "exp_int.h"

struct pb_buf {
	unsigned char *p;
	size_t n, cap;
};

struct pp_index {
	uint32_t *slot;          /* id (index + 1), 0 = empty                 */
	size_t n, cap;
};

struct pp_lkey {
	uint64_t addr;
	uint64_t fn;             /* the caller's function key                */
};

struct pp_mod {
	uint64_t start, limit;
};

struct pprof {
	struct rd_pool pool;
	struct pb_buf msg;       /* sample types, samples, mappings, …       */
	struct pb_buf locs;      /* functions and locations                  */
	struct pb_buf tmp, tmp2;
	const char **strs;
	size_t nstrs, strs_cap;
	struct pp_index str_ix;
	struct pp_lkey *loc_keys;
	size_t nlocs, loc_cap;
	struct pp_index loc_ix;
	uint64_t *fn_ids;        /* by the caller's function key: id or 0     */
	size_t fn_cap, nfns;
	uint64_t *fn_named;      /* inlined functions, by name's string id    */
	size_t named_cap;
	struct pp_mod *mods;
	size_t nmods;
	size_t ntypes;
	uint64_t nsamples;
};

/* A function as pprof shows it. */
struct pprof_fn {
	const char *name, *file;
	int start_line;
};

/* "exp_pb.c" */
void pb_varint(struct pb_buf *b, uint64_t v);
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v);
void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n);
void pb_buf_free(struct pb_buf *b);

void pprof_init(struct pprof *pp);
void pprof_free(struct pprof *pp);
int64_t pprof_str(struct pprof *pp, const char *s);
/* Every sample type before the first sample. */
void pprof_sample_type(struct pprof *pp, const char *type, const char *unit);
void pprof_default_type(struct pprof *pp, const char *type);
void pprof_period(struct pprof *pp, const char *type, const char *unit, int64_t period);
void pprof_times(struct pprof *pp, uint64_t start_ns, uint64_t duration_ns);
void pprof_comment(struct pprof *pp, const char *text);
/* Every mapping before the first location. */
void pprof_mapping(struct pprof *pp, uint64_t start, uint64_t limit, uint64_t offset, const char *path,
		   const char *build_id);
/* The id of the location (addr, function fn_key): made on first use, with
** its function (fn: its name and file).  Its lines are the inline chain
** lines_of(ctx, addr, out, max) gives, innermost first (the last one is
** fn's), or with lines_of NULL or giving none, fn at its first line. */
uint64_t pprof_location(struct pprof *pp, uint64_t addr, uint32_t fn_key, const struct pprof_fn *fn,
			size_t (*lines_of)(void *ctx, uint64_t addr, struct prof_iframe *out, size_t max),
			void *ctx);
/* A label of a sample: a string (str set; left out when empty) or a
** number. */
struct pprof_label {
	const char *key, *str;
	int64_t num;
};
/* One sample: locs[0] the innermost, values[] one per sample type. */
void pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n, const int64_t *values,
		  const struct pprof_label *labels, size_t nlabels);
/* The message, gzipped, on f: 0 or -1 (a write error). */
int pprof_write(struct pprof *pp, FILE *f);

/* "exp_pprof.c": the profile of each kind of input. */
void pprof_from_stacks(struct pprof *pp, const struct prof_stacks *s, const struct prof_trace *tr);
void pprof_from_samples(struct pprof *pp, const struct prof_smodel *m, const struct prof_trace *tr);
/* Go's CPU profile (/debug/pprof/profile) of the timer samples of m (NULL:
** none were taken), sampled at hz over duration_ns from start_ns. */
void pprof_from_cpu_samples(struct pprof *pp, const struct prof_smodel *m, const struct prof_trace *tr,
			    unsigned hz, uint64_t start_ns, uint64_t duration_ns);
/* Go's heap profile of snapshot snap (0: the latest of the process pid,
** 0: the program's) of the database at path: per allocation site,
** alloc_objects, alloc_space, inuse_objects, inuse_space; the default
** type alloc_space with allocs (Go's /debug/pprof/allocs), else none (pprof
** takes inuse_space, the last).  Returns 0 or an exit code after a line. */
int pprof_from_heap(struct pprof *pp, const char *path, int64_t pid, int64_t snap, bool allocs,
		    const struct rd_opts *o);

/* The sites of a database with their event counters (exp_sites.c):
** alloc_objects, alloc_space, temp_objects, inuse_space (at the peak) and
** leaked_space (live at exit, when the process stored an exit snapshot)
** per site stack; the default type es->metric's.  0 or an exit code. */
int pprof_from_sites(struct pprof *pp, struct exp_sites *es);

#endif
