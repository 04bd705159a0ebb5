/*
** mt_alloc.c — a multi-threaded allocation workload for the integration
** tests (tests/integration/threads.sh).
**
** Phase 1: 8 threads allocate, reallocate and free blocks of mixed sizes
** (a few above 64 KiB), and pass some of them through a shared mailbox, so
** that blocks are freed by another thread than the one that allocated them.
** Every block is filled with a pattern that is checked before it is freed.
** Phase 2: 2000 short threads, 8 at a time, each allocating a few blocks,
** freeing most, handing one back to main (freed after the thread has
** exited) and allocating again from a pthread key destructor, which runs
** after libmeminst has retired the thread.
**
** stdout is the same with and without libmeminst; when it is preloaded the
** probes (probe.h) also check that the program's own class ends empty and
** that every status kind adds up to the total.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define WORKERS 8
#define ROUNDS 20000
#define WINDOW 64
#define MAILBOX 256
#define SHORT_THREADS 2000

struct block {
	unsigned char *p;
	size_t n;
};

static struct {
	pthread_mutex_t lock;
	struct block slot[MAILBOX];
} mailbox = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned long corrupt;
static pthread_mutex_t corrupt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t late_key;

static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static size_t pick_size(uint32_t *s)
{
	uint32_t r = next_rand(s);
	return r % 100 == 0 ? 65536 + r % 200000 : 1 + r % 2048;
}

static void fill(struct block b)
{
	memset(b.p, (int)(b.n & 0xff), b.n);
}

/* Check the pattern, then free. */
static void release(struct block b)
{
	for (size_t i = 0; i < b.n; i += 61)
		if (b.p[i] != (unsigned char)(b.n & 0xff)) {
			pthread_mutex_lock(&corrupt_lock);
			corrupt++;
			pthread_mutex_unlock(&corrupt_lock);
			break;
		}
	free(b.p);
}

/* Swap a block with the mailbox: ours goes in, someone else's comes out. */
static struct block swap_mail(struct block b)
{
	pthread_mutex_lock(&mailbox.lock);
	unsigned i = (unsigned)((uintptr_t)b.p >> 4) % MAILBOX;
	struct block out = mailbox.slot[i];
	mailbox.slot[i] = b;
	pthread_mutex_unlock(&mailbox.lock);
	return out;
}

static void worker_step(struct block *win, uint32_t *seed)
{
	unsigned i = next_rand(seed) % WINDOW, op = next_rand(seed) % 8;
	if (win[i].p && op == 0) { /* grow or shrink in place */
		size_t n = pick_size(seed);
		unsigned char *q = realloc(win[i].p, n);
		if (!q)
			abort();
		win[i] = (struct block){q, n};
		fill(win[i]);
		return;
	}
	if (win[i].p && op == 1) { /* hand it over, maybe get another */
		struct block other = swap_mail(win[i]);
		win[i].p = NULL;
		if (other.p)
			release(other);
		return;
	}
	if (win[i].p)
		release(win[i]);
	win[i].n = pick_size(seed);
	if (!(win[i].p = (op & 1) ? malloc(win[i].n) : calloc(1, win[i].n)))
		abort();
	fill(win[i]);
}

static void *worker(void *arg)
{
	uint32_t seed = 2463534242u + (uint32_t)(uintptr_t)arg * 7919u;
	struct block win[WINDOW] = {{NULL, 0}};
	for (int r = 0; r < ROUNDS; r++)
		worker_step(win, &seed);
	for (int i = 0; i < WINDOW; i++)
		if (win[i].p)
			release(win[i]);
	return NULL;
}

static void phase1(void)
{
	pthread_t t[WORKERS];
	for (uintptr_t i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			abort();
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < MAILBOX; i++)
		if (mailbox.slot[i].p)
			release(mailbox.slot[i]);
	printf("phase 1: %d threads x %d rounds, %lu corrupt blocks\n", WORKERS, ROUNDS, corrupt);
}

/* A key destructor runs after libmeminst's own (its key is older). */
static void late_destructor(void *v)
{
	char *p = malloc(100);
	if (!p)
		abort();
	memcpy(p, v, 8);
	free(p);
	free(v);
}

static void *short_thread(void *arg)
{
	char *keep = malloc(32 + (uintptr_t)arg % 64), *drop[3];
	for (int i = 0; i < 3; i++)
		drop[i] = malloc(100 * (i + 1));
	for (int i = 0; i < 3; i++)
		free(drop[i]);
	char *late = malloc(16);
	if (!keep || !late)
		abort();
	memcpy(late, "late-key", 8);
	pthread_setspecific(late_key, late);
	return keep;
}

static void phase2(void)
{
	pthread_key_create(&late_key, late_destructor);
	for (uintptr_t done = 0; done < SHORT_THREADS; done += WORKERS) {
		pthread_t t[WORKERS];
		for (uintptr_t i = 0; i < WORKERS; i++)
			if (pthread_create(&t[i], NULL, short_thread, (void *)(done + i)))
				abort();
		for (int i = 0; i < WORKERS; i++) {
			void *keep;
			pthread_join(t[i], &keep);
			free(keep); /* its owner has exited */
		}
	}
	printf("phase 2: %d short threads\n", SHORT_THREADS);
}

static void check_threads_seen(void)
{
	if (!probe_on())
		return;
	struct probe_table t = probe_table_read(MEMINST_STATUS_THREADS);
	long n = t.n;
	probe_table_free(&t);
	if (n < 1 + 1 + WORKERS + SHORT_THREADS)
		probe_fail("%ld thread numbers, expected at least %d", n, 2 + WORKERS + SHORT_THREADS);
}

int main(int argc, char **argv)
{
	(void)argc;
	probe_reader();
	phase1();
	phase2();
	check_threads_seen();
	probe_check_own_class_empty(argv[0], WORKERS * WINDOW / 2);
	probe_check_sums("after all threads");
	printf("done\n");
	return corrupt != 0;
}
