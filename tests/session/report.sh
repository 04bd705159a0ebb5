# report.sh — `inspect report` on a session of tests/session/known (known
# allocations per function, a 3:1 split of CPU time), run under
# `meminst --mim --trace=cpu`.  Stated tolerances: bytes and blocks per
# function exact; the peak exact (max-ever) and held by a snapshot to 90%;
# the accumulated-time ratio burn_a/burn_b (each calls work()) within
# 3 +- 0.75.
. "$top_srcdir/tests/session/session_lib.sh"

why=
"$LAUNCH" -q --mim --trace=cpu --interval=20ms -o s.db -- "$KNOWN" >out 2>err ||
	mi_why_add "meminst exited $?"
"$INSPECT" report --json s.db >r.json 2>>err || mi_why_add "report --json exited $?"
/usr/bin/python3 - r.json <<'PY' >check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json, sys
r = json.load(open(sys.argv[1]))
fns = {f["name"]: f for f in r["functions"]}
def exact(name, key, want):
    got = fns[name][key]
    assert got == want, "%s %s: %s, expected %s" % (name, key, got, want)
exact("alloc_big", "own_bytes", 40 * 256 * 1024)
exact("alloc_big", "own_blocks", 40)
exact("alloc_small", "own_bytes", 10000 * 64)
exact("alloc_small", "own_blocks", 10000)
assert fns["main"]["acc_bytes"] >= 40 * 256 * 1024 + 640000, "main acc_bytes"
assert fns["main"]["own_blocks"] <= 1, "main allocates (stdout's buffer at most)"
exact("burn_a", "own_bytes", 0)
exact("burn_a", "calls", 1)
ratio = fns["burn_a"]["acc_ms"] / fns["burn_b"]["acc_ms"]
assert 2.25 <= ratio <= 3.75, "acc time burn_a/burn_b = %.2f, expected 3 +- 0.75" % ratio
exact("work", "calls", 2)
peak = r["peak"]
want = 40 * 256 * 1024 + 640000
assert want <= peak["max_ever_bytes"] < want + (1 << 20), "max ever %d" % peak["max_ever_bytes"]
assert peak["snapshot_bytes"] >= 0.9 * peak["max_ever_bytes"], "no snapshot near the peak"
top_type = r["peak_types"][0]
assert "alloc_big" in top_type["name"], "top type at the peak: %s" % top_type["name"]
assert top_type["bytes"] == 40 * 256 * 1024, "alloc_big's bytes at the peak: %d" % top_type["bytes"]
assert r["peak_classes"][0]["name"] == "known", "top class: %s" % r["peak_classes"][0]["name"]
assert r["run"]["exit_code"] == 0 and r["run"]["mode"] == "mim"
# the tracer's own cost, measured at the program's start, and what it
# distorts: the calibrated cost of the intervals between events, taken off
# (compensation); the stamps' share of each allocation call taken off <alloc>
tc = r["tracer"]
ncalls = sum(f["calls"] for f in r["functions"] if not f["name"].startswith("<") and f["name"] != "suspend")
assert 0 < tc["event_ps"] < 10000000, "tracer cost per event %r ps" % tc["event_ps"]
assert tc["calls"] >= ncalls, "tracer calls %d, the top functions alone made %d" % (tc["calls"], ncalls)
assert tc["hooks_ms"] > 0, "hooks %r ms" % tc["hooks_ms"]
assert tc["hooks_taken_off"] is True and tc["calibration_failed"] is False, tc
assert tc["alloc_calls"] >= 2 * 10040, "<alloc> calls corrected %d" % tc["alloc_calls"]
assert tc["alloc_calls"] == fns["<alloc>"]["calls"], "corrected %d of %d <alloc>" % (tc["alloc_calls"], fns["<alloc>"]["calls"])
# the stamps' calibrated cost off <alloc>, or, where each call's allocator
# time was measured (ALLOC_AT), meminst's work moved to <meminst>, kept out
assert tc["alloc_taken_off_ms"] > 0 or (tc.get("meminst_ms") or 0) > 0, "nothing taken off <alloc>: %r" % tc
assert 0 < tc["percent"] < 100, "tracer share %r%%" % tc["percent"]
PY
mi_verdict "report: bytes per function, peak, live at the peak, time split" "$why" check.out check \
	err stderr

why=
"$INSPECT" report s.db >r.txt 2>err || mi_why_add "text report exited $?"
for section in "run:" "memory:" "live at the peak, by class:" "live at the peak, by type:" \
	"functions with the most own time" "tracer's own cost (measured at the program's start):" \
	"per call or return: *[0-9.]* ns" "taken off <alloc>:"; do
	grep -q "^$section" r.txt || mi_why_add "no '$section' in the text"
done
mi_verdict "report: text sections" "$why" r.txt text err stderr

# A sampled session (no exact trace): the same table from the samples.
# Tolerances (about 3 standard errors): alloc_big's own bytes 10 MiB
# +- 15% (every 256 KiB block is sampled at an 8 KiB mean), alloc_small's
# 640000 +- 35% (about 78 allocation samples); own-time ratio burn_a/burn_b
# 3 +- 1 (about 650 timer samples at 5000 Hz).
why=
"$LAUNCH" -q --mis --sample=5000 --alloc-sample=8k -o smp.db -- "$KNOWN" >out 2>err ||
	mi_why_add "meminst exited $?"
"$INSPECT" report --json smp.db >s.json 2>>err || mi_why_add "report --json exited $?"
/usr/bin/python3 - s.json <<'PY' >scheck.out 2>&1 || mi_why_add "$(tail -n 1 scheck.out)"
import json, sys
r = json.load(open(sys.argv[1]))
fns = {f["name"]: f for f in r["functions"]}
big, small = fns["alloc_big"]["own_bytes"], fns["alloc_small"]["own_bytes"]
assert abs(big - 10485760) <= 0.15 * 10485760, "alloc_big own bytes %d" % big
assert abs(small - 640000) <= 0.35 * 640000, "alloc_small own bytes %d" % small
ratio = fns["burn_a"]["own_ms"] / fns["burn_b"]["own_ms"]
assert 2 <= ratio <= 4, "own time burn_a/burn_b = %.2f, expected 3 +- 1" % ratio
assert fns["burn_a"]["calls"] is None, "calls without counting"
PY
mi_verdict "report from samples: bytes and time per function within tolerance" "$why" scheck.out check \
	err stderr

# Without a trace: the memory part, and one line saying what is missing.
why=
"$LAUNCH" -q --mim --no-time -o m.db -- "$KNOWN" >out 2>err
"$INSPECT" report m.db >m.txt 2>m.err || mi_why_add "exited $?"
grep -q '^memory:' m.txt || mi_why_add "no memory section"
grep -q 'no trace' m.err || mi_why_add "no line about the missing trace"
"$INSPECT" report "$top_srcdir/README.md" >/dev/null 2>x.err
[ $? -eq 3 ] || mi_why_add "a non-session file: not exit status 3"
grep -q 'not an SQLite database' x.err || mi_why_add "no clear message for a non-session file"
LD_PRELOAD="$MEMINST_LIB" MEMINST=mim,snapshot="$MI_TMP/snap.db" "$KNOWN" >/dev/null 2>&1
"$INSPECT" report snap.db >/dev/null 2>y.err
[ $? -eq 3 ] || mi_why_add "a snapshot file: not exit status 3"
grep -q 'a snapshot database, not a session' y.err || mi_why_add "no clear message for a snapshot file"
"$LAUNCH" -q --no-memory --trace -o t.db -- "$KNOWN" >out 2>err
"$INSPECT" report t.db >t.txt 2>>err || mi_why_add "a time-only session: exit status $?"
grep -q 'no snapshot of this process' t.txt || mi_why_add "a time-only session: no line about memory"
grep -q '^burn_a\|^ *burn_a\|burn_a ' t.txt || mi_why_add "a time-only session: no functions"
mi_verdict "report without a trace, of a time-only session; files that are no session" "$why" \
	m.err stderr x.err stderr y.err stderr t.txt text

# --pid of no process of the session: one line, exit status 1 (not a report
# of nothing that blames --no-memory)
why=
"$INSPECT" report --pid 1 t.db >p.txt 2>p.err
rc=$?
[ $rc -eq 1 ] || mi_why_add "--pid 1: exit status $rc, not 1"
[ "$(wc -l <p.err)" = 1 ] && grep -q 'no process 1 in this session' p.err || mi_why_add "--pid 1: not one clear line"
[ -s p.txt ] && mi_why_add "--pid 1: a report on stdout"
mi_verdict "report --pid of no process of the session" "$why" p.err stderr
# A session whose table of processes was dropped: one line, status 3 (the
# count of processes and the run's read both said it)
why=
cp t.db np.db && sqlite3 np.db 'DROP TABLE session_process'
"$INSPECT" report np.db >np.txt 2>np.err
rc=$?
[ $rc -eq 3 ] || mi_why_add "exit status $rc, not 3"
[ "$(wc -l <np.err)" = 1 ] && grep -q 'session_process' np.err || mi_why_add "not one line naming the table"
mi_verdict "report of a session without its table of processes" "$why" np.err stderr
# A session of two processes, a shell and the program it runs: report and
# analyse list both and show the heaviest, the program (by peak bytes and
# by calls), not the shell that came first; --pid picks one, and report
# --pid shows that process's command line (it showed the run's).
why=
"$LAUNCH" -q --mim --trace=cpu --interval=0 -o multi.db -- \
	/bin/dash -c "$KNOWN >/dev/null; :" 2>err || mi_why_add "meminst exited $?"
kpid=$(sqlite3 multi.db "SELECT pid FROM session_process WHERE exe LIKE '%/known'")
spid=$(sqlite3 multi.db "SELECT pid FROM session_process WHERE exe LIKE '%dash'")
"$INSPECT" report --json multi.db >m.json 2>>err || mi_why_add "report --json exited $?"
/usr/bin/python3 - m.json "$kpid" "$spid" <<'PY' >check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json, sys
r = json.load(open(sys.argv[1]))
kpid, spid = int(sys.argv[2]), int(sys.argv[3])
procs = r["processes"]
assert sorted(p["pid"] for p in procs) == sorted([kpid, spid]), "processes %s" % procs
assert procs[0]["pid"] == kpid, "the program is not first: %s" % procs
assert r["peak"]["max_ever_bytes"] == procs[0]["max_ever_bytes"], "the peak is not the program's"
assert procs[0]["calls"] > 0, "the program's calls: %s" % procs[0]
assert any(f["name"] == "alloc_big" for f in r["functions"]), "the functions are not the program's"
assert r["run"]["pid"] == spid, "the run's pid is the program's first process"
PY
"$INSPECT" report multi.db >m.txt 2>>err
grep -q "^the heaviest by peak live bytes: pid $kpid (memory below); by calls: pid $kpid" m.txt ||
	mi_why_add "report does not name the heaviest"
grep -q "^memory of pid $kpid:" m.txt || mi_why_add "the memory part is not the program's"
"$INSPECT" report --pid "$kpid" multi.db >p.txt 2>>err
grep -q "^command: *$KNOWN\$" p.txt || mi_why_add "report --pid CHILD: $(grep '^command' p.txt)"
grep -q "^processes (" p.txt && mi_why_add "report --pid lists the processes"
"$INSPECT" analyse multi.db >a.txt 2>>err || mi_why_add "analyse exited $?"
grep -q "^analysed below: pid $kpid, the heaviest" a.txt || mi_why_add "analyse does not take the heaviest"
grep -q "alloc_big" a.txt || mi_why_add "analyse's profile is not the program's"
"$INSPECT" analyse --pid "$spid" multi.db >/dev/null 2>a.err
grep -q "analysed below" a.err && mi_why_add "analyse --pid summarises"
mi_verdict "a session of two processes: report and analyse show the heaviest, --pid one" "$why" \
	err stderr m.txt report a.txt analyse p.txt report-pid
mi_finish
