/*
** serve_target.c — a multi-threaded program holding known blocks while
** `inspect serve` scrapes it, for tests/inspect/serve.sh.
**
** Usage: serve_target GOFILE
**
** Run preloaded with MEMINST=mim,control=on.  Two threads named
** "serve-w1" and "serve-w2" each make 100 blocks of 1000 bytes in
** worker_alloc (w1) or 50 of 3000 bytes in worker_big (w2); the main
** thread makes 30 of 500 bytes in main_alloc and frees 1000 temporary
** blocks of 10 bytes in main_temp.  Then it prints "pid N" and "ready",
** and every thread waits, without allocating, until GOFILE exists (the
** test, not a timer, says when it is done; after an hour the program
** gives up with exit status 4: on a loaded machine serve.sh's 40 decoded
** scrapes took over 600 s, the earlier bound, and its last steps found the
** target gone).  Then the threads end and the program exits 0.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *go_file;
static pthread_barrier_t made;

static void *volatile keep[300];

static void wait_go(void)
{
	struct timespec ts = {0, 20 * 1000 * 1000};
	for (int i = 0; i < 180000; i++) {
		if (access(go_file, F_OK) == 0)
			return;
		nanosleep(&ts, NULL);
	}
	_exit(4);
}

__attribute__((noinline)) static void worker_alloc(int at)
{
	for (int i = 0; i < 100; i++)
		keep[at + i] = malloc(1000);
}

__attribute__((noinline)) static void worker_big(int at)
{
	for (int i = 0; i < 50; i++)
		keep[at + i] = malloc(3000);
}

__attribute__((noinline)) static void main_alloc(int at)
{
	for (int i = 0; i < 30; i++)
		keep[at + i] = malloc(500);
}

__attribute__((noinline)) static void main_temp(void)
{
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(10);
		free(p);
	}
}

static void *worker(void *arg)
{
	long w = (long)arg;
	pthread_setname_np(pthread_self(), w == 1 ? "serve-w1" : "serve-w2");
	if (w == 1)
		worker_alloc(0);
	else
		worker_big(100);
	pthread_barrier_wait(&made);
	wait_go();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: serve_target GOFILE\n");
		return 2;
	}
	go_file = argv[1];
	pthread_barrier_init(&made, NULL, 3);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	main_alloc(200);
	main_temp();
	pthread_barrier_wait(&made);
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	wait_go();
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
