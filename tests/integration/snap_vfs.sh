# snap_vfs.sh — a program that makes a VFS of its own SQLite's default
# (tests/targets/snap_vfs: "wrap", which says each file it opens) and
# stores a row through it: its output and status are its own, its file
# goes through "wrap", and meminst's exit snapshot does not (it opened the
# snapshot with the default VFS, so a program's encrypting or logging VFS
# wrote meminst's file too); the snapshot is there and whole.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

for mode in mis mim; do
	why=
	d=$MI_TMP/$mode
	mkdir -p "$d"
	MI_MEMINST="$mode,snapshot=$d/x.db"
	mi_x "$MI_TARGETS/snap_vfs" "$d/own.db" >"$d.out" 2>"$d.err"
	rc=$?
	unset MI_MEMINST
	snap_expect "exit status" "$rc" 0
	snap_expect "output" "$(cat "$d.out")" stored
	grep -q "^wrap open $d/own.db\$" "$d.err" || mi_why_add "the program's own file did not go through its VFS"
	grep "^wrap open" "$d.err" | grep -q "x.db" && mi_why_add "the snapshot went through the program's VFS"
	snap_expect "snapshots" "$(snap_ids "$d/x.db")" "1 "
	snap_expect "trigger" "$(snap_field "$d/x.db" 1 trigger)" exit
	snap_no_complaint "$d.err"
	mi_verdict "$mode: the program's default VFS is its own; the snapshot uses SQLite's unix VFS" \
		"$why" "$d.err" stderr
done
mi_finish
