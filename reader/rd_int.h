/*
** rd_int.h — the reader toolkit: what every reading command of
** `inspect` shares, the memory commands (inspect/) and the time commands
** and exports (profile/) alike.  Nothing here knows a command; the files
** of the snapshot and trace formats are read through it.  Prototypes are
** grouped under the file that defines them.  It is over the guide (~850 lines):
** it is the one header of the toolkit's many files, and its structures
** (leak sums, events, output model) are shared by every command.
**
**   rd_args.c        the command-line parser shared by every command
**                      (the launcher, session/meminst.c, links it too)
**   rd_util.c        memory, the string pool, the growable vector, clock
**   rd_db.c          the one snapshot reader: open read-only, check, pick
**   rd_chunk.c       the block_chunk decoder (also in meminst_sqlite)
**   rd_names.c       allocator/class/type/thread names and filters, and
**                      the session (database + snapshot + tags) of a command
**   rd_out.c         result tables rendered as text, --json or --csv
**   rd_fmt.c         value formatting and escaping for those renderings
**   rd_progress.c    the progress bar on a terminal's stderr
**   rd_symbols.c     offline symbolisation of call sites with libdw
**   rd_strace.c      trace files stored in a session database
**
** The runtime (alloc/, trace/) never includes this header.
**
** Exit codes (documented in inspect(1)): RD_EXIT_*.  Functions that can
** fail print their one-line message themselves and return the exit code,
** so a command just passes it up.
*/
#ifndef READER_INT_H
#define READER_INT_H

#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "rd_chunk.h"

enum rd_exit {
	RD_EXIT_OK = 0,
	RD_EXIT_NOTFOUND = 1, /* the snapshot, type … asked for does not exist */
	RD_EXIT_USAGE = 2,
	RD_EXIT_DB = 3,       /* unreadable or invalid database              */
	RD_EXIT_LIVE = 4,     /* live process unreachable or refused         */
};

struct rd_progress;

/* What main hands every command. */
struct rd_opts {
	FILE *out;           /* the result                                    */
	FILE *err;           /* messages and the progress bar                 */
	bool progress;       /* stderr is a terminal: progress bars allowed   */
	bool no_symbols;     /* never open module files (the fuzzer sets it)  */
	bool no_control;     /* never open sockets (the fuzzer sets it)       */
	int columns;         /* text width: $COLUMNS, the terminal's, or 0:
				never cut (see rd_text_columns)             */
};

/* ------------------------------------------------------------ rd_args -- */

enum rd_format { RD_FMT_TEXT = 0, RD_FMT_JSON, RD_FMT_CSV };

/* The status kinds, in the order of MEMINST_SNAPSHOT_KINDS. */
enum { RD_KIND_TOTAL = 0, RD_KIND_ALLOCATORS, RD_KIND_CLASSES,
       RD_KIND_TYPES, RD_KIND_THREADS, RD_KIND_COUNT };

/* The filters as given (numbers or names, resolved per snapshot). */
struct rd_filter {
	const char *type, *class_, *thread, *allocator;
};

struct rd_args {
	const char *cmd;           /* the command's name, for messages   */
	const char *pos[2];        /* positional arguments               */
	int npos;
	int64_t snapshot;          /* 0: not given                       */
	enum rd_format format;
	const char *table;         /* --table NAME: render only that one */
	struct rd_filter filter;
	int64_t limit;             /* -1: not given                      */
	uint64_t min;              /* --min SIZE                         */
	bool all;
	unsigned kinds;            /* bit set of 1 << INSP_KIND_*; 0: none given */
	int64_t pid;               /* 0: not given                       */
	int64_t image;             /* --image N + 1; 0: not given         */
	const char *output;
	int64_t from, to;          /* 0: not given                       */
	const char *by;
	bool no_symbols;
	bool live_at_exit;
	int64_t stacks;            /* --stacks N; 0 none; -1 not given    */
};

/* The kind of value an option takes. */
enum rd_opt_type {
	RD_OT_FLAG,   /* none                                           */
	RD_OT_STR,    /* any word                                       */
	RD_OT_FILE,   /* a file name                                    */
	RD_OT_INT,    /* an integer from lo to hi (decimal or 0x hex)   */
	RD_OT_SIZE,   /* a size: 4096, 4K, 1MiB                         */
	RD_OT_REAL,   /* a number from lo to hi, decimals allowed       */
	RD_OT_WORD,   /* one of words[]                                 */
	RD_OT_MAYBE,  /* a file name that may be left out (--dump [FILE]):
			   "=FILE", or the next word when the positional
			   arguments are complete without it               */
	RD_OT_DURATION, /* a number and a unit (ns, us, ms, s, m), or 0:
			   g->num is in ns; or words[0] when given: num -1 */
};

/* One option of a command.  A command's options are one table, ended by
** an entry with a NULL name; an entry named "" is a heading in --help.
** The same table gives the parser, --help (rd_args_help) and, through
** --help, the bash completion (scripts/meminst-completion.bash). */
struct rd_option {
	const char *name;          /* the long name without "--"             */
	char short_name;           /* 'o' for -o, or 0                       */
	enum rd_opt_type type;
	const char *arg;           /* the value in --help ("N", "FILE");
				      WORD: NULL shows the words, a|b|c    */
	const char *help;          /* '\n' starts an indented next line      */
	int id;                    /* INSP_ID_*, or the command's own        */
	int64_t lo, hi;            /* INT, REAL: the values allowed; SIZE:
				      lo the least                         */
	const char *const *words;  /* WORD: NULL-terminated                  */
	bool optional;             /* the value may be left out, and is then
				      given only attached: --trace[=cpu]   */
};

/* The option vocabulary every command shares: one spelling, one meaning,
** one kind of value.  Commands number their own options from RD_ID_OWN. */
enum {
	RD_ID_HELP = 1, RD_ID_SNAPSHOT, RD_ID_JSON, RD_ID_CSV, RD_ID_TABLE,
	RD_ID_TYPE, RD_ID_CLASS, RD_ID_THREAD, RD_ID_ALLOCATOR, RD_ID_LIMIT,
	RD_ID_MIN, RD_ID_ALL, RD_ID_KIND, /* + INSP_KIND_* */
	RD_ID_PID = RD_ID_KIND + RD_KIND_COUNT, RD_ID_OUTPUT, RD_ID_APPEND,
	RD_ID_FROM, RD_ID_TO, RD_ID_BY, RD_ID_NO_SYMBOLS, RD_ID_FULL_NAMES,
	RD_ID_LIVE_AT_EXIT, RD_ID_FORCE, RD_ID_STACKS, RD_ID_IMAGE,
	RD_ID_OWN = 100,
};

#define RD_INT_MAX INT64_MAX
#define RD_OPTION_SNAPSHOT(help) {"snapshot", 0, RD_OT_INT, "N", help, RD_ID_SNAPSHOT, 1, RD_INT_MAX, NULL}
#define RD_OPTION_PID(help) {"pid", 0, RD_OT_INT, "PID", help, RD_ID_PID, 1, RD_INT_MAX, NULL}
#define RD_OPTION_LIMIT(help) {"limit", 0, RD_OT_INT, "N", help, RD_ID_LIMIT, 0, RD_INT_MAX, NULL}
#define RD_OPTION_OUTPUT(help) {"output", 'o', RD_OT_FILE, "FILE", help, RD_ID_OUTPUT, 0, 0, NULL}
#define RD_OPTION_FORCE {"force", 'f', RD_OT_FLAG, NULL, "replace the -o FILE if it holds something", \
	RD_ID_FORCE, 0, 0, NULL}
#define RD_OPTION_APPEND(help) {"append", 0, RD_OT_FLAG, NULL, help, RD_ID_APPEND, 0, 0, NULL}
#define RD_OPTION_JSON {"json", 0, RD_OT_FLAG, NULL, \
	"one JSON document (sizes in bytes, times in ms)", RD_ID_JSON, 0, 0, NULL}
#define RD_OPTION_CSV(help) {"csv", 0, RD_OT_FLAG, NULL, help, RD_ID_CSV, 0, 0, NULL}
#define RD_OPTION_TABLE {"table", 0, RD_OT_STR, "NAME", "print only the table NAME of the result", \
	RD_ID_TABLE, 0, 0, NULL}
/* --json --csv --table: the result tables of rd_out.c. */
#define RD_OPTIONS_FORMAT RD_OPTION_JSON, \
	RD_OPTION_CSV("comma-separated values, one table after another"), RD_OPTION_TABLE
#define RD_OPTIONS_FILTER \
	{"type", 0, RD_OT_STR, "N|NAME", "only blocks of this type", RD_ID_TYPE, 0, 0, NULL}, \
	{"class", 0, RD_OT_STR, "N|NAME", "only blocks whose type is in this class", RD_ID_CLASS, 0, 0, NULL}, \
	{"thread", 0, RD_OT_STR, "N", "only blocks allocated by meminst thread N", RD_ID_THREAD, 0, 0, NULL}, \
	{"allocator", 0, RD_OT_STR, "N|NAME", "only blocks from this allocator (malloc, new…)", \
	 RD_ID_ALLOCATOR, 0, 0, NULL}
#define RD_OPTION_NO_SYMBOLS(help) {"no-symbols", 0, RD_OT_FLAG, NULL, help, RD_ID_NO_SYMBOLS, 0, 0, NULL}
#define RD_OPTION_FULL_NAMES {"full-names", 0, RD_OT_FLAG, NULL, \
	"keep C++ template arguments (std::map<>::… by default)", RD_ID_FULL_NAMES, 0, 0, NULL}
#define RD_OPTIONS_SYMBOLS \
	RD_OPTION_NO_SYMBOLS("show call sites as stored, without reading module files"), \
	RD_OPTION_FULL_NAMES
/* --stacks N|none: the frames of the first N site rows under them in text
** (`dflt` rows unless given), in a "stack" field of every row in JSON and
** CSV unless given. */
#define RD_OPTION_IMAGE {"image", 0, RD_OT_INT, "N", "sessions: which program of a process that exec'd\n" \
	"(0: the first it ran; default: the one with the most\nsamples)", RD_ID_IMAGE, 0, RD_INT_MAX, NULL}
#define RD_OPTION_STACKS(help) {"stacks", 0, RD_OT_STR, "N|none", help, RD_ID_STACKS, 0, 0, NULL}
#define RD_OPTION_END {NULL, 0, RD_OT_FLAG, NULL, NULL, 0, 0, 0, NULL}

struct rd_cmd_spec {
	const char *name;          /* the command; NULL for a program of
				      its own (prog)                      */
	const char *synopsis;      /* after "inspect NAME "              */
	const char *help;          /* what NAME --help says before the options */
	const struct rd_option *options; /* the command's option table */
	int min_pos, max_pos;
	/* A program with no command word (meminst): its name in messages and
	** --help; NULL: a command of inspect. */
	const char *prog;
	/* The options end at the first argument that is not one (or at
	** "--"): the rest is another program's command line, untouched, from
	** g->i on (meminst [OPTION]... PROGRAM ARG...). */
	bool options_first;
	const char *epilog;        /* --help's last lines, or NULL       */
};

#define RD_CONTINUE (-1)
#define RD_OPTION (-2)

/* The parser's state over one command line. */
struct rd_getopt {
	const struct rd_cmd_spec *spec;
	const struct rd_opts *o;
	int argc, i;
	char **argv;
	bool dashdash;                /* after "--": positional only      */
	const char *cluster;          /* "-fq": the letters still to read */
	/* the option just read (RD_OPTION) and its value, checked */
	const struct rd_option *opt;
	const char *value;            /* as given; NULL for a flag        */
	int64_t num;                  /* INT                              */
	uint64_t size;                /* SIZE                             */
	double real;                  /* REAL                             */
	int word;                     /* WORD: the index in words[]       */
	int format_id;                /* --json or --csv, once given      */
	const char *output_given;     /* -o FILE, once given              */
	/* the positional arguments, in order */
	const char *pos[8];
	int npos;
	int maybe;                    /* pos index of a MAYBE value, or -1 */
	const char *maybe_value;      /* after the last call: the MAYBE
					 option's final value, or NULL    */
};

/* "rd_args.c" */
/* The one command-line parser.  Options may come before or after the
** positional arguments, "--opt=value" or "--opt value", "-o FILE" or
** "-oFILE"; "--" ends the options.  Each call reads the next option and
** returns RD_OPTION (g->opt, its value checked and converted), or
** RD_CONTINUE when all is read and the positional arguments number from
** spec->min_pos to spec->max_pos, or an exit code: 0 after --help, 2 after
** one line naming the mistake (unknown option, with the nearest one of the
** command; missing or bad value; an option of another command; too many or
** too few arguments). */
void rd_getopt_init(struct rd_getopt *g, const struct rd_cmd_spec *spec, int argc, char **argv,
		      const struct rd_opts *o);
int rd_getopt(struct rd_getopt *g);
/* The command's --help, made from spec and its option table. */
void rd_args_help(const struct rd_cmd_spec *spec, FILE *f);
/* A usage error of the command of spec, worded as the parser's own:
** "inspect: NAME: msg (see 'inspect NAME --help')", or "meminst: msg (see
** 'meminst --help')" for a program of its own.  Returns RD_EXIT_USAGE. */
int rd_cmd_error(const struct rd_opts *o, const struct rd_cmd_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of g's option is not one it takes: "--NAME takes EXPECTED,
** not 'VALUE'" (for a check the table cannot make).  Returns 2. */
int rd_bad_value(struct rd_getopt *g, const char *expected);
/* Parse the shared vocabulary into a (the memory commands and report):
** every option of spec's table must be an INSP_ID_* one.  Returns
** RD_CONTINUE, or an exit code once --help was printed (0) or a usage
** error (2). */
int rd_args_parse(const struct rd_cmd_spec *spec, int argc, char **argv,
		    const struct rd_opts *o, struct rd_args *a);
/* The same, with the command's own options (RD_ID_OWN and above) given to
** own, which returns RD_CONTINUE or an exit code. */
int rd_args_parse_own(const struct rd_cmd_spec *spec, int argc, char **argv, const struct rd_opts *o,
			struct rd_args *a, int (*own)(struct rd_getopt *g, void *ctx), void *ctx);
/* Print "inspect: NAME: msg" and the --help hint; returns RD_EXIT_USAGE. */
int rd_usage_error(const struct rd_opts *o, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* --full-names: keep template arguments in every name printed.  A display
** choice of the one command a process runs, set by the parser (to false
** unless asked) so that a command run after another in the same process
** (the unit tests) does not inherit it. */
void rd_set_full_names(bool on);
bool rd_full_names(void);
/* Strict numbers: decimal or 0x hex, the whole string. */
bool rd_parse_int(const char *s, int64_t *out);
/* Sizes: a number with an optional unit k, M or G (powers of 1024, either
** case), an optional i after it, and an optional B: 4096, 4K, 4KiB, 1MB. */
bool rd_parse_size(const char *s, uint64_t *out);
/* Durations: 0, or a number and a unit ns, us, ms, s or m, in ns. */
bool rd_parse_duration(const char *s, uint64_t *ns);

/* ------------------------------------------------------------ rd_util -- */

/* "rd_util.c" */
/* An output file (-o FILE) that is an input of the command, by any name:
** writing it would destroy what is read.  Says so on o->err and returns
** true; false for standard output ("-" or NULL) and a file not there yet. */
bool rd_out_is_input(const struct rd_opts *o, const char *out, const char *in);
/* The file a command writes (-o FILE), or standard output (NULL or "-").
** A new file is written beside FILE and renamed into place once whole, so a
** failed write (disk full, ulimit -f) leaves neither a cut file nor a lost
** old one; a device, FIFO or symbolic link to one is written as it is. */
struct rd_outfile {
	FILE *f;
	const char *path; /* as given (NULL: standard output)          */
	char *tmp;        /* the new file, renamed to target when whole */
	char *target;     /* path, through a symbolic link              */
	int fd, err;      /* the file, and the errno of a failed write  */
};
/* Opens out, refusing an input of the command (ins, n of them: NULL ones
** skipped) and a file that holds something (a regular file not empty)
** unless force or append (which opens it as it is, for appending).
** Returns 0, or the exit status after one line on o->err. */
/* The checks rd_outfile_open makes of out, made early (before a long
** read): 0, or the exit status after one line on o->err. */
int rd_outfile_refused(const struct rd_opts *o, const char *out, bool force, bool append,
			 const char *const *ins, size_t n);
int rd_outfile_open(const struct rd_opts *o, struct rd_outfile *of, const char *out, bool force,
		      bool append, const char *const *ins, size_t n);
/* Closes it: keep puts the new file in place, !keep (the command failed)
** removes it.  A write error is one line on o->err and RD_EXIT_DB, and
** the new file removed.  Returns 0 or the status. */
int rd_outfile_close(const struct rd_opts *o, struct rd_outfile *of, bool keep);
/* Allocation that cannot fail: out of memory prints one line and exits 3. */
void *rd_xmalloc(size_t n);
void *rd_xcalloc(size_t n, size_t size);
void *rd_xrealloc(void *p, size_t n);
char *rd_xstrdup(const char *s);

/* A growable array of fixed-size elements. */
struct rd_vec {
	void *v;
	size_t n, cap, elem;
};
void rd_vec_init(struct rd_vec *vec, size_t elem);
void *rd_vec_push(struct rd_vec *vec); /* a zeroed new element */
void rd_vec_free(struct rd_vec *vec);
/* The element of the n at v, `size` bytes each, sorted by the int64_t each
** starts with, that starts with id (the first, if several); NULL if none. */
const void *rd_find_id(const void *v, size_t n, size_t size, int64_t id);
/* Of the n at v, `size` bytes each, sorted by the uint64_t each starts with
** (an address, a range's start), how many start with key or less: the one
** at or below key is the one before that count, if the count is not 0. */
size_t rd_count_upto(const void *v, size_t n, size_t size, uint64_t key);

/* A pool of strings freed all at once. */
struct rd_pool {
	struct rd_pool_chunk *head;
};
const char *rd_pool_str(struct rd_pool *p, const char *s);
const char *rd_pool_fmt(struct rd_pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rd_pool_free(struct rd_pool *p);

/* Monotonic seconds. */
double rd_now(void);
/* The width text output may take: $COLUMNS when it is a number, else the
** terminal's when out is one, else 0 (a file or a pipe: nothing is cut). */
int rd_text_columns(FILE *out);
/* -------------------------------------------------------------- rd_db -- */

/* One row of the snapshot table. */
struct rd_snap {
	int64_t id;
	const char *content, *trigger, *exe, *cmdline, *mode, *backend;
	int64_t pid, ppid, header_size, time_ns, elapsed_ns, pause_ns, seq;
	int64_t blocks, bytes;
	int64_t since_ns; /* started dormant: its first switch on; 0: counted from its start */
};

/* A mapping; fig: the kernel's figures (rss pss private shared swap
** anon_huge, MEMINST_SNAPSHOT_SEGMENT_RSS), -1 when not stored. */
enum { RD_SEG_RSS, RD_SEG_PSS, RD_SEG_PRIVATE, RD_SEG_SHARED, RD_SEG_SWAP, RD_SEG_ANON_HUGE, RD_SEG_FIGS };
struct rd_seg {
	uint64_t start, end, offset;
	const char *perms, *path;
	int64_t fig[RD_SEG_FIGS];
};

struct rd_block {
	uint64_t addr, size;
	int64_t type, thread, allocator, seq;
};

/* What a command needs from the snapshot it is given by default: any, a
** block map, or status rows. */
enum rd_need { RD_NEED_ANY = 0, RD_NEED_MAP, RD_NEED_STATUS };

typedef struct rd_db rd_db_t;

/* A filter as numbers of the snapshot's tables. */
struct rd_filter_ids {
	bool has_type, has_class, has_thread, has_allocator;
	int64_t type, class_, thread, allocator;
};

/* A snapshot's blocks in address order, filtered: from the block_chunk
** rows through the decoder (schema 2) or from the block rows (schema 1). */
typedef struct rd_blocks {
	rd_db_t *db;
	sqlite3_stmt *st;
	bool chunked;                /* schema 2                             */
	bool in_chunk;               /* chunk holds the row st is on         */
	struct rd_chunk chunk;
	int64_t chunk_first;         /* for the damage message               */
	uint64_t end;                /* end of the block before (addr + size) */
	struct rd_filter_ids f;    /* has_* all false: no filter           */
	int64_t *class_types;        /* --class: its types, sorted           */
	size_t nclass_types;
} rd_blocks_t;

/* Who allocated the blocks live at exit (`top --live-at-exit`): a session's
** exit snapshot joined with its trace (profile/prof_live.c).  inspect's
** main sets it; where the profile reader is not linked in (the unit tests,
** the fuzzer) it stays NULL.  open gives NULL when the session at path has
** no trace that names them (process pid, its exit snapshot snap); put adds
** one row's cells of the RD_LIVE_COLS, "allocated in" (text), "function"
** and "functions" (JSON, CSV), for a type.  They end a table's columns
** (top --live-at-exit, report's live at exit: prof_live_put fills them). */
struct rd_table;
struct rd_live_fns {
	void *(*open)(const char *path, int64_t pid, int64_t snap, const struct rd_opts *o);
	void (*put)(void *ctx, struct rd_table *t, int64_t type);
	void (*close)(void *ctx);
};
extern const struct rd_live_fns *rd_live_fns;
#define RD_LIVE_NCOLS 3
#define RD_LIVE_COLS \
	{"allocated_in", "allocated in", RD_K_STR, RD_C_TEXT_ONLY | RD_C_OPTIONAL}, \
	{"function", "function", RD_K_STR, RD_C_DATA_ONLY}, \
	{"functions", "functions", RD_K_INT, RD_C_DATA_ONLY}

/* "rd_events.c": the event counters (meminst-snapshot(5)). */
struct rd_events_snaps {
	int64_t pid;
	int64_t counts, peak, exit; /* snapshot numbers; exit 0: none */
};
struct rd_events_summary {
	uint64_t calls, allocated, frees, temporary, reallocs;
	uint64_t peak, peak_rss, leaked, leaked_blocks;
	uint64_t peak_held; /* live bytes in the peak snapshot */
	bool has_rss, has_exit;
};
#define RD_SIZE_BUCKETS 48
bool rd_events_stored(rd_db_t *db);

int rd_events_pick(rd_db_t *db, int64_t pid, int64_t want, struct rd_events_snaps *out);
int rd_events_summary(rd_db_t *db, const struct rd_events_snaps *p, struct rd_events_summary *out);
/* The figures of a site (a type) that heaptrack's questions ask for:
** calls, bytes allocated and temporary allocations of the counts
** snapshot, live bytes in the peak snapshot and in the exit snapshot. */
enum { RD_EV_CALLS, RD_EV_ALLOCATED, RD_EV_TEMPORARY, RD_EV_PEAK, RD_EV_LEAKED, RD_EV_N };
extern const char *const rd_event_metrics[RD_EV_N + 1]; /* their words, NULL last */
int rd_event_metric(const char *word); /* its number, or -1 */
/* The summary's total of one metric: what the site rows add up to. */
uint64_t rd_events_total(const struct rd_events_summary *s, int metric);
struct rd_site_events {
	int64_t type;
	uint64_t v[RD_EV_N];     /* v[RD_EV_LEAKED]: 0 without an exit snapshot */
};
/* Every type with counters in p->counts, the largest of metric `order`
** first (then by id): *out malloc'd.  0 or RD_EXIT_DB after one line. */
int rd_events_sites(rd_db_t *db, const struct rd_events_snaps *p, int order, struct rd_site_events **out,
		    size_t *n);
/* Open path for the counters: the process (pid, else the program's; the
** snapshot's with want), its snapshots (rd_events_pick), the counts
** snapshot selected and its tags loaded.  0 or an exit code after one
** line; close s with rd_session_close in every case. */
struct rd_session;
int rd_events_open(struct rd_session *s, const struct rd_opts *o, const char *path, int64_t pid, int64_t want,
		   bool no_symbols, struct rd_events_snaps *p);
int rd_sizes_read(rd_db_t *db, int64_t snap, int64_t type, uint64_t out[RD_SIZE_BUCKETS]);

/* "rd_db.c" */
/* Open path read-only and check it is one of ours and intact.  Returns 0,
** or RD_EXIT_DB after printing "inspect: PATH: reason". */
int rd_db_open(const char *path, const struct rd_opts *o, rd_db_t **out);
void rd_db_close(rd_db_t *db);
const char *rd_db_path(const rd_db_t *db);
sqlite3 *rd_db_sqlite(rd_db_t *db); /* for `inspect sql` and rd_since_of_pid only */
/* A process started dormant: the wall clock (ns) of its first switch on,
** from which its snapshots count; 0 when it counted from its start (or the
** file predates the snapshot_since table).  Any SQLite handle of a
** session or snapshot file. */
int64_t rd_since_of_pid(sqlite3 *db, int64_t pid);
const struct rd_opts *rd_db_opts(const rd_db_t *db);
/* Pick snapshot `want` (0: the latest one that has what `need` asks for)
** and load its row.  Returns 0, RD_EXIT_NOTFOUND or RD_EXIT_DB. */
int rd_db_select(rd_db_t *db, int64_t want, enum rd_need need);
const struct rd_snap *rd_db_snap(const rd_db_t *db);
/* The map snapshot before the selected one (0 if none). */
int rd_db_previous_map(rd_db_t *db, int64_t before, int64_t *out);
/* The last exit snapshot with a block map (of pid, unless 0): 0 and *out,
** or RD_EXIT_NOTFOUND after a message. */
int rd_db_exit_map(rd_db_t *db, int64_t pid, int64_t *out);
/* The process a command is about: `given` if not 0, else a session's
** program (meminst(1)), else the process with the most snapshots.
** Returns 0 or RD_EXIT_NOTFOUND (no snapshot at all) / RD_EXIT_DB. */
int rd_db_main_pid(rd_db_t *db, int64_t given, int64_t *pid);
/* Every snapshot row, oldest first. */
int rd_db_list(rd_db_t *db, struct rd_snap **out, size_t *n);
/* The snapshot whose rows of TABLE (segment, module) snapshot ?1 has: its
** own, or, where a writer left out rows that had not changed, those of
** the latest earlier snapshot of the same process that has some
** (meminst-snapshot(5)). */
#define RD_SQL_SNAP_WITH(table)                                                                        \
	"(SELECT s.id FROM snapshot s WHERE s.id <= ?1 AND s.pid = (SELECT pid FROM snapshot WHERE id = ?1) " \
	"AND EXISTS (SELECT 1 FROM " table " g WHERE g.snapshot = s.id) ORDER BY s.id DESC LIMIT 1)"

/* The selected snapshot's segments, by start address (unsigned: [vsyscall],
** stored negative, last). */
int rd_db_segments(rd_db_t *db, struct rd_seg **out, size_t *n);
/* Snapshot snap's segments (those of the latest earlier snapshot of its
** process that has some, as rd_db_segments), by start address. */
int rd_db_segments_of(rd_db_t *db, int64_t snap, struct rd_seg **out, size_t *n);
/* Report the last SQLite error on the selected database; returns 3. */
int rd_db_fail(rd_db_t *db, const char *what);
/* sqlite3_errmsg(db) on one line, controls as \xNN (a crafted file's text
** may hold newlines and terminal escapes); valid until the next call. */
const char *rd_sql_msg(sqlite3 *db);
/* The file a reading command (analyse, profile, report, export) is given:
** a readable regular file (a FIFO would block the reader), and an SQLite
** file no writer holds locked.  0, or RD_EXIT_DB after one line. */
int rd_input_check(const struct rd_opts *o, const char *path);
/* "rd_open.c" */
#define RD_LOCKED_MSG "database is locked (a process is writing it; try again when it has finished)"
/* path opened read-only as every reader opens a file (never created; views,
** triggers and extension loading off; the schema not trusted; a writer
** waited for): the handle, whose errcode says whether the open worked, or
** NULL when out of memory.  For probes; readers use rd_sqlite_open. */
sqlite3 *rd_sqlite_connect(const char *path);
/* rd_sqlite_connect, then rd_sqlite_check: 0 and *db, or the exit
** status after one line. */
int rd_sqlite_open(const struct rd_opts *o, const char *path, sqlite3 **db);
/* A schema meminst never writes (a view, a trigger or a virtual table, by
** any name) refused: 0, or RD_EXIT_DB after one line naming it. */
int rd_sqlite_check(const struct rd_opts *o, const char *path, sqlite3 *db);
#include "rd_carry.h" /* rd_carry_views, called by rd_sqlite_check */
/* SQLite's last error on db, said as every reader says it (hot journal,
** damage, not SQLite, locked, else "what: message"); returns 3. */
int rd_sqlite_fail(const struct rd_opts *o, const char *path, sqlite3 *db, const char *what);
/* A file that is not ours beside a journal or WAL file a killed store left:
** one line naming the journal and RD_EXIT_DB, else 0 (nothing said). */
int rd_sqlite_interrupted(const struct rd_opts *o, const char *path);
/* "rd_check.c" */
/* Every stored figure of the snapshot, name and status tables of the type
** and range meminst writes (an integer, not negative where a size or count,
** no NULL where not allowed, no key twice): 0, or RD_EXIT_DB after one
** line naming the table, the row and the column.  rd_db_open calls it. */
int rd_check_figures(rd_db_t *db);
/* Prepare SQL on the database; on error reports and returns NULL. */
sqlite3_stmt *rd_db_prepare(rd_db_t *db, const char *sql);
/* The first column of SQL's first row as an integer, ?1 (if any) bound to
** arg; `none` when there is no row (a bad statement: reported as well). */
int64_t rd_db_int(rd_db_t *db, const char *sql, int64_t arg, int64_t none);
/* Strings owned by the database handle (live until rd_db_close). */
struct rd_pool *rd_db_pool(rd_db_t *db);
const char *rd_col_text(rd_db_t *db, sqlite3_stmt *st, int col);

/* Blocks of the selected snapshot in address order, restricted by the
** resolved filter (NULL: all).  next returns 1 (a block), 0 (done) or
** RD_EXIT_DB. */
struct rd_filter_ids;
int rd_blocks_open(rd_db_t *db, const struct rd_filter_ids *f, rd_blocks_t *it);
int rd_blocks_next(rd_blocks_t *it, struct rd_block *b);
void rd_blocks_close(rd_blocks_t *it);
/* The same blocks, each given to fn, with the "reading blocks" progress bar
** of o.  Returns 0 after the last, or the exit status that ended it. */
typedef void rd_block_fn(void *ctx, const struct rd_block *b);
int rd_blocks_each(rd_db_t *db, const struct rd_opts *o, const struct rd_filter_ids *f,
		     rd_block_fn *fn, void *ctx);
/* ------------------------------------------------------------ rd_leak -- */

/* A snapshot's leak check: memcheck's classes (the numbers of
** leak_block.class; MEMINST_LEAK_CLASS_NAMES) and each lost block's. */
enum { RD_LEAK_REACHABLE = 0, RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE, RD_LEAK_CLASSES };
struct rd_leak_check {
	uint64_t bytes[RD_LEAK_CLASSES], blocks[RD_LEAK_CLASSES];
	uint64_t scanned_bytes;
	int64_t threads, threads_unstopped, scan_ns;
	int64_t scan_cpu_ns; /* -1: not stored (an older file)             */
	uint64_t *addr;      /* the blocks not still reachable, by address */
	unsigned char *cls;  /* and their classes                          */
	size_t n;
	struct rd_leak_clique { /* a definitely lost block's indirectly lost */
		uint64_t addr, bytes, blocks;
	} *clique;           /* by address */
	size_t nclique;
};
/* Sums by class (and suppressed) and by class and site (type). */
struct rd_session;
#define RD_LEAK_SUPPRESSED RD_LEAK_CLASSES
struct rd_leak_suppress {
	const char *const *names; /* globs of functions or sites */
	size_t n;
	bool no_default;          /* glibc's and the loader's not suppressed */
};
struct rd_leak_site {
	int64_t type; /* -1: a type the tags do not know */
	uint64_t bytes, blocks, ind_bytes, ind_blocks; /* ind_: definitely lost's cliques */
};
struct rd_leak_sum {
	uint64_t bytes[RD_LEAK_SUPPRESSED + 1], blocks[RD_LEAK_SUPPRESSED + 1];
	struct rd_leak_site *site[RD_LEAK_SUPPRESSED + 1]; /* by type; nsites each */
	size_t nsites;
};
/* "rd_leak.c" */
/* The latest snapshot with a leak check (of process pid; 0: any), 0 if
** none: 0 or RD_EXIT_DB. */
int rd_leak_latest(rd_db_t *db, int64_t pid, int64_t *snap);
/* The check before snapshot snap (0 if none): 0 or RD_EXIT_DB. */
int rd_leak_previous(rd_db_t *db, int64_t snap, int64_t *prev);
/* The selected snapshot's: 0, or RD_EXIT_NOTFOUND / RD_EXIT_DB after
** one line. */
int rd_leak_load(rd_db_t *db, struct rd_leak_check *c);
int rd_leak_class(const struct rd_leak_check *c, uint64_t addr);
const struct rd_leak_clique *rd_leak_clique_of(const struct rd_leak_check *c, uint64_t addr);
void rd_leak_free(struct rd_leak_check *c);
/* Add the selected snapshot's blocks up (its tags loaded in s). */
int rd_leak_sum(struct rd_session *s, const struct rd_opts *o, const struct rd_leak_check *c,
		const struct rd_leak_suppress *sup, struct rd_leak_sum *m);
/* Select snapshot snap, load its check and tags, add up: all of the above. */
int rd_leak_read(struct rd_session *s, const struct rd_opts *o, const struct rd_args *a, int64_t snap,
		 const struct rd_leak_suppress *sup, struct rd_leak_check *c, struct rd_leak_sum *m);
/* The sites of a class (or RD_LEAK_SUPPRESSED) with blocks, biggest
** (direct and indirect bytes) first: a new array. */
struct rd_leak_site *rd_leak_sites(const struct rd_leak_sum *m, int slot, size_t *n);
void rd_leak_sum_free(struct rd_leak_sum *m);

/* ----------------------------------------------------------- rd_names -- */

/* One entry of the allocator, class, type or thread table. */
struct rd_name {
	int64_t id;
	const char *name;
	int64_t class_;          /* types: their class                    */
	bool has_site;           /* types: automatic (site is valid)      */
	uint64_t site;
	const char *module;      /* classes: the module path, or NULL     */
	int64_t tid;             /* threads                               */
	const char *label;       /* types: the resolved label (lazily)    */
	const char *where;       /* types: file:line when known           */
	const char *chain;       /* types: the inline chain, or NULL      */
	const char *stack;       /* types: the frames (rd_stack_*), or NULL */
	const char *key;         /* types: rd_type_key's, once asked for   */
	uint64_t *frames;        /* types made by site_depth: the stack,  */
	size_t nframes;          /* frames[0] == site (type_frame table)  */
	bool resolved;
};

struct rd_names {
	struct rd_name *v;     /* sorted by id */
	size_t n;
};

/* All four tables of a snapshot. */
struct rd_tags {
	struct rd_names allocators, classes, types, threads;
	struct rd_module *modules;
	size_t nmodules;
	struct rd_module *gone; /* modules of automatic classes unloaded before */
	int64_t *gone_class;      /* the snapshot (class_load), and their classes */
	size_t ngone;
	struct rd_syms *syms;  /* NULL until a label is asked for */
	bool no_symbols;
};

enum rd_tag_kind { RD_TAG_ALLOCATOR, RD_TAG_CLASS, RD_TAG_TYPE, RD_TAG_THREAD };

/* "rd_names.c" */
int rd_tags_load(rd_db_t *db, struct rd_tags *t);
void rd_tags_free(struct rd_tags *t);
const struct rd_names *rd_tags_of(const struct rd_tags *t, enum rd_tag_kind k);
const struct rd_name *rd_name_find(const struct rd_names *n, int64_t id);
/* The name to show for an id ("#id" when the table has no such row). */
const char *rd_tag_name(rd_db_t *db, struct rd_tags *t, enum rd_tag_kind k, int64_t id);
/* A type's label: resolved from the module files when possible, else
** the stored name; *where gets "file:line" or NULL. */
const char *rd_type_label(rd_db_t *db, struct rd_tags *t, int64_t id, const char **where);
/* The inline chain of an automatic type's site, outermost first
** ("f at file:line > g at file:line …"), or NULL when not inlined. */
const char *rd_type_chain(rd_db_t *db, struct rd_tags *t, int64_t id);
/* An automatic type's stack (rd_stack_add): its site_depth frames with
** their inline chains, innermost first; NULL for a registered type. */
const char *rd_type_stack(rd_db_t *db, struct rd_tags *t, int64_t id);
/* The function of a call site (a return address), for grouping what it
** made: "function (module)", else "module+0xSTART (module)" from the unwind
** tables, else `stored` (the name the writer gave it) without its offset. */
const char *rd_site_function(rd_db_t *db, struct rd_tags *t, uint64_t site, const char *stored);
/* A type's identity in any process of the same program, for matching the
** sites of two runs: a registered type's name; an automatic type's stack,
** innermost first, each frame as its inline chain's "function file:line"
** parts, else "function+0xoff (module)" (never an address, which differs
** from one process to the next). */
const char *rd_type_key(rd_db_t *db, struct rd_tags *t, int64_t id);
/* "N name" for a thread. */
const char *rd_thread_label(rd_db_t *db, struct rd_tags *t, int64_t id);
/* Resolve the filter strings of a snapshot to numbers.  lookup returns 0,
** or -1 with the filter that names nothing in *what and *given; resolve
** returns 0, or RD_EXIT_NOTFOUND after a message. */
int rd_filter_lookup(const struct rd_tags *t, const struct rd_filter *f,
		       struct rd_filter_ids *ids, const char **what, const char **given);
int rd_filter_resolve(rd_db_t *db, const struct rd_tags *t, const struct rd_filter *f,
			struct rd_filter_ids *ids);
bool rd_filter_any(const struct rd_filter *f);

/* "rd_rss.c": the resident set split into parts (inspect rss, report).
** RD_RSS_HEAP is a mapping class only: its bytes go to the first three
** parts. */
enum {
	RD_RSS_LIVE, RD_RSS_HEADERS, RD_RSS_ALLOCATOR, RD_RSS_ANONYMOUS, RD_RSS_STACKS, RD_RSS_FILE, RD_RSS_CODE, RD_RSS_DIFF, RD_RSS_PARTS,
	RD_RSS_HEAP = RD_RSS_PARTS
};
extern const char *const rd_rss_part_keys[RD_RSS_PARTS];   /* JSON keys   */
extern const char *const rd_rss_part_labels[RD_RSS_PARTS]; /* text labels */
struct rd_rss_seg {
	int cls;                   /* RD_RSS_* class of the mapping        */
	uint64_t bytes, blocks;    /* blocks in it (block maps)            */
};
struct rd_rss {
	int64_t snap;
	int64_t kernel;            /* snapshot_rss.rss, -1: not stored     */
	bool by_address;           /* a block map placed blocks by address */
	bool figures;              /* the segments have smaps figures      */
	int64_t sum[RD_SEG_FIGS];  /* the mappings' figures added up       */
	int64_t part[RD_RSS_PARTS];
	uint64_t outside_bytes;    /* blocks outside every mapping         */
	struct rd_seg *segs;
	struct rd_rss_seg *seg;    /* one per segment                      */
	size_t nsegs;
};
struct rd_rss_point {
	int64_t snap, elapsed_ns, kernel;
	const char *trigger;
	bool figures;
	int64_t part[RD_RSS_PARTS];
};
/* The split of the selected snapshot. */
int rd_rss_read(rd_db_t *db, const struct rd_opts *o, struct rd_rss *r);
void rd_rss_free(struct rd_rss *r);
/* The parts of every snapshot of the selected snapshot's process, oldest
** first (struct rd_rss_point); the selection is kept. */
int rd_rss_over_time(rd_db_t *db, const struct rd_opts *o, struct rd_vec *out);

struct rd_doc;
/* "rd_rss_sites.c": the parts "anonymous" and "stacks" of a block map by
** the function that mapped them (table region; a thread's stack: the
** pthread_create call), largest first; the bytes of no region in one row
** a part named rd_rss_no_site, rd_rss_no_stack_site.  The rows of a part
** add up to that part. */
struct rd_rss_site {
	int part;           /* RD_RSS_ANONYMOUS or RD_RSS_STACKS           */
	const char *name;   /* "function (module)" (rd_site_function)      */
	int64_t resident;   /* its share of the mappings' resident bytes   */
	uint64_t mapped;    /* the bytes of its regions                    */
	uint64_t regions;
};
extern const char rd_rss_no_site[], rd_rss_no_stack_site[];
/* Empty for a status snapshot (its regions are not stored). */
int rd_rss_sites(rd_db_t *db, struct rd_tags *t, const struct rd_rss *r, struct rd_vec *out);
/* The tables of inspect rss and report: the parts, and the sites
** (the `limit` largest; -1: all), as table `key` of d. */
void rd_rss_parts_table(struct rd_doc *d, const char *key, const struct rd_rss *r);
void rd_rss_sites_table(struct rd_doc *d, const char *key, const struct rd_rss *r, const struct rd_vec *sites,
			int64_t limit);
/* The split of pid's snapshot with the kernel's figures and the highest
** resident set, a map one first (it has the regions), with its sites;
** r.snap 0 when none has them.  That snapshot is left selected. */
struct rd_rss_last {
	struct rd_rss r;
	struct rd_tags tags;
	struct rd_vec sites;
	const char *trigger;
};
int rd_rss_last(rd_db_t *db, const struct rd_opts *o, int64_t pid, struct rd_rss_last *l);
void rd_rss_last_free(struct rd_rss_last *l);
/* Report's section (tables rss, rss_parts, rss_sites): rd_rss_last's
** split; nothing when no snapshot has the figures.  The selection is kept. */
int rd_rss_section(struct rd_doc *d, rd_db_t *db, const struct rd_opts *o, int64_t pid, int64_t limit);

/* "rd_timeline.c": the memory of one process over time (inspect timeline,
** inspect html).  The points: every snapshot of pid with a total, oldest
** first (rd_vec of struct rd_tl_point; trigger in the db's pool). */
struct rd_tl_point {
	int64_t id, elapsed_ns;
	const char *trigger;
	uint64_t bytes, blocks, max_ever;
};
int rd_timeline_points(rd_db_t *db, int64_t pid, struct rd_vec *pts);
/* The series by type, class or thread: the `limit` entries whose current
** bytes rose highest at any point (then by id), and "other" (s[ns]) with
** the rest added up when there is a rest; their bytes and blocks at every
** point (n * k, point-major); names from the last point's snapshot (which
** it selects).  0 or an exit code after one line; free in every case. */
enum { RD_TL_TYPE, RD_TL_CLASS, RD_TL_THREAD };
extern const char *const rd_tl_kinds[]; /* "types", "classes", "threads" */
struct rd_tl_series {
	int64_t id;              /* other: 0 */
	const char *name, *where; /* where: a type's file:line, or NULL      */
};
struct rd_tl_by {
	int kind;                /* RD_TL_*, set by the caller                */
	struct rd_tl_series *s;  /* the series by size, then "other"          */
	int ns, k;               /* series of entries; columns (ns, +1 with other) */
	size_t rest;             /* entries added up as other                 */
	uint64_t *bytes, *blocks;
	struct rd_tags tags;     /* the names' (loaded for the last snapshot) */
	bool tags_loaded;
};
int rd_timeline_by(rd_db_t *db, int64_t pid, const struct rd_tl_point *p, size_t n, int limit, bool no_symbols,
		   struct rd_tl_by *b);
void rd_timeline_by_free(struct rd_tl_by *b);
/* ------------------------------------------------------------- rd_out -- */

enum rd_kind {
	RD_K_STR,
	RD_K_INT,    /* signed integer                              */
	RD_K_SIZE,   /* bytes: human-readable in text               */
	RD_K_DELTA,  /* signed bytes: "+1.5 KiB" in text            */
	RD_K_ADDR,   /* 0x… in text, a number elsewhere             */
	RD_K_TIME,   /* epoch ns: a date in text, ms elsewhere      */
	RD_K_DUR,    /* ns: one unit per column in text, ms elsewhere */
	RD_K_PCT,    /* a percentage (double)                       */
	RD_K_BOOL,   /* yes/no in text, true/false elsewhere        */
	RD_K_LOC,    /* "file:line" in text; "file" and "line" fields in
			  JSON and CSV (the column's key is not used) */
	RD_K_STACK,  /* frames (rd_stack_add): lines indented under
			  the row in text, an array of frame objects in
			  JSON, one cell of frames joined by " <- " in CSV */
};

/* Column flags: shown in text only, in JSON and CSV only, or (OPTIONAL)
** left out of text when every cell of the column is null; SPARE: text
** narrower than the table leaves it out before the others. */
enum { RD_C_TEXT_ONLY = 1, RD_C_DATA_ONLY = 2, RD_C_OPTIONAL = 4, RD_C_SPARE = 8 };

struct rd_col {
	const char *key;   /* the JSON key and CSV header            */
	const char *head;  /* the text heading                       */
	enum rd_kind kind;
	unsigned flags;
};

typedef struct rd_doc rd_doc_t;
typedef struct rd_table rd_table_t;

/* Table flags: SINGLE: one row, a JSON object, "label: value" lines in
** text; DATA: left out of text unless asked for with --table. */
enum { RD_T_SINGLE = 1, RD_T_DATA = 2 };

/* "rd_out.c" */
rd_doc_t *rd_doc_new(const struct rd_opts *o, const struct rd_args *a);
rd_table_t *rd_doc_table(rd_doc_t *d, const char *key, const struct rd_col *cols,
			     int ncols, unsigned flags);
/* The heading printed above a table in text (copied). */
void rd_table_title(rd_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line printed under a table in text only (copied). */
void rd_table_note(rd_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rd_row(rd_table_t *t);
void rd_put_int(rd_table_t *t, int64_t v);
void rd_put_uint(rd_table_t *t, uint64_t v);
void rd_put_pct(rd_table_t *t, double v);
void rd_put_str(rd_table_t *t, const char *s);      /* copied */
/* Not copied: s must live as long as the document (names of the tags). */
void rd_put_const(rd_table_t *t, const char *s);
void rd_put_null(rd_table_t *t);
/* The table as `"key": ...` on f in JSON, whatever the document's format:
** a table of one command inside another's own JSON (analyse's images). */
void rd_table_json(const rd_table_t *t, FILE *f);
/* "rd_end.c": the "end" table: how process pid ended (exit status, signal,
** OOM kill, or no exit record) and its last snapshot; nothing when pid
** stored none.  The launcher's note of an OOM kill begins with RD_OOM_NOTE. */
#define RD_OOM_NOTE "killed by the kernel's OOM killer"
int rd_end_table(rd_doc_t *d, rd_db_t *db, int64_t pid);
/* The snapshot row as a table named `key` (a DATA table), and in text a
** heading line that says the same. */
void rd_doc_snapshot(rd_doc_t *d, const char *key, const char *file,
		       const struct rd_snap *s);
/* Print everything; returns 0, or RD_EXIT_USAGE when --table names no
** table of this command. */
int rd_doc_print(rd_doc_t *d);
/* Stream table t, the last of the document, in JSON and CSV: print what
** comes before it now and each of its rows once complete (a no-op in text
** or when t is not printed).  Returns 0 or RD_EXIT_USAGE as above; the
** document must still be finished with rd_doc_print. */
int rd_doc_stream(rd_doc_t *d, rd_table_t *t);
void rd_doc_free(rd_doc_t *d);
/* ------------------------------------------------------------- rd_fmt -- */

/* "rd_fmt.c" */
/* "512 B", "1.5 KiB" … (the same rounding as libmeminst's status print). */
void rd_fmt_size(uint64_t v, char *buf, size_t len);
void rd_fmt_delta(int64_t v, char *buf, size_t len);
void rd_fmt_time(int64_t ns, char *buf, size_t len);
/* A duration alone, three significant digits ("92.1 µs", "1.50 s"). */
void rd_fmt_dur(int64_t ns, char *buf, size_t len);
/* The unit (0 ns, 1 µs, 2 ms, 3 s) that suits a largest value of ns, and a
** duration written in it with three decimals: one unit for a column. */
int rd_dur_unit_of(uint64_t ns);
void rd_fmt_dur_in(int64_t ns, int unit, char *buf, size_t len);
/* ns as milliseconds with three decimals ("1500.000"). */
void rd_fmt_ms(int64_t ns, char *buf, size_t len);
void rd_json_str(FILE *f, const char *s);
/* A message on f (stderr): printf's format, then every control byte and
** invalid UTF-8 of the result but a final newline written as rd_text_str
** writes it, so that a file or stored name holding a newline or a terminal
** escape stays on the one line.  Every message of the readers goes
** through it. */
void rd_errf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rd_verrf(FILE *f, const char *fmt, va_list ap);
void rd_csv_str(FILE *f, const char *s);
/* s made printable on one line (controls and bad UTF-8 as \xNN); the
** result is in buf, *width gets its width in columns. */
void rd_text_str(const char *s, char *buf, size_t len, size_t *width);
/* s written to f as rd_text_str shows it, whatever its length. */
void rd_text_put(FILE *f, const char *s);
/* Display width of a valid UTF-8 string (code points). */
size_t rd_text_width(const char *s);
/* A text cell of *width characters cut to max in its middle ("…"). */
void rd_text_cut(char *buf, size_t *width, size_t max);
/* A site's stack as one string, innermost frame first: each frame a line
** of function, file, line, module and whether it was inlined into the next
** frame, tab-separated (a NULL or 0 part: unknown).  rd_stack_add returns
** `stack` with one frame more, in the pool; the others print one. */
const char *rd_stack_add(struct rd_pool *p, const char *stack, const char *func, const char *file,
			   int line, const char *module, bool inlined);
/* One frame of such a stack, read with rd_stack_next: false at the end,
** else *s moved past the frame (parts longer than the buffers cut). */
struct rd_stack_frame {
	char func[512], file[512], module[256];
	int line;
	bool inlined;            /* inlined into the next frame               */
};
bool rd_stack_next(const char **s, struct rd_stack_frame *fr);
void rd_stack_text(FILE *f, const char *stack, size_t width);
void rd_stack_json(FILE *f, const char *stack);
void rd_stack_csv(FILE *f, const char *stack);
/* Whether site row `row` (from 0) of a command shows its stack: the first
** --stacks N rows; without --stacks, the first `dflt` rows in text and
** every row in JSON and CSV. */
bool rd_stack_row(const struct rd_args *a, size_t row, size_t dflt);
/* The rows with stacks in text by default where they are (report, the
** list of what was live at exit). */
#define RD_STACKS_DEFAULT 5
/* Narrow the widest columns that may be cut (to 16 at least) until the n
** columns of widths wid (0: not shown), two spaces apart, fit width. */
void rd_fit_widths(size_t *wid, const bool *can_cut, int n, size_t width);
/* -------------------------------------------------------- rd_progress -- */

struct rd_progress {
	FILE *err;
	bool on, shown;
	const char *what;
	uint64_t total;
	double t0, last;
};

/* "rd_progress.c" */
void rd_progress_start(struct rd_progress *p, const struct rd_opts *o,
			 const char *what, uint64_t total);
/* Cheap: looks at the clock once every 64 Ki steps. */
void rd_progress_step(struct rd_progress *p, uint64_t done);
void rd_progress_end(struct rd_progress *p);
/* --------------------------------------------------------- rd_symbols -- */

/* One row of the module table. */
struct rd_module {
	uint64_t base;
	const char *path, *build_id;
};

/* One function of an inline chain and the source line it was at. */
struct rd_frame {
	char *func; /* demangled, or NULL when DWARF has no name */
	char *file; /* or NULL                                   */
	int line;
};

struct rd_sym {
	char *func;         /* demangled, or NULL when unknown        */
	uint64_t off;       /* site - function start                  */
	const char *module; /* basename of the module file            */
	char *file;         /* source file, or NULL                   */
	int line;
	/* The inline chain from the DWARF scopes, innermost first: chain[0]
	** is the code at the site's own line, each next one the function it
	** was inlined into, at the line of that call; chain[nchain - 1] is the
	** function of the symbol.  Empty without debug information. */
	struct rd_frame *chain;
	size_t nchain;
	bool system_module; /* the module is a system library         */
};

typedef struct rd_syms rd_syms_t;

/* "rd_symbols.c" */
rd_syms_t *rd_syms_new(const struct rd_module *mods, size_t n);
/* Resolve a call site (a return address).  Returns 0 and fills sym (free
** it with rd_sym_clear), or -1: no usable module covers the site. */
int rd_syms_lookup(rd_syms_t *s, uint64_t site, struct rd_sym *sym);
/* The same in module m alone (one unloaded before the snapshot, at the
** load bias it had: rd_tags.gone), whatever the module table says is
** at that address now. */
int rd_syms_lookup_in(rd_syms_t *s, const struct rd_module *m, uint64_t site, struct rd_sym *sym);
void rd_sym_clear(struct rd_sym *sym);
/* The entry of the function holding the code at pc when no symbol names
** it (stripped code): the start of the unwind table entry (.eh_frame FDE)
** that covers pc, as a run-time address, with its address in the file
** and the module's basename; 0 when none covers it.  s may be NULL. */
uint64_t rd_syms_fde_entry(rd_syms_t *s, uint64_t pc, uint64_t *file_entry, const char **module);
void rd_syms_free(rd_syms_t *s);
/* on: the last rd_syms made is kept when freed and given back, with the
** lookups it made, by rd_syms_new for the same modules (a server reading
** one process's snapshots again and again); off: it goes. */
void rd_syms_keep(bool on);
/* Name an automatic type (n: name, site, frames) from syms, or from the
** module `gone` alone (unloaded before; NULL: none) as every reader names
** it: n's label, where and chain, in p (rd_names.c). */
struct rd_name;
void rd_name_resolve(struct rd_pool *p, rd_syms_t *syms, const struct rd_module *gone,
		       struct rd_name *n);
/* One frame of a name as stored or shown, "f+0x1 (m)": its module, in p
** (NULL without "(m)" at its end), and in *flen the length of the function
** before it, spaces left out. */
const char *rd_name_part_module(struct rd_pool *p, const char *part, size_t *flen);
/* The demangled form of a C++ symbol (malloc'd), or NULL if not mangled;
** its template arguments folded unless rd_set_full_names(true). */
char *rd_demangle(const char *name);
/* "std::map<std::string, int>::operator[]" becomes "std::map<>::operator[]"
** in place: every template argument list is emptied, operators (<<, ->,
** <=> …) kept, and a template instance's return type dropped; a name whose
** brackets do not balance is left whole. */
void rd_fold_templates(char *name);
/* A source file of a system header or library (/usr/include, /usr/lib,
** a compiler's own headers, glibc's build paths), not the user's code. */
bool rd_path_is_system(const char *path);
/* The frame of the chain a user acts on, or -1 when every frame is in
** system code: when the site is inside system code (std:: templates
** inlined into the program), the innermost frame in the user's own source,
** the line that called into them; when the site is in the user's code
** itself, the outermost one (inline wrappers folded into their callers). */
int rd_sym_user_frame(const struct rd_sym *sym);
/* ----------------------------------------------------------- rd_strace -- */

/* "rd_strace.c" */
/* 1 when path is a session database (meminst(1)) with stored traces. */
int rd_is_session(const char *path);
/* 0, or a run row (session_run) no meminst writes said on one line (its
** first bad column: "pid", "exit_code"..., or "not one run row") and
** RD_EXIT_DB. */
int rd_session_run_check(rd_db_t *db);
/* The trace of process *pid (0: the session's program, set on return)
** stored in a session, as a stream of *size bytes; NULL with *code set
** after one line on o->err. */
FILE *rd_strace_open(const char *path, const struct rd_opts *o, int64_t *pid, uint64_t *size,
		       int *code);
/* The image of the process rd_strace_open reads (--image N; -1: the one
** with the most samples, its default); returns the one set before.  One
** command runs per inspect, so it is the command's setting. */
int64_t rd_strace_want_image(int64_t image);
int64_t rd_strace_wanted(void);
/* What the last rd_strace_open read: the process, its image (-1: the
** whole of the pid's trace, a process that ran one program) and how many
** images the process has (each program it ran; 0: nothing read yet);
** refused: it read nothing, the process has no image --image's number
** (a command that goes on without a trace must not, then). */
struct rd_strace_read {
	int64_t pid, image, images;
	bool refused;
};
struct rd_strace_read rd_strace_last(void);

/* ---------------------------------------------------------- rd_session -- */

/* What a reading command starts with ("rd_names.c"): open the database
** named by its first positional argument, select the snapshot and load its
** tags. */
struct rd_session {
	rd_db_t *db;
	struct rd_tags tags;
	bool tags_loaded;
};
int rd_session_open(struct rd_session *s, const struct rd_opts *o,
		      const struct rd_args *a, const char *path, enum rd_need need);
int rd_session_tags(struct rd_session *s, const struct rd_args *a);
/* The tags, and the command's filters (a->filter) resolved against them. */
int rd_session_filter(struct rd_session *s, const struct rd_args *a, struct rd_filter_ids *f);
void rd_session_close(struct rd_session *s);

#endif /* READER_INT_H */
