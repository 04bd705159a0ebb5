/*
** exp_int.h — export/, the writers for the viewers people already use and
** the self-contained HTML report (`inspect export`, `inspect html`).  They
** write what profile/ reads and builds (prof_input_read: the model, the
** stacks, the samples): nothing here reads a file format of its own.
**
**   exp_cmd.c         the command `inspect export`
**   exp_folded.c      folded stacks (flamegraph.pl, inferno, speedscope)
**   exp_callgrind.c   the Callgrind writer (KCachegrind), and its costs
**                     from a profile (calls at their lines with sites)
**   exp_cg_samples.c  its costs from samples, per line
**   exp_chrome.c      Chrome Trace Event JSON (Perfetto) from a trace
**   exp_html.c        the command `inspect html`
**   exp_html_ui.c     the style sheet and the script of the HTML report
**   exp_html_flame.c  the HTML report's flame graphs of time and bytes
**   exp_html_leaks.c  the HTML report's leak check (memcheck's classes)
**   exp_html_rss.c    the HTML report's resident set explained
**   exp_html_sites.c  the HTML report's parts by site: memory over time
**                     stacked by site, heaptrack's metrics' flame graph
**   exp_pprof.c       pprof's profile.proto (exp_pprof.h, encoder exp_pb.c)
**   exp_sites.c       heaptrack's metrics per site stack, from the event
**                     counters and snapshots (folded; pprof's read them)
*/
#ifndef EXP_INT_H
#define EXP_INT_H

#include "prof_int.h"
#include "exp_cmds.h"

/* "exp_folded.c": one line "a;b;c N" per stack with a non-zero value of metric. */
void exp_folded_write(const struct prof_stacks *s, int metric, FILE *f);

/* "exp_sites.c": the sites of a database with their figures (metric: an
** RD_EV_*, -1 for every one; leaked needs an exit snapshot). */
struct exp_sites {
	struct rd_session s;     /* the counts snapshot selected, its tags    */
	struct rd_events_snaps p;
	struct rd_events_summary sum;
	struct rd_site_events *v;
	size_t n;
	int metric;
};
/* One frame of a site's stack: rd_type_stack's, with the address of the
** group of inlined frames it belongs to (0: unknown). */
struct exp_site_frame {
	struct rd_stack_frame fr;
	uint64_t addr;
};
/* 0, or an exit code after one line (exp_sites_free in every case); a
** metric with no figure at all (nothing leaked) is RD_EXIT_NOTFOUND. */
int exp_sites_read(struct exp_sites *es, const char *path, int64_t pid, int64_t want, int metric,
		   const struct rd_opts *o);
void exp_sites_free(struct exp_sites *es);
/* The frames of a type's stack, innermost first (*out malloc'd; a
** registered type: one frame of its name). */
size_t exp_sites_frames(struct exp_sites *es, int64_t type, struct exp_site_frame **out);
/* The length of a frame's function name: without the "+0x1c" of a frame
** named by its symbol alone (a flame graph or pprof merges a function's
** frames), whole for code without symbols named by its module and entry
** ("libz.so.1+0x3a40", rd_syms_fde_entry). */
size_t exp_frame_func_len(const struct rd_stack_frame *fr);
/* The distinct stacks of function names with their figures of every
** metric, sorted by text: the text is a folded line's stack (outermost
** first, ';' between, a name's own ';' made '_'); sites whose stacks name
** the same functions are added up.  Sites with no figure of metric (-1:
** of any) are left out.  *out malloc'd: free with exp_sites_stacks_free. */
struct exp_sites_stack {
	char *text;
	uint64_t v[RD_EV_N];
};
size_t exp_sites_stacks(struct exp_sites *es, int metric, struct exp_sites_stack **out);
void exp_sites_stacks_free(struct exp_sites_stack *v, size_t n);
/* One line per distinct stack of function names with a figure of
** es->metric, outermost first (exp_sites_stacks). */
void exp_sites_folded(struct exp_sites *es, FILE *f);

/* "exp_callgrind.c": the Callgrind writer.  Costs by position: own
** costs of functions and calls at the lines they are made from; ids are
** indexes into the function table given to exp_cg_write. */
enum { EXP_CG_TIME, EXP_CG_SAMPLES, EXP_CG_BYTES, EXP_CG_ALLOCS, EXP_CG_N };
struct exp_cg_pos {
	uint32_t file;           /* exp_cg_file's id (0: unknown)             */
	int line;
};
struct exp_cg {
	struct rd_pool pool;
	struct eng_cct own;     /* roots: functions; children: positions     */
	struct eng_cct calls;   /* roots: callers; positions; callees: self[]
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
/* The exact profile: calls at their call lines when the trace has sites;
** note (NULL: none) goes among the header's comments (prof_images_line). */
void exp_callgrind_write(const struct prof_model *m, const char *note, FILE *f);
/* "exp_cg_samples.c": the samples, with the source lines of the sampled
** addresses and of the call sites. */
void exp_callgrind_samples(const struct prof_smodel *m, const char *note, FILE *f);

/* "exp_chrome.c" */
struct exp_chrome_opts {
	double min_us;           /* calls shorter than this are left out      */
	uint64_t max_bytes;      /* shorter ones too, to keep the file this size (0: no limit) */
	const char *session;     /* the session (memory counters), or NULL    */
	int64_t pid;
	const struct prof_smodel *samples; /* a track of samples, or NULL     */
	const struct prof_images *images; /* otherData's "images", or NULL     */
};
struct exp_chrome_result {
	uint64_t dropped, written; /* events left out, written              */
	double cut_us;           /* the shortest event kept                   */
	bool capped;             /* the cut was raised for max_bytes          */
};
/* Read the trace again (open() reopens it) and write the JSON to f.
** Returns 0 or an exit code. */
int exp_chrome_write(struct prof_trace *tr, const struct rd_opts *o, const struct exp_chrome_opts *co,
		     FILE *(*open)(void *ctx, uint64_t *size), void *open_ctx, FILE *f, struct exp_chrome_result *res);

/* "exp_html.c": text escaped for HTML; a size as "13.7 MiB"; a JSON
** string safe inside <script> ('<', '>' and '&' as \u escapes). */
void exp_html_text(FILE *f, const char *s);
void exp_html_size(FILE *f, uint64_t v);
void exp_html_json(FILE *f, const char *s);

/* "exp_html_flame.c": the section of the flame graph of metric
** (PROF_STK_TIME or PROF_STK_BYTES) of the profile's stacks s (NULL: none,
** said in one line) read from tr; source says where they come from. */
void exp_html_flame(FILE *f, const struct prof_stacks *s, const struct prof_trace *tr, int metric,
		    const char *source);

/* "exp_html_sites.c": the memory over time stacked by the top sites (in
** the memory section), and the section of the flame graph of heaptrack's
** metrics per site stack; 0 or an exit code after one line. */
int exp_html_sites_chart(FILE *f, const char *path, const struct rd_opts *o, int64_t pid);
int exp_html_sites_flame(FILE *f, const char *path, const struct rd_opts *o, int64_t pid);

/* "exp_html_leaks.c": the process's latest leak check, if any: 0 or an
** exit code after one line. */
int exp_html_leak_classes(FILE *f, const char *path, const struct rd_opts *o, int64_t pid);

/* "exp_html_rss.c": the process's resident set explained (the parts of
** the kernel's RSS, the anonymous regions by site): 0 or an exit code. */
int exp_html_rss(FILE *f, const char *path, const struct rd_opts *o, int64_t pid);

/* "exp_html_ui.c" */
extern const char exp_html_css[], exp_html_js[];

/* The arguments of `inspect html` (its parser is export's). */
int exp_html_args(int argc, char **argv, const struct rd_opts *o, const char **pos, const char **output,
		  int64_t *pid, bool *no_symbols, bool *force);

#endif /* EXP_INT_H */
