/*
** callsites.c — the program of tests/export/callsites.sh: caller() calls
** work() from two lines, 100 times with much work and 1000 bytes each, 300
** times with little and 10 bytes; rec() calls itself (5 deep) and work()
** (7 bytes each).  The markers name the lines the test looks for.
*/
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void work(int n, size_t bytes)
{
	char *p = malloc(bytes);
	for (int i = 0; i < n; i++)
		sink += i;
	p[0] = 1;
	sink += p[0];
	free(p);
}

__attribute__((noinline)) void rec(int depth)
{
	if (depth > 0)
		rec(depth - 1); /* CALL_REC_SELF */
	work(100, 7); /* CALL_REC_WORK */
}

__attribute__((noinline)) void caller(void)
{
	for (int i = 0; i < 100; i++)
		work(20000, 1000); /* CALL_HEAVY */
	for (int i = 0; i < 300; i++)
		work(500, 10); /* CALL_LIGHT */
}

int main(void)
{
	caller();
	rec(5);
	return 0;
}
