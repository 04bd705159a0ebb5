# snap_sqconfig.sh — a program that configures SQLite for itself
# (tests/targets/snap_sqconfig: single-threaded mode, its own malloc
# methods counting calls, a log callback through a FILE wrapper on main's
# stack, sqlite3_temp_directory) and uses it, under mis and mim with the
# snapshot stored at exit, at peaks, and every millisecond.  meminst stores
# with a private SQLite: the program's configuration calls all succeed, its
# malloc methods and its log callback see no call that is not its own (the
# target says any other on stderr: "snap_sqconfig: foreign …"), its output
# and status are those of a plain run, and the snapshots are there and
# whole.  When meminst stored through the program's libsqlite3, its stores
# called the program's malloc methods (all three settings), its service
# thread's first store could initialise SQLite before main configured it,
# and its log lines ("attempt to open … as file descriptor 0") reached the
# callback after main had returned: the sqlite3 shell, whose callback
# writes through main's frame, crashed (snap_sqshell.sh).  Each setting is
# run RUNS times: the interval stores race with the program's start.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

RUNS=4
T=$MI_TMP
mkdir -p "$T/ref"
(cd "$T/ref" && "$MI_TARGETS/snap_sqconfig" "$T/ref") >"$T/ref.out" 2>"$T/ref.err"
ref_rc=$?
if [ "$ref_rc" -ne 0 ] || ! grep -q '^initialize 0$' "$T/ref.out" || [ -s "$T/ref.err" ]; then
	mi_fail "snap_sqconfig (uninstrumented)" "exit status $ref_rc" "$T/ref.out" stdout "$T/ref.err" stderr
	mi_finish
fi

for mode in mis mim; do
	for at in exit peak interval; do
		case $at in
		exit) opts=snapshot_at=exit ;;
		peak) opts=snapshot_at=peak ;;
		interval) opts=snapshot_at=exit,interval=1ms ;;
		esac
		why=
		n=0
		while [ "$n" -lt "$RUNS" ] && [ -z "$why" ]; do
			n=$((n + 1))
			d=$T/$mode-$at-$n
			mkdir -p "$d"
			MI_MEMINST="$mode,snapshot=$d/s.db,$opts"
			(cd "$d" && mi_x "$MI_TARGETS/snap_sqconfig" "$d") >"$d.out" 2>"$d.err"
			rc=$?
			unset MI_MEMINST
			snap_expect "run $n: exit status" "$rc" 0
			cmp -s "$T/ref.out" "$d.out" || mi_why_add "run $n: stdout differs from a plain run"
			grep -q '^snap_sqconfig: foreign' "$d.err" &&
				mi_why_add "run $n: $(grep -c '^snap_sqconfig: foreign' "$d.err") foreign calls, first: $(grep -m 1 '^snap_sqconfig: foreign' "$d.err")"
			snap_no_complaint "$d.err"
			ids=$(snap_ids "$d/s.db")
			case $at in
			peak) want="peak" ;;
			interval) want="interval" ;;
			*) want="exit" ;;
			esac
			[ -n "$(snap_ids "$d/s.db" "trigger = '$want'")" ] ||
				mi_why_add "run $n: no $want snapshot (snapshots: ${ids:-none})"
			first=${ids%% *} last=$(echo "$ids" | awk '{ print $NF }')
			[ -n "$first" ] && snap_check_consistent "$d/s.db" $first $last
			[ -n "$why" ] || rm -rf "$d" "$d.out" "$d.err"
		done
		mi_verdict "$mode, snapshot at $at, $n runs: the program's SQLite configuration is its own" \
			"$why" "$d.out" stdout "$d.err" stderr
	done
done
mi_finish
