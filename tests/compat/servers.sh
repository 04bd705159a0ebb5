# servers.sh — the compatibility set, third part: servers under load and
# daemons, started, driven by a client, asked for a live snapshot and
# stopped, as a new user runs them; compared with the plain run (the
# clients' output, the servers' exit) under mis and mim with each backend,
# mim with control=on: `inspect status --pid` and `inspect snapshot --pid`
# must answer while the server runs, and every snapshot (live, and at the
# exit of each process) must be consistent.  Helpers in compat_lib.sh.
#   lighttpd          double-forks itself, 2 forked workers (a control
#                     channel each), serves files on a unix socket
#   redis-server      --daemonize, 8 connections of redis-benchmark
#   memcached         -d, 2 worker threads, a python3 client
#   python3           -m http.server, threads, on a free TCP port
#   tmux              the client forks the server, which daemonizes; it
#                     calls malloc_trim; panes run shell commands
#   dbus-daemon       --fork, dbus-send clients
#   daemon            double-forks, closes every descriptor, runs sort
#   start-stop-daemon --background (double fork, every descriptor closed)
# Every server lives in the scratch directory (unix sockets, or a port the
# kernel picks), is waited for by polling, and is killed when the test
# ends, however it ends.  COMPAT_LONG=1 grows each load about tenfold.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"
. "$top_srcdir/tests/compat/compat_lib.sh"

INSPECT=$top_builddir/inspect/inspect

# srv_live PID: in a run with control=on, the live process PID must answer
# `inspect status --pid` (a total) and give a snapshot through the channel
# (checked with the others); what fails is kept in $MI_TMP/live.why for the
# case's verdict.  Does nothing in other runs, so stdout stays the same.
srv_live() {
	case ${MI_MEMINST:-} in *control=on*) ;; *) return 0 ;; esac
	if ! poll 400 "$INSPECT" status --pid "$1" --total --json >"$MI_TMP/live.status" 2>"$MI_TMP/live.err"; then
		echo "inspect status --pid $1: $(head -n 1 "$MI_TMP/live.err")" >>"$MI_TMP/live.why"
	elif ! grep -q '"total"' "$MI_TMP/live.status"; then
		echo "inspect status --pid $1: no total" >>"$MI_TMP/live.why"
	fi
	live_snapshot "$1" "$MI_TMP/snap.live$1.db" ||
		echo "inspect snapshot --pid $1: $(head -n 1 "$MI_TMP/live.err")" >>"$MI_TMP/live.why"
}

# srv_pidfile FILE: the pid a daemon wrote into FILE (polled for), tracked
# so that it is killed if the test ends early.  Empty if none came.
srv_pidfile() {
	poll 400 test -s "$1" || return 1
	sp_pid=$(cat "$1")
	bg_track "$sp_pid"
	echo "$sp_pid"
}

# srv_gone PID: wait until PID has exited (its exit snapshot is written
# before it does); at most 60 s, then it is said.
srv_gone() {
	poll 1200 sh -c "! kill -0 $1 2>/dev/null" || echo "pid $1 still runs"
}

# check_server NAME FUNCTION: the plain run, then each mode and backend
# (mim with control=on, the live checks' verdict on a line of its own), then
# the snapshot run with control=on, whose live snapshots are checked with
# those stored at exit.
check_server() {
	cs_name=$1 cs_fn=$2
	mi_reference "$cs_name" "$cs_fn" || return 1
	for mode in $MEMINST_TEST_MODES; do
		for backend in $MEMINST_BACKENDS; do
			cs_set="$mode,backend=$backend"
			[ "$mode" != mim ] || cs_set="$cs_set,control=on"
			rm -f "$MI_TMP/live.why" "$MI_TMP"/snap.*.db
			mi_case "$cs_name $mode/$backend" "$cs_set" "$cs_fn"
			[ "$mode" = mim ] || continue
			why=$(cat "$MI_TMP/live.why" 2>/dev/null)
			snap_check_files "$MI_TMP"/snap.live*.db
			[ "$snap_files" -gt 0 ] || mi_why_add "no live snapshot"
			mi_verdict "$cs_name $mode/$backend live status and snapshot" "$why"
		done
	done
	rm -f "$MI_TMP/live.why"
	COMPAT_SNAP_EXTRA=,control=on snapshots "$cs_name" "$cs_fn"
	[ ! -s "$MI_TMP/live.why" ] || mi_fail "$cs_name snapshot run: live" "$(cat "$MI_TMP/live.why")"
}

# Files to serve, and a client's checksum of them.
www=$MI_TMP/www
mkdir -p "$www"
for i in $(seq 1 20); do
	seq 1 $((i * 400)) >"$www/f$i.txt"
done
REQUESTS=$(scale 40 400)

# ------------------------------------------------------------ lighttpd --

if have lighttpd lighttpd && have curl curl; then
	lt=$MI_TMP/lighttpd
	mkdir -p "$lt"
	cat >"$lt/lighttpd.conf" <<EOF
server.document-root = "$www"
server.bind = "$lt/sock"
server.pid-file = "$lt/pid"
server.errorlog = "$lt/error.log"
server.modules = ( "mod_staticfile" )
server.max-worker = 2
mimetype.assign = ( ".txt" => "text/plain" )
EOF
	srv_lighttpd() {
		rm -f "$lt/pid" "$lt/sock"
		mi_x lighttpd -f "$lt/lighttpd.conf" # forks twice, the parent exits
		echo "start $?"
		pid=$(srv_pidfile "$lt/pid") || { echo "no pid file"; return 1; }
		poll 400 test -S "$lt/sock" || echo "no socket"
		i=0
		while [ "$i" -lt "$REQUESTS" ]; do
			curl -sS --unix-socket "$lt/sock" "http://localhost/f$((i % 20 + 1)).txt" \
				"http://localhost/f$((i % 7 + 1)).txt"
			i=$((i + 1))
		done | cksum
		curl -sS -o /dev/null -w '%{http_code}\n' --unix-socket "$lt/sock" http://localhost/none
		srv_live "$pid"
		workers=$(children "$pid")
		echo "$workers" | wc -w
		for w in $workers; do # forked by a control=on process: a channel each
			srv_live "$w"
		done
		kill -TERM "$pid"
		srv_gone "$pid"
	}
	check_server lighttpd srv_lighttpd
fi

# -------------------------------------------------------- redis-server --

if have redis-server redis-server && have redis-cli redis-tools && have redis-benchmark redis-tools; then
	rd=$MI_TMP/redis
	mkdir -p "$rd"
	seq 1 "$(scale 2000 20000)" | awk '{ print "SET k" $1 " " $1 "v"; print "LPUSH l" $1 % 10 " " $1 }' >"$rd/cmds"
	srv_redis() {
		rm -f "$rd/pid" "$rd/sock"
		mi_x redis-server --port 0 --unixsocket "$rd/sock" --daemonize yes --pidfile "$rd/pid" \
			--dir "$rd" --save '' --appendonly no --logfile "$rd/log"
		echo "start $?"
		pid=$(srv_pidfile "$rd/pid") || { echo "no pid file"; return 1; }
		poll 400 test -S "$rd/sock" || echo "no socket"
		mi_x redis-cli -s "$rd/sock" <"$rd/cmds" | sort | uniq -c | cksum
		redis-benchmark -s "$rd/sock" -q -c 8 -n "$(scale 2000 20000)" -t set,get,lpush,lrange_100 >/dev/null
		echo "benchmark $?"
		mi_x redis-cli -s "$rd/sock" dbsize
		mi_x redis-cli -s "$rd/sock" lrange l3 0 4
		srv_live "$pid"
		mi_x redis-cli -s "$rd/sock" shutdown nosave
		srv_gone "$pid"
	}
	check_server redis-server srv_redis
fi

# ----------------------------------------------------------- memcached --

if have memcached memcached; then
	mc=$MI_TMP/memcached
	mkdir -p "$mc"
	cat >"$mc/client.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rwb")
n, hits = int(sys.argv[2]), 0
def cmd(line, data=None):
    f.write(line.encode() + b"\r\n")
    if data is not None:
        f.write(data + b"\r\n")
    f.flush()
for i in range(n):
    cmd("set k%d 0 0 %d" % (i, i % 500 + 1), b"v" * (i % 500 + 1))
    assert f.readline() == b"STORED\r\n"
for i in range(0, n, 3):
    cmd("get k%d" % i)
    if f.readline().startswith(b"VALUE"):
        hits += len(f.readline()) - 2
        f.readline()
for i in range(0, n, 5):
    cmd("delete k%d" % i)
    f.readline()
cmd("stats")
st = {}
while True:
    l = f.readline().decode().split()
    if l[0] == "END":
        break
    st[l[1]] = l[2]
print(hits, *(st[k] for k in ("curr_items", "total_items", "get_hits", "cmd_set", "delete_hits")))
EOF
	srv_memcached() {
		rm -f "$mc/pid" "$mc/sock"
		mi_x memcached -d -s "$mc/sock" -P "$mc/pid" -m 16 -t 2 -u "$(id -un)"
		echo "start $?"
		pid=$(srv_pidfile "$mc/pid") || { echo "no pid file"; return 1; }
		poll 400 test -S "$mc/sock" || echo "no socket"
		/usr/bin/python3 "$mc/client.py" "$mc/sock" "$(scale 5000 50000)"
		srv_live "$pid"
		kill -TERM "$pid"
		srv_gone "$pid"
	}
	check_server memcached srv_memcached
fi

# ------------------------------------------------ python3 -m http.server --

if have /usr/bin/python3 python3 && have curl curl; then
	srv_python() {
		rm -f "$MI_TMP/http.out"
		# -u: the line naming the port comes at once.  SIGINT is ignored
		# in a background job, so the server is stopped by SIGTERM and its
		# status is 143 in every run (no exit snapshot: killed by a signal).
		if [ -z "${MI_MEMINST+set}" ]; then
			/usr/bin/python3 -u -m http.server --bind 127.0.0.1 --directory "$www" 0 \
				>"$MI_TMP/http.out" 2>/dev/null &
		else
			env LD_PRELOAD="$MEMINST_LIB" MEMINST="$MI_MEMINST" /usr/bin/python3 -u -m http.server \
				--bind 127.0.0.1 --directory "$www" 0 >"$MI_TMP/http.out" 2>/dev/null &
		fi
		pid=$!
		bg_track "$pid"
		poll 400 grep -q ' port [0-9]' "$MI_TMP/http.out" || { echo "no port"; kill -KILL "$pid"; return 1; }
		port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$MI_TMP/http.out")
		i=0
		while [ "$i" -lt "$REQUESTS" ]; do
			curl -sS "http://127.0.0.1:$port/f$((i % 20 + 1)).txt" "http://127.0.0.1:$port/f$((i % 3 + 1)).txt"
			i=$((i + 1))
		done | cksum
		curl -sS "http://127.0.0.1:$port/" | grep -c 'href="f'
		srv_live "$pid"
		kill -TERM "$pid"
		wait "$pid"
		echo "exit $?"
	}
	check_server "python3 -m http.server" srv_python
fi

# ---------------------------------------------------------------- tmux --

# The first client forks the server, which daemonizes (a second fork); the
# panes run shell commands (instrumented too, as the server's children);
# the other clients run plain, and the last stops it.
if have tmux tmux; then
	tm=$MI_TMP/tmux
	mkdir -p "$tm"
	echo 'set -g history-limit 10000' >"$tm/tmux.conf"
	srv_tmux() {
		sock=$tm/sock n=$(scale 300 3000)
		mi_x tmux -S "$sock" -f "$tm/tmux.conf" new-session -d -x 80 -y 24 "seq 1 $n; exec cat"
		echo "start $?"
		for w in 1 2 3; do
			tmux -S "$sock" new-window -d "seq $w $n | sort -r; exec cat"
		done
		tmux -S "$sock" list-windows -F '#{window_index} #{window_panes}'
		for w in 0 1 2 3; do # until each pane shows all its lines
			lines=$((w == 0 ? n : n - w + 1))
			poll 400 sh -c "[ \$(tmux -S '$sock' capture-pane -p -S - -t :$w | grep -c .) -ge $lines ]" ||
				echo "window $w: not $lines lines"
			tmux -S "$sock" capture-pane -p -S - -t ":$w" | sed '/^$/d' | cksum
		done
		pid=$(tmux -S "$sock" display-message -p '#{pid}')
		bg_track "$pid"
		srv_live "$pid"
		mi_x tmux -S "$sock" kill-server
		echo "kill-server $?"
		srv_gone "$pid"
	}
	check_server tmux srv_tmux
fi

# --------------------------------------------------------- dbus-daemon --

if have dbus-daemon dbus-daemon && have dbus-send dbus-bin; then
	srv_dbus() {
		bus=unix:path=$MI_TMP/dbus.sock
		# --print-pid and --print-address come on stdout once it is ready
		mi_x dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1 \
			--address="$bus" >"$MI_TMP/dbus.info"
		echo "start $?"
		pid=$(sed -n 2p "$MI_TMP/dbus.info")
		[ -n "$pid" ] || { echo "no pid"; return 1; }
		bg_track "$pid"
		i=0
		while [ "$i" -lt "$(scale 5 50)" ]; do
			mi_x dbus-send --bus="$bus" --dest=org.freedesktop.DBus --print-reply \
				/org/freedesktop/DBus org.freedesktop.DBus.ListNames
			dbus-send --bus="$bus" --dest=org.freedesktop.DBus --print-reply \
				/org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.DBus
			i=$((i + 1))
		done | sed 's/time=[0-9.]* //; s/:1\.[0-9]*/:1.N/g' | sort | uniq -c
		srv_live "$pid"
		kill -TERM "$pid"
		srv_gone "$pid"
	}
	check_server dbus-daemon srv_dbus
fi

# ------------------------------------------- daemon, start-stop-daemon --

# Both fork twice, close every descriptor and start sort in the background.
# sort reads a FIFO, so it cannot end before the test has its pid (and,
# with control=on, its live snapshot); then the input is written and the
# test waits for the daemon to be gone.
gate=$MI_TMP/gate
mkfifo "$gate" || exit 99
seq 1 "$(scale 50000 500000)" | awk '{ print ($1 * 7919) % 100003 " " $1 }' >"$MI_TMP/unsorted"

if have daemon daemon; then
	srv_daemon() {
		rm -f "$MI_TMP/daemon.pid" "$MI_TMP/sorted"
		# -i: the client inherits the environment (and so the preload)
		mi_x daemon -N -i -n compat-sort -F "$MI_TMP/daemon.pid" -D "$MI_TMP" \
			-- /usr/bin/sort -n -o "$MI_TMP/sorted" "$gate"
		echo "start $?"
		pid=$(srv_pidfile "$MI_TMP/daemon.pid") || { echo "no pid file"; return 1; }
		poll 400 sh -c "grep -q '^[0-9]* (.*) [A-Za-z] $pid ' /proc/[0-9]*/stat 2>/dev/null"
		client=$(children "$pid" | head -n 1)
		srv_live "$pid"
		[ -z "$client" ] || srv_live "$client"
		cat "$MI_TMP/unsorted" >"$gate"
		srv_gone "$pid"
		cksum <"$MI_TMP/sorted"
	}
	check_server daemon srv_daemon
fi

if have start-stop-daemon dpkg; then
	srv_ssd() {
		rm -f "$MI_TMP/ssd.pid" "$MI_TMP/sorted"
		mi_x start-stop-daemon --start --background --make-pidfile --pidfile "$MI_TMP/ssd.pid" \
			--chdir "$MI_TMP" --exec /usr/bin/sort -- -n -o "$MI_TMP/sorted" "$gate"
		echo "start $?"
		pid=$(srv_pidfile "$MI_TMP/ssd.pid") || { echo "no pid file"; return 1; }
		srv_live "$pid"
		cat "$MI_TMP/unsorted" >"$gate"
		srv_gone "$pid"
		cksum <"$MI_TMP/sorted"
	}
	check_server start-stop-daemon srv_ssd
fi

mi_finish
