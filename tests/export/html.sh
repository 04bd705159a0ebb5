# html.sh — `inspect html` on a session of tests/session/known (meminst
# --mim --trace=wall): one well-formed, self-contained file (python3's
# html.parser; no src= or href= that would fetch anything) that carries the
# data (the functions, the classes at the peak, both flame graphs with valid
# JSON, names escaped), and, when Debian's chromium is installed, renders in
# headless Chromium with no console message and a non-empty screenshot,
# the flame graphs drawn by the script.
. "$top_srcdir/tests/integration/lib.sh"

export MEMINST_LIBRARY="$MEMINST_LIB"
INSPECT=$top_builddir/inspect/inspect
PROG=$top_builddir/tests/session/known
cd "$MI_TMP" || exit 99

"$top_builddir/session/meminst" -q --mim --trace=wall --interval=20ms -o s.db -- "$PROG" >out 2>err || {
	mi_fail "meminst on tests/session/known" "exited $?" err stderr
	mi_finish
}

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
             "Live at the peak"):
    assert want in text, "%r is not in the text" % want
flames = {}
for key in ("flame-time", "flame-bytes"):
    assert key in p.scripts, "no %s data" % key
    flames[key] = d = json.loads(p.scripts[key])
    assert d["tree"][1] > 0, "%s: an empty tree" % key
names = flames["flame-bytes"]["names"]
def paths(node, prefix):
    name = "all" if node[0] < 0 else names[node[0]]
    yield prefix + [name], node[1]
    for c in (node[2] if len(node) > 2 else []):
        yield from paths(c, prefix + [name])
b = {";".join(k): v for k, v in paths(flames["flame-bytes"]["tree"], [])}
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
else
	echo "skip  html render: chromium is not installed (apt-get install chromium)"
fi

why=
"$INSPECT" html s.db >/dev/null 2>u.err
[ $? -eq 2 ] || mi_why_add "no -o: not exit status 2"
"$INSPECT" html "$top_srcdir/README.md" -o x.html 2>>u.err
[ $? -eq 2 ] || mi_why_add "a text file: not exit status 2"
[ -e x.html ] && mi_why_add "x.html written for a bad input"
"$top_builddir/session/meminst" -q --mim --no-time -o m.db -- "$PROG" >out 2>err
"$INSPECT" html m.db -o m.html 2>m.err || mi_why_add "a session without a trace: exited $?"
grep -q 'No time profile' m.html || mi_why_add "no line saying there is no time profile"
grep -q 'Memory over time' m.html || mi_why_add "no memory chart without a trace"
mi_verdict "html: usage errors; a session without a trace" "$why" u.err stderr m.err "stderr (no trace)"
mi_finish
