# fd_limit.sh — a program that lowers its descriptor limit under the number
# of descriptors meminst's service thread polls (tests/targets/fd_limit.c:
# 8, and 1): poll(2) refuses with EINVAL, which the thread took for its
# end, so interval, peak, signal and control snapshots stopped without a
# word (2 of 36 stored).  Now it polls only the descriptors in use, and
# under a limit below even those it waits without them and says so once.
# Its interval snapshots (20 ms, 25 pauses of 20 ms) keep coming (at 8;
# at 1 no file opens: said, the repeats folded); the program's output and
# status are the plain run's.
: "${MEMINST_TEST_TIMEOUT:=60}"
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/fd_limit
LINE="meminst: the program's descriptor limit (RLIMIT_NOFILE) is under"
for limit in 8 1; do
	mi_reference "fd_limit $limit" mi_x "$TARGET" $limit || continue
	rm -f "$MI_TMP"/s.db*
	MI_MEMINST="mis,control=on,snapshot=$MI_TMP/s.db,interval=20ms"
	mi_run_like_reference mi_x "$TARGET" $limit
	unset MI_MEMINST
	if [ $limit = 8 ]; then
		n=$(sqlite3 "$MI_TMP/s.db" "SELECT count(*) FROM snapshot WHERE trigger = 'interval'" 2>&1)
		[ "${n:-0}" -ge 10 ] 2>/dev/null || mi_why_add "$n interval snapshots in 0.5 s at 20 ms, not 10 or more"
		mi_no_complaint "$MI_TMP/run.err"
	else
		# under 2: no file can be opened either; each loss said, the
		# repeats folded, and the wait without descriptors said once
		[ "$(grep -c "^$LINE" "$MI_TMP/run.err")" = 1 ] || mi_why_add "not one line saying the limit is under ours"
		grep -v "^$LINE" "$MI_TMP/run.err" | grep -v "^meminst: snapshot $MI_TMP/s.db: " >"$MI_TMP/run.rest"
		[ -s "$MI_TMP/run.rest" ] && mi_why_add "other lines: $(head -n 1 "$MI_TMP/run.rest")"
		[ "$(wc -l <"$MI_TMP/run.err")" -le 6 ] || mi_why_add "$(wc -l <"$MI_TMP/run.err") lines on stderr"
	fi
	mi_verdict "fd_limit $limit, mis,control=on,interval=20ms" "$why" "$MI_TMP/run.err" stderr
done
mi_finish
