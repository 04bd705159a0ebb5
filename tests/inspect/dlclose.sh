#!/bin/sh
# dlclose.sh — sites in libraries unloaded (dlclose) before the snapshot:
# the exit snapshot's module table no longer lists them, and the second
# library is likely mapped where the first one was.  Each site must still
# be named from its own file with its source line (class_load: the load
# bias each module had when its sites were named), never from the module
# at that address now, and the two libraries are two classes.  A library
# loaded where a closed one was counts its allocations from the closed
# one's site addresses under types of its own.  Built with
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

# Two libraries of the same code (keep_same) loaded one after the other at
# one address, then the first again: each allocates from the same site
# address.  The second's blocks are a type of its own, in its class; the
# first's two loads are one type (its 3 + 2 blocks), in every mode and with
# site_depth (where a type is a stack).
if ! { "$CC" -g -O1 -fPIC -shared -DPLUG_SAME=40 "$src/dlclose_plug.c" -o "$IT_TMP/libsame_a.so" &&
	"$CC" -g -O1 -fPIC -shared -DPLUG_SAME=200 "$src/dlclose_plug.c" -o "$IT_TMP/libsame_b.so"; } 2>"$IT_TMP/cc.err"; then
	it_fail "cc builds the two libraries of keep_same" "$IT_TMP/cc.err"
	it_finish
fi
for how in mim mis mim,site_depth=2; do
	db=$IT_DB/same-$(echo "$how" | tr ,= __).db
	(cd "$IT_TMP" && env LD_PRELOAD="$MEMINST_LIB" MEMINST="$how,snapshot=$db" ./dlmain --same \
		"$IT_TMP/libsame_a.so" "$IT_TMP/libsame_b.so") >"$IT_TMP/same.out" 2>"$IT_TMP/run.err" ||
		it_fail "$how: the program runs (--same)" "$IT_TMP/run.err"
	if [ "$(cat "$IT_TMP/same.out")" != same ]; then
		echo "skip  $how: the loader put the libraries at different addresses ($(cat "$IT_TMP/same.out"))"
		continue
	fi
	"$IT_INSPECT" status --types --csv "$db" >"$IT_TMP/same.csv" 2>&1
	# id,name,bytes_current,…,blocks_current,…: one type of each library
	a=$(grep -c '^[0-9]*,"*[^,]*(libsame_a.so)' "$IT_TMP/same.csv")
	b=$(grep -c '^[0-9]*,"*[^,]*(libsame_b.so)' "$IT_TMP/same.csv")
	if [ "$a" = 1 ] && [ "$b" = 1 ] &&
		grep -q '^[0-9]*,"*[^,]*(libsame_a.so)[^,]*"*,200,200,200,5,5,5' "$IT_TMP/same.csv" &&
		grep -q '^[0-9]*,"*[^,]*(libsame_b.so)[^,]*"*,800,800,800,4,4,4' "$IT_TMP/same.csv"
	then
		it_ok "$how: a library loaded where a closed one was has its own type; the first, loaded again, its old one"
	else
		it_fail "$how: a library loaded where a closed one was has its own type ($a of the first's, $b of the second's)" \
			"$IT_TMP/same.csv"
	fi
done
it_finish
