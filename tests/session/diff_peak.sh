#!/bin/sh
# tests/session/diff_peak.sh — `inspect diff OLD NEW` of two runs gives the
# change of the peak heap that heaptrack_print -d gives, when neither peak
# is in a snapshot: diff_peak.c keeps 4 MiB and makes a spike of 50,000
# bytes (old) or 80,000 (new), too small for the peak trigger.  The totals
# of `diff` are each run's highest total (`status --total`'s max ever) and
# their change 30,000 bytes; heaptrack_print -d says +30.00K (skipped
# without heaptrack).
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
CC=${CC:-cc}
"$CC" -g -O1 "$top_srcdir/tests/session/diff_peak.c" -o diff_peak 2>cc.err ||
	{ echo "skip  $MI_NAME: no C compiler ($CC)"; exit 77; }

why=
"$LAUNCH" -q -o old.db -- ./diff_peak 50000 >out 2>err || mi_why_add "run 1: meminst exited $?"
"$LAUNCH" -q -o new.db -- ./diff_peak 80000 >out 2>>err || mi_why_add "run 2: meminst exited $?"
for db in old new; do
	"$INSPECT" status --total --json $db.db >$db.status.json 2>>err || mi_why_add "status $db exited $?"
done
"$INSPECT" diff --json old.db new.db >diff.json 2>>err || mi_why_add "diff --json exited $?"
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json
s = json.load(open("diff.json"))["summary"]
for side, db in (("a", "old"), ("b", "new")):
    total = json.load(open(db + ".status.json"))["total"][0]
    assert s["peak_bytes_" + side] == total["bytes_max_ever"], (side, s["peak_bytes_" + side], total)
assert s["delta_peak_bytes"] == 30000, s
PY
mi_verdict "diff of two runs: each peak is the highest total, the change 30,000 bytes" "$why" check

if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
	why=
	for n in 50000 80000; do
		heaptrack -o "$MI_TMP/ht$n" ./diff_peak $n >heaptrack.log 2>&1 || mi_why_add "heaptrack exited $?"
	done
	heaptrack_print -d "$MI_TMP"/ht50000.[gz][zs]* "$MI_TMP"/ht80000.[gz][zs]* >ht.diff 2>/dev/null
	ht=$(sed -n 's/^peak heap memory consumption: //p' ht.diff)
	[ "$ht" = 30.00K ] || mi_why_add "heaptrack_print -d: peak change '$ht', expected 30.00K"
	mi=$(/usr/bin/python3 -c 'import json; print(json.load(open("diff.json"))["summary"]["delta_peak_bytes"])')
	[ "$mi" = 30000 ] || mi_why_add "inspect diff: peak change $mi, heaptrack_print -d $ht"
	mi_verdict "diff of two runs: the peak's change is heaptrack_print -d's" "$why" ht.diff
else
	echo "skip  $MI_NAME: heaptrack is not installed: no comparison with heaptrack_print -d"
fi
mi_finish
