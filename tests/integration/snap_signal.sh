# snap_signal.sh — snapshot_at=signal and snapshot_signal=, for each
# backend, with tests/targets/snap_wait (80 known blocks while it waits,
# 3 at exit).  The test waits for the 'signal' snapshot to be in the file,
# then lets the program finish; then it checks the blocks of each snapshot.
#   - SIGUSR2 (the default) raised by the program: a 'signal' snapshot with
#     the 80 blocks, then the 'exit' one with 3;
#   - snapshot_signal=USR1, and RTMIN+3 without snapshot= (the default
#     path meminst.PID.db, in the start directory);
#   - snapshot_signal=HUP sent from outside with kill(1): the program is
#     not killed, a snapshot is taken;
#   - mis: a 'status' snapshot with the same figures;
#   - without signal among the triggers no handler is installed: SIGUSR2
#     kills the program as it would without meminst;
#   - a signal raised just before the program exits is stored all the
#     same (before the exit snapshot).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PROG=$MI_TARGETS/snap_wait

# start DIR MEMINST SIGNAL: snap_wait in DIR, in the background ($bg),
# raising SIGNAL ("" for none) once it holds its blocks.
start() {
	dir=$1 MI_MEMINST=$2
	mkdir -p "$dir"
	rm -f "$dir.go"
	(cd "$dir" && exec_wait "$3") >"$dir.out" 2>"$dir.err" &
	bg=$!
	unset MI_MEMINST
}
exec_wait() {
	mi_x "$PROG" until "$dir.go" $1
}

# finish: let the program go on, and wait for it ($rc).
finish() {
	touch "$dir.go"
	wait "$bg"
	rc=$?
}

# signal_case LABEL DIR MEMINST SIGNAL DB CONTENT TRIGGERS: the program
# raises SIGNAL; DB must get a 'signal' snapshot of CONTENT, and hold the
# snapshots TRIGGERS (e.g. "signal exit") in the end.
signal_case() {
	label=$1 db=$5 content=$6
	start "$2" "$3" "$4"
	why=
	snap_wait_line "$dir.out" '^pid ' || mi_why_add "the program did not start"
	pid=$(snap_pid_of "$dir.out")
	db=$(echo "$db" | sed "s/%p/$pid/")
	snap_wait_sql "$db" "SELECT count(*) FROM snapshot WHERE trigger = 'signal'" ||
		mi_why_add "no signal snapshot within 20 s"
	finish
	snap_expect "exit status" "$rc" 0
	mi_no_complaint "$dir.err"
	check_signal_db "$db" "$content" "$7"
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr "$MI_TMP/incons" inconsistencies
}

# check_signal_db DB CONTENT TRIGGERS
check_signal_db() {
	[ -f "$1" ] || { mi_why_add "no file $1"; return; }
	snap_expect "triggers" "$(snap_sql "$1" "SELECT group_concat(trigger, ' ') FROM snapshot")" "$3"
	snap_expect "snapshot 1" "$(snap_sql "$1" "SELECT content, pid FROM snapshot WHERE id = 1")" \
		"$2 $pid"
	snap_expect "mode" "$(snap_mode "$1")" 600
	if [ "$2" = map ]; then
		snap_expect "snap_wait's blocks at the signal" "$(snap_own "$1" 1 snap_wait)" "80 77015"
	fi
	snap_expect "snap_wait's status at the signal" "$(snap_own_status "$1" 1 snap_wait)" "80 77015"
	snap_check_consistent "$1" $(snap_ids "$1")
	case $3 in
	*exit) snap_expect "snap_wait's status at exit" "$(snap_own_status "$1" 2 snap_wait)" "3 15" ;;
	esac
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b

	signal_case "SIGUSR2 raised, mim/$b" "$T/usr2" "mim,backend=$b,snapshot=s.db,snapshot_at=signal+exit" \
		USR2 "$T/usr2/s.db" map "signal exit"

	signal_case "snapshot_signal=USR1, mim/$b" "$T/usr1" \
		"mim,backend=$b,snapshot=s.db,snapshot_at=signal,snapshot_signal=USR1" \
		USR1 "$T/usr1/s.db" map "signal"

	signal_case "snapshot_signal=RTMIN+3, default path, mim/$b" "$T/rt" \
		"mim,backend=$b,snapshot_at=signal,snapshot_signal=RTMIN+3" \
		RTMIN+3 "$T/rt/meminst.%p.db" map "signal"
	snap_expect "files" "$(cd "$T/rt" && echo *)" "meminst.$pid.db"

	signal_case "SIGUSR2, mis/$b" "$T/mis" "mis,backend=$b,snapshot=s.db,snapshot_at=exit+signal" \
		USR2 "$T/mis/s.db" status "signal exit"

	# kill -HUP from outside.
	start "$T/hup" "mim,backend=$b,snapshot=s.db,snapshot_at=signal,snapshot_signal=HUP" ""
	why=
	snap_wait_line "$dir.out" '^pid ' || mi_why_add "the program did not start"
	pid=$(snap_pid_of "$dir.out")
	kill -HUP "$pid"
	snap_wait_sql "$T/hup/s.db" "SELECT count(*) FROM snapshot WHERE trigger = 'signal'" ||
		mi_why_add "no signal snapshot within 20 s"
	finish
	snap_expect "exit status" "$rc" 0
	mi_no_complaint "$dir.err"
	check_signal_db "$T/hup/s.db" map "signal"
	mi_verdict "kill -HUP from outside, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies

	# No signal trigger: no handler, the signal's default action.
	start "$T/nohandler" "mim,backend=$b,snapshot=s.db" USR2
	why=
	finish
	snap_expect "exit status" "$rc" $((128 + $(kill -l USR2)))
	mi_verdict "no handler without snapshot_at=signal, mim/$b" "$why" "$dir.err" stderr

	# Raised, then exit at once: the exit stores what the thread owes.
	dir=$T/atexit
	mkdir -p "$dir"
	MI_MEMINST="mim,backend=$b,snapshot=s.db,snapshot_at=exit+signal"
	(cd "$dir" && mi_x "$PROG" sleep 0 USR2) >"$dir.out" 2>"$dir.err"
	rc=$?
	unset MI_MEMINST
	why=
	snap_expect "exit status" "$rc" 0
	mi_no_complaint "$dir.err"
	snap_expect "triggers" "$(snap_sql "$dir/s.db" "SELECT group_concat(trigger, ' ') FROM snapshot")" \
		"signal exit"
	snap_check_consistent "$dir/s.db" 1 2
	mi_verdict "a signal just before exit is stored, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies
done
mi_finish
