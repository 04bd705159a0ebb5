# lib.sh — helpers of the profile shell tests, on top of tests/inspect/lib.sh
# (it_ok, it_fail, it_run, it_finish, the scratch directory $IT_DB):
#     . "$top_srcdir/tests/profile/lib.sh"
#
#   pt_gen NAME < SCRIPT     $IT_DB/NAME.trace from a tracegen script
#   pt_json FILE EXPR        print the Python expression EXPR over the JSON
#                            document in FILE (bound to j); fn(j, T, NAME)
#                            is function NAME of thread index T
. "$top_srcdir/tests/inspect/lib.sh"

PT_TRACEGEN=$top_builddir/tests/profile/tracegen
[ -x "$PT_TRACEGEN" ] || { echo "error: $PT_TRACEGEN not built"; exit 99; }
it_have_python || { echo "python3 is needed for these checks"; exit 77; }

pt_gen() {
	"$PT_TRACEGEN" "$IT_DB/$1.trace" || exit 99
}

pt_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def fn(j, t, name):
    fs = j['threads'][t]['functions'] if t is not None else j['functions']
    for f in fs:
        if f['name'] == name:
            return f
    return None
def rows(f, key):
    return {r['name']: (r['calls'], round(r['acc_ms'], 3), round(r['own_ms'], 3)) for r in f[key]}
def fig(f):
    return (f['calls'], round(f['acc_ms'], 3), round(f['own_ms'], 3))
print(eval(sys.argv[2]))
PY
}

# pt_trace_both MEMINST TRACE PROGRAM [ARGS]: run $IT_DB/PROGRAM traced
# into $IT_DB/TRACE (exit 77 when no trace comes), then analyse it with
# --json into $IT_TMP/comp.json and with --no-compensate into raw.json.
pt_trace_both() {
	pt_opts=$1 pt_trace=$2
	shift 2
	rm -f "$IT_DB/$pt_trace"
	(cd "$IT_DB" && MEMINST=$pt_opts,trace_file=$pt_trace LD_PRELOAD=$MEMINST_LIB "./$@") >"$IT_TMP/prog.out" 2>&1
	[ -s "$IT_DB/$pt_trace" ] || { echo "the tracer wrote no trace: skipped"; exit 77; }
	it_run analyse --json "$pt_trace"
	cp "$IT_TMP/out" "$IT_TMP/comp.json"
	it_run analyse --json --no-compensate "$pt_trace"
	cp "$IT_TMP/out" "$IT_TMP/raw.json"
}

# pt_expect WHAT GOT WANT
pt_expect() {
	if [ "$2" = "$3" ]; then it_ok "$1"; else echo "  | got:  $2"; echo "  | want: $3"; it_fail "$1"; fi
}
