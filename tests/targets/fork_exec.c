/*
** fork_exec.c — fork and exec under libmeminst, for the integration tests
** (tests/integration/fork_exec.sh).
**
** Usage: fork_exec PATH-OF-exec_child
**
** The parent allocates and fills blocks, starts a thread that keeps
** allocating (so forks happen while another thread is inside the
** allocator), then forks children one after another.  Each child checks
** the inherited blocks, frees some of them, allocates and frees on its own,
** checks the counters add up (probe.h), and execs exec_child, which allocates again.
** The parent waits for each child and requires exit 0.
** Output order is fixed: the parent flushes before forking and waits for
** each child before the next.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

#define CHILDREN 12
#define BLOCKS 200

static char *blocks[BLOCKS];
static atomic_int stop;

static size_t block_size(int i)
{
	return 16 + (size_t)i * 37;
}

static int blocks_intact(void)
{
	for (int i = 0; i < BLOCKS; i++)
		if (blocks[i] && (unsigned char)blocks[i][block_size(i) - 1] != (unsigned char)i)
			return 0;
	return 1;
}

/* Keeps the allocator busy in another thread while the parent forks. */
static void *churn(void *arg)
{
	(void)arg;
	void *keep[16] = {NULL};
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		free(keep[i % 16]);
		keep[i % 16] = malloc(1 + i % 3000);
	}
	for (int i = 0; i < 16; i++)
		free(keep[i]);
	return NULL;
}

static void child(int n, const char *exec_child)
{
	if (!blocks_intact())
		_exit(10);
	for (int i = n; i < BLOCKS; i += CHILDREN)
		free(blocks[i]); /* the parent's blocks, copied by fork */
	char *mine[100];
	for (int i = 0; i < 100; i++)
		if (!(mine[i] = malloc(8 + (size_t)i * n)))
			_exit(11);
	for (int i = 0; i < 100; i++)
		free(mine[i]);
	probe_check_sums("in a forked child");
	char arg[16];
	snprintf(arg, sizeof arg, "%d", n);
	execl(exec_child, "exec_child", arg, (char *)NULL);
	_exit(12);
}

static int fork_one(int n, const char *exec_child)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		child(n, exec_child);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fork_exec PATH-OF-exec_child\n");
		return 2;
	}
	probe_reader();
	for (int i = 0; i < BLOCKS; i++) {
		if (!(blocks[i] = malloc(block_size(i))))
			return 1;
		memset(blocks[i], i, block_size(i));
	}
	pthread_t t;
	if (pthread_create(&t, NULL, churn, NULL))
		return 1;
	int failed = 0;
	for (int n = 0; n < CHILDREN; n++) {
		int st = fork_one(n, argv[1]);
		if (st != 0) {
			printf("child %d: exit status %d\n", n, st);
			failed++;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	int intact = blocks_intact();
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
	probe_check_own_class_empty(argv[0], BLOCKS);
	probe_check_sums("in the parent");
	printf("parent: %d children, %d failed, blocks %s\n", CHILDREN, failed,
	       intact ? "intact" : "damaged");
	return failed || !intact;
}
