# forge.sh — tests/targets/forge: forged headers are not taken for ours.
# `headers` frees one block 1,000,000 times behind a forged header (size
# 1 TiB, random check bits): none may be accepted (meminst(7), Modes and
# headers: each try passes with probability 2^-30).  quiet=on keeps the
# million reports off stderr.  `index` (mim) overwrites the list number in a
# live block's header three ways and frees it, and frees a block twice with
# its header written back in between: each time the process must stop with
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
	[ "$(grep -c "^meminst: free of 0x[0-9a-f]*: the block's list in the map was overwritten" "$ERR")" = 4 ] ||
		mi_why_add "not four lines about the list"
	mi_verdict "forge-index mim/$b" "$why" "$ERR" stderr
done
mi_finish
