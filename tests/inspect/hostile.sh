#!/bin/sh
# hostile.sh — files built to harm a reader, given to every reading command:
#   - a snapshot table that is a view (an endless recursive one hung
#     inspect analyse), a trigger, a virtual table: refused, naming it;
#   - status figures that are text, -5, 1e300, NULL or there twice: refused,
#     naming the table, the row and the column (they printed as figures);
#   - a file name, a stored name and an argument holding a newline, an ESC
#     or another control byte: every line on stderr stays one line with no
#     control byte, and --csv writes none;
#   - a store killed in the very first transaction (an empty file beside a
#     journal): the journal named, and left as it was;
#   - inspect sql: VACUUM INTO, ATTACH, pragmas that set, fts3_tokenizer,
#     load_extension refused; an endless query stopped by --time-limit, a
#     greedy one by --memory-limit; no file created.
# Each: one line on stderr, exit status 3, nothing on stdout, every file
# unchanged, within 60 s.
. "$top_srcdir/tests/inspect/lib.sh"
it_have_python || { echo "skip  python3 is needed to build the files"; exit 77; }

it_fixture basic
cd "$IT_DB" || exit 99
python3 - <<'PY' || exit 99
import shutil, sqlite3, os, signal
def variant(name, *sql):
    shutil.copy("basic.db", name)
    c = sqlite3.connect(name)
    for q in sql:
        c.execute(q)
    c.commit()
    c.close()
cols = ("id, content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, time_ns, "
        "elapsed_ns, pause_ns, seq, blocks, bytes")
variant("view.db", "ALTER TABLE snapshot RENAME TO snap0",
        "CREATE VIEW snapshot AS SELECT * FROM snap0")
variant("recursive.db", "ALTER TABLE snapshot RENAME TO snap0",
        "CREATE VIEW snapshot AS WITH RECURSIVE r(%s) AS (SELECT * FROM snap0 UNION ALL SELECT id + 1000, "
        "content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, time_ns, elapsed_ns, "
        "pause_ns, seq, blocks, bytes FROM r) SELECT * FROM r" % cols)
variant("trigger.db", "CREATE TRIGGER t AFTER INSERT ON meminst_meta BEGIN SELECT 1; END")
variant("virtual.db", "ALTER TABLE type RENAME TO type0",
        "CREATE VIRTUAL TABLE type USING fts5(snapshot, id, name, class, site)")
variant("text.db", "UPDATE status SET sizes_current = 'abc' WHERE kind = 'total'")
variant("negative.db", "UPDATE status SET blocks_current = -5 WHERE kind = 'total'")
variant("huge.db", "UPDATE status SET sizes_max_ever = 1e300 WHERE kind = 'total'")
loose = ["ALTER TABLE status RENAME TO status0",
         "CREATE TABLE status(snapshot, kind, id, sizes_current, sizes_max_since_last, sizes_max_ever, "
         "blocks_current, blocks_max_since_last, blocks_max_ever)",
         "INSERT INTO status SELECT * FROM status0", "DROP TABLE status0"]
variant("null.db", *loose, "UPDATE status SET sizes_current = NULL WHERE kind = 'total'")
variant("twice.db", *loose, "INSERT INTO status SELECT * FROM status WHERE kind = 'total' LIMIT 1")
variant("typename.db", "UPDATE type SET name = 'x' || char(27) || '[31mred' || char(10) || 'y' || "
        "char(7) WHERE id = 1")
# a store killed in its first transaction: the schema written to the
# journal's pages in the cache only, the file still empty
if os.fork() == 0:
    c = sqlite3.connect("killed.db", isolation_level=None)
    c.execute("BEGIN")
    c.execute("PRAGMA application_id = %d" % 0x4d454d49)
    c.execute("CREATE TABLE t(a)")
    c.execute("INSERT INTO t VALUES(zeroblob(100000))")
    os.kill(os.getpid(), signal.SIGKILL)
os.wait()
PY
[ -s killed.db-journal ] || { echo "error: the killed store left no journal"; ls -la; exit 99; }
cp basic.db "$(printf 'new\nline\033[31m.db')"

# Commands and their arguments; FILE is replaced by the database.
commands='list FILE
holes FILE
limits FILE
sum FILE
descr FILE
top FILE
diff FILE
status FILE
timeline FILE
report FILE
types FILE
type FILE 1
class FILE 1
allocator FILE 1
header-size FILE
sql FILE SELECT(1)
analyse FILE
profile FILE
export --format folded -o - FILE
html -o out.html FILE'

# refused DB TEXT: every command on DB exits 3 with one line holding TEXT
# and no control byte, nothing on stdout, no file changed or created.
refused() {
	db=$1 text=$2
	while IFS= read -r line; do
		set -f
		set --
		for w in $line; do
			[ "$w" = FILE ] && w=$db
			set -- "$@" "$w"
		done
		set +f
		case "$SNAPSHOT_ONLY$1" in # a snapshot file is not a session: said so
		1analyse|1profile|1export|1html) continue ;;
		esac
		before=$(it_sum "$IT_DB/basic.db")
		(cd "$IT_DB" && timeout 60 "$IT_INSPECT" "$@") >"$IT_TMP/out" 2>"$IT_TMP/err"
		rc=$?
		label="inspect $*"
		if [ $rc -ne 3 ]; then
			it_fail "$label: exit $rc, not 3" "$IT_TMP/err"
		elif [ "$(wc -l <"$IT_TMP/err")" -ne 1 ] || ! grep -qF -- "$text" "$IT_TMP/err"; then
			echo "wanted one line with: $text" >>"$IT_TMP/err"
			it_fail "$label: the message" "$IT_TMP/err"
		elif [ "$(tr -d '\n' <"$IT_TMP/err" | tr -d '\040-\176\200-\377' | wc -c)" -ne 0 ]; then
			it_fail "$label: a control byte on stderr" "$IT_TMP/err"
		elif [ -s "$IT_TMP/out" ] || [ -e "$IT_DB/out.html" ]; then
			it_fail "$label: output" "$IT_TMP/out"
		elif [ "$before" != "$(it_sum "$IT_DB/basic.db")" ]; then
			it_fail "$label: a file changed or appeared"
		else
			it_ok "$label"
		fi
	done <<EOF
$commands
EOF
}

# The same schemas in a session the launcher wrote, for the commands that
# read sessions (analyse, profile, export, html) as well.
SESSION_DONE=
launcher=$top_builddir/session/meminst known=$top_builddir/tests/session/known
if [ -x "$launcher" ] && [ -x "$known" ]; then
	MEMINST_LIBRARY=$top_builddir/alloc/.libs/libmeminst.so "$launcher" -q --mim -o session.db -- "$known" \
		>/dev/null 2>&1 && python3 - <<'PY' && SESSION_DONE=1
import shutil, sqlite3
cols = ("id, content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, time_ns, "
        "elapsed_ns, pause_ns, seq, blocks, bytes")
for name, sql in (("sview.db", ["ALTER TABLE snapshot RENAME TO snap0",
        "CREATE VIEW snapshot AS WITH RECURSIVE r(%s) AS (SELECT * FROM snap0 UNION ALL SELECT id + 1000, "
        "content, trigger, pid, ppid, exe, cmdline, mode, backend, header_size, time_ns, elapsed_ns, "
        "pause_ns, seq, blocks, bytes FROM r) SELECT * FROM r" % cols]),
        ("strigger.db", ["CREATE TRIGGER t AFTER INSERT ON session_run BEGIN SELECT 1; END"])):
    shutil.copy("session.db", name)
    c = sqlite3.connect(name)
    for q in sql:
        c.execute(q)
    c.commit()
    c.close()
PY
fi
SNAPSHOT_ONLY=
if [ "$SESSION_DONE" ]; then
	refused sview.db "sview.db: not a database meminst wrote ('snapshot' is a view"
	refused strigger.db "strigger.db: not a database meminst wrote ('t' is a trigger"
else
	echo "skip  sessions: the launcher or tests/session/known is not built"
fi
SNAPSHOT_ONLY=1
refused view.db "view.db: not a database meminst wrote ('snapshot' is a view"
refused recursive.db "recursive.db: not a database meminst wrote ('snapshot' is a view"
refused trigger.db "trigger.db: not a database meminst wrote ('t' is a trigger"
refused virtual.db "virtual.db: not a database meminst wrote ('type' is a virtual table"
refused text.db "text.db: table status, row (snapshot 1, kind 'total', id 0): sizes_current holds a value of type text, not an integer"
refused negative.db "negative.db: table status, row (snapshot 1, kind 'total', id 0): blocks_current is negative (-5)"
refused huge.db "huge.db: table status, row (snapshot 1, kind 'total', id 0): sizes_max_ever holds a value of type real"
refused null.db "null.db: table status, row (snapshot 1, kind 'total', id 0): sizes_current is NULL"
refused twice.db "twice.db: table status, row (snapshot 1, kind 'total', id 0): the row is there twice"
journal=$(it_sum "$IT_DB/killed.db-journal")
refused killed.db "killed.db: a store was interrupted (hot journal killed.db-journal); the file holds no complete snapshot"
[ "$journal" = "$(it_sum "$IT_DB/killed.db-journal")" ] && it_ok "the journal is left as it was" \
	|| it_fail "the journal was changed or removed"

# Names: a file name, a stored name and an argument with controls.
refused "$(printf 'nosuch\033[2J\n.db')" 'nosuch\x1b[2J\n.db: No such file or directory'
it_run holes "$(printf 'new\nline\033[31m.db')" --snapshot 99
[ $IT_RC -eq 1 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && grep -qF 'new\nline\x1b[31m.db: no snapshot 99' "$IT_TMP/err" \
	&& it_ok "a file name with a newline and an ESC: one escaped line" || it_fail "a file name: exit $IT_RC" "$IT_TMP/err"
it_run sum basic.db --type "$(printf 'a\033]0;title\007b')"
[ $IT_RC -eq 1 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && grep -qF "no type 'a\\x1b]0;title\\x07b'" "$IT_TMP/err" \
	&& it_ok "an argument with an escape sequence: echoed escaped" || it_fail "an argument: exit $IT_RC" "$IT_TMP/err"
for fmt in "" --csv; do
	it_run types typename.db $fmt
	if [ $IT_RC -eq 0 ] && ! tr -d '\n' <"$IT_TMP/out" | grep -q '[[:cntrl:]]' && grep -qF 'x\x1b[31mred\ny\x07' "$IT_TMP/out"; then
		it_ok "types $fmt: a stored name's controls written as \\xNN"
	else
		it_fail "types $fmt: the stored name (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
	fi
done

# inspect sql: nothing but reading.
sql_refused() {
	label=$1 text=$2
	shift 2
	before=$(it_sum "$IT_DB/basic.db")
	(cd "$IT_DB" && timeout 60 "$IT_INSPECT" sql "$@") >"$IT_TMP/out" 2>"$IT_TMP/err"
	rc=$?
	if [ $rc -eq 3 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] && grep -qF -- "$text" "$IT_TMP/err" &&
		[ ! -s "$IT_TMP/out" ] && [ "$before" = "$(it_sum "$IT_DB/basic.db")" ]; then
		it_ok "sql: $label"
	else
		echo "exit $rc; wanted one line with: $text" >>"$IT_TMP/err"
		it_fail "sql: $label" "$IT_TMP/err" "$IT_TMP/out"
	fi
}
sql_refused "VACUUM INTO" "refused (a statement that writes" basic.db "VACUUM INTO 'copy.db'"
sql_refused "ATTACH of a new file" "refused (ATTACH" basic.db "ATTACH 'new.db' AS n"
sql_refused "a pragma that sets" "refused (a pragma that sets or does something: journal_mode" basic.db \
	"PRAGMA journal_mode = WAL"
sql_refused "fts3_tokenizer" "refused (a function that hands out addresses or loads code: fts3_tokenizer" \
	basic.db "SELECT hex(fts3_tokenizer('simple'))"
sql_refused "load_extension" "load_extension" basic.db "SELECT load_extension('x')"
sql_refused "an endless query" "more than 1 s of CPU time (--time-limit)" --time-limit 1s basic.db \
	"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
sql_refused "a greedy query" "needs more than 16 MiB of memory (--memory-limit)" --memory-limit 16M basic.db \
	"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 100000) SELECT length(group_concat(hex(randomblob(200)))) FROM r"
[ ! -e "$IT_DB/copy.db" ] && [ ! -e "$IT_DB/new.db" ] && it_ok "sql: no file created" || it_fail "sql created a file"
it_run sql basic.db "PRAGMA table_info(status)"
[ $IT_RC -eq 0 ] && grep -q 'sizes_current' "$IT_TMP/out" && it_ok "sql: a pragma that reads still answers" \
	|| it_fail "sql: PRAGMA table_info (exit $IT_RC)" "$IT_TMP/err"
it_finish
