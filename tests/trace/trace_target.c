/*
** trace_target.c — a program with exactly known call counts for the tests
** of exact tracing (the shell tests in tests/trace).  Built with -finstrument-functions;
** TRACE_LINKED builds the copy linked with libmeminst that also drives the
** <meminst.h> tracing calls.  Each case prints "fn NAME ADDRESS COUNT" for
** the functions the test checks: COUNT calls on one thread.
*/
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef TRACE_LINKED
#include <meminst.h>
#endif

#define SHOW(fn, count) printf("fn %s %p %ld\n", #fn, (void *)(fn), (long)(count))

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static long fib_calls(int n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static unsigned deep(unsigned n) { return n == 0 ? 0 : 1 + deep(n - 1); }

static volatile long sink;
static void leaf(void) { sink++; }

static long worker_spin; /* threadsK: the worker's own work after each call */

static void *worker(void *arg)
{
	for (long i = 0; i < (long)(intptr_t)arg; i++) {
		leaf();
		for (long j = 0; j < worker_spin; j++)
			sink++;
	}
	return NULL;
}

static void napper(void) { usleep(20000); }

/* preempt: two CPU-bound threads on one CPU take turns; each runs spin()
** (~10 us, shorter than the gap that makes the tracer look) until it has
** used 0.3 s of CPU, then prints its CPU and wall time. */
static int spin_cpu;
static void spin(void)
{
	for (int i = 0; i < 10000; i++)
		sink += i;
}

static long long clock_ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *spinner(void *arg)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(spin_cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		return (void *)1;
	long long w0 = clock_ns_of(CLOCK_MONOTONIC), c0 = clock_ns_of(CLOCK_THREAD_CPUTIME_ID), c;
	long calls = 0;
	while ((c = clock_ns_of(CLOCK_THREAD_CPUTIME_ID) - c0) < 300000000ll)
		spin(), calls++;
	printf("spinner cpu_ns %lld wall_ns %lld calls %ld\n", c, clock_ns_of(CLOCK_MONOTONIC) - w0, calls);
	return arg;
}

static void *kept[20000];
static void keep(int i) { kept[i] = malloc(1000); }
static void drop(int i)
{
	free(kept[i]);
	kept[i] = NULL;
}

static void allocator(void)
{
	void *volatile p = malloc(4096);
	free(p);
}

/* storm: a thread sends SIGUSR1 to the main thread as fast as it can
** while main calls leaf 2,000,000 times or more; the handler is instrumented too
** (on_signal calls sig_leaf twice), so its hooks often interrupt main's. */
static volatile sig_atomic_t storm_runs;
static _Atomic int storm_done;
static pthread_t storm_main;
static void sig_leaf(void) { sink++; }
static void on_signal(int sig)
{
	(void)sig;
	sig_leaf();
	sig_leaf();
	storm_runs++;
}

static void *storm_sender(void *arg)
{
	long sent = 0;
	while (!storm_done)
		pthread_kill(storm_main, SIGUSR1), sent++;
	return (void *)sent;
}

static int storm(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 7;
	storm_main = pthread_self();
	pthread_t th;
	if (pthread_create(&th, NULL, storm_sender, NULL) != 0)
		return 8;
	/* On a loaded machine the sender may not run for a while: start the
	** loop once its first signal came, and go on past 2,000,000 calls
	** until 20 signals were handled (at most 20,000,000 calls), so the
	** storm is bounded by counts, not by how the CPUs were shared. */
	for (long w = 0; storm_runs == 0 && w < 1000000; w++)
		sched_yield();
	long calls = 0;
	while (calls < 2000000 || (storm_runs < 20 && calls < 20000000))
		leaf(), calls++;
	storm_done = 1;
	void *sent;
	pthread_join(th, &sent);
	signal(SIGUSR1, SIG_IGN);
	printf("storm runs %ld\n", (long)storm_runs);
	SHOW(leaf, calls);
	SHOW(on_signal, storm_runs);
	SHOW(sig_leaf, 2 * storm_runs);
	return 0;
}

/* jumps: the same storm, but the handler leaves by siglongjmp into main's
** loop, often out of the middle of a hook; then final_leaf 100,000 times,
** which must all be recorded (an abandoned claim is taken over). */
static sigjmp_buf jump_env;
static volatile long jump_landed;
static void final_leaf(void) { sink++; }

/* The next signal only once the last jump has landed: siglongjmp restores
** the signal mask before it jumps, so a signal sent in that window runs the
** handler again on the deep stack, and a sender that never waits can nest
** them until the stack overflows (the program's own race, with or without
** meminst; slower handlers only widen it). */
static void *jump_sender(void *arg)
{
	(void)arg;
	while (!storm_done) {
		long seen = jump_landed;
		pthread_kill(storm_main, SIGUSR1);
		while (jump_landed == seen && !storm_done)
			sched_yield();
	}
	return NULL;
}
static void on_jump(int sig)
{
	(void)sig;
	sig_leaf();
	storm_runs++;
	siglongjmp(jump_env, 1);
}

static int jumps(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_jump;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 7;
	storm_main = pthread_self();
	static pthread_t th;
	static volatile long i;
	static volatile int started;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigsetjmp(jump_env, 1)) /* every jump lands here, SIGUSR1 unblocked */
		jump_landed++;
	if (!started) { /* the sender starts once the jump point is set */
		started = 1;
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		if (pthread_create((pthread_t *)&th, NULL, jump_sender, NULL) != 0)
			return 8;
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	}
	while (i < 2000000)
		leaf(), i++;
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	storm_done = 1;
	pthread_join(th, NULL);
	signal(SIGUSR1, SIG_IGN);
	for (long k = 0; k < 100000; k++)
		final_leaf();
	printf("storm runs %ld\n", (long)storm_runs);
	SHOW(final_leaf, 100000);
	return 0;
}

static int run(const char *what)
{
	if (strcmp(what, "rec") == 0) {
		long calls = fib_calls(18); /* fib_calls is itself counted */
		sink = fib(18);
		SHOW(fib, calls);
	} else if (strcmp(what, "storm") == 0) {
		return storm();
	} else if (strcmp(what, "jumps") == 0) {
		return jumps();
	} else if (strcmp(what, "mutual") == 0) {
		sink = is_even(1001);
		SHOW(is_even, 501);
		SHOW(is_odd, 501);
	} else if (strcmp(what, "deep") == 0) {
		sink = deep(10000);
		SHOW(deep, 10001);
	} else if (strncmp(what, "threads", 7) == 0) {
		/* threadsK: K times the calls, and 200 steps of the worker's own
		** work after each (the workers' time then outweighs what a loaded
		** machine adds to the main thread's) */
		long k = what[7] ? atol(what + 7) : 1;
		worker_spin = k > 1 ? 200 : 0;
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(1000 * k * (i + 1)));
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		SHOW(worker, 1);
		SHOW(leaf, 1000 * k); /* per thread: 1000, 2000, 3000, 4000 times k */
	} else if (strcmp(what, "sleep") == 0) {
		for (int i = 0; i < 3; i++)
			napper();
		SHOW(napper, 3);
	} else if (strcmp(what, "alloc") == 0) {
		for (int i = 0; i < 1000; i++)
			allocator();
		SHOW(allocator, 1000);
	} else if (strcmp(what, "grow") == 0) {
		/* climbs to 20 MB in four steps of 5 MB, coming down by a fifth
		** after each (each turn a peak), then frees it all */
		long keeps = 0, drops = 0;
		for (int step = 1; step <= 4; step++) {
			for (int i = 0; i < step * 5000; i++)
				if (!kept[i])
					keep(i), keeps++;
			for (int i = 0; i < step * 5000; i += 5)
				drop(i), drops++;
		}
		for (int i = 0; i < 20000; i++)
			if (kept[i])
				drop(i), drops++;
		SHOW(keep, keeps);
		SHOW(drop, drops);
	} else if (strcmp(what, "churn") == 0) {
		/* holds 100,000 small blocks (a capture of the map takes a
		** while), then allocates and frees for 0.5 s of its CPU time,
		** while the service thread takes interval snapshots */
		static void *held[100000];
		for (int i = 0; i < 100000; i++)
			held[i] = malloc(32);
		long calls = 0;
		long long c0 = clock_ns_of(CLOCK_THREAD_CPUTIME_ID);
		while (clock_ns_of(CLOCK_THREAD_CPUTIME_ID) - c0 < 500000000ll)
			allocator(), calls++;
		for (int i = 0; i < 100000; i++)
			free(held[i]);
		SHOW(allocator, calls);
	} else if (strcmp(what, "preempt") == 0) {
		cpu_set_t can;
		if (sched_getaffinity(0, sizeof can, &can) != 0)
			return 5;
		for (spin_cpu = 0; spin_cpu < CPU_SETSIZE && !CPU_ISSET(spin_cpu, &can); spin_cpu++)
			;
		pthread_t t[2];
		void *rc[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, spinner, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], &rc[i]);
		if (rc[0] || rc[1])
			return 6;
		SHOW(spinner, 1);
	} else if (strcmp(what, "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 5; i++)
				leaf();
			printf("child %d\n", (int)getpid());
			SHOW(leaf, 5);
			fflush(stdout);
			exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		for (int i = 0; i < 7; i++)
			leaf();
		SHOW(leaf, 7);
	} else if (strcmp(what, "closefds") == 0) {
		/* a daemon's start: every descriptor but 0-2 closed, then a file
		** of its own, likely given the trace file's old number; the
		** traced calls go on, and its file must hold only its data */
		const char *own = getenv("TRACE_TARGET_FILE");
		if (!own)
			return 2;
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		int fd = open(own, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 3;
		for (long i = 0; i < 200000; i++)
			leaf();
		if (write(fd, "data\n", 5) != 5 || close(fd) != 0)
			return 4;
		SHOW(leaf, 200000);
	} else if (strncmp(what, "loop", 4) == 0) { /* loopN: leaf N times */
		long n = atol(what + 4);
		for (long i = 0; i < n; i++)
			leaf();
		SHOW(leaf, n);
	} else {
		fprintf(stderr, "trace_target: unknown case %s\n", what);
		return 2;
	}
	return 0;
}

#ifdef TRACE_LINKED
static void *apply_body(void *arg)
{
	for (int i = 0; i < 11; i++)
		leaf();
	return arg;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
#ifdef TRACE_LINKED
	/* apply FILE: leaf 3 times untraced, 11 times under apply, 13 after a
	** start/stop pair with continue off */
	if (strcmp(argv[1], "apply") == 0 && argc == 3) {
		char opts[512];
		snprintf(opts, sizeof opts, "trace=wall,trace_file=%s", argv[2]);
		for (int i = 0; i < 3; i++)
			leaf();
		if (meminst_trace_apply(apply_body, opts, opts, 0) != opts)
			return 3;
		if (meminst_trace_active())
			return 4;
		for (int i = 0; i < 5; i++)
			leaf(); /* not traced */
		if (meminst_trace_start(NULL) != 0)
			return 5;
		for (int i = 0; i < 13; i++)
			leaf();
		meminst_trace_stop();
		SHOW(leaf, 24);
		SHOW(apply_body, 1);
		return 0;
	}
	/* fullstop N: leaf N times while the trace file reaches its limit (the
	** test sets ulimit -f), the writer drained so that its failed write is
	** done, one more leaf: tracing must be off by then */
	if (strcmp(argv[1], "fullstop") == 0 && argc == 3) {
		long n = atol(argv[2]);
		for (long i = 0; i < n; i++)
			leaf();
		meminst_trace_flush();
		leaf();
		printf("active %d\n", meminst_trace_active());
		return 0;
	}
	/* sampstop N: as fullstop, then with SIGPROF blocked 0.3 s of CPU:
	** once the failed write has stopped the sampler too, no tick of its
	** timers (or of the wall sampler) is left pending.  Blocked by the
	** system call itself: through sigprocmask the sampler would stop
	** this thread's ticks while it blocks them (trace_sigwrap.c), and
	** the run without the limit could not show a tick pending. */
	if (strcmp(argv[1], "sampstop") == 0 && argc == 3) {
		long n = atol(argv[2]);
		for (long i = 0; i < n; i++)
			leaf();
		meminst_trace_flush();
		sigset_t prof, pending;
		sigemptyset(&prof);
		sigaddset(&prof, SIGPROF);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &prof, NULL, (size_t)(_NSIG / 8));
		long long until = clock_ns_of(CLOCK_THREAD_CPUTIME_ID) + 300000000;
		while (clock_ns_of(CLOCK_THREAD_CPUTIME_ID) < until)
			spin();
		sigpending(&pending);
		printf("sigprof pending %d\n", sigismember(&pending, SIGPROF));
		printf("sampling %d\n", meminst_sample_active());
		return 0;
	}
	/* apiprof FILE: leaf 13 times between a start and a stop to an
	** in-process profile; the file must be there right after the stop */
	if (strcmp(argv[1], "apiprof") == 0 && argc == 3) {
		char opts[512];
		snprintf(opts, sizeof opts, "trace=wall,trace_output=profile,trace_file=%s", argv[2]);
		if (meminst_trace_start(opts) != 0)
			return 5;
		for (int i = 0; i < 13; i++)
			leaf();
		meminst_trace_stop();
		if (access(argv[2], R_OK) != 0)
			return 6;
		printf("written at stop\n");
		for (int i = 0; i < 5; i++)
			leaf(); /* not traced */
		SHOW(leaf, 13);
		return 0;
	}
	/* stopped FILE loopN: tracing started and stopped by the API, then
	** the loop: the hooks' cost with tracing stopped */
	if (strcmp(argv[1], "startnull") == 0 && argc == 3) { /* the settings of MEMINST */
		if (meminst_trace_start(NULL) != 0)
			return 5;
		int rc = run(argv[2]);
		meminst_trace_stop();
		return rc;
	}
	if (strcmp(argv[1], "stopped") == 0 && argc == 4) {
		char opts[512];
		snprintf(opts, sizeof opts, "trace=wall,trace_file=%s", argv[2]);
		if (meminst_trace_start(opts) != 0)
			return 5;
		leaf();
		meminst_trace_stop();
		return run(argv[3]);
	}
#endif
	return run(argv[1]);
}
