#!/bin/sh
# bench/make-cpu.sh — a multi-process run's per-process cost: `make -s -j2`
# of eight one-line C files (cc, cc1, as and the shells: about 26
# processes, each a part of the session), bare and under the launcher with
# its defaults (`meminst -q -f -o S.db -- make -s -j2`), and under
# heaptrack when it is installed (which follows make alone, not its
# children).  With --library-b LIB, the launcher runs once more with
# MEMINST_LIBRARY=LIB (another build's libmeminst.so.0): an A/B of two
# runtimes in the same rounds.
# Figure: CPU seconds of the whole process tree (user+sys, /usr/bin/time),
# median and min-max over --rounds interleaved rounds (default 5).
#
# usage: bench/make-cpu.sh [--rounds N] [--library-b LIB] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
rounds=5 libb= build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--library-b) libb=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	*) bench_arg make-cpu.sh "$1"; shift ;;
	esac
done
build=$(bench_build_dir make-cpu.sh session/meminst "$build")
command -v cc >/dev/null && command -v make >/dev/null || { echo "make-cpu.sh: needs cc and make" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "make-cpu.sh: needs /usr/bin/time" >&2; exit 2; }
M=$build/session/meminst
LIB=$build/alloc/.libs/libmeminst.so.0
work=$(mktemp -d "${TMPDIR:-/tmp}/make-cpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
for i in 1 2 3 4 5 6 7 8; do echo "int f$i(void) { return $i; }" >"$work/f$i.c"; done
printf 'all: f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o\n%%.o: %%.c\n\tcc -O2 -c $< -o $@\n' >"$work/Makefile"
configs="bare meminst"
[ -n "$libb" ] && configs="$configs meminst-b"
command -v heaptrack >/dev/null && configs="$configs heaptrack"
one() { # CONFIG: a clean build; prints "CONFIG SECONDS"
	rm -f "$work"/*.o "$work"/S.db "$work"/ht.*
	case $1 in
	bare) set -- make -s -j2 ;;
	meminst) set -- env MEMINST_LIBRARY="$LIB" "$M" -q -f -o S.db -- make -s -j2 ;;
	meminst-b) set -- env MEMINST_LIBRARY="$libb" "$M" -q -f -o S.db -- make -s -j2 ;;
	heaptrack) set -- heaptrack -o "$work/ht" make -s -j2 ;;
	esac
	(cd "$work" && /usr/bin/time -f '%U %S' -o "$work/t" "$@" >/dev/null 2>&1) || echo "make-cpu.sh: $* failed" >&2
	awk -v c="$cfg" '{ printf "%s %.2f\n", c, $1 + $2 }' "$work/t"
}
r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	for cfg in $configs; do one "$cfg"; done
done | awk "$BENCH_AWK"'
{ t[$1] = t[$1] " " $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
END {
	printf "%-10s %8s %15s %8s\n", "config", "median", "min-max", "x bare"
	b = median(t["bare"])
	for (i = 1; i <= n; i++) {
		c = order[i]; k = sorted(t[c], a)
		printf "%-10s %7.2fs %6.2f-%-7.2f %7.1fx\n", c, median(t[c]), a[1], a[k], median(t[c]) / b
	}
}'
