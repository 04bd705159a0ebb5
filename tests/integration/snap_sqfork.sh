# snap_sqfork.sh — a program that uses SQLite itself forks while one of its
# threads holds one of its SQLite's static mutexes (tests/targets/snap_sqfork):
# STATIC_MAIN, STATIC_MEM, STATIC_VFS1 held from before the fork until it
# is over, then two threads using SQLite without a pause while 100
# children are forked.  Every child stores its exit snapshot and ends, with
# not a word from meminst.  meminst's SQLite is its own copy, whose every
# call is made under the store lock that fork's prepare handler takes, so
# the program's mutexes are not its business.  When meminst stored through
# the program's libsqlite3, a child's exit snapshot needed those mutexes,
# copied held by a thread the child does not have: it waited for ever; then
# fork took them by try-lock for 2 s at most, and a child forked while one
# stayed held said its snapshot was not stored.
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
		if [ -n "$pid" ] && [ -f "$d/c.$pid.db" ]; then
			snap_expect "$mode: case $c: the child's snapshots" "$(snap_ids "$d/c.$pid.db" "trigger = 'exit'")" "1 "
			snap_check_consistent "$d/c.$pid.db" 1
		else
			mi_why_add "$mode: case $c: no exit snapshot of the child (${pid:-no pid})"
		fi
	done
	# the parent and its 103 children
	snap_expect "$mode: snapshot files" "$(ls "$d" | grep -c '^c\.[0-9]*\.db$')" 104
	snap_no_complaint "$MI_TMP/err"
	[ -n "$why" ] && break
done
mi_verdict "forks while SQLite's static mutexes are held: no child stuck" "$why" \
	"$MI_TMP/out" stdout "$MI_TMP/err" stderr
mi_finish
