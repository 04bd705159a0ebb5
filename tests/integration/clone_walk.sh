# clone_walk.sh — children of clone(2) and clone3 without fork
# (tests/targets/clone_raw) beside meminst's threads and stack walks, which
# clone_raw.sh does not run: each of these hung a child in exit(3) in the
# first 20 rounds (the child reports "stuck PID" after 10 s):
#   - the wall-clock sampler: the child's exit stopped its copy of the
#     sampler and joined the parent's thread, which it does not have;
#   - control=on: the exit flushed the service thread's work under a lock
#     the parent's service thread held at the clone;
#   - site_depth=8 and alloc_sample: a walk under way in another thread at
#     the clone left the region table's lock (libunwind maps through the
#     hooks), or the loader's, held for ever in the child.
# Such a child is now taken as alone at exit and when a lock stays held;
# one copied in the middle of a walk walks no stack and stores no
# snapshot (one note).  Per setting, 40 rounds: every child ends with its
# status (3) and the output is the plain run's.
: "${MEMINST_TEST_TIMEOUT:=900}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

ROUNDS=40
"$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/ref" 2>&1
MI_EXPECTED_NOTE='was made by clone without fork while another thread walked a stack'
for set in "mis,control=on,sample=1000,sample_clock=wall,interval=1ms" \
	"mim,control=on,site_depth=8,sample=100" \
	"mim,alloc_sample=1024,leak_check=on"; do
	d=$MI_TMP/${set%%,*}.$(printf %s "$set" | cksum | cut -d' ' -f1)
	mkdir -p "$d"
	why=
	MI_MEMINST="$set,snapshot=$d/c.%p.db,trace_file=$d/t.%p.trace"
	mi_x "$MI_TARGETS/clone_raw" $ROUNDS >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	unset MI_MEMINST
	snap_expect "exit status" "$rc" 0
	cmp -s "$MI_TMP/ref" "$MI_TMP/out" || mi_why_add "output differs from the plain run's"
	mi_no_complaint "$MI_TMP/err"
	mi_verdict "$set: children of clone and clone3 beside 2 threads: all ended" \
		"$why" "$MI_TMP/out" stdout "$MI_TMP/ref" "plain run" "$MI_TMP/err" stderr
done
mi_finish
