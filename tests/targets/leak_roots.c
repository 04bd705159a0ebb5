/*
** leak_roots.c — where roots end, for tests/integration/leaks_roots.sh,
** which runs it under meminst and under valgrind --leak-check=full:
**   still reachable   in_anon (300): its only pointer is in a mapping the
**                     program made itself (mmap, as Python's pymalloc
**                     arenas): memcheck scans every writable mapping
**   definitely lost   in_freed (120): its only pointer is in a freed
**                     malloc block (glibc's heap holds freed chunks with
**                     their old contents: no root);
**                     big (1 MiB, a mapping of glibc's own): no pointer
**                     to it (a live block is no root, though a mapping);
**                     on_dead_stack (160): its only pointer was on the
**                     stack of a thread that has ended (glibc keeps the
**                     stack for the next thread: stale frames, no root);
**                     in_dead_tls (170) and dead_result (180): only in the
**                     TLS and the result of a thread joined (glibc keeps
**                     its stack in a cache, which memcheck's
**                     __libc_freeres unmaps: nothing of it is a root)
**   indirectly lost   in_big (140): only in the lost 1 MiB block
**   still reachable   in_zombie_tls (190) and zombie_result (200): in the TLS
**                     and the result of a thread that ended and was not
**                     joined (its stack is no cache's: a root for memcheck)
** and dlopen's libresolv.so.2: the loader's link map and its names are still
** reachable for memcheck (__libc_freeres keeps a loaded object's), not
** among the blocks inspect leaks suppresses as the loader's by default.
** Every block comes from a function of its own (built -O0).  Prints
** "ready" when everything is in place.
*/
#pragma GCC optimize("O0")
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *alloc_in_anon(void) { return calloc(1, 300); }
NOINLINE static void *alloc_in_freed(void) { return calloc(1, 120); }
NOINLINE static void *alloc_big(void) { return calloc(1, 1 << 20); }
NOINLINE static void *alloc_in_big(void) { return calloc(1, 140); }
NOINLINE static void *alloc_on_dead_stack(void) { return calloc(1, 160); }
NOINLINE static void *alloc_in_dead_tls(void) { return calloc(1, 170); }
NOINLINE static void *alloc_dead_result(void) { return calloc(1, 180); }
NOINLINE static void *alloc_in_zombie_tls(void) { return calloc(1, 190); }
NOINLINE static void *alloc_zombie_result(void) { return calloc(1, 200); }
static __thread void *volatile tls_keep; /* volatile: never read, yet stored */

static void **volatile region; /* the program's own mapping */

NOINLINE static void keep_in_anon(void)
{
	region = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region != MAP_FAILED)
		region[1000] = alloc_in_anon();
}

NOINLINE static void keep_in_freed(void)
{
	void **holder = calloc(1, 256);
	holder[16] = alloc_in_freed(); /* past what free writes into a chunk */
	free(holder);
}

NOINLINE static void keep_in_big(void)
{
	void **big = alloc_big();
	big[5000] = alloc_in_big();
}

NOINLINE static void deep(int n)
{
	void *volatile frame[64];
	memset((void *)frame, 0, sizeof frame);
	if (n)
		deep(n - 1);
	else
		frame[7] = alloc_on_dead_stack();
}

static void *dead_thread(void *arg)
{
	(void)arg;
	deep(8);
	tls_keep = alloc_in_dead_tls();
	return alloc_dead_result();
}

static void *zombie_thread(void *arg)
{
	(void)arg;
	tls_keep = alloc_in_zombie_tls();
	return alloc_zombie_result();
}

/* Until the zombie has ended (its task gone), a bounded number of looks. */
static void wait_ended(void)
{
	for (int i = 0; i < 20000; i++) {
		FILE *f = fopen("/proc/self/status", "r");
		char line[128];
		int n = 0;
		while (f && fgets(line, sizeof line, f))
			if (sscanf(line, "Threads: %d", &n) == 1)
				break;
		if (f)
			fclose(f);
		if (n == 1)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/* The stack below main's frame holds the lost pointers no more. */
NOINLINE static void clear_stack(void)
{
	volatile char junk[32768];
	memset((char *)junk, 0, sizeof junk);
}

int main(void)
{
	pthread_t t, z; /* the zombie first: the joined one's stack is not the cache's then */
	if (pthread_create(&z, NULL, zombie_thread, NULL) != 0)
		return 1;
	wait_ended();
	if (pthread_create(&t, NULL, dead_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	keep_in_anon();
	keep_in_freed();
	keep_in_big();
	void *volatile lib = dlopen("libresolv.so.2", RTLD_NOW);
	clear_stack();
	printf("ready %d\n", region != MAP_FAILED && lib);
	fflush(stdout);
	return 0;
}
