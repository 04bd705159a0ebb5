# snap_control.sh — control=on: the abstract UNIX socket
# "\0meminst-control-PID", for each backend, with tests/targets/snap_wait
# holding 80 known blocks until the test is done asking.  A small python3
# client sends one request line and prints the answer line.
#   - "snapshot /abs/ctl.db map" answers "ok 1", "… status" then "ok 2";
#     after the program exits, snapshot 1 is 'map'/'control' with the 80
#     blocks and consistent, snapshot 2 'status' with none; mode 0600; no
#     other file (control=on alone stores nothing at exit);
#   - bad requests (relative path, unknown content, not a request) and a
#     text file as the path answer "error …", the text file untouched;
#   - a client of another user (nobody, when the test runs as root and
#     setpriv(1) is there) is answered "error permission denied…" and
#     nothing is stored;
#   - a process without control=on has no socket: connect is refused;
#   - mis: "map" stores a 'status' snapshot.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
	[ -n "$p" ] && [ -x "$p" ] && { PY=$p; break; }
done
if [ -z "$PY" ]; then
	echo "skip  $MI_NAME: python3 is not installed (apt-get install python3)"
	exit 77
fi

# The client, given to python3 -c (so that another user can run it): PID
# REQUEST; prints the answer, or "connect failed: ERROR".
CLIENT=$(cat <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(20)
try:
    s.connect("\0meminst-control-" + sys.argv[1])
except OSError as e:
    print("connect failed:", type(e).__name__)
    sys.exit(0)
try:
    s.sendall(sys.argv[2].encode() + b"\n")
except OSError:
    pass  # refused peers are answered and closed before we write
answer = b""
while True:
    try:
        chunk = s.recv(4096)
    except ConnectionResetError:
        break  # our line unread when the peer closed: the answer came first
    if not chunk:
        break
    answer += chunk
sys.stdout.write(answer.decode())
EOF
)

# ask PID REQUEST [USER-PREFIX...]: the answer, without its newline.
ask() {
	pid_=$1 req_=$2
	shift 2
	"$@" "$PY" -c "$CLIENT" "$pid_" "$req_" 2>&1
}

# answer REQUEST EXPECTED: the answer to REQUEST is EXPECTED (a shell
# pattern).
answer() {
	got=$(ask "$pid" "$1")
	case $got in
	$2) ;;
	*) mi_why_add "'$1' answered '$got', expected '$2'" ;;
	esac
}

for b in $MEMINST_BACKENDS; do
	T=$MI_TMP/$b
	snap_start "$T/ctl" "mim,backend=$b,control=on"
	db=$T/ctl.db
	printf 'some text\n' >"$T/text.txt"
	cp "$T/text.txt" "$T/text.orig"
	answer "snapshot $db map" "ok 1"
	answer "snapshot $db status" "ok 2"
	answer "snapshot ctl.db map" "error bad request*"
	answer "snapshot $db everything" "error bad request*"
	answer "hello" "error bad request*"
	answer "snapshot $T/text.txt map" "error snapshot $T/text.txt: not an SQLite database; left untouched"
	cmp -s "$T/text.txt" "$T/text.orig" || mi_why_add "the text file was changed"
	snap_finish
	snap_expect "files" "$(cd "$T/ctl" && echo *)" "*"
	if [ -f "$db" ]; then
		snap_expect "mode" "$(snap_mode "$db")" 600
		snap_expect "snapshots" "$(snap_sql "$db" "SELECT group_concat(content || '/' || trigger || '/' || pid,
			' ') FROM snapshot")" "map/control/$pid status/control/$pid"
		snap_expect "snap_wait's blocks" "$(snap_own "$db" 1 snap_wait)" "80 77015"
		snap_expect "snap_wait's status" "$(snap_own_status "$db" 2 snap_wait)" "80 77015"
		snap_check_consistent "$db" 1 2
	else
		mi_why_add "no file $db"
	fi
	mi_verdict "control=on requests, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies

	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		snap_start "$T/other" "mim,backend=$b,control=on"
		got=$(ask "$pid" "snapshot $T/nobody.db map" setpriv --reuid=65534 --regid=65534 --clear-groups)
		snap_expect "answer to another user" "$got" "error permission denied: not the same user"
		snap_finish
		[ ! -e "$T/nobody.db" ] || mi_why_add "a snapshot was stored for another user"
		mi_verdict "control=on refuses another user, mim/$b" "$why" "$dir.err" stderr
	fi

	snap_start "$T/off" "mim,backend=$b"
	got=$(ask "$pid" "snapshot $T/off.db map")
	snap_finish
	case $got in
	"connect failed: "*) ;;
	*) mi_why_add "without control=on, a connection was answered '$got'" ;;
	esac
	mi_verdict "no socket without control=on, mim/$b" "$why" "$dir.err" stderr

	snap_start "$T/mis" "mis,backend=$b,control=on"
	answer "snapshot $T/mis.db map" "ok 1"
	snap_finish
	snap_expect "snapshot" "$(snap_sql "$T/mis.db" "SELECT content, trigger, blocks FROM snapshot")" \
		"status control 0"
	snap_expect "snap_wait's status" "$(snap_own_status "$T/mis.db" 1 snap_wait)" "80 77015"
	snap_check_consistent "$T/mis.db" 1
	mi_verdict "control=on, map asked in mis/$b" "$why" "$dir.err" stderr "$MI_TMP/incons" inconsistencies
done
mi_finish
