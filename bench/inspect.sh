#!/bin/sh
# bench/inspect.sh — how fast inspect reads a snapshot of a million blocks.
#
# bench/bench_gen makes two databases in $TMPDIR (default /tmp): one map
# snapshot of BLOCKS blocks (default 1,000,000) over 1,000 types and 20
# segments, and a file with two such snapshots of one process (90% of the
# blocks kept, 5% reallocated in place, 10% new) for diff.  Every command
# runs ROUNDS times (a fresh process each, output to /dev/null); the table
# shows the median and the fastest run.  Each run includes opening the file,
# which checks it (PRAGMA quick_check): the `header-size` row is that cost
# alone.
#
# Targets (PASS/MISS per row, for 1,000,000 blocks):
#   holes, sum, limits, status   at most 1 s
#   diff of two snapshots        at most 3 s
#   file                         at most 40 bytes per block
#
# usage: bench/inspect.sh [--blocks N] [--rounds N] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench/bench_gen)
set -eu

rounds=5
blocks=1000000
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--blocks) shift; blocks=$1 ;;
	-*) echo "usage: bench/inspect.sh [--blocks N] [--rounds N] [BUILD_DIR]" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
build=${build:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
inspect=$build/inspect/inspect
gen=$build/bench/bench_gen
for p in "$inspect" "$gen"; do
	[ -x "$p" ] || { echo "bench/inspect.sh: $p not built (make in $build)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-inspect.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
one=$tmp/one.db two=$tmp/two.db

now_ms() { echo $(($(date +%s%N) / 1000000)); }

t0=$(now_ms)
"$gen" -n "$blocks" "$one"
t1=$(now_ms)
"$gen" -n "$blocks" -2 "$two"
t2=$(now_ms)
size=$(wc -c <"$one")

# median and minimum of the numbers on stdin
stats() {
	sort -n | awk '{ v[NR] = $1 } END { printf "%d %d\n", v[int((NR + 1) / 2)], v[1] }'
}

# measure LABEL TARGET_MS FILE ARGS...: one table row
measure() {
	label=$1 target=$2 file=$3
	shift 3
	: >"$tmp/times"
	i=0
	while [ $i -lt "$rounds" ]; do
		a=$(now_ms)
		"$inspect" "$@" "$file" >/dev/null
		b=$(now_ms)
		echo $((b - a)) >>"$tmp/times"
		i=$((i + 1))
	done
	set -- $(stats <"$tmp/times")
	verdict=
	if [ "$target" -gt 0 ]; then
		if [ "$1" -le "$target" ]; then verdict="≤ $target ms: PASS"; else verdict="≤ $target ms: MISS"; fi
	fi
	printf '| %s | %s | %s | %s |\n' "$label" "$1" "$2" "$verdict"
}

echo "inspect on $blocks blocks, $rounds rounds; bench_gen: $((t1 - t0)) ms (one snapshot), $((t2 - t1)) ms (two)"
echo
echo "| command | median ms | fastest ms | target |"
echo "|---|---|---|---|"
measure "header-size (open + quick_check)" 0 "$one" header-size
measure "holes" 1000 "$one" holes
measure "sum" 1000 "$one" sum
measure "limits" 1000 "$one" limits
measure "status" 1000 "$one" status
measure "top --by type" 0 "$one" top
measure "sum --class class3" 0 "$one" sum --class class3
measure "descr --csv (every block)" 0 "$one" descr --csv
measure "diff (two snapshots)" 3000 "$two" diff
echo
bpb=$(awk -v s="$size" -v n="$blocks" 'BEGIN { printf "%.1f", s / n }')
if awk -v b="$bpb" 'BEGIN { exit !(b <= 40) }'; then verdict=PASS; else verdict=MISS; fi
echo "file: $size bytes for $blocks blocks = $bpb bytes per block (≤ 40: $verdict)"
