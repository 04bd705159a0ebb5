# raw_exit.sh — a main thread that ends by the exit system call, not
# exit_group (tests/targets/raw_exit.c): without meminst the process ends
# there with status 3.  meminst's own threads (the snapshot service, the
# wall-clock sampler) kept such a process alive for ever, at 100 % of a core
# once a SIGTERM was pending; now it ends with status 3 and its exit
# snapshot, through libc's syscall() at once, through the bare instruction
# at the next look of the service thread or of the wall-clock sampler's
# probe, or of the sampler itself where it has no probe (about a second).
# Each run has 30 s.
: "${MEMINST_TEST_TIMEOUT:=30}"
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/raw_exit
LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
export MEMINST_LIBRARY="$MEMINST_LIB"

for how in syscall asm; do
	# the plain run: its lines, exit status 3
	mi_reference_status 3 "raw_exit $how" "$TARGET" $how || continue
	for backend in $MEMINST_BACKENDS; do
		for set in mis mim "mim,snapshot=$MI_TMP/s.%p.db" "mis,control=on,snapshot=$MI_TMP/s.%p.db" \
			"mis,sample=1000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace"; do
			# the bare instruction reaches no hook: only the service
			# thread and the wall-clock sampler's probe see it
			[ $how = asm ] && case $set in *control* | *wall*) ;; *) continue ;; esac
			label="raw_exit $how, $(echo "$set" | sed "s|$MI_TMP/||g")/$backend"
			rm -f "$MI_TMP"/s.* "$MI_TMP"/t.*
			MI_MEMINST="$set,backend=$backend"
			mi_run_like_reference mi_x "$TARGET" $how
			unset MI_MEMINST
			case $set in *snapshot=*)
				"$INSPECT" list "$MI_TMP"/s.*.db >"$MI_TMP/list.out" 2>&1
				grep -q " exit " "$MI_TMP/list.out" || mi_why_add "no exit snapshot" ;;
			esac
			mi_no_complaint "$MI_TMP/run.err"
			mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
		done
	done
	# the launcher's defaults (the service thread, exit+peak+signal
	# snapshots, 100 Hz sampling), and its wall-clock sampler
	for opts in "" "--sample-clock=wall" "--snapshot-at=none --interval=0 --sample-clock=wall"; do
		label="raw_exit $how, meminst ${opts:-(defaults)}"
		mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -f -o "$MI_TMP/sess.db" $opts -- "$TARGET" $how
		"$INSPECT" report "$MI_TMP/sess.db" >"$MI_TMP/rep.out" 2>"$MI_TMP/rep.err"
		grep -Eq "exited with status 3|^exit code: +3$" "$MI_TMP/rep.out" ||
			mi_why_add "the report has neither 'exited with status 3' nor 'exit code: 3'"
		mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/rep.out" report
	done
done
# no probe thread (unshare refused): the wall-clock sampler looks itself
if mi_reference_status 3 "raw_exit --no-unshare asm" "$TARGET" --no-unshare asm; then
	for backend in $MEMINST_BACKENDS; do
		MI_MEMINST="mis,sample=1000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace,backend=$backend"
		mi_run_like_reference mi_x "$TARGET" --no-unshare asm
		unset MI_MEMINST
		mi_no_complaint "$MI_TMP/run.err"
		mi_verdict "raw_exit asm, wall-clock sampling without its probe/$backend" "$why" "$MI_TMP/run.err" stderr
	done
fi
mi_finish
