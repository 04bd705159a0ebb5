/*
** sample_counts.c — exact call counts next to samples (sample_counts=on):
** built with -finstrument-functions and linked with libmeminst.  leaf runs
** exactly 100000 times, mid 1000 times, outer once; main prints the counts
** it made itself so that the test compares them with the trace.
*/
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;

__attribute__((noinline)) void leaf(uint64_t i)
{
	for (int k = 0; k < 200; k++)
		sink = sink * 31 + i + (uint64_t)k;
}

__attribute__((noinline)) void mid(uint64_t i)
{
	for (uint64_t j = 0; j < 100; j++)
		leaf(i * 100 + j);
}

__attribute__((noinline)) void outer(void)
{
	for (uint64_t i = 0; i < 1000; i++)
		mid(i);
}

int main(void)
{
	outer();
	printf("leaf 100000 mid 1000 outer 1\n");
	return 0;
}
