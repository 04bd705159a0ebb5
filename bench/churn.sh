#!/bin/sh
# bench/churn.sh — issue 29's churn: each step frees a random one of L live
# blocks and allocates a block of 16-79 bytes in its place
# (`bench_alloc -L L -m 79 -w WARM churn`), at L = 10 k, 1 M and 10 M, for
# plain (no preload), memusage (glibc's libmemusage.so), mis and mim
# (libmeminst, backend=system), each figure printed beside its target.
#
# 1. CPU (user+sys of the process over the timed steps: bench_alloc's
#    cpu_ns_per_step, CLOCK_PROCESS_CPUTIME_ID) over interleaved rounds:
#    each round runs every configuration at every L once, in a rotated
#    order, so that the load of a shared machine hits all alike.  The extra
#    of a configuration is its CPU per step minus plain's of the same round;
#    `vs memusage` is that over memusage's extra of the same round (median,
#    min-max over rounds).  Target: at 1 M and 10 M, <= 1.5 (mis and mim).
# 2. Last-level misses per step: callgrind --cache-sim=yes, counting the
#    timed steps alone (--toggle-collect=bench_churn_steps: the fill and the
#    warm-up steps fall out), over fewer steps.  The simulated caches are
#    given (--LL, default 32 MiB 16-way, an EPYC core complex's L3: valgrind
#    takes this VM's reported 512 MiB 2-way L3 otherwise, where nothing
#    misses).  Target: <= memusage's + 0.5 per step.
#
# usage: bench/churn.sh [--rounds N] [--lives "10000 1000000 10000000"]
#                       [--configs "plain memusage mis mim"] [--no-cpu]
#                       [--no-misses] [--ll SIZE,ASSOC,LINE]
#                       [--lib LABEL=LIBMEMINST.so]... [BUILD_DIR]
# --lib: a configuration MODE@LABEL (e.g. mis@floor1) runs MODE with that
# library, beside the build's, in the same rounds (the floors of issue 29:
# libraries built with -DALLOC_FLOOR=1 or 2, alloc_int.h).
# Environment: MEMUSAGE_SO (default Debian's libmemusage.so).
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=5
lives="10000 1000000 10000000"
configs="plain memusage mis mim"
cpu=1
misses=1
ll=33554432,16,64
build=
libs=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--lives) shift; lives=$1 ;;
	--configs) shift; configs=$1 ;;
	--no-cpu) cpu=0 ;;
	--no-misses) misses=0 ;;
	--ll) shift; ll=$1 ;;
	--lib) shift; libs="$libs $1" ;;
	*) bench_arg churn.sh "$1" ;;
	esac
	shift
done
for need in plain memusage; do
	case " $configs " in
	*" $need "*) ;;
	*) echo "churn.sh: --configs needs $need (the figures are over it)" >&2; exit 2 ;;
	esac
done

build=$(bench_build_dir churn.sh bench/bench_alloc "$build")
bench=$build/bench/bench_alloc
lib=$build/alloc/.libs/libmeminst.so
mu=${MEMUSAGE_SO:-/usr/lib/x86_64-linux-gnu/libmemusage.so}
for f in "$bench" "$lib" "$mu"; do
	[ -e "$f" ] || { echo "churn.sh: $f not found" >&2; exit 2; }
done
# cfg_env NAME: the env arguments that run a command under a configuration
cfg_env() {
	case $1 in
	plain) echo "-u LD_PRELOAD -u MEMINST" ;;
	memusage) echo "-u MEMINST LD_PRELOAD=$mu" ;;
	mis|mim|off) echo "-u LD_PRELOAD LD_PRELOAD=$lib MEMINST=$1,backend=system" ;;
	*@*)
		for l in $libs; do
			[ "${l%%=*}" = "${1#*@}" ] && echo "-u LD_PRELOAD LD_PRELOAD=${l#*=} MEMINST=${1%@*},backend=system" && return
		done
		echo "churn.sh: no --lib for '$1'" >&2; exit 2 ;;
	*) echo "churn.sh: unknown configuration '$1'" >&2; exit 2 ;;
	esac
}
# (each configuration once here: cfg_env's exit in $(...) below would
# only leave the subshell)
for c in $configs; do
	cfg_env "$c" >/dev/null || exit 2
done
# steps KIND: the timed steps and the untimed warm-up before them
steps() {
	case $1 in
	cpu) echo "-n 0.5 -w 1000000" ;; # 1M timed steps
	cg) echo "-n 0.05 -w 200000" ;;  # 100k timed steps
	esac
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-churn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

echo "# churn: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$cpu" = 1 ]; then
	for r in $(seq 1 "$rounds"); do
		order=$(bench_round_order "$r" $configs)
		for l in $lives; do
			for c in $order; do
				# shellcheck disable=SC2046
				env $(cfg_env "$c") "$bench" $(steps cpu) -L "$l" -m 79 churn 2>/dev/null |
					sed -n "s/^workload=churn /round=$r config=$c live=$l /p"
			done
		done
	done >"$tmp/raw"
	echo
	echo "CPU (user+sys) per churn step over $rounds interleaved rounds (1M timed steps):"
	awk -v configs="$configs" -v lives="$lives" "$BENCH_AWK"'
	{ r = val("round"); c = val("config"); l = val("live"); cpu[r, c, l] = val("cpu_ns_per_step"); R[r] = 1 }
	END {
		nc = split(configs, cs, " "); nl = split(lives, ls, " ")
		printf "  %-9s %-9s %10s %12s %12s %17s  %s\n", "live", "config", "ns/step", "extra ns", "vs memusage",
			"(min-max)", "target"
		for (i = 1; i <= nl; i++) {
			l = ls[i]
			for (j = 1; j <= nc; j++) {
				c = cs[j]; lc = ""; le = ""; lr = ""
				for (r in R) {
					lc = lc " " cpu[r, c, l]
					e = cpu[r, c, l] - cpu[r, "plain", l]; em = cpu[r, "memusage", l] - cpu[r, "plain", l]
					le = le " " e
					if (em > 0) lr = lr " " e / em
				}
				printf "  %-9s %-9s %10.1f", l, c, median(lc)
				if (c != "plain") printf " %+12.1f", median(le)
				if (c != "plain" && c != "memusage") {
					n = sorted(lr, a)
					t = ""
					if (l >= 1000000) t = n && median(lr) <= 1.5 ? "<= 1.5  PASS" : "<= 1.5  MISS"
					printf " %12.2f %8.2f-%-8.2f  %s", n ? median(lr) : 0, n ? a[1] : 0, n ? a[n] : 0, t
				}
				printf "\n"
			}
		}
	}' "$tmp/raw"
fi

if [ "$misses" = 1 ] && command -v valgrind >/dev/null; then
	for l in $lives; do
		for c in $configs; do
			out=$tmp/cg.$c.$l
			# shellcheck disable=SC2046
			env $(cfg_env "$c") valgrind --tool=callgrind --cache-sim=yes --LL="$ll" \
				--toggle-collect=bench_churn_steps --callgrind-out-file="$out" \
				"$bench" $(steps cg) -L "$l" -m 79 churn >"$tmp/out" 2>/dev/null
			n=$(sed -n 's/.* steps=\([0-9]*\).*/\1/p' "$tmp/out")
			# events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
			awk -v c="$c" -v l="$l" -v n="$n" '/^events:/ { for (i = 2; i <= NF; i++) ev[$i] = i }
				/^summary:/ { print "config=" c, "live=" l, "steps=" n, "ir=" $ev["Ir"],
					"d1=" ($ev["D1mr"] + $ev["D1mw"]), "ll=" ($ev["ILmr"] + $ev["DLmr"] + $ev["DLmw"]) }' "$out"
		done
	done >"$tmp/cg"
	echo
	echo "per churn step (callgrind --cache-sim=yes --LL=$ll, 100k timed steps after the warm-up):"
	awk -v configs="$configs" -v lives="$lives" "$BENCH_AWK"'
	{ c = val("config"); l = val("live"); n = val("steps")
	  ir[c, l] = val("ir") / n; d1[c, l] = val("d1") / n; ll[c, l] = val("ll") / n }
	END {
		nc = split(configs, cs, " "); nl = split(lives, ls, " ")
		printf "  %-9s %-9s %9s %10s %8s %8s %9s  %s\n", "live", "config", "Ir/step", "over plain", "D1 miss",
			"LL miss", "over mu", "target (LL <= memusage + 0.5)"
		for (i = 1; i <= nl; i++) {
			l = ls[i]
			for (j = 1; j <= nc; j++) {
				c = cs[j]
				printf "  %-9s %-9s %9.1f", l, c, ir[c, l]
				printf " %+10.1f %8.2f %8.2f", ir[c, l] - ir["plain", l], d1[c, l], ll[c, l]
				if (c != "plain" && c != "memusage") {
					x = ll[c, l] - ll["memusage", l]
					printf " %+9.2f  %s", x, x <= 0.5 ? "PASS" : "MISS"
				}
				printf "\n"
			}
		}
	}' "$tmp/cg"
elif [ "$misses" = 1 ]; then
	echo "churn.sh: no valgrind: miss counts left out" >&2
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
