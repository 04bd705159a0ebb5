# snap_api.sh — meminst_store_memory_data and meminst_store_memory_status,
# called by tests/targets/snap_api (linked with -lmeminst) at known points,
# for each backend:
#   - mim: the calls return 1, 2, 3, 4, then -1 with EINVAL (NULL path) and
#     EIO (missing directory, one line on stderr), then 5; the file is in
#     the start directory although the program changed directory after
#     the first call;
#   - each snapshot's content (map for _data, status for _status), the
#     registered type's current, max since last and max ever figures, and
#     its block rows: a snapshot resets max_since_last, so the next one
#     shows what happened since; the total's max since last too;
#   - mis: the same numbers, every snapshot 'status', no block rows;
#   - off: every call -1 ENOTSUP, no file, nothing on stderr;
#   - a second store into a new file while the first is still writing it
#     (tests/targets/snap_writers) waits and gets number 2.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PROG=$MI_TARGETS/snap_api

# run_api DIR MEMINST PATH: snap_api in DIR (changing into DIR/sub).
run_api() {
	dir=$1 MI_MEMINST=$2
	mkdir -p "$dir/sub"
	(cd "$dir" && mi_xl "$PROG" "$3" sub) >"$dir.out" 2>"$dir.err"
	rc=$?
	unset MI_MEMINST
}

# node DB ID: the registered type's status in snapshot ID, "CUR MAXSINCE
# MAXEVER" for bytes then blocks, and its block rows "COUNT BYTES".
node() {
	snap_sql "$1" "SELECT s.sizes_current, s.sizes_max_since_last, s.sizes_max_ever,
		s.blocks_current, s.blocks_max_since_last, s.blocks_max_ever,
		(SELECT count(*) || ' ' || coalesce(sum(size), 0) FROM meminst_blocks b
		 WHERE b.snapshot = s.snapshot AND b.type = s.id)
		FROM status s JOIN type t ON t.snapshot = s.snapshot AND t.id = s.id
		JOIN class c ON c.snapshot = t.snapshot AND c.id = t.class
		WHERE s.snapshot = $2 AND s.kind = 'types' AND t.name = 'snap_node'
		AND c.name = 'snap_api_class'"
}

RESULTS='data 1 -
status 2 -
data 3 -
data 4 -
null -1 EINVAL
nodir -1 EIO
status 5 -'

# check_numbers DB MAP: the five snapshots, MAP being "1" when the _data
# ones hold blocks (mim) and "0" when not (mis).
check_numbers() {
	m=$2
	snap_expect "results" "$(cat "$dir.out")" "$RESULTS"
	snap_expect "stderr" "$(cat "$dir.err")" \
		"meminst: snapshot /nonexistent-meminst-dir/x.db: cannot create: No such file or directory"
	[ ! -e "$dir/sub/$(basename "$1")" ] || mi_why_add "a file went to the directory after chdir"
	[ "$m" = 1 ] && c=map || c=status
	snap_expect "contents" "$(snap_sql "$1" "SELECT group_concat(content || '/' || trigger, ' ')
		FROM snapshot")" "$c/api status/api $c/api $c/api status/api"
	# 40 made | 100 made, 80 freed | nothing | 10 made, 10 freed | nothing
	snap_expect "snapshot 1 node" "$(node "$1" 1)" "1920 1920 1920 40 40 40 $((40 * m)) $((1920 * m))"
	snap_expect "snapshot 2 node" "$(node "$1" 2)" "960 4800 4800 20 100 100 0 0"
	snap_expect "snapshot 3 node" "$(node "$1" 3)" "960 960 4800 20 20 100 $((20 * m)) $((960 * m))"
	snap_expect "snapshot 4 node" "$(node "$1" 4)" "960 1440 4800 20 30 100 $((20 * m)) $((960 * m))"
	snap_expect "snapshot 5 node" "$(node "$1" 5)" "960 960 4800 20 20 100 0 0"
	t3=$(snap_sql "$1" "SELECT sizes_current FROM status WHERE snapshot = 3 AND kind = 'total'")
	snap_expect "snapshot 4 total current, max since last" "$(snap_sql "$1" "SELECT sizes_current,
		sizes_max_since_last FROM status WHERE snapshot = 4 AND kind = 'total'")" "$t3 $((t3 + 480))"
	snap_check_consistent "$1" 1 2 3 4 5
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b

	run_api "$T/mim" "mim,backend=$b" api.db
	why=
	snap_expect "exit status" "$rc" 0
	check_numbers "$T/mim/api.db" 1
	[ -f "$T/mim/api.db" ] && snap_expect "mode" "$(snap_mode "$T/mim/api.db")" 600
	mi_verdict "store_memory_data/status, mim/$b" "$why" "$T/mim.out" stdout "$T/mim.err" stderr \
		"$MI_TMP/incons" inconsistencies

	run_api "$T/mis" "mis,backend=$b" 'api.%p.db'
	why=
	snap_expect "exit status" "$rc" 0
	db=$(cd "$T/mis" && echo api.*.db)
	pid=$(snap_field "$T/mis/$db" 1 pid)
	snap_expect "file" "$db" "api.$pid.db"
	check_numbers "$T/mis/$db" 0
	mi_verdict "store_memory_data/status, mis/$b" "$why" "$T/mis.out" stdout "$T/mis.err" stderr \
		"$MI_TMP/incons" inconsistencies

	run_api "$T/off" "off,backend=$b" api.db
	why=
	snap_expect "exit status" "$rc" 0
	snap_expect "results" "$(cat "$T/off.out")" "$(echo "$RESULTS" | awk '{ print $1, "-1 ENOTSUP" }')"
	snap_expect "files" "$(cd "$T/off" && echo *)" sub
	[ ! -s "$T/off.err" ] || mi_why_add "something on stderr"
	mi_verdict "store_memory_data/status refused, off/$b" "$why" "$T/off.out" stdout "$T/off.err" stderr

	dir=$T/writers
	snap_case "$dir" "mim,backend=$b" mi_xl "$MI_TARGETS/snap_writers" w.db
	snap_expect "results" "$(tr '\n' ' ' <"$dir.out")" "first 1 second 2 "
	mi_no_complaint "$dir.err"
	snap_expect "snapshots" "$(snap_ids "$dir/w.db")" "1 2 "
	snap_check_consistent "$dir/w.db" 1 2
	mi_verdict "a store waits for one in progress in a new file, mim/$b" "$why" "$dir.out" stdout \
		"$dir.err" stderr "$MI_TMP/incons" inconsistencies
done
mi_finish
