# forge.sh — tests/targets/forge: forged headers are not taken for ours.
# `headers` frees one block 1,000,000 times behind a forged header (size
# 1 TiB, random check bits): none may be accepted (meminst(7), Modes and
# headers: each try passes with probability 2^-30).  quiet=on keeps the
# million reports off stderr.  `links` (mim) overwrites a live block's list
# links and frees it: the process must stop with one line before the
# unlink writes anything.
. "$top_srcdir/tests/integration/lib.sh"

headers() { mi_x "$MI_TARGETS/forge" headers; }
MEMINST_TEST_MODES="mis,quiet=on mim,quiet=on"
mi_compare forge-headers headers

ERR=$MI_TMP/links.err
for b in $MEMINST_BACKENDS; do
	why=
	out=$(MI_MEMINST="mim,backend=$b" mi_x "$MI_TARGETS/forge" links 2>"$ERR")
	[ "$out" = "links: nothing written" ] || mi_why_add "stdout '$out'"
	grep -q "^meminst: free of 0x[0-9a-f]*: the block's list links were overwritten" "$ERR" ||
		mi_why_add "no line about the links"
	mi_verdict "forge-links mim/$b" "$why" "$ERR" stderr
done
mi_finish
