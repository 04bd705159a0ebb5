#!/bin/sh
# bad_input.sh — every kind of bad input gives one clear line on stderr,
# the exit status inspect(1) documents, nothing on stdout, and leaves the
# file as it was (same checksum, nothing created beside it).
. "$top_srcdir/tests/inspect/lib.sh"

it_fixture basic
"$IT_MKFIXTURE" --app-id 0x12345678 "$IT_DB/other.db" "$IT_FIXTURES/basic.sql" || exit 99
"$IT_MKFIXTURE" --user-version 4 "$IT_DB/newer.db" "$IT_FIXTURES/basic.sql" || exit 99
"$IT_MKFIXTURE" --no-schema "$IT_DB/bare.db" || exit 99
: >"$IT_DB/empty.db"
printf 'just some text, not a database\n%.0s' 1 2 3 4 5 6 7 8 9 10 >"$IT_DB/text.db"
size=$(wc -c <"$IT_DB/basic.db")
head -c $((size / 2)) "$IT_DB/basic.db" >"$IT_DB/cut.db"
cp "$IT_DB/basic.db" "$IT_DB/junk.db"
# Overwrite the middle of pages 3 and 6 (their cell pointers and content).
for page in 2 5; do
	dd if=/dev/zero bs=1 count=600 seek=$((page * 4096 + 8)) of="$IT_DB/junk.db" conv=notrunc 2>/dev/null
	printf 'garbage garbage garbage garbage garbage garbage garbage' |
		dd bs=1 seek=$((page * 4096 + 2000)) of="$IT_DB/junk.db" conv=notrunc 2>/dev/null
done
mkdir "$IT_DB/dir.db"
cp "$IT_DB/basic.db" "$IT_DB/hot.db"
"$IT_MKFIXTURE" --hot "$IT_DB/hot.db"
[ -s "$IT_DB/hot.db-journal" ] || { echo "error: mkfixture --hot left no journal"; exit 99; }

# expect STATUS STDERR-LINE ARGS...: inspect ARGS exits with STATUS and
# prints exactly STDERR-LINE (a grep -E pattern for the whole line) and
# nothing on stdout; every database file is unchanged.
expect() {
	want_rc=$1 want_err=$2
	shift 2
	before=$(for f in "$IT_DB"/*.db*; do it_sum "$f"; done)
	it_run "$@"
	after=$(for f in "$IT_DB"/*.db*; do it_sum "$f"; done)
	label="inspect $*: exit $want_rc"
	if [ $IT_RC -ne "$want_rc" ]; then
		echo "exit status $IT_RC" >>"$IT_TMP/err"
		it_fail "$label" "$IT_TMP/err"
	elif [ "$(wc -l <"$IT_TMP/err")" -ne 1 ] || ! grep -Eqx -- "$want_err" "$IT_TMP/err"; then
		echo "wanted one line matching: $want_err" >>"$IT_TMP/err"
		it_fail "$label: the message" "$IT_TMP/err"
	elif [ -s "$IT_TMP/out" ]; then
		it_fail "$label: output on stdout" "$IT_TMP/out"
	elif [ "$before" != "$after" ]; then
		it_fail "$label: a file changed or appeared"
	else
		it_ok "$label"
	fi
}

# ---- exit 3: unreadable or invalid databases ------------------------------
expect 3 'inspect: nosuch\.db: No such file or directory' holes nosuch.db
[ -e "$IT_DB/nosuch.db" ] && it_fail "a missing file was created"
expect 3 'inspect: dir\.db: is a directory, not a snapshot database' sum dir.db
expect 3 'inspect: text\.db: not an SQLite database' holes text.db
expect 3 'inspect: empty\.db: an empty file: no snapshot was stored in it \(a process that was writing its first one stopped, or it is still writing\)' list empty.db
expect 3 'inspect: other\.db: not a meminst snapshot database \(application_id 0x12345678, expected 0x4d454d49\)' status other.db
expect 3 'inspect: newer\.db: written by a newer meminst \(schema 4, this inspect reads 1 up to 3\)' descr newer.db
expect 3 "inspect: bare\\.db: not a valid snapshot database \\(no table 'meminst_meta'\\)" types bare.db
expect 3 'inspect: cut\.db: the database is damaged \(.*\)' holes cut.db
expect 3 'inspect: junk\.db: the database is damaged \(.*\)' limits junk.db
expect 3 'inspect: junk\.db: the database is damaged \(.*\)' diff basic.db junk.db
expect 3 "inspect: hot\\.db: an interrupted write left a hot journal beside it; open it once read-write \\(sqlite3 FILE 'PRAGMA quick_check'\\) to roll that back" list hot.db
[ -s "$IT_DB/hot.db-journal" ] || it_fail "the hot journal was rolled back or removed"
if [ "$(id -u)" != 0 ]; then
	cp "$IT_DB/basic.db" "$IT_DB/locked.db" && chmod 000 "$IT_DB/locked.db"
	expect 3 'inspect: locked\.db: Permission denied' holes locked.db
	chmod 644 "$IT_DB/locked.db"
else
	echo "skip  unreadable file: running as root"
fi

# ---- exit 1: what was asked for does not exist -----------------------------
expect 1 'inspect: basic\.db: no snapshot 99 \(the file has 3 snapshots, numbered 1 to 3\)' holes basic.db --snapshot 99
expect 1 "inspect: basic\\.db: snapshot 2 holds 'status' only, not a block map" descr basic.db --snapshot 2
expect 1 "inspect: basic\\.db: snapshot 3 has no type 'nosuch'" sum basic.db --type nosuch
expect 1 "inspect: basic\\.db: snapshot 1 has no thread '7'" top basic.db --snapshot 1 --thread 7
expect 1 'inspect: basic\.db: no map snapshot before 1 to compare with' diff basic.db --to 1
it_run type basic.db 42
if [ $IT_RC -eq 1 ] && [ "$(cat "$IT_TMP/out")" = invalid_type ] && [ ! -s "$IT_TMP/err" ]; then
	it_ok "inspect type basic.db 42: invalid_type, exit 1"
else
	it_fail "inspect type basic.db 42: invalid_type, exit 1 (got $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi

# ---- exit 2: usage ------------------------------------------------------------
expect 2 "inspect: unknown command 'frobnicate' \\(see 'inspect --help'\\)" frobnicate basic.db
expect 2 "inspect: no command \\(see 'inspect --help'\\)"
expect 2 "inspect: unknown command 'repot' \\(did you mean 'report'\\?\\)" repot basic.db
expect 2 "inspect: unknown command 'hloes' \\(did you mean 'holes'\\?\\)" hloes basic.db
expect 2 "inspect: top: unknown option '--lmit' \\(did you mean '--limit'\\?\\) \\(see 'inspect top --help'\\)" top --lmit=3 basic.db
expect 2 "inspect: analyse: unknown option '--stlye' \\(did you mean '--style'\\?\\) \\(see 'inspect analyse --help'\\)" analyse --stlye flat basic.db
expect 2 "inspect: holes: unknown option '--frob' \\(see 'inspect holes --help'\\)" holes --frob basic.db
expect 2 "inspect: holes: unknown option '-x' \\(see 'inspect holes --help'\\)" holes -x basic.db
expect 2 "inspect: sum: option '--min' does not apply here \\(see 'inspect sum --help'\\)" sum --min 4 basic.db
expect 2 "inspect: holes: --min needs a size like 4096, 4K or 1MiB, not '1.5M' \\(see 'inspect holes --help'\\)" holes basic.db --min 1.5M
expect 2 "inspect: list: --snapshot needs a number above 0, not 'last' \\(see 'inspect list --help'\\)" list basic.db --snapshot last
expect 2 "inspect: holes: option '--snapshot' needs a value \\(see 'inspect holes --help'\\)" holes basic.db --snapshot
expect 2 "inspect: holes: missing argument: inspect holes \\[options\\] DB \\(see 'inspect holes --help'\\)" holes
expect 2 "inspect: holes: unexpected argument 'more.db' \\(see 'inspect holes --help'\\)" holes basic.db more.db
expect 2 "inspect: top: --by takes type, class, thread, site, calls, allocated, temporary, peak or leaked, not 'size' \\(see 'inspect top --help'\\)" top basic.db --by size
expect 2 "inspect: holes: --table takes snapshot, summary, segments, between, histogram or holes, not 'nope' \\(see 'inspect holes --help'\\)" holes basic.db --table nope

# ---- help and version ------------------------------------------------------
it_run --help
if [ $IT_RC -eq 0 ] && grep -q '^  holes ' "$IT_TMP/out" && [ ! -s "$IT_TMP/err" ]; then
	it_ok "inspect --help"
else
	it_fail "inspect --help" "$IT_TMP/out" "$IT_TMP/err"
fi
for cmd in list holes limits sum descr top diff status types type class allocator header-size snapshot; do
	it_run "$cmd" --help
	if [ $IT_RC -eq 0 ] && grep -q "^Usage: inspect $cmd " "$IT_TMP/out"; then
		it_ok "inspect $cmd --help"
	else
		it_fail "inspect $cmd --help" "$IT_TMP/out" "$IT_TMP/err"
	fi
done
it_run --version
if [ $IT_RC -eq 0 ] && grep -Eq '^inspect \(meminst\) [0-9]' "$IT_TMP/out"; then
	it_ok "inspect --version"
else
	it_fail "inspect --version" "$IT_TMP/out" "$IT_TMP/err"
fi
it_finish
