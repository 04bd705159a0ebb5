#!/bin/sh
# pidns.sh — processes in pid namespaces of their own (`unshare --pid
# --fork`, containers, Chromium's zygote and renderers) are 1, 2 ... there,
# every one of them: named by getpid(), they all wrote mem.1.db and trace.1
# (a second trace.1 replaced the first) and the session merged their
# snapshots into one process 1.  Now each is named by its pid outside
# (NSpid, when /proc is the outer one) or, under --mount-proc, by a number
# of its own noted in the session: two namespaces with /proc remounted and
# two without, each a shell that runs ls, give 8 processes of their own,
# each with its trace, none numbered 1, 2 or 3; the shells without
# --mount-proc have their pids outside, whose parent is their unshare.
# Needs root (unshare --pid); skipped when it is refused.
. "$top_srcdir/tests/integration/lib.sh"

LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
export MEMINST_LIBRARY="$MEMINST_LIB"

if ! command -v unshare >/dev/null || ! unshare --pid --fork --mount-proc true 2>/dev/null; then
	echo "skip  $MI_NAME: unshare --pid is refused here (needs root)"
	exit 77
fi

cat >"$MI_TMP/ns.sh" <<'SCRIPT'
for m in --mount-proc --mount-proc; do unshare --pid --fork $m sh -c 'ls / >/dev/null; sleep 0.3; echo in $$'; done
for m in 1 2; do unshare --pid --fork sh -c 'ls / >/dev/null; sleep 0.3; echo out $$'; done
SCRIPT
(unset MI_MEMINST; sh "$MI_TMP/ns.sh") >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err"
mi_ref_rc=$?
q() { "$INSPECT" sql "$MI_TMP/s.db" "$1" 2>>"$MI_TMP/sql.err" | tail -n 1 | tr -dc '0-9'; }
# want N SQL WHAT: the session's count by SQL is N, else why says WHAT
want() {
	n=$(q "$2")
	[ "$n" = "$1" ] || mi_why_add "$n $3, not $1"
}
for opts in "--sample=200" "--mim --control --sample=200"; do
	label="launcher $opts, unshare --pid --fork"
	rm -f "$MI_TMP/s.db"
	mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q $opts -o "$MI_TMP/s.db" -- sh "$MI_TMP/ns.sh"
	mi_no_complaint "$MI_TMP/run.err"
	want 4 "SELECT count(*) FROM session_process WHERE cmdline LIKE 'sh -c %'" \
		"processes of the four shells in the namespaces"
	want 4 "SELECT count(*) FROM session_process WHERE cmdline = 'ls /'" "processes of their ls"
	want 0 "SELECT count(*) FROM session_process WHERE pid < 4" "processes numbered as in their namespace"
	want 8 "SELECT count(DISTINCT pid) FROM session_trace WHERE pid IN (SELECT pid FROM session_process WHERE cmdline LIKE 'sh -c %' OR cmdline = 'ls /')" \
		"traces of the 8 processes"
	want 2 "SELECT count(*) FROM session_process s JOIN session_process u ON u.pid = s.ppid WHERE s.cmdline LIKE 'sh -c %out%' AND u.exe LIKE '%unshare'" \
		"shells outside --mount-proc named by their pid outside (parent: unshare)"
	want 2 "SELECT count(*) FROM session_note WHERE line LIKE 'process 1 of a pid namespace of its own%'" \
		"notes of a namespace's process 1 numbered otherwise"
	mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/sql.err" "inspect sql"
done

# the preload alone, without --mount-proc (with it, a program exec'd in the
# namespace sees no outer pid, and is named by its pid inside: meminst(7))
rm -f "$MI_TMP"/p.*
MI_MEMINST="mis,snapshot=$MI_TMP/p.%p.db,trace_file=$MI_TMP/p.%p.trace,sample=200"
grep -v mount-proc "$MI_TMP/ns.sh" >"$MI_TMP/out.sh"
(unset MI_MEMINST; sh "$MI_TMP/out.sh") >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err"
mi_ref_rc=$?
mi_run_like_reference mi_x sh "$MI_TMP/out.sh"
unset MI_MEMINST
why=
ls "$MI_TMP"/p.1.* "$MI_TMP"/p.2.* >/dev/null 2>&1 && mi_why_add "files named by a pid inside: $(cd "$MI_TMP" && ls p.1.* p.2.* 2>/dev/null | head -n 2 | tr '\n' ' ')"
mi_verdict "preload, unshare --pid --fork" "$why" "$MI_TMP/run.err" stderr
mi_finish
