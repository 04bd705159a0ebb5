/*
** sig_sites.c — a signal handler that allocates from one site while the
** thread it interrupted allocates and frees from another whose type shares
** the thread's counter slot (types A and B with A = B mod 128): the
** handler's allocation gives the slot to its type.  An allocation or free
** that had read the slot before the handler came in, and counted after,
** counted into the other type (mim's fast paths read the site cache, the
** slot and the budget before raising `counting`): A's figures drifted from
** its blocks, one block per hit, for ever.
**
** 256 call sites (functions site_0 … site_255, each its own malloc call)
** allocate once each, in order, so that their automatic types are made one
** after the other; meminst_block_type finds two 128 apart.  Then the main
** thread makes 10,000,000 malloc+free pairs from the first while a thread
** sends it SIGUSR1 without a pause, and the handler allocates and frees
** from the second.  At the end every block is freed: both types must
** count 0 blocks and 0 bytes ("ok"), else their figures are printed
** (status 1).  Linked with libmeminst; without MEMINST it prints "ok".
*/
#define _GNU_SOURCE
#include <meminst.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAIRS 10000000
#define NSITES 256

#define SITE(n)                                                                        \
	static __attribute__((noinline)) void *site_##n(size_t size)                  \
	{                                                                              \
		void *p = malloc(size);                                                \
		/* no tail call, and no two bodies alike (gcc folds those) */          \
		__asm__ volatile("# site %c1" : : "r"(p), "i"(n##0) : "memory");       \
		return p;                                                              \
	}
#define SITE4(n) SITE(n##0) SITE(n##1) SITE(n##2) SITE(n##3)
#define SITE16(n) SITE4(n##0) SITE4(n##1) SITE4(n##2) SITE4(n##3)
#define SITE64(n) SITE16(n##0) SITE16(n##1) SITE16(n##2) SITE16(n##3)
SITE64(0) SITE64(1) SITE64(2) SITE64(3)
#define REF(n) site_##n,
#define REF4(n) REF(n##0) REF(n##1) REF(n##2) REF(n##3)
#define REF16(n) REF4(n##0) REF4(n##1) REF4(n##2) REF4(n##3)
#define REF64(n) REF16(n##0) REF16(n##1) REF16(n##2) REF16(n##3)
static void *(*const sites[NSITES])(size_t) = {REF64(0) REF64(1) REF64(2) REF64(3)};

static void *(*site_a)(size_t), *(*site_b)(size_t);
static _Atomic int stop;
static pid_t main_tid;

static void on_signal(int sig)
{
	(void)sig;
	free(site_b(48));
}

static void *storm(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	return NULL;
}

/* The figures of type `type`: 0 when it has none left. */
static int type_left(meminst_type_t type, const char *what)
{
	static struct meminst_status_info t[4096];
	long n = meminst_status_read(MEMINST_STATUS_TYPES, t, 4096);
	for (long i = 0; i < n && i < 4096; i++)
		if (t[i].id == (uint32_t)type && (t[i].blocks.current || t[i].sizes.current)) {
			printf("type %s: %lld blocks, %lld bytes left\n", what, (long long)t[i].blocks.current,
			       (long long)t[i].sizes.current);
			return 1;
		}
	return 0;
}

int main(void)
{
	void *first[NSITES];
	meminst_type_t types[NSITES];
	for (int i = 0; i < NSITES; i++) {
		first[i] = sites[i](48);
		types[i] = meminst_block_type(first[i]);
	}
	for (int i = 0; i < NSITES && !site_a; i++)
		for (int k = i + 1; k < NSITES && !site_a; k++)
			if (types[i] != MEMINST_TYPE_AUTO && types[k] != types[i] &&
			    (types[k] - types[i]) % 128 == 0) {
				site_a = sites[i];
				site_b = sites[k];
			}
	for (int i = 0; i < NSITES; i++)
		free(first[i]);
	if (!site_a) { /* uninstrumented: no types */
		printf("ok\n");
		return 0;
	}
	void *pa = site_a(48), *pb = site_b(48);
	meminst_type_t ta = meminst_block_type(pa), tb = meminst_block_type(pb);
	free(pa);
	free(pb);
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_t st;
	if (pthread_create(&st, NULL, storm, NULL) != 0)
		return 2;
	for (long i = 0; i < PAIRS; i++)
		free(site_a(48));
	atomic_store(&stop, 1);
	pthread_join(st, NULL);
	int bad = type_left(ta, "A") + type_left(tb, "B");
	if (!bad)
		printf("ok\n");
	return bad != 0;
}
