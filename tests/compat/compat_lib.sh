# compat_lib.sh — helpers of the compatibility set (tests/compat/*.sh),
# sourced after tests/integration/lib.sh and snap_lib.sh:
#   have PROGRAM PACKAGE     true when installed, else one skip line
#   scale QUICK LONG         the workload size (COMPAT_LONG=1 picks LONG)
#   check NAME COMMAND...    the comparison with the plain run, under every
#                            mode and backend, then the snapshot run
#   live_stdin NAME INPUT COMMAND...   a live snapshot of a running program
#   poll, bg_track, live_snapshot,      for programs run in the background
#   children

# Some of the programs (lighttpd, e2fsck, start-stop-daemon) live in sbin,
# which is not in every user's PATH.
case :$PATH: in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac

: "${MEMINST_TEST_MODES:=mis mim}"
MEMINST_TEST_MODES=$(echo "$MEMINST_TEST_MODES" | sed 's/\boff\b//')
LONG=${COMPAT_LONG:-0}
scale() { if [ "$LONG" = 1 ]; then echo "$2"; else echo "$1"; fi; }

# have PROGRAM PACKAGE: true when installed, else one skip line.
have() {
	if command -v "$1" >/dev/null 2>&1; then
		return 0
	fi
	echo "skip  $1: not installed (apt-get install $2)"
	return 1
}

# snapshots NAME COMMAND...: one mim run storing a snapshot at the exit of
# every process it starts; each snapshot must be consistent.
snapshots() {
	sn_name=$1
	shift
	rm -f "$MI_TMP"/snap.*.db
	(MI_MEMINST="mim,snapshot=$MI_TMP/snap.%p.db${COMPAT_SNAP_EXTRA:-}" "$@") \
		>"$MI_TMP/snap.out" 2>"$MI_TMP/snap.err"
	why=
	snap_verdict "$sn_name" "$MI_TMP"/snap.*.db
	n=$snap_files
	mi_no_complaint "$MI_TMP/snap.err"
	mi_verdict "$sn_name snapshots ($n processes)" "$why" "$MI_TMP/snap.err" stderr
}

# check NAME COMMAND...: the comparison and the snapshot run.
check() {
	mi_compare "$@" && snapshots "$@"
}

# ------------------------------------------------- live processes --

# Every process a test starts in the background is recorded, and killed
# when the test ends however it ends, so that none is left behind.
COMPAT_PIDS=$MI_TMP/bg.pids
: >"$COMPAT_PIDS"
compat_cleanup() {
	for cc_pid in $(cat "$COMPAT_PIDS" 2>/dev/null); do
		kill -KILL "$cc_pid" 2>/dev/null
	done
	mi_cleanup
}
trap compat_cleanup EXIT

# bg_track PID: kill PID when the test ends.
bg_track() {
	echo "$1" >>"$COMPAT_PIDS"
}

# children PID: the pids of PID's children, from /proc (pgrep is in
# procps, which a minimal system may lack).
children() {
	sed -n 's/^\([0-9]*\) (.*) [A-Za-z] \([0-9]*\) .*/\1 \2/p' /proc/[0-9]*/stat 2>/dev/null |
		awk -v parent="$1" '$2 == parent { print $1 }'
}

# poll COUNT COMMAND...: run COMMAND every 50 ms until it succeeds, at most
# COUNT times.  Waits for a state, never for a guessed time.
poll() {
	pl_n=0 pl_max=$1
	shift
	while [ "$pl_n" -lt "$pl_max" ]; do
		"$@" && return 0
		sleep 0.05
		pl_n=$((pl_n + 1))
	done
	return 1
}

# live_snapshot PID DB: a snapshot of the running process PID (started with
# control=on) through its control channel, into DB, as
# `inspect snapshot --pid` gives a user; retried until the channel is up
# (at most 20 s), given up as soon as PID is gone.  The error is in
# $MI_TMP/live.err.
live_snapshot() {
	ls_n=0
	while [ "$ls_n" -lt 400 ]; do
		"$top_builddir/inspect/inspect" snapshot --pid "$1" -o "$2" \
			>/dev/null 2>"$MI_TMP/live.err" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
		ls_n=$((ls_n + 1))
	done
	return 1
}

# snap_verdict LABEL DB...: each DB complete, consistent, with a map.
snap_verdict() {
	sv_label=$1
	shift
	snap_check_files "$@"
	for db in "$@"; do
		[ ! -f "$db" ] || [ "$(snap_sql "$db" "SELECT count(*) FROM snapshot WHERE content = 'map'")" -ge 1 ] ||
			mi_why_add "$(basename "$db"): no map snapshot"
	done
	[ "$snap_files" -gt 0 ] || mi_why_add "no snapshot was stored"
}

# live_stdin NAME INPUT COMMAND...: COMMAND under mim,control=on with its
# standard input a pipe held open, so that it is still running when its
# live snapshot is taken (the way to see a Go program: it ends by the
# exit_group system call itself, so it has no exit snapshot, meminst(7));
# then INPUT is fed, the pipe closed, and COMMAND must exit 0.
live_stdin() {
	lv_name=$1 lv_in=$2
	shift 2
	rm -f "$MI_TMP/live.fifo" "$MI_TMP"/live.*.db
	mkfifo "$MI_TMP/live.fifo" || return 1
	exec 7<>"$MI_TMP/live.fifo"
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,control=on" "$@" <"$MI_TMP/live.fifo" \
		>"$MI_TMP/live.out" 2>"$MI_TMP/live.stderr" 7>&- &
	lv_pid=$!
	bg_track "$lv_pid"
	why=
	live_snapshot "$lv_pid" "$MI_TMP/live.1.db" ||
		mi_why_add "no live snapshot: $(head -n 1 "$MI_TMP/live.err")"
	cat "$lv_in" >&7
	exec 7>&-
	wait "$lv_pid"
	lv_rc=$?
	[ "$lv_rc" -eq 0 ] || mi_why_add "exit status $lv_rc"
	snap_verdict "$lv_name" "$MI_TMP"/live.*.db
	mi_no_complaint "$MI_TMP/live.stderr"
	mi_verdict "$lv_name live snapshot ($snap_files processes)" "$why" "$MI_TMP/live.stderr" stderr
}
