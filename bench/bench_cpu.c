/*
** bench_cpu.c — a CPU-bound program for the sampling benchmark
** (bench/sample.sh): a little interpreter-like workload (a recursive
** expression evaluator over a fixed tree, plus a hash mix) that makes calls
** several frames deep, allocates nothing in its loop, and prints its
** elapsed CPU time.  Built -O2 without frame pointers, as distributions
** build their programs, so that the stack walks do what they would there.
**
** usage: bench_cpu [ITERS [perf|wall]]   (ITERS default 120: ~1 s)
**
** With perf or wall, the program itself ticks at 1000 Hz into an empty
** SIGPROF handler, by the same kind of timer as the sampler's cpu mode (a
** perf-event task clock) or wall mode (a POSIX timer on CLOCK_MONOTONIC):
** what the kernel (and a hypervisor) charge per tick, without any
** sampling, for the benchmark to set apart from the sampler's own cost.
*/
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct node_s {
	int op; /* 0 leaf, 1 add, 2 mul, 3 mix */
	uint64_t v;
	struct node_s *l, *r;
} node_t;

static node_t pool[1 << 16];
static unsigned used;

static node_t *build(int depth, uint64_t *seed)
{
	node_t *n = &pool[used++ & 0xffff];
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	if (depth == 0) {
		n->op = 0;
		n->v = *seed >> 33;
		return n;
	}
	n->op = 1 + (int)(*seed >> 62) % 3;
	n->l = build(depth - 1, seed);
	n->r = build(depth - 1, seed);
	return n;
}

__attribute__((noinline)) static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);
	for (int i = 0; i < 8; i++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
	return x;
}

__attribute__((noinline)) static uint64_t eval(const node_t *n)
{
	switch (n->op) {
	case 0: return n->v;
	case 1: return eval(n->l) + eval(n->r);
	case 2: return eval(n->l) * (eval(n->r) | 1);
	default: return mix(eval(n->l), eval(n->r));
	}
}

static volatile long ticks;
static void tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	ticks++;
}

/* An empty handler ticked 1000 times a second of CPU (perf) or real time
** (wall) in this thread.  0, or -1 when the timer cannot be made. */
static int ticks_start(const char *how)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	if (!strcmp(how, "perf")) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 1000000;
		a.exclude_kernel = 1;
		a.disabled = 1;
		a.wakeup_events = 1;
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		struct f_owner_ex o = {F_OWNER_TID, tid};
		if (fd < 0 || fcntl(fd, F_SETOWN_EX, &o) < 0 || fcntl(fd, F_SETSIG, SIGPROF) < 0 ||
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) < 0)
			return -1;
		return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGPROF;
	ev._sigev_un._tid = tid;
	timer_t t;
	struct itimerspec its = {{0, 1000000}, {0, 1000000}};
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) < 0)
		return -1;
	return timer_settime(t, 0, &its, NULL);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 120;
	if (argc > 2 && ticks_start(argv[2]) < 0) {
		fprintf(stderr, "bench_cpu: cannot make the %s timer\n", argv[2]);
		return 1;
	}
	uint64_t seed = 42, acc = 0;
	node_t *root = build(15, &seed);
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < iters * 20; i++)
		acc += eval(root) + (uint64_t)i;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("acc=%llu cpu_ms=%.1f\n", (unsigned long long)acc,
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}
