#!/bin/sh
# sites.sh — flame graphs of heaptrack's metrics from the event counters
# (`inspect export --metric calls|allocated|temporary|peak|leaked`, folded
# and pprof) of a session without a trace: tests/export/sites.c (gcc -g
# -O1) under the launcher with --site-depth=4 has
#   temp_site  300 calls of 100 bytes, each temporary
#   kept_site  2000 calls of 1000 bytes through the inlined helper grab,
#              live at the top (the peak snapshot has >= 95% of them), 50
#              of them never freed (50000 bytes leaked)
#   - folded: per metric, the lines add up to the rows of `inspect top --by
#     METRIC --json` and to `inspect report`'s figures; the two sites'
#     stacks, outermost first, are main;temp_site and main;kept_site;grab
#     (the inline helper a frame) with their known figures;
#   - pprof: `go tool pprof -raw` reads five sample types whose sums are the
#     folded totals, alloc_space the default, grab's location with
#     kept_site as the function it is inlined into; -top of temp_objects
#     has temp_site's 300 (skipped without go);
#   - a metric that does not apply: one line and exit status 2 (a trace
#     file, chrome, pprof with --metric time, an unknown word).
. "$top_srcdir/tests/session/session_lib.sh"

command -v gcc >/dev/null 2>&1 || { echo "skip  $MI_NAME: gcc is not installed"; exit 77; }
METRICS="calls allocated temporary peak leaked"

why=
gcc -g -O1 "$top_srcdir/tests/export/sites.c" -o sites 2>cc.err || mi_why_add "gcc exited $?"
"$LAUNCH" -q --site-depth=4 -o s.db -- ./sites >out 2>err || mi_why_add "meminst exited $?"
"$INSPECT" report --json s.db >report.json 2>>x.err || mi_why_add "report exited $?"
for m in $METRICS; do
	"$INSPECT" export --format folded --metric $m -o $m.folded s.db 2>>x.err || mi_why_add "folded $m exited $?"
	"$INSPECT" top --by $m --limit 100000 --json s.db >$m.json 2>>x.err || mi_why_add "top --by $m exited $?"
done
# shellcheck disable=SC2086
/usr/bin/python3 - $METRICS <<'PY' >f.check 2>&1 || mi_why_add "$(tail -n 1 f.check)"
import json, sys
metrics = sys.argv[1:]
key = {"calls": "calls", "allocated": "allocated_bytes", "temporary": "temporary", "peak": "peak_bytes",
       "leaked": "leaked_bytes"}
rep = json.load(open("report.json"))
report = {"calls": rep["allocations"]["calls"], "allocated": rep["allocations"]["allocated_bytes"],
          "temporary": rep["allocations"]["temporary"], "peak": rep["peak"]["snapshot_bytes"],
          "leaked": rep["allocations"]["leaked_bytes"]}
folded = {}
for m in metrics:
    lines = {}
    for l in open(m + ".folded"):
        stack, v = l.rstrip("\n").rsplit(" ", 1)
        assert stack not in lines, "%s: stack %s twice" % (m, stack)
        lines[stack] = int(v)
    folded[m] = lines
    total = sum(lines.values())
    top = sum(r[key[m]] or 0 for r in json.load(open(m + ".json"))["top"])
    assert total == top, "%s: folded adds up to %d, top --by %s --json to %d" % (m, total, m, top)
    assert total == report[m], "%s: folded adds up to %d, report says %d" % (m, total, report[m])
def site(m, tail):
    got = [v for s, v in folded[m].items() if s.endswith(tail)]
    assert len(got) == 1, "%s: %d lines end with %s: %s" % (m, len(got), tail, sorted(folded[m]))
    return got[0]
T, K = ";main;temp_site", ";main;kept_site;grab"
want = {("calls", T): 300, ("calls", K): 2000, ("allocated", T): 30000, ("allocated", K): 2000000,
        ("temporary", T): 300, ("leaked", K): 50000}
for (m, tail), v in want.items():
    assert site(m, tail) == v, "%s of %s: %d, not %d" % (m, tail, site(m, tail), v)
assert 0.95 * 2000000 <= site("peak", K) <= 2000000, "peak of kept_site %d" % site("peak", K)
assert not any(s.endswith(T) for s in folded["leaked"]), "temp_site leaked"
print("ok", {m: sum(folded[m].values()) for m in metrics})
PY
mi_verdict "folded: calls, allocated, temporary, peak and leaked per site stack add up to top --by and report" \
	"$why" f.check check x.err stderr calls.folded "calls.folded"

# ---------------------------------------------------------------- pprof --
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	export HOME="$MI_TMP" PPROF_TMPDIR="$MI_TMP" GOFLAGS= GOCACHE="$MI_TMP/go-cache"
	why=
	"$INSPECT" export --format pprof --metric allocated -o s.pb.gz s.db 2>p.err || mi_why_add "export exited $?"
	go tool pprof -raw s.pb.gz >raw.txt 2>pp.err || mi_why_add "pprof -raw exited $?"
	go tool pprof -top -nodefraction=0 -sample_index=temp_objects s.pb.gz >temp.txt 2>>pp.err ||
		mi_why_add "pprof -top exited $?"
	# shellcheck disable=SC2086
	/usr/bin/python3 - $METRICS <<'PY' >p.check 2>&1 || mi_why_add "$(tail -n 1 p.check)"
import re, sys
metrics = sys.argv[1:]
raw = open("raw.txt").read()
types = re.search(r"^Samples:\n(.*)$", raw, re.M).group(1).split()
want = ["alloc_objects/count", "alloc_space/bytes[dflt]", "temp_objects/count", "inuse_space/bytes",
        "leaked_space/bytes"]
assert types == want, "sample types %s" % types
sums = [0] * 5
for m in re.finditer(r"^\s+((?:\d+\s+){4}\d+):", raw, re.M):
    for i, v in enumerate(m.group(1).split()):
        sums[i] += int(v)
for i, m in enumerate(metrics):
    total = sum(int(l.rsplit(" ", 1)[1]) for l in open(m + ".folded"))
    assert sums[i] == total, "%s: pprof adds up to %d, folded to %d" % (types[i], sums[i], total)
assert re.search(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ grab \S*sites\.c:\d+ s=\d+\(\)\n\s+kept_site \S*sites\.c:\d+", raw, re.M), \
    "no location of grab inlined into kept_site"
top = open("temp.txt").read()
assert re.search(r"^\s+300\s+100%\s+100%\s+300\s+100%\s+temp_site$", top, re.M), "temp_site not 300 in -top"
print("ok", sums)
PY
	mi_verdict "pprof: go tool pprof reads the five metrics per site with the sums of the folded lines" \
		"$why" p.check check p.err stderr pp.err "pprof stderr" raw.txt "pprof -raw"
else
	echo "skip  $MI_NAME: pprof part: go tool pprof is not installed (apt-get install golang-go)"
fi

# ------------------------------------------------------- bad metrics --
why=
printf 'header clock wall hz 1000000000\n1 start 0 100 main\n1 call 10 0x2000\n1 ret 20 0x2000\n1 exit 30\n' >u.script
"$top_builddir/tests/profile/tracegen" u.trace <u.script 2>u.err || mi_why_add "tracegen exited $?"
bad() { # bad LABEL ARGS...: exit 2 and one line
	label=$1
	shift
	"$INSPECT" export "$@" >bad.out 2>bad.err
	rc=$?
	[ $rc -eq 2 ] || mi_why_add "$label: exit status $rc, not 2"
	[ "$(wc -l <bad.err)" -eq 1 ] || mi_why_add "$label: $(wc -l <bad.err) lines on stderr, not 1"
	[ -s bad.out ] && mi_why_add "$label: wrote something"
	cat bad.err >>bad.all
}
bad "calls of a trace file" --format folded --metric calls u.trace
bad "leaked of a trace file (pprof)" --format pprof --metric leaked -o t.pb.gz u.trace
bad "calls with chrome" --format chrome --metric calls s.db
bad "pprof with --metric time" --format pprof --metric time -o t.pb.gz s.db
bad "an unknown metric" --format folded --metric lost s.db
[ -e t.pb.gz ] && mi_why_add "a pprof file was written"
mi_verdict "a metric that does not apply to the input: one line, exit status 2" "$why" bad.all stderr
mi_finish
