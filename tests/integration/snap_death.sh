# snap_death.sh — a memory-only run ended by SIGTERM, SIGINT or SIGHUP
# keeps its exit snapshot and still dies by that signal (trace_death.c):
#   - mis and mim, snapshot=FILE alone (no trace, no service thread), the
#     program killed while main and 3 threads allocate and free in a loop
#     (main is often inside malloc when the signal lands): status 128+N,
#     snapshot 1 'exit', consistent (snap_lib.sh), main's 100 blocks of
#     1000 bytes in it;
#   - a program with its own SIGTERM handler: it sees the default action
#     before setting it and its handler after, the handler runs, same
#     output and status as uninstrumented, and the exit snapshot is the one
#     its exit(3) stores;
#   - SIGTERM, then SIGTERM again from the parent while the exit snapshot
#     is stored (what a launcher passing on a kill of the process group
#     makes): not a second Ctrl-C, the snapshot is kept;
#   - the launcher (meminst --mim, no time profiling) killed by a Ctrl-C
#     (SIGINT to its process group) keeps the exit snapshot and its report.
#   - a program looping on dlopen and dlclose of a library whose
#     constructor and destructor allocate, killed by SIGTERM 10 times in
#     each mode: the signal lands inside the loader most of the time, where
#     the store read an object dlclose had unmapped but not yet unlisted
#     (SIGSEGV, status 139, 2 kills in 12): status 143 and the snapshot.
# The programs start with the three signals at their default action
# (env --default-signal): a shell gives background jobs SIGINT ignored.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

if ! env --default-signal=INT true 2>/dev/null; then
	echo "skip  $MI_NAME: env has no --default-signal (coreutils 8.31)"
	exit 77
fi
T=$MI_TARGETS/snap_death
DFL="env --default-signal=INT,TERM,HUP"

# start DIR MEMINST ARGS...: the target in the background, preloaded, with
# its output in DIR.out and DIR.err; $pid once it is ready.
start() {
	d=$1
	mkdir -p "$d"
	rm -f "$d"/x.db
	$DFL LD_PRELOAD="$MEMINST_LIB" MEMINST="$2" "$T" $3 ${4-} >"$d.out" 2>"$d.err" &
	pid=$!
	snap_wait_line "$d.out" '^ready' || mi_why_add "the program did not get ready"
}

# finish: wait for the target (snap_wait_end); its status in $rc.
finish() {
	snap_wait_end "$pid"
}

# exit_snapshot DB MODE: snapshot 1 is 'exit', consistent, main's blocks in it.
exit_snapshot() {
	if [ ! -f "$1" ]; then
		mi_why_add "no snapshot file"
		return
	fi
	snap_expect "snapshots" "$(snap_ids "$1")" "1 "
	snap_expect "trigger" "$(snap_field "$1" 1 trigger)" exit
	snap_check_consistent "$1" 1
	if [ "$2" = mim ]; then
		n=$(snap_sql "$1" "SELECT count(*) FROM meminst_blocks b WHERE b.snapshot = 1 AND b.size = 1000")
	else
		n=$(snap_own_status "$1" 1 snap_death | cut -d' ' -f1)
	fi
	[ "${n:-0}" -ge 100 ] || mi_why_add "$n blocks held in the snapshot, expected the 100 of main at least"
}

for mode in mis mim; do
	for sig in TERM INT HUP; do
		why=
		d=$MI_TMP/$mode-$sig
		start "$d" "$mode,snapshot=$d/x.db" churn 3
		sleep 0.2
		kill -"$sig" "$pid"
		finish
		snap_expect "exit status" "$rc" $((128 + $(kill -l "$sig")))
		exit_snapshot "$d/x.db" "$mode"
		mi_no_complaint "$d.err"
		mi_verdict "$mode: SIG$sig while 4 threads allocate: exit snapshot kept, killed by SIG$sig" \
			"$why" "$d.err" stderr
	done
done

# The same signal again from the parent while the exit snapshot is written
# (a launcher passing on a kill that reached the whole process group too):
# not a second Ctrl-C, the snapshot is kept.  Sent as soon as the store has
# made its file (2 M blocks take a while to store).
why=
d=$MI_TMP/mim-twice
start "$d" "mim,snapshot=$d/x.db" hold 2000000
kill -TERM "$pid"
for i in $(seq 3000); do
	[ -e "$d/x.db" ] && break
	sleep 0.01
done
kill -TERM "$pid" 2>/dev/null
finish
snap_expect "exit status" "$rc" 143
exit_snapshot "$d/x.db" mim
mi_no_complaint "$d.err"
mi_verdict "mim: SIGTERM, then the same signal from the parent while the exit snapshot is stored: kept, killed by SIGTERM" \
	"$why" "$d.err" stderr

# Inside the loader: the store waits until the thread is out of ld.so.
PLUG=$MI_TARGETS/.libs/libdlplug.so
for mode in mis mim; do
	why=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		d=$MI_TMP/$mode-dlopen-$i
		start "$d" "$mode,snapshot=$d/x.db" dlopen "$PLUG"
		sleep 0.05
		kill -TERM "$pid"
		finish
		snap_expect "kill $i: exit status" "$rc" 143
		exit_snapshot "$d/x.db" "$mode"
		snap_no_complaint "$d.err"
		[ -n "$why" ] && break
	done
	mi_verdict "$mode: SIGTERM while the program opens and closes a library, 10 times: exit snapshot kept, killed by SIGTERM" \
		"$why" "$d.err" stderr
done

# The program's own handler: it runs, its output and status are its own.
why=
"$T" handler >"$MI_TMP/ref.out" 2>/dev/null &
pid=$!
snap_wait_line "$MI_TMP/ref.out" '^ready' || mi_why_add "the uninstrumented program did not get ready"
kill -TERM "$pid"
finish
ref_rc=$rc
for mode in mis mim; do
	d=$MI_TMP/$mode-handler
	start "$d" "$mode,snapshot=$d/x.db" handler
	kill -TERM "$pid"
	finish
	snap_expect "exit status" "$rc" "$ref_rc"
	cmp -s "$MI_TMP/ref.out" "$d.out" || mi_why_add "stdout differs: $(tr '\n' ' ' <"$d.out")"
	exit_snapshot "$d/x.db" "$mode"
	mi_no_complaint "$d.err"
done
snap_expect "uninstrumented: status" "$ref_rc" 3
snap_expect "uninstrumented: output" "$(tr '\n' ' ' <"$MI_TMP/ref.out")" \
	"before: default after: handler ready handled 15 "
mi_verdict "the program's own SIGTERM handler runs as without meminst" "$why" "$MI_TMP/ref.out" \
	"uninstrumented output"

# The launcher, memory only, stopped by a Ctrl-C: SIGINT to its process
# group (setsid: a group of its own), as the terminal sends it.
if command -v setsid >/dev/null; then
	why=
	d=$MI_TMP/launcher
	mkdir -p "$d"
	(cd "$d" && exec setsid $DFL MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" --mim \
		--no-time -q -o s.db -- "$T" churn 2) >"$d.out" 2>"$d.err" &
	lpid=$!
	snap_wait_line "$d.out" '^ready' || mi_why_add "the program did not get ready"
	sleep 0.2
	kill -INT -- -"$lpid"
	pid=$lpid
	finish
	snap_expect "launcher exit status" "$rc" 130
	snap_expect "exit snapshots" "$(snap_sql "$d/s.db" "SELECT count(*) FROM snapshot WHERE trigger = 'exit'")" 1
	"$top_builddir/inspect/inspect" report "$d/s.db" >"$d.report" 2>&1
	snap_expect "inspect report: exit status" "$?" 0
	grep -q 'snap_death' "$d.report" || mi_why_add "the report does not name the program's class"
	mi_verdict "launcher --mim --no-time, Ctrl-C: the exit snapshot and the report kept" \
		"$why" "$d.err" stderr "$d.report" report
fi
mi_finish
