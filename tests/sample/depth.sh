# depth.sh — stacks deeper than sample_depth= (issue 12): a recursion 200
# calls deep, sampled at the default depth (64), ends in a [truncated]
# frame at its root side and main is not seen; with sample_depth=256 the
# whole stack is there, main included, and nothing is marked.  The same
# for allocation samples (--metric bytes), and the mark is in every
# display (flat, tree, callers) and export (folded time and bytes,
# callgrind, chrome, pprof, html) or in none.  Values out of range are
# refused with one line, by MEMINST and by the launcher.
. "$top_srcdir/tests/sample/sample_lib.sh"
ST_BLOCK=$top_builddir/tests/sample/sample_block
M=$top_builddir/session/meminst

for depth in default 256; do
	l=depth-$depth
	mi=sample=1000,alloc_sample=4096
	[ $depth = default ] || mi="$mi,sample_depth=$depth"
	st_run $l "$mi" "$ST_BLOCK" deep 200 300
	rc=$?
	why=
	[ $rc -eq 0 ] || mi_why_add "exit status $rc"
	for metric in time bytes; do
		st_analyse $l --metric $metric
		tr=$(st_j $l "round(fn('[truncated]').get('cum_percent', 0))")
		mn=$(st_j $l "round(fn('main').get('cum_percent', 0))")
		burn=$(st_j $l "round(fn('deep_burn').get('cum_percent', 0))")
		[ "${burn:-0}" -ge 90 ] || mi_why_add "$metric: deep_burn has ${burn:-0}% of the samples"
		if [ $depth = default ]; then
			[ "${tr:-0}" -ge 90 ] || mi_why_add "$metric: [truncated] is in ${tr:-0}% of the samples"
			[ "${mn:-0}" -eq 0 ] || mi_why_add "$metric: main is seen ${mn}% through 200 frames at depth 64"
		else
			[ "${tr:-0}" -eq 0 ] || mi_why_add "$metric: [truncated] in ${tr}% of whole stacks"
			[ "${mn:-0}" -ge 90 ] || mi_why_add "$metric: main is in ${mn:-0}% of the samples"
		fi
	done
	# every display and export: marked at depth 64, never with the whole stack
	t=$MI_TMP/$l.trace
	for style in flat tree callers; do
		"$ST_INSPECT" analyse --style $style "$t" >"$MI_TMP/$l.$style" 2>/dev/null
	done
	"$ST_INSPECT" export --format folded "$t" >"$MI_TMP/$l.folded" 2>/dev/null
	"$ST_INSPECT" export --format folded --metric bytes "$t" >"$MI_TMP/$l.bfolded" 2>/dev/null
	"$ST_INSPECT" export --format callgrind "$t" >"$MI_TMP/$l.callgrind" 2>/dev/null
	"$ST_INSPECT" export --format chrome "$t" >"$MI_TMP/$l.chrome" 2>/dev/null
	"$ST_INSPECT" export --format pprof -o "$MI_TMP/$l.pb.gz" "$t" 2>/dev/null
	python3 -c 'import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())' \
		"$MI_TMP/$l.pb.gz" >"$MI_TMP/$l.pprof" 2>/dev/null
	"$ST_INSPECT" html -o "$MI_TMP/$l.html" "$t" 2>/dev/null
	for out in flat tree callers folded bfolded callgrind chrome pprof html; do
		[ -s "$MI_TMP/$l.$out" ] || { mi_why_add "no $out output"; continue; }
		if [ $depth = default ]; then
			grep -aq '\[truncated\]' "$MI_TMP/$l.$out" || mi_why_add "$out: no [truncated]"
		else
			grep -aq '\[truncated\]' "$MI_TMP/$l.$out" && mi_why_add "$out: [truncated] in whole stacks"
		fi
	done
	if [ $depth = default ]; then
		for f in folded bfolded; do
			grep -q '^\[truncated\];deep_rec;' "$MI_TMP/$l.$f" ||
				mi_why_add "$f: the stacks do not begin with [truncated]"
		done
	fi
	st_verdict "$l: [truncated] ${tr:-0}%, main ${mn:-0}% (time and bytes, every display and export)"
done

l=depth-bad
why=
for v in 0 1025 x 64k ''; do
	MI_MEMINST="sample=100,sample_depth=$v" mi_x "$ST_BLOCK" deep 2 1 >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
	rc=$?
	[ $rc -ne 0 ] || mi_why_add "sample_depth='$v' accepted"
	grep -q "^meminst: bad MEMINST item 'sample_depth=$v'" "$MI_TMP/$l.err" ||
		mi_why_add "sample_depth='$v': $(head -1 "$MI_TMP/$l.err")"
	grep -q '^deep done' "$MI_TMP/$l.out" && mi_why_add "sample_depth='$v': the program ran"
done
if [ -x "$M" ]; then
	"$M" --sample-depth=2000 -- true >/dev/null 2>"$MI_TMP/$l.err"
	[ $? -eq 2 ] || mi_why_add "meminst --sample-depth=2000: not exit status 2"
	[ "$(wc -l <"$MI_TMP/$l.err")" -eq 1 ] && grep -q "sample-depth needs a number from 1 to 1024, not '2000'" "$MI_TMP/$l.err" ||
		mi_why_add "meminst --sample-depth=2000: $(head -1 "$MI_TMP/$l.err")"
fi
st_verdict "$l: bad sample_depth values refused with one line"

mi_finish
