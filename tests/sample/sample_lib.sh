# sample_lib.sh — helpers of the sampling tests, on top of
# tests/integration/lib.sh.  A case runs a program preloaded with a MEMINST
# that samples, into a trace file of its own, then summarises the trace with
# check_samples.py (see its header for the lines it prints).
. "$top_srcdir/tests/integration/lib.sh"

ST_TARGET=$top_builddir/tests/sample/sample_target
ST_CHECK="python3 $top_srcdir/tests/sample/check_samples.py"
command -v python3 >/dev/null || { echo "skip  $MI_NAME: no python3"; exit 77; }

# st_run LABEL MEMINST PROGRAM ARGS...: run preloaded, writing
# $MI_TMP/LABEL.trace; stdout in $MI_TMP/LABEL.out, stderr in .err, the
# summary in .sum.  Returns the program's exit status.
st_run() {
	st_label=$1 st_meminst=$2
	shift 2
	rm -f "$MI_TMP"/meminst.*.trace
	(cd "$MI_TMP" && MI_MEMINST=$st_meminst mi_x "$@") \
		>"$MI_TMP/$st_label.out" 2>"$MI_TMP/$st_label.err"
	st_rc=$?
	# the largest trace: the program's own, not a child's
	st_trace=$(ls -S "$MI_TMP"/meminst.*.trace 2>/dev/null | head -1)
	[ -n "$st_trace" ] && mv "$st_trace" "$MI_TMP/$st_label.trace"
	rm -f "$MI_TMP"/meminst.*.trace
	: >"$MI_TMP/$st_label.sum"
	[ -f "$MI_TMP/$st_label.trace" ] &&
		$ST_CHECK "$MI_TMP/$st_label.trace" ${ST_EXE:+--exe "$ST_EXE"} \
			>"$MI_TMP/$st_label.sum" 2>&1
	return $st_rc
}

# st_case LABEL MEMINST PROGRAM ARGS...: a new case ($why empty): st_run,
# and a reason when the program did not exit 0.
st_case() {
	st_run "$@"
	why=
	[ $st_rc -eq 0 ] || mi_why_add "exit status $st_rc"
}

# st_done LABEL WORD: a reason when the program did not print "WORD done",
# or when meminst wrote a line on its stderr.
st_done() {
	grep -q "^$2 done\$" "$MI_TMP/$1.out" || mi_why_add "the program did not finish"
	mi_no_complaint "$MI_TMP/$1.err"
}

# st_analyse LABEL [OPTIONS...]: `inspect analyse --json OPTIONS` of the
# run's trace into $MI_TMP/LABEL.json (stderr in LABEL.aerr).
ST_INSPECT=$top_builddir/inspect/inspect
st_analyse() {
	st_l=$1
	shift
	: >"$MI_TMP/$st_l.json"
	[ -f "$MI_TMP/$st_l.trace" ] &&
		"$ST_INSPECT" analyse --json "$@" "$MI_TMP/$st_l.trace" >"$MI_TMP/$st_l.json" 2>"$MI_TMP/$st_l.aerr"
}

# st_j LABEL EXPR: a Python expression over the JSON document of LABEL
# (bound to j); fn(NAME) is the row of function NAME ({} when absent).
st_j() {
	python3 - "$MI_TMP/$1.json" "$2" <<'PY' 2>/dev/null
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    j = {"functions": []}
def fn(name):
    for f in j.get("functions", []):
        if f["name"] == name:
            return f
    return {}
print(eval(sys.argv[2]))
PY
}

# st_field LABEL KEY [N]: field N (default 2) of the summary line KEY.
st_field() {
	awk -v k="$2" -v n="${3:-2}" '$1 == k && !done { print $n; done = 1 }' "$MI_TMP/$1.sum"
}

# st_share LABEL FUNC: the time share of FUNC (0 when absent).
st_share() {
	awk -v f="$2" '$1 == "time" && $2 == f { print $3; found = 1 }
		END { if (!found) print 0 }' "$MI_TMP/$1.sum"
}

# st_within VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE.
st_within() {
	awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; exit !(d <= t && -d <= t) }'
}

# st_verdict LABEL: ok, or FAIL with $why and the evidence.
st_verdict() {
	mi_verdict "$1" "$why" "$MI_TMP/$1.sum" summary "$MI_TMP/$1.err" stderr
}
