# alloc.sh — allocation sampling (alloc_sample=) of a program with known
# volumes: alloc_big allocates 300 MiB in 4 KiB blocks, alloc_small 100 MiB
# in 64-byte blocks.  With a mean interval of 64 KiB (~6400 samples) the
# unbiased estimates of bytes and of allocations per function must be
# within 10% of the truth (the sampling error is ~2.5% for alloc_small, the
# least sampled); in every mode, so that the hooks feed the sampler in each.
# The figures are those of `inspect analyse --style flat --metric bytes`.
. "$top_srcdir/tests/sample/sample_lib.sh"

for mode in off mis mim; do
	l=alloc-$mode
	st_case $l "$mode,alloc_sample=64k" "$ST_TARGET" alloc
	# the function that called the allocator: self figures
	st_analyse $l --style flat --metric bytes
	bb=$(st_j $l "int(fn('alloc_big').get('self_bytes', 0))")
	bs=$(st_j $l "int(fn('alloc_small').get('self_bytes', 0))")
	cb=$(st_j $l "int(fn('alloc_big').get('self_blocks', 0))")
	cs=$(st_j $l "int(fn('alloc_small').get('self_blocks', 0))")
	st_within "${bb:-0}" 314572800 31457280 || mi_why_add "alloc_big: ${bb:-no} bytes estimated, not 300 MiB +/- 10%"
	st_within "${bs:-0}" 104857600 10485760 || mi_why_add "alloc_small: ${bs:-no} bytes estimated, not 100 MiB +/- 10%"
	st_within "${cb:-0}" 76800 7680 || mi_why_add "alloc_big: ${cb:-no} allocations estimated, not 76800 +/- 10%"
	st_within "${cs:-0}" 1638400 163840 || mi_why_add "alloc_small: ${cs:-no} allocations estimated, not 1638400 +/- 10%"
	mi_no_complaint "$MI_TMP/$l.err"
	st_verdict "$l estimates (big $bb B/$cb, small $bs B/$cs)"
done

# allocation samples alone (no timer): analyse shows bytes by default, not
# an empty table of timer samples
why=
st_analyse $l --style flat
[ "$(st_j $l "j.get('metric')")" = bytes ] || mi_why_add "default metric: $(st_j $l "j.get('metric')"), not bytes"
bb=$(st_j $l "int(fn('alloc_big').get('self_bytes', 0))")
st_within "${bb:-0}" 314572800 31457280 || mi_why_add "alloc_big by default: ${bb:-no} bytes, not 300 MiB +/- 10%"
st_verdict "$l: bytes by default for allocation samples alone"
mi_finish
