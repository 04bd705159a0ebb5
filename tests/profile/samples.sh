#!/bin/sh
# samples.sh — the sampling displays of `inspect analyse` (flat, tree,
# callers, anomalies) on generated traces with exactly known samples.
# Functions are bare addresses (no module map): frame 0 of a timer sample
# is the pc, the other frames are return addresses, looked up at address
# - 1, so the scripts write FUNCTION + 1 for them.  Weights are 1 ms
# (ticks are nanoseconds).
. "$top_srcdir/tests/profile/lib.sh"

# main 0x1000, a 0x2000, b 0x3000, c 0x4000.
#   4 x main>a            2 x main>a>b          2 x main>a>b>a
#   1 x main>a>b>a>b      (b called by a again: collapsed onto the first b)
#   1 x main>a>a>a        (a calls itself: stays on its node, twice)
#   1 x main>a>b>a>b>c
rec_script() {
	echo "header clock wall hz 1e9 pid 99 flags 2"
	t=0
	s() { n=$1; shift; i=0; while [ $i -lt $n ]; do t=$((t + 1)); echo "1 sample $t 1000000 $*"; i=$((i + 1)); done; }
	s 4 0x2000 0x1001
	s 2 0x3000 0x2001 0x1001
	s 2 0x2000 0x3001 0x2001 0x1001
	s 1 0x3000 0x2001 0x3001 0x2001 0x1001
	s 1 0x2000 0x2001 0x2001 0x1001
	s 1 0x4000 0x3001 0x2001 0x3001 0x2001 0x1001
	echo "1 counts 100 0x2000 42 0x3000 7"
	echo "1 asample 101 4096 64 0x2001 0x1001"
	echo "1 asample 102 1000 10 0x3001 0x2001 0x1001"
	echo "1 scost 103 50000 11"
}
rec_script | pt_gen rec

it_run analyse --style tree --time samples rec.trace
sed -n '/^ *total/,$p' "$IT_TMP/out" >"$IT_TMP/tree"
cat >"$IT_TMP/want" <<'T'
       total         self recursive  function (recursion collapsed)
          11            0            <all>
          11            0              0x1000
          11            5         2      0x2000
           6            3         2        0x3000
           4            2                    0x2000
           1            1                    0x4000
T
if [ $IT_RC -eq 0 ] && cmp -s "$IT_TMP/tree" "$IT_TMP/want"; then
	it_ok "tree: recursion collapsed as SWI-Prolog does"
else
	diff "$IT_TMP/want" "$IT_TMP/tree" >"$IT_TMP/why" 2>&1; it_fail "tree: recursion collapsed" "$IT_TMP/why"
fi

# (the second a under b has children 2: the samples that went on to b
# were collapsed back onto the first b, above it)
# a trace with samples and no calls: flat by default
it_run analyse --json rec.trace
J=$IT_TMP/out
pt_expect "flat by default, header figures" \
	"$(pt_json "$J" "(j['style'], j['samples'], j['ms'], j['nfunctions'], j['nnodes'], round(j['distortion']['sampler_percent'], 3))")" \
	"('flat', 11, 11.0, 4, 5, 0.455)"
pt_expect "flat: self, cumulative, calls" \
	"$(pt_json "$J" "[(f['name'], f['self_samples'], f['cum_samples'], f['calls']) for f in j['functions']]")" \
	"[('0x2000', 7, 11, 42), ('0x3000', 3, 6, 7), ('0x4000', 1, 1, 0), ('0x1000', 0, 11, 0)]"
it_run analyse --json --cumulative --top 2 rec.trace
pt_expect "--cumulative --top 2 (ties: by self)" "$(pt_json "$J" "[f['name'] for f in j['functions']]")" "['0x2000', '0x1000']"

it_run analyse --json --hide 0x3000 rec.trace
pt_expect "--hide: b's time goes to its caller a" \
	"$(pt_json "$J" "[(f['name'], f['self_samples'], f['cum_samples']) for f in j['functions']]")" \
	"[('0x2000', 10, 11), ('0x4000', 1, 1), ('0x1000', 0, 11)]"
it_run analyse --json --style tree --hide 0x3000 rec.trace
pt_expect "--hide: b's callees hang under a" \
	"$(pt_json "$J" "[(c['name'], c['total_samples']) for c in j['tree'][0]['children'][0]['children']]")" \
	"[('0x4000', 1)]"

it_run analyse --json --style callers rec.trace
pt_expect "callers of b: a; callees: a, c (self, children)" \
	"$(pt_json "$J" "[(f['name'], f['self_samples'], f['children_samples'], f['recursive'], [(c['name'], c['self_samples'], c['children_samples']) for c in f['callers']], [(c['name'], c['self_samples'], c['children_samples']) for c in f['callees']]) for f in j['functions'] if f['name'] == '0x3000']")" \
	"[('0x3000', 3, 3, 2, [('0x2000', 3, 3)], [('0x2000', 2, 2), ('0x4000', 1, 0)])]"

it_run analyse --json --metric bytes rec.trace
pt_expect "--metric bytes: estimates per function" \
	"$(pt_json "$J" "[(f['name'], f['self_bytes'], f['cum_bytes'], f['self_blocks']) for f in j['functions']]")" \
	"[('0x2000', 4096, 5096, 64.0), ('0x3000', 1000, 1000, 100.0), ('0x1000', 0, 5096, 0.0)]"

it_run analyse --time percent --style flat rec.trace
grep -q '^ 63.64 *100.00% *63.64% *42  0x2000$' "$IT_TMP/out" && it_ok "--time percent" ||
	it_fail "--time percent" "$IT_TMP/out"

# Anomalies: thread 1 spends 80% in 0x5000, thread 2 20%; 0x7000 has
# 3 samples; a second run with the split of thread 2 only.
anom() {
	echo "header clock wall hz 1e9 flags 2"
	for i in $(seq 1 80); do echo "1 sample $i 1000000 0x5000 0x1001"; echo "2 sample $i 1000000 0x6000 0x1001"; done
	for i in $(seq 81 100); do echo "1 sample $i 1000000 0x6000 0x1001"; echo "2 sample $i 1000000 0x5000 0x1001"; done
	for i in 101 102 103; do echo "1 sample $i 1000000 0x7000 0x1001"; done
}
anom | pt_gen anom
anom | grep -v '^1 ' | pt_gen anom2
it_run analyse --json --style anomalies anom.trace anom2.trace
pt_expect "anomalies: threads differ" \
	"$(pt_json "$J" "sorted((a['thread'], a['name']) for a in j['threads'])")" \
	"[(1, '0x5000'), (1, '0x6000'), (2, '0x5000'), (2, '0x6000')]"
# (0x7000: 1.5% against 0, under the 2 points)
pt_expect "anomalies: runs differ" "$(pt_json "$J" "sorted(a['name'] for a in j['runs'])")" "['0x5000', '0x6000']"
pt_expect "anomalies: too few samples" "$(pt_json "$J" "[(a['name'], a['samples']) for a in j['uncertain']]")" "[('0x7000', 3)]"
it_run analyse --style anomalies anom.trace
grep -q '^Rule: .*3 \* sqrt' "$IT_TMP/out" && it_ok "anomalies: the rule is stated" || it_fail "the rule" "$IT_TMP/out"

# SAMPLE_RESET (wall clock: every thread).  Thread 2's chunk, written
# first, holds samples from before and after thread 1's reset at 50: the
# reader must read the trace again to drop only the earlier ones.
{
	echo "header clock wall hz 1e9 flags 2"
	for i in 10 20 30; do echo "2 sample $i 1000000 0x8000 0x1001"; done
	for i in 60 70; do echo "2 sample $i 1000000 0x9000 0x1001"; done
	echo "2 flush"
	echo "1 sample 40 1000000 0x8000 0x1001"
	echo "1 reset 50"
	echo "1 sample 55 1000000 0x9000 0x1001"
} | pt_gen reset
it_run analyse --json reset.trace
pt_expect "reset drops the earlier samples of every thread" \
	"$(pt_json "$J" "[(f['name'], f['self_samples']) for f in j['functions'] if f['self_samples']]")" "[('0x9000', 3)]"

it_run analyse --json --thread 2 anom.trace
pt_expect "--thread 2" "$(pt_json "$J" "(j['thread'], j['samples'], j['functions'][0]['name'])")" "(2, 100, '0x6000')"

# mistakes
it_run analyse --style flat --top x rec.trace
[ $IT_RC -eq 2 ] && it_ok "bad --top: usage error" || it_fail "bad --top rc=$IT_RC" "$IT_TMP/err"
it_run analyse --style flat --time hours rec.trace
[ $IT_RC -eq 2 ] && it_ok "bad --time: usage error" || it_fail "bad --time rc=$IT_RC" "$IT_TMP/err"
it_run analyse --style flat rec.trace rec.trace
[ $IT_RC -eq 2 ] && it_ok "two traces only for anomalies" || it_fail "two traces rc=$IT_RC" "$IT_TMP/err"
it_run analyse --thread 9 rec.trace
[ $IT_RC -eq 1 ] && grep -q 'no samples of thread 9' "$IT_TMP/err" && it_ok "--thread of no thread" ||
	it_fail "--thread 9 rc=$IT_RC" "$IT_TMP/err"
echo "1 call 1 0x1000" | pt_gen calls
it_run analyse --style flat calls.trace
[ $IT_RC -eq 1 ] && grep -q 'no samples' "$IT_TMP/err" && it_ok "flat on a trace without samples" ||
	it_fail "flat without samples rc=$IT_RC" "$IT_TMP/err"
it_finish
