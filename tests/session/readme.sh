# readme.sh — the README's "Using it" block runs as written: from a copy of
# the source tree's examples, with the built meminst and inspect first on
# PATH, the built library in place of /usr/local/lib/libmeminst.so, and a
# meminst.pc for pkg-config that points at the build tree (what
# `make install` would give).  Every command must succeed.
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

mkdir -p examples pc
cp "$top_srcdir"/examples/*.c examples/
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
mi_finish
