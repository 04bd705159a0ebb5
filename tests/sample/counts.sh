# counts.sh — precise mode: a program built with -finstrument-functions and
# sampled with sample_counts=on records exact call counts (COUNTS records)
# next to its samples, and the measured cost of one counted call.
. "$top_srcdir/tests/sample/sample_lib.sh"

T=$top_builddir/tests/sample/sample_counts
l=counts
MI_MEMINST="sample=1000,sample_counts=on"
(cd "$MI_TMP" && mi_xl "$T") >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
rc=$?
unset MI_MEMINST
tr=$(ls "$MI_TMP"/meminst.*.trace 2>/dev/null | head -1)
: >"$MI_TMP/$l.sum"
[ -n "$tr" ] && $ST_CHECK "$tr" --exe "$T" >"$MI_TMP/$l.sum" 2>&1
why=
[ $rc -eq 0 ] || mi_why_add "exit status $rc"
for fc in leaf:100000 mid:1000 outer:1 main:1; do
	f=${fc%:*} want=${fc#*:}
	got=$(awk -v f="$f" '$1 == "counts" && $2 == f { print $3 }' "$MI_TMP/$l.sum")
	[ "${got:-0}" = "$want" ] || mi_why_add "$f counted ${got:-0} times, not $want"
done
cost=$(st_field $l cost)
[ -n "$cost" ] || mi_why_add "no COUNTS_COST record"
# inspect shows the same counts, and the perturbation they cause
if [ -n "$tr" ]; then
	mv "$tr" "$MI_TMP/$l.trace"
	st_analyse $l --top 0
	got=$(st_j $l "[int(fn(f).get('calls') or 0) for f in ('leaf', 'mid', 'outer')]")
	[ "$got" = "[100000, 1000, 1]" ] || mi_why_add "inspect analyse shows calls $got"
	pc=$(st_j $l "j['distortion']['counts_percent'] > 0")
	[ "$pc" = True ] || mi_why_add "no perturbation of the counted calls in the distortion"
fi
st_verdict "$l: exact counts (cost of a counted call ${cost:-?} ps)"

# Without sample_counts: no counts.
l=nocounts
MI_MEMINST="sample=1000"
(cd "$MI_TMP" && rm -f meminst.*.trace && mi_xl "$T") >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
unset MI_MEMINST
tr=$(ls "$MI_TMP"/meminst.*.trace 2>/dev/null | head -1)
: >"$MI_TMP/$l.sum"
[ -n "$tr" ] && $ST_CHECK "$tr" --exe "$T" >"$MI_TMP/$l.sum" 2>&1
why=
grep -q '^counts ' "$MI_TMP/$l.sum" && mi_why_add "counts recorded without sample_counts"
grep -q '^samples [1-9]' "$MI_TMP/$l.sum" || mi_why_add "no samples"
st_verdict "$l: no counts unless asked"
mi_finish
