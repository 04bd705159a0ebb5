#!/bin/sh
# calibrate.sh — the start-up calibration of trace=wall (the launcher's
# --trace) measures the hooks, not a look for a pre-emption.  With the TSC
# clock the first call or return after a gap of 2^17 ticks takes call_gap,
# which reads the thread's CPU clock (a system call) after its stamp; the
# calibration's hooked pass began after such a gap, so its first
# call->call interval held that read, and the kind "cc" came out 3-8 times
# the others (26-43 ns against 5-12): every function that calls on from
# its entry (a wrapper around an inlined leaf: lua's lua_geti) was
# compensated to 0.  The check: cc within twice the largest of cr, rr, lrr,
# lrc (the other kinds of an interval holding the same work); rc, which
# holds none, is left out.  Best of three runs (the figures are minima of
# five rounds each; a loaded machine can still spoil one).
. "$top_srcdir/tests/profile/lib.sh"

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
cat >"$IT_TMP/cal.c" <<'C'
#include <stdio.h>
static volatile unsigned sink;
void leaf(void) { sink++; }
int main(void)
{
	for (int i = 0; i < 1000; i++)
		leaf();
	printf("%u\n", sink);
	return 0;
}
C
"$CC" -g -O1 -fno-inline -finstrument-functions -o "$IT_DB/cal" "$IT_TMP/cal.c" || exit 99

for attempt in 1 2 3; do
	pt_trace_both trace=wall c.trace cal
	it_run profile --dump c.trace
	kinds=$(grep -m1 ' trace_cost ' "$IT_TMP/out" | python3 -c '
import re, sys
k = dict((n, int(v)) for n, v in re.findall(r"(\w+) (\d+) ps", sys.stdin.read()))
print("cc %.1f ns, cr %.1f, rr %.1f, lrr %.1f, lrc %.1f, rc %.1f" % tuple(k[n] / 1e3 for n in ("cc", "cr", "rr", "lrr", "lrc", "rc")))
print(k["cc"] <= 2 * max(k[n] for n in ("cr", "rr", "lrr", "lrc")))')
	echo "  | run $attempt: $(echo "$kinds" | head -1)"
	[ "$(echo "$kinds" | tail -1)" = True ] && break
done
pt_expect "calibrate: trace=wall's call->call interval costs what the others do (not a clock read's system call)" \
	"$(echo "$kinds" | tail -1)" "True"
it_finish
