#!/bin/sh
# bench/sample.sh — the cost of sampling (`make bench-sample`).
#
#   timer   bench_cpu (CPU-bound, -O2, no frame pointers, calls ~16 deep):
#           bare | preloaded, MEMINST=off | sample=1000 cpu | sample=1000
#           wall | tick-perf, tick-wall: no meminst, the program ticks an
#           empty SIGPROF handler 1000 times a second by the timer of cpu
#           (perf task clock) or wall mode (POSIX timer): the kernel's price
#           of a tick, which sampling cannot go below.  Figure: the
#           program's own CPU time (it includes the signal handler and the
#           stack walks), median over rounds.
#           Target: sample=1000 at most 3% above bare.
#   alloc   bench_alloc churn (100k live blocks, random sizes 16..1024):
#           bare | MEMINST=off | alloc_sample=512k (mode off).  Figure:
#           ns per malloc+free step, median over rounds.
#           Target: alloc_sample=512k at most 5% above bare.
# Each round runs every configuration once, in a rotated order, so that the
# noise of a shared machine falls on all alike.
#
# usage: bench/sample.sh [--rounds N] [BUILD_DIR]
set -eu

rounds=7
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "sample.sh: unknown option $1" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done

. "$(dirname "$0")/bench-lib.sh"
build=$(bench_build_dir sample.sh bench/bench_cpu "$build")
cpu=$build/bench/bench_cpu
churn=$build/bench/bench_alloc
lib=$build/alloc/.libs/libmeminst.so
for f in "$cpu" "$churn" "$lib"; do
	[ -e "$f" ] || { echo "sample.sh: $f not found; run make in $build first" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-sample.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# name preload MEMINST, one per line ("-": none)
timer_configs="bare - -
off $lib off
cpu1000 $lib sample=1000,sample_clock=cpu
wall1000 $lib sample=1000,sample_clock=wall
tick-perf - perf
tick-wall - wall"
alloc_configs="bare - -
off $lib off
as512k $lib alloc_sample=512k"

# run_one KIND NAME PRELOAD MEMINST: print the figure of one run
run_one() {
	case $1 in
	timer)
		case $2 in
		tick-*) set -- "$2" - - "$cpu" 120 "$4" ;;
		*) set -- "$2" "$3" "$4" "$cpu" ;;
		esac ;;
	alloc) set -- "$2" "$3" "$4" "$churn" churn ;;
	esac
	name=$1 pre=$2 mi=$3
	shift 3
	if [ "$pre" = - ]; then
		(cd "$tmp" && "$@")
	else
		(cd "$tmp" && env LD_PRELOAD="$pre" MEMINST="$mi" "$@")
	fi | sed -n 's/.*cpu_ms=\([0-9.]*\).*/\1/p; s/.*workload=churn .*ns_per_pair=\([0-9.]*\).*/\1/p'
	rm -f "$tmp"/meminst.*.trace
}

echo "# bench/sample.sh: $rounds rounds, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in timer alloc; do
	if [ $kind = timer ]; then configs=$timer_configs; else configs=$alloc_configs; fi
	n=$(printf '%s\n' "$configs" | wc -l)
	r=0
	while [ $r -lt "$rounds" ]; do
		i=0
		while [ $i -lt "$n" ]; do
			line=$(printf '%s\n' "$configs" | sed -n "$(( (i + r) % n + 1 ))p")
			set -- $line
			v=$(run_one $kind "$1" "$2" "$3")
			echo "$1 $v" >>"$tmp/$kind.raw"
			i=$((i + 1))
		done
		r=$((r + 1))
	done
done

# median per configuration; ratio against bare
summarise() {
	kind=$1 unit=$2 target=$3 measured=$4 pairs=${5:-}
	printf '%-10s %12s %8s %8s\n' config "median $unit" spread ratio
	sort -k1,1 -k2,2n "$tmp/$kind.raw" | awk -v target="$target" -v m="$measured" -v unit="$unit" -v pairs="$pairs" '
	{ v[$1, ++n[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
	END {
		for (i = 1; i <= k; i++) {
			c = order[i]; c_n = n[c]
			med[c] = (c_n % 2) ? v[c, (c_n + 1) / 2] : (v[c, c_n / 2] + v[c, c_n / 2 + 1]) / 2
			spread[c] = (v[c, c_n] - v[c, 1]) / med[c]
		}
		for (i = 1; i <= k; i++) {
			c = order[i]
			printf "%-10s %12.2f %7.1f%% %8.3f\n", c, med[c], 100 * spread[c], med[c] / med["bare"]
		}
		split(m, ms, ",")
		for (j in ms) {
			r = med[ms[j]] / med["bare"]
			printf "target %s <= %.2f x bare: %s (%.3f)\n", ms[j], 1 + target / 100,
				(r <= 1 + target / 100) ? "PASS" : "MISS", r
		}
		np = split(pairs, ps, ",")
		for (j = 1; j <= np; j++) {
			split(ps[j], ab, "/")
			printf "own cost of %s over %s: %+.1f%%\n", ab[1], ab[2],
				100 * (med[ab[1]] / med[ab[2]] - 1)
		}
	}'
}
echo
echo "## timer sampling: bench_cpu, CPU ms of the process"
summarise timer cpu_ms 3 cpu1000,wall1000 cpu1000/tick-perf,wall1000/tick-wall
echo
echo "## allocation sampling: bench_alloc churn, ns per step"
summarise alloc ns/step 5 as512k as512k/off
