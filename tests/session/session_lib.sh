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
