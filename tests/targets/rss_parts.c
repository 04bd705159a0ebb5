/*
** rss_parts.c — a program whose resident set has known parts, for
** tests/integration/rss.sh (inspect rss).  It stores a map snapshot into
** DB (meminst_store_memory_data, looked up at run time: nothing when not
** preloaded) while it holds:
**   arena    its own arena allocator on mmap: 40 MiB of 64-byte objects
**            in a 64 MiB anonymous region at a 64 MiB boundary (as a glibc
**            thread arena's heap would be), beside 2,000 malloc'd blocks
**   threads  48 threads, each with 256 KiB of its stack written, having
**            made and freed 120 small blocks (glibc's thread arenas keep
**            the memory: under its trim threshold), waiting
** and prints a checksum, the same with and without the preload.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_BYTES (64u << 20)
#define ARENA_USED (40u << 20)
#define THREADS 48
#define STACK_USED (256u << 10)

static const char *db;

static void store(void)
{
	int (*fn)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "meminst_store_memory_data");
	if (fn && fn(db) < 0)
		exit(3);
}

/* ---------------------------------------------------------------- arena -- */

struct arena {
	char *base, *next, *end;
};

static __attribute__((noinline)) int arena_open(struct arena *a)
{
	/* at a 64 MiB boundary, where a glibc thread arena's heap would be
	** (inspect rss must still call it the program's): reserved twice over,
	** the aligned part mapped over, the rest given back */
	char *room = mmap(NULL, 2 * ARENA_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (room == MAP_FAILED)
		return -1;
	char *at = (char *)(((uintptr_t)room + ARENA_BYTES - 1) & ~(uintptr_t)(ARENA_BYTES - 1));
	a->base = mmap(at, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (a->base == MAP_FAILED)
		return -1;
	if (at > room)
		munmap(room, (size_t)(at - room));
	if (at + ARENA_BYTES < room + 2 * ARENA_BYTES)
		munmap(at + ARENA_BYTES, (size_t)(room + 2 * ARENA_BYTES - (at + ARENA_BYTES)));
	a->next = a->base;
	a->end = a->base + ARENA_BYTES;
	return 0;
}

static void *arena_alloc(struct arena *a, size_t n)
{
	if ((size_t)(a->end - a->next) < n)
		return NULL;
	void *p = a->next;
	a->next += n;
	return p;
}

static int run_arena(void)
{
	struct arena a;
	if (arena_open(&a) != 0)
		return 1;
	uint64_t sum = 0;
	for (size_t i = 0; i < ARENA_USED / 64; i++) {
		uint64_t *o = arena_alloc(&a, 64);
		memset(o, (int)(i & 0x7f), 64);
		o[0] = i;
		sum += o[0];
	}
	char *blocks[2000];
	for (int i = 0; i < 2000; i++) {
		blocks[i] = malloc(1000);
		memset(blocks[i], i, 1000);
		sum += (unsigned char)blocks[i][999];
	}
	store();
	for (int i = 0; i < 2000; i++)
		free(blocks[i]);
	munmap(a.base, ARENA_BYTES);
	printf("arena %llu\n", (unsigned long long)sum);
	return 0;
}

/* -------------------------------------------------------------- threads -- */

static pthread_barrier_t ready, done;

static void *worker(void *arg)
{
	volatile char buf[STACK_USED];
	for (size_t i = 0; i < sizeof buf; i += 512)
		buf[i] = (char)(i + (uintptr_t)arg);
	char *small[120];
	for (int i = 0; i < 120; i++) {
		small[i] = malloc(1000);
		memset(small[i], i, 1000);
	}
	for (int i = 0; i < 120; i++)
		free(small[i]);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return (void *)(uintptr_t)buf[512];
}

static int run_threads(void)
{
	pthread_t t[THREADS];
	pthread_barrier_init(&ready, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	pthread_barrier_wait(&ready);
	store();
	pthread_barrier_wait(&done);
	uintptr_t sum = 0;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (uintptr_t)r;
	}
	printf("threads %llu\n", (unsigned long long)sum);
	return 0;
}

/* ---------------------------------------------------------------- mmaps -- */

#define MIB (1u << 20)

static char *map_anon(size_t n, int flags)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	memset(p, 1, n);
	return p;
}

static int run_mmaps(void)
{
	char path[] = "/tmp/rss_parts.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 4 * MIB) != 0)
		return 1;
	unlink(path);
	char *anon = map_anon(8 * MIB, 0), *stack = map_anon(MIB, MAP_STACK), *grow = map_anon(MIB, 0);
	char *file = mmap(NULL, 4 * MIB, PROT_READ, MAP_PRIVATE, fd, 0);
	if (file == MAP_FAILED)
		return 1;
	grow = mremap(grow, MIB, 6 * MIB, MREMAP_MAYMOVE);
	if (grow == MAP_FAILED)
		return 1;
	memset(grow, 2, 6 * MIB);
	char *cut = map_anon(6 * MIB, 0);
	if (munmap(cut + 2 * MIB, 2 * MIB) != 0)
		return 1;
	errno = 0;
	if (munmap((void *)1, 4096) == 0 || errno != EINVAL) /* the kernel's answer, passed on */
		return 1;
	if (mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED || errno != EINVAL)
		return 1;
	unsigned long sum = 0;
	for (size_t i = 0; i < 4 * MIB; i += 4096)
		sum += (unsigned char)file[i];
	store();
	sum += (unsigned char)anon[5] + (unsigned char)stack[7] + (unsigned char)grow[6 * MIB - 1] + (unsigned char)cut[0];
	munmap(anon, 8 * MIB);
	munmap(stack, MIB);
	munmap(grow, 6 * MIB);
	munmap(file, 4 * MIB);
	munmap(cut, 6 * MIB);
	close(fd);
	printf("mmaps %lu\n", sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "arena") && strcmp(argv[2], "threads") && strcmp(argv[2], "mmaps"))) {
		fprintf(stderr, "usage: rss_parts DB arena|threads|mmaps\n");
		return 2;
	}
	db = argv[1];
	if (!strcmp(argv[2], "mmaps"))
		return run_mmaps();
	return !strcmp(argv[2], "arena") ? run_arena() : run_threads();
}
