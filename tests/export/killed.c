/*
** killed.c — a program that dies by SIGKILL in the middle of its calls,
** for tests/export/export.sh: the session it leaves (a trace cut short,
** frames never returned from) must still export.  Built with
** -finstrument-functions.
**
**   step   called 20000 times from main, each call allocates 32 bytes
**          and frees them, and calls leaf
**   die    called last, from main; it kills the process
*/
#include <signal.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static void leaf(unsigned long i)
{
	sink += i;
}

static void step(unsigned long i)
{
	char *p = malloc(32);
	p[0] = (char)i;
	sink += (unsigned char)p[0];
	free(p);
	leaf(i);
}

/*
** The full trace buffers go to libmeminst's writer thread; SIGKILL keeps
** only what it has written (meminst(7)).  On a loaded machine the writer
** may not have run at all yet, so give it a moment (bounded, not timed):
** what this test checks is that a cut trace with open frames exports.
*/
static void die(void)
{
	struct timespec pause = {0, 300 * 1000 * 1000};
	nanosleep(&pause, NULL);
	raise(SIGKILL);
}

int main(void)
{
	for (unsigned long i = 0; i < 20000; i++)
		step(i);
	die();
	return 0;
}
