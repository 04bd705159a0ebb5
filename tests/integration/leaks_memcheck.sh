#!/bin/sh
# leaks_memcheck.sh — the leak check on a Debian program with a known leak,
# against valgrind --leak-check=full on the same command (issue 27's target:
# every class within 1 %; bench/RESULTS.md has the larger programs):
#   - tar cf /dev/null FILE (GNU tar leaks a 48-byte block holding two
#     small ones when it archives a file): definitely lost, indirectly lost,
#     possibly lost and still reachable bytes and blocks of `inspect leaks`
#     (default suppressions: what glibc's __libc_freeres frees under
#     Valgrind) are LEAK SUMMARY's, within 1 % of the bytes; its output and
#     exit status are unchanged;
#   - the same through the launcher (meminst --mim, whose sites are
#     site_depth=user stacks): the same classes.
# Skips when valgrind or tar is missing.  About a second of CPU under
# valgrind.
. "$top_srcdir/tests/integration/lib.sh"

INSPECT=$top_builddir/inspect/inspect
command -v valgrind >/dev/null || { echo "skip  $MI_NAME: valgrind is not installed"; exit 77; }
TAR=$(command -v tar) || { echo "skip  $MI_NAME: tar is not installed"; exit 77; }
mi_need "$TAR" tar

# vg_summary FILE KIND: "bytes blocks" of valgrind's LEAK SUMMARY line
# (0 0 when it has none: nothing in use at exit).
vg_summary() {
	sed -n "s/^==[0-9]*== *$2: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p" "$1" | tr -d , |
		awk '{ print; n++ } END { if (!n) print "0 0" }'
}
# mi_summary FILE.csv KIND: "bytes blocks" of inspect leaks' summary.
mi_summary() {
	awk -F, -v k="$2" 'NF == 3 && $1 == k { print $2, $3; exit }' "$1"
}
# within WHAT "BYTES BLOCKS" "BYTES BLOCKS": bytes within 1 % of memcheck's.
within() {
	set -- "$1" $2 $3
	awk -v a="$2" -v b="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a > b ? a : b; exit !(d <= m / 100) }' ||
		mi_why_add "$1: $2 bytes in $3 blocks, memcheck $4 in $5"
}

d=$MI_TMP
printf 'some data\n' >"$d/file"
(cd "$d" && $MI_TIMEOUT valgrind --leak-check=full "$TAR" cf /dev/null file >"$d/vg.out" 2>"$d/vg.err")
vg_rc=$?
why=
(cd "$d" && MI_MEMINST="mim,snapshot=$d/l.db" mi_x "$TAR" cf /dev/null file >"$d/mi.out" 2>"$d/mi.err")
[ $? = "$vg_rc" ] || mi_why_add "exit status differs from valgrind's run ($vg_rc)"
cmp -s "$d/mi.out" "$d/vg.out" || mi_why_add "output differs"
"$INSPECT" leaks --csv "$d/l.db" >"$d/l.csv" 2>"$d/i.err" || mi_why_add "inspect leaks failed"
(cd "$d" && MEMINST_LIBRARY=$MEMINST_LIB $MI_TIMEOUT "$top_builddir/session/meminst" -q --mim -o "$d/s.db" -- \
	"$TAR" cf /dev/null file >"$d/s.out" 2>"$d/s.err") || mi_why_add "meminst --mim failed"
"$INSPECT" leaks --csv "$d/s.db" >"$d/s.csv" 2>>"$d/i.err" || mi_why_add "inspect leaks of the session failed"
grep -q 'definitely lost: [1-9]' "$d/vg.err" || mi_why_add "memcheck finds nothing definitely lost: not the tar this test knows"
for k in 'definitely lost' 'indirectly lost' 'possibly lost' 'still reachable'; do
	within "$k" "$(mi_summary "$d/l.csv" "$k")" "$(vg_summary "$d/vg.err" "$k")"
	within "session: $k" "$(mi_summary "$d/s.csv" "$k")" "$(vg_summary "$d/vg.err" "$k")"
done
mi_verdict "tar: the classes of valgrind --leak-check=full, within 1 %" "$why" "$d/l.csv" "inspect leaks" \
	"$d/s.csv" "inspect leaks (session)" "$d/vg.err" "valgrind" "$d/i.err" "inspect stderr"
mi_finish
