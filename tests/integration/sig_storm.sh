# sig_storm.sh — tests/targets/sig_storm: signals delivered while two
# threads are inside malloc and free, in every mode and backend; the run
# must finish with the counters where they started.
. "$top_srcdir/tests/integration/lib.sh"

sig_storm() {
	mi_xl "$MI_TARGETS/sig_storm"
}

mi_compare sig_storm sig_storm
mi_finish
