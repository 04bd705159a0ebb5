# snap_exit.sh — the exit snapshot of MEMINST=…,snapshot=PATH, read back
# with sqlite3, for each backend:
#   - tests/targets/snap_live leaves known blocks: the block rows of its
#     class match them exactly per allocation site (count, bytes,
#     allocator) and per thread, and every snapshot is consistent (see
#     snap_lib.sh: the status of each kind adds up to the block rows);
#   - the snapshot row: content map, trigger exit, pid, mode, backend,
#     header size; the file: mode 0600 (under umask 0), application_id
#     and user_version;
#   - a relative path is taken from the start directory although the
#     program changes directory before exiting; %p is the pid; a second
#     run adds snapshot 2 and leaves snapshot 1 as it was;
#   - files that are not ours are left byte for byte as they were, with one
#     line on stderr: a text file, an SQLite file of another application
#     (with tables, or with only its application_id or user_version set),
#     a meminst database of another schema version;
#   - a write that fails (file size limit) removes a file it created, and
#     leaves an existing database with its snapshots, and no journal;
#   - mis mode stores content 'status': no block rows, the class figures
#     from the status; snapshot_at=none stores nothing;
#   - a directory that is not there is said at start, for GNU ls too
#     (which closes stderr before the exit snapshot).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

LIVE=$MI_TARGETS/snap_live

# run_live DIR MEMINST [ARGS...]: snap_live started in DIR with umask 0, so
# that the mode of the file is the library's choice; output in DIR.out and
# DIR.err, exit status in $rc.
run_live() {
	dir=$1 MI_MEMINST=$2
	shift 2
	mkdir -p "$dir"
	(cd "$dir" && umask 0 && mi_x "$LIVE" "$@") >"$dir.out" 2>"$dir.err"
	rc=$?
	unset MI_MEMINST
}

# expect_run: exit status 0 and snap_live's output.
expect_run() {
	snap_expect "exit status" "$rc" 0
	grep -q '^group malloc ' "$dir.out" || mi_why_add "snap_live printed no figures"
}

# live_figures DB ID: the live blocks of snap_live's class, one line per
# allocation site ("BLOCKS BYTES ALLOCATOR") then per thread ("NAME
# BLOCKS BYTES"), each part sorted, in the form snap_live prints them.
live_figures() {
	snap_sql "$1" "SELECT count(*), sum(b.size), min(b.allocator)
		|| CASE WHEN min(b.allocator) != max(b.allocator) THEN '..' || max(b.allocator) ELSE '' END
		FROM meminst_blocks b JOIN type t ON t.snapshot = b.snapshot AND t.id = b.type
		JOIN class c ON c.snapshot = t.snapshot AND c.id = t.class
		WHERE b.snapshot = $2 AND c.name = 'snap_live' GROUP BY b.type" | sort
	snap_sql "$1" "SELECT h.name, count(*), sum(b.size) FROM meminst_blocks b
		JOIN type t ON t.snapshot = b.snapshot AND t.id = b.type
		JOIN class c ON c.snapshot = t.snapshot AND c.id = t.class
		JOIN thread h ON h.snapshot = b.snapshot AND h.id = b.thread
		WHERE b.snapshot = $2 AND c.name = 'snap_live' GROUP BY h.name" | sort
}

# expected_figures OUT: the same, from what snap_live printed.
expected_figures() {
	awk '$1 == "group" { print $3, $4, $5 }' "$1" | sort
	awk '$1 == "thread" { print $2, $3, $4 }' "$1" | sort
}

# check_live_map DB ID OUT: snapshot ID holds snap_live's blocks exactly,
# and its status says the same.
check_live_map() {
	live_figures "$1" "$2" >"$MI_TMP/got" 2>&1
	expected_figures "$3" >"$MI_TMP/want"
	cmp -s "$MI_TMP/got" "$MI_TMP/want" ||
		mi_why_add "blocks of snap_live: got '$(tr '\n' ';' <"$MI_TMP/got")', want '$(tr '\n' ';' <"$MI_TMP/want")'"
	want=$(awk '$1 == "group" { n += $3; s += $4 } END { print n, s }' "$3")
	snap_expect "snap_live's class in the status" "$(snap_own_status "$1" "$2" snap_live)" "$want"
	snap_check_consistent "$1" "$2"
}

# check_file DB: ours, mode 0600.
check_file() {
	[ -f "$1" ] || { mi_why_add "no file $1"; return; }
	snap_expect "mode of $(basename "$1")" "$(snap_mode "$1")" 600
	snap_expect "application_id" "$(snap_sql "$1" 'PRAGMA application_id')" "$SNAP_APP_ID"
	snap_expect "user_version" "$(snap_sql "$1" 'PRAGMA user_version')" $SNAP_VERSION
}

# foreign DIR FILE MESSAGE: FILE (already in DIR) is not ours: the run
# leaves it byte for byte, and says MESSAGE in one line.
foreign() {
	cp "$1/$2" "$MI_TMP/orig"
	run_live "$1" "mim,backend=$b,snapshot=$2"
	why=
	expect_run
	cmp -s "$1/$2" "$MI_TMP/orig" || mi_why_add "$2 was changed"
	[ ! -e "$1/$2-journal" ] || mi_why_add "a journal was left"
	want="meminst: snapshot $1/$2: $3"
	[ "$(cat "$1.err")" = "$want" ] || mi_why_add "stderr is not the one line '$want'"
	mi_verdict "$2 left untouched, $b" "$why" "$1.err" stderr
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b
	mkdir -p "$T/run/sub"

	# The exit snapshot, with the program ending in another directory.
	run_live "$T/run" "mim,backend=$b,snapshot=app.db" sub
	why=
	expect_run
	mi_no_complaint "$T/run.err"
	[ ! -e "$T/run/sub/app.db" ] || mi_why_add "the file went to the directory at exit"
	check_file "$T/run/app.db"
	pid=$(snap_pid_of "$T/run.out")
	snap_expect "snapshots" "$(snap_ids "$T/run/app.db")" "1 "
	snap_expect "snapshot 1" "$(snap_sql "$T/run/app.db" "SELECT content, trigger, pid, mode, backend,
		header_size, exe LIKE '%/snap_live' FROM snapshot WHERE id = 1")" "map exit $pid mim $b 32 1"
	check_live_map "$T/run/app.db" 1 "$T/run.out"
	mi_verdict "exit snapshot of snap_live, mim/$b" "$why" "$T/run.out" stdout \
		"$T/run.err" stderr "$MI_TMP/incons" inconsistencies

	# A second run adds snapshot 2; snapshot 1 stays as it was.
	before=$(snap_sql "$T/run/app.db" "SELECT count(*), sum(size), sum(addr % 65536) FROM meminst_blocks WHERE snapshot = 1")
	run_live "$T/run" "mim,backend=$b,snapshot=app.db"
	why=
	expect_run
	mi_no_complaint "$T/run.err"
	pid2=$(snap_pid_of "$T/run.out")
	snap_expect "snapshots" "$(snap_ids "$T/run/app.db")" "1 2 "
	snap_expect "pids" "$(snap_sql "$T/run/app.db" "SELECT group_concat(pid, ' ') FROM snapshot")" "$pid $pid2"
	snap_expect "snapshot 1" "$(snap_sql "$T/run/app.db" "SELECT count(*), sum(size), sum(addr % 65536)
		FROM meminst_blocks WHERE snapshot = 1")" "$before"
	check_live_map "$T/run/app.db" 2 "$T/run.out"
	mi_verdict "second run adds snapshot 2, mim/$b" "$why" "$T/run.err" stderr

	# %p is the pid.
	run_live "$T/pct" "mim,backend=$b,snapshot=p.%p.db"
	why=
	expect_run
	mi_no_complaint "$T/pct.err"
	pid=$(snap_pid_of "$T/pct.out")
	snap_expect "files" "$(cd "$T/pct" && echo *)" "p.$pid.db"
	check_file "$T/pct/p.$pid.db"
	snap_expect "pid in the snapshot" "$(snap_field "$T/pct/p.$pid.db" 1 pid)" "$pid"
	mi_verdict "snapshot=p.%p.db, mim/$b" "$why" "$T/pct.err" stderr

	# Files that are not ours.
	mkdir -p "$T/foreign"
	printf 'not a database\n' >"$T/foreign/text.db"
	foreign "$T/foreign" text.db "not an SQLite database; left untouched"
	sqlite3 "$T/foreign/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES(42); PRAGMA application_id = 1234;"
	foreign "$T/foreign" other.db "not a meminst snapshot database; left untouched"
	sqlite3 "$T/foreign/appid.db" "PRAGMA application_id = 1234;"
	foreign "$T/foreign" appid.db "not a meminst snapshot database; left untouched"
	sqlite3 "$T/foreign/uver.db" "PRAGMA user_version = 5;"
	foreign "$T/foreign" uver.db "not a meminst snapshot database; left untouched"
	cp "$T/run/app.db" "$T/foreign/v99.db"
	sqlite3 "$T/foreign/v99.db" "PRAGMA user_version = 99"
	foreign "$T/foreign" v99.db "schema version 99, this libmeminst writes 3; left untouched"

	# A failing write removes the file it created...
	mkdir -p "$T/limit"
	MI_MEMINST="mim,backend=$b,snapshot=new.db"
	(cd "$T/limit" && ulimit -f 16 && trap '' XFSZ && mi_x "$LIVE") >"$T/limit.out" 2>"$T/limit.err"
	rc=$?
	unset MI_MEMINST
	why=
	dir=$T/limit
	expect_run
	snap_expect "files" "$(cd "$T/limit" && echo *)" "*"
	grep -q "^meminst: snapshot $T/limit/new.db: " "$T/limit.err" || mi_why_add "no error line"
	mi_verdict "failed write removes the new file, mim/$b" "$why" "$T/limit.err" stderr

	# ...and leaves an existing database as it was.
	cp "$T/run/app.db" "$T/limit/old.db"
	kib=$(( $(stat -c %s "$T/limit/old.db") / 1024 + 4 ))
	MI_MEMINST="mim,backend=$b,snapshot=old.db"
	(cd "$T/limit" && ulimit -f "$kib" && trap '' XFSZ && mi_x "$LIVE") >"$T/limit.out" 2>"$T/limit.err"
	rc=$?
	unset MI_MEMINST
	why=
	expect_run
	snap_expect "files" "$(cd "$T/limit" && echo *)" "old.db"
	snap_expect "snapshots" "$(snap_ids "$T/limit/old.db")" "1 2 "
	snap_expect "integrity" "$(snap_sql "$T/limit/old.db" 'PRAGMA integrity_check')" ok
	grep -q "^meminst: snapshot $T/limit/old.db: " "$T/limit.err" || mi_why_add "no error line"
	mi_verdict "failed write leaves the database as it was, mim/$b" "$why" "$T/limit.err" stderr

	# mis: the status only.
	run_live "$T/mis" "mis,backend=$b,snapshot=mis.db"
	why=
	expect_run
	mi_no_complaint "$T/mis.err"
	check_file "$T/mis/mis.db"
	snap_expect "snapshot 1" "$(snap_sql "$T/mis/mis.db" "SELECT content, trigger, mode, header_size,
		blocks, (SELECT count(*) FROM meminst_blocks) FROM snapshot")" "status exit mis 16 0 0"
	want=$(awk '$1 == "group" { n += $3; s += $4 } END { print n, s }' "$T/mis.out")
	snap_expect "snap_live's class in the status" "$(snap_own_status "$T/mis/mis.db" 1 snap_live)" "$want"
	snap_check_consistent "$T/mis/mis.db" 1
	mi_verdict "mis stores the status only, $b" "$why" "$T/mis.err" stderr "$MI_TMP/incons" inconsistencies

	# snapshot_at=none: a path, no trigger, no file.
	run_live "$T/none" "mim,backend=$b,snapshot=none.db,snapshot_at=none"
	why=
	expect_run
	mi_no_complaint "$T/none.err"
	snap_expect "files" "$(cd "$T/none" && echo *)" "*"
	mi_verdict "snapshot_at=none stores nothing, mim/$b" "$why" "$T/none.err" stderr
done

# A directory that is not there is said at start: at exit the line was lost
# for a program that closes stderr in an atexit handler (GNU ls and echo:
# close_stdout), and the exit snapshot failed without a word.
why=
MI_MEMINST="mim,snapshot=$MI_TMP/no-such-dir/x.db"
mi_x /bin/ls / >/dev/null 2>"$MI_TMP/nodir.err"
snap_expect "exit status" "$?" 0
unset MI_MEMINST
grep -q "^meminst: snapshot $MI_TMP/no-such-dir/x.db: cannot create: No such file or directory" \
	"$MI_TMP/nodir.err" || mi_why_add "no line naming the path, for ls"
mi_verdict "a directory that is not there is said at start" "$why" "$MI_TMP/nodir.err" stderr
mi_finish
