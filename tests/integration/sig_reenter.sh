# sig_reenter.sh — tests/targets/sig_reenter: a SIGPROF handler mallocs
# and frees (and frees a block main allocated) whenever it interrupted
# meminst's own code in the same thread (issue 17 item 6).  Every mode must
# finish with the same output as uninstrumented and the counters back where
# they started (the target checks them, probe.h); in mis and mim the handler
# must really have interrupted meminst.  The run is bounded by counts (300
# re-entries or 20M pairs); a livelock shows as the time limit.  Blocks
# the handler allocates are served untracked; its frees of tracked blocks
# wait until the interrupted code leaves (alloc_core.c, core_defer).
: "${MEMINST_TEST_TIMEOUT:=120}"
. "$top_srcdir/tests/integration/lib.sh"
# backend=jemalloc is linked into libmeminst, so an interrupted jemalloc
# looks like meminst to the handler, and jemalloc is not re-entrant.
MEMINST_BACKENDS=system

reenter() { mi_x "$MI_TARGETS/sig_reenter"; }

mi_compare sig_reenter reenter
for mode in mis mim; do
	for backend in $MEMINST_BACKENDS; do
		MI_MEMINST=$mode,backend=$backend
		mi_x "$MI_TARGETS/sig_reenter" >"$MI_TMP/re.out" 2>"$MI_TMP/re.err"
		rc=$?
		unset MI_MEMINST
		n=$(sed -n 's/^reentered \([0-9]*\) .*/\1/p' "$MI_TMP/re.err")
		why=
		[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
		[ "${n:-0}" -gt 0 ] || mi_why_add "the handler never interrupted meminst"
		mi_verdict "sig_reenter $mode/$backend re-entered ${n:-0} times" "$why" "$MI_TMP/re.err" stderr
	done
done
mi_finish
