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
# usage: bench/snapshot.sh [--blocks N] [--rounds N] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench_snapshot)
#   --blocks N  live blocks (default 1000000)
#   --rounds N  runs per backend (default 5)
# Needs sqlite3 (package sqlite3).  The files go to $TMPDIR (default /tmp):
# the write is timed, so give it a local disk.
set -eu

rounds=5
blocks=1000000
build=
while [ $# -gt 0 ]; do
	case $1 in
	--blocks) shift; blocks=$1 ;;
	--rounds) shift; rounds=$1 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "snapshot.sh: unknown option $1" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done

. "$(dirname "$0")/bench-lib.sh"
build=$(bench_build_dir snapshot.sh bench/bench_snapshot "$build")
bench=$build/bench/bench_snapshot
lib=$build/alloc/.libs/libmeminst.so
for f in "$bench" "$lib"; do
	[ -e "$f" ] || { echo "snapshot.sh: $f not found; run make in $build first" >&2; exit 2; }
done
command -v sqlite3 >/dev/null || { echo "snapshot.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 2; }

backends=system
if env MEMINST=mim,backend=jemalloc LD_PRELOAD="$lib" /bin/true 2>/dev/null; then
	backends="system jemalloc"
else
	echo "snapshot.sh: libmeminst without backend=jemalloc: system only" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-snap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

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
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
