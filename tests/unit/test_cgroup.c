/*
** test_cgroup.c — how snapshot_at=cgroup: and rss:N% find the process's
** memory cgroup (alloc/alloc_watch.c), on fake trees under a temporary
** folder given as the mount root: cgroup v2 alone (0::PATH, memory.current,
** the lowest memory.max or memory.high of the folder and its parents, "max"
** for none), v2 mounted at ROOT/unified beside v1, v1's memory controller
** (hierarchical_memory_limit, else memory.limit_in_bytes, the "no limit"
** value), and a process in no memory cgroup.  The machine the tests run on
** may have v1 only: these are the tests of the v2 paths.
*/
#include "ut.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void fake_root(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/meminst-cgroup.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	cr_assert_not_null(mkdtemp(root));
}

static int fake_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void fake_clean(void)
{
	if (root[0])
		nftw(root, fake_remove, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(cgroup, .fini = fake_clean);

/* ROOT/rel as a folder, with its parents. */
static void fake_dir(const char *rel)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	mkdir(p, 0700);
}

/* ROOT/rel holding text. */
static void fake_file(const char *rel, const char *text)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void find(const char *proc_cgroup, char *v1, char *v2)
{
	char text[1024];
	snprintf(text, sizeof text, "%s", proc_cgroup);
	alloc_watch_cgroup_dirs(text, root, v1, 512, v2, 512);
}

static const char *at(const char *rel)
{
	static char p[600];
	snprintf(p, sizeof p, "%s%s%s", root, *rel ? "/" : "", rel);
	return p;
}

Test(cgroup, v2_alone_lowest_limit_of_the_folder_and_its_parents)
{
	fake_root();
	fake_dir("user.slice/app.scope");
	fake_file("user.slice/app.scope/memory.current", "1048576\n");
	fake_file("user.slice/app.scope/memory.max", "max\n");
	fake_file("user.slice/app.scope/memory.high", "max\n");
	fake_file("user.slice/memory.max", "268435456\n");
	fake_file("user.slice/memory.high", "134217728\n");
	fake_file("memory.max", "4096\n"); /* the root's own: never read */
	char v1[512], v2[512], f[600];
	find("0::/user.slice/app.scope\n", v1, v2);
	cr_assert_str_eq(v1, "");
	cr_assert_str_eq(v2, at("user.slice/app.scope"));
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 134217728);
	cr_assert(alloc_watch_usage_file(v1, v2, f, sizeof f));
	cr_assert_str_eq(f, at("user.slice/app.scope/memory.current"));

	fake_file("user.slice/app.scope/memory.max", "67108864\n"); /* changed while it runs */
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 67108864);
}

Test(cgroup, v2_without_limit_and_the_root_cgroup)
{
	fake_root();
	fake_dir("a");
	fake_file("a/memory.current", "1\n");
	fake_file("a/memory.max", "max\n");
	char v1[512], v2[512];
	find("0::/a\n", v1, v2);
	cr_assert_str_eq(v2, at("a"));
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 0, "max everywhere: no limit");
	fake_file("memory.current", "1\n");
	find("0::/\n", v1, v2);
	cr_assert_str_eq(v2, root, "the root cgroup: the mount itself");
}

Test(cgroup, v2_beside_v1_under_unified)
{
	fake_root();
	fake_dir("unified/svc");
	fake_file("unified/svc/memory.current", "1\n");
	fake_file("unified/svc/memory.high", "1000000\n");
	char v1[512], v2[512], f[600];
	find("12:cpu,cpuacct:/svc\n1:name=systemd:/svc\n0::/svc\n", v1, v2);
	cr_assert_str_eq(v1, "");
	cr_assert_str_eq(v2, at("unified/svc"));
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 1000000);
	cr_assert(alloc_watch_usage_file(v1, v2, f, sizeof f));
	cr_assert_str_eq(f, at("unified/svc/memory.current"));
}

Test(cgroup, v1_memory_controller_wins)
{
	fake_root();
	fake_dir("memory/job");
	fake_dir("unified/job");
	fake_file("unified/job/memory.current", "1\n");
	fake_file("memory/job/memory.stat", "cache 0\nrss 4096\nhierarchical_memory_limit 536870912\n");
	fake_file("memory/job/memory.limit_in_bytes", "9223372036854771712\n");
	char v1[512], v2[512], f[600];
	find("9:memory:/job\n0::/job\n", v1, v2);
	cr_assert_str_eq(v1, at("memory/job"));
	cr_assert_str_eq(v2, "", "v1 holds the memory controller");
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 536870912);
	cr_assert(alloc_watch_usage_file(v1, v2, f, sizeof f));
	cr_assert_str_eq(f, at("memory/job/memory.usage_in_bytes"));
	/* no hierarchical figure: the cgroup's own; PAGE_COUNTER_MAX: none */
	fake_file("memory/job/memory.stat", "cache 0\n");
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 0);
	fake_file("memory/job/memory.limit_in_bytes", "33554432\n");
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 33554432);
}

Test(cgroup, in_no_memory_cgroup)
{
	fake_root();
	fake_dir("other");
	char v1[512], v2[512], f[600];
	find("0::/other\n", v1, v2); /* v2 without the memory controller: no memory.current */
	cr_assert_str_eq(v1, "");
	cr_assert_str_eq(v2, "");
	cr_assert_not(alloc_watch_usage_file(v1, v2, f, sizeof f));
	cr_assert_eq(alloc_watch_cgroup_limit(v1, v2, root), 0);
	find("", v1, v2);
	cr_assert_str_eq(v2, "");
}
