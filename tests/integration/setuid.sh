# setuid.sh — a set-user-ID program under the launcher: the loader runs it
# in secure-execution mode and ignores LD_PRELOAD, and the launcher says so
# (it said "statically linked").  The program's copy is owned by nobody
# with u+s, run by root: AT_SECURE is set (a root-owned setuid program run
# by root gets none).  Skipped when not root, or when the copy cannot get
# the bit (a nosuid mount).  tests/targets/secure_exec.c.
. "$top_srcdir/tests/session/session_lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "skip  $MI_NAME: needs root, to give a copy of the target to another user with u+s"
	exit 77
fi
nobody=$(id -u nobody 2>/dev/null) || { echo "skip  $MI_NAME: no user nobody"; exit 77; }
mkdir -p bin && chmod 755 "$MI_TMP" bin
cp "$MI_TARGETS/secure_exec" bin/secure_exec && chown nobody bin/secure_exec && chmod 4755 bin/secure_exec
case $(bin/secure_exec) in
"secure execution: yes") ;;
*)
	echo "skip  $MI_NAME: the set-user-ID copy does not run in secure-execution mode here (nosuid?)"
	exit 77 ;;
esac

for opts in "" "--mim" "--no-memory --sample=200"; do
	why=
	"$LAUNCH" -f -o sess.db $opts -- "$MI_TMP/bin/secure_exec" >out 2>err
	rc=$?
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	[ "$(cat out)" = "secure execution: yes" ] || mi_why_add "stdout: $(head -c 80 out)"
	grep -q 'set-user-ID program, which the loader runs in secure-execution mode' err ||
		mi_why_add "not said that the loader ignores LD_PRELOAD for a set-user-ID program"
	grep -q 'statically linked' err && mi_why_add "called statically linked"
	mi_verdict "set-user-ID program, meminst ${opts:-(defaults)}" "$why" err stderr
done

# the same program without the bit is instrumented: no such line
cp "$MI_TARGETS/secure_exec" bin/plain
"$LAUNCH" -f -o sess.db -- "$MI_TMP/bin/plain" >out 2>err
why=
grep -q 'secure-execution' err && mi_why_add "said of a plain program"
mi_verdict "a plain copy is not called set-user-ID" "$why" err stderr
mi_finish
