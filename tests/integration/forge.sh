# forge.sh — tests/targets/forge: forged headers are not taken for ours.
# `headers` frees one block 1,000,000 times behind a forged header (size
# 1 TiB, random check bits): none may be accepted (meminst(7), Modes and
# headers: each try passes with probability 2^-30).  quiet=on keeps the
# million reports off stderr.  `index` (mim) overwrites a live block's place
# in the map three ways and frees it: each time the process must stop with
# one line before the map is written.
. "$top_srcdir/tests/integration/lib.sh"

headers() { mi_x "$MI_TARGETS/forge" headers; }
MEMINST_TEST_MODES="mis,quiet=on mim,quiet=on"
mi_compare forge-headers headers

ERR=$MI_TMP/index.err
for b in $MEMINST_BACKENDS; do
	why=
	out=$(MI_MEMINST="mim,backend=$b" mi_x "$MI_TARGETS/forge" index 2>"$ERR")
	[ "$out" = "index: nothing written" ] || mi_why_add "stdout '$out'"
	[ "$(grep -c "^meminst: free of 0x[0-9a-f]*: the block's map index was overwritten" "$ERR")" = 3 ] ||
		mi_why_add "not three lines about the index"
	mi_verdict "forge-index mim/$b" "$why" "$ERR" stderr
done
mi_finish
