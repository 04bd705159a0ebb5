#!/bin/sh
# bench/alloc_cost.sh — what the allocation hooks cost, next to glibc's
# libmemusage.so (total counters only), the figures of issue 17.
#
# Configurations: bare (no preload), off, mis, mim (libmeminst,
# backend=system) and memusage (LD_PRELOAD of glibc's libmemusage.so).
#
# 1. Instructions per malloc(64)+free pair (callgrind, exact): the slope
#    between two run lengths of `bench_alloc -s 64 pairs` (20,000 and
#    100,000 pairs, --toggle-collect=bench_pairs_one), so that start-up and
#    the warm-up are left out; shown with the difference to bare.
# 2. CPU time (user+system, bench_maxrss) of bench_alloc's workloads —
#    pairs (-s 64), churn and churn2 (two threads) — over interleaved
#    rounds: each round runs every configuration once, in a rotated order,
#    so that the load of a shared machine hits all alike.  Per round, the
#    extra CPU per operation of a configuration is (its CPU - bare's) /
#    operations, and `vs memusage` is its extra CPU over memusage's extra
#    CPU of the same round.  The table shows medians over rounds and the
#    min-max of the ratio.
#
# usage: bench/alloc_cost.sh [--rounds N] [--scale S] [--no-callgrind]
#                             [--baseline DIR] [BUILD_DIR]
#   --rounds N      rounds of part 2 (default 5)
#   --scale S       bench_alloc -n S for part 2 (default 1: 2M pairs or steps)
#   --baseline DIR  also mis@base and mim@base: the libmeminst.so of another
#                   build tree (an earlier commit), in the same rounds
# Environment: MEMUSAGE_SO (default Debian's libmemusage.so).
set -eu

rounds=5
scale=1
callgrind=1
build=
baseline=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--scale) shift; scale=$1 ;;
	--no-callgrind) callgrind=0 ;;
	--baseline) shift; baseline=$1 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "alloc_cost.sh: unknown option $1" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done

. "$(dirname "$0")/bench-lib.sh"
build=$(bench_build_dir alloc_cost.sh bench/bench_alloc "$build")
bench=$build/bench/bench_alloc
timer=$build/bench/bench_maxrss
lib=$build/alloc/.libs/libmeminst.so
mu=${MEMUSAGE_SO:-/usr/lib/x86_64-linux-gnu/libmemusage.so}
for f in "$bench" "$timer" "$lib" "$mu"; do
	[ -e "$f" ] || { echo "alloc_cost.sh: $f not found" >&2; exit 2; }
done

configs="bare off mis mim memusage"
if [ -n "$baseline" ]; then
	base_lib=$baseline/alloc/.libs/libmeminst.so
	[ -e "$base_lib" ] || { echo "alloc_cost.sh: $base_lib not found" >&2; exit 2; }
	configs="bare off mis mim mis@base mim@base memusage"
fi
# cfg_env NAME: the env arguments that run a command under a configuration
cfg_env() {
	case $1 in
	bare) echo "-u LD_PRELOAD -u MEMINST" ;;
	memusage) echo "-u MEMINST LD_PRELOAD=$mu" ;;
	*@base) echo "-u LD_PRELOAD LD_PRELOAD=$base_lib MEMINST=${1%@base},backend=system" ;;
	*) echo "-u LD_PRELOAD LD_PRELOAD=$lib MEMINST=$1,backend=system" ;;
	esac
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "# alloc_cost: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------ callgrind --
if [ "$callgrind" = 1 ] && command -v valgrind >/dev/null; then
	echo
	echo "instructions per malloc(64)+free pair (callgrind slope, 20,000 -> 100,000 pairs):"
	for c in $configs; do
		for n in 0.01 0.05; do
			# shellcheck disable=SC2046
			env $(cfg_env "$c") valgrind --tool=callgrind --toggle-collect=bench_pairs_one \
				--callgrind-out-file="$tmp/cg.$n" "$bench" -n "$n" -s 64 pairs >/dev/null 2>&1
		done
		echo "$c $(awk '/^summary:/ { print $2 }' "$tmp/cg.0.01") $(awk '/^summary:/ { print $2 }' "$tmp/cg.0.05")"
	done | awk '{ per = ($3 - $2) / 80000; if ($1 == "bare") bare = per
		printf "  %-9s %7.1f", $1, per
		if ($1 != "bare") printf "   %+6.1f over bare", per - bare
		printf "\n" }'
elif [ "$callgrind" = 1 ]; then
	echo "alloc_cost.sh: no valgrind: instruction counts left out" >&2
fi

# -------------------------------------------------------------- CPU time --
echo
echo "CPU time (user+sys) over $rounds interleaved rounds, bench_alloc -n $scale:"
nconf=$(echo $configs | wc -w)
for r in $(seq 1 "$rounds"); do
	order=$(echo $configs | awk -v k=$(( (r - 1) % nconf )) \
		'{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }')
	for c in $order; do
		for w in pairs churn churn2; do
			arg=$w
			[ "$w" = pairs ] && arg="-s 64 pairs"
			# shellcheck disable=SC2046,SC2086
			env $(cfg_env "$c") "$timer" "$tmp/t" "$bench" -n "$scale" $arg >"$tmp/out" 2>/dev/null
			ops=$(awk -v w="$w" '{ for (i = 1; i <= NF; i++) { split($i, kv, "=");
				if (kv[1] == "iters" || kv[1] == "steps") n = kv[2]; if (kv[1] == "threads") t = kv[2] }
				} END { print (t ? t : 1) * n }' "$tmp/out")
			echo "round=$r config=$c workload=$w ops=$ops $(cat "$tmp/t")"
		done
	done
done >"$tmp/raw"

awk -v configs="$configs" "$BENCH_AWK"'
{ r = val("round"); c = val("config"); w = val("workload")
  cpu[r, c, w] = val("cpu_ns"); ops[w] = val("ops"); seen[w] = 1; R[r] = 1 }
END {
	nw = split("pairs churn churn2", ws, " ")
	nc = 0; na = split(configs, all, " ")
	for (i = 1; i <= na; i++) if (all[i] != "bare") cs[++nc] = all[i]
	printf "  %-8s %-9s %10s %12s %14s %22s\n", "workload", "config", "cpu_s", "extra ns/op", "vs memusage", "(min-max over rounds)"
	for (i = 1; i <= nw; i++) {
		w = ws[i]
		lb = ""
		for (r in R) lb = lb " " cpu[r, "bare", w] / 1e9
		printf "  %-8s %-9s %10.3f\n", w, "bare", median(lb)
		for (j = 1; j <= nc; j++) {
			c = cs[j]; lc = ""; le = ""; lr = ""
			for (r in R) {
				e = (cpu[r, c, w] - cpu[r, "bare", w]) / ops[w]
				em = (cpu[r, "memusage", w] - cpu[r, "bare", w]) / ops[w]
				lc = lc " " cpu[r, c, w] / 1e9; le = le " " e
				if (em > 0) lr = lr " " e / em
			}
			n = sorted(lr, a)
			printf "  %-8s %-9s %10.3f %12.1f %14.2f %11.2f-%.2f\n", w, c, median(lc), median(le),
				n ? median(lr) : 0, n ? a[1] : 0, n ? a[n] : 0
		}
	}
}' "$tmp/raw"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
