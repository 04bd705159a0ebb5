#!/bin/sh
# snappause.sh — a snapshot's pause is meminst's, not the program's: a
# traced mim run whose map climbs in four steps, coming down after each
# (trace_target grow), records each peak capture (taken in drop(), the
# free at the turn) as the <snapshot> pseudo function, kept out of <alloc>
# (its ACC too) and out of the ACC of the functions it interrupted; the
# folded and chrome exports show it; with snapshot_at=exit there is none.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  snappause: python3 is needed"; exit 77; }
T=$MI_TMP

for at in peak exit; do
	why=
	MI_MEMINST="mim,trace=wall,trace_file=$T/$at.trace,snapshot=$T/$at.db,snapshot_at=$at"
	mi_x "$TR_TARGET" grow >"$T/$at.out" 2>"$T/$at.err" || mi_why_add "the program failed"
	unset MI_MEMINST
	"$TR_INSPECT" analyse --json "$T/$at.trace" >"$T/$at.json" 2>>"$T/$at.err" ||
		mi_why_add "inspect analyse failed"
	python3 - "$T/$at.json" "$at" >>"$T/$at.err" 2>&1 <<'EOF_PY' || mi_why_add "<snapshot> wrong"
import json, sys
j = json.load(open(sys.argv[1]))
th = j["threads"][0]
fs = {f["name"]: f for f in th["functions"] + th.get("kept_out", [])}
s, a, keep, drop = fs.get("<snapshot>"), fs["<alloc>"], fs["keep"], fs["drop"]
if sys.argv[2] == "exit":
    assert s is None, "a <snapshot> without peak snapshots: %r" % (s,)
    sys.exit(0)
assert s and s["calls"] >= 3 and s["own_ms"] > 0 and s["acc_ms"] == s["own_ms"], "no <snapshot>: %r" % (s,)
# <alloc>: its ACC holds no pause (OWN = ACC but for the program's own waits)
assert a["acc_ms"] - a["own_ms"] < 0.5 * s["acc_ms"], "<alloc> acc %r own %r holds <snapshot> %r" % (a["acc_ms"], a["own_ms"], s["acc_ms"])
# keep() allocated and its ACC holds <alloc> but not the pauses
assert keep["acc_ms"] <= th["acc_ms"] - 0.5 * s["acc_ms"], "keep acc %r holds <snapshot> %r" % (keep["acc_ms"], s["acc_ms"])
# drop() freed at the turns, where the captures were: its ACC holds none of them
assert drop["acc_ms"] <= th["acc_ms"] - 0.5 * s["acc_ms"], "drop acc %r holds <snapshot> %r" % (drop["acc_ms"], s["acc_ms"])
assert s["calls"] == 4, "%d peak captures for four turns" % s["calls"]
EOF_PY
	if [ $at = peak ]; then
		"$TR_INSPECT" export --format folded -o "$T/f.folded" "$T/$at.trace" 2>>"$T/$at.err" &&
			grep -q ';<snapshot> [0-9]' "$T/f.folded" || mi_why_add "no <snapshot> in the folded stacks"
		"$TR_INSPECT" export --format chrome -o "$T/c.json" "$T/$at.trace" 2>>"$T/$at.err" &&
			grep -q '"<snapshot>"' "$T/c.json" || mi_why_add "no <snapshot> in the chrome trace"
	fi
	mi_verdict "snapshot_at=$at: <snapshot> $( [ $at = peak ] && echo 'outside <alloc> and the callers' || echo 'absent')" \
		"$why" "$T/$at.err" stderr
done

# Snapshots the service thread takes (interval, map content) while the
# program's thread allocates (trace_target churn: 100,000 blocks held, 0.5 s
# of CPU of malloc+free): the thread waits for the captures, and those
# waits are <snapshot> too, out of <alloc>'s times.
why=
MI_MEMINST="mim,trace=wall,trace_file=$T/iv.trace,snapshot=$T/iv.db,snapshot_at=none,interval=5ms"
mi_x "$TR_TARGET" churn >"$T/iv.out" 2>"$T/iv.err" || mi_why_add "the program failed"
unset MI_MEMINST
"$TR_INSPECT" analyse --json "$T/iv.trace" >"$T/iv.json" 2>>"$T/iv.err" || mi_why_add "inspect analyse failed"
python3 - "$T/iv.json" >>"$T/iv.err" 2>&1 <<'EOF_PY' || mi_why_add "<snapshot> wrong"
import json, sys
j = json.load(open(sys.argv[1]))
th = j["threads"][0]
fs = {f["name"]: f for f in th["functions"] + th.get("kept_out", [])}
s, a = fs.get("<snapshot>"), fs["<alloc>"]
assert s and s["calls"] >= 1 and s["own_ms"] > 0 and s["acc_ms"] == s["own_ms"], "no <snapshot> on the waiting thread: %r" % (s,)
# inside <alloc>'s ACC, the waits would make up all of ACC - OWN (also when a <preempted>
# came before the allocation: under load)
assert a["acc_ms"] - a["own_ms"] < 0.5 * s["acc_ms"], "<alloc> acc %r own %r holds <snapshot> %r" % (a["acc_ms"], a["own_ms"], s["acc_ms"])
EOF_PY
mi_verdict "interval snapshots: the program thread's waits are <snapshot>" "$why" "$T/iv.err" stderr
mi_finish
