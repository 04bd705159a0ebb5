/*
** alloc_watch.c — snapshot_at=rss:LIMIT and cgroup:LIMIT: a map snapshot
** before the end, when the process's resident set or its memory cgroup's
** usage crosses a threshold, so that a process the OOM killer or SIGKILL
** ends leaves its last map behind.
**
** Nothing here is on the allocation path.  The service thread calls
** alloc_watch_check every ALLOC_WATCH_PERIOD_MS (alloc_service.c), every
** 5 times that while the values are below half their thresholds: one
** read of /proc/self/statm for rss:, one of the cgroup's usage file for
** cgroup: (bench/RESULTS.md has the cost).  The limits a percentage is of
** are read again every ALLOC_WATCH_LIMIT_MS, since they may be changed
** while the program runs.
**
**   rss:N%     of the memory cgroup's limit when it has one, else of the
**              machine's physical memory (RLIMIT_AS bounds address space,
**              not residence: not used)
**   cgroup:N%  the cgroup's usage (v1 memory.usage_in_bytes, v2
**              memory.current) as a share of its limit (v1: memory.stat's
**              hierarchical_memory_limit, the lowest limit of it and its
**              parents; v2: the lowest memory.max or memory.high of it and
**              its parents)
**   SIZE       a number of bytes instead
**
** A trigger fires when the value reaches its threshold, then again each
** time it has grown by a further 1/32 of the threshold (so 90 % of a limit
** gives snapshots near 90, 93, 96 and 99 %: the last before the kill is
** near the end), and once more after the value came back below the
** threshold by that step.
*/
#include "alloc_int.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { W_RSS, W_CGROUP, W_COUNT };

#define WATCH_ROOT "/sys/fs/cgroup" /* where the cgroup hierarchies are mounted */

static struct watch {
	char v1[512], v2[512];  /* the cgroup's folder (v1 memory, v2), "" none */
	uint64_t limit;         /* the cgroup's lowest limit, 0: none */
	uint64_t phys;          /* the machine's memory */
	int64_t limit_read_ms;  /* when limit was read */
	uint64_t next[W_COUNT]; /* fire at or above this; 0 not armed yet */
	uint64_t seen[W_COUNT]; /* the value at the last check */
	bool said_nolimit, said_nocgroup;
} watch;

/* The value of "KEY VALUE" lines (memory.stat), or of a file of one number
** ("max": none, UINT64_MAX). */
static uint64_t watch_number(const char *path, const char *key)
{
	char buf[4096];
	if (alloc_sys_read_file(path, buf, sizeof buf) <= 0)
		return 0;
	const char *p = buf;
	if (key) {
		size_t n = strlen(key);
		while (p && !(strncmp(p, key, n) == 0 && p[n] == ' '))
			p = (p = strchr(p, '\n')) ? p + 1 : NULL;
		if (!p)
			return 0;
		p += n + 1;
	}
	if (strncmp(p, "max", 3) == 0)
		return UINT64_MAX;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

/* "" for the root cgroup's path "/", else the path (its folder under a
** hierarchy's mount). */
static const char *watch_sub(const char *path)
{
	return strcmp(path, "/") ? path : "";
}

/* The memory cgroup's folders of a process from the text of its
** /proc/PID/cgroup (changed in place) and the hierarchies' mount root
** (/sys/fs/cgroup; a test gives a tree of its own): v1's memory
** controller line gives ROOT/memory/PATH; v2's "0::PATH" gives ROOT/PATH,
** or ROOT/unified/PATH (v2 beside v1), where memory.current is there.
** When v1 holds the memory controller, v2 has none. */
void alloc_watch_cgroup_dirs(char *text, const char *root, char *v1, size_t n1, char *v2, size_t n2)
{
	char f[600], one[64], under[512];
	v1[0] = v2[0] = 0;
	for (char *line = text, *next; *line; line = next) {
		char *end = line + strcspn(line, "\n");
		next = end + (*end != 0);
		*end = 0;
		char *path = strrchr(line, ':'); /* the path has no ':' in practice */
		if (!path || path[1] != '/')
			continue;
		if (path - line > 7 && !strncmp(path - 7, ":memory", 7))
			alloc_fmt(v1, n1, "%s/memory%s", root, watch_sub(path + 1));
		else if (!strncmp(line, "0::", 3))
			for (int i = 0; i < 2 && !v2[0]; i++) {
				alloc_fmt(under, sizeof under, "%s%s", root, i ? "/unified" : "");
				alloc_fmt(f, sizeof f, "%s%s/memory.current", under, watch_sub(path + 1));
				if (alloc_sys_read_file(f, one, sizeof one) > 0)
					alloc_fmt(v2, n2, "%s%s", under, watch_sub(path + 1));
			}
	}
	if (v1[0])
		v2[0] = 0;
}

static void watch_find_cgroup(void)
{
	char buf[4096];
	if (alloc_sys_read_file("/proc/self/cgroup", buf, sizeof buf) > 0)
		alloc_watch_cgroup_dirs(buf, WATCH_ROOT, watch.v1, sizeof watch.v1, watch.v2, sizeof watch.v2);
}

/* The lowest memory.max or memory.high of the v2 folder and its parents
** below the mount root (0: none). */
static uint64_t watch_v2_limit(const char *v2, const char *root)
{
	char dir[512], f[600];
	uint64_t low = UINT64_MAX;
	alloc_fmt(dir, sizeof dir, "%s", v2);
	for (;;) {
		static const char *const files[] = {"memory.max", "memory.high"};
		for (int i = 0; i < 2; i++) {
			alloc_fmt(f, sizeof f, "%s/%s", dir, files[i]);
			uint64_t v = watch_number(f, NULL);
			if (v && v < low)
				low = v;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash - dir <= (long)strlen(root))
			break;
		*slash = 0;
	}
	return low == UINT64_MAX ? 0 : low;
}

uint64_t alloc_watch_cgroup_limit(const char *v1, const char *v2, const char *root)
{
	char f[600];
	uint64_t lim = 0;
	if (v1[0]) {
		alloc_fmt(f, sizeof f, "%s/memory.stat", v1);
		lim = watch_number(f, "hierarchical_memory_limit");
		if (!lim) {
			alloc_fmt(f, sizeof f, "%s/memory.limit_in_bytes", v1);
			lim = watch_number(f, NULL);
		}
		if (lim >= (1ull << 62)) /* v1 says "no limit" with PAGE_COUNTER_MAX */
			lim = 0;
	} else if (v2[0]) {
		lim = watch_v2_limit(v2, root);
	}
	return lim;
}

bool alloc_watch_usage_file(const char *v1, const char *v2, char *f, size_t n)
{
	if (v1[0])
		alloc_fmt(f, n, "%s/memory.usage_in_bytes", v1);
	else if (v2[0])
		alloc_fmt(f, n, "%s/memory.current", v2);
	return v1[0] || v2[0];
}

static void watch_read_limit(int64_t now_ms)
{
	watch.limit_read_ms = now_ms;
	watch.limit = alloc_watch_cgroup_limit(watch.v1, watch.v2, WATCH_ROOT);
}

static uint64_t watch_threshold(int w)
{
	uint8_t pct = w == W_RSS ? alloc_opts.watch_rss_pct : alloc_opts.watch_cgroup_pct;
	uint64_t bytes = w == W_RSS ? alloc_opts.watch_rss_bytes : alloc_opts.watch_cgroup_bytes;
	if (!pct)
		return bytes;
	uint64_t of = watch.limit ? watch.limit : w == W_RSS ? watch.phys : 0;
	return of / 100 * pct;
}

/* From the service thread's start. */
void alloc_watch_init(void)
{
	if (!(alloc_opts.snapshot_at & ALLOC_SNAP_WATCH))
		return;
	watch_find_cgroup();
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	watch.phys = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
	watch_read_limit(alloc_snap_now(CLOCK_MONOTONIC) / 1000000);
	if ((alloc_opts.snapshot_at & ALLOC_SNAP_CGROUP) && !watch.v1[0] && !watch.v2[0]) {
		watch.said_nocgroup = true;
		alloc_log("snapshot_at=cgroup: the process is in no memory cgroup that meminst can read "
			  "(/proc/self/cgroup, /sys/fs/cgroup); this trigger never fires");
	}
}

/*
** The file of a value, kept open by the service thread in its own
** descriptor table (a pread is one system call where open, read and close
** are three: about 15 against 45 us each here, bench/RESULTS.md); opened
** and closed each time when the thread shares the program's table.
*/
static int watch_fd[W_COUNT] = {-1, -1};

static int watch_read(int w, const char *path, char *buf, size_t len)
{
	if (!alloc_service_own_table())
		return alloc_sys_read_file(path, buf, len);
	if (watch_fd[w] < 0)
		watch_fd[w] = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = watch_fd[w] < 0 ? -1 : pread(watch_fd[w], buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

static uint64_t watch_value(int w)
{
	char f[600];
	if (w == W_RSS) {
		char statm[256];
		unsigned long long pages = 0, resident = 0;
		if (watch_read(w, "/proc/self/statm", statm, sizeof statm) <= 0)
			return 0;
		const char *p = statm;
		for (; *p >= '0' && *p <= '9'; p++)
			pages = pages * 10 + (unsigned)(*p - '0');
		for (p += *p == ' '; *p >= '0' && *p <= '9'; p++)
			resident = resident * 10 + (unsigned)(*p - '0');
		return resident * (uint64_t)sysconf(_SC_PAGESIZE);
	}
	if (!alloc_watch_usage_file(watch.v1, watch.v2, f, sizeof f))
		return 0;
	char buf[64];
	uint64_t v = 0;
	if (watch_read(w, f, buf, sizeof buf) <= 0)
		return 0;
	for (const char *p = buf; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* The next check: ALLOC_WATCH_PERIOD_MS when a value is past half its
** threshold, five times that while every one is below half. */
int alloc_watch_period_ms(void)
{
	for (int w = 0; w < W_COUNT; w++)
		if (watch.next[w] && watch.seen[w] >= watch.next[w] / 2)
			return ALLOC_WATCH_PERIOD_MS;
	return 5 * ALLOC_WATCH_PERIOD_MS;
}

/*
** Read the values; a bit set of the triggers due (1 << W_RSS: rss,
** 1 << W_CGROUP: cgroup).  alloc_watch_stored moves the threshold once
** the snapshot is stored, so a store that waited (a busy file) is tried
** again at the next check.
*/
unsigned alloc_watch_check(void)
{
	unsigned due = 0;
	int64_t now_ms = alloc_snap_now(CLOCK_MONOTONIC) / 1000000;
	if (now_ms - watch.limit_read_ms >= ALLOC_WATCH_LIMIT_MS)
		watch_read_limit(now_ms);
	for (int w = 0; w < W_COUNT; w++) {
		if (!(alloc_opts.snapshot_at & (w == W_RSS ? ALLOC_SNAP_RSS : ALLOC_SNAP_CGROUP)) ||
		    (w == W_CGROUP && watch.said_nocgroup))
			continue;
		uint64_t at = watch_threshold(w);
		if (!at) {
			if (!watch.said_nolimit)
				alloc_log("snapshot_at=cgroup:%u%%: the process's memory cgroup has no limit; "
					  "the trigger waits for one", (unsigned)alloc_opts.watch_cgroup_pct);
			watch.said_nolimit = true;
			continue;
		}
		uint64_t v = watch.seen[w] = watch_value(w), step = at / 32 ? at / 32 : 1;
		if (!watch.next[w] || (v + step < at && watch.next[w] > at))
			watch.next[w] = at; /* first look, or back below: armed at the threshold */
		if (v >= watch.next[w])
			due |= 1u << w;
	}
	return due;
}

const char *alloc_watch_trigger(unsigned due)
{
	return due & (1u << W_RSS) ? "rss" : "cgroup";
}

/* The snapshot of the triggers in `due` is stored: the next at 1/32 of the
** threshold further. */
void alloc_watch_stored(unsigned due)
{
	for (int w = 0; w < W_COUNT; w++)
		if (due & (1u << w)) {
			uint64_t at = watch_threshold(w), step = at / 32 ? at / 32 : 1;
			watch.next[w] = watch.seen[w] + step;
		}
}
