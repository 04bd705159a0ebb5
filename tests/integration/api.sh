# api.sh — tests/targets/api_tags, linked with -lmeminst, in every mode and
# backend: exact allocator, type, class and thread figures through
# meminst_status_read, scopes and typed allocation, max_since_last reset per
# kind, alignment up to 1 MiB and malloc_usable_size; in off mode the
# readers must answer -1.  The target checks; this script requires exit 0,
# the mode, backend and header size it was asked for, and a count of the
# checks that ran.
. "$top_srcdir/tests/integration/lib.sh"

PROG=$MI_TARGETS/api_tags
OUT=$MI_TMP/api.out ERR=$MI_TMP/api.err

header_of() {
	case $1 in off) echo 0 ;; mis) echo 16 ;; mim) echo 32 ;; esac
}

# api_case LABEL EXPECTED-FIRST-LINE [MEMINST]
api_case() {
	label=$1 expect=$2
	if [ $# -ge 3 ]; then MI_MEMINST=$3; fi
	mi_xl "$PROG" >"$OUT" 2>"$ERR"
	rc=$?
	unset MI_MEMINST
	why=
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(head -n 1 "$OUT")" = "$expect" ] ||
		mi_why_add "reports '$(head -n 1 "$OUT")', expected '$expect'"
	grep -q '^[1-9][0-9]* checks, 0 failed$' "$OUT" || mi_why_add "no success line"
	mi_verdict "$label" "$why" "$OUT" stdout "$ERR" stderr
}

api_case "api_tags MEMINST unset" "mode=off backend=system header=0"
for mode in off mis mim; do
	for b in $MEMINST_BACKENDS; do
		api_case "api_tags $mode/$b" "mode=$mode backend=$b header=$(header_of $mode)" \
			"$mode,backend=$b"
	done
done
mi_finish
