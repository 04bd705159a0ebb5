#!/bin/sh
# tests/session/heaptrack.sh — meminst's event counters against heaptrack's
# on tests/targets/heap_questions (events known in advance, see its
# comment): heaptrack_print's summary (calls to allocation functions,
# temporary allocations, peak heap, leaked) next to the same figures of a
# mis and a mim session (inspect status --total, top --by leaked, sizes).
# The differences allowed are those meminst(7) documents:
#   - temporary: heaptrack compares an allocation's size and stack, not
#     the block, so one delete[] in keep_many (a block of the size and stack
#     of the one allocated just before) is temporary to it; and it counts
#     the release of libstdc++'s emergency pool, which it frees itself at
#     exit (__gnu_cxx::__freeres), as temporary: meminst counts 2 fewer;
#   - leaked: that pool (one block of libstdc++) is live at exit to meminst.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/heaptrack heaptrack
mi_need /usr/bin/heaptrack_print heaptrack
PROG=$top_builddir/tests/targets/heap_questions

# heaptrack's human sizes (1.13M, 5.32K: powers of 1000) in bytes
ht_bytes() {
	awk -v v="$1" 'BEGIN { m = 1; u = substr(v, length(v));
		if (u == "K") m = 1e3; else if (u == "M") m = 1e6; else if (u == "G") m = 1e9;
		if (m > 1) v = substr(v, 1, length(v) - 1); printf "%d\n", v * m }'
}

heaptrack -o "$MI_TMP/ht" "$PROG" >heaptrack.log 2>&1 || { mi_fail "heaptrack ran" "exit $?" heaptrack.log; mi_finish; }
heaptrack_print -p 0 -a 0 -T 0 "$MI_TMP"/ht.[gz][zs]* >ht.txt 2>/dev/null
ht_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\) .*/\1/p' ht.txt)
ht_temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\) .*/\1/p' ht.txt)
ht_peak=$(ht_bytes "$(sed -n 's/^peak heap memory consumption: //p' ht.txt)")
ht_leak=$(ht_bytes "$(sed -n 's/^total memory leaked: //p' ht.txt)")
[ -n "$ht_calls" ] && [ -n "$ht_temp" ] || { mi_fail "heaptrack_print summary" "unread" ht.txt; mi_finish; }

for mode in mis mim; do
	"$LAUNCH" -q "--$mode" -o "$mode.db" -- "$PROG" >out 2>err || mi_fail "$mode: meminst ran" "exit $?" err
	"$INSPECT" status --total --csv "$mode.db" | awk -F, '$2 == "total"' >total.csv
	calls=$(cut -d, -f9 total.csv) temp=$(cut -d, -f12 total.csv) peak=$(cut -d, -f5 total.csv)
	leak=$(cut -d, -f3 total.csv) reallocs=$(cut -d, -f13 total.csv)
	pool=$("$INSPECT" top --by leaked --csv "$mode.db" | awk -F, '/libstdc\+\+/ && $2 == 1 { s += $6 } END { print s + 0 }')
	why=
	[ "$calls" = "$ht_calls" ] || mi_why_add "calls $calls, heaptrack $ht_calls"
	# 1000 + 10 (grow) + 300 + 1000 (workers) + 1 (peak), known in advance
	[ "$temp" = 2311 ] || mi_why_add "temporary $temp, expected 2311"
	[ "$((ht_temp - temp))" = 2 ] || mi_why_add "temporary $temp, heaptrack $ht_temp (2 more expected)"
	[ "$reallocs" = 9 ] || mi_why_add "reallocs $reallocs, expected 9"
	# heaptrack prints three digits: within 1% (peak), 10 bytes (leaked)
	d=$((peak - ht_peak)); [ "${d#-}" -le $((peak / 100)) ] || mi_why_add "peak $peak, heaptrack $ht_peak"
	d=$((leak - pool - ht_leak)); [ "${d#-}" -le 10 ] ||
		mi_why_add "leaked $leak less libstdc++'s pool $pool, heaptrack $ht_leak"
	mi_verdict "$mode: calls, temporary, peak and leaked agree with heaptrack's" "$why" total.csv

	why=
	"$INSPECT" top --by temporary --csv "$mode.db" >top.csv
	grep -q '^[0-9]*,1000,48000,1000,0,0,.*temp_loop' top.csv || mi_why_add "temp_loop's row"
	grep -q '^[0-9]*,5,5000,0,5000,5000,.*leak_some' top.csv || mi_why_add "leak_some's row"
	"$INSPECT" top --by calls --limit 1 --csv "$mode.db" | tail -n 1 | grep -q ',1000,' ||
		mi_why_add "top --by calls"
	"$INSPECT" sizes --csv "$mode.db" | grep -q '^,,32,63,1501,' || mi_why_add "sizes: 1501 of 32-63 bytes"
	"$INSPECT" sizes --by site --csv "$mode.db" | grep -q '^[0-9]*,temp_loop.*,32,63,1000,100' ||
		mi_why_add "sizes --by site: temp_loop"
	mi_verdict "$mode: top --by temporary|calls and sizes name the sites" "$why" top.csv
done

why=
"$INSPECT" top --by leaked --type 1 mis.db >out 2>err && mi_why_add "a filter with --by leaked accepted"
"$INSPECT" sizes --by nothing mis.db >out 2>>err && mi_why_add "sizes --by nothing accepted"
sqlite3 mis.db 'DROP TABLE status_event' && "$INSPECT" top --by calls mis.db >out 2>>err &&
	mi_why_add "top --by calls without counters accepted"
[ "$(wc -l <err)" = 3 ] || mi_why_add "not one line each: $(cat err)"
mi_verdict "bad input: one line, non-zero exit" "$why" err

mi_finish
