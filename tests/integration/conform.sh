# conform.sh — tests/targets/conform: blocks of glibc's own __libc_malloc
# family freed, reallocated and measured through the interposed functions
# go back to glibc (no leak, no complaint), and aligned_alloc answers as the
# running glibc does.  Uninstrumented first, as reference; then each mode x
# backend must print the same and say nothing on stderr.
#
# Not off with backend=jemalloc: there every free goes straight to
# jemalloc, as with jemalloc preloaded on its own, and a glibc block
# handed to it is undefined behaviour (meminst(7), BACKENDS).
. "$top_srcdir/tests/integration/lib.sh"

conform() {
	mi_x "$MI_TARGETS/conform"
}

if mi_reference conform conform; then
	for mode in $MEMINST_TEST_MODES; do
		for backend in $MEMINST_BACKENDS; do
			[ "$mode/$backend" = off/jemalloc ] && continue
			mi_case "conform $mode/$backend" "$mode,backend=$backend" conform
		done
	done
fi
mi_finish
