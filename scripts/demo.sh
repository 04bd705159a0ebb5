#!/bin/sh
# The README's demo: an example program under MEMINST=mim prints its status
# by class and by type; then an unmodified program (sort) under the preload.
set -eu
top=${1:-.}
echo "== examples/demo, linked with -lmeminst, MEMINST=mim"
MEMINST=mim "$top/examples/demo"
echo
echo "== sort, unmodified, LD_PRELOAD=libmeminst.so MEMINST=mis,print=classes"
seq 100000 | LD_PRELOAD="$top/alloc/.libs/libmeminst.so" MEMINST=mis,print=classes sort -R >/dev/null
