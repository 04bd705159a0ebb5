/*
** fastclock.c — an LD_PRELOAD shim for tests/export/progress.sh: the
** monotonic clock runs 1000 times faster, so that inspect's progress bar
** (shown after a second of work, redrawn every tenth) appears on a trace
** that takes milliseconds to read, whatever the machine's speed or load.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int r = real(id, ts);
	if (r == 0 && id == CLOCK_MONOTONIC) {
		static uint64_t t0;
		uint64_t now = (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
		if (!t0)
			t0 = now;
		now = t0 + (now - t0) * 1000;
		ts->tv_sec = (time_t)(now / 1000000000u);
		ts->tv_nsec = (long)(now % 1000000000u);
	}
	return r;
}
