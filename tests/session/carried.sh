# carried.sh — interval snapshots store only the status and name rows that
# changed, and exe and cmdline once a chain (snapshot_delta, schema 3), and
# every reader still sees every row: the held types' figures, stored once,
# are reported in every snapshot of each of the two processes (issue 29).
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
command -v gcc >/dev/null || { echo "skip  $MI_NAME: no gcc"; exit 77; }

why=
gcc -g -O1 -rdynamic "$top_srcdir/tests/session/carried.c" -o carried 2>cc.err || mi_why_add "gcc exited $?"
"$LAUNCH" -q -f --interval 10ms -o s.db -- ./carried 400 >out 2>err || mi_why_add "meminst exited $?"
q() { "$INSPECT" sql s.db "$1" 2>>err; }
# the writer: a fraction of the rows, the rest carried
raw=$(q "SELECT count(*) FROM main.status")
all=$(q "SELECT count(*) FROM status")
deltas=$(q "SELECT count(*) FROM main.snapshot_delta")
named=$(q "SELECT count(*) FROM main.snapshot WHERE exe IS NOT NULL")
n=$(q "SELECT count(*) FROM snapshot")
[ "${n:-0}" -ge 40 ] || mi_why_add "$n snapshots, not 40 or more"
[ "${deltas:-0}" -ge $((${n:-0} / 2)) ] || mi_why_add "$deltas of $n snapshots stored as changes"
[ $((${raw:-0} * 3)) -le "${all:-0}" ] || mi_why_add "$raw status rows stored of the $all read: over a third"
[ "${named:-99999}" -lt "${n:-0}" ] || mi_why_add "exe stored in $named of $n snapshots"
# the readers: in every snapshot of each process from the first that has
# all of a held type, that type's figures, its name and the process's exe
held() { # $1 site, $2 bytes: "processes, snapshots with it, snapshots without it"
	q "WITH h AS (SELECT t.snapshot FROM status t JOIN type y ON y.snapshot = t.snapshot AND y.id = t.id
		WHERE t.kind = 'types' AND y.name LIKE '$1+%' AND t.sizes_current = $2 AND t.sizes_max_ever = $2),
	first AS (SELECT s.pid, min(s.id) AS id FROM snapshot s JOIN h ON h.snapshot = s.id GROUP BY s.pid)
	SELECT count(DISTINCT f.pid), count(h.snapshot), count(*) - count(h.snapshot) FROM snapshot s
	JOIN first f ON f.pid = s.pid AND s.id >= f.id LEFT JOIN h ON h.snapshot = s.id
	WHERE s.exe LIKE '%/carried' AND s.cmdline = './carried 400'"
}
r=$(held hold 19200)
case $r in 2\|*\|0) ;; *) mi_why_add "hold (processes|with|without): $r, not 2|...|0" ;; esac
[ "${r#*|}" != "${r}" ] && [ "$(echo "$r" | cut -d'|' -f2)" -ge 20 ] || mi_why_add "hold in too few snapshots: $r"
r=$(held hold_child 2464)
case $r in 1\|*\|0) ;; *) mi_why_add "hold_child (processes|with|without): $r, not 1|...|0" ;; esac
# inspect's own commands on a snapshot that stored none of the held type's
# rows: the same figures as the snapshot that did
k=$(q "SELECT max(d.snapshot) FROM main.snapshot_delta d WHERE NOT EXISTS (SELECT 1 FROM main.status t
	WHERE t.snapshot = d.snapshot AND t.kind = 'types') AND NOT EXISTS (SELECT 1 FROM main.type y
	WHERE y.snapshot = d.snapshot)")
if [ -n "$k" ]; then
	"$INSPECT" status --types --snapshot "$k" --json s.db >k.json 2>>err || mi_why_add "status of $k exited $?"
	"$INSPECT" list --json s.db >list.json 2>>err || mi_why_add "list exited $?"
	/usr/bin/python3 - k.json list.json >check 2>&1 <<'PY' || mi_why_add "$(tail -n 1 check)"
import json, sys
rows = json.load(open(sys.argv[1]))["types"]
hold = [r for r in rows if r["name"].startswith("hold+")]
assert hold, "no hold type in %s" % [r["name"] for r in rows]
assert hold[0]["bytes_current"] == 19200 and hold[0]["blocks_current"] == 300, "hold: %s" % hold[0]
doc = json.load(open(sys.argv[2]))
snaps = doc["snapshots"]
bad = [s["id"] for s in snaps if "carried" in s.get("exe", "") and s.get("cmdline") != "./carried 400"]
assert not bad and snaps, "snapshots without the command line: %s" % bad[:10]
PY
else
	mi_why_add "no snapshot without type rows"
fi
mi_verdict "status and name rows stored when they change, every row read in every snapshot" "$why" err stderr
mi_finish
