#!/bin/sh
# diskfull.sh — a trace file that cannot grow (here: over the program's
# file size limit, ulimit -f, which needs no root and no mount): the error
# is said at once on one line with the path and errno, the file ends with
# its last complete chunk and stays readable, and the program runs as it
# would without meminst: same output, same exit status, never killed by a
# SIGXFSZ our writes raised (its own writes still raise it).
. "$top_srcdir/tests/trace/trace_lib.sh"

T=$MI_TMP
mi_fsize_unit # the bytes of one unit of ulimit -f
block=$mi_fsize

"$TR_TARGET" loop300000 >"$T/ref.raw" 2>"$T/ref.err" || exit 99
awk '{ $3 = "ADDR" } 1' "$T/ref.raw" >"$T/ref.out" # the address moves from run to run

# blocks: 0 (not even the header), 1 (the header, not the first chunk),
# 64 (a few chunks, then the limit inside the run)
for blocks in 0 1 64; do
	why=
	trace=$T/lim$blocks.trace
	rm -f "$trace"
	# the limit covers every file the program writes: its output goes
	# through a pipe, and so does its status
	(
		ulimit -f "$blocks" || exit 98
		MI_MEMINST="trace=wall,trace_file=$trace"
		mi_x "$TR_TARGET" loop300000 2>&1
		echo "status $?"
	) | cat >"$T/lim.all"
	grep -v '^meminst:\|^status ' "$T/lim.all" | awk '{ $3 = "ADDR" } 1' >"$T/lim.out"
	grep '^meminst:' "$T/lim.all" >"$T/lim.err"
	rc=$(awk '$1 == "status" { print $2 }' "$T/lim.all")
	[ "$rc" = 0 ] || mi_why_add "exit status ${rc:-none} (killed by SIGXFSZ?)"
	cmp -s "$T/ref.out" "$T/lim.out" || mi_why_add "stdout differs"
	# and with no room for the header, that tracing is off
	[ "$(grep -vc 'tracing is off' "$T/lim.err")" = 1 ] || mi_why_add "not one line on stderr"
	grep -q "^meminst: cannot write trace file $trace: .*(errno 27)" "$T/lim.err" ||
		mi_why_add "no line with the path and errno 27 (EFBIG)"
	size=$(wc -c <"$trace" 2>/dev/null || echo 0)
	[ "$size" -le $((blocks * block)) ] || mi_why_add "$size bytes, over the limit"
	if [ "$blocks" -gt 0 ]; then
		"$TR_CHECK" "$trace" >"$T/lim.chk" 2>>"$T/lim.err" || mi_why_add "trace unreadable"
		grep -q '^truncated' "$T/lim.chk" && mi_why_add "a torn chunk was left"
		grep -q '^end$' "$T/lim.chk" && mi_why_add "an END record in a cut file"
		"$TR_INSPECT" analyse "$trace" >"$T/lim.an" 2>"$T/lim.an.err" ||
			mi_why_add "inspect analyse failed"
		grep -q "^inspect: $trace: the trace was cut at byte $size " "$T/lim.an.err" ||
			mi_why_add "analyse did not say where the trace was cut"
		cat "$T/lim.an.err" >>"$T/lim.err"
	fi
	mi_verdict "ulimit -f $blocks: said once, file valid, program unchanged" "$why" \
		"$T/lim.err" stderr "$T/lim.chk" check
done

# After the failed write tracing stops: the hooks no longer record into
# buffers nobody writes (meminst_trace_active says so; linked target).
why=
(
	ulimit -f 64 || exit 98
	MI_MEMINST="trace=wall,trace_file=$T/stop.trace"
	mi_xl "$TR_LINKED" fullstop 300000 2>&1
	echo "status $?"
) | cat >"$T/stop.all"
grep -q '^status 0$' "$T/stop.all" || mi_why_add "exit status not 0"
grep -q '^active 0$' "$T/stop.all" || mi_why_add "still tracing after the failed write"
[ "$(grep -c '^meminst:' "$T/stop.all")" = 1 ] || mi_why_add "not one line on stderr"
grep -q "^meminst: cannot write trace file $T/stop.trace: .*(errno 27).*tracing stops" "$T/stop.all" ||
	mi_why_add "no line with the path, errno 27 and that tracing stops"
"$TR_CHECK" "$T/stop.trace" >"$T/stop.chk" 2>>"$T/stop.all" || mi_why_add "trace unreadable"
mi_verdict "a failed write stops tracing" "$why" "$T/stop.all" output

# Sampling into the same file stops with it: its timers (cpu) or the wall
# sampler send the program nothing more (SIGPROF blocked for 0.3 s of CPU
# after the failure stays not pending), and the line says so.  The same
# run without the limit shows the test can see ticks.
for clock in cpu wall; do
	why=
	for lim in 64 unlimited; do
		(
			ulimit -f "$lim" || exit 98
			MI_MEMINST="trace=wall,sample=1000,sample_clock=$clock,trace_file=$T/samp.trace"
			mi_xl "$TR_LINKED" sampstop 300000 2>&1
			echo "status $?"
		) | cat >"$T/samp.$lim"
		rm -f "$T/samp.trace"
		grep -q '^status 0$' "$T/samp.$lim" || mi_why_add "ulimit $lim: exit status not 0"
	done
	grep -q '^sigprof pending 0$' "$T/samp.64" || mi_why_add "ticks still sent after the failed write"
	grep -q '^sampling 0$' "$T/samp.64" || mi_why_add "still sampling after the failed write"
	[ "$(grep -c '^meminst:' "$T/samp.64")" = 1 ] || mi_why_add "not one line on stderr"
	grep -q "^meminst: cannot write trace file $T/samp.trace: .*(errno 27).*tracing and sampling stop" \
		"$T/samp.64" || mi_why_add "the line does not say that sampling stops"
	grep -q '^sigprof pending 1$' "$T/samp.unlimited" || mi_why_add "no tick pending without the limit"
	grep -q '^sampling 0$' "$T/samp.unlimited" && mi_why_add "not sampling without the limit"
	mi_verdict "a failed write stops $clock sampling" "$why" "$T/samp.64" limited "$T/samp.unlimited" unlimited
done

# Written to its end: the END record, and no word of a cut.
why=
if tr_run preload "$T/whole.out" "$T/whole.trace" "trace=wall,trace_file=$T/whole.trace" loop300000; then
	grep -q '^end$' "$T/whole.trace.chk" || mi_why_add "no END record"
	"$TR_INSPECT" analyse "$T/whole.trace" >/dev/null 2>"$T/whole.err" || mi_why_add "analyse failed"
	[ -s "$T/whole.err" ] && mi_why_add "analyse complained"
else
	mi_why_add "run failed"
fi
mi_verdict "a whole trace ends with END" "$why" "$T/whole.err" stderr

# Under the launcher: its closing lines say which trace was cut and what
# the session holds; the exit status is the program's.  The limit is the
# program's alone (the session database must not be cut).  --no-memory:
# an exit snapshot over the limit is not this test's subject.
why=
MEMINST_SESSION=$top_builddir/session/meminst
(
	cd "$T" || exit 99
	"$MEMINST_SESSION" --library="$MEMINST_LIB" --trace --no-memory -o "$T/cut.db" \
		sh -c "ulimit -f 64; exec '$TR_TARGET' loop300000" 2>&1
	echo "status $?"
) | cat >"$T/sess.all"
grep -q '^status 0$' "$T/sess.all" || mi_why_add "exit status not the program's 0"
grep -q "^meminst: cannot write trace file .*(errno 27)" "$T/sess.all" || mi_why_add "no write error"
grep -q "^meminst: the trace of process [0-9]* is cut after [0-9.]* kB .*the session holds what was written" \
	"$T/sess.all" || mi_why_add "the launcher did not say the trace was cut"
# the process ran two programs (sh exec'd the target): the target's trace,
# the cut one, is image 1.  The default image is the one that did more
# (here both did next to nothing: either); when it is sh's, the line on
# the process's programs says image 1 was cut (it was silent)
"$TR_INSPECT" report "$T/cut.db" >"$T/sess.out" 2>"$T/sess.err" || mi_why_add "inspect report failed"
grep -q "the trace was cut at byte" "$T/sess.err" ||
	grep -q "^process [0-9]* ran 2 programs; shown: image 0 .* image 1 ([^)]*, its trace cut)" "$T/sess.out" ||
	mi_why_add "report (default image) did not say image 1's trace was cut"
"$TR_INSPECT" report --json "$T/cut.db" 2>/dev/null | grep -q '"image": 1, "program": "[^"]*", "samples": [0-9]*, "calls": [0-9]*, "cut": true' ||
	mi_why_add "report --json: image 1 not \"cut\": true"
"$TR_INSPECT" report --image 1 "$T/cut.db" >/dev/null 2>"$T/sess.err" || mi_why_add "inspect report --image 1 failed"
grep -q "the trace was cut at byte" "$T/sess.err" || mi_why_add "report --image 1 did not say the trace was cut"
mi_verdict "launcher: the cut trace said, status kept" "$why" "$T/sess.all" output "$T/sess.out" report "$T/sess.err" stderr

# The program's own write over the limit still raises SIGXFSZ, which
# still kills it (the same status as without meminst).
why=
(
	ulimit -f 0
	TRACE_TARGET_FILE=$T/own.txt "$TR_TARGET" closefds
) >/dev/null 2>&1
plain=$?
(
	ulimit -f 0
	MI_MEMINST="trace=wall,trace_file=$T/own.trace"
	TRACE_TARGET_FILE=$T/own.txt mi_x "$TR_TARGET" closefds
) >/dev/null 2>"$T/own.err"
rc=$?
[ $plain -gt 128 ] || mi_why_add "the plain run was not killed ($plain)"
[ $rc = $plain ] || mi_why_add "exit status $rc, $plain without meminst"
mi_verdict "the program's own SIGXFSZ unchanged" "$why" "$T/own.err" stderr

# A snapshot over the limit: SQLite's write fails, the program is not killed
# by the SIGXFSZ it raised, and nothing half-written is left behind.
why=
"$TR_TARGET" grow 2>/dev/null | awk '{ $3 = "ADDR" } 1' >"$T/grow.ref"
rm -f "$T/s.db" "$T/s.db-journal"
(
	ulimit -f 16 || exit 98
	MI_MEMINST="mim,snapshot=$T/s.db"
	mi_x "$TR_TARGET" grow 2>&1
	echo "status $?"
) | cat >"$T/snap.all"
rc=$(awk '$1 == "status" { print $2 }' "$T/snap.all")
[ "$rc" = 0 ] || mi_why_add "exit status ${rc:-none} (killed by SIGXFSZ?)"
grep -v '^meminst:\|^status ' "$T/snap.all" | awk '{ $3 = "ADDR" } 1' | cmp -s - "$T/grow.ref" || mi_why_add "stdout differs"
grep -q "^meminst: snapshot $T/s.db: cannot " "$T/snap.all" || mi_why_add "no line naming the snapshot file"
[ -e "$T/s.db" ] && mi_why_add "a snapshot file it could not finish was left"
[ -e "$T/s.db-journal" ] && mi_why_add "a journal was left"
mi_verdict "snapshot over ulimit -f: said, nothing left, program unchanged" "$why" "$T/snap.all" output

mi_finish
