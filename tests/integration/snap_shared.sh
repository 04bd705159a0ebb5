# snap_shared.sh — processes sharing one snapshot file take turns without
# the program's threads waiting for another process's store
# (tests/targets/snap_shared).  Another process (python's sqlite3) holds the
# file's write lock while the program, storing an interval snapshot every
# millisecond into that file, forks 20 children; only once the program says
# "forked 20" is the lock let go (1 ms: every nanosecond starved the
# test's own reads of the file).  A fork waits for a store of its own
# process under way (meminst(7)), and the service thread waited for the
# other process's lock inside that store (SQLite's busy handler, 10 s), so
# every fork waited for the other process, and the store failed with
# "database is locked": here the run never got to "forked 20" before the
# holder's 60 s, or complained.  Now the service thread tries again at its
# next turn, without the store lock: the forks go on at once, meminst says
# nothing, and once the lock is let go the interval snapshots are stored
# into the file, whole.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=/usr/bin/python3
mi_need $PY python3
T=$MI_TMP
for mode in mis mim; do
	why=
	db=$T/$mode.db
	rm -f "$T/$mode.go" "$T/$mode.free"
	: >"$T/$mode.out"
	$PY -c '
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("held", flush=True)
for i in range(600):
    with open(sys.argv[2]) as f:
        if "forked" in f.read():
            break
    time.sleep(0.1)
c.execute("COMMIT")
open(sys.argv[3], "w").close()
' "$db" "$T/$mode.out" "$T/$mode.free" >"$T/$mode.holder" 2>&1 &
	holder=$!
	snap_wait_line "$T/$mode.holder" '^held$' || mi_why_add "the lock holder did not start"
	MI_MEMINST="$mode,snapshot=$db,snapshot_at=signal,interval=1ms"
	mi_x "$MI_TARGETS/snap_shared" 20 "$T/$mode.go" >"$T/$mode.out" 2>"$T/$mode.err" &
	bg=$!
	unset MI_MEMINST
	wait "$holder"
	grep -q '^forked 20$' "$T/$mode.out" || mi_why_add "the forks did not end while the lock was held"
	pid=$(snap_pid_of "$T/$mode.out")
	snap_wait_sql "$db" "SELECT count(*) FROM snapshot WHERE pid = ${pid:-0} AND trigger = 'interval'" ||
		mi_why_add "no interval snapshot once the lock was let go"
	touch "$T/$mode.go"
	wait "$bg"
	snap_expect "exit status" "$?" 0
	snap_no_complaint "$T/$mode.err"
	last=$(snap_sql "$db" "SELECT max(id) FROM snapshot")
	[ -n "$last" ] && snap_check_consistent "$db" 1 "$last"
	mi_verdict "$mode: forks while another process holds the snapshot file do not wait for it" "$why" \
		"$T/$mode.out" stdout "$T/$mode.err" stderr
done
mi_finish
