#!/bin/sh
# bench/mmap_cost.sh — the cost of an mmap(64 KiB)+munmap pair through
# libmeminst's hooks (alloc_region.c) against no preload and MEMINST=off,
# with LIVE other regions mapped beside the loop (the region table's
# size; default 1, 100, 1,000 and 10,000): bench/bench_mmap.
# 1. Instructions per pair (callgrind, user side only, the kernel not
#    counted): the slope between 10,000 and 30,000 pairs, so that mapping
#    the live regions is left out.
# 2. CPU per pair (CLOCK_PROCESS_CPUTIME_ID, kernel included), PAIRS pairs
#    a run (default 200,000), the tools interleaved over --rounds rounds
#    (default 7): median and min-max of each; the extra over no preload
#    as the median of the rounds' differences (each round's tool run
#    against the same round's none), and its user-time part (getrusage:
#    the hooks' bookkeeping, apart from the kernel's run-to-run noise);
#    PASS or MISS against issue 31's target (<= 1 us a pair).
# usage: bench/mmap_cost.sh [--rounds N] [--pairs N] [--live "N ..."]
#                           [--no-callgrind] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
rounds=7
pairs=200000
lives="1 100 1000 10000"
callgrind=1
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--pairs) shift; pairs=$1 ;;
	--live) shift; lives=$1 ;;
	--no-callgrind) callgrind=0 ;;
	*) bench_arg mmap_cost.sh "$1" ;;
	esac
	shift
done
build=$(bench_build_dir mmap_cost.sh bench/bench_mmap "$build")
lib=$build/alloc/.libs/libmeminst.so
bin=$build/bench/bench_mmap
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-mmap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "# mmap_cost: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# run TOOL ARGS...: bench_mmap ARGS alone (none) or preloaded in mode TOOL
run() {
	_tool=$1
	shift
	if [ "$_tool" = none ]; then
		"$@"
	else
		env LD_PRELOAD="$lib" MEMINST="$_tool" "$@"
	fi
}

if [ "$callgrind" = 1 ] && command -v valgrind >/dev/null; then
	echo
	echo "instructions per mmap+munmap pair (callgrind slope, 10,000 -> 30,000 pairs):"
	for live in $lives; do
		for tool in none off mis mim; do
			for n in 10000 30000; do
				run $tool valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" \
					"$bin" $n 65536 "$live" >/dev/null 2>&1
			done
			echo "$live $tool $(awk '/^summary:/ { print $2 }' "$tmp/cg.10000") $(awk '/^summary:/ { print $2 }' "$tmp/cg.30000")"
		done
	done | awk '{ per = ($4 - $3) / 20000; if ($2 == "none") base = per
		printf "  live %-6s %-5s %8.0f Ir/pair %+8.0f over none\n", $1, $2, per, per - base }'
elif [ "$callgrind" = 1 ]; then
	echo "mmap_cost.sh: no valgrind: instruction counts left out" >&2
fi

echo
echo "CPU per pair, ns ($rounds rounds of $pairs pairs, tools interleaved);"
echo "extra: the median over rounds of (tool - none) in the same round;"
echo "user: the user-time part of that extra (the hooks' bookkeeping; the"
echo "kernel's work is the same with or without them):"
for live in $lives; do
	for r in $(seq 1 "$rounds"); do
		for tool in none off mis mim; do
			echo "live=$live round=$r tool=$tool $(run $tool "$bin" "$pairs" 65536 "$live")" >>"$tmp/cpu"
		done
	done
done
awk "$BENCH_AWK"'
{ l = val("live"); t = val("tool"); r = val("round"); k = l " " t
  if (!(k in v)) keys[++n] = k
  v[k] = v[k] " " val("ns_per_pair"); ns[k, r] = val("ns_per_pair"); us[k, r] = val("user_ns")
  rounds[l] = r }
END {
	printf "  %-6s %-5s %10s %20s %10s %10s  %s\n", "live", "tool", "median ns", "min-max", "extra", "user", "target"
	for (i = 1; i <= n; i++) {
		split(keys[i], kt, " ")
		m = median(v[keys[i]]); c = sorted(v[keys[i]], a)
		d = ""; du = ""
		for (r = 1; r <= rounds[kt[1]]; r++) {
			d = d " " (ns[keys[i], r] - ns[kt[1] " none", r])
			du = du " " (us[keys[i], r] - us[kt[1] " none", r])
		}
		x = median(d)
		printf "  %-6s %-5s %10.0f %9.0f-%-10.0f %+10.0f %+10.0f", kt[1], kt[2], m, a[1], a[c], x, median(du)
		if (kt[2] == "mis" || kt[2] == "mim") printf "  <= +1000 %s", x <= 1000 ? "PASS" : "MISS"
		printf "\n"
	}
}' "$tmp/cpu"
