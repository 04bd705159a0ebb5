#!/bin/sh
# tests/session/runs.sh — `inspect diff OLD NEW` of two runs (heaptrack_print
# -d): tests/session/runs run twice under the launcher, the second time with
# site_a allocating twice as often, site_b added and site_c no longer
# leaking (see runs.c).  Checked:
#   - the per-site changes of calls, allocated and leaked equal the
#     difference of `inspect top --by calls --json` of each session, sites
#     matched by function; site_b is "new", site_c's leak gone; the totals
#     are those of `inspect status --total` of each run;
#   - no address and no block row (across processes addresses mean
#     nothing); --by sorts; --stacks, --csv and text say the same;
#   - two files of one process still get the block diff, exactly as
#     `diff --from N --to N` of the one file;
#   - bad input: one line, non-zero exit.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
PROG=$top_builddir/tests/session/runs

why=
"$LAUNCH" -q --mim -o old.db -- "$PROG" 1000 0 1 >out 2>err || mi_why_add "run 1: meminst exited $?"
"$LAUNCH" -q --mim -o new.db -- "$PROG" 2000 1 0 >out 2>>err || mi_why_add "run 2: meminst exited $?"
for db in old new; do
	"$INSPECT" top --by calls --limit 100000 --json $db.db >$db.top.json 2>>err || mi_why_add "top $db exited $?"
	"$INSPECT" status --total --json $db.db >$db.status.json 2>>err || mi_why_add "status $db exited $?"
done
"$INSPECT" diff --json old.db new.db >diff.json 2>>err || mi_why_add "diff --json exited $?"
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "diff: $(tail -n 1 check)"
import json
def fn(name):
    return name.split("+")[0].split(" ")[0]
def top(db):
    rows = {}
    for r in json.load(open(db + ".top.json"))["top"]:
        if fn(r["name"]) in ("site_a", "site_b", "site_c"):
            assert fn(r["name"]) not in rows, ("two sites named", r["name"])
            rows[fn(r["name"])] = r
    return rows
old, new = top("old"), top("new")
d = json.load(open("diff.json"))
assert "new_blocks" not in d and "types" not in d, "block tables across processes"
assert "addr" not in json.dumps(d), "an address key"
sites = {fn(r["name"]): r for r in d["sites"] if fn(r["name"]) in ("site_a", "site_b", "site_c")}
assert set(sites) == {"site_a", "site_b", "site_c"}, sites.keys()
for name in ("site_a", "site_b", "site_c"):
    a, b, r = old.get(name), new[name], sites[name]
    for key in ("calls", "allocated_bytes", "leaked_bytes"):
        want = b[key] - (a[key] if a else 0)
        assert r["delta_" + key] == want, (name, key, r["delta_" + key], want)
assert old["site_a"]["calls"] == 1000 and new["site_a"]["calls"] == 2000, (old["site_a"], new["site_a"])
assert sites["site_a"]["delta_temporary"] == 1000 and sites["site_a"]["change"] is None, sites["site_a"]
b = sites["site_b"]
assert "site_b" not in old and b["change"] == "new" and b["calls_a"] == 0 and b["calls_b"] == 10, b
c = sites["site_c"]
assert c["change"] is None and c["leaked_bytes_a"] == 500 and c["leaked_bytes_b"] == 0, c
assert c["delta_leaked_bytes"] == -500 and c["delta_calls"] == 0, c
assert c["stack"] and d["sites"][0]["stack"], "no stack in JSON"
s = d["summary"]
assert s["same_process"] is False and s["pid_a"] != s["pid_b"], s
for side, db in (("a", "old"), ("b", "new")):
    total = [r for r in json.load(open(db + ".status.json"))["total"]][0]
    assert s["calls_" + side] == total["calls"], (side, s["calls_" + side], total["calls"])
    assert s["allocated_bytes_" + side] == total["allocated_bytes"], side
assert s["delta_calls"] == s["calls_b"] - s["calls_a"], s
assert s["new_sites"] >= 1 and s["gone_sites"] == 0, s
deltas = [abs(r["delta_allocated_bytes"]) for r in d["sites"]]
assert deltas == sorted(deltas, reverse=True), ("not by allocated change", deltas)
PY
mi_verdict "diff of two runs: per-site changes = top --by calls of each, site_b new, site_c's leak gone" "$why" check

why=
"$INSPECT" diff --by leaked --csv --table sites old.db new.db >sites.csv 2>>err || mi_why_add "diff --csv exited $?"
head -n 1 sites.csv | grep -q '^key,change,delta_calls,delta_allocated_bytes,delta_temporary,delta_peak_bytes,delta_leaked_bytes,' ||
	mi_why_add "csv header: $(head -n 1 sites.csv)"
sed -n 2p sites.csv | grep -q '^site_c .*,,0,0,0,[0-9-]*,-500,' || mi_why_add "--by leaked: first row not site_c's: $(sed -n 2p sites.csv)"
"$INSPECT" diff --stacks 1 old.db new.db >diff.txt 2>>err || mi_why_add "diff exited $?"
grep -q '^sites by change of allocated' diff.txt || mi_why_add "text: no sites table"
grep -q '^ *new .*site_b' diff.txt || mi_why_add "text: site_b not marked new"
grep -qi 'leak candidates\|^address\|0x[0-9a-f]\{6,\}' diff.txt && mi_why_add "text: an address or block row"
grep -q 'two processes' diff.txt || mi_why_add "text: no note on the two processes"
# the first site's frames under it (site_a's own line), no other's
[ "$(grep -c '^  *site_[abc] at .*runs\.c:[0-9]* (runs)$' diff.txt)" = 1 ] ||
	mi_why_add "--stacks 1: $(grep -c '^  *site_[abc] at ' diff.txt) stacks"
grep -q '^  *site_a at .*runs\.c:[0-9]* (runs)$' diff.txt || mi_why_add "--stacks 1: not site_a's frame"
mi_verdict "diff of two runs: --by, --csv, text marks new sites, --stacks, no addresses" "$why" diff.txt

why=
cp new.db same.db
map=$("$INSPECT" list --csv new.db | awk -F, 'NR > 1 && $0 ~ /,map,/ { n = $1 } END { print n }')
"$INSPECT" diff --json new.db same.db >same.json 2>>err || mi_why_add "diff of one process exited $?"
"$INSPECT" diff --json --from "$map" --to "$map" new.db >one.json 2>>err || mi_why_add "diff --from --to exited $?"
sed 's/same\.db/new.db/' same.json | cmp -s - one.json || mi_why_add "two files of one process: not the block diff of the one file"
grep -q '"new_blocks": \[' same.json && grep -q '"same_process": true' same.json ||
	mi_why_add "two files of one process: no block rows"
mi_verdict "two files of one process: the block diff, as before" "$why" same.json

why=
: >err
"$INSPECT" diff old.db missing.db >out 2>>err && mi_why_add "a missing file accepted"
echo "not a database" >text.db
"$INSPECT" diff text.db new.db >out 2>>err && mi_why_add "a text file accepted"
cp old.db bare.db && sqlite3 bare.db 'DROP TABLE status_event' 2>>err
"$INSPECT" diff bare.db new.db >out 2>>err && mi_why_add "a run without counters accepted"
"$INSPECT" diff --type 1 old.db new.db >out 2>>err && mi_why_add "a filter with two runs accepted"
"$INSPECT" diff --by calls new.db >out 2>>err && mi_why_add "--by with one database accepted"
"$INSPECT" diff --by nothing old.db new.db >out 2>>err && mi_why_add "--by nothing accepted"
[ "$(wc -l <err)" = 6 ] || mi_why_add "not one line each: $(cat err)"
mi_verdict "bad input: one line, non-zero exit" "$why" err
mi_finish
