# site_skip.sh — MEMINST site_skip=: allocation wrappers seen through.
# tests/targets/site_wrap allocates through wrap_alloc -> wrap_inner ->
# malloc: 100 blocks for fill_a, 10 for fill_b.  Without site_skip they
# are one type (wrap_inner's call, 110 blocks); naming the two wrappers
# (or wrap_* as a prefix) makes them two types, 100 and 10 blocks, keyed
# by the callers of the wrapper; with site_depth=2 too, two stacks of two
# frames from there.  The program's output and status stay the same.
# Blocks per type are read from print=types at exit (mi_type_counts).
. "$top_srcdir/tests/integration/lib.sh"

PROG=$MI_TARGETS/site_wrap

# run SETTINGS: the site_wrap types' block counts, sorted, in $counts.
run() { mi_type_counts "$1" "$PROG" "kept 111"; }

for mode in mis mim; do
	for b in $MEMINST_BACKENDS; do
		run "$mode,backend=$b"
		[ "$counts" = "110 " ] || mi_why_add "types without site_skip: '$counts', expected '110 '"
		mi_verdict "$mode/$b: a wrapper's blocks are one type without site_skip" "$why" "$MI_TMP/err" stderr

		for skip in wrap_alloc+wrap_inner 'wrap_*'; do
			run "$mode,backend=$b,site_skip=$skip"
			[ "$counts" = "10 100 " ] || mi_why_add "types: '$counts', expected '10 100 '"
			mi_verdict "$mode/$b: site_skip=$skip: a type per caller of the wrapper" "$why" \
				"$MI_TMP/err" stderr
		done

		run "$mode,backend=$b,site_skip=wrap_alloc+wrap_inner,site_depth=2"
		[ "$counts" = "10 100 " ] || mi_why_add "types: '$counts', expected '10 100 '"
		n=$(grep '(site_wrap) < ' "$MI_TMP/err" | grep -c -v 'wrap_')
		[ "$n" -eq 2 ] || mi_why_add "$n stacks of two frames, expected 2"
		mi_verdict "$mode/$b: site_skip with site_depth=2: stacks from the wrapper's caller" "$why" \
			"$MI_TMP/err" stderr
	done
done

# A bad list: one line, non-zero exit, the program not started.
for v in 'a+' '*' 'a*b' 'zmalloc-x'; do
	why=
	MI_MEMINST="mis,site_skip=$v"
	mi_x "$PROG" >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	[ "$rc" -ne 0 ] || mi_why_add "exit status 0"
	[ -s "$MI_TMP/out" ] && mi_why_add "the program ran"
	[ "$(grep -c . "$MI_TMP/err")" -le 2 ] || mi_why_add "$(grep -c . "$MI_TMP/err") lines"
	grep -q "site_skip=" "$MI_TMP/err" || mi_why_add "the item is not named"
	mi_verdict "site_skip=$v refused" "$why" "$MI_TMP/err" stderr
done
mi_finish
