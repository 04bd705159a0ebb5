/*
** alloc_ids.c — the number a process's files and snapshots are named by.
**
** %p in snapshot=, trace_file= and the notes file, and a snapshot's pid,
** are the process's pid as the run sees it.  A process in a pid namespace
** of its own (`unshare --pid --fork`, a container's, Chromium's zygote and
** renderers) is 1, 2 ... there, as every other such process: they all
** wrote mem.1.db and trace.1 (a second trace.1 replaced the first, the
** session merged their snapshots into one process).  Such a process is
** named by its pid outside, the first number of NSpid in
** /proc/self/status when /proc is an outer one; when it is not (`unshare
** --mount-proc`, /proc not readable in a chroot), by a number no pid can
** be (2^30 and up, random), the pid inside said once in its notes.
**
** Which namespace is the run's: run_pidns= (the launcher's, meminst(1));
** without it, the one /proc shows (a process exec'd under --mount-proc is
** then named by its pid inside, as before).  When /proc cannot tell, a
** child of fork is as its parent was, and a pid 1 is a namespace's first.
** One stat of /proc/self/ns/pid per process that names a file, at its
** first; NSpid is read only in another namespace.
*/
#include "alloc_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int ids_name;      /* 0: not known yet (forgotten at fork) */
static _Atomic int ids_name_ppid; /* the parent, as seen from the same place */
static bool ids_nested;           /* in another pid namespace than the run's */
static uint64_t ids_ref_ns;       /* the run's pid namespace (inode), 0: unknown */

/* The pid namespace of the calling process (nsfs inode), 0 when unknown.
** The raw call: stat is interposed (alloc_hooks.c). */
static uint64_t ids_pidns(void)
{
	struct stat st;
	if (alloc_seccomp_refuses(ALLOC_SC_OPEN_READ) ||
	    syscall(SYS_newfstatat, AT_FDCWD, "/proc/self/ns/pid", &st, 0) != 0)
		return 0;
	return st.st_ino;
}

void alloc_ids_init(void)
{
	ids_ref_ns = alloc_opts.run_pidns;
}

/* A child of fork (or an adopted raw clone): named afresh at its first
** file; ids_nested, its parent's, stays. */
void alloc_ids_forget(void)
{
	atomic_store(&ids_name, 0);
}

/* The number after key in /proc/self/status's text s: the first (outermost)
** one; *more: another follows on the line (NSpid of a nested namespace). */
static long ids_field(const char *s, const char *key, bool *more)
{
	const char *at = strstr(s, key);
	if (!at)
		return 0;
	char *end;
	long v = strtol(at + strlen(key), &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (more)
		*more = *end >= '0' && *end <= '9';
	return v > 0 && v <= 0x7fffffff ? v : 0;
}

/* The pid outside the namespace (NSpid's first, when /proc is an outer
** namespace's) and the parent's, seen from there; 0 when not readable. */
static int ids_outside(int *ppid)
{
	char buf[4096];
	bool more = false;
	long outer = 0;
	if (alloc_sys_read_file("/proc/self/status", buf, sizeof buf) > 0)
		outer = ids_field(buf, "\nNSpid:", &more);
	if (!outer || !more)
		return 0;
	*ppid = (int)ids_field(buf, "\nPPid:", NULL);
	return (int)outer;
}

/* A number no pid can be (pid_max is 2^22 at most), for a process whose
** pid outside its namespace is not readable: noted once. */
static int ids_own_number(int pid)
{
	uint32_t r = 0;
	if (!alloc_sys_random(&r, sizeof r))
		r = (uint32_t)alloc_snap_now(CLOCK_MONOTONIC) ^ (uint32_t)pid << 11;
	return (int)(0x40000000u | (r & 0x3fffffffu));
}

#define IDS_INIT_PIDNS 0xeffffffcu /* the first pid namespace's inode (PROC_PID_INIT_INO) */

/*
** The number %p expands to, and a snapshot's pid; 0 when the pid is not
** known (a seccomp filter refused getpid in a child of fork).  ppid, when
** not NULL: the parent's, seen from the same place.
*/
int alloc_ids_name(int *ppid)
{
	int name = atomic_load(&ids_name);
	int pid = alloc_sys_pid();
	if (!name && pid) {
		uint64_t ns = ids_pidns();
		int parent = (int)getppid();
		bool nested;
		if (ids_ref_ns) /* the launcher's; unknown: as the parent was, a pid 1 is a namespace's first */
			nested = ns ? ns != ids_ref_ns : ids_nested || pid == 1;
		else /* without it: nested as /proc sees it */
			nested = ns ? ns != IDS_INIT_PIDNS : ids_nested;
		name = nested ? ids_outside(&parent) : pid;
		if (!name && ids_ref_ns)
			name = ids_own_number(pid), parent = 0;
		else if (!name)
			name = pid;
		int was = 0;
		if (atomic_compare_exchange_strong(&ids_name, &was, name)) {
			atomic_store(&ids_name_ppid, parent);
			ids_nested = nested;
			if (name >= 0x40000000) { /* its notes file is named by it now */
				char line[300];
				int n = alloc_fmt(line, sizeof line, "meminst: process %d of a pid namespace of its "
						  "own, whose pid outside is not readable (/proc is the namespace's "
						  "own, or none): its files and snapshots are numbered %d\n", pid, name);
				if (alloc_snap_note)
					alloc_snap_note(line, (size_t)n);
			}
		} else {
			name = was;
		}
	}
	if (ppid)
		*ppid = name == pid || !name ? (int)getppid() : atomic_load(&ids_name_ppid);
	return name;
}
