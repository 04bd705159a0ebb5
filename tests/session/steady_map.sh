# steady_map.sh — an interval snapshot reads /proc/self/smaps (a walk of
# every mapping's page tables under the process's mmap lock: 8 ms at a
# 1 GiB heap) only when what a reader would be given could have moved: the
# mappings changed (/proc/self/maps) or the resident set (statm) left the
# stored rows' sum by more than 1/256.  tests/session/steady_map: 64 MiB
# mapped, 8 written, naps; all 64 written, naps.  Its interval snapshots
# read smaps in fewer than half of them (strace counts the opens), and the
# last one still gives the mapping's 64 MiB and the kernel's RSS within 2 %.
# A status snapshot keeps its buffers for the next one: fewer munmap calls
# in the whole run than 20 and a quarter of the interval snapshots (each
# was a TLB shootdown; 701 for 83 snapshots before, 12 for 76 after:
# bench/RESULTS.md, session 27).
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/strace strace
command -v gcc >/dev/null || { echo "skip  $MI_NAME: no gcc"; exit 77; }

why=
gcc -g -O1 "$top_srcdir/tests/session/steady_map.c" -o steady_map 2>cc.err || mi_why_add "gcc exited $?"
./steady_map 2 >bare.out || mi_why_add "the program alone exited $?"
/usr/bin/strace -f -qq -e trace=openat,munmap -o trace "$LAUNCH" -q -f --mis --interval 10ms -o s.db -- \
	./steady_map 50 >out 2>err || mi_why_add "meminst exited $?"
cmp -s bare.out out || mi_why_add "stdout differs from the program's alone"
n=$("$INSPECT" sql s.db "SELECT count(*) FROM snapshot WHERE trigger = 'interval'" 2>>err)
reads=$(grep -c '"/proc/self/smaps"' trace)
[ "${n:-0}" -ge 20 ] || mi_why_add "$n interval snapshots, not 20 or more"
[ $((${reads:-999} * 2)) -lt "${n:-0}" ] || mi_why_add "smaps read $reads times for $n interval snapshots"
unmaps=$(grep -c '^[0-9]* *munmap(' trace)
[ "${unmaps:-999}" -lt $((20 + ${n:-0} / 4)) ] || mi_why_add "$unmaps munmap calls for $n interval snapshots"
k=$("$INSPECT" sql s.db "SELECT max(id) FROM snapshot WHERE trigger = 'interval'" 2>>err)
"$INSPECT" rss --snapshot "${k:-0}" --json s.db >rss.json 2>>err || mi_why_add "inspect rss exited $?"
/usr/bin/python3 - rss.json >check 2>&1 <<'PY' || mi_why_add "$(tail -n 1 check)"
import json, sys
doc = json.load(open(sys.argv[1]))
big = [m for m in doc["mappings"] if m["end"] - m["start"] == 64 << 20 and m["perms"] == "rw-p"]
assert big, "no 64 MiB mapping in the last interval snapshot"
assert big[0]["rss"] >= 60 << 20, "the 64 MiB mapping is given %d bytes resident" % big[0]["rss"]
r = doc["rss"][0]
assert abs(r["kernel_rss"] - r["mappings_rss"]) <= r["kernel_rss"] // 50, "kernel %d, mappings %d" % (
    r["kernel_rss"], r["mappings_rss"])
PY
mi_verdict "interval snapshots read smaps when the map or the resident set moved, keep their buffers, and give what it says" "$why" err stderr
mi_finish
