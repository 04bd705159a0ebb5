#!/bin/sh
# hookcost.sh — with tracing off (MEMINST=off) or stopped by the API, the
# instrumentation hooks cost at most 10 instructions per call+return pair
# more than empty hooks (bench/libbench_trace_hook.so): callgrind's count
# of instructions, the slope between two loop lengths so that start-up
# cancels out.  Skipped without valgrind.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v valgrind >/dev/null 2>&1 || { echo "skip  hookcost: valgrind is needed"; exit 77; }
EMPTY=$top_builddir/bench/.libs/libbench_trace_hook.so
[ -f "$EMPTY" ] || { echo "skip  hookcost: $EMPTY not built"; exit 77; }
N1=20000 N2=60000

# ir ARGS...: instructions of one run (the last process callgrind reports)
ir() {
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" 2>&1 |
		awk '/Collected :/ { v = $NF } END { print v + 0 }'
}
# slope CMD...: instructions per loop iteration, CMD run with loopN1 and loopN2
slope() {
	a=$(ir "$@" loop$N1) b=$(ir "$@" loop$N2)
	awk -v a="$a" -v b="$b" -v n="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / n }'
}

floor=$(slope env LD_PRELOAD="$EMPTY" "$TR_TARGET")
off=$(slope env LD_PRELOAD="$MEMINST_LIB" MEMINST=off "$TR_TARGET")
stopped=$(slope env MEMINST= "$TR_LINKED" stopped "$MI_TMP/stopped.trace")
for c in "off $off" "stopped $stopped"; do
	set -- $c
	why=
	awk -v v="$2" -v f="$floor" 'BEGIN { exit !(v - f <= 10 && v > 0 && f > 0) }' ||
		why="$2 instructions per call against $floor for empty hooks"
	mi_verdict "hooks with tracing $1 ($2 vs empty $floor)" "$why"
done
mi_finish
