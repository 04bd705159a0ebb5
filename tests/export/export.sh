# export.sh — `inspect export` read back by the consumers: callgrind files by
# callgrind_annotate (valgrind), folded stacks by python3 and flamegraph.pl
# when installed, Chrome trace JSON by python3's json.  The run is
# tests/session/known under `meminst --mim --trace=wall`: 7 calls of
# traced functions (main, alloc_big, alloc_small, burn_a, burn_b, work x2),
# 10 MiB + 640000 bytes allocated by alloc_big and alloc_small.  Totals must
# match the profile's (`inspect analyse --json`): own time to within 1 ns
# per line (each line is rounded to ns), bytes exactly.  A program killed by
# SIGKILL with calls open still leaves a session that exports.
. "$top_srcdir/tests/session/session_lib.sh"

ss_known s.db --mim --trace=wall --interval=20ms
"$INSPECT" analyse --json s.db >a.json 2>a.err || mi_fail "analyse --json" "exited $?" a.err stderr
# The profile's totals: own time in ns, bytes allocated by functions.
/usr/bin/python3 - a.json <<'PY' >totals 2>&1
import json, sys
a = json.load(open(sys.argv[1]))
# (the exports show the pauses analyse keeps out, <preempted> ..., as frames of their own)
own = round((a["totals"]["own_ms"] + a["totals"]["kept_out_ms"]) * 1e6)
b = sum(f["own_bytes"] for t in a["threads"] for f in t["functions"]
        if f["name"] not in ("<alloc>", "suspend", "undefined"))
print(own, b)
PY
read -r OWN BYTES <totals

# ------------------------------------------------------------ callgrind --
why=
"$INSPECT" export --format callgrind -o cg.out s.db 2>cg.err || mi_why_add "export exited $?"
if command -v callgrind_annotate >/dev/null; then
	callgrind_annotate --threshold=100 cg.out >cg.txt 2>cga.err || mi_why_add "callgrind_annotate exited $?"
	grep -qi 'warning\|error' cga.err && mi_why_add "callgrind_annotate complained"
	/usr/bin/python3 - cg.txt "$OWN" "$BYTES" <<'PY' >cg.check 2>&1 || mi_why_add "$(tail -n 1 cg.check)"
import re, sys
text = open(sys.argv[1]).read()
own, want_bytes = int(sys.argv[2]), int(sys.argv[3])
m = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
assert m, "no PROGRAM TOTALS line with both events"
t, b = (int(x.replace(",", "")) for x in m.groups())
assert abs(t - own) <= 20, "Time total %d, the profile's own time %d" % (t, own)
assert b == want_bytes, "Bytes total %d, the profile's %d" % (b, want_bytes)
m = re.search(r"^\s*[\d,]+ \(\s*[\d.]+%\)\s+([\d,]+) \(\s*[\d.]+%\)\s+\S*known\.c:alloc_big$", text, re.M)
assert m and int(m.group(1).replace(",", "")) == 40 * 256 * 1024, "alloc_big's own bytes"
PY
	mi_verdict "callgrind: callgrind_annotate reads it, totals match the profile" "$why" \
		cg.check check cga.err "callgrind_annotate stderr" cg.err stderr
else
	echo "skip  callgrind read by callgrind_annotate: valgrind is not installed (apt-get install valgrind)"
fi

# --------------------------------------------------------------- folded --
why=
"$INSPECT" export --format folded -o time.folded s.db 2>f.err || mi_why_add "time: exited $?"
"$INSPECT" export --format folded --metric bytes -o bytes.folded s.db 2>>f.err ||
	mi_why_add "bytes: exited $?"
/usr/bin/python3 - time.folded bytes.folded "$OWN" "$BYTES" <<'PY' >f.check 2>&1 || mi_why_add "$(tail -n 1 f.check)"
import sys
def read(path):
    rows = {}
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        assert stack and n.isdigit(), "not a folded line: %r" % line
        assert stack not in rows, "stack twice: %s" % stack
        rows[stack] = int(n)
    return rows
t, b = read(sys.argv[1]), read(sys.argv[2])
own, want = int(sys.argv[3]), int(sys.argv[4])
assert abs(sum(t.values()) - own) <= len(t), "time: sum %d, own time %d" % (sum(t.values()), own)
assert sum(b.values()) == want, "bytes: sum %d, profile %d" % (sum(b.values()), want)
assert b.get("main;alloc_big") == 40 * 256 * 1024, "main;alloc_big bytes: %s" % b.get("main;alloc_big")
assert b.get("main;alloc_small") == 10000 * 64, "main;alloc_small bytes"
# (the time split itself is report.sh's: a wall clock on a busy machine blurs it)
assert "main;burn_a;work" in t and "main;burn_b;work" in t, "no work under burn_a and burn_b"
assert "main;alloc_big;<alloc>" in t, "no allocator time under alloc_big"
PY
mi_verdict "folded: stacks sum to the profile's own time and bytes" "$why" f.check check f.err stderr

FG=$(command -v flamegraph.pl || command -v flamegraph)
if [ -n "$FG" ]; then
	why=
	"$FG" time.folded >fg.svg 2>fg.err || mi_why_add "$FG exited $?"
	grep -q '<svg' fg.svg || mi_why_add "no SVG"
	grep -q 'alloc_big' fg.svg || mi_why_add "alloc_big is not in the SVG"
	mi_verdict "folded: $FG draws it" "$why" fg.err stderr
else
	echo "skip  folded read by flamegraph.pl: not installed (Debian's flamegraph package, Debian 13 and later)"
fi

# --------------------------------------------------------------- chrome --
why=
"$INSPECT" export --format chrome -o c.json s.db 2>c.err || mi_why_add "exited $?"
"$INSPECT" export --format chrome --min-duration 1 -o c1.json s.db 2>c1.err || mi_why_add "--min-duration: exited $?"
/usr/bin/python3 - c.json c1.json c1.err "$BYTES" <<'PY' >c.check 2>&1 || mi_why_add "$(tail -n 1 c.check)"
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
calls = [e for e in ev if e["ph"] == "X" and e["cat"] == "call"]
names = sorted(e["name"] for e in calls)
want = sorted(["main", "alloc_big", "alloc_small", "burn_a", "burn_b", "work", "work"])
assert names == want, "call events: %s" % names
for e in ev:
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int), e
main = [e for e in calls if e["name"] == "main"][0]
for e in calls:
    assert main["ts"] <= e["ts"] and e["ts"] + e["dur"] <= main["ts"] + main["dur"] + 0.001, \
        "%s is not inside main" % e["name"]
assert sum(1 for e in ev if e["ph"] == "X" and e["cat"] == "alloc") >= 20080, "allocator events"
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in ev), "no thread names"
live = [e["args"]["bytes"] for e in ev if e["ph"] == "C" and e["name"] == "live bytes"]
assert live and max(live) >= 40 * 256 * 1024 + 640000, "live bytes counter: %s" % live[:5]
alloc = [e["args"]["bytes"] for e in ev if e["ph"] == "C" and e["name"] == "allocated bytes"]
assert alloc and max(alloc) >= int(sys.argv[4]), "allocated bytes counter"
d1 = json.load(open(sys.argv[2]))
n1 = sum(1 for e in d1["traceEvents"] if e["ph"] == "X")
n0 = sum(1 for e in ev if e["ph"] == "X")
i1 = sum(1 for e in d1["traceEvents"] if e["ph"] == "i") # written with their allocator events
m = re.search(r"(\d+) events shorter than 1 us left out, (\d+) written", open(sys.argv[3]).read())
assert m, "--min-duration: no line saying what was left out"
assert int(m.group(1)) == n0 - n1 and int(m.group(2)) == n1 + i1, "--min-duration: counts %s, %d-%d" % (m.groups(), n0, n1)
assert all(e["dur"] >= 1 for e in d1["traceEvents"] if e["ph"] == "X"), "a short event is left"
# allocations: the allocator's time without arguments (speedscope keys frames by them), the bytes as
# instant events
assert all("args" not in e for e in ev if e["ph"] == "X"), "a complete event with arguments"
inst = [e for e in ev if e["ph"] == "i" and e["cat"] == "alloc"]
assert len(inst) >= 10000 + 40, "instant allocation events: %d" % len(inst)
assert sum(e["args"]["bytes"] for e in inst) >= int(sys.argv[4]), "instant events' bytes"
assert all(e["s"] == "t" and e["ts"] >= 0 for e in inst), "instant events' scope or time"
PY
mi_verdict "chrome: valid JSON, one event per call, nested, memory counters, allocations, --min-duration" \
	"$why" c.check check c.err stderr c1.err "stderr (--min-duration)"

# The size bound: --max-size leaves out the shortest events and says so; the
# long ones (the calls) stay; --max-size 0 writes everything.
why=
"$INSPECT" export --format chrome --max-size 400k -o cm.json s.db 2>cm.err || mi_why_add "--max-size: exited $?"
"$INSPECT" export --format chrome --max-size 0 -o c0.json s.db 2>>cm.err || mi_why_add "--max-size 0: exited $?"
/usr/bin/python3 - cm.json c0.json c.json cm.err <<'PY' >cm.check 2>&1 || mi_why_add "$(tail -n 1 cm.check)"
import json, os, re, sys
size = os.path.getsize(sys.argv[1])
assert 0 < size <= 400 * 1024, "--max-size 400k: %d bytes" % size
d = json.load(open(sys.argv[1]))["traceEvents"]
m = re.search(r"(\d+) events shorter than ([\d.e+-]+) us left out to keep the file under (\S+ \S+), (\d+) written"
              r" \(--max-size 0 writes every event", open(sys.argv[4]).read())
assert m, "no line saying what --max-size left out"
kept = [e for e in d if e["ph"] in "Xi"]
assert int(m.group(4)) == len(kept), "written %s, the file has %d" % (m.group(4), len(kept))
full = json.load(open(sys.argv[3]))["traceEvents"]
assert int(m.group(1)) == sum(1 for e in full if e["ph"] == "X") - sum(1 for e in d if e["ph"] == "X"), "left out"
cut = float(m.group(2))
assert all(e["dur"] >= cut - 0.002 for e in d if e["ph"] == "X"), "an event shorter than the cut"
assert sorted(e["name"] for e in d if e["ph"] == "X" and e["cat"] == "call") == \
    sorted(e["name"] for e in full if e["ph"] == "X" and e["cat"] == "call"), "calls were left out"
assert os.path.getsize(sys.argv[2]) == os.path.getsize(sys.argv[3]), "--max-size 0 is not everything"
PY
mi_verdict "chrome: --max-size bounds the file, says what it left out" "$why" cm.check check cm.err stderr

# The cut is fine-grained: 20,000 calls lasting 6 ns to 120 us, evenly
# spread; bounds of 30%, 50% and 74% of the whole file give a file within
# 15% under the bound (a cut by powers of two gave as little as 46%).
why=
awk 'BEGIN { print "header clock wall hz 1000000000"; print "1 start 0 100 main"; t = 10
	for (i = 1; i <= 20000; i++) {
		printf "1 call %.0f 0x1000\n", t; t += 6 * i; printf "1 ret %.0f 0x1000\n", t; t += 5
		if (i % 2000 == 0) print "1 flush"
	}
	printf "1 exit %.0f\n", t }' >spread.script
"$top_builddir/tests/profile/tracegen" spread.trace <spread.script 2>sp.err || mi_why_add "tracegen exited $?"
"$INSPECT" export --format chrome --max-size 0 -o sp0.json spread.trace 2>>sp.err || mi_why_add "--max-size 0 exited $?"
full=$(wc -c <sp0.json)
for pct in 30 50 74; do
	bound=$((full * pct / 100))
	"$INSPECT" export --format chrome --max-size $bound -f -o sp.json spread.trace 2>>sp.err ||
		mi_why_add "--max-size $bound exited $?"
	got=$(wc -c <sp.json)
	[ "$got" -le "$bound" ] && [ $((got * 100)) -ge $((bound * 85)) ] ||
		mi_why_add "--max-size $bound ($pct% of $full): $got bytes"
done
mi_verdict "chrome: --max-size cuts close under the bound" "$why" sp.err stderr

# ----------------------------------------------------------- bad input --
why=
"$INSPECT" export s.db >/dev/null 2>u.err
[ $? -eq 2 ] || mi_why_add "no --format: not exit status 2"
"$INSPECT" export --format svg s.db >/dev/null 2>>u.err
[ $? -eq 2 ] || mi_why_add "--format svg: not exit status 2"
"$INSPECT" export --format callgrind --metric bytes s.db >/dev/null 2>>u.err
[ $? -eq 2 ] || mi_why_add "--metric with callgrind: not exit status 2"
[ "$(wc -l <u.err)" -eq 3 ] || mi_why_add "not one line per mistake"
"$LAUNCH" -q --mim --no-time -o m.db -- "$KNOWN" >out 2>err
"$INSPECT" export --format chrome m.db >/dev/null 2>m.err
[ $? -eq 1 ] || mi_why_add "a session without a trace: not exit status 1"
grep -q 'no trace' m.err || mi_why_add "no line saying there is no trace"
mi_verdict "usage errors and a session without a trace" "$why" u.err stderr m.err "stderr (no trace)"

# Foreign and damaged input: exit 3 (inspect(1), "cannot be read or is not
# valid") and one line in every format and in html; a file cut short says
# so.  t.trace is the session's stored trace.
why=
sqlite3_blob() { /usr/bin/python3 -c 'import sqlite3, sys
d = sqlite3.connect(sys.argv[1]).execute("SELECT data FROM session_trace ORDER BY seq LIMIT 1").fetchone()[0]
open(sys.argv[2], "wb").write(d)' "$@"; }
sqlite3_blob s.db t.trace || mi_why_add "cannot take the trace out of s.db"
cp "$top_srcdir/README.md" text.in
: >empty.in
head -c 5 t.trace >magic.in
head -c 4096 s.db >db.in
for input in text empty magic db; do
	for fmt in callgrind folded chrome pprof html; do
		if [ $fmt = html ]; then
			"$INSPECT" html -o bad.html $input.in >/dev/null 2>bad.err
		else
			"$INSPECT" export --format $fmt -o bad.out $input.in >/dev/null 2>bad.err
		fi
		rc=$?
		[ $rc -eq 3 ] || mi_why_add "$fmt of $input.in: exit status $rc, not 3"
		[ "$(wc -l <bad.err)" -eq 1 ] || mi_why_add "$fmt of $input.in: not one line: $(cat bad.err)"
		case $input in magic | db)
			grep -q 'truncated' bad.err || mi_why_add "$fmt of $input.in does not say truncated: $(cat bad.err)"
		esac
		cat bad.err >>bad.all
	done
done
# export_bad FORMAT INPUT: INPUT exported in FORMAT (html: inspect html),
# stderr in bad.err; the exit status is inspect's.
export_bad() {
	if [ "$1" = html ]; then
		"$INSPECT" html -o bad.html "$2" >/dev/null 2>bad.err
	else
		"$INSPECT" export --format "$1" -o bad.out "$2" >/dev/null 2>bad.err
	fi
}
# a profile database (inspect profile -o): callgrind reads it, the others say it has no stacks, exit 3
"$INSPECT" profile -o prof.db t.trace >/dev/null 2>bad.err || mi_why_add "inspect profile -o exited $?"
"$INSPECT" export --format callgrind -o prof.cg prof.db 2>bad.err || mi_why_add "callgrind of a profile database exited $?"
for fmt in folded chrome pprof html; do
	export_bad $fmt prof.db
	rc=$?
	[ $rc -eq 3 ] || mi_why_add "$fmt of a profile database: exit status $rc, not 3"
	[ "$(wc -l <bad.err)" -eq 1 ] && grep -q 'profile database' bad.err ||
		mi_why_add "$fmt of a profile database: $(cat bad.err)"
	cat bad.err >>bad.all
done
# a trace cut before its first call: the same exit status 1 and line in every format
head -c 1000 t.trace >nothing.trace
for fmt in callgrind folded chrome pprof html; do
	export_bad $fmt nothing.trace
	rc=$?
	[ $rc -eq 1 ] || mi_why_add "$fmt of a trace of nothing: exit status $rc, not 1"
	tail -n 1 bad.err | grep -q 'no function calls and no samples' || mi_why_add "$fmt of a trace of nothing: $(cat bad.err)"
	cat bad.err >>bad.all
done
mi_verdict "foreign and cut-short input: exit 3, one line, the same in every format" "$why" bad.all stderr

# ------------------------------------------------- a made-up trace ----
# Tracing starts inside 0x1000, itself called by 0x4000 (returns from
# functions never entered): the empty-stack time is theirs, and the calls
# made from the empty stack hang under them; a suspension is nobody's own
# time; the unknown caller of the last call is left out of its stack.
why=
cat >u.script <<'EOF'
header clock wall hz 1000000000
1 start 0 100 main
1 call 10 0x2000
1 alloc 12 14 1 100
1 ret 20 0x2000
1 ret 30 0x1000
1 call 35 0x3000
1 ret 40 0x3000
1 ret 50 0x4000
1 call 60 0x2000
1 suspend 62 70 1
1 ret 75 0x2000
1 exit 80
EOF
"$top_builddir/tests/profile/tracegen" u.trace <u.script 2>u.err || mi_why_add "tracegen exited $?"
"$INSPECT" export --format folded u.trace >u.folded 2>>u.err || mi_why_add "folded: exited $?"
cat >u.want <<'EOF'
0x2000 7
0x4000 15
0x4000;0x1000 20
0x4000;0x1000;0x2000 8
0x4000;0x1000;0x2000;<alloc> 2
0x4000;0x3000 5
EOF
cmp -s u.want u.folded || mi_why_add "folded stacks differ"
"$INSPECT" export --format folded --metric bytes u.trace >u.bytes 2>>u.err
[ "$(cat u.bytes)" = "0x4000;0x1000;0x2000 100" ] || mi_why_add "bytes: $(cat u.bytes)"
"$INSPECT" export --format callgrind u.trace 2>>u.err | grep -q '^totals: 57 100$' ||
	mi_why_add "callgrind totals are not 57 ns and 100 bytes"
"$INSPECT" export --format chrome u.trace >u.json 2>>u.err || mi_why_add "chrome: exited $?"
/usr/bin/python3 - u.json <<'PY' >u.check 2>&1 || mi_why_add "$(tail -n 1 u.check)"
import json, sys
ev = [(e["name"], e["ts"], e["dur"]) for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
for want in [("0x4000", 0, 0.05), ("0x1000", 0, 0.03), ("0x2000", 0.01, 0.01), ("0x3000", 0.035, 0.005),
             ("<alloc>", 0.012, 0.002), ("suspend (sleep)", 0.062, 0.008), ("0x2000", 0.06, 0.015)]:
    assert want in ev, "no event %s in %s" % (want, ev)
assert len(ev) == 7, ev
PY
mi_verdict "a made-up trace: untraced entries, <alloc>, suspend in every format" "$why" \
	u.folded folded u.check check u.err stderr

# --------------------------------------------------------------- killed --
why=
# (in a subshell: the shell's own "Killed" line goes to /dev/null)
("$LAUNCH" -q --mim --trace=wall -o k.db -- "$top_builddir/tests/export/killed" \
	>out 2>k.err; exit $?) 2>/dev/null
[ $? -eq 137 ] || mi_why_add "meminst did not pass SIGKILL on (status $?)"
"$INSPECT" export --format callgrind -o k.cg k.db 2>>k.err || mi_why_add "callgrind: exited $?"
if command -v callgrind_annotate >/dev/null; then
	callgrind_annotate --threshold=100 k.cg >k.txt 2>&1 || mi_why_add "callgrind_annotate exited $?"
	grep -q 'killed.c:step' k.txt || mi_why_add "step is not in the callgrind file"
fi
"$INSPECT" export --format folded -o k.folded k.db 2>>k.err || mi_why_add "folded: exited $?"
grep -q '^main;step;leaf ' k.folded || mi_why_add "no main;step;leaf stack"
"$INSPECT" export --format chrome -o k.json k.db 2>>k.err || mi_why_add "chrome: exited $?"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert any(e.get("name") == "main" for e in d["traceEvents"])' \
	k.json 2>>k.err || mi_why_add "chrome: not valid JSON with main in it"
# (its first stacks shown on a failure: once, under a distcheck's load, no
# main;step;leaf was found in a trace cut at 1.9 MB, not understood)
mi_verdict "a program killed by SIGKILL: its session exports" "$why" k.err stderr k.folded "folded stacks"
mi_finish
