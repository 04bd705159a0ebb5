/*
** reader_int.h — the reader toolkit: what every reading command of
** `inspect` shares, the memory commands (inspect/) and the time commands
** and exports (profile/) alike.  Nothing here knows a command; the files
** of the snapshot and trace formats are read through it.  Prototypes are
** grouped under the file that defines them.
**
**   insp_args.c        the command-line parser shared by every command
**                      (the launcher, session/meminst.c, links it too)
**   insp_util.c        memory, the string pool, the growable vector, clock
**   insp_db.c          the one snapshot reader: open read-only, check, pick
**   insp_chunk.c       the block_chunk decoder (also in meminst_sqlite)
**   insp_names.c       allocator/class/type/thread names and filters, and
**                      the session (database + snapshot + tags) of a command
**   insp_out.c         result tables rendered as text, --json or --csv
**   insp_fmt.c         value formatting and escaping for those renderings
**   insp_progress.c    the progress bar on a terminal's stderr
**   insp_symbols.c     offline symbolisation of call sites with libdw
**   insp_strace.c      trace files stored in a session database
**
** The runtime (alloc/, trace/) never includes this header.
**
** Exit codes (documented in inspect(1)): INSP_EXIT_*.  Functions that can
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

#include "insp_chunk.h"

enum insp_exit {
	INSP_EXIT_OK = 0,
	INSP_EXIT_NOTFOUND = 1, /* the snapshot, type … asked for does not exist */
	INSP_EXIT_USAGE = 2,
	INSP_EXIT_DB = 3,       /* unreadable or invalid database              */
	INSP_EXIT_LIVE = 4,     /* live process unreachable or refused         */
};

struct insp_progress;

/* What main hands every command. */
struct insp_opts {
	FILE *out;           /* the result                                    */
	FILE *err;           /* messages and the progress bar                 */
	bool progress;       /* stderr is a terminal: progress bars allowed   */
	bool no_symbols;     /* never open module files (the fuzzer sets it)  */
	bool no_control;     /* never open sockets (the fuzzer sets it)       */
	int columns;         /* text width: $COLUMNS, the terminal's, or 0:
				never cut (see insp_text_columns)             */
};

/* ------------------------------------------------------------ insp_args -- */

enum insp_format { INSP_FMT_TEXT = 0, INSP_FMT_JSON, INSP_FMT_CSV };

/* The status kinds, in the order of MEMINST_SNAPSHOT_KINDS. */
enum { INSP_KIND_TOTAL = 0, INSP_KIND_ALLOCATORS, INSP_KIND_CLASSES,
       INSP_KIND_TYPES, INSP_KIND_THREADS, INSP_KIND_COUNT };

/* The filters as given (numbers or names, resolved per snapshot). */
struct insp_filter {
	const char *type, *class_, *thread, *allocator;
};

struct insp_args {
	const char *cmd;           /* the command's name, for messages   */
	const char *pos[2];        /* positional arguments               */
	int npos;
	int64_t snapshot;          /* 0: not given                       */
	enum insp_format format;
	const char *table;         /* --table NAME: render only that one */
	struct insp_filter filter;
	int64_t limit;             /* -1: not given                      */
	uint64_t min;              /* --min SIZE                         */
	bool all;
	unsigned kinds;            /* bit set of 1 << INSP_KIND_*; 0: none given */
	int64_t pid;               /* 0: not given                       */
	const char *output;
	int64_t from, to;          /* 0: not given                       */
	const char *by;
	bool no_symbols;
	bool live_at_exit;
	int64_t stacks;            /* --stacks N; 0 none; -1 not given    */
};

/* The kind of value an option takes. */
enum insp_opt_type {
	INSP_OT_FLAG,   /* none                                           */
	INSP_OT_STR,    /* any word                                       */
	INSP_OT_FILE,   /* a file name                                    */
	INSP_OT_INT,    /* an integer from lo to hi (decimal or 0x hex)   */
	INSP_OT_SIZE,   /* a size: 4096, 4K, 1MiB                         */
	INSP_OT_REAL,   /* a number from lo to hi, decimals allowed       */
	INSP_OT_WORD,   /* one of words[]                                 */
	INSP_OT_MAYBE,  /* a file name that may be left out (--dump [FILE]):
			   "=FILE", or the next word when the positional
			   arguments are complete without it               */
	INSP_OT_DURATION, /* a number and a unit (ns, us, ms, s, m), or 0:
			   g->num is in ns                                  */
};

/* One option of a command.  A command's options are one table, ended by
** an entry with a NULL name; an entry named "" is a heading in --help.
** The same table gives the parser, --help (insp_args_help) and, through
** --help, the bash completion (scripts/meminst-completion.bash). */
struct insp_option {
	const char *name;          /* the long name without "--"             */
	char short_name;           /* 'o' for -o, or 0                       */
	enum insp_opt_type type;
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
** one kind of value.  Commands number their own options from INSP_ID_OWN. */
enum {
	INSP_ID_HELP = 1, INSP_ID_SNAPSHOT, INSP_ID_JSON, INSP_ID_CSV, INSP_ID_TABLE,
	INSP_ID_TYPE, INSP_ID_CLASS, INSP_ID_THREAD, INSP_ID_ALLOCATOR, INSP_ID_LIMIT,
	INSP_ID_MIN, INSP_ID_ALL, INSP_ID_KIND, /* + INSP_KIND_* */
	INSP_ID_PID = INSP_ID_KIND + INSP_KIND_COUNT, INSP_ID_OUTPUT, INSP_ID_APPEND,
	INSP_ID_FROM, INSP_ID_TO, INSP_ID_BY, INSP_ID_NO_SYMBOLS, INSP_ID_FULL_NAMES,
	INSP_ID_LIVE_AT_EXIT, INSP_ID_FORCE, INSP_ID_STACKS,
	INSP_ID_OWN = 100,
};

#define INSP_INT_MAX INT64_MAX
#define INSP_OPTION_SNAPSHOT(help) {"snapshot", 0, INSP_OT_INT, "N", help, INSP_ID_SNAPSHOT, 1, INSP_INT_MAX, NULL}
#define INSP_OPTION_PID(help) {"pid", 0, INSP_OT_INT, "PID", help, INSP_ID_PID, 1, INSP_INT_MAX, NULL}
#define INSP_OPTION_LIMIT(help) {"limit", 0, INSP_OT_INT, "N", help, INSP_ID_LIMIT, 0, INSP_INT_MAX, NULL}
#define INSP_OPTION_OUTPUT(help) {"output", 'o', INSP_OT_FILE, "FILE", help, INSP_ID_OUTPUT, 0, 0, NULL}
#define INSP_OPTION_FORCE {"force", 'f', INSP_OT_FLAG, NULL, "replace the -o FILE if it holds something", \
	INSP_ID_FORCE, 0, 0, NULL}
#define INSP_OPTION_APPEND(help) {"append", 0, INSP_OT_FLAG, NULL, help, INSP_ID_APPEND, 0, 0, NULL}
#define INSP_OPTION_JSON {"json", 0, INSP_OT_FLAG, NULL, \
	"one JSON document (sizes in bytes, times in ms)", INSP_ID_JSON, 0, 0, NULL}
#define INSP_OPTION_CSV(help) {"csv", 0, INSP_OT_FLAG, NULL, help, INSP_ID_CSV, 0, 0, NULL}
#define INSP_OPTION_TABLE {"table", 0, INSP_OT_STR, "NAME", "print only the table NAME of the result", \
	INSP_ID_TABLE, 0, 0, NULL}
/* --json --csv --table: the result tables of insp_out.c. */
#define INSP_OPTIONS_FORMAT INSP_OPTION_JSON, \
	INSP_OPTION_CSV("comma-separated values, one table after another"), INSP_OPTION_TABLE
#define INSP_OPTIONS_FILTER \
	{"type", 0, INSP_OT_STR, "N|NAME", "only blocks of this type", INSP_ID_TYPE, 0, 0, NULL}, \
	{"class", 0, INSP_OT_STR, "N|NAME", "only blocks whose type is in this class", INSP_ID_CLASS, 0, 0, NULL}, \
	{"thread", 0, INSP_OT_STR, "N", "only blocks allocated by meminst thread N", INSP_ID_THREAD, 0, 0, NULL}, \
	{"allocator", 0, INSP_OT_STR, "N|NAME", "only blocks from this allocator (malloc, new…)", \
	 INSP_ID_ALLOCATOR, 0, 0, NULL}
#define INSP_OPTION_NO_SYMBOLS(help) {"no-symbols", 0, INSP_OT_FLAG, NULL, help, INSP_ID_NO_SYMBOLS, 0, 0, NULL}
#define INSP_OPTION_FULL_NAMES {"full-names", 0, INSP_OT_FLAG, NULL, \
	"keep C++ template arguments (std::map<>::… by default)", INSP_ID_FULL_NAMES, 0, 0, NULL}
#define INSP_OPTIONS_SYMBOLS \
	INSP_OPTION_NO_SYMBOLS("show call sites as stored, without reading module files"), \
	INSP_OPTION_FULL_NAMES
/* --stacks N|none: the frames of the first N site rows under them in text
** (`dflt` rows unless given), in a "stack" field of every row in JSON and
** CSV unless given. */
#define INSP_OPTION_STACKS(help) {"stacks", 0, INSP_OT_STR, "N|none", help, INSP_ID_STACKS, 0, 0, NULL}
#define INSP_OPTION_END {NULL, 0, INSP_OT_FLAG, NULL, NULL, 0, 0, 0, NULL}

struct insp_cmd_spec {
	const char *name;          /* the command; NULL for a program of
				      its own (prog)                      */
	const char *synopsis;      /* after "inspect NAME "              */
	const char *help;          /* what NAME --help says before the options */
	const struct insp_option *options; /* the command's option table */
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

#define INSP_CONTINUE (-1)
#define INSP_OPTION (-2)

/* The parser's state over one command line. */
struct insp_getopt {
	const struct insp_cmd_spec *spec;
	const struct insp_opts *o;
	int argc, i;
	char **argv;
	bool dashdash;                /* after "--": positional only      */
	const char *cluster;          /* "-fq": the letters still to read */
	/* the option just read (INSP_OPTION) and its value, checked */
	const struct insp_option *opt;
	const char *value;            /* as given; NULL for a flag        */
	int64_t num;                  /* INT                              */
	uint64_t size;                /* SIZE                             */
	double real;                  /* REAL                             */
	int word;                     /* WORD: the index in words[]       */
	int format_id;                /* --json or --csv, once given      */
	/* the positional arguments, in order */
	const char *pos[8];
	int npos;
	int maybe;                    /* pos index of a MAYBE value, or -1 */
	const char *maybe_value;      /* after the last call: the MAYBE
					 option's final value, or NULL    */
};

/* "insp_args.c" */
/* The one command-line parser.  Options may come before or after the
** positional arguments, "--opt=value" or "--opt value", "-o FILE" or
** "-oFILE"; "--" ends the options.  Each call reads the next option and
** returns INSP_OPTION (g->opt, its value checked and converted), or
** INSP_CONTINUE when all is read and the positional arguments number from
** spec->min_pos to spec->max_pos, or an exit code: 0 after --help, 2 after
** one line naming the mistake (unknown option, with the nearest one of the
** command; missing or bad value; an option of another command; too many or
** too few arguments). */
void insp_getopt_init(struct insp_getopt *g, const struct insp_cmd_spec *spec, int argc, char **argv,
		      const struct insp_opts *o);
int insp_getopt(struct insp_getopt *g);
/* The command's --help, made from spec and its option table. */
void insp_args_help(const struct insp_cmd_spec *spec, FILE *f);
/* A usage error of the command of spec, worded as the parser's own:
** "inspect: NAME: msg (see 'inspect NAME --help')", or "meminst: msg (see
** 'meminst --help')" for a program of its own.  Returns INSP_EXIT_USAGE. */
int insp_cmd_error(const struct insp_opts *o, const struct insp_cmd_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of g's option is not one it takes: "--NAME takes EXPECTED,
** not 'VALUE'" (for a check the table cannot make).  Returns 2. */
int insp_bad_value(struct insp_getopt *g, const char *expected);
/* Parse the shared vocabulary into a (the memory commands and report):
** every option of spec's table must be an INSP_ID_* one.  Returns
** INSP_CONTINUE, or an exit code once --help was printed (0) or a usage
** error (2). */
int insp_args_parse(const struct insp_cmd_spec *spec, int argc, char **argv,
		    const struct insp_opts *o, struct insp_args *a);
/* The same, with the command's own options (INSP_ID_OWN and above) given to
** own, which returns INSP_CONTINUE or an exit code. */
int insp_args_parse_own(const struct insp_cmd_spec *spec, int argc, char **argv, const struct insp_opts *o,
			struct insp_args *a, int (*own)(struct insp_getopt *g, void *ctx), void *ctx);
/* Print "inspect: NAME: msg" and the --help hint; returns INSP_EXIT_USAGE. */
int insp_usage_error(const struct insp_opts *o, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* --full-names: keep template arguments in every name printed.  A display
** choice of the one command a process runs, set by the parser (to false
** unless asked) so that a command run after another in the same process
** (the unit tests) does not inherit it. */
void insp_set_full_names(bool on);
bool insp_full_names(void);
/* Strict numbers: decimal or 0x hex, the whole string. */
bool insp_parse_int(const char *s, int64_t *out);
/* Sizes: a number with an optional unit k, M or G (powers of 1024, either
** case), an optional i after it, and an optional B: 4096, 4K, 4KiB, 1MB. */
bool insp_parse_size(const char *s, uint64_t *out);
/* Durations: 0, or a number and a unit ns, us, ms, s or m, in ns. */
bool insp_parse_duration(const char *s, uint64_t *ns);

/* ------------------------------------------------------------ insp_util -- */

/* "insp_util.c" */
/* An output file (-o FILE) that is an input of the command, by any name:
** writing it would destroy what is read.  Says so on o->err and returns
** true; false for standard output ("-" or NULL) and a file not there yet. */
bool insp_out_is_input(const struct insp_opts *o, const char *out, const char *in);
/* The file a command writes (-o FILE), or standard output (NULL or "-").
** A new file is written beside FILE and renamed into place once whole, so a
** failed write (disk full, ulimit -f) leaves neither a cut file nor a lost
** old one; a device, FIFO or symbolic link to one is written as it is. */
struct insp_outfile {
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
/* The checks insp_outfile_open makes of out, made early (before a long
** read): 0, or the exit status after one line on o->err. */
int insp_outfile_refused(const struct insp_opts *o, const char *out, bool force, bool append,
			 const char *const *ins, size_t n);
int insp_outfile_open(const struct insp_opts *o, struct insp_outfile *of, const char *out, bool force,
		      bool append, const char *const *ins, size_t n);
/* Closes it: keep puts the new file in place, !keep (the command failed)
** removes it.  A write error is one line on o->err and INSP_EXIT_DB, and
** the new file removed.  Returns 0 or the status. */
int insp_outfile_close(const struct insp_opts *o, struct insp_outfile *of, bool keep);
/* Allocation that cannot fail: out of memory prints one line and exits 3. */
void *insp_xmalloc(size_t n);
void *insp_xcalloc(size_t n, size_t size);
void *insp_xrealloc(void *p, size_t n);
char *insp_xstrdup(const char *s);

/* A growable array of fixed-size elements. */
struct insp_vec {
	void *v;
	size_t n, cap, elem;
};
void insp_vec_init(struct insp_vec *vec, size_t elem);
void *insp_vec_push(struct insp_vec *vec); /* a zeroed new element */
void insp_vec_free(struct insp_vec *vec);
/* The element of the n at v, `size` bytes each, sorted by the int64_t each
** starts with, that starts with id (the first, if several); NULL if none. */
const void *insp_find_id(const void *v, size_t n, size_t size, int64_t id);

/* A pool of strings freed all at once. */
struct insp_pool {
	struct insp_pool_chunk *head;
};
const char *insp_pool_str(struct insp_pool *p, const char *s);
const char *insp_pool_fmt(struct insp_pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void insp_pool_free(struct insp_pool *p);

/* Monotonic seconds. */
double insp_now(void);
/* The width text output may take: $COLUMNS when it is a number, else the
** terminal's when out is one, else 0 (a file or a pipe: nothing is cut). */
int insp_text_columns(FILE *out);
/* -------------------------------------------------------------- insp_db -- */

/* One row of the snapshot table. */
struct insp_snap {
	int64_t id;
	const char *content, *trigger, *exe, *cmdline, *mode, *backend;
	int64_t pid, ppid, header_size, time_ns, elapsed_ns, pause_ns, seq;
	int64_t blocks, bytes;
};

struct insp_seg {
	uint64_t start, end, offset;
	const char *perms, *path;
};

struct insp_block {
	uint64_t addr, size;
	int64_t type, thread, allocator, seq;
};

/* What a command needs from the snapshot it is given by default: any, a
** block map, or status rows. */
enum insp_need { INSP_NEED_ANY = 0, INSP_NEED_MAP, INSP_NEED_STATUS };

typedef struct insp_db insp_db_t;

/* A filter as numbers of the snapshot's tables. */
struct insp_filter_ids {
	bool has_type, has_class, has_thread, has_allocator;
	int64_t type, class_, thread, allocator;
};

/* A snapshot's blocks in address order, filtered: from the block_chunk
** rows through the decoder (schema 2) or from the block rows (schema 1). */
typedef struct insp_blocks {
	insp_db_t *db;
	sqlite3_stmt *st;
	bool chunked;                /* schema 2                             */
	bool in_chunk;               /* chunk holds the row st is on         */
	struct insp_chunk chunk;
	int64_t chunk_first;         /* for the damage message               */
	uint64_t end;                /* end of the block before (addr + size) */
	struct insp_filter_ids f;    /* has_* all false: no filter           */
	int64_t *class_types;        /* --class: its types, sorted           */
	size_t nclass_types;
} insp_blocks_t;

/* Who allocated the blocks live at exit (`top --live-at-exit`): a session's
** exit snapshot joined with its trace (profile/prof_live.c).  inspect's
** main sets it; where the profile reader is not linked in (the unit tests,
** the fuzzer) it stays NULL.  open gives NULL when the session at path has
** no trace that names them (process pid, its exit snapshot snap); put adds
** one row's cells of the INSP_LIVE_COLS, "allocated in" (text), "function"
** and "functions" (JSON, CSV), for a type.  They end a table's columns
** (top --live-at-exit, report's live at exit: prof_live_put fills them). */
struct insp_table;
struct insp_live_fns {
	void *(*open)(const char *path, int64_t pid, int64_t snap, const struct insp_opts *o);
	void (*put)(void *ctx, struct insp_table *t, int64_t type);
	void (*close)(void *ctx);
};
extern const struct insp_live_fns *insp_live_fns;
#define INSP_LIVE_NCOLS 3
#define INSP_LIVE_COLS \
	{"allocated_in", "allocated in", INSP_K_STR, INSP_C_TEXT_ONLY | INSP_C_OPTIONAL}, \
	{"function", "function", INSP_K_STR, INSP_C_DATA_ONLY}, \
	{"functions", "functions", INSP_K_INT, INSP_C_DATA_ONLY}

/* "insp_events.c": the event counters (meminst-snapshot(5)). */
struct insp_events_snaps {
	int64_t pid;
	int64_t counts, peak, exit; /* snapshot numbers; exit 0: none */
};
struct insp_events_summary {
	uint64_t calls, allocated, frees, temporary, reallocs;
	uint64_t peak, peak_rss, leaked, leaked_blocks;
	uint64_t peak_held; /* live bytes in the peak snapshot */
	bool has_rss, has_exit;
};
#define INSP_SIZE_BUCKETS 48
bool insp_events_stored(insp_db_t *db);
int insp_events_pick(insp_db_t *db, int64_t pid, int64_t want, struct insp_events_snaps *out);
int insp_events_summary(insp_db_t *db, const struct insp_events_snaps *p, struct insp_events_summary *out);
int insp_sizes_read(insp_db_t *db, int64_t snap, int64_t type, uint64_t out[INSP_SIZE_BUCKETS]);

/* "insp_db.c" */
/* Open path read-only and check it is one of ours and intact.  Returns 0,
** or INSP_EXIT_DB after printing "inspect: PATH: reason". */
int insp_db_open(const char *path, const struct insp_opts *o, insp_db_t **out);
void insp_db_close(insp_db_t *db);
const char *insp_db_path(const insp_db_t *db);
sqlite3 *insp_db_sqlite(insp_db_t *db); /* for `inspect sql` only */
const struct insp_opts *insp_db_opts(const insp_db_t *db);
/* Pick snapshot `want` (0: the latest one that has what `need` asks for)
** and load its row.  Returns 0, INSP_EXIT_NOTFOUND or INSP_EXIT_DB. */
int insp_db_select(insp_db_t *db, int64_t want, enum insp_need need);
const struct insp_snap *insp_db_snap(const insp_db_t *db);
/* The map snapshot before the selected one (0 if none). */
int insp_db_previous_map(insp_db_t *db, int64_t before, int64_t *out);
/* The last exit snapshot with a block map (of pid, unless 0): 0 and *out,
** or INSP_EXIT_NOTFOUND after a message. */
int insp_db_exit_map(insp_db_t *db, int64_t pid, int64_t *out);
/* The process a command is about: `given` if not 0, else a session's
** program (meminst(1)), else the process with the most snapshots.
** Returns 0 or INSP_EXIT_NOTFOUND (no snapshot at all) / INSP_EXIT_DB. */
int insp_db_main_pid(insp_db_t *db, int64_t given, int64_t *pid);
/* Every snapshot row, oldest first. */
int insp_db_list(insp_db_t *db, struct insp_snap **out, size_t *n);
/* The selected snapshot's segments, by start address. */
int insp_db_segments(insp_db_t *db, struct insp_seg **out, size_t *n);
/* Report the last SQLite error on the selected database; returns 3. */
int insp_db_fail(insp_db_t *db, const char *what);
/* sqlite3_errmsg(db) on one line, controls as \xNN (a crafted file's text
** may hold newlines and terminal escapes); valid until the next call. */
const char *insp_sql_msg(sqlite3 *db);
/* The file a reading command (analyse, profile, report, export) is given:
** a readable regular file (a FIFO would block the reader), and an SQLite
** file no writer holds locked.  0, or INSP_EXIT_DB after one line. */
int insp_input_check(const struct insp_opts *o, const char *path);
/* "insp_open.c" */
#define INSP_LOCKED_MSG "database is locked (a process is writing it; try again when it has finished)"
/* path opened read-only as every reader opens a file (never created; views,
** triggers and extension loading off; the schema not trusted; a writer
** waited for): the handle, whose errcode says whether the open worked, or
** NULL when out of memory.  For probes; readers use insp_sqlite_open. */
sqlite3 *insp_sqlite_connect(const char *path);
/* insp_sqlite_connect, then insp_sqlite_check: 0 and *db, or the exit
** status after one line. */
int insp_sqlite_open(const struct insp_opts *o, const char *path, sqlite3 **db);
/* A schema meminst never writes (a view, a trigger or a virtual table, by
** any name) refused: 0, or INSP_EXIT_DB after one line naming it. */
int insp_sqlite_check(const struct insp_opts *o, const char *path, sqlite3 *db);
/* SQLite's last error on db, said as every reader says it (hot journal,
** damage, not SQLite, locked, else "what: message"); returns 3. */
int insp_sqlite_fail(const struct insp_opts *o, const char *path, sqlite3 *db, const char *what);
/* A file that is not ours beside a journal or WAL file a killed store left:
** one line naming the journal and INSP_EXIT_DB, else 0 (nothing said). */
int insp_sqlite_interrupted(const struct insp_opts *o, const char *path);
/* "insp_check.c" */
/* Every stored figure of the snapshot, name and status tables of the type
** and range meminst writes (an integer, not negative where a size or count,
** no NULL where not allowed, no key twice): 0, or INSP_EXIT_DB after one
** line naming the table, the row and the column.  insp_db_open calls it. */
int insp_check_figures(insp_db_t *db);
/* Prepare SQL on the database; on error reports and returns NULL. */
sqlite3_stmt *insp_db_prepare(insp_db_t *db, const char *sql);
/* Strings owned by the database handle (live until insp_db_close). */
struct insp_pool *insp_db_pool(insp_db_t *db);
const char *insp_col_text(insp_db_t *db, sqlite3_stmt *st, int col);

/* Blocks of the selected snapshot in address order, restricted by the
** resolved filter (NULL: all).  next returns 1 (a block), 0 (done) or
** INSP_EXIT_DB. */
struct insp_filter_ids;
int insp_blocks_open(insp_db_t *db, const struct insp_filter_ids *f, insp_blocks_t *it);
int insp_blocks_next(insp_blocks_t *it, struct insp_block *b);
void insp_blocks_close(insp_blocks_t *it);
/* The same blocks, each given to fn, with the "reading blocks" progress bar
** of o.  Returns 0 after the last, or the exit status that ended it. */
typedef void insp_block_fn(void *ctx, const struct insp_block *b);
int insp_blocks_each(insp_db_t *db, const struct insp_opts *o, const struct insp_filter_ids *f,
		     insp_block_fn *fn, void *ctx);
/* ------------------------------------------------------------ insp_leak -- */

/* A snapshot's leak check: memcheck's classes (the numbers of
** leak_block.class; MEMINST_LEAK_CLASS_NAMES) and each lost block's. */
enum { INSP_LEAK_REACHABLE = 0, INSP_LEAK_DEFINITE, INSP_LEAK_INDIRECT, INSP_LEAK_POSSIBLE, INSP_LEAK_CLASSES };
struct insp_leak_check {
	uint64_t bytes[INSP_LEAK_CLASSES], blocks[INSP_LEAK_CLASSES];
	uint64_t scanned_bytes;
	int64_t threads, threads_unstopped, scan_ns;
	uint64_t *addr;      /* the blocks not still reachable, by address */
	unsigned char *cls;  /* and their classes                          */
	size_t n;
};
/* "insp_leak.c" */
/* The latest snapshot with a leak check, 0 if none: 0 or INSP_EXIT_DB. */
int insp_leak_latest(insp_db_t *db, int64_t *snap);
/* The selected snapshot's: 0, or INSP_EXIT_NOTFOUND / INSP_EXIT_DB after
** one line. */
int insp_leak_load(insp_db_t *db, struct insp_leak_check *c);
int insp_leak_class(const struct insp_leak_check *c, uint64_t addr);
void insp_leak_free(struct insp_leak_check *c);

/* ----------------------------------------------------------- insp_names -- */

/* One entry of the allocator, class, type or thread table. */
struct insp_name {
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
	const char *stack;       /* types: the frames (insp_stack_*), or NULL */
	uint64_t *frames;        /* types made by site_depth: the stack,  */
	size_t nframes;          /* frames[0] == site (type_frame table)  */
	bool resolved;
};

struct insp_names {
	struct insp_name *v;     /* sorted by id */
	size_t n;
};

/* All four tables of a snapshot. */
struct insp_tags {
	struct insp_names allocators, classes, types, threads;
	struct insp_module *modules;
	size_t nmodules;
	struct insp_module *gone; /* modules of automatic classes unloaded before */
	int64_t *gone_class;      /* the snapshot (class_load), and their classes */
	size_t ngone;
	struct insp_syms *syms;  /* NULL until a label is asked for */
	bool no_symbols;
};

enum insp_tag_kind { INSP_TAG_ALLOCATOR, INSP_TAG_CLASS, INSP_TAG_TYPE, INSP_TAG_THREAD };

/* "insp_names.c" */
int insp_tags_load(insp_db_t *db, struct insp_tags *t);
void insp_tags_free(struct insp_tags *t);
const struct insp_names *insp_tags_of(const struct insp_tags *t, enum insp_tag_kind k);
const struct insp_name *insp_name_find(const struct insp_names *n, int64_t id);
/* The name to show for an id ("#id" when the table has no such row). */
const char *insp_tag_name(insp_db_t *db, struct insp_tags *t, enum insp_tag_kind k, int64_t id);
/* A type's label: resolved from the module files when possible, else
** the stored name; *where gets "file:line" or NULL. */
const char *insp_type_label(insp_db_t *db, struct insp_tags *t, int64_t id, const char **where);
/* The inline chain of an automatic type's site, outermost first
** ("f at file:line > g at file:line …"), or NULL when not inlined. */
const char *insp_type_chain(insp_db_t *db, struct insp_tags *t, int64_t id);
/* An automatic type's stack (insp_stack_add): its site_depth frames with
** their inline chains, innermost first; NULL for a registered type. */
const char *insp_type_stack(insp_db_t *db, struct insp_tags *t, int64_t id);
/* "N name" for a thread. */
const char *insp_thread_label(insp_db_t *db, struct insp_tags *t, int64_t id);
/* Resolve the filter strings of a snapshot to numbers.  lookup returns 0,
** or -1 with the filter that names nothing in *what and *given; resolve
** returns 0, or INSP_EXIT_NOTFOUND after a message. */
int insp_filter_lookup(const struct insp_tags *t, const struct insp_filter *f,
		       struct insp_filter_ids *ids, const char **what, const char **given);
int insp_filter_resolve(insp_db_t *db, const struct insp_tags *t, const struct insp_filter *f,
			struct insp_filter_ids *ids);
bool insp_filter_any(const struct insp_filter *f);
/* ------------------------------------------------------------- insp_out -- */

enum insp_kind {
	INSP_K_STR,
	INSP_K_INT,    /* signed integer                              */
	INSP_K_SIZE,   /* bytes: human-readable in text               */
	INSP_K_DELTA,  /* signed bytes: "+1.5 KiB" in text            */
	INSP_K_ADDR,   /* 0x… in text, a number elsewhere             */
	INSP_K_TIME,   /* epoch ns: a date in text, ms elsewhere      */
	INSP_K_DUR,    /* ns: one unit per column in text, ms elsewhere */
	INSP_K_PCT,    /* a percentage (double)                       */
	INSP_K_BOOL,   /* yes/no in text, true/false elsewhere        */
	INSP_K_LOC,    /* "file:line" in text; "file" and "line" fields in
			  JSON and CSV (the column's key is not used) */
	INSP_K_STACK,  /* frames (insp_stack_add): lines indented under
			  the row in text, an array of frame objects in
			  JSON, one cell of frames joined by " <- " in CSV */
};

/* Column flags: shown in text only, in JSON and CSV only, or (OPTIONAL)
** left out of text when every cell of the column is null. */
enum { INSP_C_TEXT_ONLY = 1, INSP_C_DATA_ONLY = 2, INSP_C_OPTIONAL = 4 };

struct insp_col {
	const char *key;   /* the JSON key and CSV header            */
	const char *head;  /* the text heading                       */
	enum insp_kind kind;
	unsigned flags;
};

typedef struct insp_doc insp_doc_t;
typedef struct insp_table insp_table_t;

/* Table flags: SINGLE: one row, a JSON object, "label: value" lines in
** text; DATA: left out of text unless asked for with --table. */
enum { INSP_T_SINGLE = 1, INSP_T_DATA = 2 };

/* "insp_out.c" */
insp_doc_t *insp_doc_new(const struct insp_opts *o, const struct insp_args *a);
insp_table_t *insp_doc_table(insp_doc_t *d, const char *key, const struct insp_col *cols,
			     int ncols, unsigned flags);
/* The heading printed above a table in text (copied). */
void insp_table_title(insp_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line printed under a table in text only (copied). */
void insp_table_note(insp_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void insp_row(insp_table_t *t);
void insp_put_int(insp_table_t *t, int64_t v);
void insp_put_uint(insp_table_t *t, uint64_t v);
void insp_put_pct(insp_table_t *t, double v);
void insp_put_str(insp_table_t *t, const char *s);      /* copied */
/* Not copied: s must live as long as the document (names of the tags). */
void insp_put_const(insp_table_t *t, const char *s);
void insp_put_null(insp_table_t *t);
/* The snapshot row as a table named `key` (a DATA table), and in text a
** heading line that says the same. */
void insp_doc_snapshot(insp_doc_t *d, const char *key, const char *file,
		       const struct insp_snap *s);
/* Print everything; returns 0, or INSP_EXIT_USAGE when --table names no
** table of this command. */
int insp_doc_print(insp_doc_t *d);
/* Stream table t, the last of the document, in JSON and CSV: print what
** comes before it now and each of its rows once complete (a no-op in text
** or when t is not printed).  Returns 0 or INSP_EXIT_USAGE as above; the
** document must still be finished with insp_doc_print. */
int insp_doc_stream(insp_doc_t *d, insp_table_t *t);
void insp_doc_free(insp_doc_t *d);
/* ------------------------------------------------------------- insp_fmt -- */

/* "insp_fmt.c" */
/* "512 B", "1.5 KiB" … (the same rounding as libmeminst's status print). */
void insp_fmt_size(uint64_t v, char *buf, size_t len);
void insp_fmt_delta(int64_t v, char *buf, size_t len);
void insp_fmt_time(int64_t ns, char *buf, size_t len);
/* A duration alone, three significant digits ("92.1 µs", "1.50 s"). */
void insp_fmt_dur(int64_t ns, char *buf, size_t len);
/* The unit (0 ns, 1 µs, 2 ms, 3 s) that suits a largest value of ns, and a
** duration written in it with three decimals: one unit for a column. */
int insp_dur_unit_of(uint64_t ns);
void insp_fmt_dur_in(int64_t ns, int unit, char *buf, size_t len);
/* ns as milliseconds with three decimals ("1500.000"). */
void insp_fmt_ms(int64_t ns, char *buf, size_t len);
void insp_json_str(FILE *f, const char *s);
/* A message on f (stderr): printf's format, then every control byte and
** invalid UTF-8 of the result but a final newline written as insp_text_str
** writes it, so that a file or stored name holding a newline or a terminal
** escape stays on the one line.  Every message of the readers goes
** through it. */
void insp_errf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void insp_verrf(FILE *f, const char *fmt, va_list ap);
void insp_csv_str(FILE *f, const char *s);
/* s made printable on one line (controls and bad UTF-8 as \xNN); the
** result is in buf, *width gets its width in columns. */
void insp_text_str(const char *s, char *buf, size_t len, size_t *width);
/* s written to f as insp_text_str shows it, whatever its length. */
void insp_text_put(FILE *f, const char *s);
/* Display width of a valid UTF-8 string (code points). */
size_t insp_text_width(const char *s);
/* A text cell of *width characters cut to max in its middle ("…"). */
void insp_text_cut(char *buf, size_t *width, size_t max);
/* A site's stack as one string, innermost frame first: each frame a line
** of function, file, line, module and whether it was inlined into the next
** frame, tab-separated (a NULL or 0 part: unknown).  insp_stack_add returns
** `stack` with one frame more, in the pool; the others print one. */
const char *insp_stack_add(struct insp_pool *p, const char *stack, const char *func, const char *file,
			   int line, const char *module, bool inlined);
void insp_stack_text(FILE *f, const char *stack, size_t width);
void insp_stack_json(FILE *f, const char *stack);
void insp_stack_csv(FILE *f, const char *stack);
/* Whether site row `row` (from 0) of a command shows its stack: the first
** --stacks N rows; without --stacks, the first `dflt` rows in text and
** every row in JSON and CSV. */
bool insp_stack_row(const struct insp_args *a, size_t row, size_t dflt);
/* The rows with stacks in text by default where they are (report, the
** list of what was live at exit). */
#define INSP_STACKS_DEFAULT 5
/* Narrow the widest columns that may be cut (to 16 at least) until the n
** columns of widths wid (0: not shown), two spaces apart, fit width. */
void insp_fit_widths(size_t *wid, const bool *can_cut, int n, size_t width);
/* -------------------------------------------------------- insp_progress -- */

struct insp_progress {
	FILE *err;
	bool on, shown;
	const char *what;
	uint64_t total;
	double t0, last;
};

/* "insp_progress.c" */
void insp_progress_start(struct insp_progress *p, const struct insp_opts *o,
			 const char *what, uint64_t total);
/* Cheap: looks at the clock once every 64 Ki steps. */
void insp_progress_step(struct insp_progress *p, uint64_t done);
void insp_progress_end(struct insp_progress *p);
/* --------------------------------------------------------- insp_symbols -- */

/* One row of the module table. */
struct insp_module {
	uint64_t base;
	const char *path, *build_id;
};

/* One function of an inline chain and the source line it was at. */
struct insp_frame {
	char *func; /* demangled, or NULL when DWARF has no name */
	char *file; /* or NULL                                   */
	int line;
};

struct insp_sym {
	char *func;         /* demangled, or NULL when unknown        */
	uint64_t off;       /* site - function start                  */
	const char *module; /* basename of the module file            */
	char *file;         /* source file, or NULL                   */
	int line;
	/* The inline chain from the DWARF scopes, innermost first: chain[0]
	** is the code at the site's own line, each next one the function it
	** was inlined into, at the line of that call; chain[nchain - 1] is the
	** function of the symbol.  Empty without debug information. */
	struct insp_frame *chain;
	size_t nchain;
	bool system_module; /* the module is a system library         */
};

typedef struct insp_syms insp_syms_t;

/* "insp_symbols.c" */
insp_syms_t *insp_syms_new(const struct insp_module *mods, size_t n);
/* Resolve a call site (a return address).  Returns 0 and fills sym (free
** it with insp_sym_clear), or -1: no usable module covers the site. */
int insp_syms_lookup(insp_syms_t *s, uint64_t site, struct insp_sym *sym);
/* The same in module m alone (one unloaded before the snapshot, at the
** load bias it had: insp_tags.gone), whatever the module table says is
** at that address now. */
int insp_syms_lookup_in(insp_syms_t *s, const struct insp_module *m, uint64_t site, struct insp_sym *sym);
void insp_sym_clear(struct insp_sym *sym);
void insp_syms_free(insp_syms_t *s);
/* Name an automatic type (n: name, site, frames) from syms, or from the
** module `gone` alone (unloaded before; NULL: none) as every reader names
** it: n's label, where and chain, in p (insp_names.c). */
struct insp_name;
void insp_name_resolve(struct insp_pool *p, insp_syms_t *syms, const struct insp_module *gone,
		       struct insp_name *n);
/* The demangled form of a C++ symbol (malloc'd), or NULL if not mangled;
** its template arguments folded unless insp_set_full_names(true). */
char *insp_demangle(const char *name);
/* "std::map<std::string, int>::operator[]" becomes "std::map<>::operator[]"
** in place: every template argument list is emptied, operators (<<, ->,
** <=> …) kept, and a template instance's return type dropped; a name whose
** brackets do not balance is left whole. */
void insp_fold_templates(char *name);
/* A source file of a system header or library (/usr/include, /usr/lib,
** a compiler's own headers, glibc's build paths), not the user's code. */
bool insp_path_is_system(const char *path);
/* The frame of the chain a user acts on, or -1 when every frame is in
** system code: when the site is inside system code (std:: templates
** inlined into the program), the innermost frame in the user's own source,
** the line that called into them; when the site is in the user's code
** itself, the outermost one (inline wrappers folded into their callers). */
int insp_sym_user_frame(const struct insp_sym *sym);
/* ----------------------------------------------------------- insp_strace -- */

/* "insp_strace.c" */
/* 1 when path is a session database (meminst(1)) with stored traces. */
int insp_is_session(const char *path);
/* 0, or a run row (session_run) no meminst writes said on one line (its
** first bad column: "pid", "exit_code"..., or "not one run row") and
** INSP_EXIT_DB. */
int insp_session_run_check(insp_db_t *db);
/* The trace of process *pid (0: the session's program, set on return)
** stored in a session, as a stream of *size bytes; NULL with *code set
** after one line on o->err. */
FILE *insp_strace_open(const char *path, const struct insp_opts *o, int64_t *pid, uint64_t *size,
		       int *code);

/* ---------------------------------------------------------- insp_session -- */

/* What a reading command starts with ("insp_names.c"): open the database
** named by its first positional argument, select the snapshot and load its
** tags. */
struct insp_session {
	insp_db_t *db;
	struct insp_tags tags;
	bool tags_loaded;
};
int insp_session_open(struct insp_session *s, const struct insp_opts *o,
		      const struct insp_args *a, const char *path, enum insp_need need);
int insp_session_tags(struct insp_session *s, const struct insp_args *a);
/* The tags, and the command's filters (a->filter) resolved against them. */
int insp_session_filter(struct insp_session *s, const struct insp_args *a, struct insp_filter_ids *f);
void insp_session_close(struct insp_session *s);

#endif /* READER_INT_H */
