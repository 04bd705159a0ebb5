#!/bin/sh
# bench/snapshot.sh — the cost of one snapshot of a million live blocks.
#
# bench_snapshot (bench/bench_snapshot.c) allocates the blocks (mixed
# sizes, 1000 sites) under MEMINST=mim and stores one snapshot with
# meminst_store_memory_data into a fresh file; this script runs it for each
# backend, several rounds each (a fresh process every time), and reports
# the medians over rounds of:
#   pause_ms    how long the program's allocations were stopped
#               (snapshot.pause_ns, read back with sqlite3)
#   store_ms    the whole call: capture and SQLite write
#   B/block     the file size divided by the blocks in the snapshot
#
# Targets (PASS/MISS per row):
#   pause at most 50 ms per million live blocks
#   store at most 1.5 s per million live blocks
#   file  at most 40 bytes per block
#
# The exit part (--part exit): bench_snapshot -s 48 -x holds N blocks of 48
# bytes and exits, under MEMINST=mim with and without snapshot=FILE (the
# exit snapshot), interleaved A B A B, each a fresh process; it reports
#   cpu_added   median of the runs' CPU time (user+sys, /usr/bin/time)
#               with the snapshot minus without, and both medians
#   B/block     the file's size divided by its blocks
#   inspect holes, sum, top: CPU time of each on that file (median)
# Targets: added at most 0.25 s per million blocks, file at most 12 bytes
# a block, each inspect command at most 1 s per million blocks.
#
# usage: bench/snapshot.sh [--blocks N] [--rounds N] [--part store|exit|all] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench_snapshot)
#   --blocks N  live blocks (default 1000000)
#   --rounds N  runs per backend (default 5)
# Needs sqlite3 (package sqlite3).  The files go to $TMPDIR (default /tmp):
# the write is timed, so give it a local disk.
set -eu
. "$(dirname "$0")/bench-lib.sh"

rounds=5
blocks=1000000
part=all
build=
while [ $# -gt 0 ]; do
	case $1 in
	--blocks) shift; blocks=$1 ;;
	--rounds) shift; rounds=$1 ;;
	--part) shift; part=$1 ;;
	*) bench_arg snapshot.sh "$1" ;;
	esac
	shift
done

build=$(bench_build_dir snapshot.sh bench/bench_snapshot "$build")
bench=$build/bench/bench_snapshot
lib=$build/alloc/.libs/libmeminst.so
bench_need snapshot.sh "$build" "$bench" "$lib"
command -v sqlite3 >/dev/null || { echo "snapshot.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 2; }

backends=system
if env MEMINST=mim,backend=jemalloc LD_PRELOAD="$lib" /bin/true 2>/dev/null; then
	backends="system jemalloc"
else
	echo "snapshot.sh: libmeminst without backend=jemalloc: system only" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-snap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

case $part in store|exit|all) ;; *) echo "snapshot.sh: --part store, exit or all" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "snapshot.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
inspect=$build/inspect/inspect

store_part() {
echo "# bench_snapshot: $blocks live blocks, $rounds rounds per backend, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
for b in $backends; do
	r=1
	while [ "$r" -le "$rounds" ]; do
		db=$tmp/$b.$r.db
		if ! out=$(env MEMINST="mim,backend=$b" LD_PRELOAD="$lib" "$bench" -n "$blocks" "$db"); then
			echo "snapshot.sh: bench_snapshot failed ($b, round $r)" >&2
			exit 1
		fi
		set -- $(sqlite3 -separator ' ' "$db" "SELECT pause_ns, blocks FROM snapshot WHERE id = 1")
		echo "backend=$b round=$r $out pause_ns=$1 snap_blocks=$2 file_bytes=$(stat -c %s "$db")"
		rm -f "$db"
		r=$((r + 1))
	done
done >"$tmp/raw"

awk "$BENCH_AWK"'
{
	b = val("backend")
	if (!(b in seen)) { seen[b] = 1; order[++nb] = b }
	pause[b] = pause[b] " " val("pause_ns") / 1e6
	store[b] = store[b] " " val("store_ms")
	per[b] = per[b] " " val("file_bytes") / val("snap_blocks")
	nblocks[b] = val("snap_blocks")
}
END {
	printf "%-9s %9s %9s %9s %9s  %s\n", "backend", "blocks", "pause_ms", "store_ms", "B/block", "targets"
	for (i = 1; i <= nb; i++) {
		b = order[i]; m = nblocks[b] / 1e6
		p = median(pause[b]); s = median(store[b]); f = median(per[b])
		t = sprintf("pause <= 50 ms/M: %s; store <= 1.5 s/M: %s; file <= 40 B: %s",
			p <= 50 * m ? "PASS" : "MISS", s <= 1500 * m ? "PASS" : "MISS", f <= 40 ? "PASS" : "MISS")
		printf "%-9s %9d %9.1f %9.1f %9.1f  %s\n", b, nblocks[b], p, s, f, t
		printf "%-9s rounds: pause_ms%s; store_ms%s\n", "", pause[b], store[b]
	}
}' "$tmp/raw"
}

# cpu FILE COMMAND...: run COMMAND, append its user+sys seconds to FILE.
cpu() {
	_f=$1
	shift
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
		echo "snapshot.sh: $* failed: $(cat "$tmp/err")" >&2
		exit 1
	}
	awk '{ printf " %.3f", $1 + $2 }' "$tmp/time" >>"$_f"
}

exit_part() {
	echo "# exit snapshot: $blocks live blocks of 48 bytes, mim/system, $rounds rounds interleaved, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	: >"$tmp/floor"; : >"$tmp/snap"; : >"$tmp/pause"
	r=1
	while [ "$r" -le "$rounds" ]; do
		rm -f "$tmp/exit.db"
		cpu "$tmp/floor" env MEMINST=mim LD_PRELOAD="$lib" "$bench" -n "$blocks" -s 48 -x -
		cpu "$tmp/snap" env MEMINST="mim,snapshot=$tmp/exit.db" LD_PRELOAD="$lib" "$bench" -n "$blocks" -s 48 -x -
		printf ' %s' "$(sqlite3 "$tmp/exit.db" 'SELECT pause_ns / 1e6 FROM snapshot WHERE id = 1')" >>"$tmp/pause"
		r=$((r + 1))
	done
	nb=$(sqlite3 "$tmp/exit.db" 'SELECT blocks FROM snapshot WHERE id = 1')
	size=$(stat -c %s "$tmp/exit.db")
	for c in holes sum top; do
		: >"$tmp/i.$c"
		r=1
		while [ "$r" -le "$rounds" ]; do
			cpu "$tmp/i.$c" "$inspect" "$c" "$tmp/exit.db"
			r=$((r + 1))
		done
	done
	awk "$BENCH_AWK"'
	BEGIN {
		getline fl <"'"$tmp/floor"'"; getline sn <"'"$tmp/snap"'"; getline pa <"'"$tmp/pause"'"
		getline ho <"'"$tmp/i.holes"'"; getline su <"'"$tmp/i.sum"'"; getline to <"'"$tmp/i.top"'"
		m = '"$nb"' / 1e6; per = '"$size"' / '"$nb"'
		add = median(sn) - median(fl)
		printf "%-22s %9s  %s\n", "measure", "median", "rounds"
		printf "%-22s %9.3f  %s\n", "cpu_s without snapshot", median(fl), fl
		printf "%-22s %9.3f  %s\n", "cpu_s with snapshot", median(sn), sn
		printf "%-22s %9.3f  target <= %.2f s: %s\n", "cpu_s added", add, 0.25 * m, add <= 0.25 * m ? "PASS" : "MISS"
		printf "%-22s %9.1f  %s\n", "pause_ms (capture)", median(pa), pa
		printf "%-22s %9.2f  target <= 12: %s (%d blocks, %d bytes)\n", "B/block", per, per <= 12 ? "PASS" : "MISS", '"$nb"', '"$size"'
		printf "%-22s %9.3f  %s  target <= %.1f s: %s\n", "inspect holes cpu_s", median(ho), ho, m, median(ho) <= m ? "PASS" : "MISS"
		printf "%-22s %9.3f  %s  target <= %.1f s: %s\n", "inspect sum cpu_s", median(su), su, m, median(su) <= m ? "PASS" : "MISS"
		printf "%-22s %9.3f  %s  target <= %.1f s: %s\n", "inspect top cpu_s", median(to), to, m, median(to) <= m ? "PASS" : "MISS"
	}'
}

case $part in
store) store_part ;;
exit) exit_part ;;
all) store_part; exit_part ;;
esac
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
