#!/bin/sh
# signals.sh — instrumented signal handlers that interrupt the tracer's
# hooks: a thread sends SIGUSR1 to the main thread as fast as it can while
# main calls leaf 2,000,000 times
# or more (until 20 signals were handled); the handler (on_signal, which calls
# sig_leaf twice) is instrumented too, so that it often comes in while a
# hook is writing its record.  Each handler run is then either recorded
# whole or dropped whole and counted (6 records: two calls and returns of
# sig_leaf, one of on_signal, told by LOST); main's own records are never
# touched, the trace decodes, is in time order and balances.  Both clocks.
# A handler that leaves by siglongjmp does not stop the tracing.
. "$top_srcdir/tests/trace/trace_lib.sh"

T=$MI_TMP

# storm NAME CLOCK CASE: a new case ($why empty): the target's CASE traced
# into $T/NAME.trace (read into NAME.trace.chk), up to three runs (the
# sender may get little CPU on a loaded machine) to see at least 20
# signals handled; $runs is how many.  Fails when a run or its check did.
storm() {
	why=
	for try in 1 2 3; do
		tr_run preload "$T/$1.out" "$T/$1.trace" "trace=$2,trace_file=$T/$1.trace" "$3" ||
			{ mi_why_add "run or trace_check failed"; return 1; }
		runs=$(awk '$1 == "storm" { print $3 }' "$T/$1.out")
		[ "${runs:-0}" -ge 20 ] && return 0
	done
	mi_why_add "only ${runs:-0} signals handled"
}

for clock in wall cpu; do
	if storm s "$clock" storm; then
		chk=$T/s.trace.chk
		leaf=$(tr_calls "$chk" 1 "$(tr_addr "$T/s.out" leaf)")
		on=$(tr_calls "$chk" 1 "$(tr_addr "$T/s.out" on_signal)")
		sig=$(tr_calls "$chk" 1 "$(tr_addr "$T/s.out" sig_leaf)")
		calls=$(tr_field "$chk" 1 calls) returns=$(tr_field "$chk" 1 returns)
		lost=$(tr_field "$chk" 1 lost) unordered=$(tr_field "$chk" 1 unordered)
		want=$(awk '$1 == "fn" && $2 == "leaf" { print $4 }' "$T/s.out")
		[ "$leaf" = "$want" ] || mi_why_add "leaf: $leaf calls, not $want"
		[ "$calls" = "$returns" ] || mi_why_add "$calls calls, $returns returns"
		[ "$unordered" = 0 ] || mi_why_add "$unordered records out of time order"
		[ "$sig" = $((2 * on)) ] || mi_why_add "sig_leaf $sig calls for $on of on_signal"
		[ $((lost % 6)) = 0 ] && [ $((on + lost / 6)) = "$runs" ] ||
			mi_why_add "$runs handler runs: $on recorded and $lost records lost"
		"$TR_INSPECT" analyse "$T/s.trace" >/dev/null 2>"$T/s.an.err" || mi_why_add "analyse failed"
		[ -s "$T/s.an.err" ] && mi_why_add "analyse complained"
	fi
	mi_verdict "trace=$clock: a signal storm with an instrumented handler (${runs:-0} runs, ${on:-0} recorded)" \
		"$why" "$T/s.out.err" stderr "$T/s.an.err" analyse
done

# A handler that leaves by siglongjmp, often out of the middle of a hook or
# a flush: tracing goes on (the abandoned claim is taken over, no flush is
# left half done), final_leaf's 100,000 calls after the storm are all
# there and the trace decodes in order.
if storm j wall jumps; then
	final=$(tr_calls "$T/j.trace.chk" 1 "$(tr_addr "$T/j.out" final_leaf)")
	[ "$final" = 100000 ] || mi_why_add "final_leaf: $final calls, not 100000"
	[ "$(tr_field "$T/j.trace.chk" 1 unordered)" = 0 ] || mi_why_add "records out of time order"
	"$TR_INSPECT" analyse "$T/j.trace" >/dev/null 2>"$T/j.an.err" || mi_why_add "analyse failed"
fi
mi_verdict "a handler leaving by siglongjmp (${runs:-0} runs): tracing goes on" "$why" \
	"$T/j.out.err" stderr "$T/j.an.err" analyse

mi_finish
