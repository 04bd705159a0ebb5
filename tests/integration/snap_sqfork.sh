# snap_sqfork.sh — a program that uses SQLite itself forks while one of its
# threads holds one of SQLite's static mutexes (tests/targets/snap_sqfork).
# libsqlite3 is one library per process, so the child's exit snapshot
# needs those mutexes, copied held by a thread the child does not have: it
# waited for ever.  The fork handlers now take them around fork (try-lock,
# bounded).  Cases: STATIC_MAIN, STATIC_MEM, STATIC_VFS1 held when the fork
# begins and let go 200 ms later (fork waits; the child stores its exit
# snapshot); STATIC_MEM held until the fork is over (fork gives up after
# its wait, the child says its snapshot is not stored, and ends); two
# threads using SQLite without a pause while 100 children are forked.
: "${MEMINST_TEST_TIMEOUT:=300}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

d=$MI_TMP/sq
mkdir -p "$d"
why=
for mode in mis mim; do
	rm -f "$d"/*
	MI_MEMINST="$mode,snapshot=$d/c.%p.db"
	mi_x "$MI_TARGETS/snap_sqfork" >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	snap_expect "$mode: exit status" "$rc" 0
	grep -q '^stuck 0$' "$MI_TMP/out" ||
		mi_why_add "$mode: $(grep -E '^(stuck|case)' "$MI_TMP/out" | tr '\n' ' ')"
	for c in main mem vfs1 busy; do
		pid=$(sed -n "s/^case $c pid \([0-9]*\)$/\1/p" "$MI_TMP/out")
		[ -n "$pid" ] && [ -f "$d/c.$pid.db" ] ||
			mi_why_add "$mode: case $c: no exit snapshot of the child (${pid:-no pid})"
	done
	kept=$(sed -n 's/^case kept pid \([0-9]*\)$/\1/p' "$MI_TMP/out")
	grep -q "^meminst: snapshot $d/c.$kept.db: not stored: this process was forked while another thread held SQLite's lock" "$MI_TMP/err" ||
		mi_why_add "$mode: case kept: the child did not say its snapshot is not stored"
	grep -v "c\.$kept\.db: not stored" "$MI_TMP/err" >"$MI_TMP/err2"
	snap_no_complaint "$MI_TMP/err2"
	[ -n "$why" ] && break
done
mi_verdict "forks while SQLite's static mutexes are held: no child stuck" "$why" \
	"$MI_TMP/out" stdout "$MI_TMP/err" stderr
mi_finish
