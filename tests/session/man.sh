# man.sh — meminst(1) renders without a warning and names every option of
# `meminst --help`.
. "$top_srcdir/tests/integration/lib.sh"

PAGE=$top_srcdir/doc/meminst.1
why=
if command -v groff >/dev/null; then
	groff -man -ww -z "$PAGE" >"$MI_TMP/err" 2>&1
	[ -s "$MI_TMP/err" ] && mi_why_add "groff warns"
fi
mi_verdict "groff -man -ww meminst.1" "$why" "$MI_TMP/err" groff

why=
"$top_builddir/session/meminst" --help >"$MI_TMP/help" || mi_why_add "--help failed"
for opt in $(grep -o -- '--[a-z][a-z-]*' "$MI_TMP/help" | sort -u); do
	esc=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
	grep -q -- "$esc" "$PAGE" || mi_why_add "$opt is not in meminst.1"
done
mi_verdict "every option of --help is in meminst.1" "$why"
mi_finish
