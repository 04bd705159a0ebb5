#!/bin/sh
# bench/mmap_cost.sh — CPU time of an mmap(64 KiB)+munmap pair through
# libmeminst's hooks (alloc_region.c) against no preload and MEMINST=off:
# bench/bench_mmap, PAIRS pairs a run (default 200,000), with LIVE other
# regions mapped (default 0, then 1,000), the tools interleaved over
# --rounds rounds (default 7); median and min-max of each, and the extra
# over no preload.
# usage: bench/mmap_cost.sh [--rounds N] [--pairs N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
rounds=7
pairs=200000
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--pairs) shift; pairs=$1 ;;
	*) bench_arg mmap_cost.sh "$1" ;;
	esac
	shift
done
build=$(bench_build_dir mmap_cost.sh bench/bench_mmap "$build")
lib=$build/alloc/.libs/libmeminst.so
out=$(mktemp "${TMPDIR:-/tmp}/meminst-mmap.XXXXXX")
trap 'rm -f "$out"' EXIT INT TERM
echo "# mmap_cost: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for live in 0 1000; do
	for r in $(seq 1 "$rounds"); do
		for tool in none off mis mim; do
			if [ $tool = none ]; then
				line=$("$build/bench/bench_mmap" "$pairs" 65536 $live)
			else
				line=$(env LD_PRELOAD="$lib" MEMINST=$tool "$build/bench/bench_mmap" "$pairs" 65536 $live)
			fi
			echo "live=$live tool=$tool $line" >>"$out"
		done
	done
done
awk "$BENCH_AWK"'
{ k = val("live") " " val("tool"); if (!(k in v)) keys[++n] = k; v[k] = v[k] " " val("ns_per_pair") }
END {
	printf "%-6s %-5s %10s %20s %10s\n", "live", "tool", "median ns", "min-max", "extra"
	for (i = 1; i <= n; i++) {
		split(keys[i], kt, " ")
		m = median(v[keys[i]]); c = sorted(v[keys[i]], a)
		base = median(v[kt[1] " none"])
		printf "%-6s %-5s %10.0f %9.0f-%-10.0f %+10.0f\n", kt[1], kt[2], m, a[1], a[c], m - base
	}
}' "$out"
