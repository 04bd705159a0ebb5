# html.sh — `inspect html` on a session of tests/session/known (meminst
# --mim --trace=wall): one well-formed, self-contained file (python3's
# html.parser; no src= or href= that would fetch anything) that carries the
# data (the functions, the classes at the peak, both flame graphs with valid
# JSON, names escaped, the leaks at exit), and, when Debian's chromium is
# installed, renders in headless Chromium with no console message and a
# non-empty screenshot, the flame graphs drawn by the script; the views an
# address can carry (#search=, #inverted, #thread=) show what they say.
. "$top_srcdir/tests/session/session_lib.sh"

ss_known s.db --mim --trace=wall --interval=20ms --site-depth=1

why=
"$INSPECT" html s.db -o r.html 2>h.err || mi_why_add "exited $?"
/usr/bin/python3 - r.html <<'PY' >h.check 2>&1 || mi_why_add "$(tail -n 1 h.check)"
import json, sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "circle", "line", "polyline"}
class Check(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.scripts, self.text, self.cur = [], {}, [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        assert "src" not in a and "href" not in a, "<%s> fetches something: %s" % (tag, a)
        if tag == "script":
            self.cur = a.get("id", "")
            self.scripts[self.cur] = ""
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, "</%s> closes <%s> at %s" % (
            tag, self.stack[-1] if self.stack else None, self.getpos())
        self.stack.pop()
        if tag == "script":
            self.cur = None
    def handle_data(self, data):
        if self.cur is not None:
            self.scripts[self.cur] += data
        else:
            self.text.append(data)
p = Check()
p.feed(open(sys.argv[1], encoding="utf-8").read())
p.close()
assert not p.stack, "not closed: %s" % p.stack
text = " ".join(p.text)
for want in ("alloc_big", "alloc_small", "burn_a", "work", "<alloc>", "known", "Memory over time",
             "Live at the peak", "Still live at exit", "_IO_file_doallocate"):
    assert want in text, "%r is not in the text" % want
flames = {}
for key in ("flame-time", "flame-bytes"):
    assert key in p.scripts, "no %s data" % key
    flames[key] = d = json.loads(p.scripts[key])
    assert d["tree"][1] > 0, "%s: an empty tree" % key
names = flames["flame-bytes"]["names"]
def paths(node, prefix):
    if node[0] <= -2: # a thread's part: its frames hang on its parent
        for c in (node[2] if len(node) > 2 else []):
            yield from paths(c, prefix)
        return
    name = "all" if node[0] < 0 else names[node[0]]
    yield prefix + [name], node[1]
    for c in (node[2] if len(node) > 2 else []):
        yield from paths(c, prefix + [name])
b = {}
for k, v in paths(flames["flame-bytes"]["tree"], []):
    b[";".join(k)] = b.get(";".join(k), 0) + v
assert b.get("all;main;alloc_big") == 40 * 256 * 1024, "bytes flame: alloc_big %s" % b.get("all;main;alloc_big")
raw = open(sys.argv[1], encoding="utf-8").read()
assert "\\u003calloc\\u003e" in raw, "<alloc> is not escaped in the JSON"
assert "&lt;alloc&gt;" in raw, "<alloc> is not escaped in the HTML"
assert len(raw) < 200000, "%d bytes for a small run" % len(raw)
PY
mi_verdict "html: well-formed, self-contained, carries the data" "$why" h.check check h.err stderr

CHROMIUM=$(command -v chromium || command -v chromium-browser)
if [ -n "$CHROMIUM" ]; then
	why=
	# --no-sandbox: the sandbox refuses to run as root (containers, CI)
	set -- --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$MI_TMP/profile" \
		--enable-logging=stderr --v=0 --window-size=1300,2000
	$MI_TIMEOUT "$CHROMIUM" "$@" --screenshot="$MI_TMP/shot.png" "file://$MI_TMP/r.html" >shot.out 2>shot.err ||
		mi_why_add "chromium --screenshot exited $?"
	$MI_TIMEOUT "$CHROMIUM" "$@" --dump-dom "file://$MI_TMP/r.html" >dom.html 2>dom.err ||
		mi_why_add "chromium --dump-dom exited $?"
	grep -h 'CONSOLE' shot.err dom.err >console.txt && mi_why_add "console messages: $(head -n 1 console.txt)"
	[ "$(wc -c <shot.png 2>/dev/null || echo 0)" -gt 10000 ] || mi_why_add "no screenshot, or an empty one"
	# the script drew both flame graphs: frames named after the functions
	/usr/bin/python3 - dom.html <<'PY' >dom.check 2>&1 || mi_why_add "$(tail -n 1 dom.check)"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
for key in ("flame-time-view", "flame-bytes-view"):
    m = re.search(r'id="%s"[^>]*>(.*?)</div>' % key, dom, re.S)
    assert m and m.group(1).count("<rect") >= 3, "%s: no frames drawn" % key
    assert "alloc_big" in m.group(1) or key == "flame-time-view", "%s: alloc_big not drawn" % key
PY
	mi_verdict "html render: headless Chromium, no console messages, flame graphs drawn" "$why" \
		console.txt console dom.check check shot.err "chromium stderr"

	# The views the address can carry: a search highlights and sums the matches in both graphs,
	# #inverted puts the functions where the time is spent at the root, #thread=K keeps one thread
	# (a run of tests/trace/trace_target threads10: four workers calling leaf 10000 to 40000
	# times with work of their own in between, so that their frames stay wide enough to draw
	# beside what a loaded machine adds to the main thread: <preempted>, slow thread starts).
	why=
	"$LAUNCH" -q --mim --trace=wall -o t.db -- "$top_builddir/tests/trace/trace_target" \
		threads10 >out 2>err || mi_why_add "meminst (threads) exited $?"
	"$INSPECT" html t.db -o t.html 2>>h.err || mi_why_add "html (threads) exited $?"
	# the thread groups of main and of the busiest worker
	/usr/bin/python3 - t.html <<'PY' >groups 2>>h.err
import json, re, sys
d = json.loads(re.search(r'<script type="application/json" id="flame-time">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
def has(node, name):
    return (node[0] >= 0 and d["names"][node[0]] == name) or any(has(c, name) for c in (node[2] if len(node) > 2 else []))
groups = [g for g in d["tree"][2] if g[0] <= -2]
main = [-2 - g[0] for g in groups if has(g, "main")]
work = sorted((g[1], -2 - g[0]) for g in groups if has(g, "worker"))
print(main[0] if main else 0, work[-1][1] if work else 0)
PY
	read -r TMAIN TWORK <groups
	for v in "r.html#search=alloc_" "r.html#inverted" "t.html#thread=$TMAIN" "t.html#thread=$TWORK" "t.html#all"; do
		$MI_TIMEOUT "$CHROMIUM" "$@" --dump-dom "file://$MI_TMP/$v" >"view-${v#*#}.html" 2>>view.err ||
			mi_why_add "chromium --dump-dom $v exited $?"
	done
	grep -h 'CONSOLE' view.err >>console.txt && mi_why_add "console messages: $(head -n 1 console.txt)"
	/usr/bin/python3 - r.html t.html "${TMAIN:-0}" "${TWORK:-0}" <<'PY' >view.check 2>&1 || mi_why_add "$(tail -n 1 view.check)"
import html, json, re, sys
def data(path, key):
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % key, open(path).read(), re.S)
    return json.loads(m.group(1))
def view(name, key):
    dom = open("view-%s.html" % name, encoding="utf-8").read()
    m = re.search(r'id="%s-view"[^>]*>(.*?)</div>' % key, dom, re.S)
    assert m, "%s: no %s drawn" % (name, key)
    return dom, m.group(1)
def frames(svg):
    """(name, depth, hit) of every frame: depth from the rect's y in the viewBox"""
    h = float(re.search(r'viewBox="0 0 \S+ (\S+)"', svg).group(1))
    out = []
    # (the whole name: a narrow frame's text is cut, "l..")
    for name, g in re.findall(r'<g data-name="([^"]*)">(.*?)</g>', svg, re.S):
        y = float(re.search(r'<rect[^>]* y="([\d.]+)"', g).group(1))
        out.append((html.unescape(name), round((h - y) / 18) - 1, 'class="hit"' in g))
    return out
# search: the frames named alloc_* are marked, the sums said under each graph
dom, svg = view("search=alloc_", "flame-bytes")
hits = {n for n, d, hit in frames(svg) if hit}
assert "alloc_big" in hits and "alloc_small" in hits, "bytes: marked %s" % hits
assert all(n.startswith("alloc_") for n in hits), "bytes: marked %s" % hits
b = data(sys.argv[1], "flame-bytes")
def total(node, pred, inside=False):
    if node[0] <= -2 or node[0] == -1:
        return sum(total(c, pred) for c in (node[2] if len(node) > 2 else []))
    if pred(b["names"][node[0]]):
        return node[1]
    return sum(total(c, pred) for c in (node[2] if len(node) > 2 else []))
want = 100 * total(b["tree"], lambda n: "alloc_" in n) / b["tree"][1]
m = re.search(r'id="flame-bytes-found">([^<]*)<', dom)
assert m and "%.2f%% of all" % want in m.group(1), "bytes found: %s, want %.2f%%" % (m and m.group(1), want)
dom, svg = view("search=alloc_", "flame-time")
assert any(hit for n, d, hit in frames(svg)), "time: nothing marked"
# inverted: work (the own time of burn_a's and burn_b's calls) right above the root, its callers above it
dom, svg = view("inverted", "flame-time")
f = frames(svg)
assert ("work", 1, False) in f, "inverted: work is not next to the root: %s" % f
assert ("burn_a", 2, False) in f and ("main", 3, False) in f, "inverted: work's callers: %s" % f
# thread filter: the main thread has no worker; a worker's thread has no main
names = lambda v: {n for n, d, hit in frames(view(v, "flame-time")[1])}
allt, t0, t4 = names("all"), names("thread=" + sys.argv[3]), names("thread=" + sys.argv[4])
# all threads: every function whose frame is at least a pixel wide (of the 1200 of the view) is
# drawn, main and worker among them; leaf too when its calls are (under load the workers'
# <preempted> can outweigh them)
t = data(sys.argv[2], "flame-time")
def wide(node, out):
    if node[0] >= 0 and node[1] * 1200 >= t["tree"][1]:
        out.add(t["names"][node[0]])
    for c in (node[2] if len(node) > 2 else []):
        wide(c, out)
    return out
want = wide(t["tree"], set())
assert {"main", "worker"} <= want and want <= allt, "all threads: %s drawn, %s wide enough" % (allt, want)
assert "main" in t0 and "worker" not in t0, "main's thread: %s" % t0
assert "worker" in t4 and "main" not in t4, "a worker's thread: %s" % t4
threads = data(sys.argv[2], "flame-time")["threads"]
assert len(threads) >= 5 and '<select class="thread"' in open("view-all.html").read(), "no thread filter: %s" % threads
PY
	mi_verdict "html views in headless Chromium: search, bottom-up, thread filter" "$why" \
		view.check check console.txt console view.err "chromium stderr"
else
	echo "skip  html render: chromium is not installed (apt-get install chromium)"
fi

why=
"$INSPECT" html s.db >/dev/null 2>u.err
[ $? -eq 2 ] || mi_why_add "no -o: not exit status 2"
"$INSPECT" html "$top_srcdir/README.md" -o x.html 2>>u.err
[ $? -eq 3 ] || mi_why_add "a text file: not exit status 3 (inspect(1): not valid input)"
[ -e x.html ] && mi_why_add "x.html written for a bad input"
"$LAUNCH" -q --mim --no-time -o m.db -- "$KNOWN" >out 2>err
"$INSPECT" html m.db -o m.html 2>m.err || mi_why_add "a session without a trace: exited $?"
grep -q 'No time profile' m.html || mi_why_add "no line saying there is no time profile"
grep -q 'Memory over time' m.html || mi_why_add "no memory chart without a trace"
mi_verdict "html: usage errors; a session without a trace" "$why" u.err stderr m.err "stderr (no trace)"

# a damaged session (page 2's b-tree header overwritten): one line, exit 3
why=
cp s.db d.db
psize=$(/usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_size").fetchone()[0])' s.db)
printf 'XXXXXXXX' | dd of=d.db bs=1 seek="$psize" conv=notrunc 2>/dev/null
"$INSPECT" html d.db -o d.html 2>d.err
rc=$?
[ $rc -eq 3 ] || mi_why_add "exit status $rc, not 3"
[ "$(wc -l <d.err)" = 1 ] || mi_why_add "not one line on stderr"
grep -q 'damaged' d.err || mi_why_add "no 'damaged' in the message"
mi_verdict "html: a damaged session" "$why" d.err stderr

# --pid of no process of the session: one line, exit 1, no page written
why=
"$INSPECT" html --pid 1 s.db -o p.html 2>p.err
rc=$?
[ $rc -eq 1 ] || mi_why_add "exit status $rc, not 1"
[ "$(wc -l <p.err)" = 1 ] && grep -q 'no process 1 in this session' p.err || mi_why_add "not one clear line"
[ -e p.html ] && mi_why_add "p.html written"
mi_verdict "html --pid of no process of the session" "$why" p.err stderr
mi_finish
