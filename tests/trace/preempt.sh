#!/bin/sh
# preempt.sh — trace=wall: time a thread was switched out involuntarily is
# the <preempted> pseudo function, out of the running function's OWN and
# ACC.  Two CPU-bound threads pinned to one CPU take turns, each until it
# has used 0.3 s of CPU (about 0.6 s of wall time or more under load):
# each thread has many <preempted>, its functions' ACC is about its CPU
# time (not its wall time), and <preempted> holds most of the rest; the
# exports show it.  trace=cpu needs none (its clock stops when the thread
# does).  Bounds are CPU times the program measures itself, not rates.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  preempt: python3 is needed"; exit 77; }
T=$MI_TMP
cat >"$T/check.py" <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
clock = sys.argv[3]
runs = []  # (spin calls, cpu ms, wall ms), as the program measured them
for l in open(sys.argv[2]):
    f = l.split()
    if f and f[0] == "spinner":
        runs.append((int(f[6]), int(f[2]) / 1e6, int(f[4]) / 1e6))
assert len(runs) == 2, "the program did not print two spinners: %r" % runs
bad, seen = [], 0
for th in j["threads"]:
    fs = {f["name"]: f for f in th["functions"] + th.get("kept_out", [])}
    if "spin" not in fs:
        continue
    seen += 1
    mine = [r for r in runs if r[0] == fs["spin"]["calls"]]
    if not mine:
        bad.append("no spinner printed %d calls" % fs["spin"]["calls"]); continue
    runs.remove(mine[0])
    cpu, wall = mine[0][1:]
    acc, p = fs["spinner"]["acc_ms"], fs.get("<preempted>")
    # the thread's own functions: its CPU time, not the other thread's turns
    if acc > 1.5 * cpu + 20:  # loose: another job on the CPU is pre-emption too, seen at the next hook
        bad.append("%s: spinner ACC %.1f ms for %.1f ms of CPU (wall %.1f)" % (clock, acc, cpu, wall))
    if clock == "cpu":
        if p:
            bad.append("cpu: a <preempted> %r" % (p,))
        continue
    if not p or p["calls"] < 5:
        bad.append("wall: <preempted> %r, expected 5 or more (wall %.1f, cpu %.1f ms)" % (p, wall, cpu))
    elif p["own_ms"] != p["acc_ms"] or p["own_ms"] < 0.5 * (wall - cpu):
        bad.append("wall: <preempted> %.1f ms (OWN %.1f) of %.1f ms off the CPU" % (p["acc_ms"], p["own_ms"], wall - cpu))
if seen != 2:
    bad.append("%d threads ran spin, not 2" % seen)
if bad:
    sys.exit("\n".join(bad))
EOF_PY

for clock in wall cpu; do
	why=
	tr=$T/$clock.trace
	if ! tr_run preload "$T/$clock.out" "$tr" "trace=$clock,trace_file=$tr" preempt; then
		mi_why_add "run or trace_check failed"
	else
		for t in $(awk '$1 == "thread" { print $2 }' "$tr.chk"); do
			[ "$(tr_field "$tr.chk" "$t" unordered)" = 0 ] || mi_why_add "thread $t out of order"
			[ "$(tr_field "$tr.chk" "$t" lost)" = 0 ] || mi_why_add "thread $t lost records"
		done
		tr_analyse "$tr" || mi_why_add "inspect analyse failed: $(head -n 1 "$tr.json.err")"
		msg=$(python3 "$T/check.py" "$tr.json" "$T/$clock.out" "$clock" 2>&1) || mi_why_add "$msg"
		if [ $clock = wall ]; then
			"$TR_INSPECT" analyse "$tr" >"$T/a.txt" 2>>"$T/$clock.out.err" &&
				grep -q "^Kept out of the functions' times: <preempted> [0-9.]* ms ([0-9]*)" "$T/a.txt" ||
				mi_why_add "analyse does not say <preempted> was kept out"
			"$TR_INSPECT" export --format folded -o "$T/f.folded" "$tr" 2>>"$T/$clock.out.err" &&
				grep -q ';<preempted> [0-9]' "$T/f.folded" || mi_why_add "no <preempted> in the folded stacks"
			"$TR_INSPECT" export --format chrome -o "$T/c.json" "$tr" 2>>"$T/$clock.out.err" &&
				grep -q '"<preempted>"' "$T/c.json" || mi_why_add "no <preempted> in the chrome trace"
		fi
	fi
	mi_verdict "trace=$clock: two threads on one CPU, $( [ $clock = wall ] && echo 'turns are <preempted>' || echo 'no <preempted>')" \
		"$why" "$T/$clock.out.err" stderr
done
mi_finish
