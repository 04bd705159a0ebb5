# rlimit_as.sh — a program under an address-space limit (RLIMIT_AS: ulimit
# -v, or lowered by the program itself, as sandboxes and judges do) a
# little above what it needs bare must run as it does bare under meminst.
# meminst's service thread made glibc reserve a 64 MiB arena for it (128
# MiB mapped for a moment) and had an 8 MiB stack: with the launcher's
# defaults a program had 89 MB more address space mapped at main (152 MB
# at the peak), and one that lowered its limit to its bare need + 40 MiB
# found none left (its first malloc failed; still so with 64 MiB).  Under ulimit -v glibc could
# not make that arena and let the thread do without.
# tests/targets/rlimit_as.c allocates 32 MiB in 1 MiB blocks and 20,000
# small ones; its bare VmPeak, plus RLIMIT_AS_ROOM MiB, is the limit.  Each
# run must print what the bare run prints (a malloc of 64 TiB and one of
# 1 GiB, over the limit: NULL and ENOMEM, as bare) and say nothing on
# stderr.  The limit is in place before anything of meminst's runs
# (ulimit -v) or from main on (the program's setrlimit: the service thread
# has started by then); what meminst maps later (interval and exit
# snapshots) fits in the room whenever it comes: no case depends on timing.
: "${MEMINST_TEST_TIMEOUT:=120}"
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/rlimit_as
LAUNCH=$top_builddir/session/meminst
NEED=32
# meminst's room, 13 to 17 MB used at the program's peak: its library (6
# MB with its .bss), the tables (1.3 MB), the service thread's stack (0.5
# MB), the private SQLite's heap, the stores' buffers (see meminst(7),
# KNOWN LIMITS).  40 MiB was seen short once in six runs under strace
# (--mim, the exit snapshot's 1 MiB of segments refused: the program's
# freed heap kept by glibc, a store of the service thread's at the same
# time); 5163dbf needed 89 MB more before the program's first malloc.
: "${RLIMIT_AS_ROOM:=64}"

peak=$("$TARGET" $NEED 0 peak | sed -n 's/^VmPeak //p')
case $peak in '' | *[!0-9]*)
	echo "FAIL  rlimit_as: no VmPeak from the bare run"
	exit 1 ;;
esac
LIMIT=$((peak + RLIMIT_AS_ROOM * 1024)) # KiB

# under_v COMMAND...: COMMAND under ulimit -v LIMIT (the launcher too)
under_v() {
	(ulimit -v $LIMIT && "$@")
}

launch() {
	"$LAUNCH" --library="$MEMINST_LIB" -q -f -o "$MI_TMP/s.db" "$@"
}

# check LABEL COMMAND...: a run compared with the reference: status,
# stdout, no line of meminst's on stderr
check() {
	label=$1
	shift
	rm -f "$MI_TMP"/s.db*
	mi_run_like_reference "$@"
	mi_no_complaint "$MI_TMP/run.err"
	grep -q 'failed' "$MI_TMP/run.out" && mi_why_add "$(grep failed "$MI_TMP/run.out")"
	mi_verdict "$label (limit: bare VmPeak $peak KiB + $RLIMIT_AS_ROOM MiB)" "$why" \
		"$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr
}

# 1. ulimit -v before the program starts
if mi_reference "rlimit_as under ulimit -v" under_v mi_x "$TARGET" $NEED; then
	for mode in mis mim; do
		MI_MEMINST="$mode,snapshot=$MI_TMP/s.db,snapshot_at=exit+peak+signal"
		check "ulimit -v, $mode with snapshots" under_v mi_x "$TARGET" $NEED
		unset MI_MEMINST
	done
	check "ulimit -v, launcher defaults" under_v launch -- "$TARGET" $NEED
	check "ulimit -v, launcher --mim" under_v launch --mim -- "$TARGET" $NEED
fi

# 2. the program lowers its own limit at main, everything of meminst's
# started by then
if mi_reference "rlimit_as lowered at main" mi_x "$TARGET" $NEED $LIMIT; then
	for mode in mis mim; do
		MI_MEMINST="$mode,snapshot=$MI_TMP/s.db,snapshot_at=exit+peak+signal"
		check "setrlimit at main, $mode with snapshots" mi_x "$TARGET" $NEED $LIMIT
		unset MI_MEMINST
	done
	check "setrlimit at main, launcher defaults" launch -- "$TARGET" $NEED $LIMIT
	check "setrlimit at main, launcher --mim" launch --mim -- "$TARGET" $NEED $LIMIT
	check "setrlimit at main, launcher --mim --sample-clock wall" \
		launch --mim --sample-clock wall -- "$TARGET" $NEED $LIMIT
fi
mi_finish
