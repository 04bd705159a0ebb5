# print.sh — the print= item of MEMINST: status tables on stderr at exit.
# tests/targets/api_tags `leave` registers the class itest.print and leaves
# 10 blocks of 100 KiB (type "kept") and 3 of 1 KiB (type "kept.scoped", by
# a scope) allocated at exit.  Each asked-for table must be there, in order,
# with the mode and backend in its title and exact rows for the class and
# its types; without print= nothing is printed.
. "$top_srcdir/tests/integration/lib.sh"

PROG=$MI_TARGETS/api_tags
OUT=$MI_TMP/print.out ERR=$MI_TMP/print.err
ALL=total+allocators+classes+types+threads

run() {
	MI_MEMINST=$1
	mi_xl "$PROG" leave >"$OUT" 2>"$ERR"
	rc=$?
	unset MI_MEMINST
	why=
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(tail -n 1 "$OUT")" = "left 1027072 bytes in 13 blocks" ] || mi_why_add "stdout"
}

# has_row NAME SIZE BLOCKS: one row, with current = max-since = max-ever
# (then the calls and temporary blocks).
has_row() {
	n=$(grep -E -c "^ +[0-9]+  $1 +$2 +$2 +$2 +$3 +$3 +$3 +[0-9]+ +[0-9]+\$" "$ERR")
	[ "$n" -eq 1 ] || mi_why_add "$n rows '$1 $2 … $3 …'"
}

for mode in mis mim; do
	for b in $MEMINST_BACKENDS; do
		run "$mode,backend=$b,print=$ALL"
		titles=$(sed -n 's/^meminst status: \([a-z]*\) (mode \([a-z]*\), backend \([a-z]*\), header .*/\1 \2 \3/p' "$ERR" |
			 tr '\n' ' ')
		want=
		for k in total allocators classes types threads; do
			want="$want$k $mode $b "
		done
		[ "$titles" = "$want" ] || mi_why_add "tables '$titles'"
		has_row 'itest\.print' '1003\.0 KiB' 13
		has_row 'kept' '1000\.0 KiB' 10
		has_row 'kept\.scoped' '3\.0 KiB' 3
		mi_verdict "print=$ALL $mode/$b" "$why" "$ERR" stderr

		run "$mode,backend=$b,print=classes"
		[ "$(grep -c '^meminst status:' "$ERR")" -eq 1 ] &&
			grep -q '^meminst status: classes ' "$ERR" || mi_why_add "not just the classes table"
		has_row 'itest\.print' '1003\.0 KiB' 13
		mi_verdict "print=classes $mode/$b" "$why" "$ERR" stderr

		run "$mode,backend=$b"
		[ ! -s "$ERR" ] || mi_why_add "stderr not empty without print="
		mi_verdict "no print= $mode/$b" "$why" "$ERR" stderr

		# GNU programs close stderr in an atexit handler, before the
		# library's destructor runs: the tables must appear all the same.
		why=
		seq 1000 | env LD_PRELOAD="$MEMINST_LIB" MEMINST="$mode,backend=$b,print=total" \
			sort -r >/dev/null 2>"$ERR"
		grep -q '^meminst status: total ' "$ERR" || mi_why_add "no table from sort"
		mi_verdict "print=total with sort (closes stderr) $mode/$b" "$why" "$ERR" stderr
	done
done
mi_finish
