# bench/bench-lib.sh — sourced by the bench scripts.
#
# bench_build_dir SCRIPT PROGRAM [GIVEN]: print the build tree to use: GIVEN
# when set, else $top_builddir, else the tree holding this script's PROGRAM
# (bench/PROGRAM relative to the build tree); exit 2 with a message if none.
bench_build_dir() {
	_script=$1 _prog=$2 _given=${3:-}
	# absolute: the scripts run their programs from scratch directories
	if [ -n "$_given" ]; then
		(cd "$_given" 2>/dev/null && pwd) || { echo "$_script: $_given: no such directory" >&2; exit 2; }
	elif [ -n "${top_builddir:-}" ]; then
		(cd "$top_builddir" && pwd)
	elif [ -x "$(cd "$(dirname "$0")" && pwd)/$(basename "$_prog")" ]; then
		dirname "$(cd "$(dirname "$0")" && pwd)"
	else
		echo "$_script: give the build directory (the one with $_prog)" >&2
		exit 2
	fi
}

# The awk functions the scripts' tables share; a script puts them in front
# of its own program: awk "$BENCH_AWK"'{ ... }'.
#   val(key)        the value of a key=value field of the current line
#   sorted(list, a) the space-separated numbers of list into a[1..n], sorted;
#                   returns n
#   median(list)    their median; spread(list): (max - min) / median, in %
#   run_key()       for a line of bench_maxrss figures with tool=, wl= and
#                   div=: its key (tool SUBSEP wl SUBSEP div), listed in
#                   keys[1..nk] the first time, with bad[key] "timeout" or
#                   "failed(STATUS)" when the run did not exit 0
BENCH_AWK='
function val(key,   i, kv) {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] }
	return ""
}
function sorted(list, a,   n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n
}
function median(list,   n, a) {
	n = sorted(list, a)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function spread(list,   n, a) {
	n = sorted(list, a)
	return (a[n] - a[1]) / median(list) * 100
}
function run_key(   k) {
	k = val("tool") SUBSEP val("wl") SUBSEP val("div")
	if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
	if (val("status") != 0) bad[k] = val("status") == 124 || val("status") == 137 ? "timeout" : "failed(" val("status") ")"
	return k
}
'

# bench_arg SCRIPT ARG: an argument no option of the script took: -h or
# --help prints the script's header (its usage) and exits 0, another
# option is an error (exit 2), anything else is the build directory
# ($build).
bench_arg() {
	case $2 in
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "$1: unknown option $2" >&2; exit 2 ;;
	*) build=$2 ;;
	esac
}

# bench_peer_options SCRIPT ARGS...: the options of the scripts that put
# meminst next to its peers (see their usage): --quick, --reps N, --cap S,
# -h and the build directory, into $reps, $quick, $cap and $build, whose
# defaults the script sets first.
bench_peer_options() {
	_script=$1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) reps=1 quick=10 ;;
		--reps) shift; reps=$1 ;;
		--cap) shift; cap=$1 ;;
		*) bench_arg "$_script" "$1" ;;
		esac
		shift
	done
	case $reps in '' | *[!0-9]* | 0) echo "$_script: --reps needs a positive number" >&2; exit 2 ;; esac
}

# bench_run_status SCRIPT TOOL WORKLOAD FIGURES OUT: on stderr, what went
# wrong with a run whose bench_maxrss line is FIGURES (nothing when it
# exited 0): a timeout after $cap s, or its status and the end of its
# output OUT.
bench_run_status() {
	case $4 in
	*status=0) ;;
	*status=124 | *status=137) echo "$1: $2 $3: timeout after $cap s" >&2 ;;
	*) echo "$1: $2 $3 failed ($4):" >&2; tail -n 3 "$5" >&2 ;;
	esac
}

# bench_need SCRIPT BUILD FILE...: exit 2 with a message unless every FILE
# (a program or library of the build tree BUILD) is there.
bench_need() {
	_script=$1 _build=$2
	shift 2
	for _f in "$@"; do
		[ -e "$_f" ] || { echo "$_script: $_f not found; run make in $_build first" >&2; exit 2; }
	done
}

# bench_heaptrack_peer SCRIPT PROGRAM ARGS... <SOURCE: the start of a
# script that runs the launcher next to heaptrack on a C++ program: its
# arguments ARGS ([--rounds N] [BUILD_DIR]) into $rounds (default 5) and
# $build, that build's launcher $M and library $lib (MEMINST_LIBRARY),
# heaptrack and g++ there or exit 2, a scratch directory $tmp removed at
# exit, and the C++ SOURCE built there (g++ -O1 -g) as $tmp/PROGRAM.
bench_heaptrack_peer() {
	_script=$1 _prog=$2
	shift 2
	rounds=5
	while [ $# -gt 0 ]; do
		case $1 in
		--rounds) rounds=$2; shift 2 ;;
		*) break ;;
		esac
	done
	build=$(cd "$(bench_build_dir "$_script" session/meminst "${1:-}")" && pwd)
	M=$build/session/meminst
	lib=$build/alloc/.libs/libmeminst.so
	bench_need "$_script" "$build" "$M" "$lib"
	command -v heaptrack >/dev/null || { echo "$_script: heaptrack not installed (apt-get install heaptrack)" >&2; exit 2; }
	command -v g++ >/dev/null || { echo "$_script: g++ not installed" >&2; exit 2; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-$_prog.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/$_prog.cpp"
	g++ -O1 -g -o "$tmp/$_prog" "$tmp/$_prog.cpp"
	export MEMINST_LIBRARY="$lib"
}

# bench_rotated ROUNDS RUN CONFIG...: ROUNDS rounds of `RUN CONFIG` for
# every CONFIG, interleaved; round r (from 0) starts at CONFIG number
# r mod n, so that none always runs first.
bench_rotated() {
	_rounds=$1 _run=$2
	shift 2
	_configs=$*
	_r=0
	while [ $_r -lt "$_rounds" ]; do
		set -- $_configs
		_i=0
		while [ $_i -lt $((_r % $#)) ]; do set -- "$@" "$1"; shift; _i=$((_i + 1)); done
		for _c in "$@"; do "$_run" "$_c"; done
		_r=$((_r + 1))
	done
}

# bench_cpu SCRIPT NAME COMMAND...: run COMMAND (its output thrown away,
# its times in the file t of the current directory) and print "NAME CPU_S":
# user+sys of its whole process tree (/usr/bin/time); exit 1 if it fails.
bench_cpu() {
	_script=$1 _name=$2
	shift 2
	/usr/bin/time -f '%U %S' -o t "$@" >/dev/null 2>&1 || { echo "$_script: $_name failed" >&2; exit 1; }
	echo "$_name $(awk '{ printf "%.3f", $1 + $2 }' t)"
}

# bench_vs_heaptrack TARGET LABEL CONFIG... <RUNS: the table of
# bench_cpu's lines: each CONFIG's median, min and max CPU seconds, and its
# added CPU (over the config bare) as a share of heaptrack's; then whether
# TARGET (named LABEL on that line) added at most half of what heaptrack
# did.
bench_vs_heaptrack() {
	_target=$1 _label=$2
	shift 2
	awk -v target="$_target" -v label="$_label" -v configs="$*" "$BENCH_AWK"'
	{ cpu[$1] = cpu[$1] " " $2 }
	END {
		b = median(cpu["bare"]); h = median(cpu["heaptrack"]) - b
		printf "%-10s %8s %8s %8s %10s\n", "config", "median", "min", "max", "added/ht"
		nc = split(configs, order, " ")
		for (k = 1; k <= nc; k++) { c = order[k]; n = sorted(cpu[c], a)
			printf "%-10s %8.3f %8.3f %8.3f %10.2f\n", c, median(cpu[c]), a[1], a[n],
				(h > 0 ? (median(cpu[c]) - b) / h : 0) }
		m = median(cpu[target]) - b
		printf "target %s added CPU <= 0.5x heaptrack'"'"'s: %s (%.2fx)\n", label, (h > 0 && m <= 0.5 * h) ? "PASS" : "MISS", (h > 0 ? m / h : 0)
	}'
}

# bench_round_order ROUND WORD...: the words in the order of interleaved round
# ROUND (1, 2, ...): rotated by ROUND - 1, so that each configuration runs
# first in turn and the load of a shared machine hits all alike.
bench_round_order() {
	_r=$1
	shift
	echo "$@" | awk -v k=$(( (_r - 1) % $# )) '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }'
}
