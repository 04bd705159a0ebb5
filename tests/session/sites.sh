# sites.sh — sites a user can act on (issue 26): stacks under the rows of
# top, report and diff, a malloc in an inlined function named after its
# own line everywhere, allocation wrappers seen through by default.  The
# programs are built here (g++/gcc -g):
#   sites_kv.cc (-O2): several sites named Cache::put on one line; run by
#     the launcher's default, their text rows have distinct stacks (top
#     --stacks N, report's first 5 by default), each reaching main; JSON
#     has the frames as objects, CSV one ' <- ' cell; --stacks none and
#     --stacks 3 show none and 3; a bad --stacks is one line, exit 2;
#   sites_inline.c (-O2, always_inline): the site is leak_some at the line
#     of the malloc in top, report, the pprof export (go tool pprof -raw,
#     skipped without go), folded and callgrind (allocation samples), with
#     main's line of the call as its next frame, at site depths 1 and user
#     and the launcher's default; diff --stacks 2 of it and sites_kv: two
#     stacks in text and JSON;
#   sites_wrap.c: a library's xmalloc and jv_mem_alloc (built-in list) and
#     my_alloc (no list): by default the sites are their callers fill_x
#     (100 blocks) and fill_j (10), my_alloc itself (5); --site-skip=my_alloc
#     adds fill_m; --site-skip=none names the three wrappers.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
command -v g++ >/dev/null || { echo "skip  $MI_NAME: no g++"; exit 77; }
S=$top_srcdir/tests/session

# rows FILE: the rows of a text table with their stack lines, as JSON
# [[row line, [frame lines]], …] in rows.json
rows() {
	/usr/bin/python3 - "$1" >rows.json <<'PY'
import json, re, sys
out, cur = [], None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if re.match(r"^ *[0-9]+ ", line):
        cur = [line, []]
        out.append(cur)
    elif re.match(r"^    (  |<-) ", line) and cur is not None:
        cur[1].append(line[7:])
    else:
        cur = None
print(json.dumps(out))
PY
}

# ---------------------------------------------------------------- kv --
why=
g++ -g -O2 "$S/sites_kv.cc" -o kv 2>cc.err || mi_why_add "g++ exited $?"
"$LAUNCH" -q --mim -o kv.db -- ./kv >out 2>err || mi_why_add "meminst exited $?"
"$INSPECT" top --by site --stacks 20 kv.db >top.txt 2>>err || mi_why_add "top exited $?"
rows top.txt
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json
rows = json.load(open("rows.json"))
put = [r for r in rows if "Cache::put" in r[0]]
assert len(put) >= 3, "%d rows named Cache::put: %s" % (len(put), [r[0] for r in rows])
stacks = ["\n".join(r[1]) for r in put]
assert all(stacks), "a Cache::put row without frames"
assert len(set(stacks)) == len(stacks), "two Cache::put rows with the same stack:\n%s" % "\n--\n".join(stacks)
assert all(any(f.startswith("main at ") for f in r[1]) for r in put), "a stack without main"
PY
mi_verdict "same-named sites told apart by their stacks in top's text" "$why" top.txt stdout

# heaptrack_print -a/-T/-p/-l give every site its stack; top --by an event
# count takes --stacks as top --by site does, and its JSON has them all.
why=
"$INSPECT" top --by calls --stacks 3 kv.db >calls.txt 2>err || mi_why_add "top --by calls exited $?"
rows calls.txt
n=$(/usr/bin/python3 -c 'import json; print(sum(1 for r in json.load(open("rows.json")) if r[1]))')
[ "$n" = 3 ] || mi_why_add "top --by calls --stacks 3: $n rows with frames"
"$INSPECT" top --by peak --json kv.db >peak.json 2>>err || mi_why_add "top --by peak --json exited $?"
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json
put = [r for r in json.load(open("peak.json"))["top"] if "Cache::put" in r["name"]]
assert len(put) >= 3 and all(r.get("stack") for r in put), "Cache::put rows without a stack: %s" % put
assert len(set(json.dumps(r["stack"]) for r in put)) == len(put), "two Cache::put rows with one stack"
PY
mi_verdict "top --by calls|peak: --stacks in text, every row's stack in JSON" "$why" calls.txt stdout

why=
"$INSPECT" top --by site --stacks none kv.db >none.txt 2>err || mi_why_add "--stacks none exited $?"
grep -q '^    <- ' none.txt && mi_why_add "--stacks none shows frames"
"$INSPECT" top --by site --stacks 3 kv.db >three.txt 2>>err || mi_why_add "--stacks 3 exited $?"
rows three.txt
n=$(/usr/bin/python3 -c 'import json; print(sum(1 for r in json.load(open("rows.json")) if r[1]))')
[ "$n" = 3 ] || mi_why_add "--stacks 3: $n rows with frames"
"$INSPECT" top --by site kv.db >dflt.txt 2>>err || mi_why_add "top exited $?"
grep -q '^    <- ' dflt.txt && mi_why_add "top without --stacks shows frames"
"$INSPECT" top --live-at-exit kv.db >leak.txt 2>>err || mi_why_add "top --live-at-exit exited $?"
rows leak.txt
n=$(/usr/bin/python3 -c 'import json; r = json.load(open("rows.json")); print(sum(1 for x in r if x[1]), len(r))')
[ "$n" = "5 $(echo "$n" | cut -d' ' -f2)" ] && [ "${n#* }" -gt 5 ] || mi_why_add "top --live-at-exit: rows with frames, rows: $n (expected 5 of more)"
"$INSPECT" report kv.db >report.txt 2>>err || mi_why_add "report exited $?"
sed -n '/^still live at exit/,/^$/p' report.txt >exit.txt
rows exit.txt
n=$(/usr/bin/python3 -c 'import json; print(sum(1 for x in json.load(open("rows.json")) if x[1]))')
[ "$n" = 5 ] || mi_why_add "report's live at exit: $n rows with frames, expected 5"
for bad in 0 x -1; do
	"$INSPECT" top --stacks "$bad" kv.db >bad.out 2>bad.err && mi_why_add "--stacks $bad: exit 0"
	[ "$(wc -l <bad.err)" = 1 ] && grep -q -- --stacks bad.err || mi_why_add "--stacks $bad: $(cat bad.err)"
done
mi_verdict "--stacks none, 3, the defaults (top none, report and live at exit 5), bad values" "$why" err stderr

why=
"$INSPECT" top --by site --json kv.db >top.json 2>err || mi_why_add "top --json exited $?"
"$INSPECT" top --by site --csv kv.db >top.csv 2>>err || mi_why_add "top --csv exited $?"
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import csv, json
top = json.load(open("top.json"))["top"]
assert all(isinstance(r["stack"], list) and r["stack"] for r in top if r["id"] is not None), "a row without frames"
put = [r for r in top if "Cache::put" in r["name"]]
for r in put:
    f = r["stack"]
    assert set(f[0]) == {"function", "file", "line", "module", "inlined"}, f[0]
    assert f[-1]["function"] == "main" and f[-1]["inlined"] is False and f[-1]["line"] > 0, f[-1]
    assert any(x["function"].startswith("Cache::put") and x["inlined"] for x in f), f
rows = list(csv.DictReader(open("top.csv").read().split("\n\n")[-1].splitlines()))
assert any(" <- main at " in (r["stack"] or "") for r in rows), [r["stack"] for r in rows]
PY
mi_verdict "JSON: every site row's frames as objects; CSV: one ' <- ' cell" "$why" check stdout

# ------------------------------------------------------------ inline --
why=
gcc -g -O2 "$S/sites_inline.c" -o sites_inline 2>cc.err || mi_why_add "gcc exited $?"
LINE=$(grep -n 'line of the malloc' "$S/sites_inline.c" | cut -d: -f1)
CALL=$(grep -n 'line of the call' "$S/sites_inline.c" | cut -d: -f1)
for depth in "" --site-depth=1 --site-depth=user; do
	"$LAUNCH" -q -f --mim --interval 0 $depth --alloc-sample=1 -o in.db -- ./sites_inline >out 2>err || mi_why_add "meminst $depth exited $?"
	"$INSPECT" top --by site --stacks 1 in.db >in.txt 2>>err || mi_why_add "top exited $?"
	grep -q "leak_some (sites_inline) .*sites_inline.c:$LINE\$" in.txt || mi_why_add "$depth: top: no leak_some at line $LINE"
	grep -q "^    <- main at .*sites_inline.c:$CALL (sites_inline)" in.txt || mi_why_add "$depth: top: main:$CALL not under it"
	"$INSPECT" report in.db >rep.txt 2>>err || mi_why_add "report exited $?"
	sed -n '/^still live at exit/,/^$/p' rep.txt | grep -q "leak_some (sites_inline) .*sites_inline.c:$LINE\$" ||
		mi_why_add "$depth: report's live at exit: no leak_some at line $LINE"
	"$INSPECT" export --format folded --metric bytes -o - in.db >in.folded 2>>err || mi_why_add "folded exited $?"
	grep -q ";main;leak_some [0-9]" in.folded || mi_why_add "$depth: folded: no main;leak_some: $(grep -c . in.folded) stacks, $(grep -c leak_some in.folded) with leak_some"
	"$INSPECT" export --format callgrind -f -o in.cg in.db 2>>err || mi_why_add "callgrind exited $?"
	grep -A1 '^fn=([0-9]*) leak_some$' in.cg | grep -q "^$LINE " || mi_why_add "$depth: callgrind: leak_some's cost not on line $LINE"
	if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
		"$INSPECT" export --format pprof --snapshot 1 -f -o in.pb.gz in.db 2>>err || mi_why_add "pprof exited $?"
		HOME=$MI_TMP PPROF_TMPDIR=$MI_TMP GOCACHE=$MI_TMP/go-cache GOFLAGS= go tool pprof -raw in.pb.gz >in.raw 2>>err
		grep -A1 " leak_some .*sites_inline.c:$LINE " in.raw | grep -q "main .*sites_inline.c:$CALL " ||
			mi_why_add "$depth: pprof: no leak_some:$LINE in main:$CALL"
		grep -q 'type:\[leak_some (sites_inline)\]' in.raw || mi_why_add "$depth: pprof: the sample's type is not leak_some"
	fi
done
"$INSPECT" diff --json --stacks 2 in.db kv.db >diff.json 2>>err || mi_why_add "diff --json exited $?"
"$INSPECT" diff --stacks 2 in.db kv.db >diff.txt 2>>err || mi_why_add "diff exited $?"
/usr/bin/python3 - <<'PY' >check 2>&1 || mi_why_add "diff: $(tail -n 1 check)"
import json
t = json.load(open("diff.json"))["sites"]  # two programs: the diff of two runs
assert len(t) > 2 and all(r["stack"] for r in t[:2]) and not any(r["stack"] for r in t[2:]), t
PY
[ "$(grep -c '^       [^ ].*)$' diff.txt)" = 2 ] || mi_why_add "diff --stacks 2: $(grep -c '^       [^ ].*)$' diff.txt) stacks in text"
mi_verdict "a malloc in an inlined function: its own line in top, report, folded, callgrind, pprof" "$why" in.txt stdout

# ------------------------------------------------------------ wrappers --
why=
gcc -g -O1 -fPIC -shared -DWRAP_LIB "$S/sites_wrap.c" -o libsiteswrap.so 2>cc.err || mi_why_add "gcc lib exited $?"
gcc -g -O1 "$S/sites_wrap.c" -o sites_wrap -L. -lsiteswrap -Wl,-rpath,"$MI_TMP" 2>>cc.err || mi_why_add "gcc exited $?"
# wrap SKIP EXPECTED: the sites of the run with --site-skip=SKIP ("": none
# given) as "name:blocks" sorted, against EXPECTED
wrap() {
	"$LAUNCH" -q -f --mim ${1:+--site-skip=$1} -o w.db -- ./sites_wrap >out 2>err || mi_why_add "meminst exited $?"
	[ "$(cat out)" = "kept 115" ] || mi_why_add "stdout: $(cat out)"
	got=$("$INSPECT" top --by site --json w.db | /usr/bin/python3 -c '
import json, sys
print(" ".join(sorted("%s:%d" % (r["name"].split("+")[0].split(" ")[0], r["blocks"])
                      for r in json.load(sys.stdin)["top"] if r["blocks"] in (100, 10, 5))))')
	[ "$got" = "$2" ] || mi_why_add "--site-skip=$1: '$got', expected '$2'"
}
wrap "" "fill_j:10 fill_x:100 my_alloc:5"
wrap my_alloc "fill_j:10 fill_m:5 fill_x:100"
wrap none "jv_mem_alloc:10 my_alloc:5 xmalloc:100"
mi_verdict "wrappers: the built-in ones seen through by default, --site-skip adds, none turns off" "$why" err stderr
mi_finish
