# snap_exitpaths.sh — processes that do not end with exit(3), under
# MEMINST=mim,control=on,snapshot=DIR/x.%p.db (tests/targets/exit_paths):
#   - _exit and _Exit store the exit snapshot (the 50 blocks held) and keep
#     the status; another thread running: no snapshot (the documented rule);
#   - a vfork child's _exit stores nothing (it shares the parent's memory):
#     one file, the parent's;
#   - _exit from a SIGALRM handler that interrupts malloc ends the process
#     with its status and stores nothing (the allocator's lock may be held);
#   - main leaving with pthread_exit: the process ends when its worker
#     does (status 0, exit snapshot), and a SIGTERM ends it while the
#     worker still runs (meminst's service thread kept both from happening);
#   - under the launcher's defaults, a tree of 9 dash processes (each
#     ends with _exit) leaves 9 exit snapshots, and report counts 9.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

T=$MI_TARGETS/exit_paths

# run NAME HOW [CODE]: exit_paths in DIR=$MI_TMP/NAME, status in $rc.
run() {
	d=$MI_TMP/$1
	shift
	mkdir -p "$d"
	MI_MEMINST="mim,control=on,snapshot=$d/x.%p.db"
	MEMINST_TEST_TIMEOUT=120
	(cd "$d" && mi_x "$T" "$@") >"$d.out" 2>"$d.err"
	rc=$?
	unset MI_MEMINST
	why=
	files=$(cd "$d" && ls x.*.db 2>/dev/null | wc -l)
}

# exit_snapshot: one file, snapshot 1 is 'exit' and holds the 50 blocks.
exit_snapshot() {
	snap_expect "files" "$files" 1
	f=$(ls "$d"/x.*.db 2>/dev/null | head -n 1)
	[ -n "$f" ] || return
	snap_expect "trigger" "$(snap_field "$f" 1 trigger)" exit
	n=$(snap_sql "$f" "SELECT count(*) FROM meminst_blocks b WHERE b.snapshot = 1 AND b.size = 1000")
	[ "$n" -ge 50 ] || mi_why_add "$n blocks of 1000 bytes, expected the 50 held"
}

for how in _exit _Exit; do
	run "$how" "$how" 3
	snap_expect "exit status" "$rc" 3
	exit_snapshot
	mi_no_complaint "$d.err"
	mi_verdict "$how: the exit snapshot is stored, status kept" "$why" "$d.err" stderr
done

# meminst's own threads not yet run at the _exit (a loaded machine; the
# CPU profile thread of control=on made first runs last): still the
# process's only thread, so its snapshot is stored
SLOW=$top_builddir/tests/targets/.libs/libslow_threads.so
why=
d=$MI_TMP/late
mkdir -p "$d"
(cd "$d" && $MI_TIMEOUT env LD_PRELOAD="$MEMINST_LIB $SLOW" MEMINST="mim,control=on,snapshot=$d/x.%p.db" \
	"$T" _exit 3) >"$d.out" 2>"$d.err"
rc=$?
files=$(cd "$d" && ls x.*.db 2>/dev/null | wc -l)
snap_expect "exit status" "$rc" 3
exit_snapshot
mi_no_complaint "$d.err"
mi_verdict "_exit before meminst's own threads ran: the exit snapshot is stored" "$why" "$d.err" stderr

run thread thread 5
snap_expect "exit status" "$rc" 5
snap_expect "files" "$files" 0
mi_verdict "_exit with another thread running: no snapshot" "$why" "$d.err" stderr

run vfork vfork
snap_expect "exit status" "$rc" 0
exit_snapshot
mi_verdict "vfork child's _exit: nothing stored, the parent's exit snapshot alone" "$why" "$d.err" stderr

run handler handler 6
snap_expect "exit status" "$rc" 6
snap_expect "files" "$files" 0
mi_verdict "_exit from a signal handler that interrupts malloc: no snapshot, no wait, status kept" \
	"$why" "$d.err" stderr

run pexit pthread_exit
snap_expect "exit status" "$rc" 0
exit_snapshot
mi_verdict "pthread_exit from main: ends with the worker, exit snapshot" "$why" "$d.err" stderr

why=
d=$MI_TMP/pterm
mkdir -p "$d"
MI_MEMINST="mim,control=on,snapshot=$d/x.%p.db"
"$T" pthread_exit_wait >/dev/null 2>&1 & # warm the page cache: the timing below is not the test's
wait $!
env LD_PRELOAD="$MEMINST_LIB" MEMINST="$MI_MEMINST" "$T" pthread_exit_wait >"$d.out" 2>"$d.err" &
pid=$!
unset MI_MEMINST
snap_wait_line "$d.out" '^ready' || mi_why_add "the program did not start"
sleep 0.5
kill -TERM "$pid"
snap_wait_end "$pid"
snap_expect "exit status" "$rc" 143
mi_verdict "pthread_exit from main: SIGTERM still ends the process" "$why" "$d.err" stderr

# A tree of dash processes under the launcher's defaults (sampling, the
# timeline's service thread): every process ends with _exit (dash) and
# each leaves its snapshot.  The 9: the top shell; `dash -c :`; `dash -c
# "dash -c : ; :"` and the one it starts; the subshell `( : )`; the two
# sides of `: | :`; `dash -c ": & wait"` and its background child.
if [ -x /bin/dash ]; then
	why=
	d=$MI_TMP/launcher
	mkdir -p "$d"
	(cd "$d" && MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" -q -o s.db -- \
		/bin/dash -c '/bin/dash -c ":"; /bin/dash -c "/bin/dash -c : ; :"; ( : ); : | : ;
			      /bin/dash -c ": & wait"; :') >"$d.out" 2>"$d.err"
	snap_expect "launcher exit status" "$?" 0
	snap_expect "processes" "$(snap_sql "$d/s.db" "SELECT count(*) FROM session_process")" 9
	snap_expect "processes with an exit snapshot" "$(snap_sql "$d/s.db" "SELECT count(DISTINCT pid) FROM \
		snapshot WHERE trigger = 'exit'")" 9
	"$top_builddir/inspect/inspect" report "$d/s.db" >"$d.report" 2>&1
	grep -q '^processes: *9$' "$d.report" || mi_why_add "report does not count the 9 processes"
	mi_verdict "launcher: a tree of 9 dash processes, each ending with _exit, leaves 9 exit snapshots" \
		"$why" "$d.err" stderr "$d.report" report
fi
mi_finish
