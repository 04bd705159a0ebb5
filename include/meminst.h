/*
** meminst.h — the public API of libmeminst.
**
** libmeminst interposes the allocation API (malloc … operator delete) and,
** when the MEMINST environment variable asks for it, tags every block with an
** allocator, a type, a class and a thread and keeps status counters for each.
** This header lets a program read those counters and give its allocations
** names of its own.  Every function here is safe to call when the library
** runs in `off` mode: readers then report MEMINST_MODE_OFF / return -1.
**
** See libmeminst(3) for the contract of each call and meminst(7) for the
** MEMINST variable.
*/
#ifndef MEMINST_H
#define MEMINST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMINST_API_VERSION 1

/* ---------------------------------------------------------------- modes -- */

enum meminst_mode {
	MEMINST_MODE_OFF = 0, /* pass-through: no header, no counters        */
	MEMINST_MODE_MIS = 1, /* status: 16-byte header, counters           */
	MEMINST_MODE_MIM = 2  /* map: 32-byte header, every live block known */
};

/* The mode the process runs in (fixed when the library starts). */
enum meminst_mode meminst_mode(void);

/* Bytes of header in front of every block: 0, 16 or 32 (block_header_size). */
size_t meminst_header_size(void);

/* "system" or "jemalloc". */
const char *meminst_backend(void);

/* -------------------------------------------------------- status reading -- */

enum meminst_status_kind {
	MEMINST_STATUS_TOTAL = 0,
	MEMINST_STATUS_ALLOCATORS,
	MEMINST_STATUS_CLASSES,
	MEMINST_STATUS_TYPES,
	MEMINST_STATUS_THREADS
};
#define MEMINST_STATUS_KINDS 5

/* Current value, maximum since the last read of the same kind, maximum ever. */
struct meminst_counter {
	uint64_t current;
	uint64_t max_since_last;
	uint64_t max_ever;
};

#define MEMINST_NAME_MAX 128

/* Events since the program started, never reset: blocks allocated (calls
** to an allocation function that returned a block, realloc included),
** their requested bytes, blocks freed (the old block of a realloc
** included), temporary blocks (freed by their thread before it allocated
** or freed anything else) and blocks made by realloc. */
struct meminst_events {
	uint64_t calls;
	uint64_t allocated;
	uint64_t frees;
	uint64_t temporary;
	uint64_t reallocs;
};

struct meminst_status_info {
	uint32_t id;                  /* allocator, class, type or thread number */
	char name[MEMINST_NAME_MAX];  /* its description                          */
	struct meminst_counter sizes; /* requested bytes, headers not counted     */
	struct meminst_counter blocks;
	uint32_t class_no;            /* types: the type's class                  */
	int32_t tid;                  /* threads: the OS thread id                */
	uintptr_t site;               /* automatic types: the allocation site      */
};

/*
** Read the status of one kind.  Fills at most `cap` entries of `out` and
** returns how many entries the kind has (which may exceed `cap`), or -1 when
** instrumentation is off.  A call with out != NULL is a "read": it resets the
** max_since_last figures of this kind, and of no other kind, to the current
** values.  A call with out == NULL only counts, and resets nothing.  Needs
** no memory of its own: works in a process with none left.
*/
long meminst_status_read(enum meminst_status_kind kind,
			 struct meminst_status_info *out, size_t cap);

/*
** Print the status of one kind as an aligned table to file descriptor `fd`
** (one read of the kind, so it resets max_since_last like
** meminst_status_read).  Entries with no blocks ever are left out.  Never
** allocates through the instrumented heap.  Returns 0, or -1 when off.
*/
int meminst_status_print(enum meminst_status_kind kind, int fd);

/*
** The event counters of one kind (struct meminst_events), entry i for the
** entry i of meminst_status_read.  Fills at most `cap` entries and returns
** how many the kind has, or -1 when instrumentation is off; resets nothing
** (the counts run from the start).  A call of its own, so that the entries
** of meminst_status_read keep the size programs were built with.
*/
long meminst_events_read(enum meminst_status_kind kind, struct meminst_events *out, size_t cap);

/* The number of known allocators, classes, types or threads, or -1. */
long meminst_status_count(enum meminst_status_kind kind);

/* Description of a number: NULL (invalid_type) when the number is unknown. */
const char *meminst_allocator_name(uint32_t allocator_no);

/* ------------------------------------------------------------ snapshots -- */

/*
** Store a snapshot into the SQLite database at `path` ("%p" expands to the
** process id; a relative path is taken from the directory the process
** started in).  A missing file is created with mode 0600; an existing
** meminst database gets the snapshot added; any other file is left
** untouched.  meminst_store_memory_data stores the live map (in mim mode;
** in mis mode the status only) with the status of every kind;
** meminst_store_memory_status stores the status only.  Both reset
** max_since_last of every kind.  They return the snapshot's number in the
** file (1, 2, …), or -1 with errno set (ENOTSUP when instrumentation is off,
** EINVAL, ENOMEM, EIO), the reason printed on stderr.  See
** meminst-snapshot(5) for the schema and inspect(1) to read it.
*/
int meminst_store_memory_data(const char *path);
int meminst_store_memory_status(const char *path);

/* ------------------------------------------------- types and classes ----- */

typedef uint32_t meminst_type_t;

/* The type of blocks allocated outside any scope: the call site decides. */
#define MEMINST_TYPE_AUTO ((meminst_type_t)0)

/*
** Register a class (a group of types) by name; registering the same name
** again returns the same number.  Returns the class number, or -1 when off
** or out of class numbers.
*/
int meminst_class_register(const char *name);

/*
** Register a type with a name and a class number (-1: the class of the
** caller's module).  The same name in the same class returns the same type.
** Returns the type number, or MEMINST_TYPE_AUTO when off or on error.
*/
meminst_type_t meminst_type_register(const char *name, int class_no);

/*
** Make `type` the type of every block the calling thread allocates from now
** on (a scope); MEMINST_TYPE_AUTO ends the scope.  Returns the previous
** type, so scopes nest: prev = meminst_type_push(t); … meminst_type_pop(prev).
*/
meminst_type_t meminst_type_push(meminst_type_t type);
void meminst_type_pop(meminst_type_t previous);

/* Allocate one block tagged with `type`, whatever the thread's scope. */
void *meminst_malloc_typed(size_t size, meminst_type_t type);
void *meminst_calloc_typed(size_t n, size_t size, meminst_type_t type);
void *meminst_realloc_typed(void *ptr, size_t size, meminst_type_t type);

#if defined(__GNUC__)
static inline void meminst__scope_end(meminst_type_t *previous)
{
	meminst_type_pop(*previous);
}
#define MEMINST__CAT2(a, b) a##b
#define MEMINST__CAT(a, b) MEMINST__CAT2(a, b)
/* Tag every allocation until the end of the enclosing C block with `type`. */
#define MEMINST_TYPE_SCOPE(type)                                               \
	meminst_type_t MEMINST__CAT(meminst__scope_, __COUNTER__)              \
	    __attribute__((cleanup(meminst__scope_end), unused)) =             \
		meminst_type_push(type)
#endif

/* The type number of a live block, or MEMINST_TYPE_AUTO when unknown/off. */
meminst_type_t meminst_block_type(const void *ptr);

/* -------------------------------------------------------- time tracing -- */
/* (exact tracing of -finstrument-functions code: trace/, see libmeminst(3)) */

/*
** Start exact call tracing.  options: MEMINST syntax, tracing items only
** ("trace=cpu,trace_file=app.trace,trace_threads=family"); NULL or "" for
** the settings of MEMINST (default: wall clock, meminst.%p.trace, all
** threads).  The calling thread heads the traced family.  One trace file
** per process: once open, its clock and path stay.  Returns 0 (also when
** tracing is already on), or -1 with one line on stderr.
*/
int meminst_trace_start(const char *options);
/* Stop tracing (every thread, at its next instrumented call); 0. */
int meminst_trace_stop(void);
/* 1 if the calling thread's calls are being recorded now, else 0. */
int meminst_trace_active(void);
/* Write the calling thread's buffered records to the trace file; 0 or -1. */
int meminst_trace_flush(void);

#define MEMINST_TRACE_CONTINUE 1u /* meminst_trace_apply: leave tracing on */
/*
** fprof's apply: trace fn(arg) and the threads it creates (the calling
** thread's family, unless options say trace_threads=all), then stop,
** unless flags has MEMINST_TRACE_CONTINUE.  Returns fn's result.  When
** tracing is already on, or cannot start (one line on stderr), fn just runs.
*/
void *meminst_trace_apply(void *(*fn)(void *), void *arg, const char *options, unsigned flags);

/* ------------------------------------------------------------- sampling -- */
/* (statistical and allocation sampling: trace/, see libmeminst(3)) */

/* Start sampling with settings in MEMINST syntax, e.g.
** "sample=1000,sample_clock=wall,alloc_sample=512k,sample_counts=on"
** (NULL or "": 100 Hz of CPU time).  Samples go to the trace file
** (MEMINST trace_file=, default meminst.%p.trace).  0, or -1 with one line
** on stderr (bad settings, already running, the program's own SIGPROF
** handler). */
int meminst_sample_start(const char *options);
/* Stop every kind of sampling; 0, or -1 if none was running. */
int meminst_sample_stop(void);
/* Forget what was sampled so far (readers drop the earlier samples and
** counts); sampling goes on.  0, or -1 if none is running. */
int meminst_sample_reset(void);
/* What is running: 0 or MEMINST_SAMPLE_* bits. */
int meminst_sample_active(void);
#define MEMINST_SAMPLE_TIMER 1  /* sample=: the timer                */
#define MEMINST_SAMPLE_ALLOC 2  /* alloc_sample=                     */
#define MEMINST_SAMPLE_COUNTS 4 /* sample_counts=on: exact call counts */

/*
** The samples taken so far, read back from the process's own trace file
** (every thread's buffers are flushed first; samples before the last
** meminst_sample_reset are left out).  Each call reads the whole file:
** meant for the end of a run or a few times during it, not for a loop.
** Each returns 0 after the last callback, the callback's value if it
** returns non-zero (which stops the walk), or -1 when there is no trace
** file to read (sampling never started).  Normal context only.
*/
/* statprof's call data: one function. */
struct meminst_call_data {
	const void *addr;             /* the function's entry (the sampled address if unknown) */
	const char *name;             /* from dladdr: NULL unless exported    */
	const char *module;           /* the module's path, NULL if unknown   */
	unsigned long long self_samples; /* timer samples with it innermost   */
	unsigned long long cum_samples;  /* with it anywhere on the stack (once a sample) */
	unsigned long long calls;        /* exact calls (sample_counts=on), else 0 */
	double self_seconds, cum_seconds;
};
/* Call fn for every function with samples or counted calls. */
int meminst_sample_fold(int (*fn)(const struct meminst_call_data *cd, void *arg), void *arg);
/* Call fn for every timer sample: frames[0] is the interrupted pc, the
** others return addresses; thread: the trace thread number; seconds: the
** time the sample stands for. */
int meminst_sample_stacks(int (*fn)(const void *const *frames, unsigned n, unsigned thread,
				    double seconds, void *arg),
			  void *arg);
/* The call tree of the timer samples, all threads together, recursion
** collapsed as in `inspect analyse --style tree`: fn for every node in
** depth-first order (a node's children follow it with depth + 1). */
struct meminst_tree_node {
	const void *addr;             /* the function's entry                 */
	const char *name;             /* NULL unless exported                 */
	unsigned depth;               /* 0: called from the thread's start    */
	unsigned long long samples;   /* samples through this node            */
	unsigned long long self_samples; /* samples that end here             */
	unsigned long long recursive; /* recursive re-entries, in samples     */
};
int meminst_sample_tree(int (*fn)(const struct meminst_tree_node *node, void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif /* MEMINST_H */
