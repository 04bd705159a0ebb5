#!/bin/sh
# bench/leak_scan.sh — CPU of the exit leak check (leak_check table: scan_ns,
# scanned_bytes) for 1 M blocks of 64 bytes and 64 K blocks of 16 KiB (1 GiB).
# Usage: bench/leak_scan.sh BUILD_DIR
b=${1:?build dir}
d=$(mktemp -d)
cc -O2 -o "$d/scan" "$(dirname "$0")/leak_scan.c"
for case in "1000000 64" "65536 16384"; do
	set -- $case
	LD_PRELOAD=$b/alloc/.libs/libmeminst.so MEMINST=mim,snapshot=$d/s.db "$d/scan" "$1" "$2"
	sqlite3 "$d/s.db" "SELECT '$1 blocks of $2 B: scanned ' || scanned_bytes || ' B in ' ||
		(scan_ns / 1000000) || ' ms, reachable ' || reachable_blocks FROM leak_check"
	rm -f "$d/s.db"
done
rm -rf "$d"
