#!/bin/sh
# lines.sh — file:line for allocation sites in code built by gcc and by
# clang.  libdwfl finds a compile unit through .debug_aranges, which clang
# does not emit; inspect must find the line anyway (rd_symbols.c walks
# the units).  A small program is built with each compiler, run preloaded
# with MEMINST=mim,snapshot=…, and `inspect top --by site` must show the
# allocating function and its source line.  A missing compiler is skipped.
. "$top_srcdir/tests/inspect/lib.sh"

: "${MEMINST_LIB:=$top_builddir/alloc/.libs/libmeminst.so}"
cat >"$IT_TMP/site.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static void *make_block(size_t n)
{
	return malloc(n);
}
int main(void)
{
	printf("%d\n", make_block(1000) != NULL);
	return 0;
}
PROG

for cc in gcc clang; do
	if ! command -v "$cc" >/dev/null 2>&1; then
		echo "skip  $cc: not installed"
		continue
	fi
	exe=$IT_TMP/site-$cc db=$IT_DB/site-$cc.db
	if ! "$cc" -g -O1 -fno-builtin "$IT_TMP/site.c" -o "$exe" 2>"$IT_TMP/cc.err"; then
		it_fail "$cc builds the program" "$IT_TMP/cc.err"
		continue
	fi
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db" "$exe" >/dev/null 2>"$IT_TMP/run.err"
	"$IT_INSPECT" top --by site --csv "$db" >"$IT_TMP/top.csv" 2>"$IT_TMP/top.err"
	if grep -q "make_block+0x[0-9a-f]* (site-$cc).*site\.c\"\?,5" "$IT_TMP/top.csv"; then
		it_ok "$cc: make_block with site.c:5"
	else
		it_fail "$cc: make_block with site.c:5" "$IT_TMP/top.csv" "$IT_TMP/top.err" "$IT_TMP/run.err"
	fi
done
it_finish
