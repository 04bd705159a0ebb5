#!/bin/sh
# dormant.sh — dormant, then on: tests/session/dormant (four threads that
# allocate, reallocate and free without pause, handing blocks to each other)
# preloaded with MEMINST=off,control=on and switched on and off while it
# runs by `inspect start` / `inspect stop`, several times:
#   - counted_site's calls, read live after each phase, are exactly the
#     pairs made while on (the pairs made while off are not counted); the
#     load's blocks made while off are freed while on and the other way
#     round without a complaint; the output and exit status are those of an
#     uninstrumented run;
#   - mim: a map snapshot after the switch, a start in another mode refused;
#   - meminst --dormant: the session's exit snapshot counts what was made
#     after the start, and its heading, report (text, JSON) and html say
#     since when; start --sample=1000 samples the load into the session's
#     trace until stop; --site-depth=3 keys sites by 3 frames, and a later
#     start with another depth is refused;
#   - the switch signal (SIGRTMAX-5) switches on, then off;
#   - refusals, one line each: a snapshot of a process never switched on,
#     start twice, stop while off, start of a process not started dormant,
#     inspect start without --pid, --mis with --mim, a bad --site-depth or
#     --sample.
. "$top_srcdir/tests/session/session_lib.sh"

PROG=$top_builddir/tests/session/dormant
TPID=
WPID=
finish() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	wait 2>/dev/null
}
trap 'finish; mi_cleanup' EXIT

# launch NAME COMMAND...: run COMMAND (its last argument the FIFO NAME.fifo)
# in the background with its commands on descriptor 3; waits for "ready
# PID", sets TPID to the program's pid (under a timeout, or the launcher,
# it is not $!) and WPID to $!.
launch() {
	name=$1
	shift
	rm -f "$name.fifo" "$name.out"
	DONE=0 SUM=0
	echo ready >"$name.expect"
	mkfifo "$name.fifo" || exit 99
	"$@" >"$name.out" 2>"$name.err" &
	WPID=$!
	exec 3>"$name.fifo"
	wait_line "$name" ready 1
	TPID=$(sed -n 's/^ready //p' "$name.out")
}

# wait_line NAME WORD N: until NAME.out has N lines starting with WORD (a
# minute at most: the program may be slow under load, never stuck).
wait_line() {
	i=0
	while [ "$(grep -c "^$2" "$1.out")" -lt "$3" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

DONE=0
# phase NAME N: N counted pairs, waited for.
phase() {
	echo "count $2" >&3
	DONE=$((DONE + 1)) SUM=$((SUM + $2))
	echo "done $2" >>"$1.expect"
	wait_line "$1" done "$DONE"
}

# calls: counted_site's calls in the live process's status.
calls() {
	"$INSPECT" status --pid "$TPID" --types --json >st.json 2>st.err || { echo "error"; return; }
	sed -n 's/.*"name": "counted_site[^"]*",.*"calls": \([0-9]*\),.*/\1/p' st.json
}

# quit NAME: end the program; rc its exit status; NAME.out compared with
# what the program prints whatever runs it (as the uninstrumented run shows).
quit() {
	echo "loaders 4 counted $SUM" >>"$1.expect"
	echo quit >&3
	exec 3>&-
	wait "$WPID"
	rc=$?
	TPID=
	WPID=
	sed 's/^ready .*/ready/' "$1.out" | cmp -s - "$1.expect" || mi_why_add "the output is not the program's own"
}

# ---- the reference ----------------------------------------------------------
DONE=0
launch ref "$PROG" ref.fifo
phase ref 1000; phase ref 300; phase ref 2000; phase ref 300; phase ref 1500; phase ref 300; phase ref 700
why=
quit ref
ref_rc=$rc
[ $ref_rc -eq 0 ] && [ -z "$why" ] ||
	{ mi_fail "the uninstrumented run" "exit $ref_rc" ref.out stdout ref.err stderr; mi_finish; }

# ---- mis, on and off four times under load -------------------------------------
why=
DONE=0
MI_MEMINST=off,control=on launch mis mi_x "$PROG" mis.fifo
"$INSPECT" status --pid "$TPID" >/dev/null 2>dormant.err && mi_why_add "status of a dormant process worked"
grep -q 'meminst is dormant in this process' dormant.err || mi_why_add "dormant status: $(cat dormant.err)"
"$INSPECT" stop --pid "$TPID" >/dev/null 2>stop.err && mi_why_add "stop while off worked"
grep -q 'meminst is off already' stop.err || mi_why_add "stop while off: $(cat stop.err)"
expect=0
for n in 1000 2000 1500 700; do
	"$INSPECT" start --pid "$TPID" >start.out 2>start.err || mi_why_add "start exited $?: $(cat start.err)"
	phase mis $n
	expect=$((expect + n))
	got=$(calls)
	[ "$got" = $expect ] || mi_why_add "after $n pairs on: counted_site calls $got, expected $expect"
	[ $n = 700 ] && break
	if [ $n = 1000 ]; then
		"$INSPECT" start --pid "$TPID" >/dev/null 2>again.err && mi_why_add "start twice worked"
		grep -q 'meminst is on already (mis)' again.err || mi_why_add "start twice: $(cat again.err)"
		"$INSPECT" start --mim --pid "$TPID" >/dev/null 2>mode.err
	fi
	"$INSPECT" stop --pid "$TPID" >/dev/null 2>stop.err || mi_why_add "stop exited $?: $(cat stop.err)"
	phase mis 300
	got=$(calls)
	[ "$got" = $expect ] || mi_why_add "after 300 pairs off: counted_site calls $got, expected $expect"
done
quit mis
[ $rc -eq $ref_rc ] || mi_why_add "exit status $rc, uninstrumented $ref_rc"
mi_no_complaint mis.err
mi_verdict "mis: switched on and off 4 times under load, counts exact from each switch on, output unchanged" \
	"$why" mis.out stdout mis.err stderr st.json status

# ---- mim ------------------------------------------------------------------------
why=
DONE=0
MI_MEMINST=off,control=on launch mim mi_x "$PROG" mim.fifo
"$INSPECT" start --mim --pid "$TPID" >start.out 2>start.err || mi_why_add "start --mim exited $?: $(cat start.err)"
grep -q "meminst on (mim)" start.out || mi_why_add "start said: $(cat start.out)"
phase mim 1000
"$INSPECT" snapshot --pid "$TPID" -o "$MI_TMP/mim.db" >/dev/null 2>snap.err || mi_why_add "snapshot: $(cat snap.err)"
"$INSPECT" stop --pid "$TPID" >/dev/null 2>&1 || mi_why_add "stop --mim exited $?"
phase mim 300
"$INSPECT" start --mis --pid "$TPID" >/dev/null 2>mode.err && mi_why_add "start --mis after mim worked"
grep -q 'it can only be switched on in mim again' mode.err || mi_why_add "start --mis after mim: $(cat mode.err)"
"$INSPECT" start --mim --pid "$TPID" >/dev/null 2>start.err || mi_why_add "start --mim again: $(cat start.err)"
phase mim 2000
got=$(calls)
[ "$got" = 3000 ] || mi_why_add "counted_site calls $got, expected 3000"
quit mim
[ $rc -eq 0 ] || mi_why_add "exit status $rc"
"$INSPECT" top mim.db --json >top.json 2>top.err || mi_why_add "top of the mim snapshot exited $?"
grep -q '"name": "loader+' top.json || mi_why_add "no live block of the load in the map snapshot"
mi_no_complaint mim.err
mi_verdict "mim: a map snapshot after the switch, counts exact, another mode refused" \
	"$why" mim.out stdout mim.err stderr top.json top

# ---- meminst --dormant --------------------------------------------------------
why=
DONE=0
launch ses "$LAUNCH" -q --dormant -o ses.db -- "$PROG" ses.fifo
phase ses 400
"$INSPECT" start --pid "$TPID" --sample=1000 --site-depth=3 >start.out 2>start.err ||
	mi_why_add "start --sample --site-depth exited $?: $(cat start.err)"
grep -q 'meminst on (mis), CPU samples at 1000 Hz' start.out || mi_why_add "start said: $(cat start.out)"
phase ses 900
"$INSPECT" stop --pid "$TPID" >/dev/null 2>stop.err || mi_why_add "stop exited $?: $(cat stop.err)"
"$INSPECT" start --pid "$TPID" --site-depth=5 >/dev/null 2>depth.err && mi_why_add "another --site-depth worked"
grep -q 'was on with sites 3 frames deep before' depth.err || mi_why_add "another --site-depth: $(cat depth.err)"
"$INSPECT" start --pid "$TPID" --site-depth=3 >/dev/null 2>start.err || mi_why_add "start again: $(cat start.err)"
phase ses 100
quit ses
[ $rc -eq 0 ] || mi_why_add "meminst --dormant exited $rc"
"$INSPECT" status ses.db --types --json >ses.json 2>ses.err || mi_why_add "status of the session exited $?"
got=$(sed -n 's/.*"name": "counted_site[^"]*",.*"calls": \([0-9]*\),.*/\1/p' ses.json)
[ "$got" = 1000 ] || mi_why_add "the session's counted_site calls: $got, expected 1000"
grep -q '"since_ms": [0-9]' ses.json || mi_why_add "no since_ms in the session's status"
"$INSPECT" status ses.db >ses.txt 2>>ses.err
grep -q 'counting since .* (switched on)' ses.txt || mi_why_add "the heading does not say since when"
"$INSPECT" report ses.db >rep.txt 2>>ses.err || mi_why_add "report exited $?"
grep -q 'counting since' rep.txt || mi_why_add "the report does not say since when"
"$INSPECT" report ses.db --json >rep.json 2>>ses.err
grep -q '"since_ms": [0-9]' rep.json || mi_why_add "no since_ms in the report's JSON"
"$INSPECT" html ses.db -o ses.html 2>>ses.err || mi_why_add "html exited $?"
grep -q 'counting since</th><td>[0-9].* (switched on)' ses.html || mi_why_add "the html report does not say since when"
# the sampler ran from start --sample to stop: the loaders' samples are in
# the session's trace; sites 3 frames deep: counted_site's type is a stack
"$INSPECT" export ses.db --format folded >ses.folded 2>>ses.err || mi_why_add "export of the samples exited $?"
grep -q 'loader' ses.folded || mi_why_add "no sample of the loaders in the session: $(head -3 ses.folded)"
grep -q '<- start_thread' rep.txt || mi_why_add "the loaders' sites are not 3 frames deep in the report"
mi_verdict "meminst --dormant: the session counts from the switch on, start --sample --site-depth, since in status, report and html" \
	"$why" ses.err stderr ses.json status ses.folded folded rep.txt report

# ---- the switch signal -------------------------------------------------------
why=
DONE=0
SWITCH_SIG=59 # SIGRTMAX-5 on Linux, the default switch_signal
MI_MEMINST=off,control=on launch sig mi_x "$PROG" sig.fifo
kill -$SWITCH_SIG "$TPID"
i=0
until "$INSPECT" status --pid "$TPID" >/dev/null 2>&1 || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
phase sig 500
got=$(calls)
[ "$got" = 500 ] || mi_why_add "after the signal and 500 pairs: counted_site calls $got, expected 500"
kill -$SWITCH_SIG "$TPID"
# off once a phase adds nothing more
i=0
before=$(calls)
while [ $i -lt 300 ]; do
	phase sig 1
	now=$(calls)
	[ "$now" = "$before" ] && break
	before=$now
	i=$((i + 1))
done
phase sig 300
got=$(calls)
[ "$got" = "$before" ] || mi_why_add "after the second signal: calls $got, expected $before"
quit sig
[ $rc -eq 0 ] || mi_why_add "exit status $rc"
mi_no_complaint sig.err
mi_verdict "the switch signal (SIGRTMAX-5) switches on, then off" "$why" sig.out stdout sig.err stderr

# ---- refusals --------------------------------------------------------------------
why=
DONE=0
MI_MEMINST=mis,control=on launch on mi_x "$PROG" on.fifo
"$INSPECT" start --pid "$TPID" >/dev/null 2>on.err
r=$?
[ $r -eq 4 ] || mi_why_add "start of a process started in mis: exit $r, expected 4"
grep -q 'was not started dormant' on.err && [ "$(wc -l <on.err)" -eq 1 ] || mi_why_add "start of mis: $(cat on.err)"
quit on
"$INSPECT" start >/dev/null 2>use.err
r=$?
[ $r -eq 2 ] && grep -q 'needs --pid PID' use.err || mi_why_add "start without --pid: exit $r, $(cat use.err)"
"$INSPECT" start --mis --mim --pid 1 >/dev/null 2>use.err
r=$?
[ $r -eq 2 ] && grep -q 'exclude each other' use.err || mi_why_add "--mis --mim: exit $r, $(cat use.err)"
for bad in --site-depth=0 --site-depth=33 --site-depth=x --sample=0 --sample=10001; do
	"$INSPECT" start --pid 1 "$bad" >/dev/null 2>use.err
	r=$?
	[ $r -eq 2 ] && [ "$(wc -l <use.err)" -eq 1 ] || mi_why_add "start $bad: exit $r, $(cat use.err)"
done
mi_verdict "refusals: one line, non-zero status" "$why"

mi_finish
