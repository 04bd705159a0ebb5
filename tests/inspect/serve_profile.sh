# serve_profile.sh — `inspect serve`'s /debug/pprof/profile?seconds=N against
# tests/inspect/profile_target (two threads burning CPU in burn_cpu) started
# dormant (MEMINST=off,control=on):
#   - `go tool pprof -top URL/debug/pprof/profile?seconds=2` reads it and
#     names burn_cpu (skipped without go);
#   - curl's answer decoded by a protocol-buffers reader of its own
#     (cpu_check): sample types samples/count and cpu/nanoseconds, the
#     default cpu, period_type cpu/nanoseconds with period 10 ms (100 Hz),
#     time_nanos within a minute of now, duration_nanos about the seconds
#     asked, a build-id on every mapping and a mapping on every location,
#     burn_cpu in the samples, each labelled with its thread, burn-w1 or
#     burn-w2, and a tid (the threads existed before the sampler started:
#     their identity comes from their signal stream);
#   - the sampler is off again after each profile (no perf event or POSIX
#     timer left in the target), each of the profiles leaves its descriptors
#     and threads as they were before the first (its samples file closed,
#     the trace writer thread ended), and a later profile holds only its
#     own samples (no more than its seconds' worth);
#   - a client that goes away mid-profile: the sampler off at once;
#   - seconds=0, 301 and x, and debug=1: 400 with one line;
#   - a target that samples itself (MEMINST sample=): 503 and its reason;
#   - the target's output and exit status as without serve.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/inspect/serve_lib.sh"

TARGET=$top_builddir/tests/inspect/profile_target
die() {
	mi_fail "CPU profiles of a running process" "$1"
	mi_finish
}

# start_target MEMINST NAME: profile_target under MEMINST; sets PID.
start_target() {
	serve_start_target "$TARGET" "$1" "$2"
	[ -n "$PID" ] || die "$2: the target did not start: $(cat "t.$2.err")"
}

stop_target() { # NAME: its output and status as without serve
	serve_stop_target
	[ $ST -eq 0 ] || die "$1: the target ended with status $ST: $(cat "t.$1.err")"
	[ "$(sed 1d "t.$1.out")" = "$(printf 'ready\ndone')" ] || die "$1: the target's output: $(cat "t.$1.out")"
}

# sampler_on: the target's perf events and POSIX timers (the sampler's)
sampler_on() {
	n=$(ls -l /proc/"$PID"/fd 2>/dev/null | grep -c 'perf_event')
	t=$(grep -c '^ID:' /proc/"$PID"/timers 2>/dev/null)
	echo $((n + ${t:-0}))
}

# cpu_check FILE SECONDS: a CPU profile decoded and checked; prints the
# samples it holds.
cpu_check() {
	serve_py "$@" <<'PY'
path, secs = sys.argv[1], float(sys.argv[2])
p = msg(gzip.decompress(open(path, "rb").read()))
st = [v.decode() for w, v in p.get(6, [])]
s = lambda i: st[i]
vt = lambda b: (s(one(msg(b), 1)), s(one(msg(b), 2)))
types = [vt(v) for w, v in p.get(1, [])]
assert types == [("samples", "count"), ("cpu", "nanoseconds")], "sample types %s" % types
assert s(one(p, 14)) == "cpu", "default type %s" % s(one(p, 14))
assert vt(one(p, 11)) == ("cpu", "nanoseconds") and one(p, 12) == 10000000, "period %s %d" % (vt(one(p, 11)), one(p, 12))
assert abs(one(p, 9) - time.time() * 1e9) < 60e9, "time_nanos %d" % one(p, 9)
assert secs * 1e9 <= one(p, 10) < (secs + 30) * 1e9, "duration_nanos %d" % one(p, 10)
maps = {one(msg(v), 1): s(one(msg(v), 6)) for w, v in p.get(3, [])}
assert maps and all(len(b) >= 16 for b in maps.values()), "a mapping without a build-id: %s" % maps
fname = {one(msg(v), 1): s(one(msg(v), 2)) for w, v in p.get(5, [])}
locs = {}
for w, v in p.get(4, []):
    l = msg(v)
    assert one(l, 2) in maps, "location %d has no mapping" % one(l, 1)
    locs[one(l, 1)] = [fname.get(one(msg(x), 1)) for _, x in l.get(4, [])]
n = burn = 0
for w, v in p.get(2, []):
    smp = msg(v)
    ids = [x for ww, vv in smp.get(1, []) for x in nums(ww, vv)]
    vals = [x for ww, vv in smp.get(2, []) for x in nums(ww, vv)]
    assert ids and all(x in locs for x in ids) and len(vals) == 2, "a bad sample"
    lab = {}
    for _, lv in smp.get(3, []):
        l = msg(lv)
        lab[s(one(l, 1))] = s(one(l, 2)) if 2 in l else one(l, 3)
    names = [f for x in ids for f in locs[x]]
    if "burn_cpu" in names:
        assert lab.get("thread") in ("burn-w1", "burn-w2") and lab.get("tid", 0) > 0, \
            "burn_cpu's sample on thread %s" % lab
        burn += vals[0]
    n += vals[0]
assert burn > 0, "no sample in burn_cpu (%d samples)" % n
# two threads at 100 Hz: never more than their CPU time allows
assert n <= 2 * 100 * (one(p, 10) / 1e9) * 1.2 + 10, "%d samples in %.1f s: older ones kept?" % (n, one(p, 10) / 1e9)
print(n)
PY
}

start_target off,control=on dormant
before=$(fd_task)
serve_start || die "serve did not start: $(cat s.err)"
if [ $have_go = yes ]; then
	timeout 120 go tool pprof -top "$URL/debug/pprof/profile?seconds=2" >gotop.out 2>gotop.err ||
		die "go tool pprof failed: $(cat gotop.err)"
	grep -q 'burn_cpu' gotop.out || die "go tool pprof: no burn_cpu: $(cat gotop.out)"
	grep -q '^Type: cpu' gotop.out || die "go tool pprof: not a cpu profile: $(cat gotop.out)"
else
	echo "note  $MI_NAME: go is not installed: go tool pprof not tried"
fi
[ "$(sampler_on)" = 0 ] || die "the sampler is still on after the profile"
for k in 1 2 3; do
	code=$(curl -s -o "p$k.pb.gz" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=1")
	[ "$code" = 200 ] || die "profile $k: HTTP $code: $(cat "p$k.pb.gz")"
	cpu_check "p$k.pb.gz" 1 >"n$k" || die "profile $k: the decoded profile is wrong"
	[ "$(sampler_on)" = 0 ] || die "the sampler is still on after profile $k"
	# the process as before any profile: no samples file, no writer thread
	[ "$(fd_task_settled "$before")" = "$before" ] ||
		die "descriptors and threads $before before the profiles, $(fd_task) after profile $k"
done

# a client that goes away: the sampler off at once
curl -s -m 1 -o /dev/null "$URL/debug/pprof/profile?seconds=20"
i=0
while [ "$(sampler_on)" != 0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$(sampler_on)" = 0 ] || die "the sampler is still on 5 s after the client went away"
[ $i -lt 50 ] || die "the sampler stayed on after the client went away"
grep -q 'cut short' s.err || die "serve said nothing of the cut profile: $(cat s.err)"

for q in seconds=0 seconds=301 seconds=x debug=1; do
	code=$(curl -s -o bad.out -w '%{http_code}' "$URL/debug/pprof/profile?$q")
	[ "$code" = 400 ] && [ "$(wc -l <bad.out)" = 1 ] || die "$q: HTTP $code: $(cat bad.out)"
done
grep -q '1 to 300' bad.out || true
serve_stop
stop_target dormant

# a target that samples itself: refused, its sampling untouched
start_target "mis,control=on,sample=50,trace_file=$MI_TMP/own.trace" own
serve_start || die "serve did not start: $(cat s.err)"
code=$(curl -s -o own.out -w '%{http_code}' "$URL/debug/pprof/profile?seconds=1")
[ "$code" = 503 ] && grep -q 'samples itself' own.out || die "own sampler: HTTP $code: $(cat own.out)"
[ "$(sampler_on)" != 0 ] || die "the program's own sampler was stopped"
serve_stop
stop_target own
mi_ok "CPU profiles of a running process: go tool pprof and the decoded profile, sampler off after each, a client gone, bad seconds, a self-sampling target refused"
mi_finish
