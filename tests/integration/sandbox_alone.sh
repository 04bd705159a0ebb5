# sandbox_alone.sh — a program that makes sure it runs alone before it
# locks itself in (tests/targets/sandbox_alone.c: the link count of
# /proc/self/task, Chromium's zygote's look before it drops its
# capabilities) found meminst's threads there and aborted: every headless
# Chromium run under `meminst --control` crashed ("Failed to receive
# hello message from zygote").  meminst's threads now end when the
# program looks; the program's output and exit status are the plain
# run's, and the exit snapshot is still stored.  Also in a child of fork
# and in one of the raw clone system call, which has no thread of
# meminst's, only its parent's records of them (taking it for a process
# with threads, it waited for ever for one to end).
: "${MEMINST_TEST_TIMEOUT:=60}"
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/sandbox_alone
LAUNCH=$top_builddir/session/meminst
export MEMINST_LIBRARY="$MEMINST_LIB"
LINE="meminst: the program counts its threads"

for how in alone fork clone; do
	mi_reference_status 4 "sandbox_alone $how" "$TARGET" $how || continue
	for set in "mis,control=on" "mis,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+peak+signal,interval=1ms" \
		"mim,control=on,site_depth=8,sample=1000,trace_file=$MI_TMP/t.%p.trace" \
		"mis,control=on,sample=1000,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace"; do
		label="sandbox_alone $how, $(echo "$set" | sed "s|$MI_TMP/||g")"
		rm -f "$MI_TMP"/s.* "$MI_TMP"/t.*
		MI_MEMINST=$set
		mi_run_like_reference mi_x "$TARGET" $how
		unset MI_MEMINST
		grep -q "^$LINE" "$MI_TMP/run.err" || mi_why_add "no line saying meminst's threads end"
		grep -v "^$LINE" "$MI_TMP/run.err" >"$MI_TMP/run.rest"
		mi_no_complaint "$MI_TMP/run.rest"
		case $set in *snapshot=*)
			ls "$MI_TMP"/s.*.db >/dev/null 2>&1 || mi_why_add "no exit snapshot" ;;
		esac
		mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
	done
	label="sandbox_alone $how, meminst --mim --control --sample-clock wall --interval 1ms"
	mi_run_like_reference "$LAUNCH" -f -o "$MI_TMP/sess.db" --mim --control --sample=1000 \
		--sample-clock wall --interval 1ms -- "$TARGET" $how
	mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
done
mi_finish
