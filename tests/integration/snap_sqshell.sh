# snap_sqshell.sh — Debian's sqlite3 shell dumps a generated table (20,000
# rows) under the preload, RUNS times in turn with four settings: mim and
# mis with the exit snapshot, mim with exit, peak and 1 ms interval
# snapshots, and the launcher (meminst --mim, its defaults: exit, peak,
# signal, 100 ms interval).  Every run must print what a plain run prints
# and exit 0.  The shell sets a log callback that writes through a FILE on
# main's stack; when meminst stored through the shell's own libsqlite3, its
# service thread's log lines ("attempt to open … as file descriptor 0", its
# table of descriptors having no 0 and 1) went to that callback, after main
# had returned for the exit and interval stores (SIGSEGV in some runs), and
# its first store could initialise SQLite before the shell configured it
# ("WARNING: attempt to configure SQLite after initialization" in the
# dump).  meminst now stores with a private SQLite (alloc_sqlite.c).
. "$top_srcdir/tests/integration/lib.sh"

SQLITE=/usr/bin/sqlite3
mi_need $SQLITE sqlite3
RUNS=100
T=$MI_TMP

$SQLITE "$T/g.db" "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, val REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t SELECT i, 'name ' || i || ' ' || hex(randomblob(8)), i * 0.25 FROM n;" || exit 99
$SQLITE "$T/g.db" .dump >"$T/ref.out" 2>"$T/ref.err"
if [ $? -ne 0 ] || [ "$(wc -l <"$T/ref.out")" -lt 20000 ]; then
	mi_fail "sqlite3 .dump (uninstrumented)" "no dump" "$T/ref.err" stderr
	mi_finish
fi

why=
failed=0
n=0
while [ "$n" -lt "$RUNS" ]; do
	n=$((n + 1))
	rm -f "$T/s.db" "$T/sess.db"
	case $((n % 4)) in
	0) MI_MEMINST="mim,snapshot=$T/s.db" ;;
	1) MI_MEMINST="mis,snapshot=$T/s.db" ;;
	2) MI_MEMINST="mim,snapshot=$T/s.db,snapshot_at=exit+peak,interval=1ms" ;;
	3) unset MI_MEMINST ;;
	esac
	if [ -n "${MI_MEMINST+set}" ]; then
		mi_x $SQLITE "$T/g.db" .dump >"$T/run.out" 2>"$T/run.err"
	else
		MEMINST_LIBRARY="$MEMINST_LIB" $MI_TIMEOUT "$top_builddir/session/meminst" -q --mim \
			-o "$T/sess.db" -- $SQLITE "$T/g.db" .dump >"$T/run.out" 2>"$T/run.err"
	fi
	rc=$?
	label="run $n (${MI_MEMINST:-launcher --mim})"
	unset MI_MEMINST
	bad=
	[ "$rc" -eq 0 ] || bad="exit status $rc"
	cmp -s "$T/ref.out" "$T/run.out" || bad="${bad:+$bad, }dump differs ($(wc -l <"$T/run.out") lines)"
	grep -q '^meminst:' "$T/run.err" && bad="${bad:+$bad, }$(grep -m 1 '^meminst:' "$T/run.err")"
	if [ -n "$bad" ]; then
		failed=$((failed + 1))
		[ "$failed" -le 3 ] && mi_why_add "$label: $bad"
		cp "$T/run.err" "$T/failed.err"
	fi
done
[ "$failed" -eq 0 ] || mi_why_add "$failed of $RUNS runs failed"
mi_verdict "sqlite3 .dump of 20,000 rows, $RUNS runs under the preload and the launcher: as a plain run" \
	"$why" "$T/failed.err" "stderr of a failed run"
mi_finish
