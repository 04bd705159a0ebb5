# snap_interval.sh — interval=DURATION, for each backend, with
# tests/targets/snap_wait holding 80 known blocks until the test has seen
# three interval snapshots of them (the test waits for the state, it does
# not guess how many ticks a busy machine gives in a time).
#   - interval=50ms alone: the default path meminst.PID.db in the start
#     directory; interval snapshots holding the 80 blocks, every one
#     consistent, in time order; one 'exit' snapshot with the 3 blocks
#     left (snapshot_at defaults to exit);
#   - mim with interval_content=status: 'status' interval snapshots, a
#     'map' exit snapshot;
#   - mis with snapshot=PATH and snapshot_at=none: 'status' interval
#     snapshots only.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

# interval_case DIR MEMINST DB: snap_wait in DIR until DB (%p for the pid)
# holds three interval snapshots with its 80 blocks.
interval_case() {
	snap_start "$1" "$2"
	db=$(echo "$3" | sed "s/%p/$pid/")
	snap_wait_sql "$db" "SELECT count(*) >= 3 FROM status s JOIN class c ON c.snapshot = s.snapshot
		AND c.id = s.id JOIN snapshot p ON p.id = s.snapshot WHERE p.trigger = 'interval'
		AND s.kind = 'classes' AND c.name = 'snap_wait' AND s.blocks_current = 80" ||
		mi_why_add "not three interval snapshots of the 80 blocks within 20 s"
	snap_finish
}

# check_intervals DB CONTENT EXIT: interval snapshots of CONTENT, the
# 80 blocks in those taken while the program waited, EXIT exit snapshots.
check_intervals() {
	[ -f "$1" ] || { mi_why_add "no file $1"; return; }
	snap_expect "mode" "$(snap_mode "$1")" 600
	snap_expect "contents" "$(snap_sql "$1" "SELECT DISTINCT content FROM snapshot")" "$2"
	snap_expect "pids" "$(snap_sql "$1" "SELECT DISTINCT pid FROM snapshot")" "$pid"
	snap_expect "exit snapshots" "$(snap_sql "$1" "SELECT count(*) FROM snapshot WHERE trigger = 'exit'")" "$3"
	snap_expect "other triggers" "$(snap_sql "$1" "SELECT count(*) FROM snapshot
		WHERE trigger NOT IN ('exit', 'interval')")" 0
	snap_expect "interval snapshots out of time order" "$(snap_sql "$1" "SELECT count(*) FROM snapshot a
		JOIN snapshot b ON b.trigger = a.trigger AND b.id > a.id WHERE a.trigger = 'interval'
		AND b.elapsed_ns <= a.elapsed_ns")" 0
	if [ "$2" = map ]; then
		n=0
		for i in $(snap_ids "$1" "trigger = 'interval'"); do
			[ "$(snap_own "$1" "$i" snap_wait)" = "80 77015" ] && n=$((n + 1))
		done
		[ "$n" -ge 3 ] || mi_why_add "$n interval snapshots list the 80 blocks"
	fi
	if [ "$3" = 1 ]; then
		snap_expect "snap_wait's blocks at exit" "$(snap_own "$1" \
			"$(snap_ids "$1" "trigger = 'exit'")" snap_wait)" "3 15"
	fi
	snap_check_consistent "$1" $(snap_ids "$1")
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b

	interval_case "$T/default" "mim,backend=$b,interval=50ms" "$T/default/meminst.%p.db"
	# (a journal may be left: the service thread can be cut short by the
	# exit, see BUGS in meminst(7))
	snap_expect "files" "$(cd "$T/default" && ls | grep -v -- '-journal$' | tr '\n' ' ')" "meminst.$pid.db "
	check_intervals "$T/default/meminst.$pid.db" map 1
	mi_verdict "interval=50ms, default path, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies

	interval_case "$T/st" "mim,backend=$b,interval=50ms,interval_content=status,snapshot=st.db" "$T/st/st.db"
	snap_expect "interval snapshot contents" "$(snap_sql "$T/st/st.db" "SELECT DISTINCT content
		FROM snapshot WHERE trigger = 'interval'")" status
	snap_expect "exit snapshot content" "$(snap_sql "$T/st/st.db" "SELECT content
		FROM snapshot WHERE trigger = 'exit'")" map
	snap_check_consistent "$T/st/st.db" $(snap_ids "$T/st/st.db")
	mi_verdict "interval=50ms, interval_content=status, mim/$b" "$why" "$dir.out" stdout \
		"$dir.err" stderr "$MI_TMP/incons" inconsistencies

	interval_case "$T/mis" "mis,backend=$b,interval=50ms,snapshot=iv.db,snapshot_at=none" "$T/mis/iv.db"
	check_intervals "$T/mis/iv.db" status 0
	mi_verdict "interval=50ms, snapshot_at=none, mis/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies
done
mi_finish
