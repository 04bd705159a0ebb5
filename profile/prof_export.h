/*
** prof_export.h — exports of a profile to the viewers people already use,
** and the self-contained HTML report (`inspect export`, `inspect html`).
**
**   prof_stacks.c     whole call stacks: from an exact trace (a second
**                     simulation of each thread's stack, per record) or from
**                     the samples; the folded-stacks writer
**   prof_callgrind.c  the Callgrind writer (KCachegrind), and its costs
**                     from a profile (calls at their lines with sites)
**   prof_cg_samples.c its costs from samples, per line
**   prof_chrome.c     Chrome Trace Event JSON (Perfetto) from a trace
**   prof_inline.c     the inline frames of sampled addresses
**   prof_export.c     the command `inspect export`, and reading its input
**   prof_html.c       the command `inspect html`
**   prof_html_ui.c    the style sheet and the script of the HTML report
**   prof_pprof.c      pprof's profile.proto (prof_pprof.h, encoder prof_pb.c)
**
** A stack tree is a prof_cct (prof_cct.h) with one root (key 0) for every
** thread: node keys are code addresses (exact traces) or function ids
** (samples), and each node's self[] holds what was spent with exactly that
** stack: EXP_TIME in ns, EXP_BYTES allocated, EXP_ALLOCS allocations
** (exact traces).
*/
#ifndef PROF_EXPORT_H
#define PROF_EXPORT_H

#include "prof_int.h"

enum { EXP_TIME, EXP_BYTES, EXP_ALLOCS, EXP_N };

struct exp_stacks {
	struct prof_cct t;       /* self[EXP_TIME] in ticks while reading;
				 ** total[]: self and everything below      */
	struct insp_pool pool;
	struct prof_func *funcs; /* the function table (names)                */
	size_t nfuncs;
	uint32_t *fid;           /* [t.n] function of each node, or UINT32_MAX */
	double total[EXP_N];     /* over every node                           */
	/* the simulation (exact traces) */
	struct exp_sthread *thr;
	size_t nthr, last_thr;
	struct prof_tcost cost;  /* the compensation (prof_calibration)       */
	double taken_ns;         /* what it took off the nodes' own times      */
	uint64_t calls;
	/* the tracer's stamps in each <alloc> call (TRACE_COST), taken off at
	** the end as the profile does: ALLOC records per <alloc> node */
	uint64_t alloc_ps;
	uint64_t *alloc_cnt;
	size_t alloc_cap;
	/* the tracer's intervals in each node's own time (prof_evs), taken off
	** at the end (compensation) */
	uint64_t (*ev)[PROF_EV_N];
	size_t ev_cap;
};

/* "prof_stacks.c" */
void exp_stacks_init(struct exp_stacks *s);
void exp_stacks_free(struct exp_stacks *s);
/* A prof_each_fn: ctx is an exp_stacks. */
void exp_stacks_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread,
		       unsigned stream, const uint64_t *rec, size_t n);
/* After the reading: close what is open, ticks to ns, name the nodes. */
void exp_stacks_finish(struct exp_stacks *s, struct prof_trace *tr, const struct insp_opts *o,
		       bool no_files);
/* The function tree of samples (ns from ticks; bytes of allocation samples). */
void exp_stacks_from_samples(struct exp_stacks *s, const struct prof_smodel *m);
/* The name of node i (NULL: a node left out of paths: the root, and the
** unknown caller of calls made with an empty stack). */
const char *exp_stacks_label(const struct exp_stacks *s, uint32_t i);
/* The trace thread of node i (exact traces; 0: none, the root). */
uint32_t exp_stacks_thread(const struct exp_stacks *s, uint32_t i);
/* The stacks by function ids (exp_paths_build): a tree with one root (key
** 0), or one per thread (key: the trace thread), children keyed by
** function ids of s; node self[] the sums of the stacks that end there.
** Stacks deeper than EXP_MAX_DEPTH are cut: their outermost EXP_MAX_DEPTH
** frames, a frame `truncated` (an id past s's functions), the innermost
** function. */
#define EXP_MAX_DEPTH 4096
struct exp_paths {
	struct prof_cct t;
	uint32_t truncated;
};
/* by_name: functions named alike are one (folded stacks are text). */
void exp_paths_build(struct exp_paths *p, const struct exp_stacks *s, bool by_thread, bool by_name);
void exp_paths_free(struct exp_paths *p);
const char *exp_paths_label(const struct exp_paths *p, const struct exp_stacks *s, uint32_t i);
/* One line "a;b;c N" per stack with a non-zero value of metric. */
void exp_folded_write(const struct exp_stacks *s, int metric, FILE *f);

/* "prof_inline.c": the frames of the samples with their inline chains. */
struct exp_iframe {
	uint32_t fn;             /* an id of exp_inline.funcs                 */
	const char *file;        /* its position: NULL when unknown           */
	int line;
};
struct exp_inline {
	const struct prof_smodel *m;
	struct insp_pool pool;
	struct prof_func *funcs; /* the model's, then the inlined functions   */
	size_t nfuncs, cap;
	struct prof_cct by_addr, by_name, chains; /* look-ups                 */
	struct exp_iframe *frames; /* every chain, one after the other        */
	size_t nframes, frcap;
	uint32_t *chain;         /* (first frame, count, fold id) triples      */
	size_t nch, chcap;
	uint32_t *node_chain;    /* by address-tree node: its triple          */
	size_t nodes;
	uint32_t *fold_first;    /* fold ids from m->nfuncs on: (first, count) */
	size_t nchains, fold_cap;
	struct prof_cct ft;      /* exp_inline_fold: the function tree        */
	struct prof_fsum *fs;
};
void exp_inline_init(struct exp_inline *x, const struct prof_smodel *m);
void exp_inline_free(struct exp_inline *x);
/* The frames of address-tree node i, outermost first (0: a node that is
** not shown, inside <meminst>). */
size_t exp_inline_frames(struct exp_inline *x, uint32_t node, const struct exp_iframe **out);
/* Fold the samples of the model's thread into x->ft with one id per
** distinct chain, the displays' rules otherwise (recursion collapsed). */
void exp_inline_fold(struct exp_inline *x);
/* The frames of a fold id (a node key of x->ft), outermost first; one:
** room for a single frame. */
size_t exp_inline_fold_frames(const struct exp_inline *x, uint32_t id, const struct exp_iframe **out,
			      struct exp_iframe *one);

/* "prof_callgrind.c": the Callgrind writer.  Costs by position: own
** costs of functions and calls at the lines they are made from; ids are
** indexes into the function table given to exp_cg_write. */
enum { EXP_CG_TIME, EXP_CG_SAMPLES, EXP_CG_BYTES, EXP_CG_ALLOCS, EXP_CG_N };
struct exp_cg_pos {
	uint32_t file;           /* exp_cg_file's id (0: unknown)             */
	int line;
};
struct exp_cg {
	struct insp_pool pool;
	struct prof_cct own;     /* roots: functions; children: positions     */
	struct prof_cct calls;   /* roots: callers; positions; callees: self[]
				 ** the inclusive costs, self[EXP_CG_N] the calls */
	const char **files;      /* "???" first: unknown                       */
	size_t nfiles;
	uint32_t *fhash;
	size_t fcap;
	bool has[EXP_CG_N];      /* the events written                        */
};
struct exp_cg_head {
	const struct prof_func *funcs;
	size_t nfuncs;
	int64_t pid;             /* 0: none                                   */
	const char *cmd;         /* NULL: none                                */
	const char *events;      /* the "event: NAME : description" lines     */
	const char *comment;     /* NULL, or lines written as # comments      */
};
void exp_cg_init(struct exp_cg *c);
void exp_cg_free(struct exp_cg *c);
uint32_t exp_cg_file(struct exp_cg *c, const char *name);
void exp_cg_own(struct exp_cg *c, uint32_t fn, struct exp_cg_pos at, const double *v);
void exp_cg_call(struct exp_cg *c, uint32_t caller, struct exp_cg_pos at, uint32_t called, const double *v,
		 double calls);
void exp_cg_write(struct exp_cg *c, const struct exp_cg_head *h, FILE *f);
/* The exact profile: calls at their call lines when the trace has sites. */
void exp_callgrind_write(const struct prof_model *m, FILE *f);
/* "prof_cg_samples.c": the samples, with the source lines of the sampled
** addresses and of the call sites. */
void exp_callgrind_samples(const struct prof_smodel *m, FILE *f);

/* "prof_chrome.c" */
struct exp_chrome_opts {
	double min_us;           /* calls shorter than this are left out      */
	uint64_t max_bytes;      /* shorter ones too, to keep the file this size (0: no limit) */
	const char *session;     /* the session (memory counters), or NULL    */
	int64_t pid;
	const struct prof_smodel *samples; /* a track of samples, or NULL     */
};
struct exp_chrome_result {
	uint64_t dropped, written; /* events left out, written              */
	double cut_us;           /* the shortest event kept                   */
	bool capped;             /* the cut was raised for max_bytes          */
};
/* Read the trace again (open() reopens it) and write the JSON to f.
** Returns 0 or an exit code. */
int exp_chrome_write(struct prof_trace *tr, const struct insp_opts *o, const struct exp_chrome_opts *co,
		     FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx, FILE *f, struct exp_chrome_result *res);

/* "prof_export.c": the input of both commands. */
struct exp_input {
	const char *path;
	const struct insp_opts *o;
	int64_t pid;
	bool session, no_files;
	bool raw_times;           /* --no-compensate                          */
	struct prof_trace tr;
	bool have_tr;
	struct prof_samples *samples;
	struct prof_smodel sm;
	bool have_sm;
	struct exp_stacks stacks; /* exact traces (EXP_IN_STACKS)             */
	bool have_stacks;
	struct prof_model model;
	bool have_model;
	struct prof_live *live;   /* set: the trace's ALLOC_BLOCK records go to it */
};
enum { EXP_IN_MODEL = 1, EXP_IN_STACKS = 2, EXP_IN_SAMPLES = 4 };
/* Read path (a session, a trace or, for EXP_IN_MODEL alone, a profile
** database) and build what `want` asks for that the input has. */
int exp_input_read(struct exp_input *in, const struct insp_opts *o, unsigned want);
void exp_input_free(struct exp_input *in);
/* A stream of the input's trace again (for a second pass). */
FILE *exp_input_reopen(void *ctx, uint64_t *size);
/* Exact calls in the trace. */
uint64_t exp_trace_calls(const struct prof_trace *tr);

/* "prof_html_ui.c" */
extern const char exp_html_css[], exp_html_js[];

/* The arguments of `inspect html` (its parser is export's). */
int exp_html_args(int argc, char **argv, const struct insp_opts *o, const char **pos, const char **output,
		  int64_t *pid, bool *no_symbols, bool *force);

/* Commands. */
int insp_cmd_export(int argc, char **argv, const struct insp_opts *o);
int insp_cmd_html(int argc, char **argv, const struct insp_opts *o);

#endif
