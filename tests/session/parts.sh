# parts.sh — the launcher gathering parts that are not finished when the
# program ends (python3 programs, no time profiling):
#   - a process cut short in the middle of its first snapshot store (here a
#     writer killed with a hot journal left, as exec, _exit or a signal
#     leaves it): one line saying that its first snapshot is lost, not "not
#     a meminst snapshot database" (said in both passes);
#   - a daemon (double fork) still storing into its part when the program
#     ends: the launcher waits for the store (here the daemon holds its
#     part's lock for 1 s), keeps what the daemon stored, and says once that
#     the daemon was still running and what its data lacks.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=/usr/bin/python3
mi_need "$PY" python3

# The parts directory of the run, from MEMINST's snapshot= path.
PARTS='import os; parts = os.path.dirname(os.environ["MEMINST"].split("snapshot=")[1].split(",")[0])'

why=
"$LAUNCH" -q --no-time -o cut.db -- "$PY" -c "$PARTS"'
import os, sqlite3
r, w = os.pipe()
pid = os.fork()
if pid == 0:  # a store cut short: pages written, the journal hot, no commit
    os.close(r)
    path = os.path.join(parts, "mem.%d.db" % 999999999)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA cache_size=1")
    con.execute("BEGIN")
    con.execute("CREATE TABLE snapshot(x)")
    con.executemany("INSERT INTO snapshot VALUES(?)", [(b"x" * 500,)] * 2000)
    os.write(w, b"x")
    os._exit(0)
os.close(w)
os.read(r, 1)
os.waitpid(pid, 0)
print("journal", os.path.exists(os.path.join(parts, "mem.999999999.db-journal")))' >cut.out 2>err
snap_expect "exit status" "$?" 0
snap_expect "program output" "$(cat cut.out)" "journal True"
n=$(grep -c 'mem.999999999.db: process 999999999 left no complete snapshot: it exec.d, ended or was killed while storing its first one, which is lost$' err)
snap_expect "lines about the cut part" "$n" 1
grep -q 'not a meminst snapshot database' err && mi_why_add "the cut part is called foreign"
snap_expect "the program's exit snapshot" \
	"$(snap_sql cut.db "SELECT count(*) FROM snapshot WHERE trigger = 'exit'")" 2
mi_verdict "a part whose first store was cut short: one line saying so" "$why" err stderr

why=
# The daemon: a python3 started by a double fork and exec (the library starts
# afresh in it, with its interval snapshots); argv: the part, the pipe's fd.
DAEMON='
import os, sqlite3, sys, time
path, w = sys.argv[1] % os.getpid(), int(sys.argv[2])
for i in range(400):  # its first interval snapshots, stored by the library
    try:
        if sqlite3.connect(path).execute("SELECT count(*) FROM snapshot").fetchone()[0] > 1:
            break
    except sqlite3.Error:
        pass
    time.sleep(0.05)
con = sqlite3.connect(path, isolation_level=None, timeout=30)
con.execute("BEGIN EXCLUSIVE")  # a store in progress, as the launcher collects
os.write(w, b"%d\n" % os.getpid())
time.sleep(1)
con.execute("ROLLBACK")
time.sleep(4)'
"$LAUNCH" -q --no-time --interval=50ms -o daemon.db -- "$PY" -c "$PARTS"'
import os, sys
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(r)
        os.set_inheritable(w, True)
        os.execv(sys.executable, [sys.executable, "-c", sys.argv[1], os.path.join(parts, "mem.%d.db"), str(w)])
    os._exit(0)
os.close(w)
print(os.read(r, 20).decode().strip())' "$DAEMON" >daemon.out 2>err
snap_expect "exit status" "$?" 0
dpid=$(cat daemon.out)
[ -n "$dpid" ] || mi_why_add "no daemon pid"
grep -q 'not a meminst snapshot database' err && mi_why_add "the daemon's part is called foreign"
n=$(grep -c "^meminst: process $dpid (python3) was still running when the session was written (a daemon, or a child the program did not wait for): what it stored until then is kept; its exit snapshot is missing\$" err)
snap_expect "lines about the daemon" "$n" 1
kept=$(snap_sql daemon.db "SELECT count(*) > 0 FROM snapshot WHERE pid = ${dpid:-0}")
snap_expect "the daemon's snapshots kept" "$kept" 1
mi_verdict "a daemon storing when the program ends: waited for, kept, said once" "$why" err stderr
while kill -0 "${dpid:-0}" 2>/dev/null; do sleep 0.2; done # the daemon ends within 5 s
mi_finish
