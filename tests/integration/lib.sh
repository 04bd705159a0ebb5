# lib.sh — shared helpers of the integration tests, sourced by each test:
#     . "$top_srcdir/tests/integration/lib.sh"
#
# A test runs one command (usually a shell function) once without the
# preload, as the reference, then once per mode x backend with libmeminst
# preloaded, and compares exit status and stdout.  Each case prints one line,
#     ok    python3 mim/jemalloc
#     FAIL  python3 mis/system: stdout differs
# followed, on failure, by the evidence (diff, stderr) indented with "  | ".
# mi_finish prints the closing pass/fail line and exits 0, 1 or 77; a
# test whose Debian program is missing skips as a whole (mi_need, 77).
#
# Environment (AM_TESTS_ENVIRONMENT sets the first four):
#   top_builddir, top_srcdir  absolute paths
#   MEMINST_LIB               the libmeminst.so to preload
#   MEMINST_BACKENDS          "system jemalloc" or "system"
#   MEMINST_TEST_PREFIX       put in front of every instrumented program,
#                             e.g. "valgrind" or "gdb --args"; it runs with
#                             LD_PRELOAD and MEMINST already set, so a
#                             debugger hands both to its inferior.  The
#                             time limit is off while a prefix is set.
#   MEMINST_TEST_MODES        the modes mi_compare loops over (default:
#                             off mis mim); the other tests pick theirs
#   MEMINST_TEST_TIMEOUT      seconds one program may run (default 300)
#   MEMINST_TEST_KEEP=1       keep the scratch directory for inspection

set -u

: "${top_builddir:?run the integration tests through make check}"
: "${top_srcdir:?run the integration tests through make check}"
: "${MEMINST_LIB:=$top_builddir/alloc/.libs/libmeminst.so}"
: "${MEMINST_BACKENDS:=system}"
: "${MEMINST_TEST_PREFIX:=}"
: "${MEMINST_TEST_MODES:=off mis mim}"
: "${MEMINST_TEST_TIMEOUT:=300}"

# The reference run must not inherit instrumentation from the caller.
unset MEMINST LD_PRELOAD MI_MEMINST
# An aborting case (on_error=abort) must not leave core files behind.
ulimit -c 0 2>/dev/null

MI_NAME=$(basename "$0" .sh)
MI_TARGETS=$top_builddir/tests/targets
MI_PASS=0 MI_FAIL=0

if [ -n "$MEMINST_TEST_PREFIX" ] || ! command -v timeout >/dev/null; then
	MI_TIMEOUT=
else
	MI_TIMEOUT="timeout -k 10 $MEMINST_TEST_TIMEOUT"
fi

MI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/meminst-$MI_NAME.XXXXXX") || exit 99
mi_cleanup() {
	if [ "${MEMINST_TEST_KEEP:-0}" = 1 ]; then
		echo "scratch directory kept: $MI_TMP"
	else
		rm -rf "$MI_TMP"
	fi
}
trap mi_cleanup EXIT
trap 'exit 99' HUP INT TERM

if [ ! -f "$MEMINST_LIB" ]; then
	echo "error: $MEMINST_LIB not found (build the library first)"
	exit 99
fi

# ------------------------------------------------------------- running --

# mi_x PROGRAM ARGS...: run a program under the current case's settings:
# uninstrumented when MI_MEMINST is unset, else preloaded with
# MEMINST=$MI_MEMINST.  Every program a case runs goes through mi_x, so that
# shell helpers (mkdir, cat…) stay uninstrumented while children of the
# program (git's, gcc's) inherit the preload through the environment.
mi_x() {
	if [ -z "${MI_MEMINST+set}" ]; then
		$MI_TIMEOUT "$@"
	else
		$MI_TIMEOUT env LD_PRELOAD="$MEMINST_LIB" MEMINST="$MI_MEMINST" \
			$MEMINST_TEST_PREFIX "$@"
	fi
}

# mi_type_counts SETTINGS PROGRAM STDOUT: run PROGRAM (no arguments) under
# MEMINST=SETTINGS,print=types; why starts anew with a wrong exit status or
# an output other than STDOUT; $counts: the current block counts of the
# types whose rows name PROGRAM's module (the fifth field from the end of a
# print=types row), sorted, each followed by a space.
mi_type_counts() {
	MI_MEMINST="$1,print=types"
	mi_x "$2" >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	why=
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(cat "$MI_TMP/out")" = "$3" ] || mi_why_add "stdout: $(cat "$MI_TMP/out")"
	counts=$(grep "(${2##*/})" "$MI_TMP/err" | awk '{ print $(NF-4) }' | sort -n | tr '\n' ' ')
}

# mi_xl PROGRAM ARGS...: as mi_x, for a program linked with -lmeminst:
# MEMINST only, no preload (a second copy of the library must not come in).
mi_xl() {
	if [ -z "${MI_MEMINST+set}" ]; then
		$MI_TIMEOUT "$@"
	else
		$MI_TIMEOUT env MEMINST="$MI_MEMINST" $MEMINST_TEST_PREFIX "$@"
	fi
}

# mi_fsize_unit: $mi_fsize, the bytes of one unit of ulimit -f in this
# shell (512 in POSIX sh and dash, 1024 in bash), from what a limit of 8
# lets through; skips the whole test when ulimit -f does not limit the file
# size here.
mi_fsize_unit() {
	(ulimit -f 8 && head -c 9000 /dev/zero >"$MI_TMP/fsize.probe") 2>/dev/null
	mi_fsize=$(($(wc -c <"$MI_TMP/fsize.probe") / 8))
	case $mi_fsize in 512 | 1024) ;; *)
		echo "skip  $MI_NAME: ulimit -f does not limit the file size here"
		exit 77 ;;
	esac
}

# mi_need PATH [PACKAGE]: skip the whole test when a program is missing.
mi_need() {
	if [ ! -x "$1" ]; then
		echo "skip  $MI_NAME: $1 is not installed${2:+ (apt-get install $2)}"
		exit 77
	fi
}

# ------------------------------------------------------------- results --

mi_ok() {
	echo "ok    $1"
	MI_PASS=$((MI_PASS + 1))
}

# mi_fail LABEL WHY [FILE TITLE]...: a failed case and its evidence.
mi_fail() {
	echo "FAIL  $1: $2"
	MI_FAIL=$((MI_FAIL + 1))
	shift 2
	while [ $# -ge 2 ]; do
		if [ -s "$1" ]; then
			echo "  | --- $2 (last 25 lines)"
			tail -n 25 "$1" | sed 's/^/  | /'
		fi
		shift 2
	done
}

# mi_verdict LABEL WHY [FILE TITLE]...: ok when WHY is empty, else FAIL.
mi_verdict() {
	if [ -z "$2" ]; then
		mi_ok "$1"
	else
		mi_fail "$@"
	fi
}

# mi_finish: the closing line; exit 1 on any failure, 77 if nothing ran.
mi_finish() {
	echo "$MI_NAME: pass $MI_PASS, fail $MI_FAIL"
	if [ "$MI_FAIL" -gt 0 ]; then
		exit 1
	elif [ "$MI_PASS" -eq 0 ]; then
		exit 77
	fi
	exit 0
}

# ---------------------------------------------------------- comparison --

# mi_why_add TEXT: append a reason to $why.
mi_why_add() {
	why="${why:+$why; }$1"
}

# mi_no_complaint FILE: append a reason to $why when FILE (a run's stderr)
# has a line from meminst; the reason quotes the first.
mi_no_complaint() { # MI_EXPECTED_NOTE: a regex of lines a test expects
	if grep '^meminst:' "$1" | grep -vqE "${MI_EXPECTED_NOTE:-^\$}"; then
		mi_why_add "meminst complained: $(grep '^meminst:' "$1" | grep -vE "${MI_EXPECTED_NOTE:-^\$}" | head -n 1)"
	fi
}

# mi_reference NAME COMMAND...: the uninstrumented run.  It must exit 0
# and print something, or the comparison would prove nothing.
mi_reference() {
	mi_reference_status 0 "$@"
}

# mi_reference_status STATUS NAME COMMAND...: the same, for a program whose
# own exit status is STATUS.
mi_reference_status() {
	mi_ref_want=$1 mi_ref_name=$2
	shift 2
	(unset MI_MEMINST; "$@") >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err"
	mi_ref_rc=$?
	if [ "$mi_ref_rc" -ne "$mi_ref_want" ] || [ ! -s "$MI_TMP/ref.out" ]; then
		mi_fail "$mi_ref_name (uninstrumented)" \
			"the reference run exited $mi_ref_rc (not $mi_ref_want) with $(wc -c <"$MI_TMP/ref.out") bytes of output" \
			"$MI_TMP/ref.err" stderr
		return 1
	fi
}

# mi_run_like_reference COMMAND...: one run into run.out and run.err, its
# status in $rc; why starts anew with what differs from the last
# reference: the exit status, stdout.
mi_run_like_reference() {
	("$@") >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
	rc=$?
	why=
	[ "$rc" -eq "$mi_ref_rc" ] ||
		mi_why_add "exit status $rc, uninstrumented $mi_ref_rc"
	cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
}

# mi_case LABEL MEMINST COMMAND...: one instrumented run, compared with
# the last reference: same exit status, same stdout, and not one line of
# complaint from meminst on stderr.
mi_case() {
	label=$1 MI_MEMINST=$2
	shift 2
	mi_run_like_reference "$@"
	unset MI_MEMINST
	mi_no_complaint "$MI_TMP/run.err"
	diff -u "$MI_TMP/ref.out" "$MI_TMP/run.out" >"$MI_TMP/run.diff" 2>&1
	mi_verdict "$label" "$why" "$MI_TMP/run.diff" "stdout diff" \
		"$MI_TMP/run.err" stderr
}

# mi_compare NAME COMMAND...: the reference, then every mode x backend.
mi_compare() {
	mi_name=$1
	shift
	mi_reference "$mi_name" "$@" || return 1
	for mode in $MEMINST_TEST_MODES; do
		for backend in $MEMINST_BACKENDS; do
			mi_case "$mi_name $mode/$backend" "$mode,backend=$backend" "$@"
		done
	done
}
