/*
** prof_int.h — internal interfaces of profile/, the exact profiler's
** analysis: `inspect profile` and `inspect analyse` (fprof's steps 2, 3).
**
**   prof_read.c     the trace file reader: header, chunks, checks
**   prof_sym.c      function addresses to names with the MODULE records
**   prof_model.c    the profile as the commands use it (times in ns, names)
**   prof_db.c       the profile database (<meminst-profile.h>)
**   prof_analyse.c  the fprof-style text and the JSON of `inspect analyse`
**   prof_dump.c     --dump: the records as text
**   prof_samples.c  samples of a trace: aggregation while reading, then
**                   functions, threads and the figures of the displays
**   prof_display.c  the sampling displays: flat, tree, callers, anomalies
**   prof_procs.c    the processes of a session side by side, the heaviest
**   prof_cmd.c      the two commands (prof_cmds.h, with report's)
**
** Below it, in engine/ (shared with libmeminst): the call-stack simulation
** of exact traces (prof_sim.h) and the calling-context trees of samples
** (prof_cct.h).
**
** Errors follow the reader toolkit's rules (reader/reader_int.h): a function that fails prints
** one line "inspect: PATH: reason" and returns an INSP_EXIT_* code.
*/
#ifndef PROF_INT_H
#define PROF_INT_H

#include "reader_int.h"
#include "prof_cmds.h"
#include "prof_sim.h"
#include "prof_cct.h"

#include "meminst-trace.h"

/* A chunk claiming more words than this is damage, not data (512 MiB). */
#define PROF_MAX_CHUNK_WORDS (1u << 26)

/* ------------------------------------------------------------ prof_read -- */

struct prof_mod {
	uint64_t start, end, offset;
	unsigned char build_id[64];
	size_t build_id_len;
	char *path;
};

/* Called for every complete record in file order (--dump). */
typedef void (*prof_each_fn)(void *ctx, const struct meminst_trace_header *h, uint32_t thread,
			     unsigned stream, const uint64_t *rec, size_t n);

struct prof_samples;

struct prof_live;

struct prof_trace {
	const char *path;
	struct prof_live *live;       /* ALLOC_BLOCK records go to it (prof_source_read_live) */
	struct prof_samples *samples; /* set by prof_trace_read_samples       */
	struct meminst_trace_header h;
	struct prof_sim sim;
	struct prof_mod *mods;
	size_t nmods, mods_cap;
	char *exe, *cmdline;
	bool exited;
	int64_t exit_status;
	bool ended;              /* END: the writer closed the file in order  */
	bool torn;               /* the file ends inside a chunk              */
	uint64_t cost_ps[MEMINST_TCOST_N]; /* TRACE_COST; 0 unknown */
	bool raw_times;          /* --no-compensate: the model keeps raw times */
	uint64_t chunks;
	uint64_t size;           /* bytes read                               */
};

/* "prof_live.c": the traced function that allocated the blocks still live
** in a snapshot (its map's allocation numbers, the trace's ALLOC_BLOCK
** records).  prof_live_load the snapshot's blocks (a status snapshot
** gives none), read the trace with prof_trace.live set, prof_live_finish,
** then ask per type. */
struct prof_model;
struct prof_live {
	struct live_block *b;
	size_t n;
	uint32_t *hash;
	size_t hcap;
	struct live_sum *sums;  /* by type, after prof_live_finish       */
	size_t nsums;
	uint64_t records;       /* ALLOC_BLOCK records read               */
};
int prof_live_load(struct prof_live *l, insp_db_t *db, int64_t snap);
void prof_live_note(struct prof_live *l, uint64_t seq, uint64_t fn);
void prof_live_finish(struct prof_live *l);
/* The function that allocated most of the type's live bytes (its name in
** the model m), and in *fns how many functions allocated them (0 and
** NULL: the trace named none). */
const char *prof_live_function(const struct prof_live *l, const struct prof_model *m, int64_t type,
			       size_t *fns);
void prof_live_free(struct prof_live *l);
/* A row's cells of the columns "allocated in" (text only: the function
** and "and N more"), "function" and "functions" (JSON and CSV) for type. */
void prof_live_put(insp_table_t *t, const struct prof_live *live, const struct prof_model *m, int64_t type,
		   struct insp_pool *pool);
/* The last exit snapshot of pid (0: none). */
int64_t prof_live_exit_snapshot(insp_db_t *db, int64_t pid);
/* After the blocks are loaded: when `own` is not NULL, read pid's trace of
** the session at path into it with the blocks attached (the caller's
** reading was of another process), then prof_live_finish.  0 or an exit
** code. */
struct exp_input;
int prof_live_join(struct prof_live *l, const char *path, const struct insp_opts *o, int64_t pid,
		   bool no_files, struct exp_input *own);

/* "prof_read.c" */
/* Read and simulate the whole trace.  Returns 0 or an exit code after one
** line on o->err (a file cut short is a warning, not an error). */
int prof_trace_read(const char *path, const struct insp_opts *o, struct prof_trace *tr,
		    prof_each_fn each, void *ctx);
/* The same from an open stream (the fuzzer reads from memory). */
int prof_trace_read_stream(FILE *f, const char *path, uint64_t size, const struct insp_opts *o,
			   struct prof_trace *tr, prof_each_fn each, void *ctx);
/* prof_trace_read_stream, handing the sample records (SAMPLE,
** ALLOC_SAMPLE, COUNTS, SAMPLE_RESET, COUNTS_COST, SAMPLE_COST) to the
** aggregator s when it is not NULL. */
int prof_trace_read_ex(FILE *f, const char *path, uint64_t size, const struct insp_opts *o,
		       struct prof_trace *tr, prof_each_fn each, void *ctx, struct prof_samples *s);
/* The trace at path as a stream: a session's stored trace of process pid
** (0: the session's program), or a trace file (pid 0).  NULL with *code
** set after one line on o->err. */
FILE *prof_source_open(const char *path, int64_t pid, const struct insp_opts *o, uint64_t *size, int *code);
/* Read the trace at path (a session or a file) as prof_trace_read_ex does;
** a second time when its samples need it (s set), calling restart(ctx)
** before that reading so that each() starts afresh. */
int prof_source_read(const char *path, int64_t pid, const struct insp_opts *o, struct prof_trace *tr,
		     prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s);
/* The same, handing each ALLOC_BLOCK record's allocation number with the
** function then on top of its thread's stack to live (prof_live_note). */
int prof_source_read_live(const char *path, int64_t pid, const struct insp_opts *o, struct prof_trace *tr,
			  prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s,
			  struct prof_live *live);
void prof_trace_free(struct prof_trace *tr);
/* Nanoseconds per tick: tick_hz, refined by CLOCK records over >= 10 ms. */
double prof_ns_per_tick(const struct prof_trace *tr);
/* The standard allocator for the engine (insp_xrealloc: never fails). */
extern const struct prof_allocator prof_libc_allocator;
/* prof_cct_child for a reader: out of memory ends inspect with one line */
uint32_t prof_cct_child_or_exit(struct prof_cct *t, uint32_t parent, uint64_t key);
/* Does the file start with the trace magic?  (-1: cannot read it) */
int prof_is_trace(const char *path);
/* A file cut short before its kind can be told (empty, in the trace magic,
** an SQLite database shorter than its header says): one line saying so on
** o->err and INSP_EXIT_DB; else 0. */
int prof_input_damaged(const struct insp_opts *o, const char *path);
/* A file that is not an input of the command: the line of
** prof_input_damaged, else "PATH: what"; INSP_EXIT_DB (inspect(1): a file
** that cannot be read or is not valid, whatever the command or format). */
int prof_input_fail(const struct insp_opts *o, const char *path, const char *what);

/* ------------------------------------------------------------- prof_sym -- */

/* Pseudo functions of the samples, at addresses no code has: the mark of a
** stack cut at sample_depth (MEMINST_TRACE_FRAME_TRUNCATED in the trace),
** and meminst's own work (prof_samples.c). */
#define PROF_FN_TRUNCATED (UINT64_MAX - 1)
#define PROF_FN_MEMINST (UINT64_MAX - 2)

struct prof_func {
	uint64_t addr;
	const char *name;        /* never NULL                               */
	const char *file;        /* NULL when unknown                        */
	int line;
	const char *module;      /* basename, NULL when unknown              */
	/* in libmeminst: 1 its own code, 2 a name it exports (the program's
	** malloc, nanosleep … that it interposes); 0 elsewhere */
	unsigned char meminst;
};

typedef struct prof_symtab prof_symtab_t;

/* "prof_sym.c" */
/* no_files: never open module files (names are module+offset). */
prof_symtab_t *prof_symtab_new(const struct prof_trace *tr, const struct insp_opts *o,
			       bool no_files, struct insp_pool *pool);
/* The function index of addr (0..2 are undefined, suspend, <alloc>). */
uint32_t prof_symtab_index(prof_symtab_t *st, uint64_t addr);
const struct prof_func *prof_symtab_funcs(const prof_symtab_t *st, size_t *n);
/* The source line of a code address (not a return address) and, when
** file is not NULL, its file (in the pool); 0 when unknown. */
int prof_symtab_line(prof_symtab_t *st, uint64_t addr, const char **file);
/* One function of the inline chain at a code address. */
struct prof_iframe {
	const char *func, *file; /* in the pool; NULL when DWARF has none    */
	int line;
};
/* The inline chain at a code address (not a return address), innermost
** first: out[0] the code at the address's own line, each next one the
** function it was inlined into at the line of that call, the last the
** function of the symbol.  At most max frames; 0 without debug
** information. */
size_t prof_symtab_inline(prof_symtab_t *st, uint64_t addr, struct prof_iframe *out, size_t max);
/* The entry address of the function holding addr (an address inside the
** code, not a return address): from the symbol table, else from the call
** frame information; addr itself when neither knows. */
uint64_t prof_symtab_entry(prof_symtab_t *st, uint64_t addr);
void prof_symtab_free(prof_symtab_t *st);

/* ----------------------------------------------------------- prof_model -- */

struct prof_row {
	uint32_t fn;             /* index into prof_model.funcs              */
	uint64_t cnt;
	int64_t acc, own;        /* ns                                       */
	struct prof_mem mem;     /* bytes and blocks allocated (<alloc>)     */
};

struct prof_pair {
	uint32_t caller, called;
	uint64_t cnt;
	int64_t acc, own;
	struct prof_mem mem;
};

/* The calls of a caller->called pair from one call site, every thread
** (trace_sites=on), with the position of the call in the caller's code. */
struct prof_csite {
	uint32_t caller, called;
	uint64_t site;           /* the return address                       */
	const char *file;        /* in the model's pool; NULL when unknown   */
	int line;                /* 0: unknown, or not in the caller's code  */
	uint64_t cnt;
	int64_t acc;             /* ns                                       */
	uint64_t acc_bytes;
};

struct prof_mthread {
	uint32_t thread, parent;
	int64_t tid;
	const char *name;
	uint64_t cnt;
	int64_t acc, own;        /* acc: first to last time stamp            */
	struct prof_row *rows;
	size_t nrows;
	struct prof_pair *pairs;
	size_t npairs;
};

/* The exact tracer's own cost (TRACE_COST), when the trace says it. */
struct prof_tcost {
	bool known;
	double call_ns, alloc_ns;   /* per call event (enter or exit), per ALLOC */
	double alloc_out_ns;        /* per ALLOC, the tracer's work outside its stamps */
	double iv_ns[PROF_EV_N];    /* per interval of each kind (prof_evs)      */
	uint64_t calls, allocs;     /* traced calls, <alloc> calls               */
	int64_t hooks_ns;           /* the tracer's events x their cost          */
	int64_t alloc_taken_ns;     /* taken off <alloc> (allocs x alloc_ns)     */
	/* compensation: the events' cost taken off each OWN and ACC */
	bool compensated;           /* taken off (not --no-compensate, not failed) */
	bool failed;                /* the calibration does not fit the run      */
	const char *why;            /* how it does not (static text)             */
	int64_t taken_ns;           /* taken off the functions' OWN              */
	int64_t short_ns;           /* estimates above a function's OWN: cut     */
	int64_t raw_own_ns;         /* the profile's OWN before                  */
};

struct prof_model {
	struct insp_pool pool;
	const char *source;      /* the trace it came from                   */
	const char *exe, *cmdline;
	int64_t pid;
	unsigned clock;          /* enum meminst_trace_clock                 */
	double ns_per_tick;
	uint64_t events, lost, untraced;
	struct prof_func *funcs;
	size_t nfuncs;
	struct prof_mthread *threads;
	size_t nthreads;
	struct prof_csite *sites; /* by caller, called (none: no call sites) */
	size_t nsites;
	uint64_t cnt;
	int64_t acc, own;
	struct prof_tcost cost;
};

/* "prof_model.c" */
void prof_model_from_trace(struct prof_model *m, struct prof_trace *tr, const struct insp_opts *o,
			   bool no_files);
void prof_model_free(struct prof_model *m);
const char *prof_clock_name(unsigned clock);
/* Merge every thread into one (--totals). */
void prof_model_merge(const struct prof_model *m, struct prof_mthread *out);
/* The OWN over every thread of the function at address fn (a pseudo
** function's), its calls in *cnt and its name in *name (when called). */
int64_t prof_model_fn_own(const struct prof_model *m, uint64_t fn, uint64_t *cnt, const char **name);
void prof_mthread_free(struct prof_mthread *t);
/* The tracer's calibrated cost of the trace checked against its run
** (the engine's rows): c->compensated when the times are to be
** compensated.  prof_comp_ns: v ns less the cost of the half events h
** (prof_evs), never below 0; *cut (may be NULL) gets the excess. */
void prof_calibration(const struct prof_trace *tr, struct prof_tcost *c);
int64_t prof_comp_ns(const struct prof_tcost *c, int64_t v, const uint64_t h[PROF_EV_N], int64_t *cut);
/* "prof_analyse.c": the tracer's cost (model.cost), as a paragraph and as
** a JSON member (",\"tracer_cost\":…"). */
void prof_cost_text(const struct prof_model *m, FILE *f);
void prof_cost_json(const struct prof_model *m, FILE *f);
double prof_cost_percent(const struct prof_model *m); /* hooks + <alloc> taken off, % of OWN */
/* "compensated", "raw (--no-compensate)", "raw: CALIBRATION FAILED" … */
const char *prof_cost_state(const struct prof_model *m);
void prof_kept_out_text(const struct prof_model *m, FILE *f); /* <preempted>, <trace-wait>, <snapshot> */

/* -------------------------------------------------------------- prof_db -- */

/* "prof_db.c" */
int prof_db_write(const struct prof_model *m, const char *path, bool force, const struct insp_opts *o);
int prof_db_read(const char *path, const struct insp_opts *o, struct prof_model *m);
/* Is path a profile database (1), another file (0), unreadable (-1)? */
int prof_db_is_profile(const char *path);

/* --------------------------------------------------------- prof_analyse -- */

enum prof_sort { PROF_SORT_ACC, PROF_SORT_OWN };

struct prof_aopts {
	enum prof_sort sort;
	bool callers, totals, details, json, csv;
	int cols;  /* line width, names cut to fit; 0: never cut */
};

/* "prof_analyse.c" */
void prof_analyse_text(const struct prof_model *m, const struct prof_aopts *ao, FILE *f);
/* Two CSV tables, functions then caller->called pairs, per thread. */
void prof_analyse_csv(const struct prof_model *m, const struct prof_aopts *ao, FILE *f);
void prof_analyse_json(const struct prof_model *m, const struct prof_aopts *ao, FILE *f);

/* ------------------------------------------------------------ prof_dump -- */

struct prof_dump {
	FILE *f;
	prof_symtab_t *syms;     /* set after the module records are read    */
	double ns_per_tick;
	struct prof_trace *tr;
};

/* "prof_dump.c": a prof_each_fn; ctx is a struct prof_dump. */
void prof_dump_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread,
		      unsigned stream, const uint64_t *rec, size_t n);

/* ---------------------------------------------------------- prof_samples -- */

enum prof_style { PROF_ST_FPROF, PROF_ST_FLAT, PROF_ST_TREE, PROF_ST_CALLERS, PROF_ST_ANOMALIES };
enum prof_tunit { PROF_T_SECONDS, PROF_T_SAMPLES, PROF_T_PERCENT };
enum prof_smetric { PROF_MT_TIME, PROF_MT_BYTES, PROF_MT_COUNT };

struct prof_sopts {
	enum prof_style style;
	int top;                 /* rows shown; 0: all                       */
	bool cumulative;         /* order by cumulative, not self            */
	const char **hide;
	size_t nhide;
	enum prof_tunit time;
	enum prof_smetric metric;
	uint32_t thread;         /* 0: every thread                          */
	double cutoff;           /* tree: nodes below this % are summarised  */
	bool json, csv;          /* csv: the flat style only                 */
};

/* The aggregator (opaque); prof_samples_new, then prof_samples_begin before
** each reading of the trace (prof_trace_read_ex). */
struct prof_samples *prof_samples_new(void);
void prof_samples_free(struct prof_samples *s);
/* A SAMPLE_RESET came after later samples of its threads had been added:
** the trace must be read again (with the same aggregator, which now knows
** every reset in advance). */
bool prof_samples_reread(const struct prof_samples *s);
void prof_samples_begin(struct prof_samples *s);
void prof_samples_header(struct prof_samples *s, const struct meminst_trace_header *h);
void prof_samples_record(struct prof_samples *s, uint32_t thread, const uint64_t *rec, size_t n);
uint64_t prof_samples_count(const struct prof_samples *s); /* timer + allocation */
/* The address tree: one root per thread, frame keys as read (a timer
** sample's pc, the other frames address - 1). */
const struct prof_cct *prof_samples_tree(const struct prof_samples *s);

struct prof_sthread {
	uint32_t thread;
	int64_t tid;
	const char *name;        /* NULL when unknown                        */
	double total[PROF_M_N];
};

/* Everything a sampling display shows. */
struct prof_smodel {
	struct insp_pool pool;
	const char *source, *exe;
	int64_t pid;
	unsigned clock, sample_clock, sample_hz;
	uint64_t alloc_mean;
	double ns_per_tick;
	prof_symtab_t *st;
	struct prof_samples *s;
	uint32_t *node_fid;      /* function of each address-tree node       */
	const struct prof_func *funcs;
	size_t nfuncs;
	bool *hidden, *alloc_fn; /* by function                              */
	struct prof_cct ft;      /* the function tree of the selected threads */
	struct prof_fsum *fs;    /* [nfuncs]                                  */
	double *calls;           /* [nfuncs] exact counts, NULL without COUNTS */
	double total[PROF_M_N];
	double alloc_ticks, alloc_samples; /* timer samples in the allocator */
	double sampler_ticks, sampler_runs, counts_ns; /* the profiler's cost */
	struct prof_sthread *threads;
	size_t nthreads;
	uint32_t thread;         /* the one selected, 0: all                 */
};

/* Name the functions and fold the samples (threads: so->thread). */
int prof_smodel_build(struct prof_smodel *m, struct prof_samples *s, struct prof_trace *tr,
		      const struct insp_opts *o, bool no_files, const struct prof_sopts *so);
void prof_smodel_free(struct prof_smodel *m);
/* The functions with timer or allocation samples, by self time (then by
** id); a new array of *n function ids, free() it. */
uint32_t *prof_smodel_by_self(const struct prof_smodel *m, size_t *n);
/* Per-function sums of one thread (0: all), for anomalies; free() it. */
struct prof_fsum *prof_smodel_thread_sums(const struct prof_smodel *m, uint32_t thread);

/* ---------------------------------------------------------- prof_display -- */

/* "prof_display.c": the style so->style of m (and of m2, the second run
** for anomalies, or NULL) on f. */
void prof_display(const struct prof_smodel *m, const struct prof_smodel *m2, const struct prof_sopts *so,
		  FILE *f);

/* ------------------------------------------------------------ prof_procs -- */

/* "prof_procs.c": the processes of a session, for report and analyse. */
struct prof_proc {
	int64_t pid, ppid;
	char *command;       /* its command line, else its executable        */
	uint64_t peak_bytes; /* the highest max-ever total of its snapshots   */
	int64_t snapshots;
	bool traced, trace_read; /* a stored trace; read without damage       */
	uint64_t samples, calls;
};
struct prof_procs {
	struct prof_proc *p;
	size_t n;
};
/* Read session_process of the session `path` and each stored trace. */
int prof_procs_read(const char *path, const struct insp_opts *o, struct prof_procs *ps);
void prof_procs_free(struct prof_procs *ps);
/* The heaviest process by peak memory, or by_time by samples (else
** calls); NULL when none has any. */
const struct prof_proc *prof_procs_heaviest(const struct prof_procs *ps, bool by_time);
const struct prof_proc *prof_procs_find(const struct prof_procs *ps, int64_t pid);
/* The table "processes", heaviest first (limit rows, 0: all); notes may follow. */
insp_table_t *prof_procs_table(insp_doc_t *d, const struct prof_procs *ps, bool by_time, size_t limit);

#endif /* PROF_INT_H */
