#!/bin/sh
# bench/run.sh — run bench_alloc in every configuration and compare.
#
# Configurations, each with its own bare baseline:
#   system    bare (no preload) | libmeminst off / mis / mim, backend=system
#   jemalloc  bare (LD_PRELOAD of Debian's libjemalloc.so.2)
#             | libmeminst off / mis / mim, backend=jemalloc
# Each round runs every configuration once (in a rotated order), each run
# doing every workload (pairs, churn, churn2); the table shows the median
# over rounds, so that the noise of a shared machine hits all alike.
#
# Columns: ns/pair is the median over rounds; spread is (max - min) / median
# over rounds (a warning is printed when some row passes 25%: the machine
# was busy); ratio and added_ns compare with the same backend's bare row.
#
# Targets (PASS/MISS per row; the summary counts them):
#   off    within 3% of bare, on every workload
#   mis    adds at most 6 ns per malloc+free pair (single-thread workloads)
#   mim    adds at most 15 ns per pair            (single-thread workloads)
#   churn2 scaling (2-thread wall time per thread's pair / 1-thread ns per
#          pair, from the same run) at most 10% worse than bare's
#
# usage: bench/run.sh [--quick] [--rounds N] [--callgrind] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench_alloc)
#   --quick     2 rounds of 1/10 the iterations: a smoke run (~5 s)
#   --rounds N  rounds to run (default 7)
#   --callgrind also count instructions per `pairs -s 64` pair for every
#               configuration under valgrind (exact and repeatable)
# Environment: JEMALLOC_SO (default Debian's libjemalloc.so.2).
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=7
scale=1
callgrind=0
build=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) rounds=2 scale=0.1 ;;
	--rounds) shift; rounds=$1 ;;
	--callgrind) callgrind=1 ;;
	*) bench_arg run.sh "$1" ;;
	esac
	shift
done

build=$(bench_build_dir run.sh bench/bench_alloc "$build")
bench=$build/bench/bench_alloc
lib=$build/alloc/.libs/libmeminst.so
je=${JEMALLOC_SO:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
bench_need run.sh "$build" "$bench" "$lib"

# name, preload, MEMINST ("-" for none), one configuration a line
configs="sys-bare - -
sys-off $lib off,backend=system
sys-mis $lib mis,backend=system
sys-mim $lib mim,backend=system"
if [ -e "$je" ] && env MEMINST=backend=jemalloc LD_PRELOAD="$lib" \
	"$bench" -n 0.001 -s 16 pairs >/dev/null 2>&1; then
	configs="$configs
je-bare $je -
je-off $lib off,backend=jemalloc
je-mis $lib mis,backend=jemalloc
je-mim $lib mim,backend=jemalloc"
else
	echo "run.sh: no jemalloc ($je, or libmeminst without backend=jemalloc): system only" >&2
fi
nconf=$(printf '%s\n' "$configs" | wc -l)

raw=$(mktemp "${TMPDIR:-/tmp}/meminst-bench.XXXXXX")
trap 'rm -f "$raw" "$raw.cg"' EXIT INT TERM

echo "# bench_alloc: $rounds rounds x $nconf configurations (scale $scale), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
start=$(date +%s)
r=1
while [ "$r" -le "$rounds" ]; do
	# rotate the order by round so no configuration always runs first
	printf '%s\n' "$configs" | awk -v r="$r" -v n="$nconf" '
		{ line[NR] = $0 } END { for (i = 0; i < n; i++) print line[(i + r - 1) % n + 1] }' |
	while read -r name pre mi; do
		set -- env -u LD_PRELOAD -u MEMINST
		[ "$pre" = - ] || set -- "$@" LD_PRELOAD="$pre"
		[ "$mi" = - ] || set -- "$@" MEMINST="$mi"
		if ! out=$("$@" "$bench" -n "$scale" all); then
			echo "run.sh: $name failed in round $r" >&2
			exit 1
		fi
		printf '%s\n' "$out" | sed "s/^/config=$name round=$r /" >>"$raw"
	done
	echo "# round $r done ($(( $(date +%s) - start )) s)"
	r=$((r + 1))
done

# ---------------------------------------------------------------- table --
awk "$BENCH_AWK"'
{
	c = val("config"); w = val("workload"); r = val("round")
	row = w == "pairs" ? "pairs/" val("size") : w
	if (!(row in seen_row)) { seen_row[row] = 1; rows[++nrows] = row }
	if (!(c in seen_c)) { seen_c[c] = 1; confs[++nconfs] = c }
	ns[c, row] = ns[c, row] " " val("ns_per_pair")
	if (w == "churn") one[c, r] = val("ns_per_pair")
	if (w == "churn2") { two[c, r] = val("ns_per_pair_thread"); wall[c] = wall[c] " " val("wall_ms") }
}
END {
	for (k in two) { split(k, p, SUBSEP); if ((p[1], p[2]) in one) scal[p[1]] = scal[p[1]] " " two[k] / one[k] }
	printf "%-11s %-8s %9s %7s %7s %9s %7s  %s\n", "workload", "config", "ns/pair", "spread", "ratio", "added_ns", "scaling", "target"
	for (i = 1; i <= nrows; i++) {
		row = rows[i]
		for (j = 1; j <= nconfs; j++) {
			c = confs[j]; split(c, p, "-"); be = p[1]; mode = p[2]; bare = be "-bare"
			m = median(ns[c, row]); b = median(ns[bare, row])
			sc = row == "churn2" ? sprintf("%7.3f", median(scal[c])) : sprintf("%7s", "")
			tgt = ""
			if (mode == "off") {
				ok = m <= b * 1.03
				tgt = sprintf("off <= bare+3%%: %s (%+.1f%%)", ok ? "PASS" : "MISS", (m / b - 1) * 100)
			} else if ((mode == "mis" || mode == "mim") && row != "churn2") {
				lim = mode == "mis" ? 6 : 15; ok = m - b <= lim
				tgt = sprintf("%s adds <= %d ns: %s", mode, lim, ok ? "PASS" : sprintf("MISS by %.1f ns", m - b - lim))
			}
			if (tgt != "") { total[mode]++; if (ok) pass[mode]++ }
			if (row == "churn2" && mode != "bare") {
				s = median(scal[c]); sb = median(scal[bare]); ok2 = s <= sb * 1.10
				tgt = tgt (tgt == "" ? "" : "; ") sprintf("scaling <= bare x1.10: %s (%.3f vs %.3f, %+.1f%%)",
					ok2 ? "PASS" : "MISS", s, sb, (s / sb - 1) * 100)
				total["scaling"]++; if (ok2) pass["scaling"]++
			}
			sp = spread(ns[c, row]); if (sp > worst) { worst = sp; worst_at = row " " c }
			printf "%-11s %-8s %9.2f %6.0f%% %7.3f %+9.2f %s  %s\n", row, c, m, sp, m / b, m - b, sc, tgt
		}
	}
	printf "\nchurn2 wall time (ms, median):"
	for (j = 1; j <= nconfs; j++) printf " %s=%.1f", confs[j], median(wall[confs[j]])
	printf "\nsummary:"
	n = split("off mis mim scaling", order, " ")
	for (i = 1; i <= n; i++) if (total[order[i]]) printf " %s %d/%d PASS;", order[i], pass[order[i]] + 0, total[order[i]]
	printf "\n"
	if (worst > 25)
		printf "warning: noisy run: %s varied by %.0f%% between rounds; rerun on an idle machine\n", worst_at, worst
}' "$raw"

# ------------------------------------------------------------ callgrind --
if [ "$callgrind" = 1 ]; then
	if ! command -v valgrind >/dev/null; then
		echo "run.sh: --callgrind needs valgrind (apt-get install valgrind)" >&2
		exit 0
	fi
	iters=100000
	echo
	echo "instructions per malloc+free pair (callgrind, pairs -s 64, $iters pairs + 1000 warm-up):"
	printf '%s\n' "$configs" | while read -r name pre mi; do
		set -- env -u LD_PRELOAD -u MEMINST
		[ "$pre" = - ] || set -- "$@" LD_PRELOAD="$pre"
		[ "$mi" = - ] || set -- "$@" MEMINST="$mi"
		"$@" valgrind --tool=callgrind --toggle-collect=bench_pairs_one \
			--callgrind-out-file="$raw.cg" "$bench" -n "$(awk "BEGIN{print $iters/2000000}")" \
			-s 64 pairs >/dev/null 2>&1
		ir=$(awk '/^summary:/ { print $2 }' "$raw.cg")
		echo "$name $ir"
	done | awk -v n=$((iters + 1000)) '
		{ split($1, p, "-"); per = $2 / n; if (p[2] == "bare") base[p[1]] = per
		  printf "  %-8s %8.1f Ir/pair", $1, per
		  if (p[2] != "bare") printf "  (+%.1f vs %s-bare)", per - base[p[1]], p[1]
		  printf "\n" }'
fi
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); total $(( $(date +%s) - start )) s"
