# sig_sites.sh — tests/targets/sig_sites: a signal handler allocates from a
# site whose type shares a counter slot with the type of the site the
# interrupted thread allocates from (10,000,000 malloc+free pairs under a
# storm of SIGUSR1).  mim's fast paths read the site cache, the slot and the
# budget before raising `counting`, so a handler coming in between gave the
# slot to its type and the interrupted thread counted into it: the types'
# figures drifted (the old library: a type left with a block it did not
# have in 7 runs of 8).  Every run must end with both types at 0 and match
# the uninstrumented run; glibc's malloc only (a handler that allocates
# while jemalloc runs is unsafe by itself).
. "$top_srcdir/tests/integration/lib.sh"

sig_sites() {
	mi_xl "$MI_TARGETS/sig_sites"
}

MEMINST_BACKENDS=system
mi_compare sig_sites sig_sites
mi_finish
