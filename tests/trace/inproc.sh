#!/bin/sh
# inproc.sh — the in-process profiler (trace_output=profile): the same
# program traced to a file and profiled in the process gives the same
# threads, functions and caller->called pairs with the same CNT; the
# profile's figures pass the same assertions as the trace's (suspend,
# <alloc>, OWN <= ACC); the result file is small; a forked child writes
# its own; the API writes the file at meminst_trace_stop.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  inproc: python3 is needed"; exit 77; }

T=$MI_TMP

# run CASE CLOCK OUTPUT: the trace or profile in $T/CASE.CLOCK.OUTPUT.trace
run() {
	f=$T/$1.$2.$3.trace
	rm -f "$f" "$f".*
	MI_MEMINST="trace=$2,trace_output=$3,trace_file=$f"
	mi_x "$TR_TARGET" "$1" >"$f.out" 2>"$f.err"
	rc=$?
	unset MI_MEMINST
	[ $rc -eq 0 ] && tr_analyse "$f"
}

for clock in wall cpu; do
	for case in rec mutual deep threads sleep alloc; do
		why=
		ev=$T/$case.$clock.events.trace pr=$T/$case.$clock.profile.trace
		if ! run "$case" "$clock" events || ! run "$case" "$clock" profile; then
			mi_fail "profile $clock $case" "run or analyse failed" "$ev.err" events "$pr.err" profile \
				"$pr.json.err" analyse
			continue
		fi
		tr_same "$ev.json" "$pr.json"
		tr_assert "$pr.json" "$pr.out" "$case" "$clock"
		size=$(wc -c <"$pr")
		[ "$size" -lt 65536 ] || mi_why_add "profile file of $size bytes"
		[ "$case" != deep ] || [ "$(wc -c <"$ev")" -gt $((4 * size)) ] ||
			mi_why_add "profile ($size bytes) not much smaller than the trace ($(wc -c <"$ev"))"
		"$TR_CHECK" "$pr" >"$pr.chk" 2>&1 || mi_why_add "trace_check refuses the profile file"
		mi_verdict "profile = trace, $clock $case" "$why" "$pr.json" profile "$pr.err" stderr
	done
done

# fork: the child profiles into FILE.PID
why=
if run fork wall profile; then
	f=$T/fork.wall.profile.trace
	child=$(awk '$1 == "child" { print $2 }' "$f.out")
	if [ -f "$f.$child" ] && tr_analyse "$f.$child"; then
		leafs() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(x["calls"] for x in j["threads"][0]["functions"] if x["name"] == "leaf"))' "$1"; }
		[ "$(leafs "$f.$child.json")" = 5 ] || mi_why_add "child: leaf $(leafs "$f.$child.json"), not 5"
		[ "$(leafs "$f.json")" = 7 ] || mi_why_add "parent: leaf $(leafs "$f.json"), not 7"
	else
		mi_why_add "no readable profile for the child $child"
	fi
else
	mi_why_add "run failed"
fi
mi_verdict "profile of a forked child" "$why" "$T/fork.wall.profile.trace.err" stderr

# the API: written at meminst_trace_stop, only the traced calls
why=
f=$T/api.trace
rm -f "$f"
if mi_xl "$TR_LINKED" apiprof "$f" >"$f.out" 2>"$f.err" && tr_analyse "$f"; then
	tr_assert "$f.json" "$f.out" apiprof wall
	grep -q "written at stop" "$f.out" || mi_why_add "no file after the stop"
else
	mi_why_add "run or analyse failed"
fi
mi_verdict "meminst_trace_start(trace_output=profile) and stop" "$why" "$f.err" stderr "$f.json.err" analyse

# a profile that cannot be written whole (ulimit -f) leaves the last one
# there as it was, and nothing half-written: one line, the program unchanged
why=
f=$T/lim.profile.trace
rm -f "$f" "$f".*
if MI_MEMINST="trace=wall,trace_output=profile,trace_file=$f" mi_x "$TR_TARGET" deep >/dev/null 2>"$f.err0" &&
	cp "$f" "$f.before" && [ "$(wc -c <"$f")" -gt 1024 ]; then
	(
		ulimit -f 1 || exit 98
		MI_MEMINST="trace=wall,trace_output=profile,trace_file=$f"
		mi_x "$TR_TARGET" deep 2>&1 >/dev/null
		echo "status $?"
	) | cat >"$f.all"
	grep -q '^status 0$' "$f.all" || mi_why_add "exit status not 0 (killed by SIGXFSZ?)"
	[ "$(grep -c '^meminst:' "$f.all")" = 1 ] || mi_why_add "not one line on stderr"
	grep -q "^meminst: cannot write the profile to $f: File too large (errno 27); the file there is left" \
		"$f.all" || mi_why_add "no line with the path and errno"
	cmp -s "$f" "$f.before" || mi_why_add "the last profile was changed"
	ls "$f".*.tmp >/dev/null 2>&1 && mi_why_add "a half-written profile was left"
else
	mi_why_add "the first run failed"
fi
mi_verdict "a profile over ulimit -f: the last one kept, one line" "$why" "$f.all" output "$f.err0" stderr

# sampling cannot go to a profile: refused, one line
why=
MI_MEMINST="trace=wall,trace_output=profile,sample=100"
mi_x "$TR_TARGET" rec >"$T/bad.out" 2>"$T/bad.err" && mi_why_add "program ran"
unset MI_MEMINST
grep -q "trace_output=profile" "$T/bad.err" || mi_why_add "no message"
mi_verdict "trace_output=profile with sampling refused" "$why" "$T/bad.err" stderr

mi_finish
