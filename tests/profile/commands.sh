#!/bin/sh
# commands.sh — `inspect profile` and `inspect analyse` on generated traces
# with exactly known figures (times in ms: the ticks are nanoseconds).
. "$top_srcdir/tests/profile/lib.sh"

# main 0-100 calls a (10-30) and b (40-60); b calls a (45-50) which
# allocates (46-47); b sleeps (52-56).
pt_gen simple <<'S'
header clock wall hz 1e9 pid 777
0 process 0 /usr/bin/demo demo --fast
1 start 0 1234 main
1 call 0 0x1000
1 call 10000000 0x2000
1 ret 30000000 0x2000
1 call 40000000 0x3000
1 call 45000000 0x2000
1 alloc 46000000 47000000 1 64
1 ret 50000000 0x2000
1 suspend 52000000 56000000 1
1 ret 60000000 0x3000
1 ret 100000000 0x1000
1 exit 100000000
S

it_run profile simple.trace
pt_expect "profile: summary" "$(cat "$IT_TMP/out") rc=$IT_RC" \
	"simple.trace: 1 thread, 13 records, 3 functions, 100.000 ms (wall clock) rc=0"

it_run analyse --json simple.trace
cp "$IT_TMP/out" "$IT_TMP/simple.json"
J=$IT_TMP/simple.json
pt_expect "json: totals" "$(pt_json "$J" "(j['clock'], fig(j['totals']))")" "('wall', (6, 100.0, 96.0))"
pt_expect "json: thread" "$(pt_json "$J" "(j['threads'][0]['tid'], j['threads'][0]['name'], j['threads'][0]['calls'], j['threads'][0]['own_ms'])")" \
	"(1234, 'main', 6, 96.0)"
pt_expect "json: main" "$(pt_json "$J" "fig(fn(j, 0, '0x1000')), rows(fn(j, 0, '0x1000'), 'callers')")" \
	"((1, 100.0, 60.0), {'undefined': (1, 100.0, 60.0)})"
pt_expect "json: a callers" "$(pt_json "$J" "fig(fn(j, 0, '0x2000')), sorted(rows(fn(j, 0, '0x2000'), 'callers').items())")" \
	"((2, 25.0, 24.0), [('0x1000', (1, 20.0, 20.0)), ('0x3000', (1, 5.0, 4.0))])"
pt_expect "json: suspend OWN 0, counted in b's ACC not OWN" \
	"$(pt_json "$J" "fig(fn(j, 0, 'suspend')), fig(fn(j, 0, '0x3000')), rows(fn(j, 0, '0x3000'), 'called')['suspend']")" \
	"((1, 4.0, 0.0), (1, 20.0, 11.0), (1, 4.0, 0.0))"
pt_expect "json: <alloc> OWN = ACC, called from the top" \
	"$(pt_json "$J" "fig(fn(j, 0, '<alloc>')), rows(fn(j, 0, '<alloc>'), 'callers')")" \
	"((1, 1.0, 1.0), {'0x2000': (1, 1.0, 1.0)})"

# golden text (PROFILE_BLESS=1 rewrites it)
it_run analyse simple.trace
if [ "${PROFILE_BLESS:-0}" = 1 ]; then cp "$IT_TMP/out" "$top_srcdir/tests/profile/expected/simple.txt"; fi
if diff -u "$top_srcdir/tests/profile/expected/simple.txt" "$IT_TMP/out" >"$IT_TMP/diff"; then
	it_ok "analyse: golden text"
else
	it_fail "analyse: golden text" "$IT_TMP/diff"
fi

# the database gives the same analysis as the trace
it_run profile -o simple.db simple.trace
it_run analyse simple.db
if [ $IT_RC = 0 ] && diff "$top_srcdir/tests/profile/expected/simple.txt" "$IT_TMP/out" >"$IT_TMP/diff"; then
	it_ok "profile -o: analyse of the database = of the trace"
else
	it_fail "profile -o: analyse of the database = of the trace" "$IT_TMP/diff" "$IT_TMP/err"
fi
it_run analyse --json simple.db
pt_expect "profile -o: json from the database" "$(cmp -s "$IT_TMP/out" "$J" && echo same)" "same"
it_run profile -o simple.db simple.trace
pt_expect "profile -o: replaces a profile" "$IT_RC" "0"
echo "precious" >"$IT_DB/notes.txt"
it_run profile -o notes.txt simple.trace
pt_expect "profile -o: refuses to overwrite another file" "$IT_RC $(cat "$IT_DB/notes.txt") $(wc -l <"$IT_TMP/err")" "2 precious 1"

# --dump
it_run profile --dump simple.trace
pt_expect "dump: one line per record" "$(wc -l <"$IT_TMP/out") $(grep -c ' call ' "$IT_TMP/out")" "13 4"
pt_expect "dump: a line" "$(grep ' suspend ' "$IT_TMP/out")" "1 52.000000 suspend for 4.000000 ms sleep"
it_run profile --dump d.txt simple.trace
it_run profile --dump d.txt --append simple.trace
pt_expect "dump: FILE and --append" "$(wc -l <"$IT_DB/d.txt") $(grep -c summary "$IT_TMP/out")" "26 0"

# options of analyse
it_run analyse --no-callers simple.trace
pt_expect "analyse --no-callers" "$(grep -c '^  [^ ]' "$IT_TMP/out") $(grep -c '^\* ' "$IT_TMP/out")" "0 5"
it_run analyse --no-details simple.trace
pt_expect "analyse --no-details" "$(grep -c '^\* ' "$IT_TMP/out") $(grep -c '^thread 1' "$IT_TMP/out")" "0 1"
it_run analyse --sort own simple.trace
pt_expect "analyse --sort own" "$(grep '^\* ' "$IT_TMP/out" | awk '{print $2}' | tr '\n' ' ')" "0x1000 0x2000 0x3000 <alloc> suspend "
it_run analyse --cols 120 simple.trace
pt_expect "analyse --cols 120" "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$IT_TMP/out")" "120"
it_run analyse --cols 79 simple.trace
pt_expect "analyse --cols 79 is refused" "$IT_RC" "2"
it_run analyse --style flat simple.trace
pt_expect "analyse --style flat of an exact trace: no samples" "$IT_RC $(grep -c 'no samples' "$IT_TMP/err")" "1 1"
it_run analyse --style gprof simple.trace
pt_expect "analyse --style gprof is refused" "$IT_RC $(grep -c 'fprof, flat' "$IT_TMP/err")" "2 1"
it_run analyse --style fprof --dest out.txt simple.trace
it_run analyse --dest out.txt --append simple.trace
pt_expect "analyse --dest --append" "$(grep -c '^totals' "$IT_DB/out.txt")" "2"
it_run analyse -o out2.txt simple.trace
it_run analyse --output=out2.txt --append simple.trace
pt_expect "analyse -o, --output --append" "$IT_RC $(grep -c '^totals' "$IT_DB/out2.txt")" "0 2"
it_run analyse --append simple.trace
pt_expect "analyse --append without --dest" "$IT_RC" "2"
it_run analyse --json --totals simple.trace
pt_expect "analyse --totals" "$(pt_json "$IT_TMP/out" "fig(fn(j, None, '0x2000'))")" "(2, 25.0, 24.0)"

# recursion, mutual recursion, untraced entries; two threads in
# interleaved chunks; cpu clock
pt_gen rec <<'S'
header clock cpu hz 1e9
1 call 0 0xa000
1 call 10000000 0xb000
1 call 20000000 0xa000
1 call 30000000 0xb000
2 call 0 0xc000
2 call 1000000 0xc000
2 flush
1 ret 40000000 0xb000
1 ret 50000000 0xa000
1 flush
2 ret 3000000 0xc000
2 ret 4000000 0xc000
2 call 5000000 0xd000
2 ret 6000000 0xd000
2 ret 9000000 0xe000
2 flush
1 ret 60000000 0xb000
1 ret 70000000 0xa000
S
it_run analyse --json rec.trace
R=$IT_TMP/out
pt_expect "cpu clock" "$(pt_json "$R" "j['clock'], len(j['threads'])")" "('cpu', 2)"
pt_expect "mutual recursion: ACC once" "$(pt_json "$R" "fig(fn(j, 0, '0xa000')), fig(fn(j, 0, '0xb000')), rows(fn(j, 0, '0xb000'), 'called')")" \
	"((2, 70.0, 40.0), (2, 50.0, 30.0), {'0xa000': (1, 0.0, 20.0)})"
pt_expect "direct recursion: ACC once" "$(pt_json "$R" "fig(fn(j, 1, '0xc000')), rows(fn(j, 1, '0xc000'), 'callers')")" \
	"((2, 4.0, 4.0), {'0xe000': (1, 4.0, 2.0), '0xc000': (1, 0.0, 2.0)})"
pt_expect "untraced entry: caller undefined, CNT 0" \
	"$(pt_json "$R" "fig(fn(j, 1, '0xe000')), rows(fn(j, 1, '0xe000'), 'callers'), sorted(rows(fn(j, 1, '0xe000'), 'called'))")" \
	"((0, 9.0, 4.0), {'undefined': (0, 9.0, 4.0)}, ['0xc000', '0xd000'])"

# TSC: CLOCK records 20 ms apart say 2 ticks per ns; nominal rate 1 GHz
pt_gen tsc <<'S'
header clock tsc hz 1e9
0 clock 0 1000
0 clock 40000000 20001000
1 call 0 0x1000
1 ret 40000000 0x1000
S
it_run analyse --json tsc.trace
pt_expect "tsc: CLOCK records refine the rate" "$(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000'))")" "(1, 20.0, 20.0)"
pt_gen tsc2 <<'S'
header clock tsc hz 1e9
0 clock 0 1000
0 clock 4000000 2001000
1 call 0 0x1000
1 ret 4000000 0x1000
S
it_run analyse --json tsc2.trace
pt_expect "tsc: spans under 10 ms keep tick_hz" "$(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000'))")" "(1, 4.0, 4.0)"

# an in-process profile: PROF_PAIR rows, no events
pt_gen inproc <<'S'
header flags 16
1 start 0 55 worker
1 pair 0 0x1000 0 1 100000000 60000000
1 pair 0 0x2000 0x1000 2 25000000 25000000
1 exit 100000000
S
it_run analyse --json inproc.trace
pt_expect "profile flag: PROF_PAIR records" \
	"$(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000')), fig(fn(j, 0, '0x2000')), rows(fn(j, 0, '0x2000'), 'callers'), j['threads'][0]['name']")" \
	"((1, 100.0, 60.0), (2, 25.0, 25.0), {'0x1000': (2, 25.0, 25.0)}, 'worker')"

# an option of the other kind of display is a usage error, not ignored
# (--thread 2 printed every thread of the fprof analysis)
it_run analyse --thread 2 inproc.trace
pt_expect "analyse --thread of an exact trace" "$IT_RC $(grep -c -- '--thread is for the sampling styles' "$IT_TMP/err")" "2 1"
it_run analyse --limit 5 inproc.trace
pt_expect "analyse --limit of an exact trace" "$IT_RC $(grep -c -- '--limit is for the sampling styles' "$IT_TMP/err")" "2 1"
it_run analyse --style tree --sort own inproc.trace
pt_expect "analyse --style tree --sort" "$IT_RC $(grep -c -- '--sort is for the fprof style' "$IT_TMP/err")" "2 1"

# a flush inside an allocator call: its CLOCK and its <trace-wait> come
# before the call's ALLOC record (trace_alloc_end flushes before it stamps
# the end).  <alloc> keeps the time before them (OWN = ACC, the wait out of
# both); the caller's OWN does not get it.
pt_gen allocflush <<'S'
header clock wall hz 1e9
1 start 0 1 main
1 call 0 0x1000
1 call 10000000 0x2000
1 clock 13000000 0
1 suspend 14000000 16000000 8
1 alloc 12000000 20000000 1 64
1 ret 30000000 0x2000
1 ret 40000000 0x1000
1 exit 40000000
S
it_run analyse --json allocflush.trace
pt_expect "json: a flush inside an allocator call" \
	"$(pt_json "$IT_TMP/out" "fig(fn(j, 0, '<alloc>')), fig(fn(j, 0, '0x2000')), [fig(f) for f in j['threads'][0]['kept_out']]")" \
	"((1, 6.0, 6.0), (1, 18.0, 12.0), [(1, 2.0, 2.0)])"

it_run profile --help
pt_expect "profile --help" "$IT_RC $(grep -c -- '--dump \[FILE' "$IT_TMP/out")" "0 1"
it_run analyse --help
pt_expect "analyse --help" "$IT_RC $(grep -c -- '--no-callers' "$IT_TMP/out")" "0 1"
it_finish
