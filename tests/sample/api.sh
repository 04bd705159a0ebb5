# api.sh — meminst_sample_start/stop/reset/active from a preloaded program
# (sample_target api: a bad setting is refused, a second start is refused,
# active shows timer and allocation sampling, reset drops what came before,
# stop ends both), bad MEMINST
# sampling values, a program with its own SIGPROF handler, and fork.
. "$top_srcdir/tests/sample/sample_lib.sh"

l=api
st_case $l "" "$ST_TARGET" api 600
want="api: before 0 bad -1 start 0 active 3 again -1 reset 0 stop 0 after 0 reset -1"
grep -qx "$want" "$MI_TMP/$l.out" || mi_why_add "printed '$(cat "$MI_TMP/$l.out")', not '$want'"
n=$(st_field $l samples)
[ "${n:-0}" -ge 200 ] || mi_why_add "only ${n:-0} samples between start and stop"
st_analyse $l
big=$(st_j $l "round(fn('burn_big').get('cum_percent', 0), 1)")
st_within "$big" 75 10 || mi_why_add "burn_big has $big% of the samples (the reset must drop the burn_small before it)"
[ "$(st_field $l resets)" = 1 ] || mi_why_add "no SAMPLE_RESET record"
grep -q "sample=0.*from 1 to 10000" "$MI_TMP/$l.err" || mi_why_add "no message for the bad start"
grep -q "already running" "$MI_TMP/$l.err" || mi_why_add "no message for the second start"
st_verdict "$l: start/stop/active ($n samples, burn_big $big%)"

# Bad values: one line naming the item, and the program does not run.
for bad in sample=0 sample=10001 sample=fast sample_clock=gpu sample_counts=maybe alloc_sample=0; do
	l=bad-$bad
	st_run "$l" "$bad" "$ST_TARGET" split 10
	rc=$?
	why=
	[ $rc -eq 2 ] || mi_why_add "exit status $rc, not 2"
	grep -q "^meminst: bad MEMINST item '$bad'" "$MI_TMP/$l.err" || mi_why_add "no message naming '$bad'"
	[ -s "$MI_TMP/$l.out" ] && mi_why_add "the program ran"
	st_verdict "$l refused"
done

if [ -x /usr/bin/python3 ]; then
	# The program uses SIGPROF itself (its own handler and ITIMER_PROF):
	# its handler gets its ticks, not ours, and Python's reset of the
	# handler at exit does not let a pending tick of ours kill it.
	l=own-sigprof
	st_case $l "sample=1000" /usr/bin/python3 -c '
import signal
hits = []
signal.signal(signal.SIGPROF, lambda s, f: hits.append(s))
signal.setitimer(signal.ITIMER_PROF, 0.01, 0.01)
x = 0
for i in range(3000000):
    x += i * i
signal.setitimer(signal.ITIMER_PROF, 0, 0)
print("done", x, "own ticks", "some" if 5 < len(hits) < 1000 else len(hits))'
	grep -q "^done .* own ticks some$" "$MI_TMP/$l.out" ||
		mi_why_add "printed '$(cat "$MI_TMP/$l.out")' (the program's handler must get its own ticks only)"
	n=$(st_field $l samples)
	[ "${n:-0}" -ge 100 ] || mi_why_add "only ${n:-0} samples of ours"
	mi_no_complaint "$MI_TMP/$l.err"
	st_verdict "$l: the program's own SIGPROF handler and timer ($n samples)"

	# fork: the child stops sampling (no timers cross fork), both finish.
	l=fork
	st_case $l "sample=1000,sample_clock=wall" /usr/bin/python3 -c '
import os
x = sum(i * i for i in range(300000))
pid = os.fork()
if pid == 0:
    y = sum(i for i in range(1000000))
    os._exit(0)
_, st = os.waitpid(pid, 0)
print("parent", x, "child status", st)'
	grep -q "child status 0" "$MI_TMP/$l.out" || mi_why_add "printed '$(cat "$MI_TMP/$l.out")'"
	mi_no_complaint "$MI_TMP/$l.err"
	st_verdict "$l: parent and child finish"
fi
mi_finish
