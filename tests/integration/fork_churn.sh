# fork_churn.sh — forks beside threads that allocate and are sampled
# (tests/targets/fork_churn), under the launcher: no child may inherit a
# lock a thread of the parent held at the fork and wait for it for ever.
# The sampler's lock and libunwind's own (taken inside unw_step; site_depth=
# walks the stack at allocations) were not held across the fork: about one
# run in three of 200 forks with --site-depth 8 left a stuck child.  20
# runs of 40 forks, each with --site-depth 8 and one of the other settings
# that walk or start threads in the child (--control, --sample,
# --alloc-sample, all of them); a child still there after 10 s without a
# tick of CPU time in 5 s (not one starved on a loaded machine, which moves
# on) fails the run (the program reports it), and the whole run is bounded
# by the test timeout.
: "${MEMINST_TEST_TIMEOUT:=600}"
. "$top_srcdir/tests/integration/lib.sh"

LAUNCH=$top_builddir/session/meminst
set -- "" "--control" "--sample=1000" "--alloc-sample 4k" "--control --sample=1000 --alloc-sample 4k"
for run in $(seq 20); do
	i=$(( (run - 1) % 5 + 1 ))
	eval "extra=\${$i}"
	why=
	# shellcheck disable=SC2086 # the settings are words
	$MI_TIMEOUT "$LAUNCH" -q --library "$MEMINST_LIB" -o "$MI_TMP/s$run.db" --site-depth 8 $extra \
		"$MI_TARGETS/fork_churn" 40 >"$MI_TMP/out" 2>"$MI_TMP/err"
	rc=$?
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	grep -qx 'forks 40 stuck 0' "$MI_TMP/out" || mi_why_add "$(tr '\n' ' ' <"$MI_TMP/out")"
	mi_no_complaint "$MI_TMP/err"
	mi_verdict "run $run: 40 forks, --site-depth 8 ${extra:-(default)}" "$why" "$MI_TMP/out" stdout \
		"$MI_TMP/err" stderr
	rm -f "$MI_TMP/s$run.db"
done
mi_finish
