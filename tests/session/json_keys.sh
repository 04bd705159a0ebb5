# json_keys.sh — one JSON vocabulary for every command (inspect(1), JSON):
# each command's --json document, on a session of tests/session/known
# (memory, exact trace) and on a sampled one, uses only the keys listed in
# the man page, and none of the words the vocabulary replaced (cnt, own,
# acc, elapsed, seconds, size, location …): times end in _ms, sizes in
# _bytes, counts of blocks in _blocks, locations are file and line.
. "$top_srcdir/tests/integration/lib.sh"
mi_need /usr/bin/python3 python3

export MEMINST_LIBRARY="$MEMINST_LIB"
INSPECT=$top_builddir/inspect/inspect
PROG=$top_builddir/tests/session/known
cd "$MI_TMP" || exit 99

why=
"$top_builddir/session/meminst" -q --mim --trace --interval=20ms -o s.db -- "$PROG" >out 2>err ||
	mi_why_add "meminst --trace exited $?"
"$top_builddir/session/meminst" -q --mis --sample=1000 --alloc-sample=64k -o p.db -- "$PROG" >out 2>>err ||
	mi_why_add "meminst --sample exited $?"

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
status --total --allocators --classes --types --threads s.db
types s.db
type s.db 1
class s.db 1
allocator s.db 0
header-size s.db
timeline s.db
report s.db
analyse s.db
analyse --totals s.db
analyse --style flat p.db
analyse --style tree p.db
analyse --style callers p.db
analyse --style anomalies p.db
report p.db'
n=0
echo "$cases" | while read -r args; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$INSPECT" $args --json >"doc$n.json" 2>>err || echo "inspect $args --json: exit $?" >>failed
	echo "doc$n.json inspect $args" >>docs
done
[ -s failed ] && mi_why_add "$(head -n 3 failed | tr '\n' ';')"

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
mi_finish
