#!/bin/sh
# bench/launcher_rss.sh — the peak resident set of `meminst --mim` (the
# launcher's default triggers: interval, peak, exit with its leak check)
# next to the program alone (issue 29's target: at most the program's peak
# + the headers + 10 %).
#
# Workloads:
#   cxxmap  a C++ std::map<std::string,int> of 200k keys (400k blocks),
#           held, then freed (bench/launcher-peers.sh's program)
#   perl    perl building a hash of 400k keys whose values are arrays and
#           strings, sorting the keys, deleting half (bench/real-programs.sh's;
#           perl frees little before it exits: the exit snapshot holds
#           about as many blocks as the peak)
# Configurations, interleaved for --rounds rounds: bare (the program
# alone), mim (meminst -q -f --mim -o S.db --), and with --base BUILD
# also base (the same launcher of another build, e.g. main's).
# Figure per workload and configuration: the median peak RSS in kB
# (bench_maxrss: the largest resident set of any process of the tree);
# for mim, the peak live blocks (the status counters' largest
# blocks_max_ever: the peak snapshot is taken when the heap has fallen from
# its peak, 381,699 blocks of cxxmap's 400,001, so the largest snapshot's
# count, shown beside it, undercounts the headers held at the peak), the
# headers at 32 B a block (mim's header; its map of live blocks, a bitmap
# of the heap since issue 29, is counted with the rest in the 10 %: the
# 40 B used before took in the 8-byte list entry of the array it replaced)
# and the target bare + headers + 10 % of bare.
#
# usage: bench/launcher_rss.sh [--rounds N] [--base BUILD] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=3
base=
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift ;;
	--base) base=$(cd "$2" && pwd); shift ;;
	*) bench_arg launcher_rss.sh "$1" ;;
	esac
	shift
done
build=$(cd "$(bench_build_dir launcher_rss.sh session/meminst "$build")" && pwd)
bench_need launcher_rss.sh "$build" "$build/session/meminst" "$build/bench/bench_maxrss" \
	"$build/alloc/.libs/libmeminst.so"
[ -z "$base" ] || bench_need launcher_rss.sh "$base" "$base/session/meminst" "$base/alloc/.libs/libmeminst.so"
command -v perl >/dev/null || { echo "launcher_rss.sh: perl not installed" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "launcher_rss.sh: sqlite3 not installed" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-lrss.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

sed -n '/^#include <cstdio>/,/^CPP$/p' "$(dirname "$0")/launcher-peers.sh" | sed '$d' >"$tmp/cxxmap.cpp"
g++ -O1 -g -o "$tmp/cxxmap" "$tmp/cxxmap.cpp"
sed -n '/^my %h;/,/^PERL$/p' "$(dirname "$0")/real-programs.sh" | sed '$d' >"$tmp/hash.pl"

# run WORKLOAD CONFIG: prints "WORKLOAD CONFIG maxrss_kb blocks"
run() {
	cd "$tmp"
	rm -f s.db
	case $1 in
	cxxmap) set -- "$1" "$2" ./cxxmap ;;
	perl) set -- "$1" "$2" perl hash.pl ;;
	esac
	_wl=$1 _cf=$2
	shift 2
	case $_cf in
	mim) set -- "$build/session/meminst" -q -f --mim -o s.db -- "$@" ;;
	base) set -- env MEMINST_LIBRARY="$base/alloc/.libs/libmeminst.so" "$base/session/meminst" -q -f --mim -o s.db -- "$@" ;;
	esac
	MEMINST_LIBRARY="$build/alloc/.libs/libmeminst.so" "$build/bench/bench_maxrss" "$tmp/out" "$@" >/dev/null
	_kb=$(awk "$BENCH_AWK"'{ if (val("status") != 0) exit 1; print val("maxrss_kb") }' "$tmp/out")
	_blocks="0 0"
	[ ! -f s.db ] || _blocks=$(sqlite3 -separator ' ' s.db "SELECT
		(SELECT coalesce(max(blocks_max_ever), 0) FROM status WHERE kind = 'total'),
		(SELECT coalesce(max(blocks), 0) FROM snapshot)")
	echo "$_wl $_cf $_kb $_blocks"
}

configs="bare mim"
[ -z "$base" ] || configs="$configs base"
for wl in cxxmap perl; do
	run_wl() { run "$wl" "$1"; }
	bench_rotated "$rounds" run_wl $configs >>"$tmp/runs"
done
echo "## peak RSS of meminst --mim (default triggers) vs the program alone, $rounds rounds, median"
awk -v configs="$configs" '
	{ kb[$1 " " $2, ++n[$1 " " $2]] = $3; if ($4 > bl[$1]) bl[$1] = $4; if ($5 > sn[$1]) sn[$1] = $5; wl[$1] = 1 }
	function median(k,   i, j, t, m) {
		m = n[k]
		for (i = 1; i <= m; i++) v[i] = kb[k, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return v[int((m + 1) / 2)]
	}
	END {
		nc = split(configs, c, " ")
		for (w in wl) {
			bare = median(w " bare"); hdr = bl[w] * 32 / 1024; target = bare + hdr + bare / 10
			printf "%s: bare %d kB; peak live blocks %d, headers %d kB; target <= %d kB", w, bare, bl[w], hdr, target
			printf " (with the blocks of the largest snapshot, %d: <= %d kB)\n", sn[w], bare + sn[w] * 32 / 1024 + bare / 10
			for (i = 2; i <= nc; i++) {
				m = median(w " " c[i])
				printf "  %-5s %d kB (+%.0f %% over bare): %s\n", c[i], m, (m - bare) * 100 / bare, m <= target ? "PASS" : "MISS"
			}
		}
	}' "$tmp/runs"
