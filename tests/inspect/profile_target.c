/*
** profile_target.c — a busy multi-threaded program whose CPU profile
** `inspect serve` takes, for tests/inspect/serve_profile.sh.
**
** Usage: profile_target GOFILE
**
** Run preloaded with MEMINST=off,control=on (dormant) or any other mode.
** Two threads named "burn-w1" and "burn-w2" spend their CPU time in
** burn_cpu (a hash loop, with a malloc and free now and then) until GOFILE
** exists; the main thread prints "pid N" and "ready", waits for GOFILE the
** same way (sleeping), then prints the threads' round counts' parity-free
** line "done" and exits 0 (after 300 s without GOFILE: status 4).  The
** output never depends on timing, so a run profiled and one not print the
** same.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *go_file;
static volatile int stop;
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long burn_cpu(unsigned long seed)
{
	unsigned long h = seed;
	for (int i = 0; i < 200000; i++)
		h = (h ^ (unsigned long)i) * 0x100000001b3ul;
	char *p = malloc(64);
	if (p) {
		memset(p, (int)(h & 0xff), 64);
		h += (unsigned char)p[7];
		free(p);
	}
	return h;
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	unsigned long h = 1;
	while (!stop)
		h = burn_cpu(h);
	sink = h;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: profile_target GOFILE\n");
		return 2;
	}
	go_file = argv[1];
	pthread_t t[2];
	pthread_create(&t[0], NULL, worker, "burn-w1");
	pthread_create(&t[1], NULL, worker, "burn-w2");
	printf("pid %d\nready\n", (int)getpid());
	fflush(stdout);
	struct timespec ts = {0, 20 * 1000 * 1000};
	int waited = 0;
	while (access(go_file, F_OK) != 0 && waited < 300 * 50) {
		nanosleep(&ts, NULL);
		waited++;
	}
	stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (waited >= 300 * 50)
		return 4;
	printf("done\n");
	return 0;
}
