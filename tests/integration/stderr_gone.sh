# stderr_gone.sh — a GNU-style program closes stdout and stderr at exit
# (close_stdout) on a disk full for it (its own RLIMIT_FSIZE:
# tests/targets/close_stderr.c): its snapshot fails with nowhere to say so
# on the program's stderr.  The line reaches the user anyway: on the stderr
# meminst kept a copy of, in the notes file beside the snapshot
# (PATH.log), and, under the launcher, in the session, where `inspect
# report` shows it.  The program's exit status and output stay its own.
. "$top_srcdir/tests/session/session_lib.sh"

TARGET=$MI_TARGETS/close_stderr
for backend in $MEMINST_BACKENDS; do
	for mode in mis mim; do
		why=
		rm -f s.*
		MI_MEMINST="$mode,backend=$backend,snapshot=$MI_TMP/s.%p.db"
		mi_x "$TARGET" 30000 20000 >out 2>err
		rc=$?
		unset MI_MEMINST
		[ $rc = 0 ] || mi_why_add "exit status $rc"
		[ "$(cat out)" = "kept 30000 blocks" ] || mi_why_add "stdout: $(head -c 80 out)"
		grep -q 'cannot write' s.*.db.log 2>/dev/null || mi_why_add "no note beside the snapshot"
		grep -q 'cannot write' err || mi_why_add "not said on the stderr of the start"
		mi_verdict "preload $mode/$backend: the failed snapshot is noted" "$why" err stderr
	done
done

# Under the launcher the stores are the launcher's (session/sess_storer.c),
# whose writes the program's own limit does not reach: in a directory
# whose name is too long for the store socket, the program stores in
# itself as it does without the launcher.
long=d$(printf '%0100d' 0)
mkdir -p "$long"
for mode in --mis --mim; do
	why=
	"$LAUNCH" -f -o "$long/sess.db" $mode -- "$TARGET" 30000 20000 >out 2>err
	rc=$?
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	[ "$(cat out)" = "kept 30000 blocks" ] || mi_why_add "stdout: $(head -c 80 out)"
	"$INSPECT" report "$long/sess.db" >rep.out 2>rep.err || mi_why_add "inspect report exited $?"
	grep -A3 '^notes of meminst' rep.out | grep -q 'snapshot .*: cannot' ||
		mi_why_add "inspect report does not show the failed snapshot"
	"$INSPECT" report --json "$long/sess.db" 2>/dev/null | grep -q '"notes"' ||
		mi_why_add "no notes in the report's JSON"
	mi_verdict "launcher $mode, stores in the program: the failed snapshot is in inspect report" "$why" \
		rep.out report err stderr
done

# With the store service the exit snapshot is whole, the program's limit
# notwithstanding, and nothing is noted.
for mode in --mis --mim; do
	why=
	"$LAUNCH" -f -o sess.db $mode -- "$TARGET" 30000 20000 >out 2>err
	rc=$?
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	[ "$(cat out)" = "kept 30000 blocks" ] || mi_why_add "stdout: $(head -c 80 out)"
	"$INSPECT" report sess.db >rep.out 2>rep.err || mi_why_add "inspect report exited $?"
	! grep -A3 '^notes of meminst' rep.out | grep -q 'snapshot .*: cannot' ||
		mi_why_add "inspect report shows a failed snapshot"
	n=$("$INSPECT" sql sess.db "SELECT count(*) FROM snapshot WHERE trigger = 'exit'" 2>>err)
	[ "${n:-0}" -ge 1 ] || mi_why_add "no exit snapshot in the session"
	mi_verdict "launcher $mode, stores by the launcher: the exit snapshot is whole" "$why" rep.out report err stderr
done
mi_finish
