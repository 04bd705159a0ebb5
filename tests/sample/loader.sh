# loader.sh — samples of a thread inside the loader's lock: glibc's lock
# over its list of objects is recursive, but a handler that interrupts its
# own thread between taking it and writing its owner (or between clearing
# the owner and giving it back) and calls dl_iterate_phdr, as libunwind
# does, waits on itself for ever: the sqlite3 shell under `meminst --mim`
# hung so in one CI run (snap_sqshell.sh), and a thread walking the list
# in a loop hung at every run.  tests/sample/sample_loader's thread walks
# the list 20 M times beside main's computation, sampled at 1000 Hz, three
# times: each run ends (a hang meets the timeout) with its output, and the
# computing thread keeps its stacks (burn's samples under main: a sample
# is given up only when the thread it interrupted is the one in the
# lock's window).
: "${MEMINST_TEST_TIMEOUT:=120}"
. "$top_srcdir/tests/sample/sample_lib.sh"
ST_LOADER=$top_builddir/tests/sample/sample_loader

why=
for i in 1 2 3; do
	st_run loader$i sample=1000 "$ST_LOADER" 20000000 50000000
	rc=$?
	[ $rc -eq 0 ] || mi_why_add "run $i: exit status $rc$([ $rc -ge 124 ] && echo ' (hung: killed by the timeout)')"
	grep -q '^loader done$' "$MI_TMP/loader$i.out" || mi_why_add "run $i: the program did not finish"
	mi_no_complaint "$MI_TMP/loader$i.err"
	[ $rc -eq 0 ] || continue
	st_analyse loader$i
	burn=$(st_j loader$i "fn('burn').get('cum_percent', 0)")
	under=$(st_j loader$i "fn('main').get('cum_percent', 0)")
	python3 -c "import sys; b, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (b >= 20 and m >= b - 2))" \
		"${burn:-0}" "${under:-0}" ||
		mi_why_add "run $i: burn has ${burn:-0}% of the samples, main (its only caller) ${under:-0}%"
done
mi_verdict "a thread in dl_iterate_phdr sampled at 1000 Hz, three runs: no hang, the other thread's stacks kept" \
	"$why" "$MI_TMP/loader1.err" stderr
mi_finish
