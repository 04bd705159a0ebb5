#!/bin/sh
# dlclose.sh — sites in libraries unloaded (dlclose) before the snapshot:
# the exit snapshot's module table no longer lists them, and the second
# library is likely mapped where the first one was.  Each site must still
# be named from its own file with its source line (class_load: the load
# bias each module had when its sites were named), never from the module
# at that address now, and the two libraries are two classes.  Built with
# cc at test time; skipped without a compiler.
. "$top_srcdir/tests/inspect/lib.sh"

: "${MEMINST_LIB:=$top_builddir/alloc/.libs/libmeminst.so}"
src=$top_srcdir/tests/inspect
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "skip  dlclose: no C compiler"
	exit 77
fi
aline=$(grep -n 'line of keep_a' "$src/dlclose_plug.c" | cut -d: -f1)
bline=$(grep -n 'line of keep_b' "$src/dlclose_plug.c" | cut -d: -f1)
exe=$IT_TMP/dlmain db=$IT_DB/dl.db
if ! { "$CC" -g -O1 -fPIC -shared -DPLUG_A "$src/dlclose_plug.c" -o "$IT_TMP/libplug_a.so" &&
	"$CC" -g -O1 -fPIC -shared -DPLUG_B "$src/dlclose_plug.c" -o "$IT_TMP/libplug_b.so" &&
	"$CC" -g -O1 "$src/dlclose_main.c" -o "$exe" -ldl; } 2>"$IT_TMP/cc.err"; then
	it_fail "cc builds the program and its libraries" "$IT_TMP/cc.err"
	it_finish
fi
mline=$(grep -n "line of main's block" "$src/dlclose_main.c" | cut -d: -f1)
(cd "$IT_TMP" && env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db" ./dlmain "$IT_TMP/libplug_a.so" \
	"$IT_TMP/libplug_b.so") >"$IT_TMP/run.out" 2>"$IT_TMP/run.err" || it_fail "the program runs" "$IT_TMP/run.err"
"$IT_INSPECT" top --by site --csv "$db" >"$IT_TMP/top.csv" 2>&1
if grep -q "^[0-9]*,412,[0-9.]*,8,\"*keep_a+0x[0-9a-f]* (libplug_a.so)\"*,[^,]*dlclose_plug.c,$aline," "$IT_TMP/top.csv" &&
	grep -q "^[0-9]*,1010,[0-9.]*,5,\"*keep_b+0x[0-9a-f]* (libplug_b.so)\"*,[^,]*dlclose_plug.c,$bline," "$IT_TMP/top.csv"
then
	it_ok "sites of unloaded libraries named from their own files, with their lines"
else
	it_fail "sites of unloaded libraries named from their own files, with their lines" "$IT_TMP/top.csv"
fi
"$IT_INSPECT" top --by class --csv "$db" >"$IT_TMP/class.csv" 2>&1
if grep -q ',412,[0-9.]*,8,libplug_a.so,' "$IT_TMP/class.csv" && grep -q ',1010,[0-9.]*,5,libplug_b.so,' "$IT_TMP/class.csv"; then
	it_ok "two libraries loaded one after the other are two classes"
else
	it_fail "two libraries loaded one after the other are two classes" "$IT_TMP/class.csv"
fi
# the program's own site, run as ./dlmain and read from elsewhere
if grep -q "^[0-9]*,77,[0-9.]*,1,\"*main+0x[0-9a-f]* (dlmain)\"*,[^,]*dlclose_main.c,$mline," "$IT_TMP/top.csv"; then
	it_ok "the program's own site (run by a relative path) keeps its line"
else
	it_fail "the program's own site (run by a relative path) keeps its line" "$IT_TMP/top.csv"
fi
it_finish
