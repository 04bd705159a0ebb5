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

for mode in --mis --mim; do
	why=
	"$LAUNCH" -f -o sess.db $mode -- "$TARGET" 30000 20000 >out 2>err
	rc=$?
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	"$INSPECT" report sess.db >rep.out 2>rep.err || mi_why_add "inspect report exited $?"
	grep -A3 '^notes of meminst' rep.out | grep -q 'snapshot .*: cannot' ||
		mi_why_add "inspect report does not show the failed snapshot"
	"$INSPECT" report --json sess.db 2>/dev/null | grep -q '"notes"' ||
		mi_why_add "no notes in the report's JSON"
	mi_verdict "launcher $mode: the failed snapshot is in inspect report" "$why" rep.out report err stderr
done
mi_finish
