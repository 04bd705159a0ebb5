# sql.sh — SQL stays a way in: the SQLite extension (meminst_blocks) in the
# real sqlite3 shell, and `inspect sql`:
#   - the same fixture written at schema 1 (a block table) and at schema 2
#     (block_chunk, encoded as libmeminst does) gives the same rows, every
#     snapshot, through the extension and through inspect sql;
#   - the first worked query of meminst-snapshot(5) answers with the
#     fixture's figures; the libmeminst-written v1.db reads too;
#   - a damaged chunk, a bad query, two statements, a write: one line on
#     stderr, exit status non-zero; the file is never changed.
. "$top_srcdir/tests/inspect/lib.sh"

EXT=$top_builddir/tools/.libs/meminst_sqlite
if ! command -v sqlite3 >/dev/null 2>&1; then
	echo "skip  sqlite3 is not installed (apt-get install sqlite3)"
	exit 77
fi
[ -f "$EXT.so" ] || { echo "error: $EXT.so not built"; exit 99; }
q() { sqlite3 -batch -cmd ".load $EXT" "$@"; }

it_fixture basic
"$IT_MKFIXTURE" --user-version 1 "$IT_DB/basic1.db" "$IT_FIXTURES/basic.sql" || exit 99
cp "$IT_FIXTURES/v1.db" "$IT_DB/v1.db" && chmod u+w "$IT_DB/v1.db" || exit 99
before=$(it_sum "$IT_DB/basic.db")

all='SELECT snapshot, addr, size, type, thread, allocator, seq FROM meminst_blocks'
q "$IT_DB/basic1.db" "$all" >"$IT_TMP/v1" 2>&1
q "$IT_DB/basic.db" "$all" >"$IT_TMP/v2" 2>&1
if [ -s "$IT_TMP/v1" ] && cmp -s "$IT_TMP/v1" "$IT_TMP/v2" && [ "$(wc -l <"$IT_TMP/v1")" -ge 10 ]; then
	it_ok "schema 1 and schema 2 files give the same $(wc -l <"$IT_TMP/v1") blocks through sqlite3"
else
	diff "$IT_TMP/v1" "$IT_TMP/v2" >"$IT_TMP/diff" 2>&1
	it_fail "sqlite3: schema 1 and 2 blocks differ" "$IT_TMP/diff" "$IT_TMP/v2"
fi
it_run sql basic.db "$all"
if [ $IT_RC -eq 0 ] && cmp -s "$IT_TMP/out" "$IT_TMP/v2" && [ ! -s "$IT_TMP/err" ]; then
	it_ok "inspect sql gives the same rows"
else
	it_fail "inspect sql rows (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi

# The first example of meminst-snapshot(5), on snapshot 1 of basic.sql:
# 7 blocks, 5364 bytes in all; type 1 holds 228 bytes.
doc='SELECT t.name, count(*) AS blocks, sum(b.size) AS bytes
  FROM meminst_blocks(1) b JOIN type t ON t.snapshot = 1 AND t.id = b.type
 GROUP BY b.type ORDER BY bytes DESC LIMIT 10;'
q -separator ' ' "$IT_DB/basic.db" "$doc" >"$IT_TMP/doc" 2>&1
tot=$(awk '{ n += $(NF-1); b += $NF } END { print n, b }' "$IT_TMP/doc")
t1=$(q -separator ' ' "$IT_DB/basic.db" "SELECT sum(size) FROM meminst_blocks(1) WHERE type = 1")
if [ "$tot" = "7 5364" ] && [ "$t1" = 228 ]; then
	it_ok "the documented query answers: 7 blocks, 5364 bytes; type 1: 228 bytes"
else
	it_fail "the documented query: '$tot' '$t1'" "$IT_TMP/doc"
fi
got=$(q "$IT_DB/v1.db" "SELECT count(*), sum(size) FROM meminst_blocks(1)" 2>&1)
[ "$got" = "212|109760" ] && it_ok "v1.db written by libmeminst at schema 1: 212 blocks, 109760 bytes" \
	|| it_fail "v1.db through the extension: $got"
got=$(q "$IT_DB/basic.db" "ATTACH '$IT_DB/v1.db' AS old; SELECT count(*) FROM meminst_blocks(2, 'old')" 2>&1)
[ "$got" = 212 ] && it_ok "meminst_blocks(N, SCHEMA) reads an attached file" || it_fail "attached: $got"

# Bad input: one line on stderr, non-zero exit, nothing written.
it_run sql basic.db "SELECT nosuch FROM meminst_blocks(1)"
[ $IT_RC -eq 2 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && grep -q 'no such column: nosuch' "$IT_TMP/err" \
	&& it_ok "a bad query: one line, exit 2" || it_fail "a bad query: exit $IT_RC" "$IT_TMP/err"
it_run sql basic.db "SELECT 1; SELECT 2"
[ $IT_RC -eq 2 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && it_ok "two statements: one line, exit 2" \
	|| it_fail "two statements: exit $IT_RC" "$IT_TMP/err"
it_run sql basic.db "DELETE FROM snapshot"
[ $IT_RC -eq 3 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && it_ok "a write is refused: one line, exit 3" \
	|| it_fail "a write: exit $IT_RC" "$IT_TMP/err"
it_run sql basic.db
[ $IT_RC -eq 2 ] && it_ok "no query: usage error" || it_fail "no query: exit $IT_RC" "$IT_TMP/err"
[ "$(it_sum "$IT_DB/basic.db")" = "$before" ] && it_ok "the file is unchanged" || it_fail "the file changed"

cp "$IT_DB/basic.db" "$IT_DB/cut.db"
sqlite3 "$IT_DB/cut.db" "UPDATE block_chunk SET data = substr(data, 1, length(data) - 2) WHERE snapshot = 1" || exit 99
q "$IT_DB/cut.db" "SELECT count(*) FROM meminst_blocks(1)" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
[ $rc -ne 0 ] && grep -q 'snapshot 1: the block chunk at 0x.* is damaged (data cut short)' "$IT_TMP/err" \
	&& it_ok "sqlite3: a damaged chunk is an error naming it" || it_fail "sqlite3 on a damaged chunk: exit $rc" "$IT_TMP/err"
it_run sql cut.db "SELECT count(*) FROM meminst_blocks(1)"
[ $IT_RC -eq 3 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && grep -q 'damaged' "$IT_TMP/err" \
	&& it_ok "inspect sql: a damaged chunk, one line, exit 3" || it_fail "inspect sql damaged: exit $IT_RC" "$IT_TMP/err"
it_run sum cut.db --snapshot 1
[ $IT_RC -eq 3 ] && grep -q 'cut.db: snapshot 1: the block chunk at 0x.* is damaged' "$IT_TMP/err" \
	&& it_ok "inspect sum: a damaged chunk, exit 3" || it_fail "inspect sum damaged: exit $IT_RC" "$IT_TMP/err"
it_finish
