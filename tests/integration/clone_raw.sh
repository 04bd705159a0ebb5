# clone_raw.sh — children made by clone(2) and clone3 without fork
# (tests/targets/clone_raw), as systemd, container runtimes and sandboxes
# make them: glibc runs no fork handler, and the child's exit snapshot
# waited for ever for the parent's threads (one child in 20 or so, beside
# two threads that allocate).  meminst now finds the changed pid (a
# capture, pthread_create, a lock waited for long) and takes the child as
# alone, as a fork child is.  Per mode, 40 rounds of one child of each
# kind: every child ends with its status (3), the output is the plain
# run's, and every process leaves its exit snapshot.
: "${MEMINST_TEST_TIMEOUT:=600}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

ROUNDS=40
"$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/ref" 2>&1
for mode in mis mim; do
	d=$MI_TMP/$mode
	mkdir -p "$d"
	why=
	MI_MEMINST="$mode,snapshot=$d/c.%p.db"
	mi_x "$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	snap_expect "exit status" "$rc" 0
	cmp -s "$MI_TMP/ref" "$MI_TMP/out" || mi_why_add "output differs from the plain run's"
	mi_no_complaint "$MI_TMP/err"
	children=$(sed -n 's/^rounds [0-9]* children \([0-9]*\) .*/\1/p' "$MI_TMP/ref")
	snap_expect "exit snapshots" "$(ls "$d"/c.*.db 2>/dev/null | wc -l)" $((1 + ${children:-0}))
	mi_verdict "$mode: ${children:-?} children of clone and clone3 beside 2 threads: all ended, all stored" \
		"$why" "$MI_TMP/out" stdout "$MI_TMP/ref" "plain run" "$MI_TMP/err" stderr
done
mi_finish
