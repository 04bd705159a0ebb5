#!/bin/sh
# The README's demo: an example program under MEMINST=mim prints its status
# by class and by type; its exit snapshot is read back with inspect; an
# unmodified program (sort) runs under the preload; then one run gives time
# and memory side by side (meminst --mim --trace, inspect report and
# analyse), and an unmodified python3 is sampled.
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
echo
echo "== one run, time and memory: meminst --mim --trace -- examples/create_file_slow"
echo "   (fprof's example in C, built with -finstrument-functions)"
MEMINST_LIBRARY="$top/alloc/.libs/libmeminst.so" "$top/session/meminst" --mim --trace \
	-o "$tmp/slow.db" -- "$top/examples/create_file_slow" "$tmp/slow.dat" 1024
echo
echo "== inspect report slow.db"
"$top/inspect/inspect" report --limit 8 "$tmp/slow.db"
echo
echo "== inspect analyse --no-callers slow.db (fprof's analysis: CNT ACC OWN in ms)"
"$top/inspect/inspect" analyse --no-callers "$tmp/slow.db" | head -n 24
echo
echo "== an unmodified python3, sampled at 1000 Hz: inspect analyse --style flat"
MEMINST_LIBRARY="$top/alloc/.libs/libmeminst.so" "$top/session/meminst" -q --mis --sample=1000 \
	-o "$tmp/py.db" -- /usr/bin/python3 -c 'sum(i * i for i in range(3000000))'
"$top/inspect/inspect" analyse --style flat --limit 8 "$tmp/py.db"
