# serve_lib.sh — what the `inspect serve` tests share (serve.sh,
# serve_profile.sh), sourced after tests/session/session_lib.sh:
#     . "$top_srcdir/tests/session/session_lib.sh"
#     . "$top_srcdir/tests/inspect/serve_lib.sh"
# It skips the test without curl, gives it a TMPDIR of its own (serve's
# temporary files must not be left behind), says whether go tool pprof can
# be run (have_go), and stops serve and the target at the end.
#
#   serve_start_target PROGRAM MEMINST NAME   PROGRAM under MEMINST, its
#       output in t.NAME.out and t.NAME.err; PID set once it says "ready"
#       (empty when it did not); the program waits for $MI_TMP/go to end
#   serve_stop_target   the target told to end; ST its exit status
#   serve_start         inspect serve --pid $PID on a free port (a random
#       one, another when it is in use): URL and PORT set; false when it did
#       not start (s.err says why), or stopped moving (serve_moving)
#   serve_stop          SIGTERM to serve; ST its exit status
#   fd_task             "DESCRIPTORS THREADS" of the target now
#   fd_task_settled WANT  fd_task, waited for (up to 5 s) until it is WANT:
#       a thread that has been told to end leaves /proc a moment later
#   serve_py ARGS... <PROGRAM   python3 with the protocol-buffers reader
#       below before PROGRAM (field numbers of pprof's profile.proto)

command -v curl >/dev/null || { echo "skip  $MI_NAME: curl is not installed"; exit 77; }
export TMPDIR="$MI_TMP/tmp"
mkdir "$TMPDIR" || exit 99
have_go=no
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	have_go=yes
	export HOME="$MI_TMP" PPROF_TMPDIR="$MI_TMP" GOFLAGS= GOCACHE="$MI_TMP/go-cache"
fi
SERVE=
TPID=
serve_finish() {
	[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null
	[ -n "$TPID" ] && touch "$MI_TMP/go"
	wait 2>/dev/null
}
trap 'serve_finish; mi_cleanup' EXIT

serve_start_target() {
	rm -f "$MI_TMP/go" "t.$3.out"
	MI_MEMINST="$2" mi_x "$1" "$MI_TMP/go" >"t.$3.out" 2>"t.$3.err" &
	TPID=$!
	unset MI_MEMINST
	i=0
	while ! grep -q '^ready' "t.$3.out" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	PID=$(sed -n 's/^pid //p' "t.$3.out")
}

serve_stop_target() {
	touch "$MI_TMP/go"
	ST=0
	wait "$TPID" || ST=$?
	TPID=
}

# serve_cpu_state P: "STATE TICKS" of process P (its CPU time, user and
# system, in clock ticks), or nothing once it is gone.
serve_cpu_state() {
	sed -n 's/.*) \([A-Za-z]\) \([0-9-]* \)\{10\}\([0-9]*\) \([0-9]*\) .*/\1 \3 \4/p' "/proc/$1/stat" 2>/dev/null |
		awk '{ print $1, $2 + $3 }'
}

# serve_moving: called every 0.1 s while serve starts; false once it is
# stuck.  The wait is bounded by progress, not by the clock: a fixed 30 s
# failed once under load 14 while serve read the modules' symbols.  Serve
# or the target (which answers serve's snapshot) moves when its CPU time
# grows or it is runnable or in the disk (R, D); a start with neither for
# 10 s in a row is a hang, and so is one that took 60 s of serve's CPU.
serve_moving() {
	sm_now="$(serve_cpu_state "$SERVE") $(serve_cpu_state "$PID")"
	case " $sm_now " in
	*" R "* | *" D "*) sm_idle=0 ;;
	*) [ "$sm_now" = "$sm_last" ] && sm_idle=$((sm_idle + 1)) || sm_idle=0 ;;
	esac
	sm_last=$sm_now
	set -- $sm_now
	[ "$sm_idle" -lt 100 ] && [ "${2:-0}" -lt $((60 * ${CLK_TCK:=$(getconf CLK_TCK)})) ]
}

serve_start() {
	URL=
	for try in 1 2 3 4 5 6 7 8 9 10; do
		PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
		"$INSPECT" serve --pid "$PID" --listen "127.0.0.1:$PORT" >s.out 2>s.err &
		SERVE=$!
		sm_idle=0 sm_last=
		while kill -0 "$SERVE" 2>/dev/null && ! grep -q 'serving' s.out && serve_moving; do
			sleep 0.1
		done
		if grep -q 'serving' s.out; then
			URL=http://127.0.0.1:$PORT
			return 0
		fi
		wait "$SERVE"
		SERVE=
		grep -q 'in use' s.err || break
	done
	return 1
}

serve_stop() {
	kill -TERM "$SERVE"
	ST=0
	wait "$SERVE" || ST=$?
	SERVE=
}

fd_task() {
	echo "$(ls /proc/"$PID"/fd | wc -l) $(ls /proc/"$PID"/task | wc -l)"
}

fd_task_settled() {
	i=0
	while [ "$(fd_task)" != "$1" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	fd_task
}

serve_py() {
	{
		cat <<'PY'
import gzip, re, sys, time
def varint(b, i):
    r = s = 0
    while True:
        assert i < len(b), "a varint cut short"
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return r, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]; i += n
            assert i <= len(b), "a field past the end"
        elif w in (1, 5):
            v = b[i:i + (8 if w == 1 else 4)]; i += 8 if w == 1 else 4
        else:
            raise AssertionError("wire type %d" % w)
        out.append((f, w, v))
    assert i == len(b), "bytes left over"
    return out
def nums(w, v):  # a repeated integer, packed or not
    if w == 0:
        return [v]
    r, i = [], 0
    while i < len(v):
        x, i = varint(v, i); r.append(x)
    return r
def msg(b):
    d = {}
    for f, w, v in fields(b):
        d.setdefault(f, []).append((w, v))
    return d
def one(d, f, default=0):
    return d[f][-1][1] if f in d else default
PY
		cat
	} >"$MI_TMP/serve_check.py"
	/usr/bin/python3 "$MI_TMP/serve_check.py" "$@"
}
