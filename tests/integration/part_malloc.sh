# part_malloc.sh — programs that replace part of the malloc family on
# glibc's own entry points (tests/targets/part_malloc.c, part_new.cc):
# meminst used to say that allocations were not instrumented, yet its
# calloc, realloc and memalign still gave blocks a header, which the
# program's free handed to glibc (an abort in every mode).  Every entry
# point meminst receives is now the system allocator's, untouched, for the
# whole process.  C++'s operator new alone keeps the instrumentation (its
# blocks reach meminst's delete, which gives glibc the blocks it did not
# make) but not backend=jemalloc (off mode crashed on it).  Each shape, in
# off, mis and mim and each backend: the plain run's output and status,
# and one line that names what is defined where, unless nothing was
# promised (off with the system backend; C++ with it).
. "$top_srcdir/tests/integration/lib.sh"

T=$MI_TARGETS
# shape|command|the line expected (a grep -E pattern; empty: none)
shapes() {
	cat <<EOS
exe: malloc and free|$T/part_malloc|^meminst: the executable defines malloc and free but not calloc and realloc: allocations are not instrumented.*build it without its own allocator
exe: malloc, free and calloc|$T/part_malloc_calloc|^meminst: the executable defines malloc, free and calloc but not realloc: allocations are not instrumented
preloaded library: malloc and free|PRE $T/part_malloc_user|^meminst: .*libpart_malloc.so defines malloc and free but not calloc and realloc: allocations are not instrumented.*put libmeminst.so first in LD_PRELOAD
linked library: malloc and free|$T/part_malloc_linked|
C++: operator new only|$T/part_new|^meminst: the executable defines operator new: backend=jemalloc is not used
EOS
}

# run CMD: the program, "PRE" first: with libpart_malloc.so preloaded
# before libmeminst (before nothing in the plain run).
run() {
	if [ "$1" = PRE ]; then
		shift
		if [ -n "${MI_MEMINST+set}" ]; then
			$MI_TIMEOUT env LD_PRELOAD="$T/.libs/libpart_malloc.so $MEMINST_LIB" MEMINST="$MI_MEMINST" "$@"
		else
			$MI_TIMEOUT env LD_PRELOAD="$T/.libs/libpart_malloc.so" "$@"
		fi
	else
		mi_x "$@"
	fi
}

shapes >"$MI_TMP/shapes"
while IFS='|' read -r name cmd line; do
	# shellcheck disable=SC2086 # cmd is words
	run $cmd >"$MI_TMP/ref" 2>"$MI_TMP/ref.err"
	ref_rc=$?
	for mode in off mis mim; do
		for backend in $MEMINST_BACKENDS; do
			for rep in 1 2 3; do
				why=
				MI_MEMINST=$mode,backend=$backend
				# shellcheck disable=SC2086
				run $cmd >"$MI_TMP/out" 2>"$MI_TMP/err"
				rc=$?
				unset MI_MEMINST
				[ "$rc" -eq "$ref_rc" ] || mi_why_add "exit status $rc, plain $ref_rc"
				cmp -s "$MI_TMP/ref" "$MI_TMP/out" || mi_why_add "stdout differs"
				# a line in mis and mim, or for backend=jemalloc (C++: only then)
				want=1
				if [ -z "$line" ] || { [ "$backend" = system ] &&
					{ [ "$mode" = off ] || [ "$cmd" = "$T/part_new" ]; }; }; then
					want=0
				fi
				if [ "$want" = 1 ]; then
					[ "$(grep -c '^meminst:' "$MI_TMP/err")" -eq 1 ] && grep -Eq "$line" "$MI_TMP/err" ||
						mi_why_add "not the one line expected"
				else
					mi_no_complaint "$MI_TMP/err"
				fi
				[ -n "$why" ] || [ "$rep" -eq 3 ] || continue
				mi_verdict "$name, $mode/$backend (3 runs)" "$why" "$MI_TMP/out" stdout "$MI_TMP/err" stderr
				break
			done
		done
	done
done <"$MI_TMP/shapes"
mi_finish
