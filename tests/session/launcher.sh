# launcher.sh — the `meminst` launcher end to end (no time profiling here:
# see the trace and sample tests for that): exit status passed through,
# death by a signal passed on after the session is written, Ctrl-C of the
# program, a program that forks and execs (every process in the one
# session), an existing output refused without -f, bad options, the
# session read back by inspect, paths MEMINST and LD_PRELOAD cannot carry
# as they are, and a process that becomes another user.
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

# expect LABEL GOT WANT
expect() {
	[ "$2" = "$3" ] || mi_why_add "$1: got '$2', expected '$3'"
}

why=
"$LAUNCH" -q --no-time -o rc.db -- /usr/bin/python3 -c 'import sys; sys.exit(3)' 2>err
expect "exit status" $? 3
expect "exit code stored" "$(snap_sql rc.db 'SELECT exit_code, exit_signal IS NULL FROM session_run')" "3 1"
expect "one process" "$(snap_sql rc.db 'SELECT count(*) FROM session_process')" 1
mi_verdict "exit status passed through and stored" "$why" err stderr

why=
"$LAUNCH" -q --no-time -o rc.db -- true 2>err
expect "status with an existing output" $? 2
grep -q 'rc.db exists' err || mi_why_add "no message about the existing file"
expect "old session kept" "$(snap_sql rc.db 'SELECT exit_code FROM session_run')" 3
"$LAUNCH" -q --no-time -f -o rc.db -- true 2>>err
expect "status with -f" $? 0
expect "replaced by -f" "$(snap_sql rc.db 'SELECT exit_code FROM session_run')" 0
ls -a | grep -q meminst-parts && mi_why_add "a parts directory was left behind"
mi_verdict "existing output: refused, replaced with -f" "$why" err stderr

# a symbolic link to nowhere exists too: refused before the program runs
# (it ran, then "dangling.db: File exists (it appeared while the program
# ran ...)"); -f replaces the link, never its target
why=
ln -s nowhere/x.db dangling.db
"$LAUNCH" -q --no-time -o dangling.db -- touch ran 2>err
expect "a dangling link: status" $? 2
grep -q 'dangling.db exists' err || mi_why_add "no message about the existing link"
[ -e ran ] && mi_why_add "the program ran"
rm -f ran
[ -L dangling.db ] || mi_why_add "the link is gone"
echo precious >target && ln -s target link.db
"$LAUNCH" -q --no-time -f -o link.db -- true 2>>err
expect "-f over a link: status" $? 0
[ "$(cat target)" = precious ] || mi_why_add "-f wrote through the link into its target"
mi_verdict "output a symbolic link: refused without -f, the link replaced with it" "$why" err stderr

# -f never replaces what is not a file (with -o /dev/null it replaced the
# device); an empty -o is refused: both before the program runs
why=
mkdir odir && mkfifo ofifo
for out in odir ofifo ""; do
	"$LAUNCH" -q --no-time -f -o "$out" -- touch ran 2>err
	expect "-f -o '$out': status" $? 2
	[ "$(wc -l <err)" = 1 ] || mi_why_add "-f -o '$out': not one line on stderr"
	[ -e ran ] && mi_why_add "-f -o '$out': the program ran"
	rm -f ran
done
[ -d odir ] && [ -p ofifo ] || mi_why_add "the directory or the FIFO was replaced"
ls -a | grep -q -e meminst-parts -e '\.tmp-' && mi_why_add "a parts directory or temporary file was left behind"
mi_verdict "-f: only a regular file is replaced; an empty -o is refused" "$why" err stderr

# a foreign and an empty part in the parts directory: each skipped with one
# line (the parts are read in two passes), the real parts kept; an empty part
# is what a process leaves that ends in the middle of its first store
why=
"$LAUNCH" -q --no-time -o parts.db -- sh -c \
	'for d in .meminst-parts.*; do echo junk >$d/mem.1.db; : >$d/mem.2.db; done; ls >/dev/null' 2>err
expect "status with foreign parts" $? 0
expect "lines on stderr" "$(wc -l <err)" 2
expect "mem.1.db said once" "$(grep -c 'mem.1.db: file is not a database; skipped' err)" 1
expect "mem.2.db said once" "$(grep -c 'mem.2.db: process 2 left no complete snapshot: it exec.d, ended or was killed while storing its first one, which is lost' err)" 1
expect "ls's exit snapshot kept" "$(snap_sql parts.db "SELECT count(*) FROM snapshot WHERE exe LIKE '%/ls' AND trigger = 'exit'")" 1
mi_verdict "foreign parts: skipped, said once each" "$why" err stderr

# a statically linked program (ldconfig on glibc systems) loads no library:
# said in one line, not a silent empty session
if file -L /sbin/ldconfig 2>/dev/null | grep -q 'static'; then
	why=
	"$LAUNCH" -q -o static.db -- /sbin/ldconfig -p >/dev/null 2>err
	expect "status of ldconfig -p" $? 0
	expect "lines on stderr" "$(wc -l <err)" 1
	grep -q 'no process of the run loaded' err || mi_why_add "no line saying nothing was instrumented"
	mi_verdict "a statically linked program: said" "$why" err stderr
else
	echo "skip  a statically linked program: /sbin/ldconfig is not static here"
fi

why=
"$LAUNCH" -q --no-time -o sig.db -- sh -c 'kill -TERM $$' 2>err
expect "status of a program killed by SIGTERM" $? 143
expect "signal stored" "$(snap_sql sig.db 'SELECT exit_code IS NULL, exit_signal FROM session_run')" "1 15"
mi_verdict "death by a signal: session written, same signal" "$why" err stderr

# Ctrl-C: SIGINT to the whole process group, as a terminal sends it.  The
# program is a group leader's child; the launcher must outlive it.
why=
cat >slow.py <<'PY'
import signal, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
keep = [bytearray(4096) for i in range(2000)]
print("ready", flush=True)
time.sleep(60)
PY
setsid "$LAUNCH" -q --no-time --mim --interval=20ms -o int.db -- /usr/bin/python3 slow.py >int.out 2>err &
bg=$!
snap_wait_line int.out '^ready' || mi_why_add "the program did not start"
sleep 0.3
kill -INT -- "-$bg" 2>/dev/null || kill -INT "$bg"
wait "$bg"
expect "status after Ctrl-C" $? 130
expect "stored as SIGINT" "$(snap_sql int.db 'SELECT exit_signal FROM session_run')" 2
[ "$(snap_sql int.db "SELECT count(*) FROM snapshot WHERE trigger = 'interval'")" -ge 3 ] ||
	mi_why_add "fewer than 3 timeline snapshots"
"$INSPECT" status int.db >/dev/null 2>>err || mi_why_add "inspect cannot read the session"
mi_verdict "Ctrl-C: the session is written and readable" "$why" err stderr

# fork + exec: every process has its snapshots in the one session, each
# consistent, numbered in time order.
why=
"$LAUNCH" -q --no-time --mim -o fork.db -- bash -c '/usr/bin/python3 -c "print(1)"; ls / >/dev/null; echo done' >fork.out 2>err
expect "status" $? 0
expect "output" "$(tail -n 1 fork.out)" done
n=$(snap_sql fork.db 'SELECT count(*) FROM session_process')
[ "$n" -ge 3 ] || mi_why_add "$n processes, expected at least 3 (bash, python3, ls)"
expect "processes without snapshots" "$(snap_sql fork.db 'SELECT count(*) FROM session_process WHERE snapshots = 0')" 0
expect "python3 in the session" "$(snap_sql fork.db "SELECT count(*) > 0 FROM snapshot WHERE exe LIKE '%python3%'")" 1
expect "numbers out of time order" "$(snap_sql fork.db 'SELECT count(*) FROM snapshot a JOIN snapshot b
	ON b.id = a.id + 1 WHERE b.time_ns < a.time_ns')" 0
for i in $(snap_ids fork.db "trigger = 'exit'"); do
	bad=$(snap_consistent fork.db "$i" | head -n 2)
	[ -z "$bad" ] || mi_why_add "snapshot $i: $bad"
done
mi_verdict "fork and exec: every process in one session" "$why" err stderr

# --snapshot-at: the triggers the launcher passes on.  A program that
# grows to a peak and frees it: with the default it stores peak snapshots
# and one at exit; with --snapshot-at=exit only the exit one.
why=
cat >peaks.py <<'PY'
keep = [bytearray(1000) for i in range(20000)]
del keep
PY
"$LAUNCH" -q --no-time --mim --interval=0 -o peaks.db -- /usr/bin/python3 peaks.py 2>err ||
	mi_why_add "the default run failed"
"$LAUNCH" -q --no-time --mim --interval=0 --snapshot-at=exit -o exit.db -- /usr/bin/python3 peaks.py 2>>err ||
	mi_why_add "the --snapshot-at=exit run failed"
[ "$(snap_sql peaks.db "SELECT count(*) FROM snapshot WHERE trigger = 'peak'")" -ge 1 ] ||
	mi_why_add "no peak snapshot by default"
expect "triggers with --snapshot-at=exit" \
	"$(snap_sql exit.db "SELECT group_concat(DISTINCT trigger) FROM snapshot")" exit
mi_verdict "--snapshot-at: peak snapshots by default, exit alone when asked" "$why" err stderr

# --site-depth: the stacks of the types reach the session.
why=
"$LAUNCH" -q --no-time --mim --interval=0 --snapshot-at=exit --site-depth=3 -o depth.db -- /usr/bin/python3 peaks.py 2>err ||
	mi_why_add "the --site-depth=3 run failed"
expect "deepest frame of a type with --site-depth=3" "$(snap_sql depth.db "SELECT max(depth) FROM type_frame")" 2
mi_verdict "--site-depth: stacks of types stored in the session" "$why" err stderr

# --control: a child the program forks (no exec) answers inspect status
# --pid with its own figures while the run goes on; the session is as
# without it (the two processes, their exit snapshots: the child ends by
# _exit once asked, not by a SIGTERM that could come before its first
# interval snapshot and leave it none).
why=
"$LAUNCH" -q --no-time --control -o ctl.db -- /usr/bin/python3 -c '
import os, subprocess, sys, time
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    x = [bytearray(1000) for i in range(3000)]
    os.write(w, b"x")
    os.read(r2, 1)  # until the parent has asked; then the exit snapshot
    os._exit(0)
os.read(r, 1)
env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "MEMINST")}
r = subprocess.run([sys.argv[1], "status", "--pid", str(pid), "--json"], capture_output=True,
                   text=True, env=env)
print(pid, r.returncode, r.stdout.replace("\n", " "), r.stderr.strip())
os.write(w2, b"x")
os.waitpid(pid, 0)' "$INSPECT" >ctl.out 2>err
expect "exit status with --control" $? 0
read -r cpid crc cjson <ctl.out
expect "inspect status --pid CHILD" "$crc" 0
echo "$cjson" | grep -q "\"pid\": *$cpid[,}]" || mi_why_add "the answer is not the child's: $cjson"
expect "control=on in the session's MEMINST" \
	"$(snap_sql ctl.db "SELECT meminst_env LIKE '%,control=on%' FROM session_run")" 1
expect "processes" "$(snap_sql ctl.db 'SELECT count(*) FROM session_process')" 2
mi_verdict "--control: a forked child answers inspect status --pid" "$why" err stderr ctl.out out

# --site-skip: the wrapper's blocks are two types (its callers' 100 and 10
# blocks) in the session, not one of 110.
why=
"$LAUNCH" -q --no-time --interval=0 --site-skip=wrap_alloc,wrap_inner -o skip.db -- "$MI_TARGETS/site_wrap" \
	>skip.out 2>err
expect "exit status with --site-skip" $? 0
expect "site_skip in the session's MEMINST" \
	"$(snap_sql skip.db "SELECT meminst_env LIKE '%,site_skip=wrap_alloc+wrap_inner%' FROM session_run")" 1
expect "types of the wrapper's blocks" "$(snap_sql skip.db "SELECT group_concat(b) FROM (SELECT \
	s.blocks_current b FROM status s JOIN snapshot v ON v.id = s.snapshot WHERE v.trigger = 'exit' \
	AND s.kind = 'types' AND s.blocks_current IN (10, 100, 110) ORDER BY b)")" "10,100"
mi_verdict "--site-skip: a wrapper's blocks keyed by its callers" "$why" err stderr

# Bad command lines: one line, status 2, the program not run.  A library
# that is not a libmeminst (the loader would ignore it and run the program
# uninstrumented) is one of them.
LIBC=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
for args in "--library=/etc/passwd" "--library=$LIBC" "--library=$MI_TMP" "--library=/nonexistent.so" \
	"--interval=+5s" "--alloc-sample=+1k" "--sample-depth=+5" \
	"--sample=abc" "--interval=5x" "--backend=tcmalloc" "--trace=gpu" "--alloc-sample=-1" \
	"--snapshot-at=peak+peak" "--snapshot-at=exit+" "--snapshot-at=later" \
	"--site-depth=0" "--site-depth=33" "--site-depth=users" "--site-depth=+5" \
	"--no-time --trace" "--control --no-memory" "--no-memory --control" "--control=on" \
	"--trace --sample-clock=wall" "--no-time --sample-clock=wall" "--trace-sites" "--sample --trace-sites" \
	"--mis --mim" "--mim --no-memory" \
	"--site-skip=a,,b" "--site-skip=*" "--site-skip=" "--site-skip=zmalloc-x" "--bogus" ""; do
	why=
	if [ -n "$args" ]; then
		# shellcheck disable=SC2086
		"$LAUNCH" $args -- touch ran 2>err
	else
		"$LAUNCH" 2>err
	fi
	rc=$?
	expect "status" "$rc" 2
	[ "$(grep -c . err)" -le 2 ] || mi_why_add "$(grep -c . err) lines on stderr"
	grep -q 'meminst' err || mi_why_add "the message does not name meminst"
	[ -e ran ] && mi_why_add "the program ran"
	rm -f ran
	mi_verdict "bad command line '${args:-(none)}'" "$why" err stderr
done

# A typo of an option names the nearest one, on one line.
why=
"$LAUNCH" --snaphsot-at=exit -- touch ran 2>err
expect "status of a mistyped option" $? 2
grep -qx "meminst: unknown option '--snaphsot-at' (did you mean '--snapshot-at'?) (see 'meminst --help')" err ||
	mi_why_add "no 'did you mean' line"
[ -e ran ] && mi_why_add "the program ran"
rm -f ran
mi_verdict "mistyped option: did you mean" "$why" err stderr

why=
"$LAUNCH" --no-time -o x.db -- /nonexistent/prog 2>err
expect "status of a missing program" $? 127
grep -q 'cannot run /nonexistent/prog' err || mi_why_add "no clear message"
[ -e x.db ] && mi_why_add "a session was written for a program that did not run"
mi_verdict "missing program" "$why" err stderr

# Paths MEMINST and LD_PRELOAD cannot carry as they are: a directory named
# 'a,b' or 'x%p' (MEMINST split the parts path at the comma, expanded %p:
# the program was not started), a library path with a space (LD_PRELOAD
# split it: the program ran uninstrumented, with ld.so's complaints), a
# relative library path and a program that changes directory before it
# runs another (the child did not find the library).
for d in "a,b" "x%p"; do
	why=
	mkdir -p "$MI_TMP/$d"
	(cd "$MI_TMP/$d" && "$LAUNCH" -q -o s.db -- /bin/echo hi) >out 2>err
	expect "exit status" $? 0
	expect "output" "$(cat out)" hi
	[ -s err ] && mi_why_add "lines on stderr"
	expect "processes" "$(snap_sql "$MI_TMP/$d/s.db" 'SELECT count(*) FROM session_process')" 1
	mi_verdict "run from a directory named '$d'" "$why" err stderr
done
why=
mkdir -p "$MI_TMP/my lib"
cp "$(readlink -f "$MEMINST_LIB")" "$MI_TMP/my lib/libmeminst.so"
(cd "$MI_TMP/my lib" &&
	"$LAUNCH" -q -o "$MI_TMP/lib1.db" --library="$MI_TMP/my lib/libmeminst.so" -- /bin/echo hi &&
	"$LAUNCH" -q -o "$MI_TMP/lib2.db" --library=./libmeminst.so -- /bin/sh -c 'cd / && /bin/echo hi') >out 2>err
expect "exit status" $? 0
expect "output" "$(cat out)" "hi
hi"
[ -s err ] && mi_why_add "lines on stderr"
expect "processes, a space in the path" "$(snap_sql lib1.db 'SELECT count(*) FROM session_process')" 1
expect "processes, a relative path" "$(snap_sql lib2.db 'SELECT count(*) FROM session_process')" 2
mi_verdict "--library with a space in its path, and a relative one" "$why" err stderr

# A process that switched to another user cannot create its sample file in
# the launcher's private directory: it says so and runs on, unsampled (it
# was stopped with status 2, the program never run).  As root only.
if [ "$(id -u)" = 0 ] && [ -x /usr/bin/setpriv ]; then
	why=
	"$LAUNCH" -q -o priv.db --snapshot-at=exit --interval=0 -- \
		/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups /bin/echo hi >out 2>err
	expect "exit status" $? 0
	expect "output" "$(cat out)" hi
	grep -q "^meminst: sampling is off$" err || mi_why_add "no line saying sampling is off"
	mi_verdict "a process that became another user runs on, unsampled" "$why" err stderr
fi
mi_finish
