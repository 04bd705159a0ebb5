#!/bin/sh
# jumps.sh — frames left without a return: longjmp and siglongjmp out of a
# 600-deep recursion, a longjmp into a frame of the same recursive function,
# and swapcontext coroutines (tests/trace/trace_jump.c).  The frames a jump
# skips are closed at the next call or return (the tracer follows the stack
# pointer), so that the callers' counts are exact and the work after the
# jump is the jump target's; a coroutine's frames, on a stack of their own,
# close none of the thread's (corothread: its stack lies above the
# thread's: more returns than calls when it did).  Preloaded, both clocks;
# built as the other targets and with sibling calls (trace_jump_tail: the
# return hooks reached by tail calls).
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  jumps: python3 is needed"; exit 77; }

for build in trace_jump trace_jump_tail; do
for clock in wall cpu; do
	for case in longjmp siglongjmp inner coro corothread; do
		why= JUMP=$top_builddir/tests/trace/$build
		TRACE=$MI_TMP/$build.$case.$clock.trace out=$MI_TMP/$build.$case.$clock.out
		if ! tr_run "$JUMP" "$out" "$TRACE" "trace=$clock,trace_file=$TRACE" "$case"; then
			mi_fail "$build $case $clock" "run or trace_check failed" "$out.err" stderr
			continue
		fi
		chk=$TRACE.chk
		for t in $(awk '$1 == "thread" { print $2 }' "$chk"); do
			[ "$(tr_field "$chk" "$t" lost)" = 0 ] || mi_why_add "thread $t lost records"
			# a frame closed twice (gone, then its own return): more
			# returns than calls (a coroutine's frame may stay open)
			[ "$(tr_field "$chk" "$t" returns)" -le "$(tr_field "$chk" "$t" calls)" ] ||
				mi_why_add "thread $t: $(tr_field "$chk" "$t" returns) returns, $(tr_field "$chk" "$t" calls) calls"
		done
		case $case in
		longjmp | siglongjmp | inner) # every frame closed: as many returns as calls
			[ "$(tr_field "$chk" 1 calls)" = "$(tr_field "$chk" 1 returns)" ] ||
				mi_why_add "$(tr_field "$chk" 1 calls) calls, $(tr_field "$chk" 1 returns) returns" ;;
		esac
		if tr_analyse "$TRACE"; then
			tr_assert "$TRACE.json" "$out" "$case" "$clock"
		else
			mi_why_add "inspect analyse failed: $(head -n 1 "$TRACE.json.err")"
		fi
		mi_verdict "$build $case trace=$clock" "$why" "$chk" trace "$out.err" stderr
	done
done
done
mi_finish
