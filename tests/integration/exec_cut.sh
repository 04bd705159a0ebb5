#!/bin/sh
# exec_cut.sh — an exec ends every thread but the caller, so a snapshot
# store the service thread had under way was cut where it was: a process
# whose first store an exec cut (unshare --pid --fork's child, starting
# the shell under load: pidns.sh) left a part without a snapshot, "process
# N left no complete snapshot", and what it measured was lost; when the new
# program is not measured, or names its files otherwise (--mount-proc),
# nothing made the part whole.  Now an exec waits for a store under way,
# as fork does.  tests/targets/exec_cut: a child (interval=10ms,
# control=on: a service thread of its own) executes a program as soon as
# its first store has begun:
#   - a program meminst does not measure (no LD_PRELOAD): the child's
#     snapshot is in the session, nothing is said;
#   - a measured one (sh): the child's snapshot and the shell's, one pid.
# A run whose child saw no store under way proves nothing: tried again,
# at most 3 times, then said as skipped.
. "$top_srcdir/tests/integration/lib.sh"

LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
TARGET=$MI_TARGETS/exec_cut
export MEMINST_LIBRARY="$MEMINST_LIB"
BLOCKS=200000 # a map of them takes tens of ms to store
q() { "$INSPECT" sql "$MI_TMP/s.db" "$1" 2>>"$MI_TMP/sql.err" | tail -n 1 | tr -dc '0-9'; }

# cut LABEL WANT PROGRAM...: up to 3 runs until the child saw its store
# under way; stdout must be WANT then that line
cut() {
	label=$1 want=$2
	shift 2
	printf '%s\nstore under way\n' "$want" >"$MI_TMP/ref.out"
	for try in 1 2 3; do
		rm -f "$MI_TMP/s.db"
		$MI_TIMEOUT "$LAUNCH" -q --mim --control --interval=10ms -o "$MI_TMP/s.db" -- \
			"$TARGET" $BLOCKS "$@" >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
		rc=$?
		grep -q '^store under way$' "$MI_TMP/run.out" && return 0
	done
	echo "skip  $label: the child never saw its first store under way (3 runs)"
	return 1
}
child() { # the child's count of SQL's rows (the program's own pid is not it)
	q "SELECT count(*) FROM ($1) WHERE pid <> (SELECT pid FROM session_run)"
}

as_plain() { # a new case: the run as a plain run's, no line of meminst's
	why=
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
	mi_no_complaint "$MI_TMP/run.err"
}

if cut "an unmeasured program" hi /bin/echo hi; then
	as_plain
	n=$(child "SELECT pid FROM snapshot")
	[ "${n:-0}" -ge 1 ] || mi_why_add "${n:-no} snapshots of the child"
	mi_verdict "launcher, a child execs an unmeasured program during its first store" "$why" \
		"$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr "$MI_TMP/sql.err" "inspect sql"
fi

export EXEC_CUT_MEASURED=1
# (the shell forks nothing: its work is a loop bounded by a count)
if cut "a measured program" "in sh" /bin/sh -c 'echo in sh; i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done'; then
	as_plain
	n=$(child "SELECT pid FROM snapshot WHERE exe LIKE '%exec_cut'")
	[ "${n:-0}" -ge 1 ] || mi_why_add "${n:-no} snapshots of the child before its exec"
	n=$(child "SELECT pid FROM snapshot WHERE exe NOT LIKE '%exec_cut' AND trigger = 'exit'")
	[ "$n" = 1 ] || mi_why_add "${n:-no} exit snapshots of the shell, not 1"
	n=$(child "SELECT pid FROM session_process")
	[ "$n" = 1 ] || mi_why_add "${n:-no} processes for the child, not 1"
	mi_verdict "launcher, a child execs sh during its first store" "$why" \
		"$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr "$MI_TMP/sql.err" "inspect sql"
fi
unset EXEC_CUT_MEASURED
mi_finish
