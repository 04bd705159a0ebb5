/*
** errno_kept.c — the program's errno is its own: set to a sentinel before
** each call meminst interposes or runs beside, and read after; read too at
** main's start, at a new thread's start and in a fork child.  Prints one
** line per call kind (the errno seen, 0 when the sentinel was kept; in
** loops, how many calls changed it): run bare and under meminst, the
** output must be the same (tests/integration/errno_kept.sh).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SENTINEL 4242
static void *volatile sink; /* main's only (the threads keep theirs) */

/* errno after CALL, the sentinel set before it */
#define AFTER(call) (errno = SENTINEL, (call), errno == SENTINEL ? 0 : errno)

/* a loop of N allocations and frees, every size class and the large ones:
** how many calls changed errno */
static int churn(int n)
{
	int changed = 0;
	void *keep[64] = {0};
	for (int i = 0; i < n; i++) {
		size_t size = (i % 97 == 0) ? 200000 + (size_t)i : 1 + (size_t)(i * 37) % 2000;
		int k = i % 64;
		changed += AFTER(free(keep[k])) != 0;
		changed += AFTER(keep[k] = malloc(size)) != 0;
		void *volatile c;
		changed += AFTER(c = calloc(3, size)) != 0;
		changed += AFTER(free(c)) != 0;
		changed += AFTER(keep[k] = realloc(keep[k], size / 2 + 1)) != 0;
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	return changed;
}

static void *thread_main(void *arg)
{
	int *seen = arg;
	seen[0] = errno;
	seen[1] = churn(20000);
	return NULL;
}

int main(int argc, char **argv)
{
	printf("main start %d\n", errno);
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	void *p = NULL;
	printf("malloc %d\n", AFTER(p = malloc(10)));
	printf("malloc_usable_size %d\n", AFTER(sink = (void *)malloc_usable_size(p)));
	printf("free %d\n", AFTER(free(p)));
	printf("free NULL %d\n", AFTER(free(NULL)));
	printf("posix_memalign %d\n", AFTER(posix_memalign(&p, 64, 100)));
	free(p);
	printf("aligned_alloc %d\n", AFTER(p = aligned_alloc(256, 512)));
	free(p);
	printf("memalign %d\n", AFTER(p = memalign(4096, 100)));
	free(p);
	printf("valloc %d\n", AFTER(p = valloc(100)));
	free(p);
	printf("strdup %d\n", AFTER(p = strdup("errno")));
	free(p);
	printf("realloc NULL %d\n", AFTER(p = realloc(NULL, 50)));
	printf("realloc 0 %d\n", AFTER(sink = realloc(p, 0)));
	free(sink);
	/* failures set errno to ENOMEM, with or without meminst */
	printf("malloc huge %d\n", AFTER(sink = malloc((size_t)-4096)));
	printf("calloc overflow %d\n", AFTER(sink = calloc((size_t)-1 / 2, 4)));
	/* glibc's posix_memalign leaves its failed malloc's ENOMEM in errno */
	printf("posix_memalign huge %d\n", AFTER(posix_memalign(&p, 64, (size_t)-4096)));
	printf("posix_memalign bad alignment %d\n", AFTER(posix_memalign(&p, 24, 100)));
	struct timespec ts = {0, 2000000};
	printf("nanosleep %d\n", AFTER(nanosleep(&ts, NULL)));
	printf("usleep %d\n", AFTER(usleep(2000)));
	for (int r = 0; r < rounds; r++) {
		pthread_t t[3];
		int seen[3][2];
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, thread_main, seen[i]);
		int changed = churn(20000);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		printf("round %d: main churn %d, threads start %d %d %d churn %d %d %d\n", r, changed, seen[0][0],
		       seen[1][0], seen[2][0], seen[0][1], seen[1][1], seen[2][1]);
		usleep(120000); /* an interval snapshot or a sample between rounds */
	}
	fflush(stdout);
	pid_t pid;
	int e = AFTER(pid = fork());
	if (pid == 0) {
		printf("fork child %d churn %d\n", e, churn(5000));
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("fork parent %d, churn %d\n", e, churn(5000));
	return 0;
}
