#!/bin/sh
# unshare.sh — a program that enters a user namespace of its own
# (tests/targets/unshare_user.c; `unshare -r`, rootless sandboxes) ends as
# it does without meminst.  unshare(CLONE_NEWUSER) needs a process of one
# thread: with meminst's snapshot service thread (the launcher's default)
# or the wall-clock sampler beside the program, the kernel said EINVAL and
# the program failed ("unshare: unshare failed: Invalid argument").  The
# call is now made again with meminst's threads ended, and they start
# again: interval snapshots of the process go on after the call.  So is
# syscall(SYS_unshare, ...) through libc's syscall() (it was not).
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/unshare_user
LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
export MEMINST_LIBRARY="$MEMINST_LIB"

# the plain run must enter the namespace, or there is nothing to compare
if ! mi_reference_status 3 "unshare_user" "$TARGET" ||
	! grep -q '^unshare(CLONE_NEWUSER): 0 ' "$MI_TMP/ref.out"; then
	echo "skip  $MI_NAME: user namespaces are not allowed here"
	exit 77
fi

for opts in "" "--mim --interval 10ms" "--sample-clock wall" "--mim --control" "--dormant" syscall; do
	label="launcher ${opts:-(defaults)}"
	way= # syscall: syscall(SYS_unshare, ...), with the defaults
	[ "$opts" = syscall ] && way=syscall opts= label="launcher, syscall(SYS_unshare)"
	rm -f "$MI_TMP/s.db"
	mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q $opts -o "$MI_TMP/s.db" -- "$TARGET" $way
	mi_no_complaint "$MI_TMP/run.err"
	case $opts in *interval*)
		n=$("$INSPECT" list --csv "$MI_TMP/s.db" 2>/dev/null | grep -c ',interval,')
		[ "$n" -ge 5 ] || mi_why_add "$n interval snapshots, not 5 or more: the service did not start again" ;;
	esac
	mi_verdict "$label" "$why" "$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr
done

# the preload alone, the `unshare -r` program
for set in "mis,snapshot=$MI_TMP/p.%p.db,snapshot_at=exit+peak+signal,interval=10ms" \
	"mim,snapshot=$MI_TMP/p.%p.db,control=on,sample=100,sample_clock=wall,trace_file=$MI_TMP/t.%p.trace"; do
	label="preload $(echo "$set" | sed "s|$MI_TMP/||g")"
	MI_MEMINST=$set
	mi_run_like_reference mi_x "$TARGET"
	unset MI_MEMINST
	mi_no_complaint "$MI_TMP/run.err"
	mi_verdict "$label" "$why" "$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr
done
if command -v unshare >/dev/null && unshare -r true 2>/dev/null; then
	(unset MI_MEMINST; unshare -r sh -c 'id -u; exit 4') >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err"
	mi_ref_rc=$?
	mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q -f -o "$MI_TMP/u.db" -- unshare -r sh -c 'id -u; exit 4'
	cmp -s "$MI_TMP/ref.err" "$MI_TMP/run.err" || mi_why_add "stderr differs"
	mi_verdict "launcher unshare -r sh" "$why" "$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr
fi
mi_finish
