#!/bin/sh
# frames.sh — what every display and export names, on a small C program
# with threads and libc calls from main (tests/export/frames.c), traced
# (--trace --sample) and sampled (--sample --mim):
#   - analyse's JSON and text agree: the pauses that are not the program's
#     (<preempted>, <trace-wait>, <snapshot>) are out of the totals and the
#     threads' figures in both, in "kept_out"; the functions' OWN sum to the
#     thread's; the sampled flat table's shares sum to 100% and are the text's;
#   - the chrome export's sample tracks nest outermost first: sorted by
#     start (file order kept for equal events) each event is inside its
#     caller's (leaf in middle, middle in worker);
#   - no frame of libmeminst's own code (its local symbols, the tracer's
#     hooks) outside <meminst> in folded, callgrind, pprof, chrome, html;
#   - no symbol version (@@GLIBC_2.34, @GLIBC_2.2.5) anywhere;
#   - _start, which has no line information, gets no file:line;
#   - the sampling styles of analyse fit --cols (the terminal's width);
#   - analyse --focus FUNC shows FUNC with its callers and callees only.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "skip  $MI_NAME: no C compiler"; exit 77; }
LIB=$top_builddir/alloc/.libs/libmeminst.so

why=
"$CC" -g -O0 -fno-inline -finstrument-functions -pthread -o prog "$top_srcdir/tests/export/frames.c" 2>err ||
	mi_why_add "cc exited $?"
"$LAUNCH" -q --trace --sample=1000 -o tr.db -- ./prog 300 >out 2>>err || mi_why_add "meminst --trace exited $?"
"$LAUNCH" -q --sample=1000 --mim -o sa.db -- ./prog 300 >out 2>>err || mi_why_add "meminst --sample exited $?"
ss_outputs tr
ss_outputs sa
[ -z "$why" ] || { mi_verdict "sessions of tests/export/frames.c" "$why" err stderr; mi_finish; }

# ------------------------------------------------ analyse: JSON = text --
why=
/usr/bin/python3 - tr.an.json tr.an.txt sa.flat.json sa.flat.txt <<'PY' >an.check 2>&1 || mi_why_add "$(tail -n 1 an.check)"
import json, re, sys
j, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
kept = {"<preempted>", "<trace-wait>", "<snapshot>", "<meminst>"}  # <meminst>: meminst's work around the allocator (ALLOC_AT)
def text_fig(label):
    m = re.search(r"^" + re.escape(label) + r"\s+(\d+)\s+(\S+)\s+(-?[\d.]+)$", text, re.M)
    assert m, "no line %r in the text" % label
    return int(m.group(1)), float(m.group(3))
cnt, own = text_fig("totals")
assert cnt == j["totals"]["calls"] and abs(own - j["totals"]["own_ms"]) < 0.002, \
    "totals: text %d %.3f, JSON %d %.3f" % (cnt, own, j["totals"]["calls"], j["totals"]["own_ms"])
kept_sum = 0
for t in j["threads"]:
    names = {f["name"] for f in t["functions"]}
    assert not names & kept, "thread %d: pauses among the functions: %s" % (t["thread"], names & kept)
    assert {f["name"] for f in t["kept_out"]} <= kept, "thread %d: kept_out %s" % (t["thread"], t["kept_out"])
    s = sum(f["own_ms"] for f in t["functions"])
    assert abs(s - t["own_ms"]) < 0.01, "thread %d: functions' OWN %.3f, thread %.3f" % (t["thread"], s, t["own_ms"])
    k = sum(f["own_ms"] for f in t["kept_out"])
    assert abs(k - t["kept_out_ms"]) < 0.01, "thread %d: kept_out %.3f, kept_out_ms %.3f" % (t["thread"], k, t["kept_out_ms"])
    kept_sum += k
    m = re.search(r"^thread %d .*?\s(\d+)\s+-\s+(-?[\d.]+)$" % t["thread"], text, re.M)
    assert m and int(m.group(1)) == t["calls"] and abs(float(m.group(2)) - t["own_ms"]) < 0.002, \
        "thread %d: text %s, JSON %d %.3f" % (t["thread"], m and m.groups(), t["calls"], t["own_ms"])
assert abs(sum(t["own_ms"] for t in j["threads"]) - j["totals"]["own_ms"]) < 0.01, "threads' OWN != totals'"
assert abs(kept_sum - j["totals"]["kept_out_ms"]) < 0.01, "kept_out_ms of the totals"
f, text = json.load(open(sys.argv[3])), open(sys.argv[4]).read()
total = sum(x["self_percent"] for x in f["functions"])
assert abs(total - 100) < 0.05, "flat: the self shares sum to %.3f%%" % total
rows = {}
for line in text.splitlines():
    m = re.match(r"^\s*([\d.]+)\s+[\d.]+\s+[\d.]+\s+(?:\d+\s+)?(\S+)", line)
    if m:
        rows.setdefault(m.group(2), float(m.group(1)))
for x in f["functions"]:
    assert abs(rows[x["name"]] - x["self_percent"]) < 0.006, "flat %s: text %.2f%%, JSON %.4f%%" % (
        x["name"], rows[x["name"]], x["self_percent"])
print("totals own %.3f ms, kept out %.3f ms; flat shares sum %.3f%%" % (j["totals"]["own_ms"], kept_sum, total))
PY
mi_verdict "analyse: totals, threads and shares the same in JSON and text, pauses kept out of both" "$why" an.check check

# ------------------------------------------- chrome: outermost first --
why=
for s in tr sa; do
	/usr/bin/python3 - "$s.chrome" <<'PY' >>ch.check 2>&1 || mi_why_add "$s: $(tail -n 1 ch.check)"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
xs = [(i, e) for i, e in enumerate(ev) if e["ph"] == "X" and e["cat"] == "sample"]
assert xs, "no sample events"
want = {"leaf": "middle", "middle": "worker"}
seen = 0
for tid in {e["tid"] for _, e in xs}:
    # viewers sort by start, then longest first; equal events keep the file's order
    track = sorted((e for _, e in xs if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in track:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 0.0005:
            stack.pop()
        if stack:
            p = stack[-1]
            assert e["ts"] + e["dur"] <= p["ts"] + p["dur"] + 0.0005, "%s not inside %s" % (e, p)
        if e["name"] in want:
            assert stack and stack[-1]["name"] == want[e["name"]], \
                "%s at %.3f nested in %s, not %s" % (e["name"], e["ts"], stack and stack[-1]["name"], want[e["name"]])
            seen += 1
        stack.append(e)
assert seen, "no leaf or middle events"
print("%d nested sample events, %d leaf/middle checked" % (len(xs), seen))
PY
done
mi_verdict "chrome: sample tracks nest, callers' events before their callees'" "$why" ch.check check

# ---------------------------------- meminst's frames, versions, _start --
why=
nm --defined-only "$LIB" 2>/dev/null | awk '$2 ~ /^[tT]$/ {print $3}' | sort -u >lib.syms
nm -D --defined-only "$LIB" 2>/dev/null | awk '{print $3}' | sed 's/@.*//' | sort -u >lib.exported
# the program's own names (crtbegin's __do_global_dtors_aux, frame_dummy ...
# are in both; a sample in the program's copy at exit is the program's)
nm --defined-only prog 2>/dev/null | awk '{print $3}' | sort -u >prog.syms
[ -s prog.syms ] || mi_why_add "nm read no symbols of prog"
[ -s lib.syms ] || mi_why_add "nm read no symbols of $LIB"
/usr/bin/python3 - lib.syms lib.exported prog.syms <<'PY' >fr.check 2>&1 || mi_why_add "$(tail -n 1 fr.check)"
import gzip, json, re, sys
own = set(open(sys.argv[1]).read().split()) - set(open(sys.argv[2]).read().split())
own -= set(open(sys.argv[3]).read().split())
own |= {"__cyg_profile_func_enter", "__cyg_profile_func_exit"}
own = {n for n in own if len(n) > 4}
def frames(s, fmt):
    if fmt == "folded":
        return [f for line in open(s + ".folded") for f in line.rsplit(" ", 1)[0].split(";")]
    if fmt == "callgrind":
        return [re.sub(r"^\(\d+\) ?", "", l.split("=", 1)[1].strip()) for l in open(s + ".callgrind")
                if re.match(r"^c?fn=", l)]
    if fmt == "chrome":
        return [e["name"] for e in json.load(open(s + ".chrome"))["traceEvents"] if e["ph"] in "Xi"]
    if fmt == "pprof":
        raw = gzip.open(s + ".pprof").read()
        return [w.decode("latin-1") for w in re.findall(rb"[\x20-\x7e]{5,}", raw)]
for s in ("tr", "sa"):
    for fmt in ("folded", "callgrind", "chrome", "pprof"):
        names = frames(s, fmt)
        assert names, "%s.%s: no frames read" % (s, fmt)
        bad = {n for n in names if n.split("+0x")[0] in own}
        assert not bad, "%s.%s: libmeminst's own frames outside <meminst>: %s" % (s, fmt, sorted(bad)[:5])
    for out in ("folded", "callgrind", "chrome", "html", "an.txt", "an.json", "flat.txt", "flat.json", "report.txt"):
        data = open("%s.%s" % (s, out), "rb").read()
        if out == "pprof":
            data = gzip.decompress(data)
        assert not re.search(rb"@@?GLIBC", data), "%s.%s: a symbol version: %s" % (
            s, out, re.search(rb"\S*@@?GLIBC\S*", data).group(0))
    raw = gzip.open(s + ".pprof").read()
    assert not re.search(rb"@@?GLIBC", raw), "%s.pprof: a symbol version" % s
    f = {x["name"]: x for x in json.load(open(s + ".flat.json"))["functions"]}
    assert "_start" in f, "%s: no _start among the sampled functions" % s
    assert f["_start"]["file"] is None and f["_start"]["line"] is None, "%s: _start at %s:%s" % (
        s, f["_start"]["file"], f["_start"]["line"])
    assert f["main"]["file"] and f["main"]["file"].endswith("frames.c"), "%s: main has no line" % s
print("%d own symbols of libmeminst looked for" % len(own))
PY
mi_verdict "no libmeminst frame outside <meminst>, no symbol version, _start without a line" "$why" fr.check check
# ------------------------------------- sampling styles fit the width --
why=
for st in flat tree callers; do
	"$INSPECT" analyse --style $st --limit 0 --cols 80 sa.db >"w.$st" 2>>w.err || mi_why_add "$st --cols 80 exited $?"
	"$INSPECT" analyse --style $st --limit 0 sa.db >"wn.$st" 2>>w.err || mi_why_add "$st to a pipe exited $?"
done
/usr/bin/python3 - <<'PY' >w.check 2>&1 || mi_why_add "$(tail -n 1 w.check)"
for st in ("flat", "tree", "callers"):
    rows = open("w." + st, encoding="utf-8").read().splitlines()[3:]  # under the header lines
    longest = max(len(l) for l in rows)
    assert longest <= 80, "%s --cols 80: a row of %d columns" % (st, longest)
    assert "\u2026" in open("w." + st, encoding="utf-8").read(), "%s --cols 80: nothing was cut" % st
    # (to a pipe, without --cols, nothing is cut)
    whole = open("wn." + st, encoding="utf-8").read()
    assert "\u2026" not in whole and "pthread_create.c:" in whole, "%s: cut without a width" % st
print("rows of flat, tree and callers fit 80 columns")
PY
mi_verdict "analyse --style flat|tree|callers fit --cols, whole without a width" "$why" w.check check w.err stderr
# --------------------------------------------------------- --focus --
why=
"$INSPECT" analyse --focus middle tr.db >fo.tr 2>fo.err || mi_why_add "--focus of the trace exited $?"
"$INSPECT" analyse --focus middle --json tr.db >fo.json 2>>fo.err || mi_why_add "--focus --json exited $?"
"$INSPECT" analyse --focus middle sa.db >fo.sa 2>>fo.err || mi_why_add "--focus of the samples exited $?"
"$INSPECT" analyse --focus no_such_function sa.db >/dev/null 2>fo.bad
[ $? -eq 1 ] && [ "$(wc -l <fo.bad)" -eq 1 ] || mi_why_add "an unknown --focus: not one line and exit 1"
/usr/bin/python3 - <<'PY' >fo.check 2>&1 || mi_why_add "$(tail -n 1 fo.check)"
import json, re
marked = set(re.findall(r"^\* (\S+)", open("fo.tr").read(), re.M))
assert marked == {"middle"}, "fprof --focus middle: paragraphs of %s" % marked
text = open("fo.tr").read()
assert re.search(r"^  worker ", text, re.M) and re.search(r"^    leaf ", text, re.M), "middle's caller or callee missing"
j = json.load(open("fo.json"))
assert all([f["name"] for f in t["functions"]] == ["middle"] for t in j["threads"]), "JSON --focus: other functions"
sa = open("fo.sa").read()
assert set(re.findall(r"\* (\S+)", sa)) == {"middle"} and "worker" in sa and "leaf" in sa, "samples --focus: %s" % sa[-400:]
print("--focus middle: its paragraphs, callers and callees only")
PY
mi_verdict "analyse --focus FUNC: only FUNC with its callers and callees; unknown: exit 1" "$why" fo.check check fo.err stderr
mi_finish
