#!/bin/sh
# The README's demo: an example program under MEMINST=mim prints its status
# by class and by type; its exit snapshot is read back with inspect; then an
# unmodified program (sort) runs under the preload.
set -eu
top=${1:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "== examples/demo, linked with -lmeminst, MEMINST=mim,snapshot=demo.db"
MEMINST=mim,snapshot="$tmp/demo.db" "$top/examples/demo"
echo
echo "== inspect status --classes demo.db"
"$top/inspect/inspect" status --classes "$tmp/demo.db"
echo
echo "== inspect top --by type demo.db"
"$top/inspect/inspect" top --by type --limit 5 "$tmp/demo.db"
echo
echo "== inspect holes demo.db"
"$top/inspect/inspect" holes "$tmp/demo.db"
echo
echo "== sort, unmodified, LD_PRELOAD=libmeminst.so MEMINST=mis,print=classes"
seq 100000 | LD_PRELOAD="$top/alloc/.libs/libmeminst.so" MEMINST=mis,print=classes sort -R >/dev/null
