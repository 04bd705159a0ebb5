# errno_kept.sh — the program's errno is its own (tests/targets/errno_kept.c:
# set to a sentinel before every allocation call, sleep and fork, read after;
# read at main's start, at each new thread's start and in the fork child).
# Under every setting the output is the plain run's.  Before the fix main
# started with EAGAIN whenever libunwind was set up in the constructor
# (sampling, the exit snapshot's handler: its memory-validation pipe read
# empty), and a fork child got EBADF with control=on (the service thread's
# descriptors closed in the child's fork handler), and a free that ended a
# climb (the peak snapshot's capture in the program's thread) could leave
# any errno its mappings or the full wake pipe set.
: "${MEMINST_TEST_TIMEOUT:=120}"
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/errno_kept
LAUNCH=$top_builddir/session/meminst
export MEMINST_LIBRARY="$MEMINST_LIB"

mi_reference "errno_kept" mi_x "$TARGET" 2 || mi_finish
for set in mis mim "mis,sample=1000,trace_file=$MI_TMP/t.%p.trace" \
	"mim,snapshot=$MI_TMP/s.%p.db,leak_check=on" \
	"mim,control=on,interval=20ms,snapshot=$MI_TMP/s.%p.db" \
	"mis,control=on,sample=1000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace" \
	"mim,site_depth=8,alloc_sample=1024,trace_file=$MI_TMP/t.%p.trace" \
	"mis,backend=jemalloc,snapshot=$MI_TMP/s.%p.db" \
	"mim,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+peak+signal,interval=auto,interval_content=status" \
	"mis,snapshot=$MI_TMP/s.%p.db,snapshot_at=peak"; do
	rm -f "$MI_TMP"/s.* "$MI_TMP"/t.*
	mi_case "errno_kept $(echo "$set" | sed "s|$MI_TMP/||g")" "$set" mi_x "$TARGET" 2
done
mi_run_like_reference "$LAUNCH" -q -f -o "$MI_TMP/sess.db" --mim --control -- "$TARGET" 2
diff -u "$MI_TMP/ref.out" "$MI_TMP/run.out" >"$MI_TMP/run.diff" 2>&1
mi_verdict "errno_kept under meminst --mim --control" "$why" "$MI_TMP/run.diff" "stdout diff" "$MI_TMP/run.err" stderr
mi_finish
