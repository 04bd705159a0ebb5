#!/bin/sh
# bench/session.sh — the cost of a combined session (`make bench-session`).
#
#   overhead  the whole process's wall time, bare against
#             `meminst -q --mis --sample=100` (the launcher, the preload, the
#             status timeline every 100 ms, sampling at 100 Hz, and writing
#             the session database at the end), on the allocation churn
#             (bench_alloc churn: 100k live blocks, 2M free+malloc steps)
#             and the call benchmarks (bench_trace_bare: 400M small calls,
#             ~1 s; bench_cpu: CPU-bound, calls ~16 deep, ~1 s).  `empty`
#             (/bin/true) shows the fixed cost of a session (start, TSC
#             calibration, writing the database).  Median over rounds,
#             alternating the order.  Target: at most 10% over bare.
#   size      one 10-second run (bench_cpu, ~10 s of CPU) under
#             `meminst --mis --sample=100`: the session file's size.
#             Target: at most 50 MB.
#   report    `inspect report` on that session, wall time.  Target: <= 2 s.
#
# usage: bench/session.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=5
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	*) bench_arg session.sh "$1" ;;
	esac
	shift
done

build=$(bench_build_dir session.sh bench/bench_alloc "$build")
launcher=$build/session/meminst
inspect=$build/inspect/inspect
export MEMINST_LIBRARY="$build/alloc/.libs/libmeminst.so"
bench_need session.sh "$build" "$launcher" "$inspect" "$MEMINST_LIBRARY" "$build/bench/bench_alloc" \
	"$build/bench/bench_trace_bare" "$build/bench/bench_cpu"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-session.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ns() { date +%s%N; }

# run_ms CONFIG PROGRAM ARGS...: wall ms of one whole run
run_ms() {
	cfg=$1
	shift
	t0=$(now_ns)
	if [ "$cfg" = bare ]; then
		"$@" >/dev/null 2>&1
	else
		rm -f "$tmp/s.db"
		"$launcher" -q --mis --sample=100 -o "$tmp/s.db" -- "$@" >/dev/null 2>&1
	fi
	t1=$(now_ns)
	echo $(((t1 - t0) / 1000000))
}

workloads="empty /bin/true
churn $build/bench/bench_alloc churn
calls $build/bench/bench_trace_bare 400000000
cpu $build/bench/bench_cpu"

echo "# bench/session.sh: $rounds rounds, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## overhead: whole-process wall ms, median of $rounds"
printf '%-8s %10s %10s %8s  %s\n' workload bare_ms session_ms ratio "target <= 1.10"
printf '%s\n' "$workloads" | while read -r name prog args; do
	: >"$tmp/bare" && : >"$tmp/sess"
	r=0
	while [ $r -lt "$rounds" ]; do
		if [ $((r % 2)) = 0 ]; then
			run_ms bare $prog $args >>"$tmp/bare"; run_ms session $prog $args >>"$tmp/sess"
		else
			run_ms session $prog $args >>"$tmp/sess"; run_ms bare $prog $args >>"$tmp/bare"
		fi
		r=$((r + 1))
	done
	b=$(awk "$BENCH_AWK"'{ l = l " " $1 } END { print median(l) }' "$tmp/bare")
	s=$(awk "$BENCH_AWK"'{ l = l " " $1 } END { print median(l) }' "$tmp/sess")
	awk -v n="$name" -v b="$b" -v s="$s" 'BEGIN {
		r = s / b; printf "%-8s %10.0f %10.0f %8.3f  %s\n", n, b, s, r,
			n == "empty" ? sprintf("(fixed cost %+.0f ms)", s - b) : r <= 1.10 ? "PASS" : "MISS" }'
done

echo
echo "## a 10-second run: session size and inspect report"
"$launcher" -q --mis --sample=100 -o "$tmp/ten.db" -- "$build/bench/bench_cpu" 1200 >/dev/null 2>&1
size=$(wc -c <"$tmp/ten.db")
dur=$(sqlite3 "$tmp/ten.db" 'SELECT duration_ns / 1e9 FROM session_run' 2>/dev/null || echo '?')
t0=$(now_ns)
"$inspect" report "$tmp/ten.db" >/dev/null
t1=$(now_ns)
awk -v sz="$size" -v d="$dur" -v ms=$(((t1 - t0) / 1000000)) 'BEGIN {
	printf "run %s s; session %.2f MB: %s (target <= 50 MB)\n", d, sz / 1e6, sz <= 50e6 ? "PASS" : "MISS"
	printf "inspect report: %d ms: %s (target <= 2000 ms)\n", ms, ms <= 2000 ? "PASS" : "MISS" }'
