# split.sh — timer sampling of a program with a known split of its time:
# burn_big takes 75% of the CPU, burn_small 25% (tests/sample/sample_target
# split, built -O1 -fno-inline).  At 1000 Hz, in cpu and wall mode, the
# cumulative share of each (`inspect analyse --style flat --json`: samples
# with the function on the stack) must be within 8 points of the truth (1.5 s gives ~1500 samples: the sampling
# error is ~1 point; the rest is room for a busy machine).  In wall mode the
# shares are of burn_big + burn_small: on a loaded machine wall time also
# holds the waits for a CPU, which land where the thread was preempted,
# often in the clock_gettime system call of cpu_ms.  Then a thread
# that sleeps next to a busy one: invisible in cpu mode, about half the
# samples in wall mode.
. "$top_srcdir/tests/sample/sample_lib.sh"

for clock in cpu wall; do
	l=split-$clock
	st_case $l "sample=1000,sample_clock=$clock" "$ST_TARGET" split 1500
	st_analyse $l --style flat
	n=$(st_j $l "j['samples']")
	[ "${n:-0}" -ge 700 ] || mi_why_add "only ${n:-0} samples for 1.5 s at 1000 Hz"
	big=$(st_j $l "round(fn('burn_big').get('cum_percent', 0), 1)")
	small=$(st_j $l "round(fn('burn_small').get('cum_percent', 0), 1)")
	if [ $clock = wall ]; then
		big=$(awk -v b="$big" -v s="$small" 'BEGIN { printf "%.1f", b + s ? 100 * b / (b + s) : 0 }')
		small=$(awk -v b="$big" 'BEGIN { printf "%.1f", 100 - b }')
	fi
	st_within "$big" 75 8 || mi_why_add "burn_big has $big% of the samples, not 75 +/- 8"
	st_within "$small" 25 8 || mi_why_add "burn_small has $small% of the samples, not 25 +/- 8"
	mi_no_complaint "$MI_TMP/$l.err"
	st_verdict "$l 75/25 at 1000 Hz (big $big%, small $small%)"
done

# CPU time in the kernel is CPU time: a loop of system calls
# (sample_target syscalls: clock_gettime of the process's CPU clock, most
# of its time in the kernel) must get samples for at least 80% of its
# user+sys time.  The perf task clock dropped the periods that ended in the
# kernel (557 ms of samples for 1515 ms).  As root the perf event counts
# both; as another user (perf_event_paranoid >= 2) the POSIX timer on the
# thread's CPU clock does.
kernel_case() { # LABEL [COMMAND PREFIX...]: the prefix runs unpreloaded
	l=$1
	shift
	if [ $# -eq 0 ]; then
		st_case $l "sample=1000,sample_clock=cpu" "$ST_TARGET" syscalls 1500
	else
		why=
		(cd "$MI_TMP" && $MI_TIMEOUT "$@" env LD_PRELOAD="$MEMINST_LIB" \
			MEMINST="sample=1000,sample_clock=cpu,trace_file=$MI_TMP/$l.trace" \
			"$ST_TARGET" syscalls 1500) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err" ||
			mi_why_add "exit status $?"
	fi
	st_analyse $l
	ms=$(st_j $l "j['ms']")
	cpu=$(sed -n 's/^user+sys \([0-9]*\) ms$/\1/p' "$MI_TMP/$l.err")
	awk -v s="${ms:-0}" -v c="${cpu:-0}" 'BEGIN { exit !(c > 0 && s >= 0.8 * c) }' ||
		mi_why_add "${ms:-0} ms of samples for ${cpu:-?} ms of user+sys time"
	st_done $l syscalls
	st_verdict "$l: samples cover user and system time (${ms:-0} of ${cpu:-?} ms)"
}
kernel_case kernel-cpu
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -r /proc/sys/kernel/perf_event_paranoid ] &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	chmod 777 "$MI_TMP"
	kernel_case kernel-timer setpriv --reuid=nobody --regid=nogroup --clear-groups
fi

# An exec in a sampled thread: a CPU tick of the exec itself (kernel time)
# stayed pending through it and killed the new program ("Profiling timer
# expired", status 155: setpriv above, at its first exec).  20 execs of env
# in a row, each sampled, then the program.
l=exec-chain
st_case $l "sample=1000,sample_clock=cpu" env env env env env env env env env env env env env env \
	env env env env env env env "$ST_TARGET" split 100
st_done $l split
st_verdict "$l: 20 execs in one sampled process"

# The sleeper: main burns 1 s of CPU while a second thread naps until main
# is done (the same wall time, however loaded the machine is).
l=sleeper-cpu
st_run $l "sample=1000,sample_clock=cpu" "$ST_TARGET" sleeper 1000
why=
st_analyse $l
sl=$(st_j $l "round(fn('sleeper_wait').get('cum_percent', 0), 1)")
st_within "$sl" 0 3 || mi_why_add "sleeper_wait has $sl% of the CPU samples (sleeping is not CPU)"
th=$(st_field $l samples 6)
st_verdict "$l: the sleeping thread is not sampled (sleeper_wait $sl%)"

l=sleeper-wall
st_run $l "sample=1000,sample_clock=wall" "$ST_TARGET" sleeper 1000
why=
st_analyse $l
sl=$(st_j $l "round(fn('sleeper_wait').get('cum_percent', 0), 1)")
st_within "$sl" 50 15 || mi_why_add "sleeper_wait has $sl% of the wall samples, not 50 +/- 15"
th=$(st_j $l "len([t for t in j['threads'] if t['samples']])")
[ "${th:-0}" -eq 2 ] || mi_why_add "samples from ${th:-0} threads, not 2"
grep -q '^sleeper done$' "$MI_TMP/$l.out" || mi_why_add "the program did not finish"
st_verdict "$l: the sleeping thread shows (sleeper_wait $sl%)"

mi_finish
