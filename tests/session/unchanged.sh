# unchanged.sh — interval snapshots store the process's mappings and
# modules again only when they changed (meminst-snapshot(5)): a steady
# program's session holds its modules once or so, its segments in fewer
# snapshots than it has, and a reader still names and places the sites of
# a snapshot without module rows as it does those of the snapshot it
# takes them from.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
command -v gcc >/dev/null || { echo "skip  $MI_NAME: no gcc"; exit 77; }

why=
gcc -g -O1 "$top_srcdir/tests/session/unchanged.c" -o unchanged 2>cc.err || mi_why_add "gcc exited $?"
"$LAUNCH" -q -f --mim --interval 10ms -o s.db -- ./unchanged 300 >out 2>err || mi_why_add "meminst exited $?"
n=$("$INSPECT" sql s.db "SELECT count(*) FROM snapshot" 2>>err)
seg=$("$INSPECT" sql s.db "SELECT count(DISTINCT snapshot) FROM segment" 2>>err)
mod=$("$INSPECT" sql s.db "SELECT count(DISTINCT snapshot) FROM module" 2>>err)
[ "${n:-0}" -ge 20 ] || mi_why_add "$n snapshots, not 20 or more"
# the exit snapshot (a map, another connection) stores them again
[ "${mod:-99}" -le 3 ] || mi_why_add "modules stored in $mod of $n snapshots"
[ "${seg:-99}" -lt "${n:-0}" ] || mi_why_add "segments stored in $seg of $n snapshots"
# the bytes an interval snapshot adds for its map, in rows: a quarter of
# the whole list at most, on average over those that store some (a few
# rows each: an arena's top, pages of libc touched; issue 29)
whole=$("$INSPECT" sql s.db "SELECT count(*) FROM segment WHERE snapshot = (SELECT min(snapshot) FROM segment)" 2>>err)
later="FROM segment g JOIN snapshot s ON s.id = g.snapshot WHERE s.content = 'status'
	AND g.snapshot > (SELECT min(snapshot) FROM segment)"
stores=$("$INSPECT" sql s.db "SELECT count(DISTINCT g.snapshot) $later" 2>>err)
rows=$("$INSPECT" sql s.db "SELECT count(*) $later" 2>>err)
[ "${whole:-0}" -ge 20 ] || mi_why_add "the first snapshot stored $whole mappings, not 20 or more"
[ $((${rows:-99999} * 4)) -le $((${stores:-0} * ${whole:-0})) ] ||
	mi_why_add "$rows segment rows in $stores later interval snapshots: over a quarter of $whole each"
# a snapshot without module rows: the same names and places as the one it
# takes them from
k=$("$INSPECT" sql s.db "SELECT max(id) FROM snapshot WHERE content = 'status' AND id NOT IN
	(SELECT snapshot FROM module)" 2>>err)
from=$("$INSPECT" sql s.db "SELECT max(snapshot) FROM module WHERE snapshot < ${k:-0}" 2>>err)
if [ -n "$k" ] && [ -n "$from" ]; then
	"$INSPECT" status --types --snapshot "$k" --json s.db >k.json 2>>err || mi_why_add "status of $k exited $?"
	"$INSPECT" status --types --snapshot "$from" --json s.db >from.json 2>>err ||
		mi_why_add "status of $from exited $?"
	/usr/bin/python3 - k.json from.json >check 2>&1 <<'PY' || mi_why_add "$(tail -n 1 check)"
import json, sys
def places(path):
    doc = json.load(open(path))
    rows = next(v for k, v in doc.items() if k == "types")
    return {r["id"]: (r["name"], r.get("file"), r.get("line")) for r in rows}
k, f = places(sys.argv[1]), places(sys.argv[2])
grow = [v for v in k.values() if v[0].startswith("grow")]
assert grow and grow[0][1] and grow[0][1].endswith("unchanged.c") and grow[0][2], "grow not placed: %s" % grow
assert all(f[i] == v for i, v in k.items() if i in f), "names differ: %s / %s" % (k, f)
PY
else
	mi_why_add "no snapshot without module rows ($k) or none before it ($from)"
fi
mi_verdict "a steady program's interval snapshots store mappings and modules when they change, mappings as their changes" "$why" err stderr

# A library loaded, then unloaded, while the program runs: an interval
# snapshot between lists it, one after does not (the modules are not
# walked while the loader's counts stay; a load or an unload moves them).
why=
printf 'int unchanged_plug(int x) { return x + 1; }\n' >plug.c
gcc -shared -fPIC plug.c -o libunchanged_plug.so 2>cc.err || mi_why_add "gcc (plug) exited $?"
rm -f s.db
"$LAUNCH" -q -f --mim --interval 10ms -o s.db -- ./unchanged 300 "$PWD/libunchanged_plug.so" >out 2>err ||
	mi_why_add "meminst exited $?"
interval="SELECT DISTINCT m.snapshot FROM module m JOIN snapshot s ON s.id = m.snapshot WHERE s.trigger = 'interval'"
with=$("$INSPECT" sql s.db "SELECT min(snapshot) FROM module WHERE path LIKE '%libunchanged_plug.so'
	AND snapshot IN ($interval)" 2>>err)
gone=$("$INSPECT" sql s.db "SELECT min(snapshot) FROM module WHERE snapshot > ${with:-0} AND snapshot IN ($interval)
	AND snapshot NOT IN (SELECT snapshot FROM module WHERE path LIKE '%libunchanged_plug.so')" 2>>err)
[ -n "$with" ] || mi_why_add "no interval snapshot stored the modules with the library loaded"
[ -n "$gone" ] || mi_why_add "no interval snapshot after $with stored the modules without it"
mi_verdict "a library loaded and unloaded between interval snapshots is in the modules stored between, not after" \
	"$why" err stderr
mi_finish
