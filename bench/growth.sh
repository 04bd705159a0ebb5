#!/bin/sh
# bench/growth.sh — how fast a steady program's session grows under the
# launcher's defaults (`make bench-growth`; issue 29: "a steady program's
# session grows <= 5 KB per second at the default interval").
#
#   bench_steady S (the same 1000 blocks replaced one by one, a 1 ms sleep
#   every 1000) under `meminst -q -f -o sS.db` (--mis, interval=auto,
#   --sample=100) for S = 5, 15 and 35 seconds: the session's size at each,
#   and the growth over each window, 5->15 s and 15->35 s (the start-up
#   cancels; auto's interval doubles every 16 snapshots, so the first
#   window has the densest snapshots).  Target: <= 5 KB/s (5,000 B/s) in
#   each.  Then the bytes of each table of the 35-second session (dbstat,
#   when the sqlite3 shell has it) and the rows each table holds per
#   snapshot: where the growth goes.  The sizes do not depend on the
#   machine's load; the count of snapshots (time-driven) a little.
#
# usage: bench/growth.sh [--seconds "5 15 35"] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"

secs="5 15 35"
build=
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) shift; secs=$1 ;;
	*) bench_arg growth.sh "$1" ;;
	esac
	shift
done

build=$(bench_build_dir growth.sh bench/bench_steady "$build")
launcher=$build/session/meminst
export MEMINST_LIBRARY="$build/alloc/.libs/libmeminst.so"
bench_need growth.sh "$build" "$launcher" "$MEMINST_LIBRARY" "$build/bench/bench_steady"
command -v sqlite3 >/dev/null || { echo "growth.sh: needs the sqlite3 shell" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-growth.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "# bench/growth.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-8s %12s %10s\n' seconds bytes snapshots
last=
for s in $secs; do
	"$launcher" -q -f -o "$tmp/s$s.db" -- "$build/bench/bench_steady" "$s"
	printf '%-8s %12d %10d\n' "$s" "$(wc -c <"$tmp/s$s.db")" \
		"$(sqlite3 "$tmp/s$s.db" 'SELECT count(*) FROM snapshot')"
	last=$s
done >"$tmp/sizes"
cat "$tmp/sizes"
echo
awk 'NR > 1 && prev != "" {
	g = ($2 - b) / ($1 - prev)
	printf "growth %s->%s s: %.0f B/s (%d snapshots): %s (target <= 5000 B/s)\n", prev, $1, g, $3 - n,
		g <= 5000 ? "PASS" : "MISS"
} { prev = $1; b = $2; n = $3 }' "$tmp/sizes"

db=$tmp/s$last.db
echo
echo "## where the ${last}-second session's bytes are"
snaps=$(sqlite3 "$db" 'SELECT count(*) FROM snapshot')
if sqlite3 "$db" 'SELECT 1 FROM dbstat LIMIT 1' >/dev/null 2>&1; then
	printf '%-16s %10s %10s\n' table bytes rows/snapshot
	sqlite3 -separator ' ' "$db" "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC" |
		while read -r t bytes; do
			rows=$(sqlite3 "$db" "SELECT count(*) FROM \"$t\"" 2>/dev/null || echo 0)
			awk -v t="$t" -v b="$bytes" -v r="$rows" -v n="$snaps" \
				'BEGIN { printf "%-16s %10d %10.2f\n", t, b, r / n }'
		done
else
	echo "(the sqlite3 shell has no dbstat: rows per snapshot only)"
	sqlite3 "$db" "SELECT name FROM sqlite_schema WHERE type = 'table'" | while read -r t; do
		rows=$(sqlite3 "$db" "SELECT count(*) FROM \"$t\"")
		awk -v t="$t" -v r="$rows" -v n="$snaps" 'BEGIN { printf "%-16s %10.2f\n", t, r / n }'
	done
fi
