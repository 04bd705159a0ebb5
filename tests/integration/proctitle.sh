# proctitle.sh — a program that sets its process title over its argv and
# environment strings (as redis, nginx and postgres do) keeps its
# snapshots: the settings are copied when the library starts, so the exit
# and signal snapshots go to the path MEMINST named, not to whatever the
# title left in that memory; and under the launcher the session holds them.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

T=$MI_TARGETS/proctitle
cd "$MI_TMP" || exit 99

for mode in mis mim; do
	for b in $MEMINST_BACKENDS; do
		why=
		d=$MI_TMP/$mode.$b
		mkdir -p "$d"
		MI_MEMINST="$mode,backend=$b,snapshot=$d/t.%p.db,snapshot_at=exit+signal"
		mi_x "$T" 200 signal >"$d.out" 2>"$d.err"
		rc=$?
		unset MI_MEMINST
		snap_expect "exit status" "$rc" 0
		snap_expect "output" "$(cat "$d.out")" "held 200 blocks"
		[ -s "$d.err" ] && mi_why_add "messages on stderr"
		set -- "$d"/t.*.db
		snap_expect "snapshot files" "$#" 1
		[ -f "$1" ] && snap_expect "snapshots (signal, exit)" \
			"$(snap_sql "$1" "SELECT group_concat(trigger, ' ') FROM (SELECT trigger FROM snapshot ORDER BY id)")" \
			"signal exit"
		mi_verdict "process title over MEMINST: $mode/$b snapshots kept" "$why" "$d.err" stderr
	done
done

why=
MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" -q --no-time --mim -o s.db -- "$T" 300 \
	>s.out 2>s.err
snap_expect "launcher exit status" "$?" 0
[ -s s.err ] && mi_why_add "messages on stderr"
n=$(snap_sql s.db "SELECT count(*) FROM snapshot WHERE trigger = 'exit'")
snap_expect "exit snapshots in the session" "$n" 1
mi_verdict "process title under the launcher: the session has the exit snapshot" "$why" s.err stderr
mi_finish
