/*
** alloc_api.c — the public meminst_* functions declared in <meminst.h>,
** and the library's constructor and destructor.
**
** Readers take the thread registry only for as long as it takes to add up
** pending counts; names are looked up afterwards, outside every lock,
** because describing a site calls dladdr.
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"
#include "meminst-size.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_ON() (alloc_state == 2 && alloc_mode != MEMINST_MODE_OFF)

static int api_status_print(enum meminst_status_kind kind, int fd, bool symbolise);

static void api_ensure_started(void)
{
	if (atomic_load(&alloc_state) == 0)
		alloc_init();
}

/*
** Do the program's malloc calls reach us?  Another allocator may come
** first: a library before us in LD_PRELOAD, or one linked into the
** program.  Addresses cannot tell (a PLT stub can stand for malloc), so
** let libc allocate one small string, through the malloc every library
** binds to, and see whether it reached us.  Called from the constructor,
** in mis or mim mode.
*/
static bool api_hooks_reached(void)
{
	alloc_tls.probe_hit = 0;
	alloc_guard_enter(); /* reaching us, it is untracked: no trace in the figures */
	char *p = strdup("meminst");
	alloc_guard_exit();
	bool hit = alloc_tls.probe_hit;
	free(p); /* the free that goes with that malloc, whoever it was */
	return hit;
}

/*
** leak_exit_code=N due: the program's streams flushed, as exit would, then
** status N.  Only once the program's destructors have run: this library's
** destructor runs after them (a preloaded or linked library is set up
** before the program and torn down after it), and the exit handler below,
** registered from our constructor before libc registers the loader's
** teardown, runs after it, so whichever of the two comes second ends it.
*/
static bool api_destructor_done;
static void api_leak_exit(void)
{
	int status = api_destructor_done ? alloc_snap_leak_exit_status() : 0;
	if (status) {
		fflush(NULL);
		alloc_sys_exit(status);
	}
}

/* "a, b and c" of the names in `set`, into out. */
static void api_names(unsigned set, char *out, size_t len)
{
	size_t o = 0;
	unsigned left = (unsigned)__builtin_popcount(set);
	out[0] = 0;
	for (unsigned i = 0; i < ALLOC_FAMILY_N && o < len; i++) {
		if (!(set & (1u << i)))
			continue;
		left--;
		o += (size_t)alloc_fmt(out + o, len - o, "%s%s", alloc_family_names[i],
				       left > 1 ? ", " : left == 1 ? " and " : "");
	}
}

/*
** Part or all of the malloc family is defined before libmeminst
** (alloc_backend_replaced): say what, where, and what would help.  The
** executable's own allocator cannot be put behind us; a library's can, by
** the preload order.
*/
void alloc_replaced_report(unsigned replaced, bool exe, const char *lib)
{
	enum { CORE = 0xf }; /* malloc, free, calloc, realloc */
	char has[320], lacks[80]; /* every name of the family fits */
	api_names(replaced, has, sizeof has);
	api_names(CORE & ~replaced, lacks, sizeof lacks);
	const char *where = exe ? "the executable" : lib && lib[0] ? lib : "a library";
	const char *advice = exe ? "build it without its own allocator to measure it"
				 : "put libmeminst.so first in LD_PRELOAD";
	if (!(replaced & ALLOC_FAMILY_C))
		alloc_note("%s defines %s: backend=jemalloc is not used (the blocks it makes are the "
			  "system allocator's)", where, has);
	else if ((replaced & CORE) == CORE)
		alloc_log("the program's malloc calls do not reach libmeminst: %s defines %s; "
			  "allocations are not instrumented (%s)", where, has, advice);
	else
		alloc_log("%s defines %s but not %s: allocations are not instrumented, and "
			  "the rest go to the system allocator untouched (%s)", where, has, lacks, advice);
}

/* Snapshots the service thread still owes, then the exit snapshot. */
static void api_at_exit(void)
{
	int saved_errno = errno; /* the program's atexit handlers that run next read theirs */
	alloc_service_flush();
	alloc_snap_at_exit();
	api_leak_exit();
	errno = saved_errno;
}

/* After libc is up (never from inside malloc): the exit snapshot handler
** and the service thread.  atexit handlers run before libraries'
** destructors, and after those the program registered later (C++ static
** destructors among them), so the exit snapshot shows what was never freed. */
static void api_start(void)
{
	api_ensure_started();
	alloc_sys_err_init(); /* before anything is said: see alloc_sys_err_fd */
	alloc_ids_init();
	alloc_seccomp_init();
	alloc_exit_init();
	trace_start_from_env(); /* in every mode, off included */
	if (!API_ON() && !alloc_switchable) /* dormant: on below, switched on later */
		return;
	if (API_ON() && !api_hooks_reached())
		alloc_log("the program's malloc calls do not reach libmeminst: another allocator "
			  "comes first (put libmeminst.so first in LD_PRELOAD); allocations are not "
			  "instrumented");
	/* before the program runs: no thread of it can be storing or forking */
	alloc_guard_enter();
	alloc_sqlite_fork_init();
	alloc_guard_exit();
	if (alloc_opts.snapshot && alloc_opts.snapshot_at)
		alloc_snap_check_configured();
	if (alloc_opts.snapshot || alloc_opts.leak_exit_code) {
		alloc_guard_enter();
		atexit(api_at_exit);
		alloc_guard_exit();
		if (alloc_opts.snapshot && (alloc_opts.snapshot_at & ALLOC_SNAP_EXIT))
			trace_death_arm_memory(); /* a Ctrl-C or a kill keeps the exit snapshot too */
	}
	alloc_service_start();
}

/* main starts with the errno it has without meminst (libunwind's set-up
** left EAGAIN, its memory-validation pipe read empty:
** tests/integration/errno_kept.sh). */
__attribute__((constructor(101))) static void api_constructor(void)
{
	int saved_errno = errno;
	api_start();
	errno = saved_errno;
}

/* At exit: the kinds asked for with print=…, then the invalid-free count.
** The tables go to the stderr of the start, checked before each write
** (alloc_sys_err_fd): GNU programs close stderr in an atexit handler
** (close_stdout), which runs before us, and a program may have put a file
** of its own on any number, the copy's among them. */
__attribute__((destructor)) static void api_destructor(void)
{
	/* A child of a raw clone is taken as alone first: the sampler's
	** threads are its parent's, and stopping them joined a thread it does
	** not have, for ever.  One in its parent's memory (vfork) stops nothing. */
	if (!alloc_clone_adopt() && !alloc_exit_own_process())
		return;
	if (alloc_clone_walked())
		return; /* the trace's end and print= list the modules: the loader's lock */
	trace_at_exit();
	if (!API_ON())
		return;
	if (alloc_opts.print_kinds && alloc_sys_err_fd() < 0)
		alloc_log("print= tables not written: the program closed stderr or put a file of its own on "
			  "its descriptor, and on meminst's copy of it");
	else if (alloc_opts.print_kinds && alloc_seccomp_refuses(ALLOC_SC_WRITE))
		; /* said when the filter came */
	else
		for (unsigned k = 0; k < MEMINST_STATUS_KINDS; k++)
			if (alloc_opts.print_kinds & (1u << k))
				api_status_print((enum meminst_status_kind)k, ALLOC_FD_STDERR, true);
	alloc_core_report_summary();
	/* leak_exit_code=N: after the program's destructors (they ran before
	** this one, which a preloaded library's runs after), its streams
	** flushed as exit would, then the status asked for */
	api_destructor_done = true;
	api_leak_exit();
}

ALLOC_EXPORT enum meminst_mode meminst_mode(void)
{
	api_ensure_started();
	return alloc_mode;
}

ALLOC_EXPORT size_t meminst_header_size(void)
{
	api_ensure_started();
	return alloc_hdr_size;
}

ALLOC_EXPORT const char *meminst_backend(void)
{
	api_ensure_started();
	return alloc_real.name ? alloc_real.name : "system";
}

ALLOC_EXPORT const char *meminst_allocator_name(uint32_t allocator_no)
{
	return alloc_allocator_name(allocator_no);
}

/* ------------------------------------------------------------ status --- */

ALLOC_EXPORT long meminst_status_count(enum meminst_status_kind kind)
{
	api_ensure_started();
	if (!API_ON() || (unsigned)kind >= ALLOC_K_COUNT)
		return -1;
	return alloc_tags_count(kind);
}

ALLOC_EXPORT long meminst_status_read(enum meminst_status_kind kind,
				      struct meminst_status_info *out, size_t cap)
{
	long n = meminst_status_count(kind);
	if (n < 0 || !out)
		return n;
	/* straight into `out`, with no memory of its own: a program out of
	** memory (or of address space) reads its figures too (oom.c) */
	uint32_t fill = (size_t)n < cap ? (uint32_t)n : (uint32_t)cap;
	memset(out, 0, fill * sizeof *out);
	alloc_stat_read(kind, (uint32_t)n, out, NULL, fill, ALLOC_READ_PROGRAM);
	alloc_status_describe(kind, fill, out);
	return n;
}

ALLOC_EXPORT long meminst_events_read(enum meminst_status_kind kind, struct meminst_events *out, size_t cap)
{
	long n = meminst_status_count(kind);
	if (n < 0 || !out)
		return n;
	uint32_t fill = (size_t)n < cap ? (uint32_t)n : (uint32_t)cap;
	memset(out, 0, fill * sizeof *out);
	alloc_stat_read(kind, (uint32_t)n, NULL, out, fill, ALLOC_READ_PEEK);
	return n;
}

static const char *const api_kind_title[] = {"total", "allocators", "classes", "types", "threads"};

/* One row; with a name from meminst-symbolise (sym), that name, the
** location after the figures and the inline chain on a line of its own. */
static void api_print_row(int fd, const struct meminst_status_info *e, const struct meminst_events *ev,
			  const alloc_sym_name_t *sym)
{
	char line[4096], c[6][24];
	meminst_fmt_size(alloc_fmt, e->sizes.current, c[0], sizeof c[0]);
	meminst_fmt_size(alloc_fmt, e->sizes.max_since_last, c[1], sizeof c[1]);
	meminst_fmt_size(alloc_fmt, e->sizes.max_ever, c[2], sizeof c[2]);
	bool named = sym && sym->label;
	int n = alloc_fmt(line, sizeof line, "%6u  %-32s %12s %12s %12s %10llu %10llu %10llu %10llu %10llu%s%s\n",
			  e->id, named ? sym->label : e->name, c[0], c[1], c[2], (unsigned long long)e->blocks.current,
			  (unsigned long long)e->blocks.max_since_last,
			  (unsigned long long)e->blocks.max_ever, (unsigned long long)ev->calls,
			  (unsigned long long)ev->temporary, named ? "  " : "",
			  !named ? "" : sym->where ? sym->where : "-");
	alloc_sys_write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	if (named && sym->chain) {
		alloc_sys_write(fd, "        inlined: ", 17);
		alloc_sys_write(fd, sym->chain, strlen(sym->chain));
		alloc_sys_write(fd, "\n", 1);
	}
}

/* The table of a kind on fd; `symbolise`: the types named by the helper
** (print= at exit), else by dladdr. */
static int api_status_print(enum meminst_status_kind kind, int fd, bool symbolise)
{
	long n = meminst_status_count(kind);
	if (n < 0)
		return -1;
	/* the figures and the events of one read, side by side in one mapping */
	size_t bytes = ((size_t)n * (sizeof(struct meminst_status_info) + sizeof(struct meminst_events)) + 4095) &
		       ~(size_t)4095;
	struct meminst_status_info *e = alloc_sys_map(bytes);
	if (!e)
		return -1;
	struct meminst_events *ev = (struct meminst_events *)(e + n);
	uint32_t fill = (uint32_t)n;
	alloc_stat_read(kind, alloc_tags_count(kind), e, ev, fill, ALLOC_READ_PROGRAM);
	alloc_status_describe(kind, fill, e);
	alloc_sym_names_t *sym = symbolise && kind == MEMINST_STATUS_TYPES && !alloc_seccomp_refuses(ALLOC_SC_SYMBOLISE)
					 ? alloc_symbolise(e, n, fd) : NULL;
	char line[512];
	int len = alloc_fmt(line, sizeof line,
			    "meminst status: %s (mode %s, backend %s, header %zu bytes)\n"
			    "%6s  %-32s %12s %12s %12s %10s %10s %10s %10s %10s%s\n",
			    api_kind_title[kind], alloc_mode == MEMINST_MODE_MIM ? "mim" : "mis",
			    meminst_backend(), alloc_hdr_size, "no", "name", "size", "max-since",
			    "max-ever", "blocks", "max-since", "max-ever", "calls", "temporary",
			    sym ? "  location" : "");
	alloc_sys_write(fd, line, (size_t)len);
	for (long i = 0; i < n; i++)
		if (e[i].blocks.max_ever > 0 || kind == MEMINST_STATUS_TOTAL)
			api_print_row(fd, &e[i], &ev[i], sym ? &sym->names[i] : NULL);
	alloc_symbolise_free(sym);
	alloc_sys_unmap(e, bytes);
	return 0;
}

ALLOC_EXPORT int meminst_status_print(enum meminst_status_kind kind, int fd)
{
	return api_status_print(kind, fd, false);
}

/* --------------------------------------------------- types and classes -- */

ALLOC_EXPORT int meminst_class_register(const char *name)
{
	api_ensure_started();
	if (!API_ON() || !name || !*name)
		return -1;
	return alloc_class_register(name);
}

ALLOC_EXPORT meminst_type_t meminst_type_register(const char *name, int class_no)
{
	api_ensure_started();
	if (!API_ON() || !name || !*name)
		return MEMINST_TYPE_AUTO;
	return alloc_type_register(name, class_no, (uintptr_t)__builtin_return_address(0));
}

ALLOC_EXPORT meminst_type_t meminst_type_push(meminst_type_t type)
{
	meminst_type_t prev = alloc_tls.scope;
	if (type < alloc_tags_count(ALLOC_K_TYPE) || !API_ON())
		alloc_tls.scope = API_ON() ? type : 0;
	return prev;
}

ALLOC_EXPORT void meminst_type_pop(meminst_type_t previous)
{
	alloc_tls.scope = previous;
}

ALLOC_EXPORT meminst_type_t meminst_block_type(const void *ptr)
{
	return API_ON() ? alloc_core_block_type(ptr) : 0;
}

static uint32_t api_checked_type(meminst_type_t type)
{
	return type < alloc_tags_count(ALLOC_K_TYPE) ? type : 0;
}

ALLOC_EXPORT void *meminst_malloc_typed(size_t size, meminst_type_t type)
{
	if (!API_ON())
		return malloc(size);
	return alloc_core_malloc(size, ALLOC_A_MALLOC, (uintptr_t)__builtin_return_address(0),
				 api_checked_type(type));
}

ALLOC_EXPORT void *meminst_calloc_typed(size_t n, size_t size, meminst_type_t type)
{
	if (!API_ON())
		return calloc(n, size);
	return alloc_core_calloc(n, size, (uintptr_t)__builtin_return_address(0), api_checked_type(type));
}

ALLOC_EXPORT void *meminst_realloc_typed(void *ptr, size_t size, meminst_type_t type)
{
	if (!API_ON())
		return realloc(ptr, size);
	return alloc_core_realloc(ptr, size, ALLOC_A_REALLOC, (uintptr_t)__builtin_return_address(0),
				  api_checked_type(type));
}
