#!/bin/sh
# calls.sh — exact tracing counts every call: recursion, mutual recursion,
# a 10000-deep stack, four threads, a function that sleeps (suspend) and
# one that allocates (<alloc>), and a fork; preloaded (gcc, and clang when
# installed) and linked, wall and cpu clocks, modes off, mis and mim; with
# trace_sites=on, every call has its call site and the figures are the same.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  calls: python3 is needed"; exit 77; }

CASES="rec mutual deep threads sleep alloc fork"

# check_case LABEL CASE OUT CHK CLOCK: the case's assertions; prints the reason.
# Format-level checks (order, loss, balance, the child's header) come from
# trace_check; the profile figures from `inspect analyse --json`
# (analyse_check.py: CNT exact, OWN <= ACC, sum of OWN, suspend, <alloc>).
check_case() {
	label=$1 case=$2 out=$3 chk=$4 clock=$5 why=
	trace=${chk%.chk}
	for t in $(awk '$1 == "thread" { print $2 }' "$chk"); do
		[ "$(tr_field "$chk" "$t" unordered)" = 0 ] || mi_why_add "thread $t out of order"
		[ "$(tr_field "$chk" "$t" lost)" = 0 ] || mi_why_add "thread $t lost records"
		[ "$(tr_field "$chk" "$t" calls)" = "$(tr_field "$chk" "$t" returns)" ] ||
			[ "$case" = fork ] || mi_why_add "thread $t calls and returns differ"
		# trace_sites=on: every call has its site; else none has
		sites=0
		case $label in *trace_sites=on*) sites=$(tr_field "$chk" "$t" calls) ;; esac
		[ "$(tr_field "$chk" "$t" sites)" = "$sites" ] || mi_why_add "thread $t: $(tr_field "$chk" "$t" sites) call sites, not $sites"
	done
	if tr_analyse "$trace"; then
		tr_assert "$trace.json" "$out" "$case" "$clock"
	else
		mi_why_add "inspect analyse failed: $(head -n 1 "$trace.json.err")"
	fi
	case $case in
	alloc) # mim: each allocation is an ALLOC_BLOCK with its allocation number
		made=$(awk '$1 == "alloc" && $2 == 1 && $3 != 5 && $3 != 7 { n += $4 } END { print n + 0 }' "$chk")
		blocks=$(awk '$1 == "blocks" && $2 == 1 { print $3 }' "$chk")
		case $label in
		*mim,*) [ "$made" -ge 1000 ] && [ "${blocks:-0}" = "$made" ] ||
			mi_why_add "mim: $made allocations, ${blocks:-0} with their block" ;;
		*) [ -z "$blocks" ] || mi_why_add "ALLOC_BLOCK records without mim" ;;
		esac
		;;
	threads)
		for t in 2 3 4 5; do
			[ "$(tr_field "$chk" $t parent)" = 1 ] || mi_why_add "thread $t: parent not 1"
			[ "$(tr_field "$chk" $t exit)" = 1 ] || mi_why_add "thread $t: no THREAD_EXIT"
		done
		;;
	fork)
		child=$(awk '$1 == "child" { print $2 }' "$out")
		cfile=$(ls "$TRACE".* 2>/dev/null | grep -v '\.chk$\|\.json' | head -n 1)
		if [ -z "$cfile" ]; then
			mi_why_add "no trace file for the child"
		else
			"$TR_CHECK" "$cfile" >"$cfile.chk" 2>&1 || mi_why_add "child trace unreadable"
			grep -q "^header [0-9]* [0-9]* $child " "$cfile.chk" || mi_why_add "child pid not in header"
			tr_analyse "$cfile" || mi_why_add "child: inspect analyse failed"
			[ "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(f["calls"] for f in j["threads"][0]["functions"] if f["name"] == "leaf"))' "$cfile.json" 2>&1)" = 5 ] ||
				mi_why_add "child: leaf not 5"
			[ "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(f["calls"] for f in j["threads"][0]["functions"] if f["name"] == "leaf"))' "$trace.json" 2>&1)" = 7 ] ||
				mi_why_add "parent: leaf not 7"
		fi
		;;
	esac
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
run_config preload sites "trace_sites=on," wall
run_config linked sites "mis,trace_sites=on," cpu

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
