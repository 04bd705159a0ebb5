#!/bin/sh
# trace_insn.sh BUILDDIR — instructions per call+return pair of exact
# tracing (`make bench-trace-insn`): callgrind's instruction count of
# bench_trace at two lengths, the slope between them, for the bare program,
# empty preloaded hooks, the floor of any tracer (bench_trace_floor.c: two
# TSC reads and 16 B per call, no I/O), and meminst off, stopped by the API,
# trace=wall (a file in TMPDIR) and trace=cpu, each also with
# trace_sites=on (every call with its call site).  Exact and repeatable.
set -u
B=${1:?usage: trace_insn.sh BUILDDIR}
N1=${BENCH_INSN_N1:-100000} N2=${BENCH_INSN_N2:-300000}
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
LIB=$B/alloc/.libs/libmeminst.so
HOOK=$B/bench/.libs/libbench_trace_hook.so
FLOOR=$B/bench/.libs/libbench_trace_floor.so
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-insn.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

ir() { # instructions of the run (the exec'd program's count)
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" 2>&1 |
		awk '/Collected :/ { v = $NF } END { print v + 0 }'
}
slope() { # PROG-AND-ENV... : per pair; the program takes N [ARGS] via $X
	a=$(ir "$@" "$N1" $X) b=$(ir "$@" "$N2" $X)
	rm -f "$TMP"/*.trace*
	awk -v a="$a" -v b="$b" -v n="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / n }'
}
X=
bare=$(slope "$B/bench/bench_trace_bare")
empty=$(slope env LD_PRELOAD="$HOOK" "$B/bench/bench_trace")
floor=$(slope env LD_PRELOAD="$FLOOR" "$B/bench/bench_trace")
off=$(slope env LD_PRELOAD="$LIB" MEMINST=off "$B/bench/bench_trace")
wall=$(slope env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_file=$TMP/w.%p.trace" "$B/bench/bench_trace")
cpu=$(slope env LD_PRELOAD="$LIB" MEMINST="trace=cpu,trace_file=$TMP/c.%p.trace" "$B/bench/bench_trace")
wall_sites=$(slope env LD_PRELOAD="$LIB" MEMINST="trace=wall,trace_sites=on,trace_file=$TMP/w.%p.trace" "$B/bench/bench_trace")
cpu_sites=$(slope env LD_PRELOAD="$LIB" MEMINST="trace=cpu,trace_sites=on,trace_file=$TMP/c.%p.trace" "$B/bench/bench_trace")
X=stopped
stopped=$(slope env LD_PRELOAD="$LIB" MEMINST="trace_file=$TMP/s.%p.trace" "$B/bench/bench_trace")
echo "instructions per call+return pair (callgrind, slope between $N1 and $N2 calls)"
printf '%-22s %10s %12s\n' config insn/pair over-empty
for c in "bare $bare" "empty-hook $empty" "floor $floor" "meminst-off $off" "meminst-stopped $stopped" \
	"meminst-trace=wall $wall" "meminst-trace=cpu $cpu" "meminst-wall+sites $wall_sites" \
	"meminst-cpu+sites $cpu_sites"; do
	set -- $c
	printf '%-22s %10s %12s\n' "$1" "$2" "$(awk -v a="$2" -v b="$empty" 'BEGIN { printf "%+.1f", a - b }')"
done
