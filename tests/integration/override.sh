# override.sh — when another allocator comes before libmeminst (the program
# defines malloc, or a library precedes it in LD_PRELOAD), the program runs
# uninstrumented: meminst must say so in one line, never stay silent; and an
# ordinary program gets no such line.
. "$top_srcdir/tests/integration/lib.sh"

ERR=$MI_TMP/override.err OUT=$MI_TMP/override.out
WARN="meminst: the program's malloc calls do not reach libmeminst"

for mode in mis mim; do
	why=
	MI_MEMINST=$mode
	mi_x "$MI_TARGETS/own_malloc" >"$OUT" 2>"$ERR"
	rc=$?
	unset MI_MEMINST
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(cat "$OUT")" = "own allocator" ] || mi_why_add "output changed"
	[ "$(grep -c "^$WARN" "$ERR")" -eq 1 ] || mi_why_add "no warning line"
	mi_verdict "own malloc warned, $mode" "$why" "$ERR" stderr

	je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
	if [ -e "$je" ]; then
		why=
		env LD_PRELOAD="$je $MEMINST_LIB" MEMINST=$mode /bin/echo hi >"$OUT" 2>"$ERR"
		[ "$(cat "$OUT")" = hi ] || mi_why_add "output changed"
		[ "$(grep -c "^$WARN" "$ERR")" -eq 1 ] || mi_why_add "no warning line"
		mi_verdict "jemalloc before libmeminst warned, $mode" "$why" "$ERR" stderr
	fi

	why=
	MI_MEMINST=$mode
	mi_x /bin/echo hi >"$OUT" 2>"$ERR"
	unset MI_MEMINST
	! grep -q "^$WARN" "$ERR" || mi_why_add "warned although malloc reaches us"
	mi_verdict "no warning for an ordinary program, $mode" "$why" "$ERR" stderr
done
mi_finish
