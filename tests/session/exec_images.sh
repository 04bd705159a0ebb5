#!/bin/sh
# exec_images.sh — a process that executes another program keeps its pid,
# and the new program's trace file had the same name (trace.%p): it was
# made again, and everything the first program measured was lost without
# a word (a program that computed 0.2 s and then ran echo showed echo's
# 17 samples).  Now each program of the process writes its own trace
# (PATH, then PATH.exec1, PATH.exec2 ...), the session keeps each as an
# image of the pid, and the readers take the one that did the most.
# Checked, with tests/session/exec_images (spin_before_exec, then exec):
#   - launcher, sampled then echo: analyse, its --json, report and the
#     folded export show spin_before_exec; two images of the pid;
#     --image 1 reads echo's, --image 2 is one line and status 1;
#   - launcher, exact tracing then echo (not built for tracing): the
#     one call of spin_before_exec is read;
#   - a shell whose exec chain runs sh, then exec_images: three images of
#     the program's pid, analyse shows spin_before_exec, and the process
#     is named by its last program (it was the alphabetically first);
#   - the preload alone: t.PID and t.PID.exec1, each with its program
#     (--image is for sessions: one line, status 2);
#     a rerun with a fixed name replaces the file (no .exec1 of a rerun).
. "$top_srcdir/tests/session/session_lib.sh"
PROG=$top_builddir/tests/session/exec_images
SPIN=400000000 # about 0.4 s of CPU: a few hundred samples at 1000 Hz, echo has tens

q() { "$INSPECT" sql "$1" "$2" 2>>sql.err | tail -n 1 | tr -dc '0-9'; }
# has FILE WHAT: FILE names spin_before_exec, else why says WHAT
has() {
	grep -q spin_before_exec "$1" || mi_why_add "$2 without spin_before_exec"
}

# sampled, then echo
mi_reference "exec_images then echo" "$PROG" $SPIN echo done || mi_finish
mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q --sample=1000 -o s.db -- "$PROG" $SPIN echo done
mi_no_complaint "$MI_TMP/run.err"
n=$(q s.db "SELECT count(DISTINCT image) FROM session_trace WHERE pid = (SELECT pid FROM session_run)")
[ "$n" = 2 ] || mi_why_add "${n:-no} images of the program's pid, not 2"
"$INSPECT" analyse s.db >an.txt 2>>err || mi_why_add "analyse exited $?"
has an.txt "analyse"
"$INSPECT" analyse --json s.db >an.json 2>>err || mi_why_add "analyse --json exited $?"
has an.json "analyse --json"
"$INSPECT" report s.db >report.txt 2>>err || mi_why_add "report exited $?"
has report.txt "report"
"$INSPECT" export --format folded -o s.folded s.db 2>>err || mi_why_add "export folded exited $?"
has s.folded "the folded export"
# --image N: the other program; a number it does not have, one line
"$INSPECT" analyse --image 1 s.db >an1.txt 2>>err || mi_why_add "analyse --image 1 exited $?"
head -n 1 an1.txt | grep -q 'echo$' || mi_why_add "analyse --image 1 is not echo's: $(head -n 1 an1.txt)"
"$INSPECT" analyse --image 2 s.db >bad.out 2>bad.err
rc=$?
[ $rc = 1 ] && [ ! -s bad.out ] && [ "$(wc -l <bad.err)" = 1 ] && grep -q 'ran 2 programs' bad.err ||
	mi_why_add "analyse --image 2: exit $rc, $(head -n 1 bad.err)"
mi_verdict "launcher --sample, a program that computes then execs echo" "$why" an.txt analyse \
	"$MI_TMP/run.err" stderr err "inspect's stderr" sql.err "inspect sql"

# exact tracing, then a program not built for it
mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q --trace -o t.db -- "$PROG" $SPIN echo done
mi_no_complaint "$MI_TMP/run.err"
"$INSPECT" analyse --json t.db >t.json 2>>err || mi_why_add "analyse exited $?"
grep -q '"name":"spin_before_exec","file":"[^"]*","line":[0-9]*,"calls":1,' t.json ||
	mi_why_add "analyse --json without the one call of spin_before_exec"
mi_verdict "launcher --trace, a traced program that execs echo" "$why" t.json "analyse --json" \
	"$MI_TMP/run.err" stderr err "inspect's stderr"

# a shell's exec chain: sh, then sh, then exec_images (and a child before)
cat >chain.sh <<SCRIPT
"$PROG" 1000 >/dev/null
exec sh -c 'exec "$PROG" $SPIN'
SCRIPT
mi_reference "a shell's exec chain" sh chain.sh || mi_finish
mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q --sample=1000 -o c.db -- sh chain.sh
mi_no_complaint "$MI_TMP/run.err"
n=$(q c.db "SELECT count(DISTINCT image) FROM session_trace WHERE pid = (SELECT pid FROM session_run)")
[ "$n" = 3 ] || mi_why_add "${n:-no} images of the program's pid, not 3 (sh, sh, exec_images)"
n=$(q c.db "SELECT count(*) FROM session_process WHERE pid = (SELECT pid FROM session_run) AND exe LIKE '%exec_images'")
[ "$n" = 1 ] || mi_why_add "the program's process is not named by its last program, exec_images"
"$INSPECT" analyse c.db >c.txt 2>>err || mi_why_add "analyse exited $?"
has c.txt "analyse"
mi_verdict "launcher --sample, sh; exec sh -c 'exec exec_images'" "$why" c.txt analyse \
	"$MI_TMP/run.err" stderr err "inspect's stderr" sql.err "inspect sql"

# the preload alone: a file per program; a rerun under a fixed name is no exec
rm -f t.*
MI_MEMINST="off,sample=1000,trace_file=$MI_TMP/t.%p"
mi_reference "exec_images then echo" "$PROG" $SPIN echo done
mi_run_like_reference mi_x "$PROG" $SPIN echo done
mi_no_complaint "$MI_TMP/run.err"
first=$(ls t.* 2>/dev/null | grep -v exec | head -n 1)
[ -n "$first" ] && [ -f "$first.exec1" ] || mi_why_add "files $(ls t.* 2>/dev/null | tr '\n' ' '), not t.PID and t.PID.exec1"
"$INSPECT" analyse "$first" >p.txt 2>>err || mi_why_add "analyse $first exited $?"
has p.txt "analyse of t.PID"
# (the PROCESS record names the program; echo may end before its first sample)
grep -qa 'bin/echo' "$first.exec1" 2>/dev/null || mi_why_add "t.PID.exec1 does not name echo"
grep -qa 'bin/echo' "$first" && mi_why_add "t.PID names echo"
"$INSPECT" analyse --image 0 "$first" >/dev/null 2>bad.err
rc=$?
[ $rc = 2 ] && [ "$(wc -l <bad.err)" = 1 ] || mi_why_add "--image on a trace file: exit $rc, $(head -n 1 bad.err)"
MI_MEMINST="off,sample=1000,trace_file=$MI_TMP/fixed.trace"
for i in 1 2; do
	mi_x "$PROG" 1000 >/dev/null 2>>"$MI_TMP/run.err"
done
unset MI_MEMINST
[ -f fixed.trace ] && [ ! -e fixed.trace.exec1 ] || mi_why_add "a rerun: $(ls fixed.* 2>/dev/null | tr '\n' ' ')"
mi_verdict "preload, trace_file=t.%p" "$why" p.txt analyse "$MI_TMP/run.err" stderr err "inspect's stderr"
mi_finish
