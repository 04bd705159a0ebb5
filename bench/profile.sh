#!/bin/sh
# bench/profile.sh — how fast `inspect profile` / `inspect analyse` read and
# simulate a trace, and that their memory does not grow with its length.
#
# tests/profile/tracegen --bench writes a trace of EVENTS call/return
# events (default 50,000,000) over two threads in interleaved 32 KiB
# chunks (~1 GB in $TMPDIR, removed afterwards), then a trace 1/10 as long.
# Each command runs ROUNDS times (a fresh process, output to /dev/null; the
# file is in the page cache after the first); the table shows the fastest
# run, events per second, and the peak resident set.
#
# Targets: analysis >= 20 million events per second; peak memory of the
# long trace within 10% (+2 MB) of the short one's.
#
# usage: bench/profile.sh [--events N] [--rounds N] [BUILD_DIR]
set -eu

rounds=3
events=50000000
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--events) shift; events=$1 ;;
	-*) echo "usage: bench/profile.sh [--events N] [--rounds N] [BUILD_DIR]" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
build=${build:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
inspect=$build/inspect/inspect gen=$build/tests/profile/tracegen rss=$build/bench/bench_maxrss
for p in "$inspect" "$gen" "$rss"; do
	[ -x "$p" ] || { echo "bench/profile.sh: $p not built (make; make tests/profile/tracegen)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$gen" --bench "$events" "$tmp/long.trace"
"$gen" --bench $((events / 10)) "$tmp/short.trace"
n_long=$("$inspect" profile "$tmp/long.trace" | sed 's/.* \([0-9]*\) records.*/\1/')
n_short=$("$inspect" profile "$tmp/short.trace" | sed 's/.* \([0-9]*\) records.*/\1/')

# best ROUNDS run of a command: "wall_ns maxrss_kb"
best() {
	b_ns= b_kb=
	for i in $(seq "$rounds"); do
		"$rss" "$tmp/m" "$@" >/dev/null
		ns=$(sed 's/.*wall_ns=\([0-9]*\).*/\1/' "$tmp/m")
		kb=$(sed 's/.*maxrss_kb=\([0-9]*\).*/\1/' "$tmp/m")
		if [ -z "$b_ns" ] || [ "$ns" -lt "$b_ns" ]; then b_ns=$ns; fi
		if [ -z "$b_kb" ] || [ "$kb" -gt "$b_kb" ]; then b_kb=$kb; fi
	done
	echo "$b_ns $b_kb"
}

echo "trace: $n_long records ($(($(wc -c <"$tmp/long.trace") / 1048576)) MiB); short: $n_short records"
printf '%-28s %10s %14s %10s\n' command seconds events/s maxrss_kb
status=0
for cmd in "profile long" "analyse long" "analyse --json long" "profile short"; do
	set -- $cmd
	last=$#
	eval "file=\${$last}"
	n=$n_long
	[ "$file" = short ] && n=$n_short
	args=$(echo "$cmd" | sed "s| $file\$| $tmp/$file.trace|")
	r=$(best "$inspect" $args)
	ns=${r% *} kb=${r#* }
	rate=$(awk -v n="$n" -v ns="$ns" 'BEGIN { printf "%.1fM", n / (ns / 1e9) / 1e6 }')
	printf '%-28s %10s %14s %10s\n' "$cmd" "$(awk -v ns="$ns" 'BEGIN { printf "%.3f", ns / 1e9 }')" "$rate" "$kb"
	case $cmd in "analyse long") a_ns=$ns ;; "profile long") kb_long=$kb ;; "profile short") kb_short=$kb ;; esac
done
rate=$(awk -v n="$n_long" -v ns="$a_ns" 'BEGIN { printf "%.1f", n / (ns / 1e9) / 1e6 }')
if awk -v r="$rate" 'BEGIN { exit !(r >= 20) }'; then v=PASS; else v=MISS; status=1; fi
echo "goal: analysis >= 20M events/s: $v (${rate}M/s)"
if [ "$kb_long" -le $((kb_short * 11 / 10 + 2048)) ]; then v=PASS; else v=MISS; status=1; fi
echo "goal: memory independent of trace length: $v (${kb_long} KB for 10x the events of ${kb_short} KB)"
exit $status
