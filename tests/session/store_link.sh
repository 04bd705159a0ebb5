# store_link.sh — under the launcher the snapshot stores run in the
# launcher (session/sess_storer.c), not in the program: SQLite's code and
# heap stay out of the program's resident set (issue 29).  Cases:
#   served     while a program stores every 10 ms, the launcher has its
#              part file open and no thread of the program has; the
#              program's libmeminst mapping has less resident than
#              SQLite's code alone would add, and its code (the functions
#              a session runs laid out together) under 300 kB; the
#              session is whole
#   fallback   with a parts directory whose socket name is too long for a
#              socket, the program stores in itself, as before
#   launcher killed  SIGKILL to the launcher in the middle of the run: the
#              program goes on as it would (its output, its status, not a
#              line on stderr), its stores go on in itself (an exit
#              snapshot in its part)
#   big store  a 200,000-block exit snapshot, leak check on, through the
#              launcher: every block stored
. "$top_srcdir/tests/session/session_lib.sh"

# wait_for COND...: until COND holds, for at most 30 s (a loaded machine)
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		sleep 0.05
	done
}

# the pids of the newest launcher run from here and its program
prog_pid() {
	pid=$(cat prog.pid 2>/dev/null) && [ -n "$pid" ] && [ -d "/proc/$pid" ]
}

# the part file of the program open in PID's descriptors
has_part() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'mem\.[0-9]*\.db$'
}

any_task_has_part() {
	for t in /proc/"$1"/task/*; do
		ls -l "$t/fd" 2>/dev/null | grep -q 'mem\.[0-9]*\.db$' && return 0
	done
	return 1
}

# --- served -----------------------------------------------------------
why=
rm -f stop prog.pid
"$LAUNCH" -q -f --mim --interval 10ms -o s.db -- \
	sh -c 'echo $$ >prog.pid; while [ ! -e stop ]; do sleep 0.05; done; echo done' >out 2>err &
launcher=$!
wait_for prog_pid || mi_why_add "the program did not start"
prog=$(cat prog.pid)
wait_for has_part "$launcher" || mi_why_add "the launcher never had the program's part open"
if any_task_has_part "$prog"; then
	mi_why_add "a thread of the program has its part file open (the store ran in the program)"
fi
# the library's resident kB: ~0.7 MB without SQLite's code run, ~1.5 MB
# with; and of it its code: the functions a session runs (forks and
# executions of the shell's commands included) are laid out together by
# alloc/libmeminst-order.ld, four 64 KiB windows of fault-around (232 kB);
# spread among the rest they were six (360 kB).  When the linker did not
# take the script (no .text.meminst_used section), the code is not checked.
rss_code=$(awk '/^[0-9a-f]+-/ { lib = /libmeminst/; code = lib && $2 == "r-xp"; next }
	lib && /^Rss:/ { s += $2; if (code) c += $2 } END { print s + 0, c + 0 }' "/proc/$prog/smaps")
rss=${rss_code% *} code=${rss_code#* }
[ "${rss:-0}" -gt 0 ] && [ "$rss" -lt 1100 ] || mi_why_add "libmeminst has $rss kB resident in the program"
if LC_ALL=C readelf -SW "$MEMINST_LIB" 2>/dev/null | grep -q '\.text\.meminst_used'; then
	[ "${code:-0}" -gt 0 ] && [ "$code" -lt 300 ] ||
		mi_why_add "libmeminst's code has $code kB resident in the program (bench/layout-order.sh not re-run?)"
fi
touch stop
wait $launcher || mi_why_add "meminst exited $?"
grep -qx done out || mi_why_add "the program's output is lost"
n=$("$INSPECT" sql s.db "SELECT count(*) FROM snapshot WHERE trigger = 'interval'" 2>>err)
e=$("$INSPECT" sql s.db "SELECT count(*) FROM snapshot WHERE trigger = 'exit'" 2>>err)
[ "${n:-0}" -ge 3 ] && [ "${e:-0}" -ge 1 ] || mi_why_add "$n interval and $e exit snapshots in the session"
mi_no_complaint err
mi_verdict "served" "$why" err stderr

# --- fallback: no socket in a directory whose name is too long --------
why=
long=d$(printf '%0100d' 0)
mkdir -p "$long"
rm -f stop prog.pid
"$LAUNCH" -q -f --mim --interval 10ms -o "$long/s.db" -- \
	sh -c 'echo $$ >prog.pid; while [ ! -e stop ]; do sleep 0.05; done; echo done' >out 2>err &
launcher=$!
wait_for prog_pid || mi_why_add "the program did not start"
prog=$(cat prog.pid)
wait_for any_task_has_part "$prog" || mi_why_add "the program never had its part open (it stores in itself here)"
touch stop
wait $launcher || mi_why_add "meminst exited $?"
e=$("$INSPECT" sql "$long/s.db" "SELECT count(*) FROM snapshot WHERE trigger = 'exit'" 2>>err)
[ "${e:-0}" -ge 1 ] || mi_why_add "no exit snapshot in the session"
mi_no_complaint err
mi_verdict "fallback" "$why" err stderr

# --- launcher killed --------------------------------------------------
why=
rm -rf stop prog.pid k .meminst-parts.*
mkdir k
(cd k && exec "$LAUNCH" -q -f --mim --interval 10ms -o s.db -- \
	sh -c 'echo $$ >../prog.pid; while [ ! -e ../stop ]; do sleep 0.05; done; echo done; exit 3' >../out 2>../err) &
launcher=$!
wait_for prog_pid || mi_why_add "the program did not start"
prog=$(cat prog.pid)
wait_for has_part "$launcher" || mi_why_add "the launcher never had the program's part open"
kill -9 $launcher
wait $launcher 2>/dev/null
touch stop
gone() { [ ! -d "/proc/$prog" ]; }
wait_for gone || mi_why_add "the program did not end"
grep -qx done out || mi_why_add "the program's output is lost"
[ ! -s err ] || mi_why_add "the program's stderr has $(head -n 1 err)"
part=$(ls k/.meminst-parts.*/mem."$prog".db 2>/dev/null)
e=$([ -n "$part" ] && sqlite3 "$part" "SELECT count(*) FROM snapshot WHERE trigger = 'exit'" 2>>err)
[ "${e:-0}" -ge 1 ] || mi_why_add "no exit snapshot in the program's part ($part)"
mi_verdict "launcher killed" "$why" err stderr

# --- a large exit snapshot --------------------------------------------
why=
cat >big.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	static void *volatile keep[200000];
	for (int i = 0; i < 200000; i++)
		keep[i] = malloc(16 + i % 64);
	printf("%d\n", 200000);
	return 0;
}
C
if gcc -O1 -o big big.c 2>cc.err; then
	"$LAUNCH" -q -f --mim --leak-check -o big.db -- ./big >out 2>err || mi_why_add "meminst exited $?"
	grep -qx 200000 out || mi_why_add "the program's output is lost"
	blocks=$("$INSPECT" sql big.db "SELECT sum(count) FROM block_chunk WHERE snapshot = (SELECT max(id) FROM snapshot WHERE trigger = 'exit')" 2>>err)
	[ "${blocks:-0}" -ge 200000 ] || mi_why_add "the exit snapshot holds ${blocks:-no} blocks"
	mi_no_complaint err
	mi_verdict "big store" "$why" err stderr
else
	echo "skip  big store: gcc cannot build it"
fi

mi_finish
