#!/bin/sh
# calls.sh — exact tracing counts every call: recursion, mutual recursion,
# a 10000-deep stack, four threads, a function that sleeps (suspend) and
# one that allocates (<alloc>), and a fork; preloaded (gcc, and clang when
# installed) and linked, wall and cpu clocks, modes off, mis and mim.
. "$top_srcdir/tests/trace/trace_lib.sh"

CASES="rec mutual deep threads sleep alloc fork"

# check_case LABEL CASE OUT CHK CLOCK: the case's assertions; prints the reason.
check_case() {
	label=$1 case=$2 out=$3 chk=$4 clock=$5 why=
	for t in $(awk '$1 == "thread" { print $2 }' "$chk"); do
		[ "$(tr_field "$chk" "$t" unordered)" = 0 ] || mi_why_add "thread $t out of order"
		[ "$(tr_field "$chk" "$t" lost)" = 0 ] || mi_why_add "thread $t lost records"
		[ "$(tr_field "$chk" "$t" calls)" = "$(tr_field "$chk" "$t" returns)" ] ||
			[ "$case" = fork ] || mi_why_add "thread $t calls and returns differ"
	done
	case $case in
	threads)
		nthreads=$(grep -c '^thread' "$chk")
		[ "$nthreads" = 5 ] || mi_why_add "$nthreads threads, expected 5"
		leaf=$(tr_addr "$out" leaf)
		got=$(for t in 2 3 4 5; do tr_calls "$chk" $t "$leaf"; done | sort -n | tr '\n' ' ')
		[ "$got" = "1000 2000 3000 4000 " ] || mi_why_add "leaf per thread: $got"
		for t in 2 3 4 5; do
			[ "$(tr_field "$chk" $t parent)" = 1 ] || mi_why_add "thread $t: parent not 1"
			[ "$(tr_field "$chk" $t exit)" = 1 ] || mi_why_add "thread $t: no THREAD_EXIT"
		done
		;;
	fork)
		child=$(awk '$1 == "child" { print $2 }' "$out")
		cfile=$(ls "$TRACE".* 2>/dev/null | grep -v '\.chk$' | head -n 1)
		if [ -z "$cfile" ]; then
			mi_why_add "no trace file for the child"
		else
			"$TR_CHECK" "$cfile" >"$cfile.chk" 2>&1 || mi_why_add "child trace unreadable"
			leaf=$(tr_addr "$out" leaf)
			[ "$(tr_calls "$cfile.chk" 1 "$leaf")" = 5 ] || mi_why_add "child: leaf not 5"
			grep -q "^header [0-9]* [0-9]* $child " "$cfile.chk" || mi_why_add "child pid not in header"
			[ "$(tr_calls "$chk" 1 "$leaf")" = 7 ] || mi_why_add "parent: leaf not 7"
		fi
		;;
	*)
		for fn in $(awk '$1 == "fn" { print $2 }' "$out"); do
			got=$(tr_calls "$chk" 1 "$(tr_addr "$out" "$fn")")
			[ "$got" = "$(tr_expect "$out" "$fn")" ] ||
				mi_why_add "$fn called $got times, expected $(tr_expect "$out" "$fn")"
		done
		;;
	esac
	if [ "$case" = sleep ]; then
		[ "$(awk '$1 == "suspend" && $2 == 1 && $3 == 1 { print $4 }' "$chk")" = 3 ] ||
			mi_why_add "not 3 sleep suspends"
		sus=$(awk '$1 == "thread" && $2 == 1 { print $13 }' "$chk")
		# wall: three 20 ms sleeps; cpu: almost no CPU time while asleep
		if [ "$clock" = wall ]; then
			[ "${sus%.*}" -ge 55000000 ] || mi_why_add "suspended only $sus ns of wall time"
		else
			[ "${sus%.*}" -lt 30000000 ] || mi_why_add "suspended $sus ns of cpu time"
		fi
	fi
	if [ "$case" = alloc ]; then
		m=$(awk '$1 == "alloc" && $2 == 1 && $3 == 1 { print $4 }' "$chk")
		f=$(awk '$1 == "alloc" && $2 == 1 && $3 == 5 { print $4 }' "$chk")
		[ "${m:-0}" -ge 1000 ] && [ "${f:-0}" -ge 1000 ] ||
			mi_why_add "<alloc>: ${m:-0} mallocs, ${f:-0} frees, expected >= 1000 each"
	fi
	mi_verdict "$label" "$why" "$chk" trace "$out.err" stderr
}

run_config() { # HOW NAME MEMINST-PREFIX CLOCK
	for case in $CASES; do
		TRACE=$MI_TMP/$2.$4.$case.trace
		out=$MI_TMP/$2.$4.$case.out
		if ! tr_run "$1" "$out" "$TRACE" "${3}trace=$4,trace_file=$TRACE" "$case"; then
			mi_fail "$2 $4 $case" "run or trace_check failed" "$out.err" stderr
			continue
		fi
		check_case "$2 ${3}trace=$4 $case" "$case" "$out" "$TRACE.chk" "$4"
	done
}

run_config preload gcc "" wall
run_config preload gcc "mis," cpu
run_config preload gcc "mim," wall
run_config linked linked "" cpu
run_config linked linked "mim," wall

if command -v clang >/dev/null 2>&1; then
	CLANG_TARGET=$MI_TMP/trace_target_clang
	if clang -g -O1 -finstrument-functions -fno-builtin -fno-inline -I"$top_srcdir/include" \
		"$top_srcdir/tests/trace/trace_target.c" -o "$CLANG_TARGET" -lpthread 2>"$MI_TMP/clang.err"; then
		run_config "$CLANG_TARGET" clang "" wall
		run_config "$CLANG_TARGET" clang "mis," cpu
	else
		mi_fail "clang build" "clang could not build the target" "$MI_TMP/clang.err" clang
	fi
else
	echo "skip  clang: not installed"
fi

# apply: only the call under meminst_trace_apply and the start/stop pair
TRACE=$MI_TMP/apply.trace
out=$MI_TMP/apply.out
why=
if tr_run linked "$out" "$TRACE" "off" apply "$TRACE"; then
	leaf=$(tr_addr "$out" leaf)
	[ "$(tr_calls "$TRACE.chk" 1 "$leaf")" = 24 ] || mi_why_add "leaf not 24 (11 applied + 13 started)"
	[ "$(tr_calls "$TRACE.chk" 1 "$(tr_addr "$out" apply_body)")" = 1 ] || mi_why_add "apply_body not 1"
	[ "$(tr_field "$TRACE.chk" 1 on)" = 2 ] || mi_why_add "not 2 TRACE_ON"
	[ "$(tr_field "$TRACE.chk" 1 off)" = 2 ] || mi_why_add "not 2 TRACE_OFF"
	mi_verdict "meminst_trace_apply and start/stop" "$why" "$TRACE.chk" trace
else
	mi_fail "meminst_trace_apply" "run failed" "$out.err" stderr
fi

mi_finish
