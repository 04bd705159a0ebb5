# timeline_by.sh — `inspect timeline --by` and the default interval, on
# tests/session/phases, whose memory comes in two known phases: grow_x
# allocates 2 MiB, then grow_y allocates 3 MiB while every X block is freed.
#   - by type: the series of grow_x rises then falls to 0, grow_y's rises
#     to 3 MiB; every value is the status figure of its snapshot's type
#     (inspect status --types), and the series and "other" add up to the
#     total; --limit 1 leaves one series and "other" with the rest;
#   - text: the chart is stacked with the series' symbols, and a column per
#     series; --csv has one row per snapshot and series;
#   - the default interval (auto) gives this ~0.4 s run 10 points or more;
#     an explicit --interval is kept as given (half the gaps or more at
#     80% of it, or above); no interval snapshot is cut by the exit (no
#     hot journal left);
#   - usage errors: one line, exit status 2.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"
mi_need /usr/bin/python3 python3
PHASES=$top_builddir/tests/session/phases

why=
"$LAUNCH" -q --no-time -o s.db -- "$PHASES" 2>err || mi_why_add "meminst exited $?"
"$INSPECT" timeline --by type --json s.db >t.json 2>>err || mi_why_add "timeline --by type --json exited $?"
"$INSPECT" timeline --by type --limit 1 --json s.db >one.json 2>>err || mi_why_add "--limit 1 exited $?"
pid=$(snap_sql s.db 'SELECT pid FROM session_run')
for snap in $(snap_sql s.db "SELECT id FROM snapshot WHERE pid = $pid"); do
	echo "$snap $("$INSPECT" status --types --snapshot "$snap" --json s.db 2>>err | tr -d '\n')" >>status.txt
done
/usr/bin/python3 - t.json one.json status.txt <<'PY' >check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json, sys
doc = json.load(open(sys.argv[1]))
series = {s["name"].split("+")[0]: s for s in doc["series"]}
assert set(series) >= {"grow_x", "grow_y"}, "series: %s" % sorted(series)
points = {}
for r in doc["timeline"]:
    points.setdefault(r["snapshot"], {})[r["name"].split("+")[0]] = r
order = sorted(points, key=lambda s: next(iter(points[s].values()))["elapsed_ms"])
x = [points[s]["grow_x"]["bytes"] for s in order]
y = [points[s]["grow_y"]["bytes"] for s in order]
top = x.index(max(x))
assert max(x) == 2 << 20, "grow_x rose to %d, not 2 MiB" % max(x)
assert any(0 < v < max(x) and y[i] == 0 for i, v in enumerate(x[:top])), "grow_x never seen rising: %s" % x
assert x[-1] == 0 and any(0 < v < max(x) for v in x[top:]), "grow_x not seen falling to 0: %s" % x
assert y[-1] == 3 << 20 and any(0 < v < y[-1] for v in y), "grow_y not seen rising to 3 MiB: %s" % y
# every value is the status figure of its snapshot
status = {}
for line in open(sys.argv[3]):
    snap, text = line.split(" ", 1)
    status[int(snap)] = {t["id"]: t for t in json.loads(text)["types"]}
checked = 0
for snap, by in points.items():
    for r in by.values():
        if r["id"] is None:
            continue
        t = status[snap].get(r["id"], {"bytes_current": 0, "blocks_current": 0})
        assert (r["bytes"], r["blocks"]) == (t["bytes_current"], t["blocks_current"]), \
            "snapshot %d type %d: %d/%d, status %d/%d" % (snap, r["id"], r["bytes"], r["blocks"],
                                                        t["bytes_current"], t["blocks_current"])
        checked += 1
    total = sum(t["bytes_current"] for t in status[snap].values())
    assert sum(r["bytes"] for r in by.values()) == total, "snapshot %d: series do not add up" % snap
assert checked >= 2 * len(points), "only %d values checked" % checked
# --limit 1: grow_y alone and other, which holds grow_x
one = json.load(open(sys.argv[2]))
names = [s["series"] for s in one["series"]]
assert names == ["1", "other"], "--limit 1 series: %s" % names
assert one["series"][0]["name"].startswith("grow_y"), one["series"][0]["name"]
assert one["series"][1]["max_bytes"] >= 2 << 20, "other: %s" % one["series"][1]
print("%d points, %d values checked" % (len(points), checked))
PY
mi_verdict "timeline --by type: grow_x rises and falls, grow_y rises; status figures" "$why" err stderr \
	check.out check

why=
LC_ALL=C "$INSPECT" timeline --by type s.db >t.txt 2>err || mi_why_add "text exited $?"
grep -Eq '^ +[0-9.]+ [KM]iB \|.*1' t.txt && grep -Eq '^ +[^|]*\|.*2' t.txt || mi_why_add "no stacked chart of 1 and 2"
grep -Eq '^no +elapsed +trigger +total +1 +2' t.txt || mi_why_add "no column per series"
grep -Eq '^2 +[0-9]+ +2\.0 MiB +0 B +grow_x' t.txt || mi_why_add "legend: no grow_x with 2.0 MiB, then 0 B"
"$INSPECT" timeline --by thread --csv s.db >th.csv 2>>err || mi_why_add "--by thread --csv exited $?"
head -n 1 th.csv | grep -q '^series,id,max_bytes,last_bytes,name' || mi_why_add "--csv: no series table"
grep -q '^snapshot,elapsed_ms,trigger,series,id,name,bytes,blocks$' th.csv || mi_why_add "--csv: no timeline"
"$INSPECT" timeline --by class s.db >/dev/null 2>>err || mi_why_add "--by class exited $?"
mi_verdict "timeline --by: text chart and columns, CSV, thread and class" "$why" err stderr t.txt text th.csv csv

# the default interval adapts; an explicit one stays as given
why=
n=$(snap_sql s.db "SELECT count(*) FROM snapshot WHERE pid = $pid AND trigger = 'interval'")
[ "$n" -ge 10 ] || mi_why_add "the default interval gave $n points to a ~0.4 s run"
[ "$(snap_sql s.db 'SELECT interval_ns FROM session_run')" = 0 ] || mi_why_add "session_run.interval_ns not 0 (auto)"
"$LAUNCH" -q --no-time --interval=50ms -o f.db -- "$PHASES" 2>err || mi_why_add "--interval=50ms exited $?"
fpid=$(snap_sql f.db 'SELECT pid FROM session_run')
# (the median gap: a store the load delayed is followed by one on time,
# closer than the interval, while auto's gaps are 10-20 ms in this run)
gaps=$(snap_sql f.db "SELECT count(*), sum(gap >= 40000000) FROM (SELECT elapsed_ns - lag(elapsed_ns)
	OVER (ORDER BY elapsed_ns) AS gap FROM snapshot WHERE pid = $fpid AND trigger = 'interval') WHERE gap IS NOT NULL")
total=${gaps%% *} wide=${gaps##* }
[ "${total:-0}" -ge 1 ] && [ $((2 * ${wide:-0})) -ge "$total" ] ||
	mi_why_add "--interval=50ms: $wide of $total gaps 40 ms or more (at least half expected)"
[ "$(snap_sql f.db 'SELECT interval_ns FROM session_run')" = 50000000 ] || mi_why_add "interval_ns not 50 ms"
# the exit never cuts an interval store: ten short runs at 10 ms
for i in 1 2 3 4 5 6 7 8 9 10; do
	MEMINST="mis,snapshot=$MI_TMP/j$i.db,interval=10ms,interval_content=status" LD_PRELOAD=$MEMINST_LIB \
		"$PHASES" 2>>err || mi_why_add "run $i exited $?"
	[ -e "j$i.db-journal" ] && mi_why_add "run $i left a hot journal"
done
mi_verdict "interval: auto by default, 50ms as given, no store cut at exit" "$why" err stderr

why=
for args in "--by site" "--by" "--by type --limit 0" "--by type --limit 25" "--by thread --limit -1"; do
	# shellcheck disable=SC2086
	"$INSPECT" timeline $args s.db >out 2>uerr
	st=$?
	[ "$st" -eq 2 ] && [ "$(wc -l <uerr)" -eq 1 ] && [ ! -s out ] ||
		mi_why_add "timeline $args: exit $st, $(wc -l <uerr) lines: $(head -n 1 uerr)"
done
mi_verdict "timeline --by: usage errors" "$why" uerr stderr
mi_finish
