#!/bin/sh
# real.sh — one end-to-end sanity check with libmeminst's tracer: a program
# built with -finstrument-functions, traced with MEMINST=trace=wall, then
# profiled and analysed with names from its DWARF.  (The broad end-to-end
# tests of the tracer are in tests/trace/.)
. "$top_srcdir/tests/profile/lib.sh"

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
cat >"$IT_TMP/fibprog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static void *grab(void) { return malloc(100); }
static void nap(void) { usleep(20000); }
int main(void) { void *p = grab(); nap(); printf("%d\n", fib(10)); free(p); return 0; }
C
"$CC" -g -O0 -finstrument-functions -o "$IT_DB/fibprog" "$IT_TMP/fibprog.c" || exit 99
(cd "$IT_DB" && MEMINST=trace=wall,trace_file=fib.trace LD_PRELOAD=$MEMINST_LIB ./fibprog) >"$IT_TMP/prog.out" 2>&1
if [ ! -s "$IT_DB/fib.trace" ]; then
	echo "the tracer wrote no trace: skipped"
	cat "$IT_TMP/prog.out"
	exit 77
fi
it_run analyse --json fib.trace
J=$IT_TMP/out
pt_expect "real: fib(10) is 177 calls, 176 of them recursive" \
	"$(pt_json "$J" "fn(j, 0, 'fib')['calls'], rows(fn(j, 0, 'fib'), 'callers')['fib'][0], fn(j, 0, 'fib')['line']")" "(177, 176, 4)"
pt_expect "real: main is called from undefined, sleeps in suspend" \
	"$(pt_json "$J" "list(rows(fn(j, 0, 'main'), 'callers')), 'suspend' in rows(fn(j, 0, 'nap'), 'called'), fn(j, 0, 'suspend')['own_ms']")" \
	"(['undefined'], True, 0.0)"
pt_expect "real: nap's ACC holds the 20 ms sleep, not its OWN" \
	"$(pt_json "$J" "fn(j, 0, 'nap')['acc_ms'] >= 19.0, fn(j, 0, 'nap')['own_ms'] < 5.0, fn(j, 0, 'nap')['file'].endswith('fibprog.c')")" \
	"(True, True, True)"
pt_expect "real: grab's malloc is <alloc>" \
	"$(pt_json "$J" "'<alloc>' in rows(fn(j, 0, 'grab'), 'called')")" "True"
pt_expect "real: grab allocated 100 bytes in 1 block, main at least that" \
	"$(pt_json "$J" "fn(j, 0, 'grab')['own_bytes'], fn(j, 0, 'grab')['own_blocks'], fn(j, 0, 'main')['acc_bytes'] >= 100")" \
	"(100, 1, True)"
pt_expect "real: OWN sum = thread OWN <= total ACC" \
	"$(pt_json "$J" "abs(sum(f['own_ms'] for f in j['threads'][0]['functions']) - j['threads'][0]['own_ms']) < 0.01, j['totals']['own_ms'] <= j['totals']['acc_ms']")" \
	"(True, True)"
it_finish
