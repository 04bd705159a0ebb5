/*
** insp_int.h — internal interfaces of `inspect`'s memory commands.
**
** The toolkit they share with profile/ (arguments, output, formatting,
** the snapshot reader, symbols) is in reader/ (rd_int.h).  Prototypes
** below are grouped under the file that defines them.
**
**   inspect.c          main: the command table, --help, --version
**   insp_calc.c        computations without SQLite: holes, limits, top, diff
**   insp_control.c     the client of a live process's control channel
**   insp_http.c        the HTTP server of `inspect serve` (program only)
**   insp_cmd_*.c       one file per command or small group of commands
*/
#ifndef INSP_INT_H
#define INSP_INT_H

#include "rd_int.h"

/* ------------------------------------------------------------ insp_calc -- */

/* Per segment figures of a scan (index -1 in the maps below is the
** pseudo-segment of blocks outside every listed segment). */
struct insp_seg_stat {
	uint64_t blocks, bytes;        /* bytes: requested sizes          */
	uint64_t low, high;            /* first block start, last block end */
	uint64_t holes, hole_bytes, largest;
};

struct insp_hole {
	uint64_t addr, size;           /* addr: end of the block before it */
	int seg, seg_to;               /* segment indexes (-1: none)      */
};

/* A scan of blocks in address order, see insp_calc.c for what counts. */
struct insp_scan {
	const struct rd_seg *segs;
	size_t nsegs;
	uint64_t header;               /* block header size               */
	uint64_t min;                  /* holes smaller than this are ignored */
	size_t keep;                   /* largest holes to keep (0: none) */
	bool keep_all;                 /* keep every inside hole, by address */
	/* results */
	uint64_t blocks, bytes, low, high;
	uint64_t holes, hole_bytes, largest;
	uint64_t between, between_bytes;
	uint64_t hist[64], hist_bytes[64];
	struct insp_seg_stat *seg;     /* nsegs + 1 entries; [nsegs] = none */
	struct rd_vec kept;          /* struct insp_hole                */
	struct rd_vec betweens;      /* struct insp_hole                */
	/* state */
	bool started;
	uint64_t prev_end;
	int prev_seg;
	size_t cursor;
};

/* A (key, bytes, blocks) aggregate. */
struct insp_agg {
	int64_t key;
	uint64_t bytes, blocks;
};

struct insp_aggmap {
	struct insp_agg *slot;
	bool *used;
	size_t cap, n;
};

/* "insp_calc.c" */
void insp_scan_init(struct insp_scan *s, const struct rd_seg *segs, size_t nsegs,
		    uint64_t header);
void insp_scan_add(struct insp_scan *s, uint64_t addr, uint64_t size);
void insp_scan_finish(struct insp_scan *s);
void insp_scan_free(struct insp_scan *s);
/* The segment index of an address in segments sorted by start, or -1. */
int insp_seg_find(const struct rd_seg *segs, size_t n, uint64_t addr);
/* log2 bucket of a hole size (0 for 0 and 1). */
unsigned insp_log2(uint64_t v);

void insp_aggmap_init(struct insp_aggmap *m);
struct insp_agg *insp_aggmap_get(struct insp_aggmap *m, int64_t key);
/* The entries in a new array sorted by bytes (largest first, ties by key). */
struct insp_agg *insp_aggmap_sorted(const struct insp_aggmap *m, size_t *n);
void insp_aggmap_free(struct insp_aggmap *m);

/* The k smallest-seq blocks of a stream (the oldest): a bounded heap. */
struct insp_oldest {
	struct rd_block *v;
	size_t n, k, cap;
};
void insp_oldest_init(struct insp_oldest *h, size_t k);
void insp_oldest_add(struct insp_oldest *h, const struct rd_block *b);
/* Sorts v by seq (oldest first) and returns it. */
struct rd_block *insp_oldest_sorted(struct insp_oldest *h);
void insp_oldest_free(struct insp_oldest *h);

/* Merge two address-ordered block streams: calls `only_a`, `only_b` and
** `both` per block (same addr and seq in both = the same block). */
struct insp_merge_cb {
	void (*only_a)(void *ctx, const struct rd_block *a);
	void (*only_b)(void *ctx, const struct rd_block *b);
	void (*both)(void *ctx, const struct rd_block *a, const struct rd_block *b);
	void *ctx;
};
int insp_merge(rd_blocks_t *a, rd_blocks_t *b, const struct insp_merge_cb *cb,
	       struct rd_progress *p);
/* --------------------------------------------------------- insp_control -- */

/* "insp_control.c" */
/* Ask process pid to store a snapshot of `what` ("map", "status" or
** "leaks": a map with its leak check) in the
** database at abs_path.  Returns 0 with *id set, or RD_EXIT_LIVE or
** RD_EXIT_USAGE after a message. */
int insp_control_snapshot(const struct rd_opts *o, int64_t pid, const char *abs_path,
			  const char *what, int64_t *id);
/* A new empty file (absolute path in buf) for a live process's snapshot:
** 0, or an exit code after one line; and its removal with its journal. */
int insp_control_tempfile(const struct rd_opts *o, char *buf, size_t len);
void insp_control_tempfile_remove(const char *path);
/* Timeout of one exchange in seconds: INSPECT_CONTROL_TIMEOUT or 10. */
int insp_control_timeout(void);
/* Send "start mis|mim" or "stop" to a process started dormant; 0 or an exit code. */
int insp_control_switch(const struct rd_opts *o, int64_t pid, const char *request);
/* Can pid be asked (its channel open, the process's own, our user)?
** Nothing is sent.  0, or RD_EXIT_LIVE after one line. */
/* "sample start HZ SECONDS PATH" or "sample stop" (the sampler switched
** for a CPU profile): 0 with *fd (the samples file's descriptor in the
** process, for start), or an exit code after one line. */
int insp_control_sample(const struct rd_opts *o, int64_t pid, const char *line, int64_t *fd);
int insp_control_check(const struct rd_opts *o, int64_t pid);

/* ------------------------------------------------------------ insp_http -- */

/* "insp_http.c": the HTTP/1.1 server of `inspect serve` (built into the
** program only, with insp_cmd_serve.c). */
struct insp_http_req {
	char method[8];
	char path[512];          /* without the query                       */
	char query[512];
	int fd;                  /* the connection                          */
};
struct insp_http_resp {
	int status;
	const char *type;        /* Content-Type (NULL: text/plain)          */
	const char *filename;    /* Content-Disposition's, or NULL           */
	char *body;              /* malloc'd                                */
	size_t len;
};
typedef void insp_http_handler(void *ctx, const struct insp_http_req *q, struct insp_http_resp *r);
/* Listen on "HOST:PORT" (loopback only unless remote): 0 with *fd and the
** base URL, or an exit code after one line. */
int insp_http_listen(const struct rd_opts *o, const char *addr, bool remote, int *fd, char *url, size_t ulen);
/* Answer requests one at a time until SIGINT or SIGTERM (returned) or
** until stop(ctx) says so (0). */
int insp_http_serve(int lfd, insp_http_handler *h, bool (*stop)(void *ctx), void *ctx);
/* Wait up to ms for nothing but the client's going away or SIGINT or
** SIGTERM: true when the time ran out with the client still there. */
bool insp_http_wait(const struct insp_http_req *q, int64_t ms);
/* A query parameter's value (cut to len - 1): false when absent. */
bool insp_http_param(const struct insp_http_req *q, const char *key, char *out, size_t len);
/* A text body with its status. */
void insp_http_text(struct insp_http_resp *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* ------------------------------------------------------------- commands -- */

/* Each returns an exit code (RD_EXIT_*). */
int insp_cmd_list(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_header_size(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_sql(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_holes(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_limits(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_sum(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_descr(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_type(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_class(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_allocator(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_types(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_status(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_diff(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_top(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_leaks(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_sizes(int argc, char **argv, const struct rd_opts *o);
/* "insp_cmd_counts.c": top --by a metric of the event counters. */
int insp_top_events(const struct rd_opts *o, const struct rd_args *a, int metric);
/* "insp_cmd_runs.c": diff of two runs (insp_cmd_diff.c hands over);
** RD_CONTINUE when A and B are one process (the block diff then). */
int insp_diff_runs(const struct rd_opts *o, const struct rd_args *a, const char *const files[2],
		   const int64_t snaps[2]);
int insp_cmd_timeline(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_rss(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_snapshot(int argc, char **argv, const struct rd_opts *o);
/* "insp_cmd_switch.c" */
int insp_cmd_start(int argc, char **argv, const struct rd_opts *o);
int insp_cmd_stop(int argc, char **argv, const struct rd_opts *o);
/* "insp_cmd_serve.c" (the program only) */
int insp_cmd_serve(int argc, char **argv, const struct rd_opts *o);

#endif /* INSP_INT_H */
