# snap_hostile.sh — clients of the control channel (control=on) that do
# not play by the rules, against tests/targets/snap_wait:
#   - a client of another user that sends a byte every 0.25 s and never a
#     line is refused as soon as it connects (answered before its 4th
#     byte; it was read for as long as it kept sending);
#   - a client of the same user doing the same is dropped at its deadline,
#     one for the whole request (answered "error timeout" before its 16th
#     byte, 4 s; each byte used to restart a 2 s wait, for ever);
#   - eleven idle connections do not lock a real request out: it is
#     answered "ok 1" while they stay open (the oldest is dropped to make
#     room), and the program exits normally afterwards.
#   - a forked child of a control=on process answers inspect status --pid
#     on a channel of its own (it had none, and inspect told the user to
#     start it with control=on).
# Counts of bytes sent, not durations, are what is checked.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=/usr/bin/python3
mi_need "$PY" python3

# DRIP PID: connect, then every 0.25 s either find the answer or send one
# more byte (never a newline); at most 40 bytes.
DRIP=$(cat <<'PYEOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0meminst-control-" + sys.argv[1])  # blocking: MSG_DONTWAIT below is a peek
sent = 0
for i in range(41):
    time.sleep(0.25)
    try:
        got = s.recv(4096, socket.MSG_DONTWAIT)
        print("answered after %d bytes: %s" % (sent, got.decode().strip() or "(closed)"))
        sys.exit(0)
    except BlockingIOError:
        pass
    except OSError:
        print("answered after %d bytes: (reset)" % sent)
        sys.exit(0)
    if i == 40:
        break
    try:
        s.send(b"s")
        sent += 1
    except OSError:
        print("answered after %d bytes: (closed)" % sent)
        sys.exit(0)
print("never answered after %d bytes" % sent)
PYEOF
)

# IDLE PID N: open N connections, say so, hold them until stdin ends.
IDLE=$(cat <<'PYEOF'
import socket, sys
held = []
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0meminst-control-" + sys.argv[1])
    held.append(s)
print("open", flush=True)
sys.stdin.read()
PYEOF
)

# ASK PID REQUEST: one request line, the answer line.
ASK=$(cat <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect("\0meminst-control-" + sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
answer = b""
while not answer.endswith(b"\n"):
    chunk = s.recv(4096)
    if not chunk:
        break
    answer += chunk
print(answer.decode().strip())
PYEOF
)

# answered_within TEXT MAX-BYTES PATTERN: the drip client's line says it was
# answered (PATTERN) after at most MAX-BYTES bytes.
answered_within() {
	case $1 in
	"answered after "*)
		n=${1#answered after }
		n=${n%% *}
		[ "$n" -le "$2" ] || mi_why_add "answered only after $n bytes (at most $2 expected)"
		case ${1#*: } in
		$3) ;;
		*) mi_why_add "answer '${1#*: }', expected '$3'" ;;
		esac
		;;
	*) mi_why_add "$1" ;;
	esac
}

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	snap_start "$MI_TMP/other" mim,control=on
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" -c "$DRIP" "$pid" 2>&1)
	answered_within "$got" 3 "error permission denied*"
	snap_finish
	mi_verdict "another user's client is refused at once ($got)" "$why" "$dir.err" stderr
fi

snap_start "$MI_TMP/same" mim,control=on
got=$("$PY" -c "$DRIP" "$pid" 2>&1)
answered_within "$got" 15 "error timeout*"
snap_finish
mi_verdict "a client that never ends its line is dropped at its deadline ($got)" "$why" "$dir.err" stderr

snap_start "$MI_TMP/idle" mim,control=on
mkfifo "$MI_TMP/hold"
exec 8<>"$MI_TMP/hold"
"$PY" -c "$IDLE" "$pid" 11 <"$MI_TMP/hold" >"$MI_TMP/idle.held" 2>&1 8>&- &
idle=$!
snap_wait_line "$MI_TMP/idle.held" '^open' || mi_why_add "the idle connections were not opened"
got=$("$PY" -c "$ASK" "$pid" "snapshot $MI_TMP/idle.db status" 2>&1)
snap_expect "answer while 11 connections are idle" "$got" "ok 1"
exec 8>&-
wait "$idle"
snap_finish
mi_verdict "eleven idle connections do not lock a request out" "$why" "$dir.err" stderr "$MI_TMP/idle.held" idle

# HALVES PID PATH-A PATH-B: two clients send their request lines in two
# parts, interleaved (A's first 12 bytes, B's, the rest of A, the rest of
# B): each slot keeps its own line (the lines are apart from the slots since
# issue 29); both answers.  B's path starts with two slashes, so that the
# first parts differ: lines shared between slots would mix them.
HALVES=$(cat <<'PYEOF'
import socket, sys, time
def half(s, line, i):
    s.sendall(line[:12] if i == 0 else line[12:])
    time.sleep(0.3)  # for the service to read it apart; a late read only weakens the check
cs, lines = [], []
for path in sys.argv[2:4]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect("\0meminst-control-" + sys.argv[1])
    cs.append(s)
    lines.append(("snapshot %s status\n" % path).encode())
for i in (0, 1):
    for s, line in zip(cs, lines):
        half(s, line, i)
for s in cs:
    print(s.makefile("rb").readline().decode().strip() or "(closed)")
PYEOF
)

snap_start "$MI_TMP/halves" mim,control=on
got=$("$PY" -c "$HALVES" "$pid" "$MI_TMP/half-a.db" "/$MI_TMP/half-b.db" 2>&1 | tr '\n' ' ')
snap_expect "answers to two lines sent in two parts, interleaved" "$got" "ok 1 ok 1 "
for f in half-a half-b; do
	[ -s "$MI_TMP/$f.db" ] || mi_why_add "no $f.db"
done
snap_finish
mi_verdict "two clients' lines sent in parts, interleaved, are each served" "$why" "$dir.err" stderr

# A child made by fork of a control=on process opens a channel of its own:
# inspect status --pid CHILD answers with the child's snapshot (its pid,
# its 3000 blocks of 1000 bytes more than the parent, which has not them).
why=
MI_MEMINST="mim,control=on"
mi_x "$PY" -c '
import os, subprocess, sys, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    x = [bytearray(1000) for i in range(3000)]
    os.write(w, b"x")
    time.sleep(60)
    os._exit(0)
os.read(r, 1)
env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MEMINST")}
for p in (pid, os.getpid()):
    r = subprocess.run([sys.argv[1], "status", "--pid", str(p), "--json"], capture_output=True,
                       text=True, env=env)
    print(p, r.returncode, r.stdout.replace("\n", " "), r.stderr.strip())
os.kill(pid, 9)
os.waitpid(pid, 0)' "$top_builddir/inspect/inspect" >"$MI_TMP/child.out" 2>"$MI_TMP/child.err"
unset MI_MEMINST
read -r cpid crc cjson <"$MI_TMP/child.out"
snap_expect "inspect status --pid CHILD exit status" "$crc" 0
echo "$cjson" | grep -q "\"pid\": *$cpid[,}]" || mi_why_add "the answer is not the child's: $cjson"
mi_verdict "a forked child of a control=on process has its own channel" "$why" \
	"$MI_TMP/child.out" out "$MI_TMP/child.err" stderr

mi_finish
