# snap_lib.sh — helpers of the snapshot tests (tests/integration/snap_*.sh),
# sourced after lib.sh:
#     . "$top_srcdir/tests/integration/lib.sh"
#     . "$top_srcdir/tests/integration/snap_lib.sh"
#
# The databases are read with the sqlite3 command-line program (package
# sqlite3), uninstrumented: lib.sh unsets LD_PRELOAD and MEMINST for the
# script itself.  A test skips (77) when sqlite3 is missing.
#
# The central check is snap_consistent: a snapshot is one instant, so in a
# 'map' snapshot the blocks listed add up, for every allocator, class,
# type and thread, to the current figures of the status stored with them,
# and to the total; in any snapshot each kind adds up to the total.

if ! command -v sqlite3 >/dev/null; then
	echo "skip  $MI_NAME: sqlite3 is not installed (apt-get install sqlite3)"
	exit 77
fi

SNAP_APP_ID=1296387401 # MEMINST_SNAPSHOT_APP_ID, "MEMI"
SNAP_VERSION=3         # MEMINST_SNAPSHOT_VERSION

# The blocks are read through the SQLite extension, as a user would:
# meminst_blocks (with its hidden column snapshot) in place of a table.
SNAP_SQLITE_EXT=$top_builddir/tools/.libs/meminst_sqlite
if [ ! -f "$SNAP_SQLITE_EXT.so" ]; then
	echo "error: $SNAP_SQLITE_EXT.so not built"
	exit 99
fi

# snap_sql DB SQL: the rows, fields separated by one space, with the
# extension loaded.  The file must
# exist (sqlite3 would create it); waits up to 10 s for a writer's lock.
snap_sql() {
	[ -f "$1" ] || return 1
	sqlite3 -batch -noheader -separator ' ' -cmd '.timeout 10000' \
		-cmd ".load $SNAP_SQLITE_EXT" "$1" "$2"
}

# snap_wait_sql DB SQL [SECONDS]: until SQL's first field is a number above
# zero (default: at most 20 s).  For snapshots stored by another thread or
# process: the test waits for the state it needs, it never sleeps a guess.
snap_wait_sql() {
	sw_n=0 sw_limit=$((${3:-20} * 20))
	while [ "$sw_n" -lt "$sw_limit" ]; do
		sw_v=$(snap_sql "$1" "$2" 2>/dev/null | head -n 1)
		case $sw_v in [1-9]*) return 0 ;; esac
		sleep 0.05
		sw_n=$((sw_n + 1))
	done
	return 1
}

# snap_wait_line FILE PATTERN [SECONDS]: until FILE has a line matching the
# extended regular expression PATTERN (a target's "pid N" line).
snap_wait_line() {
	sw_n=0 sw_limit=$((${3:-20} * 20))
	while [ "$sw_n" -lt "$sw_limit" ]; do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
		sw_n=$((sw_n + 1))
	done
	return 1
}

# snap_pid_of FILE: the N of a target's "pid N" line.
snap_pid_of() {
	sed -n 's/^pid \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1
}

# snap_no_complaint FILE: mi_no_complaint, by the name the snapshot tests
# of other branches call it.
snap_no_complaint() {
	mi_no_complaint "$1"
}

# snap_wait_end PID: wait (30 s at most) for the background process PID,
# sent a signal that should end it; after that it is killed, and that is
# a reason in $why.  Its exit status in $rc.
snap_wait_end() {
	sw_n=0
	while kill -0 "$1" 2>/dev/null && [ "$sw_n" -lt 300 ]; do
		sleep 0.1
		sw_n=$((sw_n + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		mi_why_add "the signal did not end the process within 30 s"
		kill -KILL "$1"
	fi
	wait "$1"
	rc=$?
}

# snap_case DIR MEMINST RUN PROGRAM ARGS...: a new case ($why empty):
# PROGRAM run in DIR (made) by RUN (mi_x preloads it, mi_xl for a program
# linked with -lmeminst) under MEMINST, stdout in DIR.out and stderr in
# DIR.err; it must exit 0 ($rc).
snap_case() {
	dir=$1 MI_MEMINST=$2
	shift 2
	mkdir -p "$dir"
	(cd "$dir" && "$@") >"$dir.out" 2>"$dir.err"
	rc=$?
	unset MI_MEMINST
	why=
	snap_expect "exit status" "$rc" 0
}

# snap_start DIR MEMINST: a new case ($why empty): tests/targets/snap_wait
# run in DIR under MEMINST, in the background ($bg), until DIR.go is made
# (snap_finish); stdout in DIR.out, stderr in DIR.err; $pid once it says
# it (it then holds its blocks).
snap_start() {
	dir=$1 MI_MEMINST=$2
	mkdir -p "$dir"
	rm -f "$dir.go"
	(cd "$dir" && mi_x "$MI_TARGETS/snap_wait" until "$dir.go") >"$dir.out" 2>"$dir.err" &
	bg=$!
	unset MI_MEMINST
	why=
	snap_wait_line "$dir.out" '^pid ' || mi_why_add "the program did not start"
	pid=$(snap_pid_of "$dir.out")
}

# snap_finish: snap_start's program let go and waited for ($rc); it must
# exit 0 with not a line from meminst on its stderr.
snap_finish() {
	touch "$dir.go"
	wait "$bg"
	rc=$?
	snap_expect "exit status" "$rc" 0
	mi_no_complaint "$dir.err"
}

# snap_mode FILE: the permission bits, in octal (600).
snap_mode() {
	stat -c %a "$1"
}

# snap_own DB ID CLASS: "BLOCKS BYTES" of the block rows of snapshot ID
# whose type is in the class named CLASS (the target's executable).
snap_own() {
	snap_sql "$1" "SELECT count(*), coalesce(sum(b.size), 0) FROM meminst_blocks b
		JOIN type t ON t.snapshot = b.snapshot AND t.id = b.type
		JOIN class c ON c.snapshot = t.snapshot AND c.id = t.class
		WHERE b.snapshot = $2 AND c.name = '$3'"
}

# snap_own_status DB ID CLASS: "BLOCKS BYTES" current of the class CLASS
# in the status of snapshot ID (for 'status' snapshots, which have no
# block rows).
snap_own_status() {
	snap_sql "$1" "SELECT coalesce(sum(s.blocks_current), 0), coalesce(sum(s.sizes_current), 0)
		FROM status s JOIN class c ON c.snapshot = s.snapshot AND c.id = s.id
		WHERE s.snapshot = $2 AND s.kind = 'classes' AND c.name = '$3'"
}

# snap_field DB ID COLUMN: one column of the snapshot row.
snap_field() {
	snap_sql "$1" "SELECT $3 FROM snapshot WHERE id = $2"
}

# snap_mmap_row ID: an SQL condition on a status row of snapshot ID, true
# for allocator "mmap"'s, whose regions are no blocks and are in no class,
# type, thread or total (meminst(7) ALLOCATORS).
snap_mmap_row() {
	echo "(kind = 'allocators' AND id IN (SELECT id FROM allocator WHERE snapshot = $1 AND name = 'mmap'))"
}

# snap_kind_sql ID KIND EXPR JOIN: the rows where status KIND and the block
# rows grouped by EXPR disagree, as "KIND ID: status B blocks S bytes, block
# rows B S".
snap_kind_sql() {
	cat <<EOF
WITH g AS (SELECT $3 AS id, count(*) AS n, sum(b.size) AS s FROM meminst_blocks b $4
	   WHERE b.snapshot = $1 GROUP BY 1),
     st AS (SELECT id, blocks_current AS n, sizes_current AS s FROM status
	    WHERE snapshot = $1 AND kind = '$2' AND NOT $(snap_mmap_row "$1"))
SELECT '$2 ' || st.id || ': status ' || st.n || ' blocks ' || st.s || ' bytes, block rows '
	|| coalesce(g.n, 0) || ' ' || coalesce(g.s, 0)
FROM st LEFT JOIN g ON g.id = st.id
WHERE st.n != coalesce(g.n, 0) OR st.s != coalesce(g.s, 0)
UNION ALL
SELECT '$2 ' || g.id || ': ' || g.n || ' block rows, no status entry'
FROM g LEFT JOIN st ON st.id = g.id WHERE st.id IS NULL;
EOF
}

# snap_check_files FILE...: every file is a database whose snapshot 1 is
# consistent; adds a reason to $why for each one that is not, and sets
# snap_files to the number of files checked (glob patterns that matched
# nothing are skipped).
snap_check_files() {
	snap_files=0
	for scf_db in "$@"; do
		[ -f "$scf_db" ] || continue
		snap_files=$((snap_files + 1))
		scf_bad=$(snap_consistent "$scf_db" 1 | head -n 3)
		[ -z "$scf_bad" ] || mi_why_add "$(basename "$scf_db"): $scf_bad"
	done
}

# snap_consistent DB ID: prints what is inconsistent in snapshot ID (nothing
# when all is well): the snapshot row against its blocks; every kind's
# current figures added up against the total; in a 'map' snapshot, the
# total and each allocator, class, type and thread against the block rows;
# block rows naming a type, thread or allocator the snapshot does not list.
snap_consistent() {
	sc_db=$1 sc_id=$2
	sc_content=$(snap_field "$sc_db" "$sc_id" content)
	if [ -z "$sc_content" ]; then
		echo "no snapshot $sc_id in $sc_db"
		return
	fi
	snap_sql "$sc_db" "
SELECT 'snapshot row says ' || s.blocks || ' blocks ' || s.bytes || ' bytes, block rows '
	|| (SELECT count(*) FROM meminst_blocks WHERE snapshot = $sc_id) || ' '
	|| (SELECT coalesce(sum(size), 0) FROM meminst_blocks WHERE snapshot = $sc_id)
FROM snapshot s WHERE s.id = $sc_id AND (s.blocks != (SELECT count(*) FROM meminst_blocks WHERE snapshot = $sc_id)
	OR s.bytes != (SELECT coalesce(sum(size), 0) FROM meminst_blocks WHERE snapshot = $sc_id));
SELECT 'content ' || content || ' with ' || blocks || ' blocks' FROM snapshot
WHERE id = $sc_id AND content = 'status' AND blocks != 0;
SELECT 'status has ' || count(*) || ' total rows' FROM status
WHERE snapshot = $sc_id AND kind = 'total' HAVING count(*) != 1;
SELECT k.kind || ' add up to ' || k.n || ' blocks ' || k.s || ' bytes, total ' || t.blocks_current
	|| ' ' || t.sizes_current
FROM (SELECT kind, sum(blocks_current) AS n, sum(sizes_current) AS s FROM status
      WHERE snapshot = $sc_id AND kind != 'total' AND NOT $(snap_mmap_row "$sc_id") GROUP BY kind) k
JOIN status t ON t.snapshot = $sc_id AND t.kind = 'total'
WHERE k.n != t.blocks_current OR k.s != t.sizes_current;
SELECT kind || ' missing from the status' FROM (SELECT 'allocators' AS kind UNION SELECT 'classes'
	UNION SELECT 'types' UNION SELECT 'threads')
WHERE kind NOT IN (SELECT kind FROM status WHERE snapshot = $sc_id);
SELECT count(*) || ' block rows with an unknown type, thread or allocator' FROM meminst_blocks b
WHERE b.snapshot = $sc_id AND (
	NOT EXISTS (SELECT 1 FROM type t WHERE t.snapshot = $sc_id AND t.id = b.type)
	OR NOT EXISTS (SELECT 1 FROM thread h WHERE h.snapshot = $sc_id AND h.id = b.thread)
	OR NOT EXISTS (SELECT 1 FROM allocator a WHERE a.snapshot = $sc_id AND a.id = b.allocator))
HAVING count(*) > 0;"
	[ "$sc_content" = map ] || return
	snap_sql "$sc_db" "$(snap_kind_sql "$sc_id" total 0 '')
$(snap_kind_sql "$sc_id" allocators b.allocator '')
$(snap_kind_sql "$sc_id" types b.type '')
$(snap_kind_sql "$sc_id" threads b.thread '')
$(snap_kind_sql "$sc_id" classes t.class 'JOIN type t ON t.snapshot = b.snapshot AND t.id = b.type')"
}

# snap_check_consistent DB ID...: adds a reason to $why for each snapshot
# that is not consistent, (the first three problems of each).
snap_check_consistent() {
	scc_db=$1
	shift
	for scc_id in "$@"; do
		snap_consistent "$scc_db" "$scc_id" >"$MI_TMP/incons" 2>&1
		if [ -s "$MI_TMP/incons" ]; then
			mi_why_add "snapshot $scc_id inconsistent: $(head -n 3 "$MI_TMP/incons" | tr '\n' ';')"
		fi
	done
}

# snap_ids DB [WHERE]: the snapshot numbers, in order.
snap_ids() {
	snap_sql "$1" "SELECT id FROM snapshot ${2:+WHERE $2} ORDER BY id" | tr '\n' ' '
}

# snap_expect WHAT GOT WANTED: adds "WHAT is GOT, expected WANTED" to $why
# when they differ.
snap_expect() {
	[ "$2" = "$3" ] || mi_why_add "$1 is '$2', expected '$3'"
}
