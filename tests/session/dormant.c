/*
** dormant.c — a program switched on and off while it runs (dormant.sh).
**
** Four load threads allocate, reallocate and free without pause from the
** start to the end, handing blocks to each other through a shared ring, so
** that blocks made while meminst is off are freed, reallocated and sized
** while it is on, and the other way round.  The main thread reads commands
** from the file named by its argument (a FIFO), one a line:
**     count N   N malloc(48)+free pairs from counted_site, then "done N"
**     quit      stop the load, join it, print the results, exit
** It says "ready PID" first.  The results do not depend on timing: the checksum of what the load wrote
** and read back, and the number of counted pairs.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <unistd.h>

#define LOADERS 4
#define RING 4096

static void *ring[RING];
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool quit;
static uint64_t sums[LOADERS];
static char cmd_line[64];

/* Put a block in a slot, taking out what was there (another thread's). */
static void *ring_swap(unsigned i, void *p)
{
	pthread_mutex_lock(&ring_lock);
	void *old = ring[i % RING];
	ring[i % RING] = p;
	pthread_mutex_unlock(&ring_lock);
	return old;
}

static void *loader(void *arg)
{
	unsigned no = (unsigned)(uintptr_t)arg, x = no * 2654435761u + 1;
	uint64_t sum = 0;
	for (unsigned long n = 0; !atomic_load_explicit(&quit, memory_order_relaxed); n++) {
		x = x * 1103515245u + 12345u;
		size_t size = 8 + (x >> 8) % 500;
		unsigned char *p = (x & 0x10000) ? calloc(1, size) : malloc(size);
		if (!p)
			abort();
		memset(p, (int)(n & 0xff), size);
		p[0] = (unsigned char)size;
		if ((x & 0x300000) == 0) {
			unsigned char *q = realloc(p, size + 64);
			if (!q)
				abort();
			p = q;
		}
		if (malloc_usable_size(p) < size)
			abort();
		unsigned char *old = ring_swap(x >> 12, p);
		if (old) {
			sum += old[0] + old[1]; /* what another thread wrote, whenever it did */
			free(old);
		}
	}
	sums[no] = sum;
	return NULL;
}

static __attribute__((noinline)) void counted_site(long n)
{
	for (long i = 0; i < n; i++) {
		void *volatile p = malloc(48);
		free(p);
	}
}

/* One command line from f, by read(2): stdio would allocate. */
static int read_cmd(int fd)
{
	size_t n = 0;
	while (n + 1 < sizeof cmd_line && read(fd, cmd_line + n, 1) == 1 && cmd_line[n] != '\n')
		n++;
	cmd_line[n] = 0;
	return (int)n;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dormant FIFO\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_t th[LOADERS];
	for (unsigned i = 0; i < LOADERS; i++)
		pthread_create(&th[i], NULL, loader, (void *)(uintptr_t)i);
	FILE *fifo = fopen(argv[1], "r");
	if (!fifo)
		return 1;
	long counted = 0;
	char line[80];
	int len = snprintf(line, sizeof line, "ready %d\n", (int)getpid());
	write(1, line, (size_t)len);
	while (read_cmd(fileno(fifo)) > 0) {
		if (strncmp(cmd_line, "count ", 6) == 0) {
			long n = atol(cmd_line + 6);
			counted_site(n);
			counted += n;
			len = snprintf(line, sizeof line, "done %ld\n", n);
			write(1, line, (size_t)len);
		} else if (strcmp(cmd_line, "quit") == 0) {
			break;
		}
	}
	atomic_store(&quit, true);
	uint64_t sum = 0;
	for (unsigned i = 0; i < LOADERS; i++) {
		pthread_join(th[i], NULL);
		sum += sums[i] ? 1 : 0; /* the sums depend on timing: that they ran does not */
	}
	for (unsigned i = 0; i < RING; i++)
		free(ring[i]);
	fclose(fifo);
	printf("loaders %llu counted %ld\n", (unsigned long long)sum, counted);
	return 0;
}
