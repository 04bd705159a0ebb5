# run_lines.sh — what the launcher's run says on stderr, besides errors:
#   - with -q, a note of the library (here: dlopen's RTLD_DEEPBIND flag
#     removed) is kept in the session's notes, not said; without -q it is
#     said;
#   - a child still running when the program ends (`sh -c 'sleep 1 & exit
#     0'`) has what it stored kept in the session (no part left out), and
#     says nothing after meminst has returned (its stores into the removed parts directory
#     said "cannot create" at the shell's prompt; a part made after the
#     program's own was adopted as the session collided with it: "UNIQUE
#     constraint failed: snapshot.id", its snapshots left out);
#   - a statically linked child of sh (it cannot take LD_PRELOAD): said
#     once, by its parent, and kept in the session's notes (nothing said);
#   - a full disk (a tmpfs of 64 KiB, as root) under 50 processes: each
#     failure said once for the run (it was 3 lines a process, 162 in all).
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=/usr/bin/python3
mi_need "$PY" python3
DEEP='import ctypes, os; ctypes.CDLL("libm.so.6", os.RTLD_NOW | os.RTLD_DEEPBIND)'
NOTE="dlopen(libm.so.6, RTLD_DEEPBIND): flag removed"

why=
"$LAUNCH" -q --no-time -o quiet.db -- "$PY" -c "$DEEP" >out 2>err
snap_expect "exit status" "$?" 0
grep -q '^meminst:' err && mi_why_add "said on stderr: $(grep '^meminst:' err | head -n 1)"
n=$(snap_sql quiet.db "SELECT count(*) FROM session_note WHERE line LIKE '$NOTE%'")
snap_expect "the note in the session" "$n" 1
"$LAUNCH" --no-time -o loud.db -- "$PY" -c "$DEEP" >out 2>err2
grep -q "^meminst: $NOTE" err2 || mi_why_add "without -q the note is not said"
mi_verdict "-q: a note kept in the session, not said" "$why" err stderr err2 "stderr without -q"

# The orphan: five runs (the part's collision came in two runs of three).
why=
for run in 1 2 3 4 5; do
	rm -f orphan.db orphan.pid
	"$LAUNCH" -q --interval=10ms -o orphan.db -- sh -c 'sleep 1 & echo $! >orphan.pid; exit 0' 2>err
	snap_expect "exit status" "$?" 0
	said=$(wc -c <err)
	pid=$(cat orphan.pid 2>/dev/null)
	[ -n "$pid" ] || { mi_why_add "run $run: no orphan pid"; break; }
	grep -q 'UNIQUE\|cannot be read' err && mi_why_add "run $run: $(grep 'UNIQUE\|cannot be read' err | head -n 1)"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	[ "$(wc -c <err)" = "$said" ] && continue
	mi_why_add "run $run: said after meminst returned: $(tail -c +$((said + 1)) err | head -n 1)"
	break
done
mi_verdict "a child running after the program: no part left out, no line after meminst" "$why" err stderr

# A statically linked child (ldconfig is static-pie on glibc systems): its
# parent says so before the exec, once for the run, kept in the session.
if file -L /sbin/ldconfig 2>/dev/null | grep -q 'static'; then
	why=
	"$LAUNCH" -q --no-time -o static.db -- sh -c '/sbin/ldconfig -p >/dev/null; /sbin/ldconfig -p >/dev/null' 2>err
	snap_expect "exit status" "$?" 0
	n=$(grep -c '^meminst: /sbin/ldconfig is statically linked: it runs unmeasured' err)
	snap_expect "lines on the static child" "$n" 1
	n=$(snap_sql static.db "SELECT count(*) FROM session_note WHERE line LIKE '/sbin/ldconfig is statically linked%'")
	snap_expect "in the session's notes" "$n" 1
	mi_verdict "a statically linked child: said once, kept in the session" "$why" err stderr
else
	echo "skip  a statically linked child: /sbin/ldconfig is not static here"
fi

# A full disk: root mounts a tmpfs (else the case is skipped).
if [ "$(id -u)" = 0 ] && mkdir -p full && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
	why=
	dd if=/dev/zero of=full/fill bs=4k 2>/dev/null # the rest of it
	"$LAUNCH" -o full/s.db -- sh -c 'for i in $(seq 50); do /bin/true; done' 2>err
	snap_expect "exit status" "$?" 0
	sed 's/[0-9]//g' err | sort | uniq -d >twice
	[ -s twice ] && mi_why_add "said more than once: $(head -n 1 twice)"
	n=$(wc -l <err)
	[ "$n" -le 6 ] || mi_why_add "$n lines"
	grep -q 'cannot write the session' err || mi_why_add "the session's failure is not said"
	mi_verdict "a full disk under 50 processes: each failure said once" "$why" err stderr
	umount full
else
	echo "skip  a full disk: needs root and a tmpfs mount"
fi
mi_finish
