#!/bin/sh
# deep.sh — a recursion 200,000 calls deep (a made-up trace) exports in
# linear time: every format under a CPU-time limit (ulimit -t, not the
# wall clock of a loaded machine; folded and pprof took over 120 s when each
# stack was copied per level).  Stacks deeper than 4096 frames are their
# outermost 4096 frames, [truncated] and the innermost function, which keeps
# its own time: folded has one line per depth, the deepest ending in
# [truncated];0x2000 with the time spent at the bottom; go tool pprof (when
# installed) gives 0x2000 all but 0x1000's nanoseconds of flat time.
. "$top_srcdir/tests/integration/lib.sh"

INSPECT=$top_builddir/inspect/inspect
cd "$MI_TMP" || exit 99
why=
# 0x1000 calls 0x2000, which recurses 200,000 deep and spends 10 s at the bottom
awk 'BEGIN {
	n = 200000; t = 10
	print "header clock wall hz 1000000000"
	print "1 start 0 100 main"
	print "1 call 1 0x1000"
	for (i = 0; i < n; i++) { printf "1 call %.0f 0x2000\n", t; t += 10; if (i % 10000 == 9999) print "1 flush" }
	t += 10000000000
	for (i = 0; i < n; i++) { printf "1 ret %.0f 0x2000\n", t; t += 10; if (i % 10000 == 9999) print "1 flush" }
	printf "1 ret %.0f 0x1000\n", t
	printf "1 exit %.0f\n", t + 10
}' >deep.script
"$top_builddir/tests/profile/tracegen" deep.trace <deep.script 2>err || mi_why_add "tracegen exited $?"
"$INSPECT" analyse --json deep.trace >a.json 2>>err || mi_why_add "analyse exited $?"
(
	ulimit -t 20
	for fmt in folded pprof chrome callgrind; do
		"$INSPECT" export --format $fmt -o "deep.$fmt" deep.trace 2>>err || echo "$fmt: exit status $?"
	done
	"$INSPECT" html -o deep.html deep.trace 2>>err || echo "html: exit status $?"
) >rc.txt 2>&1
[ -s rc.txt ] && mi_why_add "$(tr '\n' ' ' <rc.txt)(ulimit -t 20)"
/usr/bin/python3 - deep.folded a.json <<'PY' >check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json, sys
own = round(json.load(open(sys.argv[2]))["totals"]["own_ms"] * 1e6)
rows = [l.rstrip("\n").rpartition(" ") for l in open(sys.argv[1])]
assert len(rows) == 4097, "%d lines, want 4096 depths and the cut" % len(rows)
total = sum(int(n) for _, _, n in rows)
assert abs(total - own) <= len(rows), "folded %d ns, analyse's own time %d" % (total, own)
frames = [s.split(";") for s, _, _ in rows]
assert max(len(f) for f in frames) == 4098, "deepest line: %d frames" % max(len(f) for f in frames)
deep = [(f, int(n)) for f, (_, _, n) in zip(frames, rows) if "[truncated]" in f]
assert len(deep) == 1 and deep[0][0][-2:] == ["[truncated]", "0x2000"], "the cut line: %s" % deep[0][0][-3:]
assert deep[0][1] >= 10e9, "the bottom's own time is not on the cut line: %d" % deep[0][1]
PY
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
	(ulimit -t 60; go tool pprof -top -unit=ns deep.pprof) >top.txt 2>top.err || mi_why_add "go tool pprof exited $?"
	/usr/bin/python3 - top.txt a.json <<'PY' >>check 2>&1 || mi_why_add "$(tail -n 1 check)"
import json, re, sys
a = json.load(open(sys.argv[2]))
fn = {f["name"]: f for t in a["threads"] for f in t["functions"]}
rows = {m.group(2): float(m.group(1)) for m in re.finditer(r"^\s*([\d.]+)ns\s.*\s(\S+)$", open(sys.argv[1]).read(), re.M)}
want = fn["0x2000"]["own_ms"] * 1e6
assert abs(rows.get("0x2000", 0) - want) <= 1e-6 * want + 4097, "pprof flat 0x2000: %s ns, analyse %d" % (rows.get("0x2000"), want)
PY
else
	echo "skip  pprof of the deep trace read by go tool pprof: go is not installed (apt-get install golang-go)"
fi
mi_verdict "a recursion 200,000 deep: every export under ulimit -t 20, stacks cut at 4096 frames" "$why" \
	check check err stderr top.err "pprof stderr"
mi_finish
