/*
** bench_wait.c — waits under wall-clock sampling (bench/sample.sh): does
** the sampler cut them short?
**
** usage: bench_wait [N]   N rounds (default 10) of usleep(100 ms), then N
** of nanosleep(100 ms) and N of poll(no descriptor, 100 ms).  Prints
**   usleep_ms=T nanosleep_ms=T poll_ms=T eintr=E short=S
** T: the wall time each kind took in all (asked: N x 100 ms), E: calls
** that returned EINTR, S: calls that returned before their time.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int eintr, shorts;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void note(double t0, int rc)
{
	if (rc < 0 && errno == EINTR)
		eintr++;
	if (now_ms() - t0 < 99.9)
		shorts++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	double t[3];
	for (int k = 0; k < 3; k++) {
		double start = now_ms();
		for (int i = 0; i < n; i++) {
			double t0 = now_ms();
			struct timespec ts = {0, 100000000};
			int rc = k == 0 ? usleep(100000) : k == 1 ? nanosleep(&ts, NULL) : poll(NULL, 0, 100);
			note(t0, rc);
		}
		t[k] = now_ms() - start;
	}
	printf("usleep_ms=%.1f nanosleep_ms=%.1f poll_ms=%.1f eintr=%d short=%d\n", t[0], t[1], t[2],
	       eintr, shorts);
	return 0;
}
