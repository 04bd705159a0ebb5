#!/bin/sh
# cli.sh — every inspect command on the fixture databases, in text, --json
# and --csv, against tests/inspect/expected/cli.out; and every command on a
# file of values the schema would refuse (fixtures/odd.sql).
#
# Each case runs three times (text, --json, --csv).  A JSON output must be
# one valid document (python3 -m json.tool), a CSV output consistent tables;
# a case that succeeds must print nothing on stderr; the databases must be
# unchanged afterwards (same checksum, no journal beside them).  All
# outputs, with their exit status, are concatenated and compared with the
# expected file; INSPECT_BLESS=1 rewrites that file instead.
. "$top_srcdir/tests/inspect/lib.sh"

expected=$top_srcdir/tests/inspect/expected/cli.out
it_fixture basic
it_fixture escape
it_fixture odd
before=$(it_sum "$IT_DB/basic.db"; it_sum "$IT_DB/escape.db"; it_sum "$IT_DB/odd.db")

# One case per line: the arguments (no quoting needed in these).
cases='list basic.db
holes basic.db
holes basic.db --snapshot 1 --min 100
holes basic.db --snapshot 1 --all
limits basic.db --snapshot 1
limits basic.db --snapshot 1 --thread worker
sum basic.db --snapshot 1
sum basic.db --snapshot 1 --class lists --allocator 0
descr basic.db --snapshot 1
descr basic.db --type 2 --limit 2
top basic.db --snapshot 1
top basic.db --by class
top basic.db --by thread --limit 1
top basic.db --by site --snapshot 1
diff basic.db
diff basic.db:1 basic.db:3 --limit 1
status basic.db
status basic.db --snapshot 1 --total
types basic.db
type basic.db 2
type basic.db 99
class basic.db lists
allocator basic.db 5
header-size basic.db
types escape.db
descr escape.db
status escape.db --types --threads
holes escape.db'

: >"$IT_TMP/actual"
if ! it_have_python; then
	echo "skip  JSON and CSV validation: python3 not available"
fi
echo "$cases" | while read -r args; do
	for fmt in "" --json --csv; do
		# shellcheck disable=SC2086
		it_run $args $fmt
		label="inspect $args${fmt:+ $fmt}"
		{ echo "=== $label"; echo "--- exit $IT_RC"; cat "$IT_TMP/out"; } >>"$IT_TMP/actual"
		if [ $IT_RC -le 1 ] && { [ $IT_RC -eq 1 ] || [ ! -s "$IT_TMP/err" ]; }; then
			:
		else
			it_fail "$label: exit $IT_RC or output on stderr" "$IT_TMP/err"
			continue
		fi
		if it_have_python; then
			case $fmt in
			--json) it_valid_json "$IT_TMP/out" || it_fail "$label: invalid JSON" "$IT_TMP/why" "$IT_TMP/out" ;;
			--csv) it_valid_csv "$IT_TMP/out" || it_fail "$label: invalid CSV" "$IT_TMP/why" "$IT_TMP/out" ;;
			esac
		fi
	done
done >"$IT_TMP/log"
cat "$IT_TMP/log"
IT_FAIL=$((IT_FAIL + $(grep -c '^FAIL' "$IT_TMP/log")))
n=$(echo "$cases" | wc -l)
[ "$(grep -c '^FAIL' "$IT_TMP/log")" -eq 0 ] && it_ok "$n cases x 3 formats: exit status, stderr, JSON and CSV validity"

if [ "${INSPECT_BLESS:-0}" = 1 ]; then
	cp "$IT_TMP/actual" "$expected" && it_ok "blessed $expected"
elif diff -u "$expected" "$IT_TMP/actual" >"$IT_TMP/diff"; then
	it_ok "output as in tests/inspect/expected/cli.out"
else
	it_fail "output differs from tests/inspect/expected/cli.out (INSPECT_BLESS=1 to accept)" "$IT_TMP/diff"
fi

# A file whose values the schema's constraints would refuse (NULLs, text
# in number columns, duplicate ids, huge and negative numbers): every
# command must still exit 0 or 1 and, when it succeeds, print valid JSON,
# or exit 3 with one line naming a damaged block (a size of -1, blocks
# that overlap) or a damaged snapshot row (a pid that is text, a header
# size no mode has) or a bad stored value (NULL, text or a negative count
# where meminst stores a number, a key twice): figures from them would be
# wrong, not just odd.
bad=
for args in list "holes --all" limits sum descr "top --by site" "top --by class" "diff --from 1 --to 2" \
	status types "type 1" "class 0" "allocator 0" header-size; do
	for snap in 1 2; do
		case $args in diff*|list) [ $snap = 2 ] && continue; sel= ;; *) sel="--snapshot $snap" ;; esac
		# shellcheck disable=SC2086
		set -- $args
		cmd=$1
		shift
		# shellcheck disable=SC2086
		it_run "$cmd" odd.db "$@" $sel --json
		damaged=false
		[ $IT_RC -eq 3 ] && [ "$(wc -l <"$IT_TMP/err")" -eq 1 ] &&
			grep -q -e "^inspect: odd.db: snapshot $snap: the block at 0x[0-9a-f]* of size [0-9]* is damaged (" \
				-e "^inspect: odd.db: snapshot [12] is damaged (" \
				-e "^inspect: odd.db: table [a-z_]*, row (.*): [a-z_]* \(is NULL\|is negative\|holds a value\|the row is there twice\)" \
				"$IT_TMP/err" &&
			damaged=true
		if { [ $IT_RC -gt 1 ] && ! $damaged; } ||
		   { [ $IT_RC -eq 0 ] && it_have_python && ! it_valid_json "$IT_TMP/out"; }; then
			bad="$bad
inspect $cmd odd.db $* $sel --json: exit $IT_RC $(cat "$IT_TMP/err" "$IT_TMP/why" 2>/dev/null)"
		fi
	done
done
if [ -z "$bad" ]; then
	it_ok "every command on a file of odd values: exit 0 or 1 with valid JSON, or 3 naming a damaged block or row"
else
	echo "$bad" >"$IT_TMP/why"
	it_fail "commands on a file of odd values" "$IT_TMP/why"
fi

after=$(it_sum "$IT_DB/basic.db"; it_sum "$IT_DB/escape.db"; it_sum "$IT_DB/odd.db")
if [ "$before" = "$after" ]; then
	it_ok "the databases are unchanged and no journal was left"
else
	echo "before: $before" >"$IT_TMP/why"
	echo "after:  $after" >>"$IT_TMP/why"
	it_fail "a database or its directory changed" "$IT_TMP/why"
fi
it_finish
