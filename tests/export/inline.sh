#!/bin/sh
# inline.sh — the exports of samples show the functions inlined at a
# sampled address as frames of their own, like perf and pprof: the -O1 -g
# program tests/export/inline_target.cc (built with g++ and with clang++;
# a missing compiler is skipped) spends its time in mix_step and allocates
# its buffers in make_buffer, both always inlined (into churn and fill).
#   - folded: mix_step right under churn holds most of the time, make_buffer
#     right under fill most of the bytes; the totals are analyse's;
#   - callgrind (callgrind_annotate --auto=yes, valgrind; skipped without
#     it): mix_step is a function with most samples, called from churn at
#     the line of that call; its lines carry its samples;
#   - chrome: mix_step events on the sample track, each inside a churn event;
#   - html: the flame graph of the time has a mix_step frame.
# Without inline frames none of those functions would be named at all.
. "$top_srcdir/tests/session/session_lib.sh"

SRC=$top_srcdir/tests/export/inline_target.cc
CALL=$(grep -n '// line of the call of mix_step' "$SRC" | cut -d: -f1)
HOT=$(grep -n '// line of the hot loop' "$SRC" | cut -d: -f1)

for cxx in g++ clang++; do
	if ! command -v "$cxx" >/dev/null 2>&1; then
		echo "skip  $cxx: not installed"
		continue
	fi
	why=
	"$cxx" -g -O1 "$SRC" -o "inl-$cxx" 2>cc.err || { mi_verdict "$cxx builds inline_target.cc" "exit $?" cc.err stderr; continue; }
	"$LAUNCH" -q --sample=1000 --alloc-sample=64k --site-depth=1 -o "$cxx.db" -- "./inl-$cxx" >out 2>err ||
		mi_why_add "meminst exited $?"
	"$INSPECT" analyse --style flat --json "$cxx.db" >a.json 2>>err || mi_why_add "analyse exited $?"
	"$INSPECT" analyse --style flat --metric bytes --json "$cxx.db" >b.json 2>>err || mi_why_add "analyse bytes exited $?"
	for fmt in folded chrome; do
		"$INSPECT" export --format $fmt -f -o "x.$fmt" "$cxx.db" 2>>err || mi_why_add "$fmt exited $?"
	done
	"$INSPECT" export --format folded --metric bytes -f -o x.bytes "$cxx.db" 2>>err || mi_why_add "folded bytes exited $?"
	"$INSPECT" html -f -o x.html "$cxx.db" 2>>err || mi_why_add "html exited $?"
	/usr/bin/python3 - a.json b.json x.folded x.bytes x.chrome x.html <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json, re, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def folded(path):
    rows = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        rows.append((stack.split(";"), int(n)))
    return rows
def under(rows, outer, inner):
    """the value of the stacks whose innermost frame is inner, called by outer"""
    return sum(n for s, n in rows if len(s) > 1 and s[-1].startswith(inner) and s[-2].startswith(outer))
t, by = folded(sys.argv[3]), folded(sys.argv[4])
tt, tb = sum(n for _, n in t), sum(n for _, n in by)
assert abs(tt - a["ms"] * 1e6) <= len(t) + 1e-3 * tt, "folded time %d ns, analyse %.3f ms" % (tt, a["ms"])
assert abs(tb - b["bytes"]) <= len(by), "folded bytes %d, analyse %d" % (tb, b["bytes"])
mix = under(t, "churn", "mix_step")
# a quarter, not a half: cpu samples count the kernel's time too (the page
# faults of the buffers churn fills), under their user stacks
assert mix >= 0.25 * tt, "churn;mix_step: %d ns of %d" % (mix, tt)
assert not any("mix_step" in f for s, _ in t for f in s[:-1]), "mix_step not innermost"
buf = under(by, "fill", "make_buffer")
assert buf >= 0.8 * tb, "fill;make_buffer: %d bytes of %d" % (buf, tb)
ev = json.load(open(sys.argv[5]))["traceEvents"]
xs = [e for e in ev if e["ph"] == "X" and e.get("cat") == "sample"]
mixes = [e for e in xs if e["name"].startswith("mix_step")]
churns = [e for e in xs if e["name"].startswith("churn")]
assert mixes, "chrome: no mix_step event"
for m in mixes:
    assert any(c["tid"] == m["tid"] and c["ts"] <= m["ts"] + 1e-6 and m["ts"] + m["dur"] <= c["ts"] + c["dur"] + 1e-6
               for c in churns), "chrome: mix_step outside churn: %s" % m
h = open(sys.argv[6]).read()
d = json.loads(re.search(r'<script type="application/json" id="flame-time">(.*?)</script>', h, re.S).group(1))
assert any(n.startswith("mix_step") for n in d["names"]), "html: no mix_step frame"
PY
	if command -v callgrind_annotate >/dev/null; then
		"$INSPECT" export --format callgrind -f -o x.cg "$cxx.db" 2>>err || mi_why_add "callgrind exited $?"
		callgrind_annotate --auto=yes --show=Samples --threshold=100 x.cg >cg.txt 2>cga.err ||
			mi_why_add "callgrind_annotate exited $?"
		grep -qi 'warning\|error' cga.err && mi_why_add "callgrind_annotate complained"
		/usr/bin/python3 - cg.txt a.json "$CALL" "$HOT" <<'PY' >>check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json, re, sys
text, a = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
call, hot = int(sys.argv[3]), int(sys.argv[4])
num = lambda s: int(s.replace(",", ""))
m = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
assert m and num(m.group(1)) == a["samples"], "Samples total %s, analyse %d" % (m and m.group(1), a["samples"])
m = re.search(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*inline_target\.cc:mix_step", text, re.M)
assert m and num(m.group(1)) >= 0.25 * a["samples"], "mix_step: %s of %d samples" % (m and m.group(1), a["samples"])
src = text.split("-- Auto-annotated source: ")
body = [s for s in src if s.split("\n", 1)[0].endswith("inline_target.cc")]
assert body, "inline_target.cc is not annotated"
lines = body[0].splitlines()
# the call line of churn, then its "=> …:mix_step" call line
at = [i for i, l in enumerate(lines) if "// line of the call of mix_step" in l]
assert at and any("=>" in l and "mix_step" in l for l in lines[at[0] + 1:at[0] + 4]), "no call of mix_step at line %d" % call
# mix_step's own samples on its loop (the hot line or its for line)
hot_l = [l for l in lines if "// line of the hot loop" in l]
assert hot_l and re.match(r"\s*[\d,]+ \(", hot_l[0]), "the hot loop line has no samples: %s" % hot_l
PY
	else
		echo "skip  callgrind read by callgrind_annotate: valgrind is not installed"
	fi
	mi_verdict "$cxx -O1: inlined functions are frames in folded, chrome, html, callgrind" "$why" \
		check check err stderr
done
mi_finish
