#!/bin/sh
# robust.sh — trace files that were cut short stay readable; programs that
# are not instrumented give a valid trace with no calls; a file that is not
# a meminst trace is never overwritten; bad tracing items are refused.
. "$top_srcdir/tests/trace/trace_lib.sh"

T=$MI_TMP

# A cut trace reads up to its last complete chunk, wherever the cut falls.
if tr_run preload "$T/deep.out" "$T/deep.trace" "trace=wall,trace_file=$T/deep.trace" deep; then
	size=$(wc -c <"$T/deep.trace")
	why=
	for cut in 100 128 200 5000 $((size / 3)) $((size / 2)) $((size - 9)) $((size - 1)); do
		head -c "$cut" "$T/deep.trace" >"$T/cut.trace"
		if [ "$cut" -lt 128 ]; then
			"$TR_CHECK" "$T/cut.trace" >/dev/null 2>&1 && mi_why_add "cut at $cut: no error"
			continue
		fi
		"$TR_CHECK" "$T/cut.trace" >"$T/cut.chk" 2>&1 || mi_why_add "cut at $cut: unreadable"
	done
	grep -q '^truncated' "$T/cut.chk" || mi_why_add "the last cut was not seen as truncated"
	mi_verdict "truncated trace readable" "$why" "$T/cut.chk" check
else
	mi_fail "truncated trace" "run failed" "$T/deep.out.err" stderr
fi

# A corrupted chunk is told from a short one.
why=
cp "$T/deep.trace" "$T/bad.trace"
printf 'XXXXXXXX' | dd of="$T/bad.trace" bs=1 seek=4000 conv=notrunc 2>/dev/null
"$TR_CHECK" "$T/bad.trace" >/dev/null 2>"$T/bad.err" && mi_why_add "corruption not detected"
mi_verdict "corrupted chunk detected" "$why" "$T/bad.err" stderr

# Not instrumented: a valid trace, header and modules, no calls.
why=
rm -f "$T/plain.trace"
MI_MEMINST="trace=wall,trace_file=$T/plain.trace"
mi_x "$TR_CHECK" "$T/deep.trace" >/dev/null 2>"$T/plain.err" || mi_why_add "program failed"
unset MI_MEMINST
"$TR_CHECK" "$T/plain.trace" >"$T/plain.chk" 2>>"$T/plain.err" || mi_why_add "trace unreadable"
grep -q '^call' "$T/plain.chk" && mi_why_add "calls recorded"
[ "$(awk '$1 == "modules" { print $2 }' "$T/plain.chk")" -gt 0 ] 2>/dev/null || mi_why_add "no modules"
mi_verdict "uninstrumented program" "$why" "$T/plain.chk" trace "$T/plain.err" stderr

# A file that is not ours stays as it was; one of ours is replaced.
why=
echo "precious" >"$T/mine.txt"
MI_MEMINST="trace=wall,trace_file=$T/mine.txt"
mi_x "$TR_TARGET" rec >/dev/null 2>"$T/mine.err" || mi_why_add "program did not run"
unset MI_MEMINST
[ "$(cat "$T/mine.txt")" = precious ] || mi_why_add "file overwritten"
grep -q "not a meminst trace; not overwriting" "$T/mine.err" || mi_why_add "no message"
[ "$(wc -l <"$T/mine.err")" -le 2 ] || mi_why_add "more than two lines"
tr_run preload "$T/again.out" "$T/deep.trace" "trace=cpu,trace_file=$T/deep.trace" rec ||
	mi_why_add "second run over our own trace failed"
mi_verdict "foreign file kept, own trace replaced" "$why" "$T/mine.err" stderr

# meminst_trace_start(NULL) takes the settings of MEMINST: trace_file=
# without trace= names the file of a later start.
why=
here=$(pwd)
mkdir -p "$T/null" && cd "$T/null" || exit 99
MI_MEMINST="trace_file=$T/null/n.%p.trace,trace_threads=family"
mi_xl "$TR_LINKED" startnull loop10 >"$T/null.out" 2>"$T/null.err" || mi_why_add "the program failed"
unset MI_MEMINST
cd "$here" || exit 99
set -- "$T"/null/n.*.trace
[ -f "$1" ] || mi_why_add "no n.PID.trace: $(ls "$T/null" | tr '\n' ' ')"
[ -z "$(ls "$T/null" | grep -v '^n\.')" ] || mi_why_add "other files: $(ls "$T/null" | tr '\n' ' ')"
[ -f "$1" ] && { "$TR_CHECK" "$1" >"$T/null.chk" 2>>"$T/null.err" || mi_why_add "trace unreadable"; }
mi_verdict "meminst_trace_start(NULL): MEMINST's trace_file" "$why" "$T/null.err" stderr

# %p names one file per process.
why=
(cd "$T" && MI_MEMINST="trace=wall,trace_file=p.%p.trace" mi_x "$TR_TARGET" mutual >/dev/null) ||
	mi_why_add "run failed"
n=$(ls "$T"/p.*.trace 2>/dev/null | wc -l)
[ "$n" = 1 ] || mi_why_add "$n files for %p"
mi_verdict "trace_file with %p" "$why"

# Bad items: one line naming them, the program does not run.
for item in trace=gpu trace_threads=some; do
	why=
	MI_MEMINST="$item"
	mi_x "$TR_TARGET" rec >"$T/bad.out" 2>"$T/bad.err" && mi_why_add "program ran"
	unset MI_MEMINST
	grep -q "bad MEMINST item '$item'" "$T/bad.err" || mi_why_add "no message naming it"
	[ -s "$T/bad.out" ] && mi_why_add "program output"
	mi_verdict "refused $item" "$why" "$T/bad.err" stderr
done

# trace_threads=family from MEMINST: the main thread and its children.
why=
if tr_run preload "$T/fam.out" "$T/fam.trace" "trace=wall,trace_threads=family,trace_file=$T/fam.trace" threads; then
	[ "$(grep -c '^thread' "$T/fam.trace.chk")" = 5 ] || mi_why_add "not 5 threads"
	# flags: calls (1), not all threads (8); 64 (an END record) aside
	awk '$1 == "header" { exit !($2 == 1 && int($3 / 64) * 64 + 1 == $3) }' "$T/fam.trace.chk" ||
		mi_why_add "header flags not family"
else
	mi_why_add "run failed"
fi
mi_verdict "trace_threads=family" "$why" "$T/fam.trace.chk" trace

# Version 3 records: a call of a function that calls nothing traced takes 8
# bytes with its return (LEAF32; 10 at most), other calls 16 (20 at most),
# both clocks; the time deltas and addresses read back as the calls made.
for case in loop100000:leaf:10 rec:fib:20; do
	args=${case%%:*} fn=${case#*:} max=${fn#*:} fn=${fn%:*}
	for clock in wall cpu; do
		why=
		if tr_run preload "$T/size.out" "$T/size.trace" "trace=$clock,trace_file=$T/size.trace" "$args"; then
			b=$(awk '$1 == "eventbytes" { print $2 }' "$T/size.trace.chk")
			n=$(tr_expect "$T/size.out" "$fn")
			[ "$fn" = fib ] && n=$((2 * n)) # and as many calls of fib_calls
			awk -v b="$b" -v n="$n" -v m="$max" 'BEGIN { exit !(b > 0 && b / n <= m) }' ||
				mi_why_add "$b bytes of events for $n calls"
			addr=$(tr_addr "$T/size.out" "$fn")
			[ "$(tr_calls "$T/size.trace.chk" 1 "$addr")" = "$(tr_expect "$T/size.out" "$fn")" ] ||
				mi_why_add "$fn not $(tr_expect "$T/size.out" "$fn") calls"
		else
			mi_why_add "run failed"
		fi
		mi_verdict "$clock $args: at most $max bytes per call ($b bytes)" "$why" "$T/size.trace.chk" trace
	done
done

# The tracer's own cost, measured at start (TRACE_COST): analyse shows it
# and takes the stamps' share off <alloc>.
why=
if tr_run preload "$T/cost.out" "$T/cost.trace" "trace=wall,trace_file=$T/cost.trace" alloc; then
	"$TR_INSPECT" analyse "$T/cost.trace" >"$T/cost.txt" 2>>"$T/cost.out.err" || mi_why_add "analyse failed"
	grep -q "^Tracer's own cost, measured at start: [0-9.]* ns a call or return" "$T/cost.txt" ||
		mi_why_add "no cost line in the text"
	# <alloc> calls whose allocator time was measured (ALLOC_AT) have meminst's
	# work moved to <meminst>; the others get the stamps' calibrated cost off
	grep -q "^<alloc> corrected: [0-9]* calls x [0-9.]* ns\|^meminst's own work around the allocator .* measured in [0-9]* <alloc> calls: .* taken off <alloc>" \
		"$T/cost.txt" || mi_why_add "no <alloc> line"
	tr_analyse "$T/cost.trace"
	python3 - "$T/cost.trace.json" >>"$T/cost.out.err" 2>&1 <<'EOF_PY' || mi_why_add "tracer_cost figures wrong"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["tracer_cost"]
assert 0 < c["event_ps"] / 1e3 < 10000, c
assert c["calls"] == sum(f["calls"] for t in j["threads"] for f in t["functions"]
                         if not f["name"].startswith("<") and f["name"] not in ("suspend", "undefined")), c
assert 0 < c["percent"] < 100, c
assert c["alloc_calls"] >= 1 and 0 <= c["alloc_each_ps"] / 1e3 < 10000, c
assert c["meminst_alloc_calls"] <= c["alloc_calls"], c
assert c["meminst_alloc_calls"] == 0 or c["meminst_alloc_apart"], c
unmeasured = c["alloc_calls"] - c["meminst_alloc_calls"]
assert abs(c["alloc_taken_off_ms"] - unmeasured * c["alloc_each_ps"] / 1e9) < 1e-3, c
EOF_PY
else
	mi_why_add "run failed"
fi
mi_verdict "tracer's cost calibrated, shown, taken off <alloc>" "$why" "$T/cost.out.err" stderr

mi_finish
