# death.sh — a program that dies by a signal, or ends by _exit or abort,
# keeps its samples (issue 12): the library writes what it holds before
# the program dies, which dies as it would have (same status), and the
# program's own handler still runs.  A CPU-bound program sampled at 100 Hz
# of CPU time is killed once it has used 1.5 s of CPU; the trace must hold
# at least 70% of the samples its CPU time makes (and not more than it
# can make): counted against CPU time, read from /proc, never wall time.
# Then the same through the launcher, `meminst -o S.db`, with SIGINT sent
# to the launcher alone (as `kill -INT`; a Ctrl-C reaches both).
. "$top_srcdir/tests/sample/sample_lib.sh"

ST_BLOCK=$top_builddir/tests/sample/sample_block
M=$top_builddir/session/meminst

# cpu_ticks PID: user + system CPU time of the process, in clock ticks
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}
HZ=$(getconf CLK_TCK)

# wait_cpu PID TICKS: until the process has used TICKS of CPU (60 s at most)
wait_cpu() {
	i=0
	while [ "$(cpu_ticks "$1")" -lt "$2" ] 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# check_kept LABEL TRACE_OR_DB CPU_BEFORE CPU_AFTER: samples within
# [70% of CPU_BEFORE, CPU_AFTER + 5 ticks] at 100 Hz, counted as sampled
# time (samples weighed by the periods they stand for).  70, not the
# issue's 80: the process's CPU time holds meminst's own threads too;
# losing the samples at death gives 0%, far below.
check_kept() {
	"$ST_INSPECT" analyse --json "$2" >"$MI_TMP/$1.json" 2>"$MI_TMP/$1.aerr"
	# the sampled time in periods: a tick merged with the next by the
	# kernel (an overrun, under load) is one sample that weighs two
	n=$(st_j "$1" "int(round(j['ms'] / 10))")
	lo=$(awk -v c="$3" -v hz="$HZ" 'BEGIN { printf "%d", 0.7 * c / hz * 100 }')
	hi=$(awk -v c="$4" -v hz="$HZ" 'BEGIN { printf "%d", (c + 5) / hz * 100 + 5 }')
	[ "${n:-0}" -ge "$lo" ] && [ "${n:-0}" -le "$hi" ] ||
		mi_why_add "${n:-0} periods sampled, not $lo to $hi for $3..$4 CPU ticks at 100 Hz"
}

# the program killed by SIG after 1.5 s of CPU: status 128 + SIG
for sig in TERM INT HUP; do
	l=kill-$sig
	rm -f "$MI_TMP/$l.trace"
	env --default-signal=INT,TERM,HUP LD_PRELOAD="$MEMINST_LIB" \
		MEMINST="sample=100,trace_file=$MI_TMP/$l.trace" "$ST_BLOCK" burn 0 forever \
		>"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err" &
	pid=$!
	wait_cpu $pid $((HZ * 3 / 2))
	before=$(cpu_ticks $pid)
	kill -$sig $pid
	after=$(cpu_ticks $pid)
	wait $pid
	rc=$?
	why=
	want=$((128 + $(kill -l $sig)))
	[ $rc -eq $want ] || mi_why_add "exit status $rc, not $want (death by SIG$sig)"
	check_kept $l "$MI_TMP/$l.trace" "$before" "${after:-$before}"
	st_verdict "$l: samples kept after SIG$sig ($n for $before CPU ticks)"
done

# exit, _exit and abort after 0.5 s of CPU: the status they give
for end in exit _exit abort; do
	l=end-$end
	rm -f "$MI_TMP/$l.trace"
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="sample=100,trace_file=$MI_TMP/$l.trace" \
		"$ST_BLOCK" burn 500 $end >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
	rc=$?
	why=
	case $end in exit) want=0 ;; _exit) want=5 ;; abort) want=134 ;; esac
	[ $rc -eq $want ] || mi_why_add "exit status $rc, not $want"
	check_kept $l "$MI_TMP/$l.trace" $((HZ / 2)) $((HZ / 2 + HZ / 10))
	st_verdict "$l: samples kept ($n)"
done

# the program's own SIGTERM handler runs, sigaction and signal report what
# it set, and it dies by SIGTERM after setting SIG_DFL and raising it
l=catch
rm -f "$MI_TMP/$l.trace"
env --default-signal=TERM LD_PRELOAD="$MEMINST_LIB" \
	MEMINST="sample=100,trace_file=$MI_TMP/$l.trace" "$ST_BLOCK" catch \
	>"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err" &
pid=$!
wait_cpu $pid $((HZ / 2))
before=$(cpu_ticks $pid)
kill -TERM $pid
wait $pid
rc=$?
why=
[ $rc -eq 143 ] || mi_why_add "exit status $rc, not 143"
[ "$(cat "$MI_TMP/$l.out")" = "$(printf 'ready\ncaught')" ] ||
	mi_why_add "output: $(tr '\n' ' ' <"$MI_TMP/$l.out")"
check_kept $l "$MI_TMP/$l.trace" "$before" $((before + HZ))
st_verdict "$l: its own handler ran, then it died by SIGTERM with its samples ($n)"

# the launcher, sent SIGINT alone: passes it on, writes the session, and
# ends by SIGINT too
if [ -x "$M" ]; then
	l=launcher-INT
	(cd "$MI_TMP" && exec env --default-signal=INT MEMINST_LIBRARY="$MEMINST_LIB" \
		"$M" --sample=100 -o s.db -- "$ST_BLOCK" burn 0 forever) \
		>"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err" &
	lpid=$!
	i=0
	while [ -z "${cpid:-}" ] && [ $i -lt 100 ]; do
		cpid=$(pgrep -P $lpid | head -1)
		sleep 0.1
		i=$((i + 1))
	done
	why=
	if [ -n "${cpid:-}" ]; then
		wait_cpu $cpid $((HZ * 3 / 2))
		before=$(cpu_ticks $cpid)
		kill -INT $lpid
		wait $lpid
		rc=$?
		[ $rc -eq 130 ] || mi_why_add "meminst: exit status $rc, not 130"
		[ -f "$MI_TMP/s.db" ] || mi_why_add "no session written"
		check_kept $l "$MI_TMP/s.db" "$before" $((before + HZ / 2))
	else
		kill $lpid
		mi_why_add "the program did not start"
	fi
	st_verdict "$l: the session keeps the samples of a program stopped by kill -INT meminst (${n:-0})"
fi

mi_finish
