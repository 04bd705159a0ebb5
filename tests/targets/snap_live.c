/*
** snap_live.c — a program whose live blocks at exit are known exactly, for
** tests/integration/snap_exit.sh.
**
** Usage: snap_live [DIR]
**
** Run preloaded with MEMINST=mim,snapshot=…: the exit snapshot must hold,
** in the class named after this executable, exactly the blocks this
** program leaves alive, one allocation site (automatic type) per group:
**
**   group    site          blocks  size  allocator  thread
**   malloc   grp_malloc    100     24    0 malloc   main
**   calloc   grp_calloc    50      1000  1 calloc   main
**   aligned  grp_aligned   10      4096  3 aligned  main
**   realloc  grp_realloc   20      300   2 realloc  main
**   worker   worker        30      200   0 malloc   "snapworker"
**
** plus 1000 blocks made and freed (they must not show) and 20 blocks of
** 10 bytes that realloc replaced.  The program prints these figures on
** stdout ("group NAME BLOCKS BYTES ALLOCATOR", "thread NAME BLOCKS BYTES",
** "pid N") so the test compares the database with the program's own
** account, not with numbers copied into the script.  With DIR it changes
** into DIR before exiting, so that a relative snapshot path can be shown
** to stay relative to the directory the process started in.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[1000];
static int nkeep;

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

static NOINLINE void grp_malloc(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = malloc(24);
}

static NOINLINE void grp_calloc(void)
{
	for (int i = 0; i < 50; i++)
		keep[nkeep++] = calloc(10, 100);
}

static NOINLINE void grp_aligned(void)
{
	for (int i = 0; i < 10; i++)
		if (posix_memalign(&keep[nkeep++], 64, 4096) != 0)
			fail("posix_memalign");
}

static NOINLINE void grp_realloc(void)
{
	for (int i = 0; i < 20; i++) {
		void *p = malloc(10);
		keep[nkeep++] = realloc(p, 300);
	}
}

/* Made and freed: none of these may appear in a snapshot taken later. */
static NOINLINE void grp_churn(void)
{
	void *tmp[1000];
	for (int i = 0; i < 1000; i++)
		tmp[i] = malloc(50);
	for (int i = 0; i < 1000; i++)
		free(tmp[i]);
}

static void *worker_blocks[30];

/* Names itself before its first allocation: the name is what the test
** finds the thread by. */
static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "snapworker");
	for (int i = 0; i < 30; i++)
		worker_blocks[i] = malloc(200);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	grp_malloc();
	grp_calloc();
	grp_aligned();
	grp_realloc();
	grp_churn();
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
		fail("pthread");
	for (int i = 0; i < nkeep; i++)
		if (!keep[i])
			fail("allocation");
	for (int i = 0; i < 30; i++) /* read: or the compiler drops the mallocs */
		if (!worker_blocks[i])
			fail("allocation");
	printf("pid %d\n", (int)getpid());
	printf("group malloc 100 2400 0\n");
	printf("group calloc 50 50000 1\n");
	printf("group aligned 10 40960 3\n");
	printf("group realloc 20 6000 2\n");
	printf("group worker 30 6000 0\n");
	printf("thread snap_live 180 99360\n");
	printf("thread snapworker 30 6000\n");
	if (argc > 1 && chdir(argv[1]) != 0)
		fail(argv[1]);
	return 0;
}
