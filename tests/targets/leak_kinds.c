/*
** leak_kinds.c — one block of each of memcheck's leak kinds, for
** tests/integration/leaks.sh, which runs it under meminst and under
** valgrind --leak-check=full and compares the classes' bytes:
**   definitely lost   lose_list's head (48), lose_cycle's first block
**                     (600, the lower address of the two), lose_plain (800)
**   indirectly lost   the list's 3 nodes (3 x 64), the cycle's other (600)
**   possibly lost     only an interior pointer, in .data (100)
**   still reachable   in .bss (400) and the block it points to (500), in
**                     the main thread's TLS (310), in another thread's TLS
**                     (300) and only on a blocked thread's stack (200)
** Every block comes from a function of its own, so that inspect leaks's
** rows by site name them (built -O0: no tail calls, no dead allocation
** removed).  Two threads stay blocked (read on a pipe, a
** condition variable) while main returns; they end with the process.
** Prints "ready" once everything is in place; with the argument "wait",
** prints "pid N" and waits in read until its standard input ends
** (inspect leaks --pid).  With "grow PATH" (under meminst, leak_check=on):
** stores a snapshot into PATH (meminst_store_memory_data, a leak check),
** then loses more: 4 blocks of 128 from alloc_grow and a second list (48
** definitely, 3 x 64 indirectly lost), for inspect leaks --from --to.
*/
#include <dlfcn.h>
#pragma GCC optimize("O0")
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct node {
	struct node *next;
	char pad[56];
};

struct holder {
	void *child;
	char pad[392];
};

/* Not static, and volatile: the compiler must keep every store. */
struct holder *volatile in_bss;        /* 400, holding 500 */
char *volatile interior_only = NULL;   /* 100, pointed at +10 */
__thread void *volatile main_tls;      /* 310 */
__thread void *volatile thread_tls;    /* 300, in the TLS thread */
static int wake_pipe[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER, ready_cond = PTHREAD_COND_INITIALIZER;
static int ready;

NOINLINE static void *alloc_node(void) { return calloc(1, sizeof(struct node)); }
NOINLINE static void *alloc_head(void) { return calloc(1, 48); }
NOINLINE static void *alloc_cycle(void) { return calloc(1, 600); }
NOINLINE static void *alloc_plain(void) { return calloc(1, 800); }
NOINLINE static void *alloc_interior(void) { return calloc(1, 100); }
NOINLINE static void *alloc_bss(void) { return calloc(1, sizeof(struct holder)); }
NOINLINE static void *alloc_child(void) { return calloc(1, 500); }
NOINLINE static void *alloc_main_tls(void) { return calloc(1, 310); }
NOINLINE static void *alloc_thread_tls(void) { return calloc(1, 300); }
NOINLINE static void *alloc_on_stack(void) { return calloc(1, 200); }

NOINLINE static void lose_list(void)
{
	struct node **head = alloc_head();
	struct node *n = NULL;
	for (int i = 0; i < 3; i++) {
		struct node *m = alloc_node();
		m->next = n;
		n = m;
	}
	*head = n;
}

NOINLINE static void lose_cycle(void)
{
	void **a = alloc_cycle(), **b = alloc_cycle();
	*a = b;
	*b = a;
}

NOINLINE static void lose_plain(void) { memset(alloc_plain(), 1, 800); }

NOINLINE static void *alloc_grow(void) { return calloc(1, 128); }
NOINLINE static void lose_more(void)
{
	for (int i = 0; i < 4; i++)
		memset(alloc_grow(), 2, 128);
	lose_list();
}

/* The stack below main's frame holds the lost pointers no more. */
NOINLINE static void clear_stack(void)
{
	volatile char junk[32768];
	memset((char *)junk, 0, sizeof junk);
}

static void mark_ready(void)
{
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&lock);
}

/* A pointer only here, while the thread waits in read for ever. */
static void *stack_thread(void *arg)
{
	(void)arg;
	void *volatile only_here = alloc_on_stack();
	char c;
	mark_ready();
	while (read(wake_pipe[0], &c, 1) < 0)
		;
	return (void *)only_here;
}

/* A pointer only in its TLS, while it waits on a condition variable. */
static void *tls_thread(void *arg)
{
	(void)arg;
	thread_tls = alloc_thread_tls();
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&ready_cond);
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (pipe(wake_pipe) != 0)
		return 1;
	pthread_t t1, t2;
	pthread_create(&t1, NULL, stack_thread, NULL);
	pthread_create(&t2, NULL, tls_thread, NULL);
	lose_list();
	lose_cycle();
	lose_plain();
	interior_only = (char *)alloc_interior() + 10;
	in_bss = alloc_bss();
	in_bss->child = alloc_child();
	main_tls = alloc_main_tls();
	pthread_mutex_lock(&lock);
	while (ready < 2)
		pthread_cond_wait(&ready_cond, &lock);
	pthread_mutex_unlock(&lock);
	clear_stack();
	printf("ready %p\n", main_tls ? (void *)1 : NULL);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[1], "grow")) { /* a check, then more lost */
		int (*store)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "meminst_store_memory_data");
		if (!store || store(argv[2]) < 0)
			return 3;
		lose_more();
		clear_stack();
	}
	if (argc > 1 && !strcmp(argv[1], "wait")) { /* until stdin ends: checked live */
		char c;
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	return 0;
}
