# block.sh — wall-clock sampling never cuts a wait short (issue 12): at
# 1000 Hz, tests/sample/sample_block waits in usleep (10 x 100 ms),
# nanosleep, poll, read on a pipe, pthread_cond_wait, pthread_join and the
# raw nanosleep system call, 200 ms each; it measures every wait itself and
# prints any EINTR or short one.  The wrapped waits are sampled without a
# signal, with the stack they had when they blocked: each function's share
# of the samples is its wait; the sampler's own thread is never sampled.
# A thread that blocks every signal and takes them with sigwait,
# sigwaitinfo or sigtimedwait, or reads them from a signalfd, never takes
# a tick of the sampler's; a
# program that executes itself is never killed by a tick pending through
# the exec; code on a small stack whose signals go to a sigaltstack (Go's
# goroutines) is not overflowed by the handler.
. "$top_srcdir/tests/sample/sample_lib.sh"

ST_BLOCK=$top_builddir/tests/sample/sample_block
l=block-wall
st_case $l "sample=1000,sample_clock=wall" "$ST_BLOCK" block 200
st_done $l block
bad=$(grep -E '^(eintr|short)' "$MI_TMP/$l.out" | tr '\n' ';')
[ -z "$bad" ] || mi_why_add "waits cut short: $bad"
st_analyse $l --style flat
s=$(st_j $l "round(fn('block_usleep').get('cum_ms', 0) / 1e3, 3)")
st_within "${s:-0}" 1.1 0.2 || mi_why_add "block_usleep has ${s:-0} s of samples, not 1.0 to 1.3"
for f in block_nanosleep block_poll block_read block_cond block_join; do
	s=$(st_j $l "round(fn('$f').get('cum_ms', 0) / 1e3, 3)")
	st_within "${s:-0}" 0.25 0.08 || mi_why_add "$f has ${s:-0} s of samples, not 0.2 to 0.33"
done
th=$(st_j $l "len(j['threads'])")
[ "${th:-0}" -eq 4 ] || mi_why_add "samples of ${th:-0} threads, not the program's 4"
st_verdict "$l: no wait cut short, each wait sampled with its stack"


# block_own_only MODE WORD VERDICT CLOCK: the target in MODE, which blocks
# every signal and takes them by WORD's means, finds only its own (no
# "unexpected" line) and still gets its own SIGPROF.
block_own_only() {
	l=$1-$4
	st_case $l "sample=1000,sample_clock=$4" "$ST_BLOCK" $1 300
	st_done $l $1
	bad=$(grep '^unexpected' "$MI_TMP/$l.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
	[ -z "$bad" ] || mi_why_add "the program $2 signals that are not its own:$bad"
	grep -q '^own sigprof$' "$MI_TMP/$l.out" || mi_why_add "its own SIGPROF did not reach it"
	st_verdict "$l: $3"
}

# A program that blocks every signal and takes them with the sigwait family
# (a signal thread) never gets the sampler's ticks, at cpu or wall clock.
# The same with a signalfd (a daemon's event loop): the ticks, pending while
# SIGPROF is blocked, were read there and seen by sigpending as the
# program's own; while a thread blocks SIGPROF its timer now stops (cpu),
# the sampler thread sends it nothing (wall).
for clock in cpu wall; do
	block_own_only sigwait "took" "the sigwait family gets the program's signals only" $clock
	block_own_only signalfd "found" "a signalfd and sigpending find the program's signals only" $clock
	# born with every signal blocked (the mask kept through an exec): no
	# tick is pending for it either
	l=inherit-$clock
	st_case $l "sample=1000,sample_clock=$clock" "$ST_BLOCK" inherit 300
	st_done $l pending
	st_verdict "$l: a program born with SIGPROF blocked finds no tick pending"
done

# A program that executes itself 200 times under wall-clock sampling: a
# tick pending through an exec killed the new program by SIGPROF.
l=exec-wall
st_case $l "sample=1000,sample_clock=wall" "$ST_BLOCK" exec 200
st_done $l exec
st_verdict "$l: 200 execs, none killed by a tick"

# Code on a stack of 8 KiB with its signals on a sigaltstack (a Go
# program's goroutines): the handler runs on the signal stack (SA_ONSTACK);
# on the small one it overflowed it (SIGSEGV; Go: "fatal error: sync:
# inconsistent mutex state" and the like, at the launcher's default 100 Hz).
for clock in cpu wall; do
	l=small-$clock
	st_case $l "sample=1000,sample_clock=$clock" "$ST_BLOCK" small 300
	st_done $l small
	st_verdict "$l: a small stack with a signal stack survives sampling"
	# a coroutine on 8 KiB from malloc, no signal stack: the walk wrote
	# below it into the heap (SIGSEGV or a damaged heap at 2000 Hz); now
	# its samples keep their pc, its allocations are typed by their site
	l=coro-$clock
	st_case $l "sample=2000,sample_clock=$clock" "$ST_BLOCK" coro 300
	st_done $l coro
	grep -q '^coro overwritten' "$MI_TMP/$l.out" && mi_why_add "$(grep '^coro overwritten' "$MI_TMP/$l.out")"
	st_verdict "$l: a coroutine's small stack is not written past"
	# a signal stack of 8 KiB, too small for the walk: the pc alone; one
	# of 18160 bytes (Python's faulthandler): stacks walked to main; one
	# of MINSIGSTKSZ (2048), under the kernel's signal frame with AVX-512
	# (3376 bytes): the first tick killed the program (SIGSEGV), now the
	# thread is not sampled while it keeps it
	for size in 2048 8192 18160; do
		l=alt-$size-$clock
		st_case $l "sample=1000,sample_clock=$clock" "$ST_BLOCK" alt 300 $size
		st_done $l alt
		if [ $size = 18160 ]; then
			st_analyse $l --style flat
			m=$(st_j $l "round(fn('main').get('cum_ms', 0))")
			[ "${m:-0}" -gt 100 ] || mi_why_add "main has ${m:-0} ms of samples: stacks not walked"
		fi
		st_verdict "$l: a signal stack of $size bytes survives sampling"
	done
done

# Threads that keep SIGPROF blocked (a daemon's) get no samples: inspect
# says so, rather than that the program ran too briefly.
l=masked-cpu
st_run $l "sample=1000" "$ST_BLOCK" masked 300
"$top_builddir/inspect/inspect" analyse --style flat "$MI_TMP/$l.trace" >"$MI_TMP/$l.an" 2>"$MI_TMP/$l.an.err"
why=
grep -q 'masked done' "$MI_TMP/$l.out" || mi_why_add "the program did not finish"
grep -q 'or its threads kept SIGPROF blocked' "$MI_TMP/$l.an.err" || mi_why_add "analyse does not say why"
st_verdict "$l: no samples of threads that block SIGPROF, and inspect says why"

mi_finish
