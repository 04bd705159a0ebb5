# serve.sh — `inspect serve --pid PID --listen 127.0.0.1:PORT` against
# tests/inspect/serve_target (three threads holding known blocks, under
# MEMINST=mim,control=on, then mis), on a free port picked by a retry loop:
#   - /debug/pprof/heap and /allocs with curl: Go's four sample types in
#     its order, allocs' default alloc_space, a build-id on every mapping
#     and a mapping on every location, the threads' live blocks with their
#     thread labels (serve-w1's 100 x 1000 bytes, serve-w2's 50 x 3000,
#     main's 30 x 500), main_temp's 1000 calls with nothing live; the same
#     heap read by `go tool pprof -raw http://...` (skipped without go);
#   - the index; /debug/pprof/profile?seconds=0 answers 400 (its profiles:
#     serve_profile.sh); a bad path 404, POST
#     405, a garbled request line 400, a client that sends half a request
#     and waits is dropped and the next request answered;
#   - every answer of the soak decoded by a protocol-buffers reader of its
#     own (pprof_check below, no go needed): Go's four sample types in its
#     order, period_type space/bytes and period 1, time_nanos (within a day
#     of now) and duration_nanos, a mapping with a build-id on every
#     location and a function on every line, labels type and class on every
#     sample, thread and tid on every live one;
#   - the soak: 40 scrapes (a count, not a time) of the three-threaded
#     target, each answer 200 and decoded as above with the same live
#     memory and counters as the first (the target is idle), leave the
#     target's descriptors and threads as they were, its VmRSS within 1 MB
#     of what it was after the 5th scrape (the first scrapes' step: the
#     snapshot machinery's own memory), and no temporary file behind;
#   - SIGTERM stops the server with status 0; the target's end stops it
#     with status 4 and one line;
#   - mis: the heap by type (no thread labels);
#   - bad input, one line and a non-zero status each: a port in use, a
#     non-loopback address without --allow-remote, a pid without a
#     process, no --pid.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/inspect/serve_lib.sh"

TARGET=$top_builddir/tests/inspect/serve_target

# start_target MODE: serve_target under MEMINST=MODE,control=on; sets PID.
# (each target's output a file of its own: the last one's "ready" must not
# be taken for this one's)
start_target() {
	serve_start_target "$TARGET" "$1,control=on" "$1"
}

# check_heap RAW heap|allocs [mis]: the -raw text of a heap profile (mim by default).
check_heap() {
	/usr/bin/python3 - "$@" <<'PY'
import gzip, re, sys
raw = open(sys.argv[1]).read()
head, rest = raw.split("Samples:\n", 1)
types = rest.splitlines()[0]
want = "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
if sys.argv[2] == "allocs":
    want = want.replace("alloc_space/bytes", "alloc_space/bytes[dflt]")
assert types == want, "sample types: %s" % types
assert "PeriodType: space bytes\nPeriod: 1\n" in head, head
maps = re.findall(r"^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+) ([0-9a-f]*) ", raw, re.M)
assert maps and all(len(m[2]) >= 16 for m in maps), "a mapping without a build-id: %s" % maps
locs = raw.split("Locations\n", 1)[1].split("Mappings\n", 1)[0]
lm = re.findall(r"^\s+(\d+): 0x[0-9a-f]+ (?:M=(\d+) )?(\S+)", locs, re.M)
assert all(m[1] in set(x[0] for x in maps) for m in lm), "a location without a mapping: %s" % locs
name = {m[0]: m[2] for m in lm}
samples = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+): (\d+) [^\n]*\n((?:\s+[a-z]+:\[[^\n]*\n)*)", rest, re.M)
got = {}
for ao, asp, io, isp, loc, labels in samples:
    th = re.search(r"thread:\[([^\]]*)\]", labels)
    key = (name[loc].split(".")[0], th.group(1) if th else None)
    v = got.setdefault(key, [0, 0, 0, 0])
    for k, x in enumerate((ao, asp, io, isp)):
        v[k] += int(x)
    assert "class:[serve_target]" in labels or name[loc].split(".")[0] not in ("worker_alloc", "worker_big", "main_alloc", "main_temp"), labels
mode = sys.argv[3] if len(sys.argv) > 3 else "mim"
if mode == "mim":
    want = {("worker_alloc", None): [100, 100000, 0, 0], ("worker_alloc", "serve-w1"): [0, 0, 100, 100000],
            ("worker_big", None): [50, 150000, 0, 0], ("worker_big", "serve-w2"): [0, 0, 50, 150000],
            ("main_alloc", None): [30, 15000, 0, 0], ("main_alloc", "serve_target"): [0, 0, 30, 15000],
            ("main_temp", None): [1000, 10000, 0, 0]}
else:
    want = {("worker_alloc", None): [100, 100000, 100, 100000], ("worker_big", None): [50, 150000, 50, 150000],
            ("main_alloc", None): [30, 15000, 30, 15000], ("main_temp", None): [1000, 10000, 0, 0]}
for k, v in want.items():
    assert got.get(k) == v, "%s: %s, want %s (all: %s)" % (k, got.get(k), v, got)
PY
}

# pprof_check FILE...: each gzipped profile decoded (the wire format read
# here, field numbers of pprof's profile.proto) and checked as a mim heap
# profile; prints one line per file: its live and counter totals.
pprof_check() {
	serve_py "$@" <<'PY'
for path in sys.argv[1:]:
    p = msg(gzip.decompress(open(path, "rb").read()))
    st = [v.decode() for w, v in p.get(6, [])]
    assert st and st[0] == "", "%s: string_table[0] is not empty" % path
    s = lambda i: st[i]
    vt = lambda b: (s(one(msg(b), 1)), s(one(msg(b), 2)))
    types = [vt(v) for w, v in p.get(1, [])]
    assert types == [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"),
                     ("inuse_space", "bytes")], "%s: sample types %s" % (path, types)
    assert 11 in p and vt(one(p, 11)) == ("space", "bytes") and one(p, 12) == 1, "%s: period" % path
    now = time.time() * 1e9
    assert abs(one(p, 9) - now) < 86400e9, "%s: time_nanos %d" % (path, one(p, 9))
    assert one(p, 10) > 0, "%s: no duration_nanos" % path
    maps = {}
    for w, v in p.get(3, []):
        m = msg(v)
        maps[one(m, 1)] = s(one(m, 6))
    assert maps and all(len(b) >= 16 for b in maps.values()), "%s: a mapping without a build-id: %s" % (path, maps)
    funcs = {one(msg(v), 1) for w, v in p.get(5, [])}
    locs = set()
    for w, v in p.get(4, []):
        l = msg(v)
        assert one(l, 2) in maps, "%s: location %d has no mapping" % (path, one(l, 1))
        lines = [msg(x) for _, x in l.get(4, [])]
        assert lines and all(one(x, 1) in funcs for x in lines), "%s: location %d: a line without a function" % (path, one(l, 1))
        locs.add(one(l, 1))
    total = [0, 0, 0, 0]
    threads = {}
    for w, v in p.get(2, []):
        smp = msg(v)
        ids = [x for ww, vv in smp.get(1, []) for x in nums(ww, vv)]
        vals = [x for ww, vv in smp.get(2, []) for x in nums(ww, vv)]
        assert ids and all(x in locs for x in ids), "%s: a sample at no location" % path
        assert len(vals) == 4, "%s: a sample with %d values" % (path, len(vals))
        lab = {}
        for _, lv in smp.get(3, []):
            l = msg(lv)
            lab[s(one(l, 1))] = s(one(l, 2)) if 2 in l else one(l, 3)
        assert "type" in lab and "class" in lab, "%s: a sample without type or class: %s" % (path, lab)
        if vals[2]:
            assert lab.get("thread") and lab.get("tid", 0) > 0, "%s: live memory without its thread: %s" % (path, lab)
            threads[lab["thread"]] = threads.get(lab["thread"], 0) + vals[3]
        for k in range(4):
            total[k] += vals[k]
    assert threads.get("serve-w1", 0) >= 100000 and threads.get("serve-w2", 0) >= 150000, "%s: threads %s" % (path, threads)
    print("alloc_objects=%d alloc_space=%d inuse_objects=%d inuse_space=%d" % tuple(total))
PY
}

# rss: the target's VmRSS in kB now.
rss() {
	awk '/^VmRSS/ { print $2 }' "/proc/$PID/status"
}

# ------------------------------------------------------------ mim, curl --
why=
start_target mim
[ -n "$PID" ] || mi_why_add "the target did not start"
serve_start || mi_why_add "inspect serve did not start: $(cat s.err)"
before=$(fd_task)
code=$(curl -s -o heap.pb.gz -w '%{http_code}' "$URL/debug/pprof/heap")
[ "$code" = 200 ] || mi_why_add "heap: HTTP $code"
code=$(curl -s -o allocs.pb.gz -w '%{http_code}' "$URL/debug/pprof/allocs")
[ "$code" = 200 ] || mi_why_add "allocs: HTTP $code"
if [ $have_go = yes ]; then
	go tool pprof -raw heap.pb.gz >heap.raw 2>pp.err || mi_why_add "pprof -raw heap exited $?"
	go tool pprof -raw allocs.pb.gz >allocs.raw 2>>pp.err || mi_why_add "pprof -raw allocs exited $?"
	check_heap heap.raw heap >check 2>&1 || mi_why_add "heap: $(tail -n 1 check)"
	check_heap allocs.raw allocs >>check 2>&1 || mi_why_add "allocs: $(tail -n 1 check)"
	go tool pprof -raw "$URL/debug/pprof/heap" >url.raw 2>>pp.err || mi_why_add "pprof -raw URL exited $?"
	check_heap url.raw heap >>check 2>&1 || mi_why_add "pprof -raw URL: $(tail -n 1 check)"
	go tool pprof -top "$URL/debug/pprof/heap" >top.txt 2>>pp.err || mi_why_add "pprof -top URL exited $?"
	grep -q 'worker_big' top.txt || mi_why_add "pprof -top URL: no worker_big"
else
	echo "skip  go tool pprof's checks: go is not installed (apt-get install golang-go)"
	gzip -t heap.pb.gz allocs.pb.gz 2>>check || mi_why_add "the profiles are not gzip"
fi
mi_verdict "heap and allocs: Go's sample types, build-ids, mappings, the threads' blocks and counters" "$why" \
	check check s.err "serve stderr" pp.err "pprof stderr"

# ------------------------------------------------------- other answers --
why=
curl -s "$URL/debug/pprof/" >index.html
grep -q 'href="heap"' index.html && grep -q 'href="allocs"' index.html || mi_why_add "index: no links"
code=$(curl -s -o prof.txt -w '%{http_code}' "$URL/debug/pprof/profile?seconds=0")
[ "$code" = 400 ] && grep -q 'from 1 to 300' prof.txt || mi_why_add "profile: HTTP $code $(cat prof.txt)"
code=$(curl -s -o nf.txt -w '%{http_code}' "$URL/debug/pprof/goroutine")
[ "$code" = 404 ] || mi_why_add "a bad path: HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/debug/pprof/heap")
[ "$code" = 405 ] || mi_why_add "POST: HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/heap?debug=1")
[ "$code" = 400 ] || mi_why_add "debug=1: HTTP $code"
/usr/bin/python3 - "$PORT" >raw.txt 2>&1 <<'PY' || mi_why_add "raw requests: $(tail -n 1 raw.txt)"
import socket, sys
def ask(data, wait_close=True):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
    s.sendall(data)
    out = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        out += c
    return out
assert ask(b"HELLO\r\n\r\n").startswith(b"HTTP/1.1 400 "), "garbled line not 400"
assert ask(b"GET /x HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n").startswith(b"HTTP/1.1 400 "), "a long head not 400"
# half a request, then nothing: dropped after the read deadline, not waited on for ever
slow = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
slow.sendall(b"GET /debug/pprof/ HTTP/1.1\r\n")
r = slow.recv(65536)
assert r.startswith(b"HTTP/1.1 400 "), "a slow client: %r" % r[:40]
assert ask(b"GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200 "), "after a slow client"
PY
mi_verdict "index, profile seconds=0 400, 404, 405, 400, a slow client dropped" "$why" raw.txt raw nf.txt body

# --------------------------------------------------------------- soak --
why=
n=0
rss_first=$(rss)
while [ $n -lt 40 ]; do
	n=$((n + 1))
	curl -s -o "scrape.$n.pb.gz" -w '%{http_code}\n' "$URL/debug/pprof/heap" >>codes.txt
	[ $n = 5 ] && rss_step=$(rss)
done
rss_last=$(rss)
after=$(fd_task)
[ "$(grep -c '^200$' codes.txt)" = 40 ] || mi_why_add "not 40 answers 200: $(sort codes.txt | uniq -c)"
[ "$before" = "$after" ] || mi_why_add "descriptors and threads $before before, $after after the scrapes"
[ -z "$(ls -A "$TMPDIR")" ] || mi_why_add "temporary files left: $(ls "$TMPDIR")"
[ "$rss_last" -le $((rss_step + 1024)) ] ||
	mi_why_add "the target's VmRSS grew: $rss_first kB before, $rss_step after 5 scrapes, $rss_last after 40"
n=0
files=
while [ $n -lt 40 ]; do
	n=$((n + 1))
	files="$files scrape.$n.pb.gz"
done
pprof_check $files >decoded.txt 2>&1 || mi_why_add "an answer: $(tail -n 1 decoded.txt)"
[ "$(sort -u decoded.txt | wc -l)" = 1 ] || mi_why_add "the answers differ: $(sort decoded.txt | uniq -c | head -n 3)"
mi_verdict "40 scrapes: each decoded, the same memory; the target's descriptors and threads unchanged ($after), VmRSS flat ($rss_first kB, $rss_step after 5, $rss_last after 40), no file left" \
	"$why" decoded.txt decoded s.err stderr

# -------------------------------------------------------------- stops --
why=
serve_stop
[ $ST = 0 ] || mi_why_add "SIGTERM: exit status $ST"
serve_start || mi_why_add "inspect serve did not start again: $(cat s.err)"
serve_stop_target
i=0
while kill -0 "$SERVE" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
wait "$SERVE"
rc=$?
SERVE=
[ $rc = 4 ] || mi_why_add "the target's end: exit status $rc"
[ "$(wc -l <s.err)" = 1 ] && grep -q 'has ended' s.err || mi_why_add "the target's end: $(cat s.err)"
mi_verdict "SIGTERM stops the server (status 0), the target's end too (status 4, one line)" "$why" s.err stderr

# ---------------------------------------------------------------- mis --
why=
: >check
start_target mis
serve_start || mi_why_add "inspect serve did not start: $(cat s.err)"
code=$(curl -s -o mis.pb.gz -w '%{http_code}' "$URL/debug/pprof/heap")
[ "$code" = 200 ] || mi_why_add "heap: HTTP $code"
if [ $have_go = yes ]; then
	go tool pprof -raw mis.pb.gz >mis.raw 2>pp.err || mi_why_add "pprof -raw exited $?"
	check_heap mis.raw heap mis >check 2>&1 || mi_why_add "$(tail -n 1 check)"
	! grep -q 'thread:\[' mis.raw || mi_why_add "thread labels in mis"
fi
serve_stop
mi_verdict "mis: the heap by site from the status, no thread labels" "$why" check check s.err stderr

# ----------------------------------------------------------- bad input --
# (the mis target still runs)
why=
serve_start || mi_why_add "inspect serve did not start: $(cat s.err)"
"$INSPECT" serve --pid "$PID" --listen "127.0.0.1:$PORT" >/dev/null 2>in_use.err
rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <in_use.err)" = 1 ] && grep -q 'in use' in_use.err || mi_why_add "port in use: $rc $(cat in_use.err)"
serve_stop
"$INSPECT" serve --pid "$PID" --listen 0.0.0.0:0 >/dev/null 2>remote.err
rc=$?
[ $rc = 2 ] && [ "$(wc -l <remote.err)" = 1 ] && grep -q 'allow-remote' remote.err || mi_why_add "0.0.0.0: $rc $(cat remote.err)"
serve_stop_target
"$INSPECT" serve --pid "$PID" --listen 127.0.0.1:0 >/dev/null 2>pid.err
rc=$?
[ $rc = 4 ] && [ "$(wc -l <pid.err)" = 1 ] || mi_why_add "a pid without a process: $rc $(cat pid.err)"
"$INSPECT" serve >/dev/null 2>nopid.err
rc=$?
[ $rc = 2 ] && [ "$(wc -l <nopid.err)" = 1 ] || mi_why_add "no --pid: $rc $(cat nopid.err)"
mi_verdict "bad input: a port in use, 0.0.0.0 without --allow-remote, a gone pid, no --pid: one line each" "$why" \
	in_use.err "port in use" remote.err "remote" pid.err "gone pid" nopid.err "no pid"
mi_finish
