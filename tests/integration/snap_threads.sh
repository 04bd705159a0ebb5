# snap_threads.sh — snapshots taken while four threads allocate and free:
# tests/targets/snap_threads (linked with -lmeminst) stores 20 snapshots
# with meminst_store_memory_data in the middle of the churn, in mim mode
# (blocks and status) and mis mode (status: the counting gate stops the
# other threads while the kinds are read) with each backend.
#   - the calls return 1 to 20;
#   - every snapshot is one instant: the status of every kind (total,
#     allocators, classes, types, threads) equals the block rows of the
#     same snapshot, added up (snap_lib.sh, snap_consistent);
#   - and the churn was there to see: the threads' blocks differ between
#     snapshots.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

for m in mim mis; do
for b in $MEMINST_BACKENDS; do
	dir=$MI_TMP/$m-$b
	snap_case "$dir" "$m,backend=$b" mi_xl "$MI_TARGETS/snap_threads" t.db
	mi_no_complaint "$dir.err"
	snap_expect "results" "$(awk '{ printf "%s=%s ", $2, $3 }' "$dir.out")" \
		"$(seq 20 | awk '{ printf "%s=%s ", $1, $1 }')"
	if [ -f "$dir/t.db" ]; then
		snap_expect "snapshots" "$(snap_sql "$dir/t.db" "SELECT count(*), min(id), max(id),
			count(DISTINCT content || trigger) FROM snapshot")" "20 1 20 1"
		snap_check_consistent "$dir/t.db" $(snap_ids "$dir/t.db")
		n=$(snap_sql "$dir/t.db" "SELECT count(DISTINCT sizes_current) FROM status
			WHERE kind = 'total'")
		[ "$n" -ge 10 ] || mi_why_add "only $n different byte totals in 20 snapshots: no churn seen"
	else
		mi_why_add "no database"
	fi
	mi_verdict "20 snapshots during the churn of 4 threads, $m/$b" "$why" "$dir.out" stdout \
		"$dir.err" stderr "$MI_TMP/incons" inconsistencies
done
done
mi_finish
