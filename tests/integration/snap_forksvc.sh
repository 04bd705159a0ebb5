# snap_forksvc.sh — fork and the snapshot service thread, with
# tests/targets/snap_forksig, in mim mode with the first backend (the
# first case waits 3 s):
#   - a child forked while the parent's service thread stores a snapshot
#     can exit (it must not inherit the thread's store lock held);
#   - a snapshot signal that a forked child receives does not make the
#     parent store a snapshot (the child must not share the wake pipe).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

for b in ${MEMINST_BACKENDS%% *}; do
	T=$MI_TMP/$b
	mkdir -p "$T/busy" "$T/signal"

	MI_MEMINST="mim,backend=$b,snapshot=s.db,snapshot_at=signal"
	(cd "$T/busy" && mi_x "$MI_TARGETS/snap_forksig" busy "$T/busy/s.db") >"$T/busy.out" 2>"$T/busy.err"
	rc=$?
	unset MI_MEMINST
	why=
	snap_expect "exit status" "$rc" 0
	snap_expect "child" "$(cat "$T/busy.out")" "child exited 0"
	mi_verdict "a child forked during a store can exit, mim/$b" "$why" "$T/busy.out" stdout \
		"$T/busy.err" stderr

	MI_MEMINST="mim,backend=$b,snapshot=f.%p.db,snapshot_at=signal"
	(cd "$T/signal" && mi_x "$MI_TARGETS/snap_forksig" signal) >"$T/signal.out" 2>"$T/signal.err"
	rc=$?
	unset MI_MEMINST
	why=
	snap_expect "exit status" "$rc" 0
	parent=$(sed -n 's/^parent //p' "$T/signal.out")
	[ ! -e "$T/signal/f.$parent.db" ] ||
		mi_why_add "the parent stored: $(snap_sql "$T/signal/f.$parent.db" \
			"SELECT group_concat(trigger || ' pid ' || pid) FROM snapshot")"
	mi_verdict "a child's snapshot signal stores nothing of the parent, mim/$b" "$why" \
		"$T/signal.out" stdout "$T/signal.err" stderr
done
mi_finish
