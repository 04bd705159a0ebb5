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
#include "../trace/trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
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
	if (alloc_seccomp_refuses(ALLOC_SC_OPEN_READ | ALLOC_SC_SNAPSHOT | ALLOC_SC_FSTAT) || /* a filter's */
	    syscall(SYS_newfstatat, AT_FDCWD, "/proc/self/ns/pid", &st, 0) != 0)
		return 0;
	return st.st_ino;
}

static void alloc_ids_start_user(void);

void alloc_ids_init(void)
{
	ids_ref_ns = alloc_opts.run_pidns;
	alloc_ids_start_user();
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

/* ------------------------------------------------ a switch of user ---- */

/*
** A process that switches to another user (memcached -u nobody, su,
** setpriv, a daemon dropping root) cannot create its files in the
** launcher's private directory (0700, the launcher's user): it said
** "cannot create: Permission denied" at every store and its part was
** missing.  Before the switch, while it still may, it makes DIR/uid.N
** (0700, owned by user N) and gives N the right to pass through DIR, and
** DIR alone, by an ACL entry (search, not read or write: DIR's files stay
** unreadable and unlistable to N, and to anyone else); after it, its
** snapshots, notes, trace files of its children and the run's said.*
** files go there (the launcher gathers DIR/uid.N/ too).  A program
** executed after the switch (setpriv, su) finds DIR/uid.N by its user at
** start.  Without the launcher the files the process made already
** (snapshot=PATH and its notes) are given to N, so that the stores after
** the switch add to them.  What cannot be kept is said once, in one line.
*/
static const char *ids_root;       /* the launcher's run_dir as given (DIR) */
static size_t ids_root_len;
static char ids_snap[4096], ids_trace[4096], ids_run[4096];
static atomic_flag ids_lost_said = ATOMIC_FLAG_INIT;

#define IDS_ACL_USER_OBJ 0x01
#define IDS_ACL_USER 0x02
#define IDS_ACL_GROUP_OBJ 0x04
#define IDS_ACL_MASK 0x10
#define IDS_ACL_OTHER 0x20
struct ids_ace {
	uint16_t tag, perm;
	uint32_t id;
};

/* DIR's ACL with search (x) for uid added: 0, or -1 with errno. */
static int ids_acl_allow(const char *dir, uid_t uid)
{
	struct {
		uint32_t version;
		struct ids_ace e[30];
	} acl;
	ssize_t n = lgetxattr(dir, "system.posix_acl_access", &acl, sizeof acl);
	int count = n > 4 ? (int)((n - 4) / 8) : 0;
	if (n < 0 && errno != ENODATA)
		return -1;
	if (count == 0) { /* none yet: the mode's, 0700 */
		acl.version = 2;
		acl.e[0] = (struct ids_ace){IDS_ACL_USER_OBJ, 7, (uint32_t)-1};
		acl.e[1] = (struct ids_ace){IDS_ACL_GROUP_OBJ, 0, (uint32_t)-1};
		acl.e[2] = (struct ids_ace){IDS_ACL_OTHER, 0, (uint32_t)-1};
		count = 3;
	}
	bool user = false, mask = false;
	for (int i = 0; i < count; i++) {
		user |= acl.e[i].tag == IDS_ACL_USER && acl.e[i].id == uid;
		if (acl.e[i].tag == IDS_ACL_MASK || (acl.e[i].tag == IDS_ACL_USER && acl.e[i].id == uid))
			acl.e[i].perm |= 1, mask |= acl.e[i].tag == IDS_ACL_MASK;
	}
	if (count + 2 > 30)
		return errno = ENOSPC, -1;
	if (!user)
		acl.e[count++] = (struct ids_ace){IDS_ACL_USER, 1, uid};
	if (!mask)
		acl.e[count++] = (struct ids_ace){IDS_ACL_MASK, 1, (uint32_t)-1};
	for (int i = 1; i < count; i++) /* by tag, then id: the kernel's order */
		for (int j = i; j > 0 && (acl.e[j - 1].tag > acl.e[j].tag ||
					  (acl.e[j - 1].tag == acl.e[j].tag && acl.e[j - 1].id > acl.e[j].id)); j--) {
			struct ids_ace t = acl.e[j];
			acl.e[j] = acl.e[j - 1];
			acl.e[j - 1] = t;
		}
	return lsetxattr(dir, "system.posix_acl_access", &acl, 4 + (size_t)count * 8, 0);
}

/* in (n bytes, DIR/... or DIR/uid.M/...) as udir/...; false when not under DIR */
static bool ids_moved(const char *in, size_t n, const char *udir, char *out, size_t len)
{
	size_t r = ids_root_len;
	if (!in || n <= r + 1 || memcmp(in, ids_root, r) != 0 || in[r] != '/')
		return false;
	const char *rest = in + r + 1, *end = in + n;
	const char *slash = memchr(rest, '/', (size_t)(end - rest));
	if (end - rest > 4 && !memcmp(rest, "uid.", 4) && slash) /* an earlier switch's */
		rest = slash + 1;
	char tmp[4096];
	size_t u = strlen(udir), k = (size_t)(end - rest);
	if (u + 1 + k + 1 > sizeof tmp) /* alloc_fmt has no %.*s */
		return false;
	memcpy(tmp, udir, u);
	tmp[u] = '/';
	memcpy(tmp + u + 1, rest, k);
	tmp[u + 1 + k] = 0;
	memcpy(out, tmp, strlen(tmp) + 1 <= len ? strlen(tmp) + 1 : 0);
	return strlen(tmp) + 1 <= len;
}

/* From now on the process's files go to udir (set before the stores see
** it: a store under way keeps the name it expanded). */
static void ids_redirect(const char *udir)
{
	if (ids_moved(alloc_opts.snapshot, alloc_opts.snapshot_len, udir, ids_snap, sizeof ids_snap)) {
		alloc_opts.snapshot_len = strlen(ids_snap);
		alloc_opts.snapshot = ids_snap;
	}
	if (ids_moved(alloc_opts.trace_file, alloc_opts.trace_file_len, udir, ids_trace, sizeof ids_trace)) {
		alloc_opts.trace_file_len = strlen(ids_trace);
		alloc_opts.trace_file = ids_trace;
	}
	char t[4096];
	if (trace_path[0] && ids_moved(trace_path, strlen(trace_path), udir, t, sizeof t))
		memcpy(trace_path, t, strlen(t) + 1);
	alloc_fmt(ids_run, sizeof ids_run, "%s", udir);
	alloc_opts.run_dir = ids_run;
	alloc_opts.run_dir_len = strlen(ids_run);
}

static void ids_say_lost(uid_t uid, const char *why)
{
	atomic_fetch_or(&alloc_sc_refused, ALLOC_SC_SNAPSHOT); /* no store tries again, none says so */
	if (!atomic_flag_test_and_set(&ids_lost_said))
		alloc_log("process %d switched to user %u: %s; its snapshots and trace files from now on are "
			  "lost", alloc_ids_name(NULL), (unsigned)uid, why);
}

/* The launcher's directory for user uid: made (0700, its), DIR passable
** by it.  0, or -1 (said). */
static int ids_prepare(uid_t uid, char *udir, size_t len)
{
	char root[4096];
	if (ids_root_len >= sizeof root)
		return -1;
	memcpy(root, ids_root, ids_root_len);
	root[ids_root_len] = 0;
	struct stat st;
	if (lstat(root, &st) == 0 && st.st_uid == uid) /* back to the launcher's user (seteuid) */
		return alloc_fmt(udir, len, "%s", root) < (int)len ? 0 : -1;
	if (alloc_fmt(udir, len, "%s/uid.%u", root, (unsigned)uid) >= (int)len)
		return -1;
	if (mkdir(udir, 0700) != 0 && errno != EEXIST) {
		ids_say_lost(uid, "it could not make its directory in the run's (mkdir)");
		return -1;
	}
	if (lstat(udir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_uid != uid && (st.st_uid != geteuid() || lchown(udir, uid, (gid_t)-1) != 0))) {
		ids_say_lost(uid, "its directory in the run's cannot be given to it (chown)");
		return -1;
	}
	if (ids_acl_allow(root, uid) != 0) {
		char why[160];
		alloc_fmt(why, sizeof why, "the run's directory cannot be opened to it alone (an ACL entry: %s)",
			  strerror(errno));
		ids_say_lost(uid, why);
		return -1;
	}
	return 0;
}

/* Without the launcher: the snapshot file and its notes, made already,
** given to uid (back to was when the switch failed). */
static void ids_give_files(uid_t uid, uid_t was)
{
	char path[4096];
	struct stat st;
	if (!alloc_opts.snapshot ||
	    alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len, alloc_snap_cwd, path, sizeof path - 4) < 0)
		return;
	for (int i = 0; i < 2; i++) {
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == was)
			lchown(path, uid, (gid_t)-1);
		memcpy(path + strlen(path), ".log", 5);
	}
}

/* Can uid make files beside the snapshot (after the switch)? */
static void ids_check_after(uid_t uid)
{
	char path[4096];
	if (!alloc_opts.snapshot ||
	    alloc_snap_path(alloc_opts.snapshot, alloc_opts.snapshot_len, alloc_snap_cwd, path, sizeof path) < 0)
		return;
	char *slash = strrchr(path, '/');
	if (slash == path)
		slash++;
	if (slash)
		*slash = 0;
	if (slash && faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) != 0) {
		char why[4200];
		alloc_fmt(why, sizeof why, "it cannot make files in %s (%s)", path, strerror(errno));
		ids_say_lost(uid, why);
	}
}

/*
** set*uid: the program makes `to` its effective user (-1: unchanged).
** real(args) is the call; its result is the program's, errno too.
*/
long alloc_ids_switch_user(uid_t to, long (*real)(long, long, long), long a, long b, long c)
{
	uid_t was = geteuid();
	bool moving = to != (uid_t)-1 && to != was && alloc_mode != MEMINST_MODE_OFF &&
		      alloc_opts.snapshot && !alloc_seccomp_refuses(ALLOC_SC_SNAPSHOT | ALLOC_SC_FILES);
	char udir[4096];
	int e = errno;
	bool ready = moving && ids_root ? ids_prepare(to, udir, sizeof udir) == 0 : false;
	if (moving && !ids_root)
		ids_give_files(to, was);
	/* no store of the service thread's across the switch: its credentials
	** change too (libc's call on every thread), and a store begun as one
	** user failed half way as the other ("disk I/O error") */
	bool held = moving && ready && !alloc_tls.guard && alloc_service_running();
	if (held)
		alloc_service_hold();
	errno = e;
	long rc = real(a, b, c);
	e = errno;
	if (moving && rc == 0 && geteuid() == to) {
		if (ready)
			ids_redirect(udir);
		else if (!ids_root)
			ids_check_after(to);
	} else if (moving && !ids_root) {
		ids_give_files(was, to);
	}
	if (held)
		alloc_service_release();
	errno = e;
	return rc;
}

/* At start, under the launcher: a program executed by a process that had
** switched users (setpriv --reuid, su) finds its directory by its user. */
static void alloc_ids_start_user(void)
{
	ids_root = alloc_opts.run_dir;
	ids_root_len = alloc_opts.run_dir_len;
	if (!ids_root || !alloc_opts.snapshot)
		return;
	char root[4096], udir[4200];
	struct stat st;
	if (ids_root_len >= sizeof root)
		return;
	memcpy(root, ids_root, ids_root_len);
	root[ids_root_len] = 0;
	uid_t me = geteuid();
	if (lstat(root, &st) == 0 && st.st_uid == me) /* the launcher's user: as ever */
		return;
	alloc_fmt(udir, sizeof udir, "%s/uid.%u", root, (unsigned)me);
	if (lstat(udir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == me)
		ids_redirect(udir);
	else if (errno != ENOENT || lstat(root, &st) == 0) /* the run is not over */
		ids_say_lost(me, "the run's directory is another user's, and none was made for this one");
}
