# readers.sh — what inspect's reading commands do with hostile inputs:
#   - a FIFO is refused at once by analyse, profile, report, export and
#     html (one line, status 3), never read (which would wait for a writer);
#   - SQLite's error text from a crafted file (a schema entry whose name
#     holds a terminal escape and a newline) reaches the terminal on one
#     line, the controls written as \xNN;
#   - a session another process holds locked is said to be locked, not
#     taken for something else;
#   - a block no process can have (size -1, one that overlaps the block
#     before) is reported as damage with the block, not added up (a size of
#     -1 printed as 16 EiB and holes then found none);
#   - so is a snapshot row no writer makes (a header size that is text or
#     negative, negative blocks), rather than its figures printed, and a
#     session's run row no meminst writes (report, html).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

I=$top_builddir/inspect/inspect
PY=/usr/bin/python3
mi_need "$PY" python3
cd "$MI_TMP" || exit 99

# one_line LABEL WANT-RC TEXT CMD...: CMD exits WANT-RC within 60 s with one
# line on stderr holding TEXT and no escape byte.
one_line() {
	label=$1 want=$2 text=$3
	shift 3
	why=
	timeout 60 "$@" >out 2>err </dev/null
	rc=$?
	snap_expect "exit status" "$rc" "$want"
	snap_expect "lines on stderr" "$(wc -l <err)" 1
	grep -q -F -- "$text" err || mi_why_add "no \"$text\" on stderr"
	[ "$(tr -cd '\033' <err | wc -c)" -eq 0 ] || mi_why_add "an escape byte reached stderr"
	mi_verdict "$label" "$why" err stderr
}

mkfifo fifo
for cmd in analyse profile report "export --format folded" "html -o x.html"; do
	# shellcheck disable=SC2086
	one_line "$cmd: a FIFO is refused, not read" 3 "fifo: not a regular file" "$I" $cmd fifo
done

"$PY" - <<'PY'
import sqlite3
c = sqlite3.connect("evil.db")
c.execute("PRAGMA application_id=%d" % 0x4d454d49)
c.execute("PRAGMA user_version=2")
c.execute("CREATE TABLE t(a)")
c.commit()
c.execute("PRAGMA writable_schema=1")
c.execute("UPDATE sqlite_schema SET name=?, sql=? WHERE name='t'",
          ("\x1b[31mEVIL\nsecond line", "CREATE TABLE oops garbage"))
c.commit()
PY
for cmd in status report top list; do
	one_line "$cmd: SQLite's message on one line, escaped" 3 '\x1b[31mEVIL\nsecond line' "$I" $cmd evil.db
done
one_line "sql: SQLite's message on one line, escaped" 3 '\x1b[31mEVIL\nsecond line' "$I" sql evil.db 'SELECT 1'

for damage in "size = -1:an impossible size" "size = 100000:it overlaps the block before it"; do
	cp "$top_srcdir/tests/inspect/fixtures/v1.db" bad.db && chmod u+w bad.db
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect("bad.db")
c.execute("UPDATE block SET " + sys.argv[1] + " WHERE snapshot = 2 AND addr = "
          "(SELECT min(addr) FROM block WHERE snapshot = 2)")
c.commit()' "${damage%%:*}"
	for cmd in holes sum top descr; do
		one_line "$cmd: block ${damage%%:*} is damage" 3 "snapshot 2: the block at 0x" "$I" $cmd bad.db --snapshot 2
		[ "$why" ] || grep -q "is damaged (${damage#*:})" err || mi_fail "$cmd: ${damage%%:*} not named" "" err stderr
	done
done

# a snapshot row no writer makes: a number of another type, a header size
# no mode has (the figures were printed from it: blocks 0 and a header of
# 0 B, or 16 EiB in headers)
for damage in "header_size = 'zz':header_size is not an integer" "header_size = -8:header_size out of range" \
	"blocks = -5:negative blocks or bytes"; do
	cp "$top_srcdir/tests/inspect/fixtures/v1.db" bad.db && chmod u+w bad.db
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect("bad.db")
c.execute("UPDATE snapshot SET " + sys.argv[1])
c.commit()' "${damage%%:*}"
	cmds="list holes sum header-size"
	case $damage in blocks*) cmds="list holes sum" ;; esac # header-size: the status snapshot's
	for cmd in $cmds; do
		one_line "$cmd: snapshot ${damage%%:*} is damage" 3 "is damaged (${damage#*:})" "$I" $cmd bad.db
	done
done

MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" -q -o s.db -- "$PY" -c 'print(1)' >/dev/null 2>&1 ||
	mi_why_add "the session run failed"
# a run row no meminst writes (it was printed: a duration of -5 ns, an exit
# code 'abc' as 0, signal 999, a mode of 'bogus')
for damage in "duration_ns = -5:duration_ns" "exit_code = NULL, exit_signal = 999:exit_signal" \
	"exit_code = 'abc':exit_code" "mode = 'bogus':mode" "DELETE:not one run row"; do
	cp s.db bad.db
	"$PY" -c 'import sqlite3, sys; c = sqlite3.connect("bad.db")
c.execute("DELETE FROM session_run" if sys.argv[1] == "DELETE" else "UPDATE session_run SET " + sys.argv[1])
c.commit()' "${damage%%:*}"
	reason=${damage#*:}
	for cmd in report "html -o bad.html"; do
		rm -f bad.html
		# shellcheck disable=SC2086
		one_line "$cmd: run ${damage%%:*} is damage" 3 "the session's run is damaged ($reason)" "$I" $cmd bad.db
	done
done

# the locker holds the lock until its stdin (a FIFO we keep open) ends
mkfifo lockfifo
exec 8<>lockfifo
"$PY" -c '
import sqlite3, sys
c = sqlite3.connect("s.db", isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()' >lock.out <lockfifo 2>&1 8>&- &
locker=$!
snap_wait_line lock.out '^locked' || mi_why_add "the lock was not taken"
for cmd in analyse report "export --format folded"; do
	# shellcheck disable=SC2086
	one_line "$cmd: a locked session is said to be locked" 3 "s.db: database is locked" "$I" $cmd s.db
done
exec 8>&-
wait "$locker"
mi_finish
