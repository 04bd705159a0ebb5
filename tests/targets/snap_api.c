/*
** snap_api.c — stores snapshots through meminst_store_memory_data and
** meminst_store_memory_status at known points, for
** tests/integration/snap_api.sh.  Linked with -lmeminst.
**
** Usage: snap_api PATH DIR
**
** All blocks of interest are 48-byte blocks of the registered type
** "snap_node" (class "snap_api_class"), so the test can find them by name:
**
**   1  data    40 nodes alive
**      (then chdir DIR: later stores must still reach the same file)
**   2  status  100 nodes made, 80 freed: 20 alive, max since last 100
**   3  data    nothing done since 2: max since last back to 20
**   4  data    10 nodes made and freed: max since last 30; nothing else
**              allocated or freed since 3, so the total's max since last
**              is 3's current plus 480
**   -  data    NULL path: -1, EINVAL
**   -  data    a path in a missing directory: -1, EIO
**   5  status  numbering goes on after failures
**
** Results are printed at the end, one line each, "STEP RESULT ERRNO"
** (ERRNO is "-" on success), so that stdio allocates nothing between the
** stores.  In off mode every store answers -1 ENOTSUP.
*/
#include <errno.h>
#include <meminst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE 48

static void *nodes[100];
static int nnodes;

struct result {
	const char *step;
	int rc, err;
};
static struct result results[8];
static int nresults;

static void record(const char *step, int rc)
{
	results[nresults++] = (struct result){step, rc, rc < 0 ? errno : 0};
}

static void make(int n, meminst_type_t type)
{
	for (int i = 0; i < n; i++)
		nodes[nnodes++] = meminst_malloc_typed(NODE, type);
}

static void drop(int n)
{
	while (n-- > 0)
		free(nodes[--nnodes]);
}

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "-";
	case EINVAL: return "EINVAL";
	case EIO: return "EIO";
	case ENOTSUP: return "ENOTSUP";
	case ENOMEM: return "ENOMEM";
	default: return strerror(e);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: snap_api PATH DIR\n");
		return 2;
	}
	const char *path = argv[1];
	meminst_type_t node = meminst_type_register("snap_node", meminst_class_register("snap_api_class"));
	make(40, node);
	record("data", meminst_store_memory_data(path));
	if (chdir(argv[2]) != 0) {
		perror(argv[2]);
		return 1;
	}
	make(60, node);
	drop(80);
	record("status", meminst_store_memory_status(path));
	record("data", meminst_store_memory_data(path));
	make(10, node);
	drop(10);
	record("data", meminst_store_memory_data(path));
	record("null", meminst_store_memory_data(NULL));
	record("nodir", meminst_store_memory_data("/nonexistent-meminst-dir/x.db"));
	record("status", meminst_store_memory_status(path));
	for (int i = 0; i < nresults; i++)
		printf("%s %d %s\n", results[i].step, results[i].rc, errno_name(results[i].err));
	drop(nnodes);
	return 0;
}
