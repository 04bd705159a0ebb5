# snap_peak.sh — snapshot_at=peak and peak_growth=, for each backend, with
# tests/targets/snap_peak, which climbs to 8 MiB of live 1 KiB blocks,
# frees them and waits until the test lets it exit (so that what is
# checked here does not depend on how fast the exit is; the last case has
# a program that exits at once).  A peak is taken at the turn: once the
# total passed the threshold, by the free that takes it a quarter of
# peak_growth percent below its highest.
#   - one climb, one 'peak' snapshot (a climb no longer costs a copy of
#     the map per threshold), of 1 MiB or more (the floor), consistent;
#   - within peak_growth/2 percent of the true peak (the max ever of the
#     exit snapshot's total), which the test waits for;
#   - peak_growth=100: the same rules with doubling;
#   - a program that stays under 1 MiB gets no peak snapshot;
#   - mis: 'status' peak snapshots, same rules;
#   - a peak just before the exit is stored: snap_peak allocates one 2 MiB
#     block (past the first threshold), frees it and returns from main at
#     once, while the peak waits for the service thread; the snapshot
#     holds the block (taken before the free).
#   - a peak of 160 k blocks of 16 bytes: its capture goes through a
#     temporary file beside the database in runs of 16,384 blocks
#     (alloc/alloc_snap_spill.c), stored by the service thread (whose
#     descriptor table is its own): consistent, every block there, and
#     the file gone afterwards.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PROG=$MI_TARGETS/snap_peak

# peak_case LABEL DIR MEMINST KIB GROWTH [BLOCK]: snap_peak climbs to KIB
# KiB in blocks of BLOCK bytes (1024); peak_growth is GROWTH percent.
peak_case() {
	label=$1 dir=$2 MI_MEMINST=$3 kib=$4 growth=$5
	mkdir -p "$dir"
	rm -f "$dir.go"
	(cd "$dir" && mi_x "$PROG" "$kib" "${6:-1024}" "$dir.go") >"$dir.out" 2>"$dir.err" &
	bg=$!
	unset MI_MEMINST
	why=
	db=$dir/p.db
	# The largest peak may be stored a little after the program came down.
	if snap_wait_line "$dir.out" '^peak '; then
		top=$(sed -n 's/^peak //p' "$dir.out")
		[ "$top" -lt 1048576 ] ||
			snap_wait_sql "$db" "SELECT count(*) FROM status WHERE kind = 'total' AND
				sizes_current + sizes_current / 100 * $growth >= $top" ||
			mi_why_add "no peak snapshot within $growth% of $top bytes within 20 s"
	else
		mi_why_add "the program did not come down from its peak"
	fi
	touch "$dir.go"
	wait "$bg"
	rc=$?
	snap_expect "exit status" "$rc" 0
	mi_no_complaint "$dir.err"
}

# check_peaks DB GROWTH CONTENT: the rules above.
check_peaks() {
	peaks=$(snap_ids "$1" "trigger = 'peak'")
	exit_id=$(snap_ids "$1" "trigger = 'exit'")
	[ -n "$peaks" ] || { mi_why_add "no peak snapshot"; return; }
	snap_expect "contents" "$(snap_sql "$1" "SELECT DISTINCT content FROM snapshot")" "$3"
	snap_check_consistent "$1" $peaks
	# each peak's total, in the order stored
	totals=$(snap_sql "$1" "SELECT s.sizes_current FROM status s JOIN snapshot p ON p.id = s.snapshot
		WHERE p.trigger = 'peak' AND s.kind = 'total' ORDER BY p.id" | tr '\n' ' ')
	true_peak=$(snap_sql "$1" "SELECT sizes_max_ever FROM status WHERE kind = 'total'
		AND snapshot = ${exit_id%% *}")
	# The library's rules: one climb, one peak; taken at most two quarters
	# of peak_growth percent below the top (the highest is followed in
	# steps of a quarter, the turn is a quarter below it).
	bad=$(echo "$totals" | awk -v g="$2" -v top="$true_peak" '
	{
		if (NF != 1) print NF " peak snapshots for one climb"
		for (i = 1; i <= NF; i++) {
			if ($i <= 1048576) print "a peak of " $i " bytes, not above 1 MiB"
			if ($i > max) max = $i
		}
		if (max < top - top * g / 200) print "largest peak " max ", true peak " top
		if (max > top) print "largest peak " max " above the true peak " top
	}')
	[ -z "$bad" ] || mi_why_add "$(echo "$bad" | tr '\n' ';') (peaks: $totals)"
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b

	peak_case "peaks up to 8 MiB, mim/$b" "$T/p10" \
		"mim,backend=$b,snapshot=p.db,snapshot_at=exit+peak" 8192 10
	check_peaks "$T/p10/p.db" 10 map
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr "$MI_TMP/incons" inconsistencies

	peak_case "a peak of 160 k blocks, spilled, mim/$b" "$T/spill" \
		"mim,backend=$b,snapshot=p.db,snapshot_at=exit+peak" 2560 10 16
	check_peaks "$T/spill/p.db" 10 map
	snap_expect "blocks at the largest peak over 150000" "$(snap_sql "$T/spill/p.db" "SELECT max(blocks) > 150000
		FROM snapshot WHERE trigger = 'peak'")" 1
	snap_expect "files left beside the database" "$(ls -a "$T/spill" | grep -c meminst-spill)" 0
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr "$MI_TMP/incons" inconsistencies

	peak_case "peak_growth=100, mim/$b" "$T/p100" \
		"mim,backend=$b,snapshot=p.db,snapshot_at=exit+peak,peak_growth=100" 8192 100
	check_peaks "$T/p100/p.db" 100 map
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr "$MI_TMP/incons" inconsistencies

	peak_case "peaks up to 8 MiB, mis/$b" "$T/mis" \
		"mis,backend=$b,snapshot=p.db,snapshot_at=peak+exit" 8192 10
	check_peaks "$T/mis/p.db" 10 status
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr "$MI_TMP/incons" inconsistencies

	peak_case "no peak under 1 MiB, mim/$b" "$T/small" \
		"mim,backend=$b,snapshot=p.db,snapshot_at=exit+peak" 512 10
	snap_expect "triggers" "$(snap_sql "$T/small/p.db" "SELECT group_concat(trigger, ' ') FROM snapshot")" exit
	mi_verdict "$label" "$why" "$dir.out" stdout "$dir.err" stderr

	dir=$T/atexit
	snap_case "$dir" "mim,backend=$b,snapshot=p.db,snapshot_at=exit+peak" mi_x "$PROG" 2048 2097152
	mi_no_complaint "$dir.err"
	snap_expect "triggers" "$(snap_sql "$dir/p.db" "SELECT group_concat(trigger, ' ') FROM snapshot")" \
		"peak exit"
	snap_expect "the peak" "$(snap_sql "$dir/p.db" "SELECT sizes_current >= 2097152 FROM status
		WHERE kind = 'total' AND snapshot = (SELECT id FROM snapshot WHERE trigger = 'peak')")" 1
	snap_check_consistent "$dir/p.db" 1 2
	mi_verdict "a peak just before exit is stored, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies
done
mi_finish
