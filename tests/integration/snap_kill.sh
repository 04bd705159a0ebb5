# snap_kill.sh — a program killed (SIGKILL) in the middle of storing a
# snapshot leaves a file with every snapshot stored before, intact: each
# store is one SQLite transaction.  tests/targets/snap_kill stores map
# snapshots of 20,000 blocks back to back; the test kills it while a
# store's journal is beside the file (a transaction under way), after at
# least two snapshots were complete.  Then inspect reads the file, or, if
# the writer had already changed pages of it, says in one line that the
# first read-write open must roll the interrupted transaction back (inspect
# never writes); after that open, inspect and the extension read the
# complete snapshots, each consistent (snap_lib.sh), each with its 20,000
# blocks of 48 bytes, and nothing of the interrupted one.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PROG=$MI_TARGETS/snap_kill
INSPECT=$top_builddir/inspect/inspect
N=20000
T=$MI_TMP/kill
mkdir -p "$T"

# kill_during DB: start snap_kill, SIGKILL it during a store after two
# complete ones; $stored is the last number it reported.  Returns 1 when
# no kill landed inside a transaction.
kill_during() {
	rm -f "$1" "$1-journal"
	# not through mi_xl: its timeout wrapper would take the SIGKILL
	env MEMINST=mim "$PROG" "$1" $N >"$T/out" 2>"$T/err" &
	pid=$!
	tries=0
	while [ $tries -lt 4000 ]; do
		tries=$((tries + 1))
		stored=$(tail -n 1 "$T/out" 2>/dev/null | sed -n 's/^stored //p')
		if [ "${stored:-0}" -ge 2 ] && [ -e "$1-journal" ]; then
			kill -KILL $pid 2>/dev/null
			wait $pid 2>/dev/null
			stored=$(tail -n 1 "$T/out" | sed -n 's/^stored //p')
			[ -e "$1-journal" ] && return 0
			return 1
		fi
		kill -0 $pid 2>/dev/null || break
		sleep 0.01
	done
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	return 1
}

db=$T/app.db
ok= why=
for attempt in 1 2 3 4 5; do
	if kill_during "$db"; then ok=1; break; fi
done
if [ -z "$ok" ]; then
	mi_fail "SIGKILL during a snapshot" "no SIGKILL landed during a store in 5 attempts" "$T/err" stderr
	mi_finish
fi
snap_expect "at least two snapshots complete before the kill" "$([ "$stored" -ge 2 ] && echo yes)" yes

# inspect opens read-only: it reads the file, or, when the killed writer
# had already changed pages of it (a hot journal), says in one line how to
# roll that back.
"$INSPECT" list "$db" >"$T/i.out" 2>"$T/i.err"
rc=$?
if [ $rc -eq 0 ]; then
	snap_expect "inspect list: snapshots" "$(grep -c ' map ' "$T/i.out")" "$stored"
elif [ $rc -ne 3 ] || ! grep -q 'interrupted write left a hot journal' "$T/i.err"; then
	mi_why_add "inspect list after the kill: exit $rc, $(cat "$T/i.err")"
fi
# The first read-write open (as inspect's message says) rolls back.
snap_expect "quick_check after the roll-back" "$(snap_sql "$db" 'PRAGMA quick_check')" ok
snap_expect "snapshots kept: 1..stored" "$(snap_sql "$db" 'SELECT count(*), min(id), max(id) FROM snapshot')" \
	"$stored 1 $stored"
i=1
while [ $i -le "$stored" ]; do
	snap_expect "snapshot $i: blocks of 48 bytes through the extension" \
		"$(snap_sql "$db" "SELECT count(*) FROM meminst_blocks($i) WHERE size = 48")" "$N"
	snap_check_consistent "$db" $i
	i=$((i + 1))
done
snap_expect "no chunk of an interrupted snapshot" \
	"$(snap_sql "$db" "SELECT count(*) FROM block_chunk WHERE snapshot NOT IN (SELECT id FROM snapshot)")" 0
"$INSPECT" sum "$db" --snapshot "$stored" >"$T/s.out" 2>"$T/s.err"
snap_expect "inspect sum on the last complete snapshot: exit 0" "$?" 0
"$INSPECT" holes "$db" --snapshot 1 >/dev/null 2>"$T/h.err"
snap_expect "inspect holes on snapshot 1: exit 0" "$?" 0
mi_verdict "SIGKILL during snapshot $((stored + 1)): snapshots 1..$stored intact" "$why" "$T/i.err" inspect
mi_finish
