# snap_fdfork.sh — meminst's background threads and a single-threaded
# program's descriptors and forks, with tests/targets/snap_fdfork (150
# rounds of close, check, fork, exit):
#   - interval snapshots every millisecond (mis, each backend; mim with
#     the first): no number the program has just closed is taken by the
#     service thread's files (bash closes such numbers twice: it closed
#     SQLite's file and corrupted the snapshot, or SQLite closed bash's
#     pipe), no child forked during a store hangs in its exit snapshot
#     (SQLite's mutexes held by the parent's thread), one file per process,
#     and nothing on stderr;
#   - a daemon that closes every descriptor and opens its own files under
#     the numbers of meminst's wake pipe: a signal and a peak snapshot are
#     still stored, and nothing is written to or read from its files;
#   - wall-clock sampling, and a program that closes the trace file and
#     opens its own under the number: no sample chunk goes into its file;
#   - allocation and timer sampling (libunwind's walks), and a daemon that
#     closes every descriptor and opens eight files: libunwind's pipe for
#     checking addresses never was one of them (it wrote bytes of the
#     stack into them, or closed them).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

ROUNDS=150
first=${MEMINST_BACKENDS%% *}
for c in $(for b in $MEMINST_BACKENDS; do echo "mis/$b"; done) "mim/$first"; do
	dir=$MI_TMP/${c%/*}-${c#*/}
	snap_case "$dir" "${c%/*},backend=${c#*/},snapshot=f.%p.db,interval=1ms,snapshot_at=exit" mi_x "$MI_TARGETS/snap_fdfork" $ROUNDS
	snap_expect "output" "$(cat "$dir.out")" "hung 0 taken 0"
	mi_no_complaint "$dir.err"
	snap_expect "snapshot files" "$(ls "$dir" | grep -c '^f\.[0-9]*\.db$')" $((ROUNDS + 1))
	mi_verdict "descriptors and forks with meminst's threads busy, $c" "$why" \
		"$dir.out" stdout "$dir.err" stderr
done

for b in $MEMINST_BACKENDS; do
	dir=$MI_TMP/daemon-$b
	snap_case "$dir" "mis,backend=$b,snapshot=s.db,snapshot_at=signal+peak" mi_x "$MI_TARGETS/snap_fdfork" daemon log
	snap_expect "output" "$(cat "$dir.out")" "file 4 offset 0"
	snap_expect "file" "$(od -An -c "$dir/log" | tr -s ' ')" " l o g \\n"
	mi_no_complaint "$dir.err"
	snap_expect "snapshots" "$(snap_sql "$dir/s.db" "SELECT group_concat(trigger, ' ')
		FROM (SELECT trigger FROM snapshot ORDER BY trigger)")" "peak signal"
	mi_verdict "a daemon's own files under the wake pipe's numbers, mis/$b" "$why" \
		"$dir.out" stdout "$dir.err" stderr
done

dir=$MI_TMP/trace
snap_case "$dir" "off,sample=1000,sample_clock=wall,trace_file=$dir/t.trace" mi_x "$MI_TARGETS/snap_fdfork" trace own
snap_expect "output" "$(cat "$dir.out")" "size 300"
mi_no_complaint "$dir.err"
mi_verdict "a program's own file under the trace file's number, wall-clock sampling" "$why" \
	"$dir.out" stdout "$dir.err" stderr

for s in "mim,alloc_sample=1024" "off,sample=1000"; do
	dir=$MI_TMP/files-${s%%,*}
	snap_case "$dir" "$s,trace_file=$dir/t.trace" mi_x "$MI_TARGETS/snap_fdfork" files f
	snap_expect "output" "$(cat "$dir.out")" "sizes 300 300 300 300 300 300 300 300"
	mi_no_complaint "$dir.err"
	mi_verdict "a daemon's own files and libunwind's pipe, $s" "$why" "$dir.out" stdout "$dir.err" stderr
done
mi_finish
