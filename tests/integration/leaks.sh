#!/bin/sh
# leaks.sh — the leak check (alloc_leak.c) and `inspect leaks`, on
# tests/targets/leak_kinds, which has one block of each of memcheck's kinds
# (its comment lists them):
#   - the exit snapshot's classes, site by site and in the summary, are the
#     bytes and blocks the program made: definitely lost 1448 in 3 (a list
#     head, a cycle's first block, a plain block), indirectly lost 792 in 4
#     (the list's nodes, the cycle's other block), possibly lost 100 in 1
#     (an interior pointer only), still reachable 1710 in 5 (.bss and the
#     block it points to, TLS of the main thread and of another, another
#     thread's stack while it waits); glibc's stdio buffer and the two
#     threads' DTVs are suppressed by default; five runs, for the thread stop;
#   - against valgrind --leak-check=full on the same program: the same
#     definitely, indirectly lost and still reachable bytes, and possibly
#     lost the same but for the DTV blocks (their size depends on the number
#     of loaded modules: valgrind's preloads, meminst's libraries);
#   - memcheck's "N (D direct, I indirect) bytes" by site: the list head's
#     48 with its 3 nodes' 192 hanging from it, the cycle's 600 with 600;
#   - --suppress and --suppressions move a site to the suppressed line;
#     a name matches a function of any frame of a site's stack (site_depth=3:
#     lose_list suppresses its head and nodes), not frames a site lacks;
#   - a session (meminst --mim -o, site_depth=user): the same classes, its
#     DTVs and stdio buffer suppressed though named after main's frame;
#     inspect report's leak summary (JSON
#     and memcheck's lines in text) and definitely lost sites with their
#     indirect bytes; the html report's classes and sites;
#   - inspect leaks --from --to: with leak_check=on, a checked snapshot
#     (meminst_store_memory_data) then the exit one, after 4 x 128 more
#     lost at alloc_grow and a second list: exactly those grew;
#   - leak_exit_code=N: the process ends with N when definitely lost bytes
#     pass leak_threshold, its output intact; not below the threshold;
#   - inspect leaks --pid on the live program, waiting in read;
#   - bad input: a database without a leak check, a mis process with
#     leak_exit_code, bad values: one line and a non-zero status.
. "$top_srcdir/tests/integration/lib.sh"

P=$MI_TARGETS/leak_kinds
INSPECT=$top_builddir/inspect/inspect

# leaks_by FILE.csv KIND: "bytes blocks" of the program's own sites of KIND.
leaks_by() {
	awk -F, -v k="$2" '$1 == k && $7 ~ /\(leak_kinds\)/ { b += $2; n += $3 } END { print b + 0, n + 0 }' "$1"
}
# leaks_site FILE.csv KIND FUNCTION: "bytes blocks" of one site.
leaks_site() {
	awk -F, -v k="$2" -v f="$3" '$1 == k && index($7, f "+") == 1 { b += $2; n += $3 } END { print b + 0, n + 0 }' "$1"
}
# leaks_indirect FILE.csv FUNCTION: "bytes blocks" hanging from a definitely lost site.
leaks_indirect() {
	awk -F, -v f="$2" '$1 == "definitely lost" && index($7, f "+") == 1 { print $4, $5 }' "$1"
}
# leaks_grew FILE.csv KIND FUNCTION: "bytes blocks" of growth of a site.
leaks_grew() {
	awk -F, -v k="$2" -v f="$3" '$1 == k && index($6, f "+") == 1 { print $2, $3 }' "$1"
}
# leaks_summary FILE.csv KIND: "bytes blocks" of the summary table.
leaks_summary() {
	awk -F, -v k="$2" 'NF == 3 && $1 == k { print $2, $3; exit }' "$1"
}
commas() { # 1200 -> 1,200, as valgrind writes numbers
	echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'
}
expect() { # WHAT GOT WANTED
	[ "$2" = "$3" ] || mi_why_add "$1: $2, expected $3"
}

for run in 1 2 3 4 5; do
	d=$MI_TMP/run$run
	mkdir -p "$d"
	MI_MEMINST="mim,snapshot=$d/l.db" mi_x "$P" >"$d/out" 2>"$d/err"
	rc=$?
	why=
	[ "$rc" = 0 ] || mi_why_add "exit status $rc"
	expect "output" "$(cat "$d/out")" "ready 0x1"
	mi_no_complaint "$d/err"
	"$INSPECT" leaks --all --csv "$d/l.db" >"$d/leaks.csv" 2>"$d/inspect.err" ||
		mi_why_add "inspect leaks failed"
	expect "definitely lost" "$(leaks_by "$d/leaks.csv" 'definitely lost')" "1448 3"
	expect "indirectly lost" "$(leaks_by "$d/leaks.csv" 'indirectly lost')" "792 4"
	expect "possibly lost" "$(leaks_by "$d/leaks.csv" 'possibly lost')" "100 1"
	expect "still reachable" "$(leaks_by "$d/leaks.csv" 'still reachable')" "1710 5"
	expect "summary definitely" "$(leaks_summary "$d/leaks.csv" 'definitely lost')" "1448 3"
	expect "summary indirectly" "$(leaks_summary "$d/leaks.csv" 'indirectly lost')" "792 4"
	expect "summary possibly" "$(leaks_summary "$d/leaks.csv" 'possibly lost')" "100 1"
	for s in "definitely lost alloc_plain 800 1" "definitely lost alloc_head 48 1" \
		"indirectly lost alloc_node 192 3" "definitely lost alloc_cycle 600 1" \
		"indirectly lost alloc_cycle 600 1" "possibly lost alloc_interior 100 1" \
		"still reachable alloc_bss 400 1" "still reachable alloc_child 500 1" \
		"still reachable alloc_main_tls 310 1" "still reachable alloc_thread_tls 300 1" \
		"still reachable alloc_on_stack 200 1"; do
		set -- $s
		expect "$1 $2 at $3" "$(leaks_site "$d/leaks.csv" "$1 $2" "$3")" "$4 $5"
	done
	expect "indirect from alloc_head" "$(leaks_indirect "$d/leaks.csv" alloc_head)" "192 3"
	expect "indirect from alloc_cycle" "$(leaks_indirect "$d/leaks.csv" alloc_cycle)" "600 1"
	expect "indirect from alloc_plain" "$(leaks_indirect "$d/leaks.csv" alloc_plain)" "0 0"
	grep -q '^suppressed,[0-9]*,1,,,[0-9]*,allocate_dtv' "$d/leaks.csv" ||
		grep -q '^suppressed,[0-9]*,2,,,[0-9]*,allocate_dtv' "$d/leaks.csv" ||
		mi_why_add "the threads' DTVs are not on a suppressed row"
	mi_verdict "every class exactly, run $run" "$why" "$d/leaks.csv" "inspect leaks" "$d/err" stderr \
		"$d/inspect.err" "inspect stderr"
done
d=$MI_TMP/run1

# memcheck on the uninstrumented program: LEAK SUMMARY's figures.
if command -v valgrind >/dev/null; then
	$MI_TIMEOUT valgrind --leak-check=full "$P" >"$MI_TMP/vg.out" 2>"$MI_TMP/vg.err"
	vg() { # KIND: "bytes blocks" of the LEAK SUMMARY line
		sed -n "s/^==[0-9]*== *$1: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p" "$MI_TMP/vg.err" | tr -d ,
	}
	# the DTV records: "288 bytes in 1 blocks are possibly lost", allocate_dtv below
	dtv=$(awk '/are possibly lost in loss record/ { b = $2; n = $5 } /allocate_dtv/ && b { s += b; c += n; b = 0 }
		/^==[0-9]*== $/ { b = 0 } END { print s + 0, c + 0 }' "$MI_TMP/vg.err" | tr -d ,)
	why=
	expect "memcheck definitely lost" "$(vg 'definitely lost')" "$(leaks_summary "$d/leaks.csv" 'definitely lost')"
	expect "memcheck indirectly lost" "$(vg 'indirectly lost')" "$(leaks_summary "$d/leaks.csv" 'indirectly lost')"
	expect "memcheck still reachable" "$(vg 'still reachable')" "$(leaks_summary "$d/leaks.csv" 'still reachable')"
	set -- $(vg 'possibly lost') $dtv
	expect "memcheck possibly lost without the DTVs" "$(($1 - $3)) $(($2 - $4))" \
		"$(leaks_summary "$d/leaks.csv" 'possibly lost')"
	for site in alloc_head alloc_cycle; do # memcheck's "T (D direct, I indirect) bytes in M blocks"
		set -- $(leaks_site "$d/leaks.csv" 'definitely lost' $site) $(leaks_indirect "$d/leaks.csv" $site)
		grep -q "== $(commas $(($1 + $3))) ($(commas $1) direct, $(commas $3) indirect) bytes in $2 blocks are definitely lost" \
			"$MI_TMP/vg.err" || mi_why_add "memcheck has no record of $site's $1 direct, $3 indirect bytes"
	done
	mi_verdict "the same classes as valgrind --leak-check=full" "$why" "$MI_TMP/vg.err" "valgrind"
else
	echo "skip  memcheck comparison: valgrind is not installed"
fi

# What grew between two leak checks (leak_check=on).
why=
MI_MEMINST="mim,leak_check=on,snapshot=$MI_TMP/grow.db" mi_x "$P" grow "$MI_TMP/grow.db" >"$MI_TMP/grow.out" \
	2>"$MI_TMP/grow.err"
expect "grow: status" "$?" 0
mi_no_complaint "$MI_TMP/grow.err"
"$INSPECT" leaks --csv --from 1 --to 2 "$MI_TMP/grow.db" >"$MI_TMP/grow.csv" 2>"$MI_TMP/grow.ierr" ||
	mi_why_add "inspect leaks --from 1 --to 2 failed"
expect "grew: alloc_grow" "$(leaks_grew "$MI_TMP/grow.csv" 'definitely lost' alloc_grow)" "512 4"
expect "grew: alloc_head" "$(leaks_grew "$MI_TMP/grow.csv" 'definitely lost' alloc_head)" "48 1"
expect "grew: alloc_node" "$(leaks_grew "$MI_TMP/grow.csv" 'indirectly lost' alloc_node)" "192 3"
expect "grew: sites" "$(awk -F, 'NF > 7 && $1 != "kind"' "$MI_TMP/grow.csv" | wc -l)" 3
expect "grew: summary definitely" "$(awk -F, '$1 == "definitely lost" && NF == 7 { print $2, $3 }' \
	"$MI_TMP/grow.csv")" "560 5"
"$INSPECT" leaks --csv --to 2 "$MI_TMP/grow.db" >"$MI_TMP/grow2.csv" || mi_why_add "--to 2 alone failed"
cmp -s "$MI_TMP/grow.csv" "$MI_TMP/grow2.csv" || mi_why_add "--to 2 alone: not from the check before"
"$INSPECT" leaks --csv --snapshot 2 "$MI_TMP/grow.db" >"$MI_TMP/grow3.csv" || mi_why_add "--snapshot 2 failed"
expect "grown: indirect from alloc_head" "$(leaks_indirect "$MI_TMP/grow3.csv" alloc_head)" "384 6"
"$INSPECT" leaks --from 2 --to 1 "$MI_TMP/grow.db" >/dev/null 2>"$MI_TMP/grow.bad" && mi_why_add "--from 2 --to 1: status 0"
[ "$(wc -l <"$MI_TMP/grow.bad")" = 1 ] || mi_why_add "--from 2 --to 1: not one line"
"$INSPECT" leaks --from 1 "$d/l.db" >/dev/null 2>"$MI_TMP/grow.bad2" && mi_why_add "--from 1 of a file with one check: status 0"
[ "$(wc -l <"$MI_TMP/grow.bad2")" = 1 ] || mi_why_add "--from 1 of a file with one check: not one line"
mi_verdict "inspect leaks --from --to: what grew" "$why" "$MI_TMP/grow.csv" "inspect leaks" \
	"$MI_TMP/grow.err" "program stderr" "$MI_TMP/grow.ierr" "inspect stderr"

# The session's report and html show the classes.
why=
MEMINST_LIBRARY=$MEMINST_LIB $MI_TIMEOUT "$top_builddir/session/meminst" --mim -o "$MI_TMP/s.db" -- "$P" \
	>"$MI_TMP/s.out" 2>"$MI_TMP/s.err" || mi_why_add "meminst --mim -o failed"
"$INSPECT" report --json "$MI_TMP/s.db" >"$MI_TMP/r.json" 2>"$MI_TMP/r.err" || mi_why_add "report --json failed"
"$INSPECT" report "$MI_TMP/s.db" >"$MI_TMP/r.txt" 2>>"$MI_TMP/r.err" || mi_why_add "report failed"
"$INSPECT" leaks --csv --all "$MI_TMP/s.db" >"$MI_TMP/s.csv" || mi_why_add "leaks of the session failed"
for k in 'definitely lost' 'indirectly lost' 'possibly lost' 'still reachable' suppressed; do
	set -- $(leaks_summary "$MI_TMP/s.csv" "$k")
	grep -q "{\"kind\": \"$k\", \"bytes\": $1, \"blocks\": $2}" "$MI_TMP/r.json" ||
		mi_why_add "report --json: no $k $1 $2"
	grep -q "^ *$k: $1 bytes in $2 blocks\$" "$MI_TMP/r.txt" || mi_why_add "report: no line '$k: $1 bytes in $2 blocks'"
done
expect "report: definitely lost" "$(leaks_summary "$MI_TMP/s.csv" 'definitely lost')" "1448 3"
# the launcher's sites are site_depth=user's stacks, named after the
# program's frame (main's pthread_create, printf): the defaults look at
# the stack's glibc frames, so the DTVs and the stdio buffer stay suppressed
for k in 'indirectly lost' 'possibly lost' 'still reachable'; do
	expect "session: $k" "$(leaks_summary "$MI_TMP/s.csv" "$k")" "$(leaks_summary "$d/leaks.csv" "$k")"
done
expect "session: the DTVs and stdout's buffer suppressed" \
	"$(awk -F, '$1 == "suppressed" && $7 ~ /^main\+/ { b += $2; n += $3 } END { print b + 0, n + 0 }' "$MI_TMP/s.csv" |
		cut -d' ' -f2)" 3
grep -q '{"bytes": 48, "indirect_bytes": 192, "blocks": 1, "type": [0-9]*, "site": "alloc_head+' "$MI_TMP/r.json" ||
	mi_why_add "report --json: alloc_head's 48 + 192 indirect not in leak_sites"
"$INSPECT" html -o "$MI_TMP/r.html" "$MI_TMP/s.db" 2>>"$MI_TMP/r.err" || mi_why_add "html failed"
grep -q '<tr><td>indirectly lost</td><td class="num">792 B</td><td class="num">4</td></tr>' "$MI_TMP/r.html" ||
	mi_why_add "html: no indirectly lost row"
grep -q '<td class="num">48 B</td><td class="num">192 B</td><td class="num">1</td><td class="name">alloc_head+' \
	"$MI_TMP/r.html" || mi_why_add "html: no alloc_head row with its indirect bytes"
mi_verdict "report and html show the leak classes" "$why" "$MI_TMP/r.txt" "report" "$MI_TMP/r.err" "stderr"

# Suppressions by name and from a file.
why=
"$INSPECT" leaks --csv --suppress 'alloc_pl*' "$d/l.db" >"$MI_TMP/sup1.csv" || mi_why_add "--suppress failed"
expect "--suppress: definitely lost" "$(leaks_summary "$MI_TMP/sup1.csv" 'definitely lost')" "648 2"
printf '# the list\nalloc_head\n\n  alloc_plain  \n' >"$MI_TMP/names"
"$INSPECT" leaks --csv --suppressions "$MI_TMP/names" "$d/l.db" >"$MI_TMP/sup2.csv" ||
	mi_why_add "--suppressions failed"
expect "--suppressions: definitely lost" "$(leaks_summary "$MI_TMP/sup2.csv" 'definitely lost')" "600 1"
set -- $(leaks_summary "$d/leaks.csv" suppressed)
expect "--suppressions: the suppressed line" "$(leaks_summary "$MI_TMP/sup2.csv" suppressed)" "$(($1 + 848)) $(($2 + 2))"
"$INSPECT" leaks --csv --no-default-suppressions "$d/l.db" >"$MI_TMP/sup3.csv" || mi_why_add "--no-default failed"
expect "--no-default-suppressions: suppressed" "$(leaks_summary "$MI_TMP/sup3.csv" suppressed)" "0 0"
# a function of any frame of a site's stack: with site_depth=3 the list's
# head and nodes have lose_list in theirs (alloc_head < lose_list < main),
# the cycle lose_cycle, the plain block lose_plain
MI_MEMINST="mim,site_depth=3,snapshot=$MI_TMP/deep.db" mi_x "$P" >/dev/null 2>"$MI_TMP/deep.err" ||
	mi_why_add "site_depth=3: status $?"
"$INSPECT" leaks --csv "$MI_TMP/deep.db" >"$MI_TMP/deep0.csv" || mi_why_add "site_depth=3: inspect leaks failed"
expect "site_depth=3: definitely lost" "$(leaks_summary "$MI_TMP/deep0.csv" 'definitely lost')" "1448 3"
expect "site_depth=3: possibly lost (the DTVs suppressed)" "$(leaks_summary "$MI_TMP/deep0.csv" 'possibly lost')" "100 1"
"$INSPECT" leaks --csv --suppress lose_list "$MI_TMP/deep.db" >"$MI_TMP/deep1.csv" || mi_why_add "--suppress lose_list failed"
expect "--suppress lose_list: definitely lost" "$(leaks_summary "$MI_TMP/deep1.csv" 'definitely lost')" "1400 2"
expect "--suppress lose_list: indirectly lost" "$(leaks_summary "$MI_TMP/deep1.csv" 'indirectly lost')" "600 1"
"$INSPECT" leaks --csv --suppress 'lose_[cp]*' "$MI_TMP/deep.db" >"$MI_TMP/deep2.csv" || mi_why_add "--suppress glob failed"
expect "--suppress 'lose_[cp]*': definitely lost" "$(leaks_summary "$MI_TMP/deep2.csv" 'definitely lost')" "48 1"
"$INSPECT" leaks --csv --suppress lose_list "$d/l.db" >"$MI_TMP/deep3.csv" || mi_why_add "--suppress, one frame failed"
expect "--suppress lose_list, one frame a site: definitely lost" \
	"$(leaks_summary "$MI_TMP/deep3.csv" 'definitely lost')" "1448 3"
mi_verdict "suppressions by name, glob and file" "$why" "$MI_TMP/sup2.csv" "inspect leaks"

# The exit status for CI.
why=
MI_MEMINST="mim,leak_exit_code=23" mi_x "$P" >"$MI_TMP/ec.out" 2>"$MI_TMP/ec.err"
expect "leak_exit_code=23: status" "$?" 23
expect "leak_exit_code=23: output" "$(cat "$MI_TMP/ec.out")" "ready 0x1"
grep -q '^meminst: 1448 bytes definitely lost in 3 blocks' "$MI_TMP/ec.err" || mi_why_add "no line on stderr"
MI_MEMINST="mim,leak_exit_code=23,leak_threshold=1448" mi_x "$P" >"$MI_TMP/ec2.out" 2>"$MI_TMP/ec2.err"
expect "at the threshold: status" "$?" 0
MI_MEMINST="mim,leak_exit_code=23,leak_threshold=1447" mi_x "$P" >/dev/null 2>&1
expect "above the threshold: status" "$?" 23
mi_verdict "leak_exit_code and leak_threshold" "$why" "$MI_TMP/ec.err" stderr

# Live: inspect leaks --pid while the program waits in read (its main
# thread is signalled and parked too).
why=
mkfifo "$MI_TMP/in"
MI_MEMINST="mim,control=on" mi_x "$P" wait <"$MI_TMP/in" >"$MI_TMP/live.out" 2>"$MI_TMP/live.err" &
job=$!
exec 7>"$MI_TMP/in"
i=0
while [ "$i" -lt 600 ] && ! grep -q '^pid ' "$MI_TMP/live.out" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
pid=$(sed -n 's/^pid //p' "$MI_TMP/live.out")
"$INSPECT" leaks --pid "$pid" --csv >"$MI_TMP/live.csv" 2>"$MI_TMP/live.ierr" || mi_why_add "inspect leaks --pid failed"
exec 7>&-
wait "$job"
expect "live: program's status" "$?" 0
expect "live: definitely lost" "$(leaks_by "$MI_TMP/live.csv" 'definitely lost')" "1448 3"
expect "live: indirectly lost" "$(leaks_by "$MI_TMP/live.csv" 'indirectly lost')" "792 4"
expect "live: possibly lost" "$(leaks_by "$MI_TMP/live.csv" 'possibly lost')" "100 1"
mi_no_complaint "$MI_TMP/live.err"
mi_verdict "inspect leaks --pid on a live process" "$why" "$MI_TMP/live.csv" "inspect leaks" \
	"$MI_TMP/live.ierr" "inspect stderr" "$MI_TMP/live.err" "program stderr"

# Bad input.
why=
MI_MEMINST="mis,snapshot=$MI_TMP/mis.db" mi_x "$P" >/dev/null 2>&1
"$INSPECT" leaks "$MI_TMP/mis.db" >/dev/null 2>"$MI_TMP/bad1" && mi_why_add "a mis database: status 0"
[ "$(wc -l <"$MI_TMP/bad1")" = 1 ] || mi_why_add "a mis database: not one line"
MI_MEMINST="mis,leak_exit_code=3" mi_x "$P" >/dev/null 2>"$MI_TMP/bad2" && mi_why_add "mis,leak_exit_code: status 0"
grep -q "leak_exit_code need mode mim" "$MI_TMP/bad2" || mi_why_add "mis,leak_exit_code: no line"
MI_MEMINST="mim,leak_check=maybe" mi_x "$P" >/dev/null 2>"$MI_TMP/bad3" && mi_why_add "leak_check=maybe: status 0"
grep -q "expected on, off or exit" "$MI_TMP/bad3" || mi_why_add "leak_check=maybe: no line"
"$INSPECT" leaks --suppressions "$MI_TMP/none" "$d/l.db" >/dev/null 2>"$MI_TMP/bad4" &&
	mi_why_add "--suppressions of a missing file: status 0"
[ "$(wc -l <"$MI_TMP/bad4")" = 1 ] || mi_why_add "--suppressions of a missing file: not one line"
"$INSPECT" leaks >/dev/null 2>&1 && mi_why_add "no argument: status 0"
mi_verdict "bad input: one line, non-zero status" "$why" "$MI_TMP/bad1" "mis db" "$MI_TMP/bad2" "mis run" \
	"$MI_TMP/bad4" "suppressions"
mi_finish
