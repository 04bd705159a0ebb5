#!/bin/sh
# alloc_preempt.sh — with trace=wall, a pre-emption inside an allocator
# call is <preempted>, not the allocator's time.  The program and a busy
# child share one CPU (sched_setaffinity), and work() makes 8 callocs of
# 32 MB that glibc must clear (the heap's top, kept by the thresholds), so
# the scheduler switches between the two inside nearly every call.  The
# next call or return found the gap but placed it after the allocator's
# record, where it did not fit: <alloc> held the pre-emptions (its OWN
# about twice the process's CPU time).  Now the call's record ends before
# them and a SUSPEND(PREEMPT) follows: <alloc>'s OWN is within the
# program's CPU time (getrusage, printed by the program: two clocks
# compared, no rate), and work() calls <preempted>.
. "$top_srcdir/tests/profile/lib.sh"

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
cat >"$IT_TMP/ap.c" <<'C'
#define _GNU_SOURCE
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#define BIG (32u << 20)
static volatile unsigned long sink;
__attribute__((noinline)) void work(void)
{
	char *p = calloc(1, BIG);
	if (!p)
		exit(3);
	sink += (unsigned char)p[BIG / 2];
	free(p);
}
int main(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		return 77;
	mallopt(M_MMAP_THRESHOLD, 1 << 30); /* from the heap, kept at free */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	free(memset(malloc(BIG), 1, BIG));
	pid_t busy = fork(); /* inherits the CPU */
	if (busy == 0) {
		for (unsigned long i = 0; i < 20000000000ul; i++) /* bounded: ended by kill */
			sink += i;
		_exit(0);
	}
	for (int i = 0; i < 8; i++)
		work();
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_ms %.3f\n", ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
					ru.ru_stime.tv_usec / 1e3);
	return 0;
}
C
"$CC" -g -O1 -finstrument-functions -o "$IT_DB/ap" "$IT_TMP/ap.c" || exit 99

for attempt in 1 2 3; do
	pt_trace_both trace=wall ap.trace ap
	cpu=$(sed -n 's/^cpu_ms //p' "$IT_TMP/prog.out")
	[ -n "$cpu" ] || { echo "the program could not share one CPU: skipped"; exit 77; }
	got=$(pt_json "$IT_TMP/comp.json" "(round(fn(j, 0, '<alloc>')['own_ms'], 1), round(sum(c['own_ms'] for c in fn(j, 0, 'work')['called'] if c['name'] == '<preempted>'), 1))")
	echo "  | run $attempt: <alloc> own, <preempted> under work: $got ms; the program's CPU $cpu ms"
	ok=$(python3 -c "a, p = $got; print(a <= $cpu * 1.1 + 5 and p > 0)")
	[ "$ok" = True ] && break
done
pt_expect "alloc_preempt: a pre-emption inside calloc is <preempted>, not <alloc>'s time" "$ok" "True"
it_finish
