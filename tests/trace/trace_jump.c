/*
** trace_jump.c — frames that a program leaves without returning, for
** tests/trace/jumps.sh.  Built with -finstrument-functions like
** trace_target.c; each case prints "fn NAME ADDRESS COUNT" (COUNT calls on
** the main thread) and "from CALLER NAME COUNT" (calls of NAME by CALLER).
**
**   longjmp    run() calls deep(DEPTH) ROUNDS times; the deepest one leaves
**              by longjmp to run, which then calls after() (the round's
**              work, which must be charged to run, not to the dead deeps)
**   siglongjmp the same with sigsetjmp/siglongjmp
**   inner      outer(0) .. outer(JUMP); outer(3) set the jmp_buf, outer(JUMP)
**              jumps back to it (the dead frames are outer's own), which
**              calls after() and returns to run
**   coro       run() switches (swapcontext) ROUNDS times to a coroutine on
**              a stack from malloc, which calls produce() and switches back;
**              run then calls consume(); main calls finish() after run
**   corothread the same in a thread, with the coroutine's stack mapped
**              before the thread's: above it in memory, so that a frame on
**              it looks shallower than every frame of the thread's own
*/
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#define SHOW(fn, count) printf("fn %s %p %ld\n", #fn, (void *)(fn), (long)(count))
#define FROM(caller, fn, count) printf("from %s %s %ld\n", #caller, #fn, (long)(count))

enum { ROUNDS = 20, DEPTH = 600, JUMP = 50, WORK = 2000000 };

static volatile long sink;
static jmp_buf env;
static sigjmp_buf senv;
static int use_sig;

/* the round's work after the jump: most of the program's time */
static void after(void)
{
	for (long i = 0; i < WORK; i++)
		sink += i;
}

static void deep(int n)
{
	if (n == 0) {
		if (use_sig)
			siglongjmp(senv, 1);
		longjmp(env, 1);
	}
	deep(n - 1);
	sink++; /* not a tail call */
}

static void run_jumps(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		if (use_sig ? sigsetjmp(senv, 1) == 0 : setjmp(env) == 0)
			deep(DEPTH);
		after();
	}
}

static void outer(int n)
{
	if (n == 3) {
		if (setjmp(env) == 0)
			outer(n + 1);
		else
			after();
		return;
	}
	if (n == JUMP)
		longjmp(env, 1);
	outer(n + 1);
	sink++;
}

static void run_inner(void)
{
	for (int i = 0; i < ROUNDS; i++)
		outer(0);
}

static ucontext_t main_ctx, co_ctx;
static void produce(void) { sink++; }
static void consume(void) { sink--; }
static void finish(void) { sink = 0; }

static void producer(void)
{
	for (;;) {
		produce();
		swapcontext(&co_ctx, &main_ctx);
	}
}

static char *co_stack;
enum { CO_STACK = 256 * 1024 };

static int run_coro(void)
{
	size_t size = CO_STACK;
	char *stack = co_stack ? co_stack : malloc(size);
	if (!stack || getcontext(&co_ctx) != 0)
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, producer, 0);
	for (int i = 0; i < ROUNDS; i++) {
		if (swapcontext(&main_ctx, &co_ctx) != 0)
			return 1;
		consume();
	}
	/* the coroutine stays suspended in producer: its stack is not freed */
	return 0;
}

static void *coro_thread(void *arg)
{
	char here;
	(void)arg;
	if ((uintptr_t)co_stack < (uintptr_t)&here)
		printf("note the coroutine's stack is below the thread's\n");
	if (run_coro() != 0)
		return (void *)1;
	finish();
	return NULL;
}

static int run_coro_thread(void)
{
	co_stack = mmap(NULL, CO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t th;
	void *rc = (void *)1;
	if (co_stack == MAP_FAILED || pthread_create(&th, NULL, coro_thread, NULL) != 0 ||
	    pthread_join(th, &rc) != 0 || rc != NULL)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	if (strcmp(c, "longjmp") == 0 || strcmp(c, "siglongjmp") == 0) {
		use_sig = c[0] == 's';
		run_jumps();
		SHOW(deep, ROUNDS * (DEPTH + 1));
		SHOW(after, ROUNDS);
		SHOW(run_jumps, 1);
		FROM(run_jumps, deep, ROUNDS);
		FROM(deep, deep, ROUNDS * DEPTH);
		FROM(run_jumps, after, ROUNDS);
		FROM(main, run_jumps, 1);
	} else if (strcmp(c, "inner") == 0) {
		run_inner();
		SHOW(outer, ROUNDS * (JUMP + 1));
		SHOW(after, ROUNDS);
		FROM(run_inner, outer, ROUNDS);
		FROM(outer, outer, ROUNDS * JUMP);
		FROM(outer, after, ROUNDS);
		FROM(main, run_inner, 1);
	} else if (strcmp(c, "coro") == 0) {
		if (run_coro() != 0)
			return 1;
		finish();
		SHOW(produce, ROUNDS);
		SHOW(consume, ROUNDS);
		SHOW(finish, 1);
		SHOW(run_coro, 1);
		FROM(main, run_coro, 1);
		FROM(main, finish, 1);
		FROM(run_coro, producer, 1);
		FROM(producer, produce, ROUNDS);
	} else if (strcmp(c, "corothread") == 0) {
		if (run_coro_thread() != 0)
			return 1;
		FROM(coro_thread, run_coro, 1);
		FROM(coro_thread, finish, 1);
		FROM(run_coro, producer, 1);
		FROM(producer, produce, ROUNDS);
		FROM(main, run_coro_thread, 1);
	} else {
		fprintf(stderr, "usage: trace_jump longjmp|siglongjmp|inner|coro|corothread\n");
		return 2;
	}
	return 0;
}
