#!/bin/sh
# bench/html.sh — CPU time of `inspect html` on a real traced session of
# about 27 million trace records (issue 15: at most 5 s), next to `inspect
# analyse` of the same session (the reading of the trace that both do).
#
# bench/html_target (built -O0 -finstrument-functions: rounds of fib(24)
# and of a 20,000-node malloc'd list on two threads) runs under
# `meminst --mim --trace=wall`; then ROUNDS interleaved rounds of each
# command (a fresh process, output to /dev/null or a file in $TMPDIR),
# timed by user + sys CPU; the table gives the median and the range.
#
# usage: bench/html.sh [--rounds N] [--work N] [BUILD_DIR]   (N work rounds: 36 gives ~27 M records)
set -eu

rounds=5
work=36
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--work) shift; work=$1 ;;
	-*) echo "usage: bench/html.sh [--rounds N] [--work N] [BUILD_DIR]" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
build=${build:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
inspect=$build/inspect/inspect meminst=$build/session/meminst target=$build/bench/html_target
for p in "$inspect" "$meminst" "$target"; do
	[ -x "$p" ] || { echo "bench/html.sh: $p not built (make)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-html.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
MEMINST_LIBRARY=$build/alloc/.libs/libmeminst.so "$meminst" -q --mim --trace=wall -o "$tmp/s.db" -- \
	"$target" "$work" >/dev/null
records=$("$inspect" analyse "$tmp/s.db" | sed -n '1s/.* \([0-9]*\) records.*/\1/p')
echo "session: $(du -m "$tmp/s.db" | cut -f1) MB, $records trace records; load: $(cut -d' ' -f1-3 /proc/loadavg)"

cpu() { # command...: user + sys seconds
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null 2>&1
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/t"
}
: >"$tmp/analyse" && : >"$tmp/html"
i=0
while [ $i -lt "$rounds" ]; do
	cpu "$inspect" analyse "$tmp/s.db" >>"$tmp/analyse"
	cpu "$inspect" html -o "$tmp/r.html" "$tmp/s.db" >>"$tmp/html"
	i=$((i + 1))
done
stat() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
echo "| command | CPU s, median (min-max) of $rounds |"
echo "| --- | --- |"
echo "| \`inspect analyse\` (the reading alone) | $(stat "$tmp/analyse") |"
echo "| \`inspect html\` | $(stat "$tmp/html") |"
