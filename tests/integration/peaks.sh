# peaks.sh — tests/targets/peaks: max-ever figures across threads.  `seq`
# (threads take turns: main holds 200,000 B, a worker allocates 1,000,000 B,
# frees and exits, main joins) must report the true peak of 1,200,000 B
# exactly; `conc` (two threads hold 100,000 B at once, no blocking call in
# between) documents the bound of meminst(7), Precision: [100,000, 200,000].
# `since` (its class's max-since-last across 100 ms of snapshots taken
# every millisecond) must be exactly its own peak since its last read: the
# snapshots keep a max-since-last of their own.
# The target checks the figure itself (probe.h) and exits 3 when wrong.
. "$top_srcdir/tests/integration/lib.sh"

seq_() { mi_x "$MI_TARGETS/peaks" seq; }
conc() { mi_x "$MI_TARGETS/peaks" conc; }

MEMINST_TEST_MODES="mis mim"
mi_compare peaks-seq seq_
mi_compare peaks-conc conc
since() { mi_x "$MI_TARGETS/peaks" since; }
MEMINST_TEST_MODES="mis,snapshot=$MI_TMP/s.%p.db,interval=1ms mim,snapshot=$MI_TMP/s.%p.db,interval=1ms"
mi_compare peaks-since since
mi_finish
