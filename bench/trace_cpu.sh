#!/bin/sh
# trace_cpu.sh [--rounds R] BUILDDIR — CPU time (user+sys of the whole
# process, the writer thread and the kernel's copies included) added per
# call+return pair by exact tracing (`make bench-trace-cpu`): bench_trace
# with N calls bare, with empty hooks, with the floor of any tracer
# (bench_trace_floor.c: two TSC reads and 16 B per call, no I/O), with that
# floor writing its full 64 KiB buffers to a file in TRACE_DIR (floor-file:
# what the kernel's copy of 16 B per call adds on this file system), and under
# meminst trace=wall to a real file (TRACE_DIR, default the build tree's
# disk), to /dev/null, and trace=cpu.  Runs are interleaved: each round runs
# every configuration once, in a rotated order; the table gives the median
# and min–max over the rounds of the CPU ns added per pair over the bare
# program, and the ratio to the floor's.  BENCH_BASE_LIB=another
# libmeminst.so adds a row `base-wall` (trace=wall to a file with it): the
# same run measures a change.
set -u
ROUNDS=5
[ "${1:-}" = --rounds ] && { ROUNDS=$2; shift 2; }
B=${1:?usage: trace_cpu.sh [--rounds R] BUILDDIR}
N=${BENCH_TRACE_CALLS:-10000000}
D=${TRACE_DIR:-$B}
LIB=$B/alloc/.libs/libmeminst.so
HOOK=$B/bench/.libs/libbench_trace_hook.so
FLOOR=$B/bench/.libs/libbench_trace_floor.so
FLOOR_FILE=$B/bench/.libs/libbench_trace_floor_file.so
RSS=$B/bench/bench_maxrss
. "$(dirname "$0")/bench-lib.sh"
TMP=$(mktemp -d "$D/bench-trace-cpu.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

CONFIGS="bare empty floor floor-file wall-file wall-null cpu-file${BENCH_BASE_LIB:+ base-wall}"
run() { # CONFIG: one run; prints its cpu_ns
	case $1 in
	bare) set -- "$B/bench/bench_trace_bare" ;;
	empty) set -- env LD_PRELOAD="$HOOK" "$B/bench/bench_trace" ;;
	floor) set -- env LD_PRELOAD="$FLOOR" "$B/bench/bench_trace" ;;
	floor-file) set -- env LD_PRELOAD="$FLOOR_FILE" BENCH_FLOOR_FILE="$TMP/f.trace" "$B/bench/bench_trace" ;;
	wall-file) set -- env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_file=$TMP/w.trace" "$B/bench/bench_trace" ;;
	wall-null) set -- env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_file=/dev/null" "$B/bench/bench_trace" ;;
	base-wall) set -- env LD_PRELOAD="$BENCH_BASE_LIB" MEMINST="trace=wall,trace_file=$TMP/b.trace" "$B/bench/bench_trace" ;;
	cpu-file) set -- env LD_PRELOAD="$LIB" MEMINST="trace=cpu,trace_file=$TMP/c.trace" "$B/bench/bench_trace" ;;
	esac
	"$RSS" "$TMP/rss" "$@" "$N" >/dev/null 2>"$TMP/err" || { echo "?"; return; }
	rm -f "$TMP"/*.trace
	awk "$BENCH_AWK"'{ print val("cpu_ns") }' "$TMP/rss"
}

: >"$TMP/all"
r=0
while [ $r -lt "$ROUNDS" ]; do
	set -- $CONFIGS
	i=0
	while [ $i -lt $((r % $#)) ]; do c=$1; shift; set -- "$@" "$c"; i=$((i + 1)); done
	for c in "$@"; do echo "$r $c $(run "$c")" >>"$TMP/all"; done
	r=$((r + 1))
done
echo "calls per run: $N; CPU ns (user+sys, whole process) added per call+return pair over bare;"
echo "$ROUNDS interleaved rounds, median [min-max]; trace file in $D"
awk "$BENCH_AWK"'
	{ cpu[$1, $2] = $3; rounds[$1] = 1 }
	END {
		nc = split("'"$CONFIGS"'", cs, " ")
		for (ci = 1; ci <= nc; ci++) {
			c = cs[ci]; l = ""
			for (r in rounds) l = l " " (cpu[r, c] - cpu[r, "bare"]) / '"$N"'
			n = sorted(l, a)
			med[c] = median(l); lo[c] = a[1]; hi[c] = a[n]
		}
		printf "%-12s %10s %18s %10s %12s\n", "config", "ns/pair", "min-max", "x floor", "x floor-file"
		for (ci = 1; ci <= nc; ci++) {
			c = cs[ci]
			printf "%-12s %10.2f %8.2f-%-9.2f %10s %12s\n", c, med[c], lo[c], hi[c],
				c == "bare" ? "" : sprintf("%.2f", med[c] / med["floor"]),
				c == "bare" ? "" : sprintf("%.2f", med[c] / med["floor-file"])
		}
	}' "$TMP/all"
