# snap_bigfail.sh — a store larger than SQLite's page cache that fails part
# way (the file cannot grow past the process's ulimit -f; a full disk fails
# the same way) while SQLite writes pages out of its full cache, before
# COMMIT: the file must be rolled back, not only the transaction, and the
# journal removed (a failure at COMMIT, as snap_exit.sh's small stores
# meet, was always rolled back).  For each backend, with tests/targets/close_stderr keeping
# enough blocks that the store is several MiB (about 23 bytes a block):
#   - a new file: removed, and nothing else left beside it (no -journal,
#     no -wal; only the notes file that says the failure);
#   - an existing file with two snapshots: byte for byte as it was, no
#     journal beside it, and inspect (which refuses a file with a hot
#     journal) lists its two snapshots;
#   - each time one line on stderr, "cannot write", and the program's own
#     output and exit status (the limit's SIGXFSZ is not ignored here: a
#     write of meminst's must not kill the program).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

TARGET=$MI_TARGETS/close_stderr
INSPECT=$top_builddir/inspect/inspect
BLOCKS=200000 # a store of about 4.6 MB: more than SQLite's page cache (the store's
# 64 KiB, or SQLite's default 2 MiB)
T=$MI_TMP

mi_fsize_unit # the bytes of one unit of ulimit -f

# run_limited DIR FILE BYTES: close_stderr in DIR, storing its exit snapshot
# into FILE, with the file size limited to BYTES; output in DIR.out and
# DIR.err, exit status in $rc.
run_limited() {
	MI_MEMINST="mim,backend=$b,snapshot=$2"
	(cd "$1" && ulimit -f $(($3 / mi_fsize)) && mi_x "$TARGET" $BLOCKS 0) >"$1.out" 2>"$1.err"
	rc=$?
	unset MI_MEMINST
}

# expect_failed DIR FILE: the program ran as without meminst, and meminst
# said the failed write in one line.
expect_failed() {
	snap_expect "exit status" "$rc" 0
	snap_expect "stdout" "$(cat "$1.out")" "kept $BLOCKS blocks"
	grep -q "^meminst: snapshot $1/$2: cannot write: " "$1.err" || mi_why_add "no 'cannot write' line"
	snap_expect "lines on stderr" "$(wc -l <"$1.err")" 1
}

for b in $MEMINST_BACKENDS; do
	# A new file, limited to 1 MiB: met when pages of the full cache are
	# written out, long before COMMIT (with a cache of 2 MiB too).
	d=$T/$b.new
	mkdir -p "$d"
	run_limited "$d" new.db $((1 << 20))
	why=
	expect_failed "$d" new.db
	snap_expect "files" "$(cd "$d" && echo *)" "new.db.log"
	mi_verdict "a failed store of $BLOCKS blocks leaves no file, mim/$b" "$why" "$d.err" stderr

	# An existing file with two snapshots, limited to 1 MiB more.
	d=$T/$b.old
	mkdir -p "$d"
	for i in 1 2; do
		MI_MEMINST="mim,backend=$b,snapshot=$d/old.db" mi_x "$TARGET" 1000 0 >/dev/null 2>"$d.err0" || exit 99
	done
	cp "$d/old.db" "$T/orig.db"
	run_limited "$d" old.db $(($(wc -c <"$d/old.db") + (1 << 20)))
	why=
	expect_failed "$d" old.db
	# before anything opens the file (an open rolls a hot journal back)
	snap_expect "files" "$(cd "$d" && echo *)" "old.db old.db.log"
	cmp -s "$d/old.db" "$T/orig.db" || mi_why_add "old.db was changed"
	"$INSPECT" list "$d/old.db" >"$d.list" 2>"$d.ierr" || mi_why_add "inspect list failed: $(head -n 1 "$d.ierr")"
	snap_expect "inspect list" "$(head -n 1 "$d.list")" "$d/old.db: 2 snapshots"
	mi_verdict "a failed store of $BLOCKS blocks leaves the file as it was, mim/$b" "$why" "$d.err" stderr \
		"$d.ierr" "inspect's stderr"
done
mi_finish
