#!/bin/sh
# html_sites.sh — `inspect html`'s parts by allocation site, on sessions of
# tests/targets/heap_questions (the launcher's defaults: site_depth=user,
# interval=auto; mis and mim), whose sites are known: temp_loop 1000 calls
# of 48 bytes, all temporary; keep_many 200 calls of 32 bytes; leak_some 5
# blocks of 1000 bytes never freed; peak one 1 MiB block, the peak's top site.
#   - the flame graph of heaptrack's metrics: the page's stacks, for each of
#     calls, allocated, temporary, peak and leaked, are the lines of
#     `inspect export --format folded --metric M` and add up to the totals
#     `inspect report` gives; the known sites' figures;
#   - the memory over time stacked by site: the series of `inspect timeline
#     --by type --limit 10` (names and bytes at every point), peak() on top;
#   - a process that is not the program (--pid of a child of sh -c): its
#     own sites, the page says which process;
#   - bounded: 350 sites (each called a different number of times) keep at
#     most 300 stacks per metric, the rest one "more stacks" entry, and the
#     totals still add up;
#   - headless Chromium (when installed): no console message; the stacked
#     chart draws a band per series with a non-empty area, peak()'s the
#     thickest, and the pointer in it shows peak() and 1.0 MiB at that time
#     (a copy of the page moves it); the sites' graph draws each metric picked (#metric=WORD), the
#     known site's frame as wide as its share of the metric's total.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
PROG=$top_builddir/tests/targets/heap_questions
METRICS="calls allocated temporary peak leaked"

# page.py HTML: the JSON the page carries, by id, as one JSON object.
cat >page.py <<'PY'
import json, re, sys
raw = open(sys.argv[1], encoding="utf-8").read()
out = {}
for key in ("memory-sites", "flame-sites"):
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % key, raw, re.S)
    out[key] = json.loads(m.group(1)) if m else None
m = re.search(r'of process (\d+) whose bytes', raw)
out["chart_pid"] = int(m.group(1)) if m else None
json.dump(out, sys.stdout)
PY

# check_page DB HTML [PID]: the page's data against folded, report and timeline.
check_page() {
	cp_db=$1 cp_html=$2 cp_pid=${3:+--pid $3}
	# shellcheck disable=SC2086
	"$INSPECT" html $cp_pid "$cp_db" -o "$cp_html" 2>>x.err || mi_why_add "html $cp_db exited $?"
	/usr/bin/python3 page.py "$cp_html" >"$cp_html.json" 2>>x.err || mi_why_add "$cp_html: no data"
	# shellcheck disable=SC2086
	"$INSPECT" report $cp_pid --json "$cp_db" >"$cp_html.report" 2>>x.err || mi_why_add "report exited $?"
	# shellcheck disable=SC2086
	"$INSPECT" timeline $cp_pid --by type --limit 10 --json "$cp_db" >"$cp_html.timeline" 2>>x.err ||
		mi_why_add "timeline exited $?"
	for m in $METRICS; do
		# shellcheck disable=SC2086
		"$INSPECT" export $cp_pid --format folded --metric $m -o "$cp_html.$m" "$cp_db" 2>/dev/null ||
			: >"$cp_html.$m" # (nothing leaked: no file)
	done
	# shellcheck disable=SC2086
	/usr/bin/python3 - "$cp_html" $METRICS <<'PY' >>check.out 2>&1 || mi_why_add "$cp_html: $(tail -n 1 check.out)"
import json, sys
page, metrics = sys.argv[1], sys.argv[2:]
d = json.load(open(page + ".json"))
fl, ms = d["flame-sites"], d["memory-sites"]
assert fl and ms, "%s: no sites data (flame %s, chart %s)" % (page, bool(fl), bool(ms))
assert fl["metrics"] == metrics, "metrics %s" % fl["metrics"]
rep = json.load(open(page + ".report"))
report = [rep["allocations"]["calls"], rep["allocations"]["allocated_bytes"], rep["allocations"]["temporary"],
          rep["peak"]["snapshot_bytes"], rep["allocations"]["leaked_bytes"] or 0]
for m, name in enumerate(metrics):
    page_lines = {s[0]: s[1 + m] for s in fl["stacks"] if s[1 + m]}
    folded = {}
    for l in open("%s.%s" % (page, name)):
        stack, v = l.rstrip("\n").rsplit(" ", 1)
        folded[stack] = int(v)
    # every stack carried is folded's; those left out are added up in "other"
    for k, v in page_lines.items():
        assert folded.get(k) == v, "%s: %s is %d, folded says %s" % (name, k, v, folded.get(k))
    left = sum(v for k, v in folded.items() if k not in page_lines)
    assert left == fl["other"][1 + m], "%s: folded has %d more, other says %d" % (name, left, fl["other"][1 + m])
    assert fl["other"][0] or page_lines == folded, "%s: stacks left out" % name
    total = sum(page_lines.values()) + fl["other"][1 + m]
    assert total == fl["totals"][m] == report[m], "%s: stacks add up to %d, totals say %d, report %d" % (
        name, total, fl["totals"][m], report[m])
# the series of timeline --by type, point by point
tl = json.load(open(page + ".timeline"))
names = [s["name"] for s in tl["series"]]
got = [s["name"] for s in ms["series"]]
assert got == names, "series %s, timeline's %s" % (got, names)
pts, times = {}, []
for r in tl["timeline"]:
    if r["snapshot"] not in pts:
        times.append(r["snapshot"])
    pts.setdefault(r["snapshot"], {})[r["name"]] = r["bytes"]
assert len(ms["t"]) == len(times), "%d points, timeline has %d" % (len(ms["t"]), len(times))
for i, t in enumerate(times):
    for s in ms["series"]:
        assert s["v"][i] == pts[t][s["name"]], "%s at %s: %d, timeline %d" % (s["name"], t, s["v"][i], pts[t][s["name"]])
print(page, "ok:", ms["series"][0]["name"], fl["totals"])
PY
}

# site FIGURES PAGE-JSON: the known sites' figures in the page
cat >sites.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fl, ms = d["flame-sites"], d["memory-sites"]
def fig(func, metric):
    m = fl["metrics"].index(metric)
    return sum(s[1 + m] for s in fl["stacks"] if s[0].split(";")[-1] == func)
want = {("temp_loop()", "calls"): 1000, ("temp_loop()", "allocated"): 48000, ("temp_loop()", "temporary"): 1000,
        ("keep_many()", "calls"): 200, ("keep_many()", "allocated"): 6400, ("keep_many()", "temporary"): 0,
        ("leak_some()", "calls"): 5, ("leak_some()", "allocated"): 5000, ("leak_some()", "leaked"): 5000,
        ("leak_some()", "peak"): 5000, ("peak()", "peak"): 1 << 20, ("peak()", "leaked"): 0,
        ("temp_loop()", "leaked"): 0}
for (func, metric), v in want.items():
    assert fig(func, metric) == v, "%s of %s: %d, not %d" % (metric, func, fig(func, metric), v)
top = ms["series"][0]
assert top["name"].startswith("peak()") and max(top["v"]) == 1 << 20, "top series %s up to %d" % (
    top["name"], max(top["v"]))
leak = [s for s in ms["series"] if s["name"].startswith("leak_some()")]
assert leak and max(leak[0]["v"]) == 5000, "leak_some's series: %s" % leak
print("sites ok")
PY

why=
"$LAUNCH" -q -o s.db -- "$PROG" >out 2>err || mi_why_add "meminst (mis) exited $?"
"$LAUNCH" -q --mim -o m.db -- "$PROG" >out 2>>err || mi_why_add "meminst --mim exited $?"
for v in s m; do
	check_page $v.db $v.html
	/usr/bin/python3 sites.py $v.html.json >>check.out 2>&1 || mi_why_add "$v.html: $(tail -n 1 check.out)"
done
mi_verdict "html: the sites' flame graph and stacked chart carry the figures of folded, report and timeline (mis, mim)" \
	"$why" check.out check x.err stderr err "meminst stderr"

# a process of the session that is not the program: the page is the child's when asked
why=
"$LAUNCH" -q -o p.db -- /bin/sh -c "'$PROG'; '$PROG'" >out 2>err || mi_why_add "meminst sh -c exited $?"
MAIN=$("$INSPECT" sql p.db 'SELECT pid FROM session_run' 2>>x.err | tail -n 1 | tr -dc 0-9)
CHILD=$("$INSPECT" sql p.db "SELECT pid FROM snapshot WHERE pid <> $MAIN ORDER BY id LIMIT 1" 2>>x.err |
	tail -n 1 | tr -dc 0-9)
[ -n "$CHILD" ] || mi_why_add "no child process in the session"
check_page p.db p.html "$MAIN"
check_page p.db c.html "$CHILD"
"$INSPECT" html p.db -o d.html 2>>x.err || mi_why_add "html p.db exited $?"
/usr/bin/python3 page.py d.html >d.html.json 2>>x.err
grep -q "The session has 3 processes; this page is of process $MAIN, the program" d.html ||
	mi_why_add "the page does not say which process it is of"
/usr/bin/python3 sites.py c.html.json >>check.out 2>&1 || mi_why_add "the child's page: $(tail -n 1 check.out)"
/usr/bin/python3 - "$MAIN" "$CHILD" <<'PY' >>check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json, sys
main, child = int(sys.argv[1]), int(sys.argv[2])
for page, pid in (("p.html", main), ("d.html", main), ("c.html", child)):
    d = json.load(open(page + ".json"))
    assert d["memory-sites"]["pid"] == pid and d["chart_pid"] == pid, "%s: the chart is of %s, not %d" % (
        page, d["memory-sites"]["pid"], pid)
PY
mi_verdict "html: the sites of the program, or of the process --pid names" "$why" check.out check x.err stderr

# bounded: 350 sites, site i called i times with i bytes, the last block kept
why=
if command -v gcc >/dev/null 2>&1; then
	{
		echo '#include <stdlib.h>'
		echo 'void *volatile sink;'
		i=1
		while [ $i -le 350 ]; do
			echo "__attribute__((noinline)) void site$i(void) { for (int k = 1; k <= $i; k++) { sink = malloc($i); if (k < $i) free(sink); } }"
			i=$((i + 1))
		done
		echo 'int main(void) {'
		i=1
		while [ $i -le 350 ]; do echo "site$i();"; i=$((i + 1)); done
		echo 'return 0; }'
	} >many.c
	gcc -g -O1 many.c -o many 2>cc.err || mi_why_add "gcc exited $?"
	"$LAUNCH" -q -o b.db -- ./many >out 2>err || mi_why_add "meminst (many sites) exited $?"
	check_page b.db b.html
	/usr/bin/python3 - <<'PY' >>check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json
fl = json.load(open("b.html.json"))["flame-sites"]
calls = [s for s in fl["stacks"] if s[1]]
assert len(fl["stacks"]) <= 300 * 5 and len(calls) <= 300 + 5, "%d stacks carried" % len(fl["stacks"])
assert fl["other"][0] >= 45 and fl["other"][1] > 0, "other: %s" % fl["other"]
kept = {s[0].split(";")[-1] for s in calls}
assert "site350" in kept and "site1" not in kept, "the largest kept, the smallest added up: %s" % sorted(kept)[:5]
ms = json.load(open("b.html.json"))["memory-sites"]
assert len(ms["series"]) == 11 and ms["series"][-1].get("other"), "%d series" % len(ms["series"])
assert ms["series"][0]["name"].startswith("site350"), "top series %s" % ms["series"][0]["name"]
print("bounded ok:", len(fl["stacks"]), "stacks, other", fl["other"])
PY
	[ "$(wc -c <b.html)" -lt 400000 ] || mi_why_add "$(wc -c <b.html) bytes for 350 sites"
	mi_verdict "html: at most 300 stacks per metric, the rest added up" "$why" check.out check cc.err gcc
else
	echo "skip  html bounded: gcc is not installed"
fi

CHROMIUM=$(command -v chromium || command -v chromium-browser)
if [ -n "$CHROMIUM" ]; then
	why=
	# --no-sandbox: the sandbox refuses to run as root (containers, CI)
	set -- --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$MI_TMP/profile" \
		--enable-logging=stderr --v=0 --window-size=1300,2600
	for v in s.html m.html s.html#metric=calls s.html#metric=allocated s.html#metric=temporary \
		s.html#metric=peak s.html#metric=leaked; do
		$MI_TIMEOUT "$CHROMIUM" "$@" --dump-dom "file://$MI_TMP/$v" >"dom-${v#*#}.html" 2>>dom.err ||
			mi_why_add "chromium --dump-dom $v exited $?"
	done
	# hovering: a copy of the page whose last script moves the pointer into the top of peak()'s band
	cat >hover.js <<'JS'
<script>
(function () {
  var svg = document.querySelector("#memory-sites-view svg"), band = svg.querySelector('path[data-name^="peak()"]');
  var p = band.getAttribute("d").match(/[\d.]+,[\d.]+/g).map(function (q) { return q.split(",").map(Number); });
  for (var i = 0, top = 0; i < p.length / 2; i++) if (p[i][1] < p[top][1]) top = i;
  var pt = svg.createSVGPoint();
  pt.x = p[top][0] + 1; pt.y = p[top][1] + 2;
  var c = pt.matrixTransform(svg.getScreenCTM());
  svg.dispatchEvent(new MouseEvent("mousemove", { clientX: c.x, clientY: c.y, bubbles: true }));
  var tip = document.getElementById("tip");
  document.body.setAttribute("data-tip", (tip.hidden ? "hidden: " : "") + tip.textContent);
})();
</script>
JS
	cat s.html hover.js >hover.html # (HTML's parser puts what follows </html> in the body)
	$MI_TIMEOUT "$CHROMIUM" "$@" --dump-dom "file://$MI_TMP/hover.html" >dom-hover.html 2>>dom.err ||
		mi_why_add "chromium --dump-dom hover.html exited $?"
	grep -h 'CONSOLE' dom.err >console.txt && mi_why_add "console messages: $(head -n 1 console.txt)"
	/usr/bin/python3 - <<'PY' >dom.check 2>&1 || mi_why_add "$(tail -n 1 dom.check)"
import html, json, re
def view(dom, key):
    m = re.search(r'<div[^>]* id="%s"[^>]*>(.*?)</div>' % key, dom, re.S)
    assert m, "no %s" % key
    return m.group(1)
def area(d):
    xs = [float(a) for a in re.findall(r'([\d.]+),[\d.]+', d)]
    ys = [float(b) for b in re.findall(r'[\d.]+,([\d.]+)', d)]
    return (max(xs) - min(xs)) * (max(ys) - min(ys))
for page in ("s.html", "m.html"):
    dom = open("dom-%s.html" % page, encoding="utf-8").read()
    svg = view(dom, "memory-sites-view")
    bands = re.findall(r'<path d="([^"]*)"[^>]* data-name="([^"]*)"', svg)
    data = json.load(open(page + ".json"))["memory-sites"]
    assert len(bands) == len(data["series"]), "%s: %d bands for %d series" % (page, len(bands), len(data["series"]))
    for d, name in bands:
        assert area(d) > 0, "%s: %s's band has no area" % (page, name)
    # peak()'s band (the first series, at the bottom) is the thickest
    top = [d for d, name in bands if html.unescape(name).startswith("peak()")]
    def tall(d): # the upper edge left to right, then the lower right to left
        ys = [float(b) for b in re.findall(r'[\d.]+,([\d.]+)', d)]
        h = len(ys) // 2
        return max(ys[2 * h - 1 - i] - ys[i] for i in range(h))
    assert top and tall(top[0]) == max(tall(d) for d, n in bands), "%s: peak()'s band is not the thickest" % page
    assert '<ul class="legend">' in dom, "%s: no legend" % page
d = json.load(open("s.html.json"))["flame-sites"]
want = {"calls": "temp_loop()", "allocated": "peak()", "temporary": "temp_loop()", "peak": "peak()",
        "leaked": "leak_some()"}
for metric, func in want.items():
    dom = open("dom-metric=%s.html" % metric, encoding="utf-8").read()
    m = re.search(r'<div[^>]* id="flame-sites-view"[^>]* data-metric="(\w+)"[^>]*>(.*?)</div>', dom, re.S)
    assert m and m.group(1) == metric, "#metric=%s: draws %s" % (metric, m and m.group(1))
    assert '<button type="button" class="metric on" data-for="flame-sites" data-metric="%d"' % \
        d["metrics"].index(metric) in dom, "#metric=%s: its button is not marked" % metric
    frames = {html.unescape(n): float(w) for n, w in
              re.findall(r'<g data-name="([^"]*)"><rect[^>]* width="([\d.]+)"', m.group(2))}
    k = d["metrics"].index(metric)
    share = sum(s[1 + k] for s in d["stacks"] if s[0].split(";")[0] == func) / d["totals"][k]
    assert func in frames and abs(frames[func] / frames["all"] - share) < 0.01, \
        "#metric=%s: %s drawn %s wide of %s, share %.3f" % (metric, func, frames.get(func), frames.get("all"), share)
tip = html.unescape(re.search(r'<body data-tip="([^"]*)"', open("dom-hover.html", encoding="utf-8").read()).group(1))
assert tip.startswith("peak()") and "\n1.0 MiB" in tip and "\nat " in tip, "hovering peak()'s band: %r" % tip
print("drawn; hover:", tip.replace("\n", " / "))
PY
	mi_verdict "html sites in headless Chromium: stacked bands, each metric's flame graph, no console messages" \
		"$why" dom.check check console.txt console dom.err "chromium stderr"
else
	echo "skip  html sites render: chromium is not installed (apt-get install chromium)"
fi
mi_finish
