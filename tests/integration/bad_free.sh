# bad_free.sh — invalid and double frees under mis and mim (tests/targets/
# bad_free.c): the program must not crash and must exit 0, stderr must
# hold one "meminst: OP of ADDRESS … ; ignored" line for each bad call
# the program announced on stdout, and nothing else from meminst.  Also:
# only the first 20 reports are shown, then a count; quiet=on shows none;
# on_error=abort aborts at the first one (status 134); a double free of a
# large block whose pages are gone does not fault.  There is no
# uninstrumented reference: glibc aborts on the first bad free.
. "$top_srcdir/tests/integration/lib.sh"

PROG=$MI_TARGETS/bad_free
OUT=$MI_TMP/run.out ERR=$MI_TMP/run.err

run() { # run MEMINST ARG
	MI_MEMINST=$1
	mi_x "$PROG" "$2" >"$OUT" 2>"$ERR"
	rc=$?
	unset MI_MEMINST
}

# Each announced "OP ADDRESS" has its report line, and there are no others.
# The line ends "; ignored", or "; aborting" under on_error=abort ($1).
check_reports() {
	verdict=${1:-ignored}
	announced=0
	while read -r op addr; do
		[ "$op" = survived ] && continue
		announced=$((announced + 1))
		n=$(grep -c "^meminst: $op of $addr in thread [0-9]* (tid [0-9]*), called from .*; $verdict\$" "$ERR")
		[ "$n" -eq 1 ] || mi_why_add "$n reports for $op of $addr"
	done <"$OUT"
	[ "$announced" -gt 0 ] || mi_why_add "the program announced nothing"
	[ "$(grep -c '^meminst:' "$ERR")" -eq "$announced" ] ||
		mi_why_add "$(grep -c '^meminst:' "$ERR") meminst lines for $announced bad calls"
}

check_survived() {
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(tail -n 1 "$OUT")" = survived ] || mi_why_add "did not reach its end"
}

for mode in mis mim; do
	for b in $MEMINST_BACKENDS; do
		why=
		run "$mode,backend=$b" all
		check_survived
		check_reports
		mi_verdict "bad_free $mode/$b" "$why" "$OUT" stdout "$ERR" stderr

		why=
		run "$mode,backend=$b" many
		check_survived
		[ "$(grep -c '; ignored$' "$ERR")" -eq 20 ] ||
			mi_why_add "$(grep -c '; ignored$' "$ERR") reports shown, expected 20"
		grep -q '^meminst: further invalid frees are counted but not shown$' "$ERR" ||
			mi_why_add "no 'further … not shown' line"
		grep -q '^meminst: 25 invalid or double frees in all (the first 20 were shown)$' "$ERR" ||
			mi_why_add "no summary line at exit"
		mi_verdict "bad_free many $mode/$b" "$why" "$ERR" stderr

		why=
		run "$mode,backend=$b,quiet=on" all
		check_survived
		! grep -q '^meminst:' "$ERR" || mi_why_add "meminst printed with quiet=on"
		mi_verdict "bad_free quiet=on $mode/$b" "$why" "$ERR" stderr

		why=
		run "$mode,backend=$b,on_error=abort" all
		[ "$rc" -eq 134 ] || mi_why_add "exit status $rc, expected 134 (SIGABRT)"
		[ "$(wc -l <"$OUT")" -eq 1 ] || mi_why_add "went on after the first bad free"
		check_reports aborting
		mi_verdict "bad_free on_error=abort $mode/$b" "$why" "$OUT" stdout "$ERR" stderr

		# The system malloc unmaps a freed 1 MiB block: the header of
		# the second free must be probed, not read.
		why=
		run "$mode,backend=$b" large
		check_survived
		check_reports
		mi_verdict "bad_free large $mode/$b" "$why" "$OUT" stdout "$ERR" stderr
	done
done
mi_finish
