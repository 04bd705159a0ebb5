#!/bin/sh
# bench/peers.sh — meminst next to other heap profilers: time and peak memory.
#
# Tools, each run on the same workloads in one invocation:
#   bare        no preload
#   off mis mim libmeminst preloaded with MEMINST=off / mis / mim
#   heaptrack   heaptrack --raw (record only: no interpretation afterwards)
#   massif      valgrind --tool=massif
#   gperftools  tcmalloc's heap profiler (LD_PRELOAD=libtcmalloc.so.4
#               HEAPPROFILE=...; Debian package libgoogle-perftools4)
# A tool that is not installed is skipped with a line saying so.
# The time profilers (perf record, gprof, uftrace record against meminst's
# trace and sampler) are in bench/peers-time.sh; `make bench-peers` runs both.
#
# Workloads: bench_alloc `-s 64 pairs`, `churn`, `churn2`, and
# /usr/bin/python3 building and dropping lists of small dicts and strings
# with PYTHONMALLOC=malloc (so every object goes through malloc).  Bare runs
# take ~0.5-1 s each.  The slow tools run a smaller scale (the divisor in
# the `scale` column: heaptrack /4, massif /50, gperftools /200), and every
# ratio compares with a bare run of that same scale, so fixed costs
# (startup, churn's 100k-slot fill) are on both sides.
#
# Columns: wall is the median over the repetitions of the whole process's
# wall time; ratio = wall / bare wall; added/op = (wall - bare wall) per
# operation (pairs: a malloc+free pair; churn: a step, i.e. a free and a
# malloc, counting the fill of the 100k slots and their final frees as 100k
# more; churn2: the same in one thread; python: one dict built, about 5
# allocations); maxrss is the
# largest resident set of any process of the run (the tool's helpers too,
# e.g. heaptrack's compressor) and rss_ratio compares it with bare's.
# Every run is measured by bench/bench_maxrss and capped by `timeout`; a run
# past the cap shows "timeout".
#
# Goal (printed at the end): meminst mim at least 20x cheaper than heaptrack
# on churn, comparing added time per step.
#
# usage: bench/peers.sh [--quick] [--reps N] [--cap SECONDS] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench_alloc)
#   --quick     1 repetition at 1/10 the scale: a smoke run (~30 s)
#   --reps N    repetitions of every run (default 3; the median is shown)
#   --cap S     time limit of one run (default 120 s)
# Environment: TCMALLOC_SO (default Debian's libtcmalloc.so.4).
set -eu

reps=3
quick=1
cap=120
build=
. "$(dirname "$0")/bench-lib.sh"
bench_peer_options peers.sh "$@"

build=$(bench_build_dir peers.sh bench/bench_alloc "$build")
bench=$build/bench/bench_alloc
maxrss=$build/bench/bench_maxrss
lib=$build/alloc/.libs/libmeminst.so
tcm=${TCMALLOC_SO:-/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4}
python=/usr/bin/python3
bench_need peers.sh "$build" "$bench" "$maxrss" "$lib"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
raw=$tmp/raw

# The python workload: 20000 small dicts (each with two fresh strings and a
# list) per round, dropped at the end of the round; argv[1] is the rounds.
cat >"$tmp/alloc.py" <<'EOF'
import sys
for r in range(int(sys.argv[1])):
    l = [{"k": str(i), "v": "x%d" % i, "n": [i, i + 1]} for i in range(20000)]
    del l
EOF

# ------------------------------------------------------------- tools --
# name, scale divisor, command prefix (words; @T is the per-run temp dir)
tools="bare 1 -
off 1 env LD_PRELOAD=$lib MEMINST=off
mis 1 env LD_PRELOAD=$lib MEMINST=mis
mim 1 env LD_PRELOAD=$lib MEMINST=mim"
if command -v heaptrack >/dev/null; then
	# --raw is heaptrack's record-only mode (no heaptrack_interpret pass)
	if heaptrack --help 2>&1 | grep -q -- '--raw'; then ht_raw=--raw; else ht_raw=; fi
	tools="$tools
heaptrack 4 heaptrack $ht_raw -o @T/ht"
else
	echo "peers.sh: heaptrack not installed: skipped (apt-get install heaptrack)"
fi
if command -v valgrind >/dev/null; then
	tools="$tools
massif 50 valgrind -q --tool=massif --massif-out-file=@T/massif.out"
else
	echo "peers.sh: valgrind not installed: massif skipped (apt-get install valgrind)"
fi
if [ -e "$tcm" ]; then
	tools="$tools
gperftools 200 env LD_PRELOAD=$tcm HEAPPROFILE=@T/hp"
else
	echo "peers.sh: $tcm not found: gperftools skipped (apt-get install libgoogle-perftools4)"
fi
[ -x "$python" ] || echo "peers.sh: $python not found: python workload skipped"
workloads="pairs churn churn2"
[ -x "$python" ] && workloads="$workloads python"

# workload_args WORKLOAD DIVISOR: set "$@" to the workload's command line
# at the base scale divided by DIVISOR (the base makes a bare run ~0.5-1 s).
workload_args() {
	_n() { awk -v b="$1" -v d="$2" -v q="$quick" 'BEGIN { printf "%g", b / d / q }'; }
	case $1 in
	pairs) set -- "$bench" -n "$(_n 50 "$2")" -s 64 pairs ;;
	churn) set -- "$bench" -n "$(_n 5 "$2")" churn ;;
	churn2) set -- "$bench" -n "$(_n 4 "$2")" churn2 ;;
	python) set -- "$python" "$tmp/alloc.py" "$(awk -v d="$2" -v q="$quick" \
		'BEGIN { r = int(40 / d / q + 0.5); print r < 1 ? 1 : r }')" ;;
	esac
	wl_cmd=$*
}

# ops WORKLOAD CMDLINE: operations the run performs (see added/op above)
ops() {
	case $1 in
	python) echo "$2" | awk '{ print $NF * 20000 }' ;;
	pairs) echo "$2" | awk '{ for (i = 1; i < NF; i++) if ($i == "-n") print $(i + 1) * 2000000 }' ;;
	*) echo "$2" | awk '{ for (i = 1; i < NF; i++) if ($i == "-n") print $(i + 1) * 2000000 + 100000 }' ;;
	esac
}

# run_one TOOL DIVISOR PREFIX WORKLOAD: one measured run, appended to $raw
run_one() {
	_tool=$1 _div=$2 _pre=$3 _wl=$4
	workload_args "$_wl" "$_div"
	rm -rf "$tmp/run" && mkdir "$tmp/run"
	# shellcheck disable=SC2086 # the prefix is words on purpose
	set -- $(echo "$_pre" | sed "s|^-\$||; s|@T|$tmp/run|g")
	set -- timeout -k 5 "$cap" env -u LD_PRELOAD -u MEMINST PYTHONMALLOC=malloc "$@"
	# shellcheck disable=SC2086
	"$maxrss" "$tmp/m" "$@" $wl_cmd >"$tmp/out" 2>&1 || true
	read -r _m <"$tmp/m" || _m="wall_ns=0 maxrss_kb=0 status=1"
	# bench_alloc's own ns per step of its timed loop: no startup, no fill
	_in=$(sed -n 's/.*ns_per_pair=\([0-9.]*\).*/\1/p' "$tmp/out" | head -n 1)
	echo "tool=$_tool wl=$_wl div=$_div ops=$(ops "$_wl" "$wl_cmd") inner=${_in:-0} $_m" >>"$raw"
	bench_run_status peers.sh "$_tool" "$_wl" "$_m" "$tmp/out"
}

# Bare runs at every scale a tool uses: each ratio needs its own.
divs=$(printf '%s\n' "$tools" | awk '{ print $2 }' | sort -un)
bare_lines=$(for d in $divs; do echo "bare $d -"; done)
runs=$(printf '%s\n%s\n' "$bare_lines" "$(printf '%s\n' "$tools" | sed 1d)")

echo "# peers: $reps repetitions, scale 1/$quick, $(date -u '+%Y-%m-%d %H:%M UTC'), nproc $(nproc)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
start=$(date +%s)
r=1
while [ "$r" -le "$reps" ]; do
	for wl in $workloads; do
		printf '%s\n' "$runs" | while read -r tool div pre; do
			run_one "$tool" "$div" "$pre" "$wl"
		done
	done
	echo "# repetition $r done ($(( $(date +%s) - start )) s)"
	r=$((r + 1))
done

# ---------------------------------------------------------------- table --
awk -v cap="$cap" "$BENCH_AWK"'
{
	k = run_key()
	wall[k] = wall[k] " " val("wall_ns") / 1e9; inner[k] = inner[k] " " val("inner"); rss[k] = rss[k] " " val("maxrss_kb"); ops[k] = val("ops")
}
END {
	printf "%-10s %-7s %6s %9s %8s %11s %10s %9s\n", "tool", "workload", "scale", "wall_s", "ratio", "added/op_ns", "maxrss_MB", "rss_ratio"
	for (i = 1; i <= nk; i++) {
		split(keys[i], p, SUBSEP); t = p[1]; w = p[2]; d = p[3]
		if (t == "bare" && d != 1) continue
		b = "bare" SUBSEP w SUBSEP d
		if (keys[i] in bad) { printf "%-10s %-7s %6s %9s\n", t, w, "/" d, bad[keys[i]]; continue }
		m = median(wall[keys[i]]); mb = median(wall[b]); r = median(rss[keys[i]]); rb = median(rss[b])
		add = (m - mb) * 1e9 / ops[keys[i]]
		printf "%-10s %-7s %6s %9.3f %8.2f %11.1f %10.1f %9.2f\n", t, w, "/" d, m, m / mb, add, r / 1024, r / rb
		if (w == "churn") { added[t] = add; ratio[t] = m / mb; inadd[t] = median(inner[keys[i]]) - median(inner[b]) }
	}
	printf "\n"
	if (!("mim" in added) || !("heaptrack" in added)) {
		why = ("heaptrack" in added) ? "no mim figure" : "no heaptrack figure"
		printf "goal: meminst mim at least 20x cheaper than heaptrack on the churn workload: not measured (%s)\n", why
	} else if (added["mim"] <= 0) {
		printf "goal: meminst mim at least 20x cheaper than heaptrack on the churn workload: PASS (mim added %.1f ns/step: within noise; heaptrack %.1f ns/step)\n",
			added["mim"], added["heaptrack"]
	} else {
		f = added["heaptrack"] / added["mim"]
		printf "goal: meminst mim at least 20x cheaper than heaptrack on the churn workload: %s (%.1fx: added %.1f vs %.1f ns/op of wall time; slowdown ratios %.2f vs %.2f)\n",
			(f >= 20 ? "PASS" : "MISS"), f, added["mim"], added["heaptrack"], ratio["mim"], ratio["heaptrack"]
		if (inadd["mim"] > 0)
			printf "      timed loop only (bench_alloc ns_per_pair): added %.1f vs %.1f ns/step: %.1fx\n",
				inadd["mim"], inadd["heaptrack"], inadd["heaptrack"] / inadd["mim"]
	}
}' "$raw"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); total $(( $(date +%s) - start )) s"
