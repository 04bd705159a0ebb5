# fold.sh — the sampling accessors of <meminst.h> (meminst_sample_fold,
# meminst_sample_stacks, meminst_sample_tree) in a program linked with
# libmeminst (tests/sample/sample_fold): the fold shows the 75/25 split
# within 10 points, the stacks are every sample, the tree holds fold_big
# below main.
. "$top_srcdir/tests/sample/sample_lib.sh"
T=$top_builddir/tests/sample/sample_fold
l=fold
(cd "$MI_TMP" && mi_xl "$T" fold.trace) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
rc=$?
why=
[ $rc -eq 0 ] || mi_why_add "exit status $rc"
big=$(awk '$1 == "fold" { print $3 }' "$MI_TMP/$l.out")
small=$(awk '$1 == "fold" { print $5 }' "$MI_TMP/$l.out")
st_within "${big:-0}" 75 10 || mi_why_add "fold: fold_big ${big:-?}%, not 75 +/- 10"
st_within "${small:-0}" 25 10 || mi_why_add "fold: fold_small ${small:-?}%, not 25 +/- 10"
n=$(awk '$1 == "stacks" { print $2 }' "$MI_TMP/$l.out")
[ "${n:-0}" -ge 300 ] || mi_why_add "only ${n:-0} stacks for 0.9 s at 1000 Hz"
grep -q 'frames_ok 1' "$MI_TMP/$l.out" || mi_why_add "a stack without frames"
d=$(awk '$1 == "tree" { print $5 }' "$MI_TMP/$l.out")
[ "${d:--1}" -ge 1 ] || mi_why_add "fold_big not in the tree below main (depth ${d:-?})"
mi_no_complaint "$MI_TMP/$l.err"
mi_verdict "$l: fold, stacks and tree from inside the program" "$why" "$MI_TMP/$l.out" output "$MI_TMP/$l.err" stderr
mi_finish
