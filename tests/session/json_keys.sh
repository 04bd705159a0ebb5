# json_keys.sh — one JSON vocabulary for every command (inspect(1), JSON),
# and analyse --csv in the same words with the same figures:
# each command's --json document, on a session of tests/session/known
# (memory, exact trace) and on a sampled one, uses only the keys listed in
# the man page, and none of the words the vocabulary replaced (cnt, own,
# acc, elapsed, seconds, size, location …) (a session of a process that
# exec'd adds the table "images"): times end in _ms, sizes in
# _bytes, counts of blocks in _blocks, locations are file and line.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3

why=
"$LAUNCH" -q --mim --trace --interval=20ms -o s.db -- "$KNOWN" >out 2>err ||
	mi_why_add "meminst --trace exited $?"
"$LAUNCH" -q --mis --sample=1000 --alloc-sample=64k -o p.db -- "$KNOWN" >out 2>>err ||
	mi_why_add "meminst --sample exited $?"
# a process that exec'd (sh, then known): the table "images" too
"$LAUNCH" -q --mis --sample=1000 -o e.db -- sh -c "exec '$KNOWN'" >out 2>>err ||
	mi_why_add "meminst --sample, sh -c 'exec known', exited $?"

# One command line per line; each must exit 0 and print one JSON document.
cases='list s.db
holes --all s.db
limits s.db
sum s.db
descr --limit 5 s.db
top s.db
top --by site s.db
top --by class s.db
top --by thread s.db
diff s.db
diff s.db p.db
status --total --allocators --classes --types --threads s.db
types s.db
type s.db 1
class s.db 1
allocator s.db 0
header-size s.db
timeline s.db
timeline --by type s.db
report s.db
rss s.db
analyse s.db
analyse --totals s.db
analyse --style flat p.db
analyse --style tree p.db
analyse --style callers p.db
analyse --style anomalies p.db
report p.db
report e.db
analyse e.db'
n=0
echo "$cases" | while read -r args; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$INSPECT" $args --json >"doc$n.json" 2>>err || echo "inspect $args --json: exit $?" >>failed
	echo "doc$n.json inspect $args" >>docs
done
[ -s failed ] && mi_why_add "$(head -n 3 failed | tr '\n' ';')"
n=$(grep -l '"images": \[' doc*.json 2>/dev/null | wc -l)
[ "$n" = 2 ] || mi_why_add "$n documents with the table images, not 2 (report and analyse of e.db)"

# The documented keys: between the json-keys marks of inspect(1).
sed -n '/^\.\\" json-keys-begin/,/^\.\\" json-keys-end/p' "$top_srcdir/doc/inspect.1" |
	grep -v '^\.' | tr ', ' '\n\n' | grep -v '^$' >documented
[ "$(wc -l <documented)" -ge 50 ] || mi_why_add "inspect(1) lists only $(wc -l <documented) JSON keys"

/usr/bin/python3 - documented docs <<'PY' >check.out 2>&1 || mi_why_add "$(tail -n 3 check.out | tr '\n' ' ')"
import json, re, sys
documented = set(open(sys.argv[1]).read().split())
replaced = re.compile(r"^(cnt|own|acc|elapsed|duration|seconds|count|size|location|largest|span)$"
                      r"|_seconds$|_ns$|_count$|^sizes_")
bad = []
def keys(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.append((k, path))
            keys(x, path + "." + k, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, path + "[]", out)
for line in open(sys.argv[2]):
    name, cmd = line.split(" ", 1)
    try:
        doc = json.load(open(name))
    except Exception as e:
        bad.append("%s: not one JSON document (%s)" % (cmd.strip(), e))
        continue
    found = []
    keys(doc, "", found)
    for k, path in found:
        if replaced.search(k):
            bad.append("%s: key %s at %s is not in the vocabulary" % (cmd.strip(), k, path or "top"))
        elif k not in documented:
            bad.append("%s: key %s at %s is not listed in inspect(1) JSON" % (cmd.strip(), k, path or "top"))
seen = sorted(set(bad))
for b in seen[:20]:
    print(b)
sys.exit(1 if seen else 0)
PY
mi_verdict "every command's JSON keys are the documented vocabulary" "$why" check.out check err stderr

# analyse --csv: the same figures as --json, in the same vocabulary
why=
for args in "s.db" "--style flat p.db"; do
	# shellcheck disable=SC2086
	"$INSPECT" analyse $args --csv >a.csv 2>>err || mi_why_add "analyse $args --csv: exit $?"
	# shellcheck disable=SC2086
	"$INSPECT" analyse $args --json >a.json 2>>err
	/usr/bin/python3 - documented a.csv a.json <<'PY' >>csv.out 2>&1 || mi_why_add "analyse $args --csv: $(tail -n 1 csv.out)"
import csv, json, sys
documented = set(open(sys.argv[1]).read().split())
tables = open(sys.argv[2]).read().split("\n\n")
j = json.load(open(sys.argv[3]))
rows = [list(csv.DictReader(t.splitlines())) for t in tables if t.strip()]
heads = [next(csv.reader(t.splitlines())) for t in tables if t.strip()]
for h in heads:
    for k in h:
        assert k in documented, "column %s is not in the JSON vocabulary" % k
if "style" not in j:  # fprof: functions, then pairs
    assert len(rows) == 2, "%d tables, expected functions and pairs" % len(rows)
    want = [(str(t["thread"]), f["name"], str(f["calls"]), "%.6f" % f["acc_ms"], str(f["own_bytes"]))
            for t in j["threads"] for f in t["functions"] + t["kept_out"]]
    got = [(r["thread"], r["name"], r["calls"], "%.6f" % float(r["acc_ms"]), r["own_bytes"]) for r in rows[0]]
    assert got == want, "functions differ from the JSON: %r vs %r" % (got[:3], want[:3])
    npairs = sum(len(f["called"]) for t in j["threads"] for f in t["functions"])
    assert len(rows[1]) == npairs, "%d pairs, the JSON has %d" % (len(rows[1]), npairs)
else:  # flat
    want = [(f["name"], f["self_samples"]) for f in j["functions"]]
    got = [(r["name"], float(r["self_samples"])) for r in rows[0]]
    assert got == want, "flat rows differ from the JSON: %r vs %r" % (got[:3], want[:3])
PY
done
"$INSPECT" analyse --style tree --csv p.db >/dev/null 2>csv.err
[ $? -eq 2 ] && grep -q 'fprof and flat' csv.err || mi_why_add "analyse --style tree --csv is not refused with a reason"
mi_verdict "analyse --csv: fprof and flat tables with the JSON's figures and keys" "$why" csv.out check err stderr
mi_finish
