# sig_threads.sh — tests/targets/sig_threads: a signal whose handler
# allocates and frees (another thread's block too) arriving while threads
# start (their first allocation makes meminst's record) and after they
# lost it (allocations in a key destructor that runs after meminst's):
# 2000 threads, 4 at a time, under a storm of SIGUSR1.  A handler there
# came back into the thread's start (its registry lock) or spun on the
# orphan list's lock the interrupted code held: the old library left a
# thread stuck in mim in each of 4 runs, within the first 200 threads.  Every
# run must end, print "ok" (every block of the workers counted back out),
# and match the uninstrumented run, in every mode, with glibc's malloc
# (jemalloc itself crashes when a handler frees while it sets a thread up).
: "${MEMINST_TEST_TIMEOUT:=600}"
. "$top_srcdir/tests/integration/lib.sh"

sig_threads() {
	mi_xl "$MI_TARGETS/sig_threads"
}

MEMINST_BACKENDS=system
mi_compare sig_threads sig_threads
mi_finish
