#!/bin/sh
# bench/trace_alloc_insn.sh BUILD [BASELINE] — instructions per
# malloc(64)+free pair under exact tracing (<alloc> records), callgrind's
# slope between two run lengths of `bench_alloc -s 64 pairs` (20,000 and
# 100,000 pairs, --toggle-collect=bench_pairs_one: the program's threads
# only, the trace writer's flushes left out), for trace=wall with the modes
# off, mis and mim.  With mim an allocation's record is an ALLOC_BLOCK
# (4 words, with the block's allocation number) where the others write an
# ALLOC (3 words).  BASELINE: a build tree of an earlier commit, measured
# the same way next to it.  Exact and repeatable.
set -eu
B=${1:?usage: trace_alloc_insn.sh BUILD [BASELINE]}
BASE=${2:-}
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-talloc.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

ir() { # BUILD MEMINST SCALE: instructions inside bench_pairs_one
	env LD_PRELOAD="$1/alloc/.libs/libmeminst.so" MEMINST="$2,trace_file=$TMP/t.%p.trace" \
		valgrind --tool=callgrind --toggle-collect=bench_pairs_one --callgrind-out-file="$TMP/cg" \
		"$1/bench/bench_alloc" -n "$3" -s 64 pairs >/dev/null 2>&1
	awk '/^summary:/ { print $2 }' "$TMP/cg"
	rm -f "$TMP"/t.*.trace*
}
per_pair() { # BUILD MEMINST
	a=$(ir "$1" "$2" 0.01) b=$(ir "$1" "$2" 0.05)
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) / 80000 }'
}
echo "instructions per malloc(64)+free pair under trace=wall (callgrind, slope 20k..100k pairs)"
printf '%-14s %10s %10s %10s\n' mode build baseline difference
for m in off mis mim; do
	now=$(per_pair "$B" "$m,trace=wall")
	if [ -n "$BASE" ]; then
		was=$(per_pair "$BASE" "$m,trace=wall")
		printf '%-14s %10s %10s %+10.1f\n' "$m" "$now" "$was" "$(awk -v a="$now" -v b="$was" 'BEGIN { print a - b }')"
	else
		printf '%-14s %10s\n' "$m" "$now"
	fi
done
