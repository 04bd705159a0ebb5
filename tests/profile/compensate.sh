#!/bin/sh
# compensate.sh — the tracer's calibrated cost taken off the functions'
# times (compensation, the default) against a program whose shares are
# known by construction: three leaves doing 20, 200 and 1000 volatile adds,
# called 50, 5 and 1 times a round, a third of the leaves' work each.
# Traced with trace=cpu (a loaded machine does not count), the tiny leaf's
# share of the leaves' own time is near a third compensated and far above
# it raw (--no-compensate), where each of its calls carries two hooks.
. "$top_srcdir/tests/profile/lib.sh"

# A calibration measured in a slower moment than the run, fitted to it
# (tracegen, exact): main calls a leaf 2000 times; each leaf call holds
# 30 ns (the hooks' 20 and 10 of work), each gap in main 20 (the hooks
# only).  A start that measured 20 ns an interval holds as measured; 25
# and 30 over-say it (main's OWN below its estimate: once a failed
# calibration) and are scaled by 20/25 and 20/30, leaving the leaf its 10
# ns a call (0.020 ms) and main nothing; 60 is off by more than half: the
# check fails it and the times stay raw.
fit_trace() {
	{
		echo "header clock cpu hz 1000000000"
		echo "1 start 0 100 main"
		echo "0 tcost 0 $(($1 / 2)) 0 0 $1 $1 $1 $1 $1 $1 0"
		echo "1 call 1000 0x401000"
		awk 'BEGIN { t = 1000; for (i = 0; i < 2000; i++) { t += 20; print "1 call " t " 0x402000"; t += 30; print "1 ret " t " 0x402000" }
			print "1 ret " t + 20 " 0x401000"; print "1 exit " t + 30 }'
	} | pt_gen "fit$1"
}
for ps_want in "20000 1.0 True False" "25000 0.8 True False" "30000 0.667 True False" \
	       "60000 1.0 False True"; do
	set -- $ps_want
	fit_trace "$1"
	it_run analyse --json "fit$1.trace"
	cp "$IT_TMP/out" "$IT_TMP/fit.json"
	pt_expect "compensate: a start at $1 ps an interval: scale, compensated, failed" \
		"$(pt_json "$IT_TMP/fit.json" "j['tracer_cost']['calibration_scale'], j['compensated'], j['tracer_cost']['calibration_failed']")" \
		"($2, $3, $4)"
	if [ "$3" = True ]; then
		pt_expect "compensate: a start at $1 ps: the leaf's OWN, main's OWN" \
			"$(pt_json "$IT_TMP/fit.json" "fn(j, 0, '0x402000')['own_ms'], fn(j, 0, '0x401000')['own_ms']")" \
			"(0.02, 0.0)"
	fi
done
it_run analyse fit25000.trace
pt_expect "compensate: the text says the start's measure was scaled" \
	"$(grep -c "measure x 0.80, to fit the run" "$IT_TMP/out")" "1"

CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
cat >"$IT_TMP/shares.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned sink;
#define ADDS(n) for (unsigned i = 0; i < (n); i++) sink += i
void tiny(void) { ADDS(20); }
void mid(void) { ADDS(200); }
void big(void) { ADDS(1000); }
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 50; i++)
			tiny();
		for (int i = 0; i < 5; i++)
			mid();
		big();
	}
	printf("%u\n", sink);
	return 0;
}
C
"$CC" -g -O1 -fno-inline -finstrument-functions -o "$IT_DB/shares" "$IT_TMP/shares.c" || exit 99

# tiny's share of the three leaves' OWN
SHARE="round(fn(j, 0, 'tiny')['own_ms'] / sum(fn(j, 0, n)['own_ms'] for n in ('tiny', 'mid', 'big')), 3)"
# A machine loaded far beyond its cores (CI's make -j2 beside other jobs)
# slows the hooks' cache-cold calls past what the start-up calibration
# measured: up to six runs, the first near a third (and nearer than raw)
# counts; compensation that does not work misses in all six.  (In CI runs
# one in two or three missed; an in-run calibration that fixed it under
# load made the signal storm of tests/trace/signals.sh lose records and
# failed calibrations in CI, and was taken out again: bench/RESULTS.md.)
for attempt in 1 2 3 4 5 6; do
	pt_trace_both trace=cpu s.trace shares 20000
	comp=$(pt_json "$IT_TMP/comp.json" "$SHARE")
	raw=$(pt_json "$IT_TMP/raw.json" "$SHARE")
	echo "  | run $attempt: tiny's share of the leaves: compensated $comp, raw $raw, by construction 0.333"
	# (a run whose hooks happened to be cheap leaves raw close too: another)
	[ "$(python3 -c "print(abs($comp - 1/3) < 0.2 and abs($raw - 1/3) > abs($comp - 1/3) + 0.04)")" = True ] &&
		break
	# a neighbour's burst outlasted six runs in a row once (raw 0.70 in
	# all six, 0.52 before and after): the next run a little later
	sleep "$attempt"
done
pt_expect "compensate: the JSON says compensated, and by how much" \
	"$(pt_json "$IT_TMP/comp.json" "j['compensated'], j['tracer_cost']['taken_off_ms'] > 0, j['tracer_cost']['calibration_failed']")" \
	"(True, True, False)"
pt_expect "compensate: --no-compensate says raw" \
	"$(pt_json "$IT_TMP/raw.json" "j['compensated'], j['tracer_cost']['taken_off_ms']")" "(False, 0.0)"
# (perf puts it at 0.37 on the build untraced: the loops' speeds differ a
# little; compensated runs give 0.38-0.41 on an idle machine, raw 0.52-0.59)
pt_expect "compensate: tiny's compensated share within 0.2 of a third" \
	"$(python3 -c "print(abs($comp - 1/3) < 0.2)")" "True"
pt_expect "compensate: raw, tiny's share is off by more (the check would fail without compensation)" \
	"$(python3 -c "print(abs($raw - 1/3) > abs($comp - 1/3) + 0.04)")" "True"
pt_expect "compensate: compensated OWN sum = thread OWN" \
	"$(pt_json "$IT_TMP/comp.json" "abs(sum(f['own_ms'] for f in j['threads'][0]['functions']) - j['threads'][0]['own_ms']) < 0.01")" "True"
it_run analyse s.trace
pt_expect "compensate: the text says the times are compensated" \
	"$(grep -c 'taken off (compensated times' "$IT_TMP/out")" "1"
it_finish
