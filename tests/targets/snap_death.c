/*
** snap_death.c — a program that a signal ends while it allocates, for
** tests/integration/snap_death.sh.
**
** Usage: snap_death churn THREADS   main and THREADS threads allocate and
**                                   free in a loop until killed
**        snap_death handler         the program's own SIGTERM handler
**        snap_death dlopen LIB      opens LIB (dlopen), calls its plug_value
**                                   and closes it, in a loop until killed
**        snap_death hold N          holds N more blocks of 48 bytes (an
**                                   exit snapshot that takes a while),
**                                   then waits for the signal
**
** Runs preloaded.  Main holds 100 blocks of 1000 bytes, in the class named
** after the executable.  churn writes "pid N" on stderr and "ready" on
** stdout once every thread has allocated, then churns for ever: only a
** signal ends it.  handler reports the SIGTERM action the program sees
** before and after it sets its own, writes "pid N" and "ready", waits for
** the signal, then says "handled" and exits with status 3: its output and
** status must be those of an uninstrumented run.  dlopen writes "pid N"
** and "ready" after 100 rounds: from then on the signal most often lands
** inside the loader.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile held[100];
static void *volatile sink; /* the held blocks escape */
static atomic_int started;
static volatile sig_atomic_t got;

static void churn(void)
{
	void *volatile keep[64] = {0};
	for (unsigned i = 0;; i++) {
		unsigned k = i % 64;
		free(keep[k]);
		keep[k] = malloc(16 + k * 24);
		if (keep[k])
			memset(keep[k], 1, 16);
		if (i == 1000)
			atomic_fetch_add(&started, 1);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	churn();
	return NULL;
}

static void on_term(int sig)
{
	got = sig;
}

static void loop_dlopen(const char *lib)
{
	for (unsigned i = 0;; i++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "snap_death: %s\n", dlerror());
			exit(2);
		}
		int (*fn)(void) = (int (*)(void))dlsym(h, "plug_value");
		if (!fn || fn() != 7)
			exit(2);
		dlclose(h);
		/* Some work outside the loader, as a real program does between two
		** dlopens: a thread that never leaves ld.so ends by the signal
		** without its snapshot after 3 s of waiting (DEATH_WAIT_MS, by
		** design, meminst(7)); the signal must still often land inside. */
		for (volatile unsigned k = 0; k < 20000; k++)
			;
		if (i == 100) {
			fprintf(stderr, "pid %d\n", (int)getpid());
			printf("ready\n");
			fflush(stdout);
		}
	}
}

static const char *action(int sig)
{
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0)
		return "error";
	if (sa.sa_flags & SA_SIGINFO)
		return "siginfo";
	return sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignore" : "handler";
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int i = 0; i < 100; i++)
		held[i] = malloc(1000);
	if (strcmp(argv[1], "handler") == 0) {
		printf("before: %s\n", action(SIGTERM));
		signal(SIGTERM, on_term);
		printf("after: %s\n", action(SIGTERM));
		fprintf(stderr, "pid %d\n", (int)getpid());
		printf("ready\n");
		fflush(stdout);
		while (!got)
			pause();
		printf("handled %d\n", (int)got);
		return 3;
	}
	if (strcmp(argv[1], "dlopen") == 0 && argc > 2)
		loop_dlopen(argv[2]);
	if (strcmp(argv[1], "hold") == 0 && argc > 2) {
		for (long i = atol(argv[2]); i > 0; i--)
			sink = malloc(48);
		fprintf(stderr, "pid %d\n", (int)getpid());
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	int n = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			return 1;
	}
	for (unsigned i = 0; atomic_load(&started) < n; i++) {
		free(malloc(32));
	}
	fprintf(stderr, "pid %d\n", (int)getpid());
	printf("ready\n");
	fflush(stdout);
	churn();
}
