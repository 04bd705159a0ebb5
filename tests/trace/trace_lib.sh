# trace_lib.sh — helpers of the tests of exact tracing, on top of
# tests/integration/lib.sh:
#     . "$top_srcdir/tests/trace/trace_lib.sh"
. "$top_srcdir/tests/integration/lib.sh"

TR_CHECK=$top_builddir/tests/trace/trace_check
TR_INSPECT=${TR_INSPECT:-$top_builddir/inspect/inspect}
TR_PY=$top_srcdir/tests/trace/analyse_check.py
TR_TARGET=$top_builddir/tests/trace/trace_target
TR_LINKED=$top_builddir/tests/trace/trace_target_linked

# tr_run HOW OUT TRACE MEMINST ARGS...: run the target (HOW = preload,
# linked, or a path to preload) with MEMINST; its stdout in OUT, stderr in
# OUT.err; the trace read into TRACE.chk.  Returns the first failure.
tr_run() {
	how=$1 out=$2 trace=$3 MI_MEMINST=$4
	shift 4
	rm -f "$trace" "$trace".*
	case $how in
	preload) mi_x "$TR_TARGET" "$@" >"$out" 2>"$out.err" ;;
	linked) mi_xl "$TR_LINKED" "$@" >"$out" 2>"$out.err" ;;
	*) mi_x "$how" "$@" >"$out" 2>"$out.err" ;;
	esac
	rc=$?
	unset MI_MEMINST
	[ $rc -eq 0 ] || return 1
	"$TR_CHECK" "$trace" >"$trace.chk" 2>>"$out.err"
}

# tr_field CHK THREAD NAME: the value after NAME on the thread's line.
tr_field() {
	awk -v t="$2" -v f="$3" '$1 == "thread" && $2 == t {
		for (i = 3; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' "$1"
}

# tr_calls CHK THREAD ADDRESS: CALL records of one function on one thread.
tr_calls() {
	awk -v t="$2" -v a="$3" '$1 == "call" && $2 == t && $3 == a { print $4; f = 1 }
		END { if (!f) print 0 }' "$1"
}

# tr_addr OUT NAME: the function's address as the target printed it.
tr_addr() {
	awk -v n="$2" '$1 == "fn" && $2 == n { print $3; exit }' "$1"
}
tr_expect() {
	awk -v n="$2" '$1 == "fn" && $2 == n { print $4; exit }' "$1"
}

# tr_analyse TRACE: `inspect analyse --json` of it in TRACE.json.
tr_analyse() {
	"$TR_INSPECT" analyse --json "$1" >"$1.json" 2>"$1.json.err"
}

# tr_assert JSON OUT CASE CLOCK: the analysis assertions (analyse_check.py);
# each problem is added to $why.
tr_assert() {
	tr_msg=$(python3 "$TR_PY" check "$@" 2>&1) ||
		while IFS= read -r l; do mi_why_add "$l"; done <<EOF_TR
$tr_msg
EOF_TR
}

# tr_same JSON_A JSON_B: same threads, functions and pairs with the same CNT.
tr_same() {
	tr_msg=$(python3 "$TR_PY" same "$@" 2>&1) ||
		while IFS= read -r l; do mi_why_add "$l"; done <<EOF_TR
$tr_msg
EOF_TR
}
