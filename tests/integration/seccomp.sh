# seccomp.sh — a program that locks itself in a seccomp filter
# (tests/targets/seccomp_filter.c) ends as it does without meminst: same
# stdout (its buffered lines were lost when meminst's exit calls met a
# kill-on-unknown filter: SIGSYS), same exit status, under mis and mim with
# snapshots, print=, the service thread and tracing, and under the launcher.
# The filter installed by prctl and by syscall(SYS_seccomp) (libseccomp's
# way) is evaluated before it takes effect: one line names what goes off
# and the first system call refused.  A "return error" filter: the same,
# and the launcher's report names meminst's notes, not SIGPROF, for the
# missing samples.  A filter refusing getpid alone: the snapshot keeps the
# process's id in its name (it was s.-1.db).  Strict mode: the same.
# A filter put on every thread (SECCOMP_FILTER_FLAG_TSYNC) that kills on
# what meminst's own threads do (poll, openat of /proc) and on membarrier,
# with a thread of the program's freeing the main thread's blocks under
# it: meminst's threads end before it takes effect, and the lists stop
# relying on membarrier (the process was killed: SIGSYS).  A program that
# forks under its filter (this thread's only): the child makes no thread
# of meminst's and its _exit does not look at /proc (it was killed).
# libseccomp's probes alone (seccomp(2) strict mode with flags 1, which
# the kernel refuses): nothing goes off (they were taken for strict mode:
# no snapshot, no trace, in man(1) and every user of libseccomp).
# A program started under a filter it inherited (how=inherit: openat for
# writing and socket fail with ENOSYS, as under man-db's): one line for the
# process, not one a store, one for the trace file, one for the control
# channel and "sampling is off".
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/seccomp_filter
LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
export MEMINST_LIBRARY="$MEMINST_LIB"
case $(uname -m) in x86_64) ;; *)
	echo "skip  $MI_NAME: filters are evaluated on x86_64 only"
	exit 77 ;;
esac

for how in kill syscall errno nopid strict tsync fork probe; do
	# the plain run: its lines, exit status 3
	mi_reference_status 3 "seccomp $how" "$TARGET" $how || continue
	for backend in $MEMINST_BACKENDS; do
		for set in mis mim "mim,snapshot=$MI_TMP/s.%p.db,print=total+types" \
			"mis,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+peak+signal,control=on,interval=1ms" \
			"mim,sample=1000,alloc_sample=4096,trace_file=$MI_TMP/t.%p.trace"; do
			[ $how = strict ] && case $set in *control* | *sample*) continue ;; esac
			label="seccomp $how, $(echo "$set" | sed "s|$MI_TMP/||g")/$backend"
			rm -f "$MI_TMP"/s.* "$MI_TMP"/t.*
			MI_MEMINST="$set,backend=$backend"
			mi_run_like_reference mi_x "$TARGET" $how
			unset MI_MEMINST
			n=$(grep -c '^meminst:' "$MI_TMP/run.err")
			[ "$n" -le 1 ] || mi_why_add "$n lines from meminst, not at most one"
			case $how,$set in
			probe,*)
				! grep -qE "seccomp filter|strict mode" "$MI_TMP/run.err" || mi_why_add "a line of seccomp"
				case $set in *snapshot*)
					ls "$MI_TMP"/s.*.db >/dev/null 2>&1 || mi_why_add "no snapshot" ;;
				esac ;;
			nopid,*snapshot*)
				ls "$MI_TMP"/s.*.db >/dev/null 2>&1 || mi_why_add "no snapshot"
				ls "$MI_TMP"/s.-*.db >/dev/null 2>&1 && mi_why_add "a snapshot named $(ls "$MI_TMP"/s.-*)" ;;
			kill,*snapshot* | errno,*snapshot* | syscall,*snapshot* | tsync,*snapshot* | fork,*snapshot*)
				grep -q "seccomp filter .*snapshots (openat)" "$MI_TMP/run.err" ||
					mi_why_add "no line naming snapshots and openat" ;;
			esac
			mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
		done
	done
	# the launcher: its default (mis, exit+peak+signal snapshots, 100 Hz
	# sampling) and a heavier one
	for opts in "" "--mim --control --interval=1ms --sample=1000"; do
		[ $how = strict ] && [ -n "$opts" ] && continue
		label="seccomp $how, meminst ${opts:-(defaults)}"
		mi_run_like_reference "$LAUNCH" -f -o "$MI_TMP/sess.db" $opts -- "$TARGET" $how
		"$INSPECT" report "$MI_TMP/sess.db" >"$MI_TMP/rep.out" 2>"$MI_TMP/rep.err"
		# where the filter stopped sampling (a run too brief for samples is
		# said as such otherwise: nopid, strict)
		case $how in kill | errno | syscall | tsync | fork)
			grep -q SIGPROF "$MI_TMP/rep.err" && mi_why_add "the report blames SIGPROF"
			grep -q "seccomp filter" "$MI_TMP/rep.out" || mi_why_add "the report has no note of the filter" ;;
		probe)
			grep -qE "seccomp filter|strict mode" "$MI_TMP/run.err" "$MI_TMP/rep.out" && mi_why_add "a note of seccomp" ;;
		esac
		mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/rep.err" "report's stderr"
	done
done

# An inherited filter meminst cannot read, failing its files with ENOSYS
if mi_reference_status 3 "seccomp inherit" "$TARGET" inherit; then
	for set in "mim,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+peak+signal,control=on,interval=1ms,sample=1000,trace_file=$MI_TMP/t.%p.trace" \
		"launcher"; do
		rm -f "$MI_TMP"/s.* "$MI_TMP"/t.*
		if [ $set = launcher ]; then
			label="seccomp inherit, meminst --mim --control --sample=1000"
			mi_run_like_reference "$LAUNCH" -f -o "$MI_TMP/sess.db" --mim --control --sample=1000 -- "$TARGET" inherit
		else
			label="seccomp inherit, $(echo "$set" | sed "s|$MI_TMP/||g")"
			MI_MEMINST=$set
			mi_run_like_reference mi_x "$TARGET" inherit
			unset MI_MEMINST
		fi
		n=$(grep -c 'Function not implemented' "$MI_TMP/run.err")
		[ "$n" = 1 ] || mi_why_add "$n lines naming ENOSYS, not one"
		grep -q "cannot read (in force from the start) refuses socket" "$MI_TMP/run.err" ||
			mi_why_add "no line naming the filter and the call"
		grep -qE "sampling is off|cannot create" "$MI_TMP/run.err" && mi_why_add "a line of a failure said already"
		mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
	done
fi

# The line naming what the filter turned off goes to the notes file beside
# the snapshot (PATH.log) too: past ulimit -f, its write killed the
# program (SIGXFSZ, exit status 153, its buffered lines lost).
kill_limited() {
	ulimit -f 4 && mi_x "$TARGET" kill
}
if (ulimit -f 4 && head -c 9000 /dev/zero >"$MI_TMP/fsize.probe") 2>/dev/null &&
	[ "$(wc -c <"$MI_TMP/fsize.probe")" -ge 9000 ]; then
	echo "skip  seccomp, notes past ulimit -f: ulimit -f does not limit the file size here"
elif mi_reference_status 3 "seccomp kill" "$TARGET" kill; then
	rm -f "$MI_TMP"/n.*
	head -c 16384 /dev/zero >"$MI_TMP/n.db.log"
	MI_MEMINST="mis,snapshot=$MI_TMP/n.db"
	mi_run_like_reference kill_limited
	unset MI_MEMINST
	[ "$(wc -c <"$MI_TMP/n.db.log")" -eq 16384 ] || mi_why_add "the notes file changed size past the limit"
	mi_verdict "seccomp kill, notes file past ulimit -f" "$why" "$MI_TMP/run.err" stderr
fi
mi_finish
