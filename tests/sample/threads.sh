# threads.sh — what a short thread costs the CPU-time sampler (issue 27):
# tests/sample/sample_block starts 80, then 400 threads (4 at a time, 8
# small blocks each), with and without sample=100, and reports its minor
# page faults.  The faults a thread adds are the slope between the two
# runs; sampling may add at most 8 a thread to what mis alone adds.  It
# added 64 when each thread made libunwind's 256 KiB trace cache as it
# started (trace_unwind_warm, 10x the CPU of a bare thread: most short
# threads are never sampled).  A count, not a time: the same on a loaded
# machine.
. "$top_srcdir/tests/sample/sample_lib.sh"

ST_BLOCK=$top_builddir/tests/sample/sample_block
faults() { # LABEL MEMINST N: the run's minor faults into $f (0 and a reason when missing)
	st_case "$1" "$2" "$ST_BLOCK" threads "$3"
	st_done "$1" threads
	f=$(awk '$1 == "minflt" { print $2 }' "$MI_TMP/$1.out")
	[ -n "$f" ] || { mi_why_add "$1: no minflt line"; f=0; }
	err="$err $MI_TMP/$1.err"
}
acc= err=
for run in mis-80:mis:80 mis-400:mis:400 sample-80:mis,sample=100:80 sample-400:mis,sample=100:400; do
	IFS=: read -r label meminst n <<RUN
$run
RUN
	faults "$label" "$meminst" "$n"
	acc="$acc$why"
	eval "f_${label%-*}_$n=\$f"
done
why=$acc
m80=$f_mis_80 m400=$f_mis_400 s80=$f_sample_80 s400=$f_sample_400
per=$(awk -v a="$m80" -v b="$m400" -v c="$s80" -v d="$s400" \
	'BEGIN { printf "%.1f", ((d - c) - (b - a)) / 320 }')
echo "faults: mis $m80 -> $m400, sample=100 $s80 -> $s400: sampling adds $per a thread" >"$MI_TMP/threads.sum"
awk -v p="$per" 'BEGIN { exit !(p <= 8) }' ||
	mi_why_add "sampling adds $per minor faults a thread (at most 8; 64 is libunwind's trace cache made at each thread's start)"
l=threads
: >"$MI_TMP/$l.err"
cat $err >>"$MI_TMP/$l.err" 2>/dev/null
mi_verdict "$l: sampling adds $per minor faults a short thread" "$why" "$MI_TMP/threads.sum" summary "$MI_TMP/$l.err" stderr
mi_finish
