/* frames.c — threads and libc calls from main for tests/export/frames.sh:
** two threads and main run worker (middle calls leaf, an allocation a
** round), then main formats and writes lines with snprintf and fwrite. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned sink;

void leaf(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

void middle(unsigned n)
{
	for (int k = 0; k < 10; k++)
		leaf(n);
}

void *worker(void *arg)
{
	long rounds = (long)arg;
	for (long r = 0; r < rounds; r++) {
		middle(20000);
		char *p = malloc(64 + r % 100);
		memset(p, 1, 64);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)rounds);
	worker((void *)rounds);
	char buf[256];
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof buf, "%d %s\n", i, "text to format");
		fwrite(buf, 1, strlen(buf), stdout);
	}
	usleep(10000);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%u\n", sink);
	return 0;
}
