#!/bin/sh
# diskfull.sh — a trace file that cannot grow (here: over the program's
# file size limit, ulimit -f, which needs no root and no mount): the error
# is said at once on one line with the path and errno, the file ends with
# its last complete chunk and stays readable, and the program runs as it
# would without meminst: same output, same exit status, never killed by a
# SIGXFSZ our writes raised (its own writes still raise it).
. "$top_srcdir/tests/trace/trace_lib.sh"

T=$MI_TMP
# ulimit -f counts blocks of 512 bytes (POSIX sh, dash) or 1024 (bash):
# the file size the limit allows, in bytes, from what it lets through
(ulimit -f 8 && head -c 9000 /dev/zero >"$T/probe") 2>/dev/null
block=$(($(wc -c <"$T/probe") / 8))
case $block in 512 | 1024) ;; *)
	echo "skip  $MI_NAME: ulimit -f does not limit the file size here"
	exit 77 ;;
esac

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
		"$TR_INSPECT" analyse "$trace" >"$T/lim.an" 2>>"$T/lim.err" ||
			mi_why_add "inspect analyse failed"
	fi
	mi_verdict "ulimit -f $blocks: said once, file valid, program unchanged" "$why" \
		"$T/lim.err" stderr "$T/lim.chk" check
done

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

mi_finish
