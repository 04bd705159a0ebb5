#!/bin/sh
# bench/snapshot_rss.sh — the temporary memory of an exit snapshot, per
# live block (issue 29: a 10M-block exit snapshot in at most 160 MB).
#
# bench_snapshot -s 48 -x (bench/bench_snapshot.c) holds N blocks of 48
# bytes and exits under MEMINST=mim; bench_maxrss gives the peak resident
# set of the run without a snapshot, with the exit snapshot and its leak
# check (leak_check=exit, the default) and with the snapshot alone
# (leak_check=off).  Printed per N: the peaks, and what each snapshot added
# to the peak divided by N (B/block) beside the target of 16 B a block.
#
# usage: bench/snapshot_rss.sh [--blocks "N..."] [BUILD_DIR]
#   --blocks "N..."  the heap sizes (default "1000000 4000000")
# The files go to $TMPDIR (default /tmp).  Run it under nice.
set -eu
. "$(dirname "$0")/bench-lib.sh"

sizes="1000000 4000000"
build=
while [ $# -gt 0 ]; do
	case $1 in
	--blocks) shift; sizes=$1 ;;
	*) bench_arg snapshot_rss.sh "$1" ;;
	esac
	shift
done
build=$(bench_build_dir snapshot_rss.sh bench/bench_snapshot "$build")
bench=$build/bench/bench_snapshot
maxrss=$build/bench/bench_maxrss
lib=$build/alloc/.libs/libmeminst.so
bench_need snapshot_rss.sh "$build" "$bench" "$maxrss" "$lib"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-snaprss.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# peak MEMINST N: the run's peak resident set in kB.
peak() {
	rm -f "$tmp/s.db"
	"$maxrss" "$tmp/out" env MEMINST="$1" LD_PRELOAD="$lib" "$bench" -n "$2" -s 48 -x /dev/null
	awk "$BENCH_AWK"'{ if (val("status") != 0) exit 1; print val("maxrss_kb") }' "$tmp/out"
}

for n in $sizes; do
	none=$(peak mim "$n")
	leak=$(peak "mim,snapshot=$tmp/s.db" "$n")
	alone=$(peak "mim,snapshot=$tmp/s.db,leak_check=off" "$n")
	awk -v n="$n" -v none="$none" -v leak="$leak" -v alone="$alone" 'BEGIN {
		a = (alone - none) * 1024 / n; l = (leak - none) * 1024 / n
		printf "blocks=%d peak_kb: none=%d snapshot=%d snapshot+leak_check=%d\n", n, none, alone, leak
		printf "  snapshot alone: %.1f B/block; with the leak check: %.1f B/block (target <= 16): %s\n",
			a, l, l <= 16 ? "PASS" : "MISS"
	}'
done
