# snap_oom.sh — a map that outlives the process (meminst(7), snapshot_at=
# rss:/cgroup:).  tests/targets/grow holds ever more 256 KiB blocks of
# grow_step, written through.
#
#   sigkill  MEMINST=mim,snapshot=…,interval=20ms, no launcher and no cgroup:
#            grow holds 40 blocks (10 MiB), a map snapshot of them is in the
#            file, then SIGKILL (mid-store, the file may need the roll-back
#            inspect asks for).  inspect status says "no exit record" and
#            the last snapshot is an interval one; top shows grow_step with
#            the 10 MiB.
#   oom      a memory cgroup (v1, made here under our own, or at the root of
#            the controller) limited to 64 MiB; meminst --snapshot-at
#            exit+cgroup:90% runs grow until the kernel's OOM killer ends it.
#            The launcher exits as the program did (SIGKILL, 137); report and
#            status say "killed by the kernel's OOM killer"; the last map
#            snapshot's trigger is cgroup (taken when the usage was at 90 % or
#            more) and the process's resident set then was 85 % of the limit
#            or more; top of that snapshot is grow_step.  Skipped, with the
#            reason, where no cgroup can be made (not root, no v1 memory
#            controller, a kernel that refuses).
#
# Nothing is left behind: grow is bounded by its arguments, every run is
# under timeout -s KILL, and the cgroup's processes are killed before it is
# removed.
. "$top_srcdir/tests/integration/lib.sh"

INSPECT=$top_builddir/inspect/inspect
LAUNCH=$top_builddir/session/meminst
GROW=$MI_TARGETS/grow

# --------------------------------------------------------------- sigkill --
db=$MI_TMP/k.db
timeout -s KILL 120 env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db,snapshot_at=exit,interval=20ms" \
	"$GROW" 40 0 60000 >"$MI_TMP/k.out" 2>"$MI_TMP/k.err" &
pid=$!
why=
tries=0
# bounded: 3000 looks (30 s at most) for a map snapshot of the 40 blocks
while [ $tries -lt 3000 ]; do
	tries=$((tries + 1))
	n=$("$INSPECT" sql "$db" "SELECT count(*) FROM snapshot WHERE trigger = 'interval' AND content = 'map' \
		AND bytes >= 40 * 262144" 2>/dev/null)
	[ "${n:-0}" -ge 1 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.01
done
# timeout's child, grow itself (env execs it), is the one killed
gpid=$(pgrep -P $pid 2>/dev/null | head -n 1)
kill -KILL "${gpid:-$pid}" 2>/dev/null
wait $pid 2>/dev/null
[ "${n:-0}" -ge 1 ] || mi_why_add "no interval map snapshot of the 40 blocks"
# killed mid-store (a store every 20 ms, slower than that on a loaded
# machine), the file has a hot journal: inspect, a reader, does not roll
# it back but says how, and the snapshots stored before are all there once
# that is done as it says (without the launcher, which settles the file)
if ! "$INSPECT" list "$db" >/dev/null 2>"$MI_TMP/k.list"; then
	if grep -q "interrupted write left a hot journal beside it; open it once read-write (sqlite3 FILE 'PRAGMA quick_check')" \
		"$MI_TMP/k.list"; then
		[ "$(sqlite3 "$db" 'PRAGMA quick_check' 2>&1)" = ok ] || mi_why_add "quick_check after the kill is not ok"
	else
		mi_why_add "inspect list after the kill: $(head -n 1 "$MI_TMP/k.list")"
	fi
fi
"$INSPECT" status "$db" --total >"$MI_TMP/k.status" 2>&1 || mi_why_add "inspect status failed"
grep -q "no exit record: the process ended without meminst's exit (killed?)" "$MI_TMP/k.status" ||
	mi_why_add "status does not say there is no exit record"
grep -Eq "^its trigger: +interval$" "$MI_TMP/k.status" || mi_why_add "the last snapshot is not an interval one"
"$INSPECT" top "$db" >"$MI_TMP/k.top" 2>&1 || mi_why_add "inspect top failed"
sed -n '/^ *1 /p' "$MI_TMP/k.top" | grep -q "grow_step.*10\.0 MiB\|10\.0 MiB.*grow_step" ||
	mi_why_add "top's first row is not grow_step's 10 MiB"
mi_verdict "sigkill: the last interval map is readable" "$why" "$MI_TMP/k.status" status "$MI_TMP/k.top" top \
	"$MI_TMP/k.err" stderr

# ------------------------------------------------------------------- oom --
LIMIT=$((64 << 20))
. "$top_srcdir/tests/integration/cgroup_lib.sh"

if make_cgroup; then
	s=$MI_TMP/oom.db
	# the launcher, and so grow, in the cgroup; 1000 steps of 10 ms: ~2.5 s
	# to the limit, 10 s at most if the OOM killer never came
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		timeout -s KILL 120 env MEMINST_LIBRARY="$MEMINST_LIB" "$LAUNCH" --mim --no-time -o "$s" \
		--snapshot-at exit+cgroup:90% -- "$GROW" 1000 10 >"$MI_TMP/oom.out" 2>"$MI_TMP/oom.err"
	rc=$?
	why=
	[ $rc = 137 ] || mi_why_add "exit status $rc, not 137 (SIGKILL)"
	oom_kills=$(sed -n 's/^oom_kill //p' "$cg/memory.oom_control")
	[ "${oom_kills:-0}" -ge 1 ] || mi_why_add "the cgroup counts no OOM kill"
	grep -q "was killed by the kernel's OOM killer" "$MI_TMP/oom.err" || mi_why_add "the launcher did not say OOM"
	"$INSPECT" report "$s" >"$MI_TMP/oom.report" 2>&1
	grep -Eq "^ended: +killed by the kernel's OOM killer \(signal 9, SIGKILL\)$" "$MI_TMP/oom.report" ||
		mi_why_add "report does not say the OOM killer ended it"
	last=$("$INSPECT" sql "$s" "SELECT s.id || ' ' || s.trigger || ' ' || r.rss FROM snapshot s JOIN snapshot_rss r \
		ON r.snapshot = s.id WHERE s.content = 'map' ORDER BY s.id DESC LIMIT 1" 2>&1)
	set -- $last
	if [ "${2:-}" != cgroup ]; then
		mi_why_add "the last map snapshot is not the cgroup trigger's: $last"
	elif [ "$3" -lt $((LIMIT / 100 * 85)) ]; then
		mi_why_add "resident set $3 at the last map, below 85 % of $LIMIT"
	else
		"$INSPECT" top "$s" --snapshot "$1" >"$MI_TMP/oom.top" 2>&1
		sed -n '/^ *1 /p' "$MI_TMP/oom.top" | grep -q grow_step || mi_why_add "top's first row is not grow_step"
		"$INSPECT" status "$s" --snapshot "$1" --total >"$MI_TMP/oom.status" 2>&1
		grep -q "killed by the kernel's OOM killer" "$MI_TMP/oom.status" ||
			mi_why_add "status does not say the OOM killer ended it"
	fi
	mi_verdict "oom: a cgroup snapshot at 90 % of the limit outlives the OOM kill" "$why" \
		"$MI_TMP/oom.report" report "$MI_TMP/oom.top" top "$MI_TMP/oom.err" stderr
	cg_cleanup
else
	echo "skip  oom in a memory cgroup: $skip"
fi
mi_finish
