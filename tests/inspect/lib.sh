# lib.sh — helpers of the inspect shell tests, sourced by each:
#     . "$top_srcdir/tests/inspect/lib.sh"
#
# Each check prints one line, "ok    what" or "FAIL  what" followed by the
# evidence indented with "  | "; it_finish prints the closing count and
# exits 0, 1, or 77 when nothing could be checked.  The tests run inspect
# in a scratch directory on fixture databases made by mkfixture from
# tests/inspect/fixtures, with TZ=UTC so that dates print the same
# everywhere.
#
# Environment (AM_TESTS_ENVIRONMENT sets the first two):
#   top_builddir, top_srcdir  absolute paths
#   INSPECT_TEST_KEEP=1       keep the scratch directory
#   INSPECT_BLESS=1           cli.sh rewrites its expected output instead
#                             of comparing (review the diff before committing)

set -u
: "${top_builddir:?run the inspect tests through make check}"
: "${top_srcdir:?run the inspect tests through make check}"

IT_INSPECT=$top_builddir/inspect/inspect
IT_MKFIXTURE=$top_builddir/tests/inspect/mkfixture
IT_FIXTURES=$top_srcdir/tests/inspect/fixtures
IT_PASS=0 IT_FAIL=0
export TZ=UTC LC_ALL=C
unset MEMINST LD_PRELOAD INSPECT_CONTROL_TIMEOUT

IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/inspect-test.XXXXXX") || exit 99
# The databases live in a directory of their own, where inspect runs, so
# that nothing but inspect could leave a file beside them.
IT_DB=$IT_TMP/db
mkdir "$IT_DB" || exit 99
it_cleanup() {
	if [ "${INSPECT_TEST_KEEP:-0}" = 1 ]; then
		echo "scratch directory kept: $IT_TMP"
	else
		chmod -R u+rwx "$IT_TMP" 2>/dev/null
		rm -rf "$IT_TMP"
	fi
}
trap it_cleanup EXIT
trap 'exit 99' HUP INT TERM

for p in "$IT_INSPECT" "$IT_MKFIXTURE"; do
	if [ ! -x "$p" ]; then
		echo "error: $p not built"
		exit 99
	fi
done

it_ok() {
	echo "ok    $1"
	IT_PASS=$((IT_PASS + 1))
}

# it_fail WHAT [FILE...]: a failure, with the files as evidence.
it_fail() {
	echo "FAIL  $1"
	shift
	for f in "$@"; do
		[ -s "$f" ] && sed 's/^/  | /' "$f"
	done
	IT_FAIL=$((IT_FAIL + 1))
}

it_finish() {
	echo "$(basename "$0" .sh): $((IT_PASS + IT_FAIL)) checks, $IT_FAIL failed"
	[ $IT_FAIL -ne 0 ] && exit 1
	[ $IT_PASS -eq 0 ] && exit 77
	exit 0
}

# it_fixture NAME [MKFIXTURE OPTIONS]: $IT_DB/NAME.db from fixtures/NAME.sql.
it_fixture() {
	name=$1
	shift
	"$IT_MKFIXTURE" "$@" "$IT_DB/$name.db" "$IT_FIXTURES/$name.sql" || exit 99
}

# it_run ARGS...: inspect ARGS in $IT_DB; sets IT_RC and leaves stdout and
# stderr in $IT_TMP/out and $IT_TMP/err.
it_run() {
	(cd "$IT_DB" && "$IT_INSPECT" "$@") >"$IT_TMP/out" 2>"$IT_TMP/err"
	IT_RC=$?
}

# it_sum FILE: a checksum of the file and the list of files next to it, so
# that a change to the file or a journal left beside it both show.
it_sum() {
	{ cksum <"$1"; ls -a "$(dirname "$1")"; } 2>&1
}

it_have_python() {
	command -v python3 >/dev/null 2>&1 && python3 -c 'import json, csv' 2>/dev/null
}

# it_valid_json FILE: one JSON document.
it_valid_json() {
	python3 -m json.tool <"$1" >/dev/null 2>"$IT_TMP/why"
}

# it_valid_csv FILE: tables separated by empty lines, each row with as many
# fields as its table's header.
it_valid_csv() {
	python3 - "$1" >"$IT_TMP/why" 2>&1 <<'PY'
import csv, sys
head = None
with open(sys.argv[1], newline='', encoding='utf-8', errors='surrogateescape') as f:
    for n, row in enumerate(csv.reader(f), 1):
        if not row:
            head = None
        elif head is None:
            head = row
        elif len(row) != len(head):
            sys.exit("line %d: %d fields, the header has %d" % (n, len(row), len(head)))
PY
}
