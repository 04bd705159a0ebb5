# timeline.sh — `inspect timeline` on a session whose program grows its
# memory in three known steps of 8 MiB: the timeline rises to at least
# 24 MiB, its snapshots are in time order, the chart is drawn in text (with
# block characters under a UTF-8 locale, '#' otherwise) and left out of
# --json; --pid picks a process, an unknown one is exit status 1.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

cat >steps.py <<'PY'
import time
keep = []
for i in range(3):
    keep.append(bytearray(8 << 20))
    time.sleep(0.15)
keep = []
time.sleep(0.1)
PY
why=
"$LAUNCH" -q --no-time --interval=20ms -o s.db -- /usr/bin/python3 steps.py 2>err ||
	mi_why_add "meminst exited $?"
"$INSPECT" timeline --json s.db >t.json 2>>err || mi_why_add "timeline --json exited $?"
/usr/bin/python3 - t.json <<'PY' >check.out 2>&1 || mi_why_add "$(head -n 1 check.out)"
import json, sys
rows = json.load(open(sys.argv[1]))["timeline"]
assert len(rows) >= 10, "only %d rows" % len(rows)
assert all(a["elapsed_ms"] <= b["elapsed_ms"] for a, b in zip(rows, rows[1:])), "not in time order"
top = max(r["bytes"] for r in rows)
assert top >= 24 << 20, "peak %d below 24 MiB" % top
assert rows[-1]["bytes"] < 8 << 20, "last %d not back below 8 MiB" % rows[-1]["bytes"]
assert any(r["trigger"] == "interval" for r in rows) and rows[-1]["trigger"] == "exit"
PY
LC_ALL=C.UTF-8 "$INSPECT" timeline s.db >utf8.txt 2>>err
grep -q '█' utf8.txt || mi_why_add "no block characters under C.UTF-8"
LC_ALL=C "$INSPECT" timeline s.db >ascii.txt 2>>err
grep -q '#' ascii.txt || mi_why_add "no '#' chart under LC_ALL=C"
grep -q '█' ascii.txt && mi_why_add "block characters under LC_ALL=C"
grep -q '█\|#' t.json && mi_why_add "a chart in --json"
mi_verdict "timeline of three 8 MiB steps" "$why" err stderr check.out check utf8.txt text

why=
pid=$(snap_sql s.db 'SELECT pid FROM session_run')
"$INSPECT" timeline --pid "$pid" --csv s.db >pid.csv 2>err || mi_why_add "--pid $pid exited $?"
[ "$(wc -l <pid.csv)" -ge 11 ] || mi_why_add "--csv: $(wc -l <pid.csv) lines"
"$INSPECT" timeline --pid 1 s.db >/dev/null 2>err
[ $? -eq 1 ] || mi_why_add "--pid 1: not exit status 1"
grep -q 'no snapshot of process 1' err || mi_why_add "--pid 1: no clear message"
mi_verdict "timeline --pid" "$why" err stderr

# A run too short for interval snapshots: a chart one or two columns wide,
# whose time axis must still read "0 … END", the two labels apart.
why=
"$LAUNCH" -q --no-time -o few.db -- /usr/bin/python3 -c pass 2>err ||
	mi_why_add "meminst exited $?"
LC_ALL=C "$INSPECT" timeline few.db >few.txt 2>>err || mi_why_add "timeline exited $?"
axis=$(grep -E '^ +0 ' few.txt | tail -n 1)
echo "$axis" | grep -Eq '^ +0 +[0-9.]+ [a-z]+$' || mi_why_add "axis labels run together: '$axis'"
mi_verdict "timeline of a short run: readable axis" "$why" err stderr few.txt text

# a process stopped for 10 periods: after SIGCONT one interval snapshot,
# then the period again, not a burst catching up the missed ones
why=
"$LAUNCH" -q --no-time --interval=50ms -o stop.db -- \
	sh -c '(sleep 0.5; kill -CONT $$) & kill -STOP $$; sleep 0.3' 2>err || mi_why_add "meminst exited $?"
pid=$(snap_sql stop.db "SELECT pid FROM session_run")
close=$(snap_sql stop.db "SELECT count(*) FROM (SELECT elapsed_ns - lag(elapsed_ns) OVER (ORDER BY elapsed_ns)
	AS gap FROM snapshot WHERE pid = $pid AND trigger = 'interval') WHERE gap < 25000000")
[ "${close:-99}" -le 2 ] || mi_why_add "$close interval snapshots less than half a period after the one before"
mi_verdict "interval snapshots after a stop: no burst" "$why" err stderr
mi_finish
