#!/bin/sh
# bench/switch.sh — the pause of a switch on and off (inspect start/stop) at
# a million live blocks: bench/bench_switch under MEMINST=off,control=on,
# its two workers' longest gap between two malloc+free pairs in a window of
# about one second with no switch (the machine's own noise), with a start,
# and with a stop (after a million more blocks made while on), each
# repeated --rounds times (default 5).
# usage: bench/switch.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
rounds=5
build=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	*) bench_arg switch.sh "$1" ;;
	esac
	shift
done
build=$(bench_build_dir switch.sh bench/bench_switch "$build")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-switch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
insp=$build/inspect/inspect
echo "# switch: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# cmd LINE WORD: send LINE, wait for the answer starting with WORD, print it
# (the program appends: the file can be emptied between answers)
cmd() {
	echo "$1" >&3
	while ! grep -aq "^$2" "$tmp/out.$r"; do sleep 0.05; done
	grep -a "^$2" "$tmp/out.$r"
	: >"$tmp/out.$r"
}
for r in $(seq 1 "$rounds"); do
	mkfifo "$tmp/f.$r"
	env LD_PRELOAD="$build/alloc/.libs/libmeminst.so" MEMINST=off,control=on \
		"$build/bench/bench_switch" "$tmp/f.$r" >>"$tmp/out.$r" &
	pid=$!
	exec 3>"$tmp/f.$r"
	while ! grep -aq '^filled' "$tmp/out.$r"; do sleep 0.05; done
	: >"$tmp/out.$r"
	cmd mark marked >/dev/null; sleep 1
	noise=$(cmd report gap_us | cut -d' ' -f2,4)
	cmd mark marked >/dev/null; sleep 0.5
	"$insp" start --pid $pid >/dev/null; sleep 0.5
	on=$(cmd report gap_us | cut -d' ' -f2,4)
	cmd fill filled >/dev/null
	cmd mark marked >/dev/null; sleep 0.5
	"$insp" stop --pid $pid >/dev/null; sleep 0.5
	off=$(cmd report gap_us | cut -d' ' -f2,4)
	echo quit >&3
	exec 3>&-
	wait $pid
	echo "round $r: longest gap, all / not preempted (us): no switch ${noise% *} / ${noise#* }," \
		"start ${on% *} / ${on#* }, stop ${off% *} / ${off#* }"
done
