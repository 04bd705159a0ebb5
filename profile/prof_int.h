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
**   prof_display.c  the sampling displays: flat, tree, callers
**   prof_anomalies.c  and anomalies, the one that judges the shares
**   prof_procs.c    the processes of a session side by side, the heaviest
**   prof_images.c   the programs a process ran (exec): the one shown, the others
**   prof_stacks.c   whole call stacks (exact traces or samples)
**   prof_inline.c   the inline frames of sampled addresses
**   prof_input.c    what the commands and the exports read, built as asked
**   prof_report.c   `inspect report`: memory and time of a session
**   prof_report_fns.c  its functions part, from the profile alone
**   prof_leaks.c    report's leak check: memcheck's summary, lost sites
**   prof_live.c     the live blocks of a trace (top --live-at-exit)
**   prof_cmd.c      the two commands (prof_cmds.h, with report's)
**
** Below it, in engine/ (shared with libmeminst): the call-stack simulation
** of exact traces (eng_sim.h) and the calling-context trees of samples
** (eng_cct.h).
**
** Errors follow the reader toolkit's rules (reader/rd_int.h): a function that fails prints
** one line "inspect: PATH: reason" and returns an RD_EXIT_* code.
*/
#ifndef PROF_INT_H
#define PROF_INT_H

#include "rd_int.h"
#include "prof_cmds.h"
#include "eng_sim.h"
#include "eng_cct.h"

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
	struct eng_sim sim;
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
int prof_live_load(struct prof_live *l, rd_db_t *db, int64_t snap);
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
void prof_live_put(rd_table_t *t, const struct prof_live *live, const struct prof_model *m, int64_t type,
		   struct rd_pool *pool);
/* The last exit snapshot of pid (0: none). */
int64_t prof_live_exit_snapshot(rd_db_t *db, int64_t pid);

/* "prof_leaks.c": the process's latest leak check, if any (its tags
** replace those in s). */
int prof_report_leaks(rd_doc_t *d, struct rd_session *s, const struct rd_args *a, int64_t pid, size_t limit);
/* After the blocks are loaded: when `own` is not NULL, read pid's trace of
** the session at path into it with the blocks attached (the caller's
** reading was of another process), then prof_live_finish.  0 or an exit
** code. */
struct prof_input;
int prof_live_join(struct prof_live *l, const char *path, const struct rd_opts *o, int64_t pid,
		   bool no_files, struct prof_input *own);
/* "prof_report_fns.c": report's functions part from what in holds (the
** exact profile, else the samples), or one line on o->err saying why
** there is none (sampling_off: meminst stopped sampling, the notes say). */
void prof_report_functions(rd_doc_t *d, const char *path, const struct rd_opts *o, size_t limit,
			   const struct prof_input *in, bool sampling_off);

/* "prof_read.c" */
/* Read and simulate the whole trace.  Returns 0 or an exit code after one
** line on o->err (a file cut short is a warning, not an error). */
int prof_trace_read(const char *path, const struct rd_opts *o, struct prof_trace *tr,
		    prof_each_fn each, void *ctx);
/* The same from an open stream (the fuzzer reads from memory). */
int prof_trace_read_stream(FILE *f, const char *path, uint64_t size, const struct rd_opts *o,
			   struct prof_trace *tr, prof_each_fn each, void *ctx);
/* prof_trace_read_stream, handing the sample records (SAMPLE,
** ALLOC_SAMPLE, COUNTS, SAMPLE_RESET, COUNTS_COST, SAMPLE_COST) to the
** aggregator s when it is not NULL. */
int prof_trace_read_ex(FILE *f, const char *path, uint64_t size, const struct rd_opts *o,
		       struct prof_trace *tr, prof_each_fn each, void *ctx, struct prof_samples *s);
/* The trace at path as a stream: a session's stored trace of process pid
** (0: the session's program), or a trace file (pid 0).  NULL with *code
** set after one line on o->err. */
FILE *prof_source_open(const char *path, int64_t pid, const struct rd_opts *o, uint64_t *size, int *code);
/* Read the trace at path (a session or a file) as prof_trace_read_ex does;
** a second time when its samples need it (s set), calling restart(ctx)
** before that reading so that each() starts afresh. */
int prof_source_read(const char *path, int64_t pid, const struct rd_opts *o, struct prof_trace *tr,
		     prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s);
/* The same, handing each ALLOC_BLOCK record's allocation number with the
** function then on top of its thread's stack to live (prof_live_note). */
int prof_source_read_live(const char *path, int64_t pid, const struct rd_opts *o, struct prof_trace *tr,
			  prof_each_fn each, void *ctx, void (*restart)(void *ctx), struct prof_samples *s,
			  struct prof_live *live);
void prof_trace_free(struct prof_trace *tr);
/* Nanoseconds per tick: tick_hz, refined by CLOCK records over >= 10 ms. */
double prof_ns_per_tick(const struct prof_trace *tr);
/* The standard allocator for the engine (rd_xrealloc: never fails). */
extern const struct eng_allocator prof_libc_allocator;
/* eng_cct_child for a reader: out of memory ends inspect with one line */
uint32_t prof_cct_child_or_exit(struct eng_cct *t, uint32_t parent, uint64_t key);
/* Does the file start with the trace magic?  (-1: cannot read it) */
int prof_is_trace(const char *path);
/* A file cut short before its kind can be told (empty, in the trace magic,
** an SQLite database shorter than its header says): one line saying so on
** o->err and RD_EXIT_DB; else 0. */
int prof_input_damaged(const struct rd_opts *o, const char *path);
/* A file that is not an input of the command: the line of
** prof_input_damaged, else "PATH: what"; RD_EXIT_DB (inspect(1): a file
** that cannot be read or is not valid, whatever the command or format). */
int prof_input_fail(const struct rd_opts *o, const char *path, const char *what);

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
prof_symtab_t *prof_symtab_new(const struct prof_trace *tr, const struct rd_opts *o,
			       bool no_files, struct rd_pool *pool);
/* The function index of addr (0..2 are undefined, suspend, <alloc>). */
uint32_t prof_symtab_index(prof_symtab_t *st, uint64_t addr);
const struct prof_func *prof_symtab_funcs(const prof_symtab_t *st, size_t *n);
/* The source line of a code address (not a return address) and, when
** file is not NULL, its file (in the pool); 0 when unknown. */
int prof_symtab_line(prof_symtab_t *st, uint64_t addr, const char **file);
/* "prof_model.c": the line a call from site (a return address) was made
** from in the function at caller; 0 when the site is not in its code. */
int prof_site_line(prof_symtab_t *st, uint64_t caller, uint64_t site, const char **file);
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
	struct eng_mem mem;     /* bytes and blocks allocated (<alloc>)     */
	uint64_t mi_cnt;         /* <alloc>: calls whose meminst share went to <meminst> */
};

struct prof_pair {
	uint32_t caller, called;
	uint64_t cnt;
	int64_t acc, own;
	struct eng_mem mem;
	uint64_t mi_cnt;         /* as prof_row's                            */
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
	uint64_t mi_cnt;         /* as prof_row's                            */
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
	double iv_ns[ENG_EV_N];    /* per interval of each kind (eng_evs)      */
	uint64_t calls, allocs;     /* traced calls, <alloc> calls               */
	int64_t hooks_ns;           /* the tracer's events x their cost          */
	int64_t alloc_taken_ns;     /* taken off <alloc> (allocs x alloc_ns)     */
	/* compensation: the events' cost taken off each OWN and ACC */
	bool compensated;           /* taken off (not --no-compensate, not failed) */
	bool failed;                /* the calibration does not fit the run      */
	double scale;               /* the hooks' costs fitted to the run: 1 as measured */
	const char *why;            /* how it does not (static text)             */
	int64_t taken_ns;           /* taken off the functions' OWN              */
	int64_t short_ns;           /* estimates above a function's OWN: cut     */
	int64_t raw_own_ns;         /* the profile's OWN before                  */
	/* meminst's work around the allocator, measured in each <alloc> call
	** (ALLOC_AT): moved from <alloc> to <meminst> unless --no-compensate */
	bool mi_apart;
	double inner_ns;            /* the measure's own share of each          */
	uint64_t mi_calls;          /* <alloc> calls it was measured in          */
	int64_t mi_ns;              /* its time in them                          */
};

struct prof_model {
	struct rd_pool pool;
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
void prof_model_from_trace(struct prof_model *m, struct prof_trace *tr, const struct rd_opts *o,
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
** (eng_evs), never below 0; *cut (may be NULL) gets the excess. */
void prof_calibration(const struct prof_trace *tr, struct prof_tcost *c);
int64_t prof_comp_ns(const struct prof_tcost *c, int64_t v, const uint64_t h[ENG_EV_N], int64_t *cut);
/* "prof_analyse.c": the tracer's cost (model.cost), as a paragraph and as
** a JSON member (",\"tracer_cost\":…"). */
void prof_cost_text(const struct prof_model *m, FILE *f);
void prof_cost_json(const struct prof_model *m, FILE *f);
double prof_cost_percent(const struct prof_model *m); /* hooks + <alloc> taken off, % of OWN */
/* "compensated", "raw (--no-compensate)", "raw: CALIBRATION FAILED" … */
const char *prof_cost_state(const struct prof_model *m);
void prof_kept_out_text(const struct prof_model *m, FILE *f); /* <preempted>, <trace-wait>, <snapshot> */
void prof_mi_text(const struct prof_model *m, FILE *f);      /* meminst's work around the allocator */
/* Whether a function address is one of those pauses (not the program's). */
bool prof_kept_out(uint64_t addr);

/* -------------------------------------------------------------- prof_db -- */

/* "prof_db.c" */
int prof_db_write(const struct prof_model *m, const char *path, bool force, const struct rd_opts *o);
int prof_db_read(const char *path, const struct rd_opts *o, struct prof_model *m);
/* Is path a profile database (1), another file (0), unreadable (-1)? */
int prof_db_is_profile(const char *path);

/* --------------------------------------------------------- prof_analyse -- */

enum prof_sort { PROF_SORT_ACC, PROF_SORT_OWN };
struct prof_images;

struct prof_aopts {
	enum prof_sort sort;
	bool callers, totals, details, json, csv;
	int cols;  /* line width, names cut to fit; 0: never cut */
	const char *focus; /* only this function's paragraph (--focus)      */
	const struct prof_images *images; /* the process's programs; NULL: one */
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
	int cols;                /* text width (names cut to fit); 0: none   */
	const char *focus;       /* only this function (--focus; callers)    */
	const struct prof_images *images; /* the process's programs; NULL: one */
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
const struct eng_cct *prof_samples_tree(const struct prof_samples *s);

struct prof_sthread {
	uint32_t thread;
	int64_t tid;
	const char *name;        /* NULL when unknown                        */
	double total[ENG_M_N];
};

/* Everything a sampling display shows. */
struct prof_smodel {
	struct rd_pool pool;
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
	struct eng_cct ft;      /* the function tree of the selected threads */
	struct eng_fsum *fs;    /* [nfuncs]                                  */
	double *calls;           /* [nfuncs] exact counts, NULL without COUNTS */
	double total[ENG_M_N];
	double alloc_ticks, alloc_samples; /* timer samples in the allocator */
	double sampler_ticks, sampler_runs, counts_ns; /* the profiler's cost */
	struct prof_sthread *threads;
	size_t nthreads;
	uint32_t thread;         /* the one selected, 0: all                 */
};

/* Name the functions and fold the samples (threads: so->thread). */
int prof_smodel_build(struct prof_smodel *m, struct prof_samples *s, struct prof_trace *tr,
		      const struct rd_opts *o, bool no_files, const struct prof_sopts *so);
void prof_smodel_free(struct prof_smodel *m);
/* The functions with timer or allocation samples, by self time (then by
** id); a new array of *n function ids, free() it. */
uint32_t *prof_smodel_by_self(const struct prof_smodel *m, size_t *n);
/* Per-function sums of one thread (0: all), for anomalies; free() it. */
struct eng_fsum *prof_smodel_thread_sums(const struct prof_smodel *m, uint32_t thread);

/* ---------------------------------------------------------- prof_display -- */

/* "prof_display.c": the style so->style of m (and of m2, the second run
** for anomalies, or NULL) on f. */
void prof_display(const struct prof_smodel *m, const struct prof_smodel *m2, const struct prof_sopts *so,
		  FILE *f);

/* What a display writes from: the model, the options, the stream, and
** the metric's sums (set by prof_display). */
struct prof_disp {
	const struct prof_smodel *m;
	const struct prof_sopts *so;
	FILE *f;
	int vm, cm;              /* the metric's value and sample-count sums  */
};
/* "prof_display.c", the vocabulary the displays share: a function's name
** and place (cut to the width there is), as JSON fields; a JSON string or
** null; the header of the text and of the JSON; the functions by self, a
** new array of *n ids, free() it. */
void prof_disp_name(const struct prof_disp *d, uint32_t fid, FILE *f);
void prof_disp_json_func(const struct prof_disp *d, uint32_t fid, FILE *f);
void prof_disp_json_opt_str(FILE *f, const char *s);
void prof_disp_header_text(const struct prof_disp *d);
void prof_disp_header_json(const struct prof_disp *d, const char *style);
uint32_t *prof_disp_order(const struct prof_disp *d, size_t *n);

/* "prof_anomalies.c": the anomalies style (m2 the second run, or NULL). */
void prof_disp_anomalies(const struct prof_disp *d, const struct prof_smodel *m2, bool json);

/* ----------------------------------------------------------- prof_images -- */

/* "prof_images.c": the images of the process a session's trace was read
** of (each program it ran), for the line every answer gives about them. */
struct prof_image {
	int64_t image;
	char *program;          /* the executable its trace names; NULL: none */
	uint64_t samples, calls;
	bool read, cut;         /* read without damage; no end record (cut)   */
};
struct prof_images {
	int64_t pid, shown;     /* shown: the image the answer is of          */
	bool chosen;            /* by --image, not the default                */
	struct prof_image *im;  /* in image order                             */
	size_t n;               /* 0: the process ran one program             */
};
/* Right after tr was read from the session at path (samples: its count):
** when its process ran several programs, read the others quietly. */
int prof_images_read(struct prof_images *is, const char *path, const struct rd_opts *o,
		     const struct prof_trace *tr, uint64_t samples);
void prof_images_free(struct prof_images *is);
/* The one line ("" when n is 0): the image shown, the others with what
** they did and whether they were cut, and --image K. */
void prof_images_line(const struct prof_images *is, char *buf, size_t len);
/* The table "images", one row per image, the line as its title (none
** when is->n is 0); prof_images_rows adds another process's. */
rd_table_t *prof_images_table(rd_doc_t *d, const struct prof_images *is);
void prof_images_rows(rd_table_t *t, const struct prof_images *is);
/* `,"images":[...]` for a command's own JSON, the line and a newline for
** its text (nothing when is is NULL or n is 0). */
void prof_images_json(const struct prof_images *is, FILE *f);
void prof_images_text(const struct prof_images *is, FILE *f);
/* The line on o->err, for outputs with no place for text. */
void prof_images_say(const struct prof_images *is, const char *path, const struct rd_opts *o);
/* The trace has no END record although its writer writes one (cut). */
bool prof_trace_cut(const struct prof_trace *tr);

/* ------------------------------------------------------------ prof_procs -- */

/* "prof_procs.c": the processes of a session, for report and analyse. */
struct prof_proc {
	int64_t pid, ppid;
	char *command;       /* its command line, else its executable        */
	uint64_t peak_bytes; /* the highest max-ever total of its snapshots   */
	int64_t snapshots;
	bool traced, trace_read; /* a stored trace; read without damage       */
	uint64_t samples, calls;
	struct prof_images images; /* the programs it ran, when more than one  */
};
struct prof_procs {
	struct prof_proc *p;
	size_t n;
};
/* Read session_process of the session `path` and each stored trace. */
int prof_procs_read(const char *path, const struct rd_opts *o, struct prof_procs *ps);
void prof_procs_free(struct prof_procs *ps);
/* The heaviest process by peak memory, or by_time by samples (else
** calls); NULL when none has any. */
const struct prof_proc *prof_procs_heaviest(const struct prof_procs *ps, bool by_time);
const struct prof_proc *prof_procs_find(const struct prof_procs *ps, int64_t pid);
/* The table "processes", heaviest first (limit rows, 0: all); notes may follow. */
rd_table_t *prof_procs_table(rd_doc_t *d, const struct prof_procs *ps, bool by_time, size_t limit);
/* The table "images" (nothing when no process exec'd): is, the programs
** of the process the answer is of, then (ps not NULL) every other one's
** that ran more than one, at its default image. */
void prof_procs_images(rd_doc_t *d, const struct prof_images *is, const struct prof_procs *ps);

/* ------------------------------------------------------------ stacks -- */
/*
** Whole call stacks (prof_stacks.c), for the exports' folded stacks, flame
** graphs and pprof.  A stack tree is an eng_cct (eng_cct.h) with one root
** (key 0) for every thread: node keys are code addresses (exact traces) or
** function ids (samples), and each node's self[] holds what was spent with
** exactly that stack: PROF_STK_TIME in ns, PROF_STK_BYTES allocated,
** PROF_STK_ALLOCS allocations (exact traces).  An allocator call whose
** site the trace has (ALLOC_AT) hangs below its caller's node under a node
** keyed PROF_STK_AT | site: the caller at the line that called the
** allocator, holding the bytes, its <alloc> child the allocator's time; no
** function of its own (prof_stacks_at gives its line; a site outside the
** caller's code has none: the node is its caller's, as without a site).
*/
enum { PROF_STK_TIME, PROF_STK_BYTES, PROF_STK_ALLOCS, PROF_STK_N };
#define PROF_STK_AT (1ull << 62)
struct prof_stk_at {
	uint64_t site;           /* a return address in the caller           */
	const char *file;        /* the line the call was made from (site - 1) */
	int line;
	const char *name;        /* "FUNCTION at FILE:LINE", for flame graphs */
};

struct prof_stacks {
	struct eng_cct t;       /* self[PROF_STK_TIME] in ticks while reading;
				 ** total[]: self and everything below      */
	struct rd_pool pool;
	struct prof_func *funcs; /* the function table (names)                */
	size_t nfuncs;
	uint32_t *fid;           /* [t.n] function of each node, or UINT32_MAX */
	double total[PROF_STK_N];     /* over every node                           */
	/* the simulation (exact traces) */
	struct prof_stk_thread *thr;
	size_t nthr, last_thr;
	struct prof_tcost cost;  /* the compensation (prof_calibration)       */
	double taken_ns;         /* what it took off the nodes' own times      */
	uint64_t calls;
	/* the tracer's stamps in each <alloc> call (TRACE_COST), taken off at
	** the end as the profile does: ALLOC records per <alloc> node */
	uint64_t alloc_ps;
	uint64_t *alloc_cnt;
	size_t alloc_cap;
	/* the tracer's intervals in each node's own time (eng_evs), taken off
	** at the end (compensation) */
	uint64_t (*ev)[ENG_EV_N];
	size_t ev_cap;
	/* the PROF_STK_AT nodes: at_of[node] an index of at, or UINT32_MAX */
	uint32_t *at_of;
	struct prof_stk_at *at;
	size_t nat;
};

/* "prof_stacks.c" */
void prof_stacks_init(struct prof_stacks *s);
void prof_stacks_free(struct prof_stacks *s);
/* A prof_each_fn: ctx is an prof_stacks. */
void prof_stacks_record(void *ctx, const struct meminst_trace_header *h, uint32_t thread,
		       unsigned stream, const uint64_t *rec, size_t n);
/* After the reading: close what is open, ticks to ns, name the nodes. */
void prof_stacks_finish(struct prof_stacks *s, struct prof_trace *tr, const struct rd_opts *o,
		       bool no_files);
/* The function tree of samples (ns from ticks; bytes of allocation samples). */
void prof_stacks_from_samples(struct prof_stacks *s, const struct prof_smodel *m);
/* The name of node i (NULL: a node left out of paths: the root, and the
** unknown caller of calls made with an empty stack). */
const char *prof_stacks_label(const struct prof_stacks *s, uint32_t i);
/* The trace thread of node i (exact traces; 0: none, the root). */
uint32_t prof_stacks_thread(const struct prof_stacks *s, uint32_t i);
/* Node i as a caller at an allocator call's line (PROF_STK_AT), or NULL. */
const struct prof_stk_at *prof_stacks_at(const struct prof_stacks *s, uint32_t i);
/* The stacks by function ids (prof_paths_build): a tree with one root (key
** 0), or one per thread (key: the trace thread), children keyed by
** function ids of s; node self[] the sums of the stacks that end there.
** Stacks deeper than PROF_STK_MAX_DEPTH are cut: their outermost PROF_STK_MAX_DEPTH
** frames, a frame `truncated` (an id past s's functions), the innermost
** function. */
#define PROF_STK_MAX_DEPTH 4096
struct prof_paths {
	struct eng_cct t;
	uint32_t truncated;
};
/* by_name: functions named alike are one (folded stacks are text);
** at_lines: a PROF_STK_AT node of s is a node keyed PROF_STK_AT | its
** index in s (else its figures are its caller's). */
void prof_paths_build(struct prof_paths *p, const struct prof_stacks *s, bool by_thread, bool by_name,
		      bool at_lines);
void prof_paths_free(struct prof_paths *p);
const char *prof_paths_label(const struct prof_paths *p, const struct prof_stacks *s, uint32_t i);

/* "prof_inline.c": the frames of the samples with their inline chains. */
struct prof_inl_frame {
	uint32_t fn;             /* an id of prof_inline.funcs                 */
	const char *file;        /* its position: NULL when unknown           */
	int line;
};
struct prof_inline {
	const struct prof_smodel *m;
	struct rd_pool pool;
	struct prof_func *funcs; /* the model's, then the inlined functions   */
	size_t nfuncs, cap;
	struct eng_cct by_addr, by_name, chains; /* look-ups                 */
	struct prof_inl_frame *frames; /* every chain, one after the other        */
	size_t nframes, frcap;
	uint32_t *chain;         /* (first frame, count, fold id) triples      */
	size_t nch, chcap;
	uint32_t *node_chain;    /* by address-tree node: its triple          */
	size_t nodes;
	uint32_t *fold_first;    /* fold ids from m->nfuncs on: (first, count) */
	size_t nchains, fold_cap;
	struct eng_cct ft;      /* prof_inline_fold: the function tree        */
	struct eng_fsum *fs;
};
void prof_inline_init(struct prof_inline *x, const struct prof_smodel *m);
void prof_inline_free(struct prof_inline *x);
/* The frames of address-tree node i, outermost first (0: a node that is
** not shown, inside <meminst>). */
size_t prof_inline_frames(struct prof_inline *x, uint32_t node, const struct prof_inl_frame **out);
/* Fold the samples of the model's thread into x->ft with one id per
** distinct chain, the displays' rules otherwise (recursion collapsed). */
void prof_inline_fold(struct prof_inline *x);
/* The frames of a fold id (a node key of x->ft), outermost first; one:
** room for a single frame. */
size_t prof_inline_fold_frames(const struct prof_inline *x, uint32_t id, const struct prof_inl_frame **out,
			      struct prof_inl_frame *one);

/* ------------------------------------------------------------- input -- */
/* "prof_input.c": what the time commands and the exports read (a session,
** a trace or a profile database), built as each asks. */
struct prof_input {
	const char *path;
	const struct rd_opts *o;
	int64_t pid;
	bool session, no_files;
	bool raw_times;           /* --no-compensate                          */
	struct prof_trace tr;
	bool have_tr;
	struct prof_samples *samples;
	struct prof_smodel sm;
	bool have_sm;
	struct prof_stacks stacks; /* exact traces (PROF_IN_STACKS)             */
	bool have_stacks;
	struct prof_model model;
	bool have_model;
	struct prof_live *live;   /* set: the trace's ALLOC_BLOCK records go to it */
	struct prof_images images; /* PROF_IN_IMAGES: the programs its process ran */
};
enum { PROF_IN_MODEL = 1, PROF_IN_STACKS = 2, PROF_IN_SAMPLES = 4, PROF_IN_IMAGES = 8 };
/* Read path (a session, a trace or, for PROF_IN_MODEL alone, a profile
** database) and build what `want` asks for that the input has. */
int prof_input_read(struct prof_input *in, const struct rd_opts *o, unsigned want);
void prof_input_free(struct prof_input *in);
/* A stream of the input's trace again (for a second pass). */
FILE *prof_input_reopen(void *ctx, uint64_t *size);
/* Exact calls in the trace. */
uint64_t prof_trace_calls(const struct prof_trace *tr);

#endif /* PROF_INT_H */
