# site_depth.sh — MEMINST site_depth=N keys a type by N return addresses,
# also when the thread's cache of caller chains answers (alloc_stack.c: up
# to 16 frames cached, each checked in its stack slot).
# tests/targets/site_chain allocates 100 blocks through top_a and 200
# through top_b, by chains that differ only in their eighth frame, in runs
# of calls (so that the cache answers within a run and finds the eighth
# frame changed at each switch).  site_depth=7 makes them one type of 300
# blocks; site_depth=8 and 16 two types, 100 and 200 (a cache that checked
# fewer frames than it keys, or answered across the switch, would merge
# them or count blocks in the other's type); site_depth=16 takes the whole
# stack, main's frame too, where top_a's two runs are two calls: three
# types, 50, 50 and 200.  The program's output and
# status stay the same.  Blocks per type are read from print=types at
# exit (mi_type_counts).
. "$top_srcdir/tests/integration/lib.sh"

PROG=$MI_TARGETS/site_chain

# run SETTINGS: the site_chain types' block counts, sorted, in $counts.
run() { mi_type_counts "$1" "$PROG" "kept 300"; }

for mode in mis mim; do
	for b in $MEMINST_BACKENDS; do
		run "$mode,backend=$b,site_depth=7"
		[ "$counts" = "300 " ] || mi_why_add "types: '$counts', expected '300 '"
		mi_verdict "$mode/$b: site_depth=7: the chains' common frames, one type" "$why" "$MI_TMP/err" stderr
		run "$mode,backend=$b,site_depth=8"
		[ "$counts" = "100 200 " ] || mi_why_add "types: '$counts', expected '100 200 '"
		mi_verdict "$mode/$b: site_depth=8: a type per chain, cached" "$why" "$MI_TMP/err" stderr
		run "$mode,backend=$b,site_depth=16"
		[ "$counts" = "50 50 200 " ] || mi_why_add "types: '$counts', expected '50 50 200 '"
		mi_verdict "$mode/$b: site_depth=16: a type per chain and call in main, cached" "$why" \
			"$MI_TMP/err" stderr
	done
done
mi_finish
