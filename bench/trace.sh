#!/bin/sh
# trace.sh BUILDDIR — ns added per traced call+return pair (`make bench-trace`):
# the same instrumented binary with an empty hook, under meminst trace=wall
# and trace=cpu, and under `uftrace record`, against the uninstrumented
# binary, best of 3 runs each.  Timed inside the program (the loop only).
# Two more rows split the cost: trace=wall to /dev/null (the hooks, the
# checksum and the system calls, without the kernel's copy into the page
# cache) and trace_output=profile (the in-process profiler: no file until
# exit, the simulation engine instead).
set -u
B=${1:?usage: trace.sh BUILDDIR}
N=${BENCH_TRACE_CALLS:-5000000}
# the trace goes to memory (/dev/shm) when it can: the disk is not what is measured
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
LIB=$B/alloc/.libs/libmeminst.so
HOOK=$B/bench/.libs/libbench_trace_hook.so
[ -f "$HOOK" ] || HOOK=$(ls "$B"/bench/.libs/libbench_trace_hook.so* 2>/dev/null | head -n 1)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-trace.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

best() { # best of 3: ns_per_call
	b=
	for r in 1 2 3; do
		v=$("$@" 2>/dev/null | awk '/^calls/ { print $4 }' | tail -n 1)
		[ -n "$v" ] || { echo "?"; return; }
		if [ -z "$b" ] || awk -v a="$v" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$v; fi
	done
	echo "$b"
}

bare=$(best "$B/bench/bench_trace_bare" "$N")
empty=$(best env LD_PRELOAD="$HOOK" "$B/bench/bench_trace" "$N")
wall=$(best env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_file=$TMP/w.%p.trace" "$B/bench/bench_trace" "$N")
rm -f "$TMP"/*.trace
null=$(best env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_file=/dev/null" "$B/bench/bench_trace" "$N")
prof=$(best env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_output=profile,trace_file=$TMP/p.%p.trace" "$B/bench/bench_trace" "$N")
rm -f "$TMP"/*.trace
cpu=$(best env LD_PRELOAD="$LIB" MEMINST="trace=cpu,trace_file=$TMP/c.%p.trace" "$B/bench/bench_trace" "$N")
rm -f "$TMP"/*.trace
if command -v uftrace >/dev/null 2>&1; then
	uft=$(cd "$TMP" && best uftrace record -d "$TMP/uftrace.data" --no-pager "$B/bench/bench_trace" "$N")
else
	uft="?"
fi
echo "calls per run: $N (ns per call+return pair, timed loop, best of 3)"
printf '%-28s %10s %10s\n' config ns/pair added
for c in "bare $bare" "empty-hook $empty" "meminst-trace=wall $wall" "wall-to-/dev/null $null" \
	"wall-output=profile $prof" "meminst-trace=cpu $cpu" "uftrace-record $uft"; do
	set -- $c
	printf '%-28s %10s %10s\n' "$1" "$2" "$(awk -v a="$2" -v b="$bare" 'BEGIN { if (a == "?") print "?"; else printf "%.2f", a - b }')"
done
awk -v b="$bare" -v e="$empty" -v w="$wall" -v u="$uft" 'BEGIN {
	printf "meminst wall added over empty hook: %.2f ns; ratio wall/empty-hook %.2f; uftrace/meminst-wall %.2f\n",
		w - e, (w - b) / (e - b > 0 ? e - b : 1), (u - b) / (w - b) }'
