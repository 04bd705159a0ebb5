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
#   wall, term  (issue 12) waits under 1000 Hz wall sampling, and the
#           samples a SIGTERM leaves: see their section at the end.
# Each round runs every configuration once, in a rotated order, so that the
# noise of a shared machine falls on all alike.
#
# usage: bench/sample.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=7
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	*) bench_arg sample.sh "$1" ;;
	esac
	shift
done

build=$(bench_build_dir sample.sh bench/bench_cpu "$build")
cpu=$build/bench/bench_cpu
churn=$build/bench/bench_alloc
wait=$build/bench/bench_wait
lib=$build/alloc/.libs/libmeminst.so
bench_need sample.sh "$build" "$cpu" "$churn" "$wait" "$lib"
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
			r = med["bare"] > 0 ? med[ms[j]] / med["bare"] : -1 # no figure: never a PASS
			printf "target %s <= %.2f x bare: %s (%.3f)\n", ms[j], 1 + target / 100,
				(r > 0 && r <= 1 + target / 100) ? "PASS" : "MISS", r
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

# --- waits under wall sampling, and samples kept at a SIGTERM (issue 12) ---
# wall   bench_wait 10 (10 x usleep, nanosleep and poll of 100 ms each)
#        under sample=1000,sample_clock=wall: the wall ms of each kind and
#        the calls cut short.  Target: each >= 1000 ms, 0 EINTR, 0 short.
# term   bench_cpu (CPU-bound) under sample=100 (cpu), sent SIGTERM once it
#        has used 1.5 s of CPU (/proc, never wall time): samples in its
#        trace over CPU seconds x 100.  Target: >= 80% kept.
echo
echo "## wall sampling at 1000 Hz: waits of bench_wait 10 (asked: 1000 ms each)"
r=0
while [ $r -lt "$rounds" ]; do
	(cd "$tmp" && env LD_PRELOAD="$lib" MEMINST=sample=1000,sample_clock=wall "$wait" 10)
	rm -f "$tmp"/meminst.*.trace
	r=$((r + 1))
done | tr '=' ' ' | awk '
	{ print; for (i = 1; i < NF; i += 2) { v = $(i + 1)
		if (!(($i) in lo) || v < lo[$i]) lo[$i] = v
		if (v > hi[$i]) hi[$i] = v } }
	END {
		printf "min usleep %.1f ms, nanosleep %.1f ms, poll %.1f ms; max eintr %d, short %d\n",
			lo["usleep_ms"], lo["nanosleep_ms"], lo["poll_ms"], hi["eintr"], hi["short"]
		ok = lo["usleep_ms"] >= 1000 && lo["nanosleep_ms"] >= 1000 && lo["poll_ms"] >= 1000 &&
			hi["eintr"] == 0 && hi["short"] == 0
		printf "target sleeps exact, 0 EINTR: %s\n", ok ? "PASS" : "MISS" }'

echo
echo "## SIGTERM after 1.5 s of CPU at 100 Hz: samples kept / CPU s x 100"
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
r=0
while [ $r -lt "$rounds" ]; do
	(cd "$tmp" && exec env LD_PRELOAD="$lib" MEMINST="sample=100,trace_file=$tmp/term.trace" \
		"$cpu" 100000) >/dev/null 2>&1 &
	pid=$!
	i=0
	while [ "$(cpu_ticks $pid)" -lt $((hz * 3 / 2)) ] 2>/dev/null && [ $i -lt 1200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	before=$(cpu_ticks $pid)
	kill -TERM $pid
	st=0
	wait $pid || st=$? # set -e: its death by SIGTERM is what we want
	n=$("$build/inspect/inspect" analyse --json "$tmp/term.trace" 2>/dev/null |
		grep -o '"samples": *[0-9]*' | head -1 | tr -dc 0-9)
	echo "${before:-0} ${n:-0} $st"
	rm -f "$tmp/term.trace"
	r=$((r + 1))
done | awk -v hz="$hz" '
	{ k = $2 / ($1 / hz * 100); kept[++n] = k
	  printf "cpu %.2f s, %d samples, kept %.1f%%, exit status %d\n", $1 / hz, $2, 100 * k, $3 }
	END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (kept[j] < kept[i]) { t = kept[i]; kept[i] = kept[j]; kept[j] = t }
	      med = (n % 2) ? kept[(n + 1) / 2] : (kept[n / 2] + kept[n / 2 + 1]) / 2
	      printf "median kept %.1f%% (min %.1f%%, max %.1f%%)\n", 100 * med, 100 * kept[1], 100 * kept[n]
	      printf "target >= 80%% kept: %s\n", (kept[1] >= 0.8) ? "PASS" : "MISS" }'
