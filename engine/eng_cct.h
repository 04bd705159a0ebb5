/*
** eng_cct.h — calling-context trees of samples, the engine of the
** sampling displays (`inspect analyse --style flat|tree|callers|anomalies`)
** and of the sampling accessors of <meminst.h> (trace/trace_fold.c).
**
** Samples are aggregated as they are read into an address tree: one node
** per distinct stack prefix, keyed by (parent node, code address), with the
** sums of the samples that end there.  Memory follows the number of
** distinct stacks, never the number of samples.  After reading, addresses
** are mapped to functions and the address tree is folded into a function
** tree, where
**   - hidden functions are left out of every stack: their time goes to
**     their caller, their callees hang under that caller (SWI-Prolog's
**     noprofile);
**   - recursion is collapsed as SWI-Prolog does: a function that calls
**     itself stays on its node, and a function called by the same function
**     as somewhere higher up the path goes back to that higher node; both
**     count as a recursive entry of that node;
**   - each node gets its self sums (samples that end there) and its total
**     sums (samples that pass through it, counted once per sample);
**   - each function gets its self and cumulative sums (once per sample).
**
** Like eng_sim.c: no stdio, no libc allocation (memory comes from a
** eng_allocator), so that libmeminst builds the same file.
*/
#ifndef ENG_CCT_H
#define ENG_CCT_H

#include "eng_sim.h"

#define ENG_CCT_NONE UINT32_MAX
#define ENG_CCT_MAX_DEPTH 1040  /* frames kept per sample (the innermost): sample_depth= and its mark */

/* What a sample adds (all sums are doubles: allocation counts are
** fractional estimates). */
enum eng_metric {
	ENG_M_TICKS,    /* timer samples: weight in ticks of the file's clock */
	ENG_M_SAMPLES,  /* timer samples: how many                           */
	ENG_M_BYTES,    /* allocation samples: bytes represented (estimate)  */
	ENG_M_ALLOCS,   /* allocation samples: allocations represented       */
	ENG_M_ASAMPLES, /* allocation samples: how many                      */
	ENG_M_N
};

struct eng_cct_node {
	uint64_t key;            /* address tree: code address; function tree:
				 ** function id; roots: the thread number     */
	uint32_t parent;         /* ENG_CCT_NONE for a root                  */
	uint32_t thread;         /* the root's thread number                  */
	uint32_t child, next;    /* first child, next sibling                 */
	uint32_t stamp;          /* the last sample counted in `total`        */
	double self[ENG_M_N];
	double total[ENG_M_N];  /* function trees                            */
	double recur[ENG_M_N];  /* function trees: re-entries by recursion   */
};

struct eng_cct {
	struct eng_allocator a;
	struct eng_cct_node *nodes;
	size_t n, cap;
	uint32_t *hash;          /* index + 1, 0 = empty                       */
	size_t hcap;
	uint32_t stamp;
};

/* Per-function sums of a fold: self, and cumulative (once per sample). */
struct eng_fsum {
	double self[ENG_M_N];
	double cum[ENG_M_N];
	uint32_t stamp;
};

struct eng_fold {
	/* the function id of an address (node: its address-tree node; frame 0 of a timer sample is the pc,
	** the others were made address - 1 when added): ids are small, dense
	** numbers below nfids */
	uint32_t (*fid)(void *ctx, uint32_t node, uint64_t addr);
	/* hidden functions (may be NULL) */
	bool (*hidden)(void *ctx, uint32_t fid);
	void *ctx;
	size_t nfids;            /* an upper bound of the ids fid() returns   */
	uint32_t thread;         /* only this thread (0: every thread)        */
	bool merge;              /* one root for every thread (key 0)         */
};

void eng_cct_init(struct eng_cct *t, const struct eng_allocator *a);
void eng_cct_free(struct eng_cct *t);
/* The child of `parent` with `key`, made if missing (parent NONE: the root
** of thread `key`). */
enum eng_err eng_cct_child(struct eng_cct *t, uint32_t parent, uint64_t key, uint32_t *out);
/* The existing child, or ENG_CCT_NONE. */
uint32_t eng_cct_find(const struct eng_cct *t, uint32_t parent, uint64_t key);
/* Add one sample of `thread` whose frames are addr[0] (innermost) ..
** addr[n-1] (outermost), with the sums m; the outermost frames beyond
** ENG_CCT_MAX_DEPTH are dropped. */
enum eng_err eng_cct_add(struct eng_cct *t, uint32_t thread, const uint64_t *addr, size_t n,
			   const double m[ENG_M_N]);
/* Forget the sums of one thread's samples (0: every thread). */
void eng_cct_clear(struct eng_cct *t, uint32_t thread);
/* Fold the address tree `at` into the function tree `ft` (initialised by
** the caller, empty) and the per-function sums fs[nfids] (zeroed by the
** caller). */
enum eng_err eng_cct_fold(const struct eng_cct *at, const struct eng_fold *f, struct eng_cct *ft,
			    struct eng_fsum *fs);
/* The path of node i from its root's first child down to i (at most max
** entries, the outermost kept); returns the length. */
size_t eng_cct_path(const struct eng_cct *t, uint32_t i, uint32_t *path, size_t max);

#endif
