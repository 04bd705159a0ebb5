# session_lib.sh — the start of the tests that record sessions with the
# launcher and read them with inspect (tests/session, tests/export), on top
# of tests/integration/lib.sh:
#     . "$top_srcdir/tests/session/session_lib.sh"
# The test runs in its scratch directory $MI_TMP, with MEMINST_LIBRARY set
# so that the launcher preloads the library just built.
. "$top_srcdir/tests/integration/lib.sh"

export MEMINST_LIBRARY="$MEMINST_LIB"
INSPECT=$top_builddir/inspect/inspect
LAUNCH=$top_builddir/session/meminst
KNOWN=$top_builddir/tests/session/known
cd "$MI_TMP" || exit 99

# ss_known DB LAUNCHER-OPTIONS...: a session of tests/session/known
# (allocations per function and a split of CPU time known in advance) in
# DB, its stdout in out and stderr in err; when the launcher fails, a
# failed case and the end of the test: there is nothing to read.
ss_known() {
	ss_db=$1
	shift
	"$LAUNCH" -q "$@" -o "$ss_db" -- "$KNOWN" >out 2>err || {
		mi_fail "meminst on tests/session/known" "exited $?" err stderr
		mi_finish
	}
}

# ss_outputs S: every display and export of the session S.db, in files
# S.*: analyse (S.an.txt, S.an.json), its flat style with every row
# (S.flat.txt, S.flat.json), report (S.report.txt), the folded, callgrind,
# chrome and pprof exports (S.FORMAT) and the html page (S.html); stderr
# goes to err, each failure to mi_why_add.
ss_outputs() {
	"$INSPECT" analyse "$1.db" >"$1.an.txt" 2>>err || mi_why_add "analyse $1 exited $?"
	"$INSPECT" analyse --json "$1.db" >"$1.an.json" 2>>err || mi_why_add "analyse --json $1 exited $?"
	"$INSPECT" analyse --style flat --limit 0 "$1.db" >"$1.flat.txt" 2>>err || mi_why_add "flat $1 exited $?"
	"$INSPECT" analyse --style flat --limit 0 --json "$1.db" >"$1.flat.json" 2>>err ||
		mi_why_add "flat --json $1 exited $?"
	"$INSPECT" report "$1.db" >"$1.report.txt" 2>>err || mi_why_add "report $1 exited $?"
	for ss_fmt in folded callgrind chrome pprof; do
		"$INSPECT" export --format $ss_fmt -o "$1.$ss_fmt" "$1.db" 2>>err ||
			mi_why_add "export $ss_fmt $1 exited $?"
	done
	"$INSPECT" html -o "$1.html" "$1.db" 2>>err || mi_why_add "html $1 exited $?"
}
