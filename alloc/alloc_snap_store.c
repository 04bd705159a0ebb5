/*
** alloc_snap_store.c — where captured snapshots go (alloc_snapshot.c
** captures them, alloc_sqlite.c writes them): the snapshot=PATH of MEMINST
** (%p expanded, relative to where the process started), checked at start
** and stored at exit, on signal, at intervals and at peaks; the public
** meminst_store_memory_* of the program; the notes file beside the
** snapshot and where a line of meminst's goes (said, kept, or said once
** per run); and what is said when a store fails, once for a run of the
** same failure.  The exit snapshot's leak check gives leak_exit_code.
**
** Apart from the capture because it is policy (paths, triggers, messages)
** with no lock of the map held: nothing here runs while allocation is
** stopped.
*/
#include "alloc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "meminst-hash.h"

/* ------------------------------------------------------------ paths ---- */

/*
** Expand %p to the pid (and %% to %) into out.  A relative path is made
** absolute against the directory the process started in (`base`), so a
** later chdir does not move the file.  Returns 0, or -1 if too long.
*/
int alloc_snap_path(const char *in, size_t n, const char *base, char *out, size_t len)
{
	size_t o = 0;
	if (in[0] != '/' && base && base[0]) {
		o = (size_t)alloc_fmt(out, len, "%s/", base);
		if (o >= len)
			return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char num[24];
		const char *add = NULL;
		if (in[i] == '%' && i + 1 < n && in[i + 1] == 'p') {
			int pid = alloc_ids_name(NULL); /* alloc_ids.c: pid namespaces */
			if (!pid)
				return -1; /* never "-1": getpid refused in a child of fork */
			alloc_fmt(num, sizeof num, "%d", pid);
			add = num;
			i++;
		} else if (in[i] == '%' && i + 1 < n && in[i + 1] == '%') {
			add = "%";
			i++;
		}
		if (add) {
			for (; *add; add++)
				if (o + 1 < len)
					out[o++] = *add;
				else
					return -1;
		} else if (o + 1 < len) {
			out[o++] = in[i];
		} else {
			return -1;
		}
	}
	out[o] = 0;
	return 0;
}

/* ------------------------------------------------------------- API ----- */

static int snap_store_api(const char *path, bool with_map)
{
	char full[4096], err[512];
	if (alloc_state != 2 || alloc_mode == MEMINST_MODE_OFF) {
		errno = ENOTSUP;
		return -1;
	}
	if (alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT)) {
		errno = EPERM; /* the program's seccomp filter (said when it came) */
		return -1;
	}
	if (!path || alloc_snap_path(path, strlen(path), alloc_snap_cwd, full, sizeof full) < 0) {
		errno = EINVAL;
		return -1;
	}
	alloc_snap_t *im = alloc_snap_capture_to(with_map, "api", full);
	if (!im)
		return -1; /* errno ENOMEM, or EIO: its temporary file (said) */
	int id = alloc_sqlite_store(full, im, false, err, sizeof err);
	alloc_snap_free(im);
	if (id < 0) {
		if (!alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT)) /* else said once (alloc_seccomp_enosys) */
			alloc_log("%s", err);
		errno = EIO;
	}
	return id;
}

ALLOC_EXPORT int meminst_store_memory_data(const char *path)
{
	return snap_store_api(path, true);
}

ALLOC_EXPORT int meminst_store_memory_status(const char *path)
{
	return snap_store_api(path, false);
}

/*
** A store that fails as the one before it did (a full disk, a file made
** read-only) is not said again: a program storing every 10 ms would fill
** its stderr with one line.  The count of the lines not said comes with
** the next line that is said: a different failure, the first store that
** succeeds again, or the exit snapshot's (always said).  Racing stores
** may both say a line; none is lost.
*/
static _Atomic uint64_t snap_fail_hash;  /* FNV-1a of the last line said, 0: none */
static _Atomic unsigned snap_fail_quiet; /* failures since, not said */

static uint64_t snap_line_hash(const char *s)
{
	return meminst_fnv_str(MEMINST_FNV_START, s) | 1;
}

static void snap_say_failure(const char *err, bool at_exit)
{
	uint64_t h = snap_line_hash(err);
	if (!at_exit && atomic_load(&snap_fail_hash) == h) {
		atomic_fetch_add(&snap_fail_quiet, 1);
		return;
	}
	atomic_store(&snap_fail_hash, h);
	unsigned quiet = atomic_exchange(&snap_fail_quiet, 0);
	if (quiet)
		alloc_log_run(err, "%s (%u earlier stores failed the same way)", err, quiet);
	else
		alloc_log_run(err, "%s", err);
}

/* A capture's temporary file failed (alloc_snap_spill.c): one line,
** not repeated while the next captures fail the same way. */
void alloc_snap_say_failure_errno(const alloc_snap_t *im, int e)
{
	char line[256];
	alloc_fmt(line, sizeof line, "%s snapshot not taken: cannot write its temporary file: %s",
		  im->trigger ? im->trigger : "a", strerror(e));
	snap_say_failure(line, false);
}

static void snap_say_success(const char *path)
{
	if (!atomic_exchange(&snap_fail_hash, 0))
		return;
	unsigned quiet = atomic_exchange(&snap_fail_quiet, 0);
	if (quiet)
		alloc_note("snapshot %s: stored again (%u more stores had failed the same way)", path,
			  quiet);
}

/* The snapshot=PATH of MEMINST, with a trigger: used at exit, on signal,
** at intervals and at peaks.  Errors are reported on stderr. */
int alloc_snap_store_configured(alloc_snap_t *im)
{
	char full[4096], err[512];
	if (alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT))
		return -1; /* said once, when the filter came (alloc_seccomp.c) */
	if (alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len, alloc_snap_cwd, full,
			    sizeof full) < 0) {
		if (alloc_sys_pid())
			alloc_log("snapshot path too long");
		else
			alloc_log("snapshot not stored: its name needs the process id (%%p), and a seccomp "
				  "filter refuses getpid in this child of fork");
		return -1;
	}
	int id = alloc_sqlite_store(full, im, true, err, sizeof err);
	if (id >= 0)
		snap_say_success(full);
	else if (id != ALLOC_SQ_BUSY && !alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT)) /* else said once */
		snap_say_failure(err, im->trigger && !strcmp(im->trigger, "exit"));
	return id;
}

/*
** A line meminst could not write to the stderr of the start (the program
** closed it, or put a file of its own on its number) is appended to a
** notes file beside the snapshot: PATH.log for snapshot=PATH (%p
** expanded).  The launcher keeps these files in the session, where
** `inspect report` shows them; without the launcher the user finds the
** file beside the snapshot.  Async-signal-safe; never allocates.
*/
void alloc_snap_note(const char *line, size_t n)
{
	char full[4096];
	if (!alloc_opts.snapshot || alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT) ||
	    alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len, alloc_snap_cwd, full,
			    sizeof full - 4) < 0)
		return;
	memcpy(full + strlen(full), ".log", 5);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, full, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			      0644);
	if (fd < 0)
		return;
	alloc_xfsz_t old; /* the notes past ulimit -f: EFBIG, not the program killed */
	alloc_sys_xfsz_block(&old);
	alloc_sys_write(fd, line, n);
	alloc_sys_xfsz_restore(&old);
	syscall(SYS_close, fd);
}

/*
** Where a line goes (alloc_sys.c's ALLOC_LINE_* and ALLOC_ROUTE_*).  With
** quiet=notes (meminst -q) a note goes to the notes file only: the session
** keeps it, `inspect report` shows it.  With run_dir=DIR (the launcher's
** parts directory, which every process of the run shares) a failure of a
** file of the run is said by the first process that meets it: it makes
** DIR/said.HASH, HASH of the key without its digits (the pid in a path);
** the others find the file there (a full disk gave three lines a process,
** 160 for 50 processes).  Once DIR is gone the launcher has written the
** session: a process that outlived the run says nothing of its files
** (the shell's prompt got their lines seconds after meminst ended).  When
** the file cannot be made otherwise, the line is said.  A line said under
** run_dir goes to the notes file too (the launcher keeps it in the
** session); without the launcher it is only said: a failed store leaves no
** file beside the snapshot the user named (tests/integration/snap_exit.sh).
*/
int alloc_snap_route(int kind, const char *key)
{
	if ((kind == ALLOC_LINE_NOTE || kind == ALLOC_LINE_NOTED) && alloc_opts.quiet_notes)
		return alloc_opts.snapshot ? ALLOC_ROUTE_NOTES : ALLOC_ROUTE_NONE;
	if (kind != ALLOC_LINE_RUN || !alloc_opts.run_dir || alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT))
		return ALLOC_ROUTE_SAY;
	uint64_t h = MEMINST_FNV_START;
	for (const char *c = key; *c; c++)
		if (*c < '0' || *c > '9')
			h = meminst_fnv(h, c, 1);
	char path[4096];
	size_t n = alloc_opts.run_dir_len;
	if (n + 32 > sizeof path)
		return ALLOC_ROUTE_SAY;
	memcpy(path, alloc_opts.run_dir, n);
	alloc_fmt(path + n, sizeof path - n, "/said.%016llx", (unsigned long long)h);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			      0600);
	if (fd >= 0) {
		syscall(SYS_close, fd);
		return ALLOC_ROUTE_SAY_KEEP;
	}
	return errno == EEXIST || errno == ENOENT ? ALLOC_ROUTE_NONE : ALLOC_ROUTE_SAY_KEEP;
}

/* At start, with snapshot=PATH and a trigger: a path too long, or a
** directory the file cannot be created in, is said now, in the program's
** first lines.  At exit the line would often be lost: GNU programs close
** stderr in an atexit handler (close_stdout), which runs before the exit
** snapshot, so `MEMINST=mim,snapshot=/no/such/dir/x.db ls` said nothing. */
void alloc_snap_check_configured(void)
{
	char full[4096];
	if (alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len, alloc_snap_cwd, full,
			    sizeof full) < 0) {
		alloc_log("snapshot path too long");
		return;
	}
	char *slash = strrchr(full, '/');
	if (!slash)
		return;
	char dir[sizeof full];
	size_t n = slash == full ? 1 : (size_t)(slash - full); /* "/x.db": "/" */
	memcpy(dir, full, n);
	dir[n] = 0;
	if (access(dir, W_OK | X_OK) != 0)
		alloc_log_run(NULL, "snapshot %s: cannot create: %s (checked at start)", full, strerror(errno));
}

/* Capture now and store into snapshot=PATH (exit, signal, interval). */
int alloc_snap_take_configured(const char *trigger, bool with_map)
{
	if (!alloc_clone_adopt())
		return -1;
	if (alloc_mode == MEMINST_MODE_OFF)
		return 0; /* dormant, never switched on: nothing counted to store */
	alloc_snap_t *im = alloc_snap_capture(with_map, trigger);
	if (!im) {
		if (errno != EIO) /* EIO: said already */
			alloc_log("no memory for the %s snapshot", trigger);
		return -1;
	}
	int id = alloc_snap_store_configured(im);
	alloc_snap_free(im);
	return id;
}

/* Set once the exit snapshot is under way: exit(3) and an _exit called
** from an atexit handler must not both store one. */
static _Atomic bool snap_exit_done, snap_exit_stored;

bool alloc_snap_exit_done(void) { return atomic_load(&snap_exit_done); }

/* Under way, in some thread, and not finished: a death by a signal waits
** for it (trace_death.c). */
bool alloc_snap_exit_busy(void)
{
	return atomic_load(&snap_exit_done) && !atomic_load(&snap_exit_stored);
}

/* Definitely lost bytes and blocks at the exit leak check, -1: none. */
static int64_t snap_exit_lost = -1, snap_exit_lost_blocks;

void alloc_snap_at_exit(void)
{
	/* under a seccomp filter that refuses what a store or a scan needs:
	** neither (alloc_seccomp.c said so) */
	bool allowed = !alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT);
	bool store = allowed && alloc_opts.snapshot && (alloc_opts.snapshot_at & ALLOC_SNAP_EXIT);
	bool gate = allowed && alloc_opts.leak_exit_code && alloc_mode == MEMINST_MODE_MIM &&
		    alloc_opts.leak_check != ALLOC_LEAK_CHECK_OFF;
	/* not ours (a vfork child: its parent's flag; a raw clone's copy that
	** stores nothing): no capture, not "no memory" */
	if (alloc_state != 2 || alloc_mode == MEMINST_MODE_OFF || !(store || gate) || !alloc_clone_adopt() ||
	    atomic_exchange(&snap_exit_done, true))
		return;
	alloc_snap_t *im = gate ? alloc_snap_capture_leaks("exit") : alloc_snap_capture(true, "exit");
	if (!im)
		alloc_log("no memory for the exit snapshot");
	else if (store)
		alloc_snap_store_configured(im);
	if (im && im->leak_done) {
		snap_exit_lost = (int64_t)im->leak.bytes[ALLOC_LEAK_DEFINITE];
		snap_exit_lost_blocks = (int64_t)im->leak.blocks[ALLOC_LEAK_DEFINITE];
	}
	alloc_snap_free(im);
	atomic_store(&snap_exit_stored, true);
}

/* leak_exit_code=N: the status the process ends with instead of its own
** (definitely lost bytes above leak_threshold at the exit check), 0: its
** own.  Said once on stderr, as LeakSanitizer reports before its exitcode. */
int alloc_snap_leak_exit_status(void)
{
	if (!alloc_opts.leak_exit_code || snap_exit_lost < 0 || (uint64_t)snap_exit_lost <= alloc_opts.leak_threshold)
		return 0;
	alloc_log("%lld bytes definitely lost in %lld blocks (leak_threshold=%llu): exit status %d "
		  "(leak_exit_code); see inspect leaks", (long long)snap_exit_lost, (long long)snap_exit_lost_blocks,
		  (unsigned long long)alloc_opts.leak_threshold, alloc_opts.leak_exit_code);
	return alloc_opts.leak_exit_code;
}
