# v1.sh — files of snapshot schema 1 (a `block` table, one row per block,
# as libmeminst wrote them before the chunked blocks of schema 2) stay
# readable by every command.  fixtures/v1.db was written by libmeminst at
# schema 1 (tests/targets/snap_live, two mim runs then one mis run, the
# program's paths replaced by /nonexistent); expected/v1.out is what
# inspect printed on it then.  INSPECT_BLESS=1 rewrites that file instead.
. "$top_srcdir/tests/inspect/lib.sh"

expected=$top_srcdir/tests/inspect/expected/v1.out
cp "$IT_FIXTURES/v1.db" "$IT_DB/v1.db" || exit 99
chmod u+w "$IT_DB/v1.db"
before=$(it_sum "$IT_DB/v1.db")

cases='list v1.db
holes v1.db
holes v1.db --snapshot 1 --all
limits v1.db
sum v1.db
sum v1.db --snapshot 1 --class snap_live --allocator calloc
sum v1.db --thread 2
descr v1.db --limit 12
descr v1.db --allocator aligned
top v1.db
top v1.db --by class
top v1.db --by thread --snapshot 1
diff v1.db
diff v1.db:1 v1.db:2 --class snap_live
status v1.db
status v1.db --snapshot 2
types v1.db
header-size v1.db
report v1.db'

: >"$IT_TMP/actual"
echo "$cases" | while read -r args; do
	# shellcheck disable=SC2086
	case $args in descr*|top*|diff*) it_run $args --no-symbols ;; *) it_run $args ;; esac
	{ echo "== inspect $args (exit $IT_RC)"; cat "$IT_TMP/out" "$IT_TMP/err"; } >>"$IT_TMP/actual"
done

if [ "${INSPECT_BLESS:-0}" = 1 ]; then
	cp "$IT_TMP/actual" "$expected" && it_ok "blessed $expected"
elif diff -u "$expected" "$IT_TMP/actual" >"$IT_TMP/diff"; then
	it_ok "$(echo "$cases" | wc -l) commands on a schema 1 file print what they printed at schema 1"
else
	it_fail "output differs from tests/inspect/expected/v1.out" "$IT_TMP/diff"
fi
[ "$(it_sum "$IT_DB/v1.db")" = "$before" ] && it_ok "the file is unchanged, no journal beside it" \
	|| it_fail "the file changed"
it_finish
