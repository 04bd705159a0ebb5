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

# pt_expect WHAT GOT WANT
pt_expect() {
	if [ "$2" = "$3" ]; then it_ok "$1"; else echo "  | got:  $2"; echo "  | want: $3"; it_fail "$1"; fi
}
