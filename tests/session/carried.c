/* carried.c — carried.sh's program: 300 blocks of 64 bytes held from one
** site (hold) for the whole run, then a fork; the child also holds 77
** blocks of 32 bytes (hold_child); both churn pairs of another site for
** argv[1] rounds of 2 ms.  The held types' status figures do not change
** after the start: their rows are stored once, and every snapshot must
** still show them.  Built with -rdynamic: the sites are named by dladdr. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile keep[400];

__attribute__((noinline)) void *hold(void) { return malloc(64); }
__attribute__((noinline)) void *hold_child(void) { return malloc(32); }
__attribute__((noinline)) void churn(void)
{
	void *volatile p = malloc(200);
	free(p);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	for (unsigned i = 0; i < 300; i++)
		keep[i] = hold();
	pid_t child = fork();
	for (unsigned i = 300; child == 0 && i < 377; i++)
		keep[i] = hold_child();
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < 100; i++)
			churn();
		struct timespec d = {0, 2000000};
		nanosleep(&d, NULL);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
