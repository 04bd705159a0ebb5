/*
** sample_block.c — blocking calls for the wall-clock sampling tests
** (tests/sample/block.sh; built -O1 -fno-inline -g).
**
**   block [MS]   one function per kind of wait, each waiting MS ms (200):
**                block_usleep (10 x usleep(MS/2 ms)), block_nanosleep,
**                block_poll (poll on a pipe nobody writes, timeout),
**                block_read (read on a pipe a thread writes after MS),
**                block_cond (pthread_cond_wait, signalled after MS),
**                block_join (a thread that sleeps MS), block_raw (the
**                nanosleep system call, which meminst does not wrap).
**                Each measures its wait: a wait shorter than asked, or an
**                EINTR, is printed ("short NAME", "eintr NAME").
**   deep N MS    burns MS ms of CPU N calls deep (deep_rec), for the
**                [truncated] frame of stacks deeper than sample_depth
**                (deep_burn allocates 512 bytes a round: allocation
**                samples too)
**   burn MS END  burns MS ms of CPU (deep_burn), then ends by END: exit,
**                _exit (status 5), abort, or forever (burns until killed)
**   catch        burns until SIGTERM, caught by its own handler; then
**                checks that sigaction reports that handler, prints
**                "caught", sets SIGTERM back to SIG_DFL and raises it
**   small MS     burns MS ms of CPU on a stack of 8 KiB (a guard page below
**                it), with a signal stack of 64 KiB set by sigaltstack, as
**                a Go program's goroutines run; prints "small done"
**   alt MS [SIZE] sets a signal stack of SIZE bytes (8192: SIGSTKSZ, as
**                many programs do for their SIGSEGV handler; 2048: the old
**                MINSIGSTKSZ; 18160: Python's faulthandler) and burns MS
**                ms of CPU on its own
**                stack; prints "alt done"
**   coro MS      burns MS ms of CPU in a coroutine (makecontext) on a
**                stack of 8 KiB at the top of 64 KiB from malloc, no
**                signal stack; the 56 KiB below are filled with a pattern
**                and checked after: a walk on the coroutine's stack wrote
**                there ("coro overwritten N")
**   masked MS    blocks every signal, then burns MS ms of CPU in a thread
**                (a daemon's threads: no timer tick reaches them)
**   exec N       burns 2 ms of CPU and executes itself with N - 1, down to
**                0 (a wall-clock tick pending through the exec must not
**                kill the new program)
**   sigwait MS   blocks every signal, burns MS ms of CPU in steps of 10 ms
**                and after each takes what is pending with sigtimedwait
**                (timeout 0), sigwaitinfo and sigwait (after a sigqueue of
**                its own SIGUSR1 each, so that they return); prints
**                "unexpected N" for any other signal; then sends itself
**                SIGPROF by sigqueue and checks sigtimedwait takes it
**                ("own sigprof" when it does)
**   signalfd MS  blocks every signal and reads them from a signalfd (a
**                daemon's event loop), burns MS ms of CPU in steps of 10 ms
**                and after each looks at sigpending and reads the signalfd:
**                prints "unexpected N" for any signal; then sends itself
**                SIGPROF by sigqueue and reads it there ("own sigprof")
**   inherit MS   blocks every signal and executes itself as "pending MS",
**                which burns MS ms of CPU with the mask it was born with
**                (no call of its own) and prints "unexpected 27 from
**                sigpending" if a SIGPROF is pending then
**   threads N    starts N short threads, 4 at a time, each making and
**                freeing 8 small blocks, and joins them; prints
**                "minflt F": the process's minor page faults at the end
**                (threads.sh: what a thread costs the sampler)
**
** Prints "block done" / "deep done" and exits 0 when every wait was whole.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

static double ms_arg = 200;
static int failures;

static double now_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check(const char *name, double t0, double want, int rc)
{
	double took = now_ms(CLOCK_MONOTONIC) - t0;
	if (rc < 0 && errno == EINTR) {
		printf("eintr %s\n", name);
		failures++;
	}
	if (took < want - 0.5) {
		printf("short %s %.1f ms of %.1f\n", name, took, want);
		failures++;
	}
}

static struct timespec ts_of(double ms)
{
	struct timespec ts = {(time_t)(ms / 1e3), (long)((ms - (time_t)(ms / 1e3) * 1e3) * 1e6)};
	return ts;
}

__attribute__((noinline)) void block_usleep(void)
{
	for (int i = 0; i < 10; i++) {
		double t0 = now_ms(CLOCK_MONOTONIC);
		int rc = usleep((useconds_t)(ms_arg / 2 * 1000));
		check("usleep", t0, ms_arg / 2, rc);
	}
}

__attribute__((noinline)) void block_nanosleep(void)
{
	struct timespec ts = ts_of(ms_arg);
	double t0 = now_ms(CLOCK_MONOTONIC);
	int rc = nanosleep(&ts, NULL);
	check("nanosleep", t0, ms_arg, rc);
}

__attribute__((noinline)) void block_poll(void)
{
	int p[2];
	if (pipe(p) < 0)
		return;
	struct pollfd pf = {p[0], POLLIN, 0};
	double t0 = now_ms(CLOCK_MONOTONIC);
	int rc = poll(&pf, 1, (int)ms_arg);
	check("poll", t0, ms_arg, rc);
	close(p[0]);
	close(p[1]);
}

static int writer_fd;
static void *writer_main(void *arg)
{
	(void)arg;
	struct timespec ts = ts_of(ms_arg);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	if (write(writer_fd, "x", 1) != 1)
		abort();
	return NULL;
}

__attribute__((noinline)) void block_read(void)
{
	int p[2];
	if (pipe(p) < 0)
		return;
	writer_fd = p[1];
	pthread_t t;
	double t0 = now_ms(CLOCK_MONOTONIC);
	pthread_create(&t, NULL, writer_main, NULL);
	char c;
	ssize_t rc = read(p[0], &c, 1);
	check("read", t0, ms_arg, rc < 0 ? -1 : 0);
	if (rc != 1)
		printf("read got %zd\n", rc), failures++;
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
}

static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_done;

static void *signaller_main(void *arg)
{
	(void)arg;
	struct timespec ts = ts_of(ms_arg);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&cond_lock);
	cond_done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

__attribute__((noinline)) void block_cond(void)
{
	pthread_t t;
	double t0 = now_ms(CLOCK_MONOTONIC);
	pthread_create(&t, NULL, signaller_main, NULL);
	pthread_mutex_lock(&cond_lock);
	while (!cond_done)
		pthread_cond_wait(&cond, &cond_lock);
	pthread_mutex_unlock(&cond_lock);
	check("cond", t0, ms_arg, 0);
	pthread_join(t, NULL);
}

static void *sleep_main(void *arg)
{
	(void)arg;
	struct timespec ts = ts_of(ms_arg);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return NULL;
}

__attribute__((noinline)) void block_join(void)
{
	pthread_t t;
	double t0 = now_ms(CLOCK_MONOTONIC);
	pthread_create(&t, NULL, sleep_main, NULL);
	pthread_join(t, NULL);
	check("join", t0, ms_arg, 0);
}

__attribute__((noinline)) void block_raw(void)
{
	struct timespec ts = ts_of(ms_arg);
	double t0 = now_ms(CLOCK_MONOTONIC);
	long rc = syscall(SYS_nanosleep, &ts, NULL);
	check("raw", t0, ms_arg, (int)rc);
}

static volatile uint64_t sink;

/* A block of 512 bytes per round, at the depth of the burn: allocation
** samples with the same deep stacks as the timer samples. */
__attribute__((noinline)) void deep_burn(double ms)
{
	double end = now_ms(CLOCK_THREAD_CPUTIME_ID) + ms;
	uint64_t x = sink | 1;
	while (now_ms(CLOCK_THREAD_CPUTIME_ID) < end) {
		char *volatile block = malloc(512);
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		free(block);
	}
	sink = x;
}

__attribute__((noinline)) void deep_rec(int n, double ms)
{
	if (n > 1)
		deep_rec(n - 1, ms);
	else
		deep_burn(ms);
	sink++; /* not a tail call: every level keeps its frame */
}

static void *burn_main(void *arg)
{
	deep_burn(ms_arg);
	return arg;
}

/* A goroutine's life: a small stack for the code, signals on their own. */
static ucontext_t small_main_ctx, small_ctx;
static void small_run(void)
{
	deep_burn(ms_arg);
}

static int small_stack(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 8192;
	char *mem = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t alt = {.ss_sp = malloc(65536), .ss_size = 65536};
	if (mem == MAP_FAILED || !alt.ss_sp || mprotect(mem, (size_t)page, PROT_NONE) != 0 ||
	    sigaltstack(&alt, NULL) != 0 || getcontext(&small_ctx) != 0) {
		perror("small stack");
		return 1;
	}
	small_ctx.uc_stack.ss_sp = mem + page;
	small_ctx.uc_stack.ss_size = size;
	small_ctx.uc_link = &small_main_ctx;
	makecontext(&small_ctx, small_run, 0);
	return swapcontext(&small_main_ctx, &small_ctx) == 0 ? 0 : 1;
}

/* A coroutine of a green-thread library: a small stack from malloc. */
#define CORO_ROOM (64 * 1024)
#define CORO_STACK 8192
static int coro_stack(void)
{
	unsigned char *mem = malloc(CORO_ROOM);
	if (!mem || getcontext(&small_ctx) != 0) {
		perror("coro");
		return 1;
	}
	memset(mem, 0xa5, CORO_ROOM - CORO_STACK);
	small_ctx.uc_stack.ss_sp = mem + CORO_ROOM - CORO_STACK;
	small_ctx.uc_stack.ss_size = CORO_STACK;
	small_ctx.uc_link = &small_main_ctx;
	makecontext(&small_ctx, small_run, 0);
	if (swapcontext(&small_main_ctx, &small_ctx) != 0)
		return 1;
	size_t changed = 0;
	for (size_t i = 0; i < CORO_ROOM - CORO_STACK; i++)
		changed += mem[i] != 0xa5;
	if (changed)
		printf("coro overwritten %zu\n", changed);
	free(mem);
	return changed != 0;
}

static volatile sig_atomic_t caught;
static void on_term(int sig)
{
	(void)sig;
	caught = 1;
}

static int burn_end(double ms, const char *end)
{
	if (!strcmp(end, "forever"))
		for (;;)
			deep_burn(10);
	deep_burn(ms);
	if (!strcmp(end, "_exit"))
		_exit(5);
	if (!strcmp(end, "abort"))
		abort();
	return 0;
}

static int catch_term(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!caught)
		deep_burn(10);
	sigaction(SIGTERM, NULL, &old);
	printf("caught%s\n", old.sa_handler == on_term ? "" : " (sigaction reports another handler)");
	fflush(stdout);
	signal(SIGTERM, SIG_DFL);
	if (signal(SIGTERM, SIG_DFL) != SIG_DFL)
		printf("signal does not report SIG_DFL\n");
	fflush(stdout);
	raise(SIGTERM);
	return 1;
}

/* A signal thread's loop: every signal blocked, taken by the sigwait
** family (its own SIGUSR1 makes the blocking ones return). */
static int wait_signals(double ms)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	int pid = getpid(), unexpected = 0;
	for (double done = 0; done < ms; done += 10) {
		deep_burn(10);
		struct timespec zero = {0, 0};
		siginfo_t si;
		int sig;
		while ((sig = sigtimedwait(&all, &si, &zero)) > 0)
			unexpected += printf("unexpected %d from sigtimedwait\n", sig) > 0;
		sigqueue(pid, SIGUSR1, (union sigval){.sival_int = 1});
		if ((sig = sigwaitinfo(&all, &si)) != SIGUSR1)
			unexpected += printf("unexpected %d from sigwaitinfo\n", sig) > 0;
		sigqueue(pid, SIGUSR1, (union sigval){.sival_int = 2});
		if (sigwait(&all, &sig) != 0 || sig != SIGUSR1)
			unexpected += printf("unexpected %d from sigwait\n", sig) > 0;
	}
	sigqueue(pid, SIGPROF, (union sigval){.sival_int = 3});
	struct timespec second = {1, 0};
	siginfo_t si;
	if (sigtimedwait(&all, &si, &second) == SIGPROF && si.si_value.sival_int == 3)
		printf("own sigprof\n");
	return unexpected ? 1 : 0;
}

/* A daemon's event loop: every signal blocked, read from a signalfd. */
static int read_signals(double ms)
{
	sigset_t all, pending;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	int fd = signalfd(-1, &all, SFD_NONBLOCK | SFD_CLOEXEC), unexpected = 0;
	if (fd < 0) {
		perror("signalfd");
		return 1;
	}
	struct signalfd_siginfo si;
	for (double done = 0; done < ms; done += 10) {
		deep_burn(10);
		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPROF))
			unexpected += printf("unexpected %d from sigpending\n", SIGPROF) > 0;
		while (read(fd, &si, sizeof si) == (ssize_t)sizeof si)
			unexpected += printf("unexpected %u from the signalfd\n", si.ssi_signo) > 0;
	}
	sigqueue(getpid(), SIGPROF, (union sigval){.sival_int = 3});
	if (read(fd, &si, sizeof si) == (ssize_t)sizeof si && si.ssi_signo == SIGPROF && si.ssi_int == 3)
		printf("own sigprof\n");
	close(fd);
	return unexpected ? 1 : 0;
}

static void *short_main(void *arg)
{
	char *p[8];
	for (int i = 0; i < 8; i++) {
		p[i] = malloc(32 + 16 * (size_t)i);
		if (p[i])
			memset(p[i], i, 32);
	}
	for (int i = 0; i < 8; i++)
		free(p[i]);
	return arg;
}

/* N short threads, 4 in flight; the minor faults of the whole run. */
static int short_threads(int n)
{
	pthread_t t[4];
	for (int i = 0; i < n; i += 4) {
		for (int j = 0; j < 4; j++)
			if (pthread_create(&t[j], NULL, short_main, NULL) != 0) {
				fprintf(stderr, "pthread_create failed\n");
				return 1;
			}
		for (int j = 0; j < 4; j++)
			pthread_join(t[j], NULL);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("minflt %ld\n", ru.ru_minflt);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "block";
	if (!strcmp(what, "block")) {
		if (argc > 2)
			ms_arg = atof(argv[2]);
		block_usleep();
		block_nanosleep();
		block_poll();
		block_read();
		block_cond();
		block_join();
		block_raw();
	} else if (!strcmp(what, "deep") && argc > 3) {
		deep_rec(atoi(argv[2]), atof(argv[3]));
	} else if (!strcmp(what, "burn") && argc > 3) {
		burn_end(atof(argv[2]), argv[3]);
	} else if (!strcmp(what, "catch")) {
		return catch_term();
	} else if (!strcmp(what, "small") && argc > 2) {
		ms_arg = atof(argv[2]);
		failures = small_stack();
	} else if (!strcmp(what, "coro") && argc > 2) {
		ms_arg = atof(argv[2]);
		failures = coro_stack();
	} else if (!strcmp(what, "alt") && argc > 2) {
		size_t size = argc > 3 ? (size_t)atol(argv[3]) : 8192;
		stack_t alt = {.ss_sp = malloc(size), .ss_size = size};
		if (!alt.ss_sp || sigaltstack(&alt, NULL) != 0) {
			perror("sigaltstack");
			return 1;
		}
		deep_burn(atof(argv[2]));
	} else if (!strcmp(what, "masked") && argc > 2) {
		sigset_t all;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		ms_arg = atof(argv[2]);
		pthread_t t;
		pthread_create(&t, NULL, burn_main, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(what, "exec") && argc > 2) {
		int n = atoi(argv[2]);
		if (n > 0) {
			char next[16];
			snprintf(next, sizeof next, "%d", n - 1);
			deep_burn(2);
			execl("/proc/self/exe", argv[0], "exec", next, (char *)NULL);
			perror("execl /proc/self/exe");
			return 1;
		}
	} else if (!strcmp(what, "sigwait") && argc > 2) {
		failures = wait_signals(atof(argv[2]));
	} else if (!strcmp(what, "inherit") && argc > 2) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		execl("/proc/self/exe", argv[0], "pending", argv[2], (char *)NULL);
		perror("execl /proc/self/exe");
		return 1;
	} else if (!strcmp(what, "pending") && argc > 2) {
		sigset_t pending;
		deep_burn(atof(argv[2]));
		if (sigpending(&pending) == 0 && sigismember(&pending, SIGPROF))
			failures += printf("unexpected %d from sigpending\n", SIGPROF) > 0;
	} else if (!strcmp(what, "signalfd") && argc > 2) {
		failures = read_signals(atof(argv[2]));
	} else if (!strcmp(what, "threads") && argc > 2) {
		failures = short_threads(atoi(argv[2]));
	} else {
		fprintf(stderr, "usage: sample_block block [MS] | deep N MS | burn MS END | catch | small MS | coro MS | alt MS | masked MS | exec N | sigwait MS | signalfd MS | inherit MS | threads N\n");
		return 2;
	}
	printf("%s done\n", what);
	return failures ? 1 : 0;
}
