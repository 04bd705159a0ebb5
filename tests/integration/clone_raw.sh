# clone_raw.sh — children made by clone(2) and clone3 without fork
# (tests/targets/clone_raw), as systemd, container runtimes and sandboxes
# make them: glibc runs no fork handler, and the child's exit snapshot
# waited for ever for the parent's threads (one child in 20 or so, beside
# two threads that allocate).  meminst now finds the changed pid (a
# capture, pthread_create, a lock waited for long) and takes the child as
# alone, as a fork child is.  Per mode, 40 rounds of one child of each
# kind: every child ends with its status (3), the output is the plain
# run's, and every process leaves its exit snapshot.
#
# Then beside meminst's own threads and stack walks, where each of these
# hung a child in exit(3) within 20 rounds (the target says "stuck PID"
# after 10 s):
#   - the wall-clock sampler: the child's exit stopped its copy of the
#     sampler and joined the parent's thread, which it does not have;
#   - control=on: the exit flushed the service thread's work under a lock
#     the parent's service thread held at the clone;
#   - site_depth=8: a walk under way in another thread at the clone left
#     the region table's lock (libunwind maps through the hooks), or the
#     loader's, held for ever in the child;
#   - alloc_sample=1024: the child's first sample waited for ever on the
#     trace writer's queue lock (trace_spin_lock), held in the copy by a
#     thread making its trace record: one child in a few hundred;
#   - site_depth=8 beside control=on and the CPU sampler: the child's first
#     site walked into libunwind's lock, held in the copy by a sample's
#     walk in another thread (one run of 80 children in several).
# Such a child is now taken as alone at exit and at a lock waited for long
# (meminst's spin locks, the trace's among them); until then it walks no
# stack (alloc_clone_unadopted); one copied in the middle of a walk or of
# dl_iterate_phdr walks no stack after either and stores no snapshot (one
# note), so only the ends are checked there.
: "${MEMINST_TEST_TIMEOUT:=900}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

ROUNDS=40
"$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/ref" 2>&1
children=$(sed -n 's/^rounds [0-9]* children \([0-9]*\) .*/\1/p' "$MI_TMP/ref")
MI_EXPECTED_NOTE='was made by clone without fork while another thread walked a stack'

# clone_run SETTINGS WHAT: the target under SETTINGS with its snapshots in
# $d, checked for its status, its output and a line of meminst's
clone_run() {
	why=
	MI_MEMINST="$1,snapshot=$d/c.%p.db,trace_file=$d/t.%p.trace"
	mi_x "$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	snap_expect "exit status" "$rc" 0
	cmp -s "$MI_TMP/ref" "$MI_TMP/out" || mi_why_add "output differs from the plain run's"
	mi_no_complaint "$MI_TMP/err"
}

n=0
for set in mis mim "mis,control=on,sample=1000,sample_clock=wall,interval=1ms" \
	"mim,control=on,site_depth=8,sample=100" "mim,alloc_sample=1024"; do
	n=$((n + 1))
	d=$MI_TMP/$n
	mkdir -p "$d"
	clone_run "$set"
	case $set in mis | mim)
		snap_expect "exit snapshots" "$(ls "$d"/c.*.db 2>/dev/null | wc -l)" $((1 + ${children:-0}))
		what="all ended, all stored" ;;
	*) what="all ended" ;;
	esac
	mi_verdict "$set: ${children:-?} children of clone and clone3 beside 2 threads: $what" \
		"$why" "$MI_TMP/out" stdout "$MI_TMP/ref" "plain run" "$MI_TMP/err" stderr
done
mi_finish
