#!/bin/sh
# callsites.sh — the callgrind export of an exact trace with call sites
# (meminst --trace-sites) puts each call on the line it is made from, read
# back by callgrind_annotate --auto=yes --inclusive=yes: the program
# tests/export/callsites.c (gcc -g, -O0 and -O1, -finstrument-functions)
# calls work() from two lines of caller() and rec() from itself.
#   - the calls= lines of caller's block: work 100 times at the heavy line
#     with 100000 bytes, 300 times at the light line with 3000 bytes;
#     rec->rec 5 times and rec->work 6 times (42 bytes) at their lines;
#   - every caller->called pair of `inspect analyse --json`: its calls, ACC
#     bytes and ACC time are the sums of its call lines (time to 1 ns a
#     line);
#   - callgrind_annotate shows the two calls of work under the two source
#     lines, with those figures;
#   - without --trace-sites the calls stay on the caller's first line and
#     the file says why in a comment.
# Skipped without callgrind_annotate (valgrind) or gcc.
. "$top_srcdir/tests/session/session_lib.sh"

SRC=$top_srcdir/tests/export/callsites.c
command -v callgrind_annotate >/dev/null 2>&1 || { echo "skip  callsites: callgrind_annotate (valgrind) is not installed"; exit 77; }
command -v gcc >/dev/null 2>&1 || { echo "skip  callsites: gcc is not installed"; exit 77; }
at() { grep -n "/\* $1 \*/" "$SRC" | cut -d: -f1; }
LINES="heavy=$(at CALL_HEAVY) light=$(at CALL_LIGHT) self=$(at CALL_REC_SELF) recwork=$(at CALL_REC_WORK)"

for opt in O0 O1; do
	why=
	gcc -g -$opt -finstrument-functions "$SRC" -o "cs-$opt" 2>cc.err ||
		{ mi_verdict "gcc -$opt builds callsites.c" "exit $?" cc.err stderr; continue; }
	"$LAUNCH" -q --trace=cpu --trace-sites -o "$opt.db" -- "./cs-$opt" >out 2>err ||
		mi_why_add "meminst exited $?"
	"$INSPECT" analyse --json "$opt.db" >"$opt.json" 2>>err || mi_why_add "analyse exited $?"
	"$INSPECT" export --format callgrind -o "$opt.cg" "$opt.db" 2>>err || mi_why_add "export exited $?"
	callgrind_annotate --auto=yes --inclusive=yes "$opt.cg" >"$opt.txt" 2>cga.err ||
		mi_why_add "callgrind_annotate exited $?"
	grep -qi 'warning\|error' cga.err && mi_why_add "callgrind_annotate complained: $(head -n 1 cga.err)"
	# shellcheck disable=SC2086
	/usr/bin/python3 - "$opt.json" "$opt.cg" "$opt.txt" $LINES <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json, re, sys
a, cg_path, ann_path = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
line = {k: int(v) for k, v in (x.split("=") for x in sys.argv[4:])}
# the callgrind file: names of (id), and (caller, called) -> [(line, calls, time, bytes)]
names, calls, fn, cfn, pending = {}, {}, None, None, None
def name(v):
    m = re.match(r"\((\d+)\)(?: (.*))?$", v)
    if m.group(2) is not None:
        names[("f", m.group(1))] = m.group(2)
    return names[("f", m.group(1))]
for raw in open(cg_path):
    l = raw.rstrip("\n")
    if l.startswith("fn="):
        fn = name(l[3:])
    elif l.startswith("cfn="):
        cfn = name(l[4:])
    elif l.startswith("calls="):
        pending = int(l[6:].split()[0])
    elif pending is not None and re.match(r"\d", l):
        ln, t, b = (int(x) for x in l.split())
        calls.setdefault((fn, cfn), []).append((ln, pending, t, b))
        pending = None
# every pair of the profile is the sum of its call lines
for th in a["threads"]:
    for f in th["functions"]:
        for c in f["called"]:
            if f["name"] == "undefined":
                continue
            rows = calls.get((f["name"], c["name"]), [])
            assert sum(r[1] for r in rows) == c["calls"], "%s->%s: %d calls in callgrind, analyse %d" % (
                f["name"], c["name"], sum(r[1] for r in rows), c["calls"])
            t = sum(r[2] for r in rows)
            assert abs(t - c["acc_ms"] * 1e6) <= len(rows) + 1, "%s->%s: %d ns, analyse %.6f ms" % (
                f["name"], c["name"], t, c["acc_ms"])
            if c["name"] != "<alloc>":
                assert sum(r[3] for r in rows) == c["acc_bytes"], "%s->%s: bytes" % (f["name"], c["name"])
def at(pair, ln):
    return [r for r in calls.get(pair, []) if r[0] == ln]
for pair, ln, n, b in [(("caller", "work"), line["heavy"], 100, 100000), (("caller", "work"), line["light"], 300, 3000),
                       (("rec", "rec"), line["self"], 5, None), (("rec", "work"), line["recwork"], 6, 42)]:
    rows = at(pair, ln)
    assert len(rows) == 1 and rows[0][1] == n, "%s->%s at line %d: %s (all its calls: %s)" % (
        pair[0], pair[1], ln, rows, calls.get(pair))
    assert b is None or rows[0][3] == b, "%s->%s at line %d: %d bytes, not %d" % (pair[0], pair[1], ln, rows[0][3], b)
heavy_t, light_t = at(("caller", "work"), line["heavy"])[0][2], at(("caller", "work"), line["light"])[0][2]
assert heavy_t > light_t, "the heavy line %d ns, the light one %d" % (heavy_t, light_t)
# callgrind_annotate: the source line, then "=> FILE:work (Nx)" with its inclusive costs
ann = open(ann_path).read().split("\n")
num = r"([\d,]+)(?: \(\s*[\d.]+%\))?"
for marker, n, t, b in [("CALL_HEAVY", 100, heavy_t, 100000), ("CALL_LIGHT", 300, light_t, 3000)]:
    i = next((k for k, l in enumerate(ann) if "/* %s */" % marker in l), None)
    assert i is not None, "annotation: no source line %s" % marker
    m = re.match(r"^\s*" + num + r"\s+" + num + r"\s+=> \S*:work \((\d+)x\)", ann[i + 1])
    assert m, "annotation: no call of work under %s: %r" % (marker, ann[i + 1])
    got = [int(x.replace(",", "")) for x in m.groups()]
    assert got == [t, b, n], "annotation under %s: %s, want %s" % (marker, got, [t, b, n])
PY
	mi_verdict "-$opt --trace-sites: calls at their lines, the pairs' figures, callgrind_annotate" "$why" \
		check check "$opt.cg" callgrind "$opt.txt" annotation err stderr
done

# Without call sites: every call of work from caller on one line, and a comment says why.
why=
"$LAUNCH" -q --trace=cpu -o plain.db -- ./cs-O0 >out 2>err || mi_why_add "meminst exited $?"
"$INSPECT" export --format callgrind -o plain.cg plain.db 2>>err || mi_why_add "export exited $?"
grep -q '^# calls are on their callers. first lines: the trace has no call sites' plain.cg ||
	mi_why_add "no comment saying the trace has no call sites"
/usr/bin/python3 - plain.cg <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import re, sys
names, rows, fn, cfn, pending = {}, [], None, None, None
def name(v):
    m = re.match(r"\((\d+)\)(?: (.*))?$", v)
    if m.group(2) is not None:
        names[m.group(1)] = m.group(2)
    return names[m.group(1)]
for l in open(sys.argv[1]):
    if l.startswith("fn="):
        fn = name(l[3:].strip())
    elif l.startswith("cfn="):
        cfn = name(l[4:].strip())
    elif l.startswith("calls="):
        pending = int(l[6:].split()[0])
    elif pending is not None and re.match(r"\d", l):
        if (fn, cfn) == ("caller", "work"):
            rows.append((int(l.split()[0]), pending))
        pending = None
assert len(rows) == 1 and rows[0][1] == 400, "caller's calls of work: %s, not 400 on one line" % rows
PY
mi_verdict "without --trace-sites: calls on the caller's first line, a comment says why" "$why" \
	check check plain.cg callgrind err stderr

mi_finish
