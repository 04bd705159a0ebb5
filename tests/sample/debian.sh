# debian.sh — unmodified Debian programs (built without frame pointers)
# under 1000 Hz sampling, cpu and wall, with allocation sampling at 512 KiB:
# python3 running a small script and gzip compressing ~50 MB.  Exit status
# and output must be those of the bare run, meminst must not complain, and
# the trace must hold samples with stacks deeper than the interrupted pc.
# `inspect analyse` must read each trace in every style, with sane totals
# (the self shares add up to 100%); python3's interpreter loop
# (_PyEval_EvalFrameDefault or another _PyEval/PyEval function) must be on
# 30% of its stacks or more; gzip is stripped: module+offset names are fine.
. "$top_srcdir/tests/sample/sample_lib.sh"
mi_need /usr/bin/python3 python3
mi_need /usr/bin/gzip gzip

cat >"$MI_TMP/work.py" <<'PY'
import json, re, zlib
data = [{"k%d" % i: [j * 1.5 for j in range(i % 50)]} for i in range(60000)]
text = json.dumps(data)
print(len(text), len(re.findall(r"k\d+", text)), zlib.crc32(text.encode()))
PY
# ~50 MB of text that compresses a little: gzip works for a few seconds
python3 -c "
import random
r = random.Random(7)
w = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta']
with open('$MI_TMP/big.txt', 'w') as f:
    for i in range(900000):
        f.write(' '.join(r.choice(w) + str(r.randrange(1000)) for _ in range(8)) + '\n')
"
py() { mi_x /usr/bin/python3 "$MI_TMP/work.py"; }
gz() { mi_x gzip -c "$MI_TMP/big.txt" | cksum; }

for prog in py gz; do
	mi_reference "$prog" $prog || continue
	for clock in cpu wall; do
		l=$prog-$clock
		MI_MEMINST="sample=1000,sample_clock=$clock,alloc_sample=512k"
		(cd "$MI_TMP" && $prog) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
		rc=$?
		unset MI_MEMINST
		why=
		[ $rc -eq "$mi_ref_rc" ] || mi_why_add "exit status $rc, bare $mi_ref_rc"
		cmp -s "$MI_TMP/ref.out" "$MI_TMP/$l.out" || mi_why_add "output differs"
		mi_no_complaint "$MI_TMP/$l.err"
		tr=$(ls -S "$MI_TMP"/meminst.*.trace 2>/dev/null | head -1)
		if [ -n "$tr" ]; then
			$ST_CHECK "$tr" >"$MI_TMP/$l.sum" 2>&1
			mv "$tr" "$MI_TMP/$l.trace"
			rm -f "$MI_TMP"/meminst.*.trace
		else
			: >"$MI_TMP/$l.sum"
		fi
		n=$(st_field $l samples) depth=$(st_field $l samples 4)
		[ "${n:-0}" -ge 100 ] || mi_why_add "only ${n:-0} samples in the trace"
		awk -v d="${depth:-0}" 'BEGIN { exit !(d >= 3) }' ||
			mi_why_add "stacks of ${depth:-0} frames on average: the walks stop early"
		st_analyse $l --top 0
		tot=$(st_j $l "round(sum(f['self_percent'] for f in j['functions']))")
		[ "${tot:-0}" = 100 ] || mi_why_add "inspect analyse: self shares add up to ${tot:-nothing}, not 100%"
		for style in tree callers anomalies; do
			"$ST_INSPECT" analyse --style $style "$MI_TMP/$l.trace" >/dev/null 2>"$MI_TMP/$l.serr" ||
				mi_why_add "inspect analyse --style $style failed: $(head -1 "$MI_TMP/$l.serr")"
		done
		if [ $prog = py ]; then
			# on nearly every stack; its own share is noisy (json,
			# the GC and malloc compete for the top places)
			ev=$(st_j $l "round(max([f['cum_percent'] for f in j['functions'] if f['name'].startswith(('_PyEval', 'PyEval'))] or [0]))")
			[ "${ev:-0}" -ge 30 ] ||
				mi_why_add "the interpreter loop (_PyEval*) is on ${ev:-0}% of the stacks, not 30% or more"
		fi
		st_verdict "$l: same output, $n samples, $depth frames deep"
	done
done
mi_finish
