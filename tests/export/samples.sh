# samples.sh — exports of sampled sessions (no exact trace) read back by
# their consumers, figures checked against `inspect analyse --style flat`:
#   - callgrind (callgrind_annotate --auto=yes, valgrind; skipped without
#     it): timer samples of tests/sample/sample_target split (burn_big,
#     burn_small) land on the source lines of the sampled pcs: the lines of
#     burn_big's body add up to its self samples, its hot loop line has
#     most; split's calls of them are at the lines of those calls (calls=
#     in the file); allocation samples of
#     sample_target alloc put the estimated bytes of alloc_big and
#     alloc_small on their malloc lines; PROGRAM TOTALS are analyse's;
#   - chrome (python3's json): a track of samples per thread, a flame chart
#     in time whose events nest; main covers the samples' periods, burn_big
#     its share of them as analyse counts it; allocation samples are instant
#     events with the estimated bytes.
. "$top_srcdir/tests/session/session_lib.sh"

TARGET=$top_builddir/tests/sample/sample_target

why=
"$LAUNCH" -q --sample=1000 -o split.db -- "$TARGET" split 300 >out 2>err ||
	mi_why_add "meminst (split) exited $?"
"$LAUNCH" -q --sample=1000 --alloc-sample=64k -o alloc.db -- "$TARGET" alloc >out 2>>err ||
	mi_why_add "meminst (alloc) exited $?"
for s in split alloc; do
	"$INSPECT" analyse --style flat --json "$s.db" >"$s.json" 2>>a.err || mi_why_add "analyse $s exited $?"
	"$INSPECT" analyse --style flat --metric bytes --json "$s.db" >"$s.bytes.json" 2>>a.err ||
		mi_why_add "analyse --metric bytes $s exited $?"
done
[ -z "$why" ] || { mi_verdict "sampled sessions" "$why" err stderr a.err "analyse stderr"; mi_finish; }

# ------------------------------------------------------------ callgrind --
if command -v callgrind_annotate >/dev/null; then
	why=
	for s in split alloc; do
		"$INSPECT" export --format callgrind -o "$s.cg" "$s.db" 2>>cg.err || mi_why_add "export $s exited $?"
	done
	callgrind_annotate --auto=yes --include="$top_builddir" --show=Samples --threshold=100 split.cg \
		>split.txt 2>cga.err || mi_why_add "callgrind_annotate split exited $?"
	callgrind_annotate --auto=yes --include="$top_builddir" --sort=Bytes --show=Bytes,Allocs --threshold=100 \
		alloc.cg >alloc.txt 2>>cga.err || mi_why_add "callgrind_annotate alloc exited $?"
	grep -qi 'warning\|error' cga.err && mi_why_add "callgrind_annotate complained"
	/usr/bin/python3 - split.json split.txt alloc.bytes.json alloc.txt "$top_srcdir/tests/sample/sample_target.c" split.cg \
		<<'PY' >cg.check 2>&1 ||
import json, re, sys
split, stext = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
alloc, atext = json.load(open(sys.argv[3])), open(sys.argv[4]).read()
src = open(sys.argv[5]).read().splitlines()
def num(s):
    return int(s.replace(",", ""))
m = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", stext, re.M)
assert m and num(m.group(1)) == split["samples"], "split: Samples total %s, analyse %d" % (m and m.group(1), split["samples"])
def annotated(text, ncols):
    """the annotated sample_target.c: line number -> first figure, and the call lines after each line"""
    sections = re.split(r"^-- Auto-annotated source: ", text, flags=re.M)[1:]
    body = [x for x in sections if x.split("\n", 1)[0].endswith("sample_target.c")]
    assert body, "sample_target.c is not annotated"
    col = r"\s*(?:([\d,]+)(?: \(\s*[\d.]+%\))?|(\.))"
    pat = re.compile("^" + col * ncols + r"  (.*)$")
    rows, calls, last, n = {}, {}, None, 0
    for line in body[0].split("\n-----", 2)[1].splitlines():
        mark = re.match(r"^-- line (\d+) -", line)
        if mark:
            n = int(mark.group(1))
            continue
        m = pat.match(line)
        if not m:
            continue
        first, src_text = m.group(1), m.group(2 * ncols + 1).strip()
        if src_text.startswith("=> "):
            calls.setdefault(last, []).append(src_text)
            continue
        last = n
        if first and num(first):
            rows[n] = num(first)
        n += 1
    return rows, calls
def line_of(text):
    return [i + 1 for i, l in enumerate(src) if text in l]
rows, calls = annotated(stext, 1)
body = range(line_of("void burn_big(double ms)")[0], line_of("void burn_small(double ms)")[0])
fn = {f["name"]: f for f in split["functions"]}
own = sum(v for k, v in rows.items() if k in body)
assert own == fn["burn_big"]["self_samples"], "burn_big's lines: %d samples, analyse self %d (%s)" % (own, fn["burn_big"]["self_samples"], rows)
hot = line_of("6364136223846793005")[0]
assert rows.get(hot, 0) >= own / 3, "the hot loop line %d of burn_big: %s" % (hot, rows)
assert len([k for k in rows if k in body]) >= 2, "burn_big's samples are on one line only: %s" % rows
# calls at their call lines: split calls burn_big and burn_small from the lines that call them
names, fn, callee, at = {}, None, None, set()
lines = iter(open(sys.argv[6]).read().splitlines())
for line in lines:
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn":
            fn = names[m.group(2)]
        else:
            callee = names[m.group(2)]
    elif line.startswith("calls="):
        at.add((fn, callee, int(next(lines).split()[0])))
for name, call in (("burn_big", "burn_big(2.7);"), ("burn_small", "burn_small(0.9);")):
    assert ("split", name, line_of(call)[0]) in at, "split's call of %s is not at line %d: %s" % (name, line_of(call)[0], sorted(at))
m = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", atext, re.M)
assert m, "alloc: no PROGRAM TOTALS"
assert abs(num(m.group(1)) - alloc["bytes"]) <= 100, "alloc: Bytes total %s, analyse %d" % (m.group(1), alloc["bytes"])
rows, calls = annotated(atext, 2)
afn = {f["name"]: f for f in alloc["functions"]}
for name, call in (("alloc_big", "char *p = malloc(4096);"), ("alloc_small", "char *p = malloc(64);")):
    got, want = rows.get(line_of(call)[0], 0), afn[name]["self_bytes"]
    assert abs(got - want) <= 10, "%s: %d bytes on its malloc line, analyse %d (%s)" % (name, got, want, rows)
PY
		mi_why_add "$(tail -n 1 cg.check)"
	mi_verdict "callgrind of samples: callgrind_annotate --auto=yes shows the samples and bytes per source line" \
		"$why" cg.check check split.txt "callgrind_annotate (split)" cga.err "callgrind_annotate stderr" \
		cg.err "export stderr"
else
	echo "skip  callgrind of samples read by callgrind_annotate: valgrind is not installed (apt-get install valgrind)"
fi

# --------------------------------------------------------------- chrome --
why=
for s in split alloc; do
	"$INSPECT" export --format chrome -o "$s.chrome.json" "$s.db" 2>>ch.err || mi_why_add "export $s exited $?"
done
/usr/bin/python3 - split.chrome.json split.json alloc.chrome.json alloc.bytes.json <<'PY' >ch.check 2>&1 ||
import json, sys
ev, a = json.load(open(sys.argv[1]))["traceEvents"], json.load(open(sys.argv[2]))
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
xs = [e for e in ev if e["ph"] == "X"]
assert xs and all(e["cat"] == "sample" for e in xs), "not sample events"
tids = {e["tid"] for e in xs}
assert all(names.get(t, "").startswith("samples of ") for t in tids), "sample tracks unnamed: %s" % names
# nesting: on each track, an event either contains the next one or ends before it starts
for t in tids:
    open_ = []
    for e in sorted((e for e in xs if e["tid"] == t), key=lambda e: (e["ts"], -e["dur"])):
        while open_ and open_[-1] <= e["ts"] + 0.002:
            open_.pop()
        assert not open_ or e["ts"] + e["dur"] <= open_[-1] + 0.002, "events overlap without nesting: %s" % e
        open_.append(e["ts"] + e["dur"])
period_us = 1e6 / a["sample_hz"]
def covered(name):
    return sum(e["dur"] for e in xs if e["name"] == name)
main, big = covered("main"), covered("burn_big")
want = a["samples"] * period_us
# (a gap shorter than half a period does not end the frames: up to 1.5 periods a sample)
assert 0.8 * want <= main <= 1.5 * want, "main covers %.0f us, %d samples of %.0f us" % (main, a["samples"], period_us)
fn = {f["name"]: f for f in a["functions"]}
share = fn["burn_big"]["cum_samples"] / a["samples"]
assert abs(big / main - share) < 0.05, "burn_big: %.3f of main's time, analyse %.3f" % (big / main, share)
ev, b = json.load(open(sys.argv[3]))["traceEvents"], json.load(open(sys.argv[4]))
inst = [e for e in ev if e["ph"] == "i"]
assert len(inst) == b["alloc_samples"], "%d instant events, %d allocation samples" % (len(inst), b["alloc_samples"])
total = sum(e["args"]["bytes"] for e in inst)
assert abs(total - b["bytes"]) <= len(inst), "instant events: %d bytes, analyse %d" % (total, b["bytes"])
assert {e["name"] for e in inst} >= {"alloc_big", "alloc_small"}, "allocation samples not named by their function"
PY
	mi_why_add "$(tail -n 1 ch.check)"
mi_verdict "chrome of samples: a nested track per thread, figures as analyse has them" "$why" \
	ch.check check ch.err "export stderr"

# A timer sample whose weight is several periods (timer overruns, a loaded
# machine) reaches back over the samples before it: its frames start where
# the last sample ended, so the track's events still nest (a made-up trace:
# 0x3010's sample of weight 3 ms at 3 ms began at 0, over 0x2010 and 0x1020).
why=
cat >ov.script <<'EOF'
header clock wall hz 1000000000
1 start 0 100 main
1 sample 1000000 1000000 0x2010 0x1010
1 sample 2000000 1000000 0x1020
1 sample 3000000 3000000 0x3010 0x1010
1 sample 4000000 1000000 0x3010 0x1010
1 exit 4000000
EOF
"$top_builddir/tests/profile/tracegen" ov.trace <ov.script 2>ov.err || mi_why_add "tracegen exited $?"
"$INSPECT" export --format chrome -o ov.json ov.trace 2>>ov.err || mi_why_add "chrome exited $?"
/usr/bin/python3 - ov.json <<'PY' >ov.check 2>&1 || mi_why_add "$(tail -n 1 ov.check)"
import json, sys
xs = sorted(((e["ts"], e["ts"] + e["dur"], e["name"]) for e in json.load(open(sys.argv[1]))["traceEvents"]
             if e["ph"] == "X"), key=lambda e: (e[0], -e[1]))
for i, a in enumerate(xs):
    for b in xs[i + 1:]:
        assert b[0] >= a[1] - 1e-6 or b[1] <= a[1] + 1e-6, "%s and %s overlap without nesting" % (a, b)
assert ("0x3010" in [n for _, _, n in xs]) and min(s for s, _, n in xs if n == "0x3010") >= 2000 - 1e-6, xs
PY
mi_verdict "chrome of samples: a sample of several periods starts where the one before ended" "$why" \
	ov.check check ov.err stderr

# ------------------------------------------------ allocation samples alone --
# folded of a session with allocation samples and no timer: its bytes by
# default (as analyse), adding up to analyse's estimate; --metric time has
# none: exit 1 and one line, not an empty file and exit 0.
why=
"$LAUNCH" -q --no-time --alloc-sample=64k -o aonly.db -- "$TARGET" alloc >out 2>ao.err ||
	mi_why_add "meminst --alloc-sample exited $?"
"$INSPECT" analyse --style flat --metric bytes --json aonly.db >aonly.json 2>>ao.err || mi_why_add "analyse exited $?"
"$INSPECT" export --format folded -o aonly.folded aonly.db 2>>ao.err || mi_why_add "folded exited $?"
"$INSPECT" export --format folded --metric time -o aonly.time aonly.db 2>aot.err
rc=$?
[ $rc -eq 1 ] || mi_why_add "--metric time of allocation samples: exit status $rc, not 1"
[ "$(wc -l <aot.err)" -eq 1 ] || mi_why_add "--metric time: not one line"
/usr/bin/python3 - aonly.folded aonly.json <<'PY' >ao.check 2>&1 || mi_why_add "$(tail -n 1 ao.check)"
import json, sys
rows = [l.rstrip("\n").rpartition(" ") for l in open(sys.argv[1])]
a = json.load(open(sys.argv[2]))
assert rows, "no line"
total = sum(int(n) for _, _, n in rows)
assert abs(total - a["bytes"]) <= len(rows), "folded %d bytes, analyse %d" % (total, a["bytes"])
assert any(s.endswith(";alloc_big") for s, _, _ in rows), "no stack ending in alloc_big"
PY
mi_verdict "folded of allocation samples alone: bytes by default, --metric time exit 1" "$why" \
	ao.check check ao.err stderr aot.err "stderr (--metric time)"
mi_finish
