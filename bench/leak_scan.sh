#!/bin/sh
# bench/leak_scan.sh — CPU of the exit leak check for 1 M blocks of 64 bytes
# and for 64 K blocks of 16 KiB (1 GiB scanned): the CPU time of the thread
# that scanned (leak_cpu.scan_cpu_ns, CLOCK_THREAD_CPUTIME_ID, from the map
# held to the threads released), its wall time (leak_check.scan_ns) and the
# bytes scanned; ROUNDS rounds (default 5), the two cases interleaved, then
# the median and the spread of each.  The load average is printed before and
# after: the CPU figure does not depend on it as the wall time does, but a
# loaded machine's caches are shared.
# Usage: bench/leak_scan.sh BUILD_DIR [ROUNDS]
b=${1:?build dir}
rounds=${2:-5}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cc -O2 -o "$d/scan" "$(dirname "$0")/leak_scan.c" || exit 1
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
r=1
while [ "$r" -le "$rounds" ]; do
	for case in "1000000 64" "65536 16384"; do
		set -- $case
		LD_PRELOAD=$b/alloc/.libs/libmeminst.so MEMINST=mim,snapshot=$d/s.db "$d/scan" "$1" "$2" || exit 1
		sqlite3 -separator ' ' "$d/s.db" "SELECT '$1x$2', c.scanned_bytes, u.scan_cpu_ns, c.scan_ns,
			c.reachable_blocks FROM leak_check c JOIN leak_cpu u USING (snapshot)" >>"$d/rows"
		rm -f "$d/s.db"
	done
	r=$((r + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "case         scanned_MB  cpu_ms(median min max)  wall_ms(median)  cpu_s_per_M_blocks  cpu_s_per_GB"
for c in 1000000x64 65536x16384; do
	wall=$(awk -v c="$c" '$1 == c { print $4 }' "$d/rows" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	awk -v c="$c" '$1 == c { print $3, $2, $5 }' "$d/rows" | sort -n | awk -v c="$c" -v wall="$wall" '
		{ cpu[NR] = $1; scanned = $2; blocks = $3 }
		END {
			m = int((NR + 1) / 2)
			printf "%-12s %10.1f  %7.1f %7.1f %7.1f  %15.1f  %18.3f  %12.3f\n", c, scanned / 1e6,
				cpu[m] / 1e6, cpu[1] / 1e6, cpu[NR] / 1e6, wall / 1e6,
				cpu[m] / 1e9 / (blocks / 1e6), cpu[m] / 1e9 / (scanned / 1e9)
		}'
done
