/*
** snap_fork.c — a parent and three children, each storing its own exit
** snapshot, for tests/integration/snap_fork.sh.
**
** Runs preloaded with MEMINST=mim,snapshot=f.%p.db.  The parent allocates
** 100 blocks of 64 bytes, then forks children one after another; child i
** (1..3) frees the first 10*i of the inherited blocks, allocates 5*i
** blocks of 128 bytes and calls exit(), so that its exit snapshot runs.
** After the children the parent allocates 7 blocks of 256 bytes.  Each
** process prints "NAME PID BLOCKS BYTES" with the blocks of this program
** it leaves alive:
**
**   parent  107 blocks  8192 bytes
**   child1   95 blocks  6400 bytes   (and 90, 85 for children 2 and 3)
**
** Output order is fixed: stdout is flushed before each fork and each
** child is waited for before the next.  With the argument "_exit" the
** children end with _exit(0) (as most forked children do), not exit().
*/
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

static int raw_exit; /* the children end with _exit */

/* volatile: stores the compiler may not drop, nor the mallocs with them */
static void *volatile blocks[100 + 15];

static void child(int i)
{
	int n = 100;
	for (int k = 0; k < 10 * i; k++) {
		free(blocks[k]);
		blocks[k] = NULL;
	}
	for (int k = 0; k < 5 * i; k++)
		blocks[n++] = malloc(128);
	printf("child%d %d %d %d\n", i, (int)getpid(), 100 - 5 * i, (100 - 10 * i) * 64 + 5 * i * 128);
	if (raw_exit) {
		fflush(stdout);
		_exit(0);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	raw_exit = argc > 1 && !strcmp(argv[1], "_exit");
	for (int k = 0; k < 100; k++)
		blocks[k] = malloc(64);
	for (int i = 1; i <= 3; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			child(i);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
	}
	for (int k = 0; k < 7; k++)
		blocks[100 + k] = malloc(256);
	printf("parent %d 107 8192\n", (int)getpid());
	return 0;
}
