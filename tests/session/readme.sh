# readme.sh — the README's examples run as written: its "Using it" block,
# then on the session that block left the commands of "Looking at a run in
# other tools", and the block of "C++ programs"; from a copy of the source
# tree's examples, with the built meminst and inspect first on PATH, the
# built library in place of /usr/local/lib/libmeminst.so, and a meminst.pc
# for pkg-config that points at the build tree (what `make install` would
# give).  Every command must succeed.  (The first block, build.sh, and the
# install steps build and install the tree itself; they are not run here.)
. "$top_srcdir/tests/integration/lib.sh"
mi_need /usr/bin/python3 python3
mi_need /usr/bin/pkg-config pkg-config
cd "$MI_TMP" || exit 99

# The first sh block after "## Using it".
awk '/^## Using it/ { in_sec = 1; next }
     in_sec && /^```sh/ { in_code = 1; next }
     in_code && /^```/ { exit }
     in_code' "$top_srcdir/README.md" |
	sed "s|/usr/local/lib/libmeminst.so|$MEMINST_LIB|g" >using.sh
why=
[ "$(wc -l <using.sh)" -ge 20 ] || mi_why_add "the README's block was not found ($(wc -l <using.sh) lines)"

mkdir -p examples pc bin
cp "$top_srcdir"/examples/*.c "$top_srcdir"/examples/*.cpp examples/
cat >pc/meminst.pc <<EOP
Name: meminst
Description: meminst, from the build tree
Version: 0
Cflags: -I$top_srcdir/include
Libs: -L$top_builddir/alloc/.libs -lmeminst
EOP
libdir=$(dirname "$MEMINST_LIB")
PATH=$top_builddir/session:$top_builddir/inspect:$PATH \
PKG_CONFIG_PATH=$MI_TMP/pc LD_LIBRARY_PATH=$libdir MEMINST_LIBRARY=$MEMINST_LIB \
	$MI_TIMEOUT sh -ex using.sh >out 2>err
rc=$?
[ "$rc" = 0 ] || mi_why_add "the block stopped with status $rc at: $(grep '^+' err | tail -n 1)"
grep -q 'create_file_slow' out || mi_why_add "inspect report/analyse did not name create_file_slow"
grep -q 'index' out || mi_why_add "inspect status --classes did not show the demo's class 'index'"
[ -s now.db ] || mi_why_add "inspect snapshot --pid wrote no now.db"
[ -s app.profile.db ] || mi_why_add "inspect profile wrote no app.profile.db"
mi_verdict "README: the 'Using it' block runs as written" "$why" out stdout err stderr

# The one-line commands of "Looking at a run in other tools", on the app.db
# of the block above.  flamegraph.pl is not Debian's: where it is missing
# a stand-in passes the folded stacks through.
awk '/^### Looking at a run in other tools/ { in_sec = 1; next }
     in_sec && /^###/ { exit }
     in_sec' "$top_srcdir/README.md" | tr '\n' ' ' | grep -o '`inspect [^`]*`' | tr -d '`' >tools.sh
command -v flamegraph.pl >/dev/null || printf '#!/bin/sh\ncat\n' >bin/flamegraph.pl
chmod +x bin/flamegraph.pl 2>/dev/null
why=
[ "$(wc -l <tools.sh)" -ge 5 ] || mi_why_add "only $(wc -l <tools.sh) commands found in 'Looking at a run in other tools'"
PATH=$top_builddir/session:$top_builddir/inspect:$PATH:$MI_TMP/bin \
	$MI_TIMEOUT sh -ex tools.sh >out 2>err
rc=$?
[ "$rc" = 0 ] || mi_why_add "the commands stopped with status $rc at: $(grep '^+' err | tail -n 1)"
for f in callgrind.out.app time.svg app.json app.pb.gz report.html; do
	[ -s $f ] || mi_why_add "no $f"
done
mi_verdict "README: the commands of 'Looking at a run in other tools' run as written" "$why" out stdout err stderr

# The block of "C++ programs": its sites are the lines the README names.
if command -v g++ >/dev/null; then
	awk '/^### C\+\+ programs/ { in_sec = 1; next }
	     in_sec && /^```sh/ { in_code = 1; next }
	     in_code && /^```/ { exit }
	     in_code' "$top_srcdir/README.md" >cxx.sh
	why=
	PATH=$top_builddir/session:$top_builddir/inspect:$PATH MEMINST_LIBRARY=$MEMINST_LIB \
		$MI_TIMEOUT sh -ex cxx.sh >out 2>err
	rc=$?
	[ "$rc" = 0 ] || mi_why_add "the block stopped with status $rc at: $(grep '^+' err | tail -n 1)"
	grep -q 'build_cache(int)+0x[0-9a-f]* (cache) .*cache\.cpp:23$' out ||
		mi_why_add "inspect top --by site did not name build_cache(int) at cache.cpp:23"
	mi_verdict "README: the 'C++ programs' block runs as written" "$why" out stdout err stderr
fi
mi_finish
