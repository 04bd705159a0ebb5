# sig_blocked.sh — a snapshot signal the program keeps from meminst is
# said, once, on one line, instead of a snapshot that silently never
# comes: the program blocks it (sigprocmask in its only thread: the kill
# stays pending), ignores it, or sets a handler of its own
# (tests/targets/sig_blocked.c).  The program's behaviour is its own: exit
# status 0, its output.  Blocked: the line comes after a kill within the
# service thread's checks (2 s, bounded at 20 s here).
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/sig_blocked
for backend in $MEMINST_BACKENDS; do
	for how in block ignore handler; do
		why=
		fifo=$MI_TMP/in.$how
		rm -f "$fifo" "$MI_TMP"/s.*
		mkfifo "$fifo" || exit 99
		MI_MEMINST="mis,backend=$backend,snapshot=$MI_TMP/s.%p.db,snapshot_at=signal"
		mi_x "$TARGET" $how 12 <"$fifo" >"$MI_TMP/out" 2>"$MI_TMP/err" &
		runner=$!
		unset MI_MEMINST
		exec 9>"$fifo"
		i=0
		until grep -q ready "$MI_TMP/out" 2>/dev/null || [ $i -ge 200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		pid=$(awk '{ print $1; exit }' "$MI_TMP/out")
		[ -n "$pid" ] && kill -USR2 "$pid" 2>/dev/null
		i=0
		until grep -q 'snapshot signal' "$MI_TMP/err" || [ $i -ge 200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		echo >&9
		exec 9>&-
		wait $runner
		rc=$?
		[ $rc = 0 ] || mi_why_add "exit status $rc"
		tail -n 1 "$MI_TMP/out" | grep -q '^done$' || mi_why_add "the program did not finish its output"
		n=$(grep -c 'snapshot signal' "$MI_TMP/err")
		[ "$n" = 1 ] || mi_why_add "$n lines about the snapshot signal, not 1"
		case $how in
		block) grep -q 'blocks it in every thread' "$MI_TMP/err" || mi_why_add "not said that it is blocked" ;;
		ignore) grep -q '(ignored)' "$MI_TMP/err" || mi_why_add "not said that it is ignored" ;;
		handler) grep -q 'handler of its own' "$MI_TMP/err" || mi_why_add "not said that it has a handler" ;;
		esac
		mi_verdict "snapshot signal, $how/$backend" "$why" "$MI_TMP/err" stderr
	done
done
mi_finish
