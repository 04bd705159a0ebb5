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
# No answer hides the other program: report, analyse, profile and html say
# in one line which image is shown (its number and program), the other
# with what it did, and --image K; the JSON of report and analyse has the
# table "images" (program, samples, calls, cut, shown); pprof has the line
# as a comment, callgrind among its header's comments, chrome in
# otherData, folded on stderr.  With echo's trace cut (its last bytes
# taken off in a copy of the session), the line and the table say so.
# --image 2 (report, html), -1 and x: one line, status 1 or 2, no output.
# The shell's chain: the table lists its three programs, and the two of
# its child (sh -c 'exec exec_images').
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

# the other program said by every answer: LINE is the line of s.db's
why=
LINE='^process [0-9]* ran 2 programs; shown: image 0 (exec_images; default: most samples, else longest); 1 other: image 1 (echo: [0-9]* samples); --image K shows image K$'
ROW='"pid": [0-9]*, "image": %s, "program": "[^"]*%s", "samples": [0-9]*, "calls": [0-9]*, "cut": %s, "shown": %s'
# rows FILE WHAT IMAGE PROGRAM CUT SHOWN: FILE has that row of "images"
rows() {
	grep -q "$(printf "$ROW" "$3" "$4" "$5" "$6")" "$1" || mi_why_add "$2 without the row of image $3 ($4, cut $5, shown $6)"
}
grep -q "$LINE" report.txt || mi_why_add "report without the line on the images"
"$INSPECT" report --json s.db >report.json 2>>err || mi_why_add "report --json exited $?"
rows report.json "report --json" 0 exec_images false true
rows report.json "report --json" 1 echo false false
sed -n 2p an.txt | grep -q "$LINE" || mi_why_add "analyse: line 2 is not the line on the images: $(sed -n 2p an.txt)"
rows an.json "analyse --json" 0 exec_images false true
rows an.json "analyse --json" 1 echo false false
grep -q '^process [0-9]* ran 2 programs; shown: image 1 (echo; --image); 1 other: image 0 (exec_images: [0-9]* samples)' an1.txt ||
	mi_why_add "analyse --image 1 without the line naming exec_images as the other"
"$INSPECT" profile s.db >prof.txt 2>>err || mi_why_add "profile exited $?"
grep -q "$LINE" prof.txt || mi_why_add "profile without the line on the images"
"$INSPECT" export --format folded -o x.folded s.db 2>fold.err || mi_why_add "export folded exited $?"
[ "$(wc -l <fold.err)" = 1 ] && sed 's/^inspect: s.db: //' fold.err | grep -q "$LINE" ||
	mi_why_add "the folded export did not say the line once on stderr: $(head -n 1 fold.err)"
"$INSPECT" export --format callgrind -o x.cg s.db 2>>err || mi_why_add "export callgrind exited $?"
sed -n 's/^# //p' x.cg | grep -q "$LINE" || mi_why_add "callgrind's header without the line"
"$INSPECT" export --format chrome -o x.json s.db 2>>err || mi_why_add "export chrome exited $?"
grep -q '"otherData":{.*"images": \[' x.json && rows x.json "chrome's otherData" 1 echo false false ||
	mi_why_add "chrome's otherData without the images"
"$INSPECT" export --format pprof -o x.pb.gz s.db 2>>err || mi_why_add "export pprof exited $?"
gzip -dc x.pb.gz | tr -c '[:print:]' '\n' | grep -q "${LINE#^}" || mi_why_add "pprof without the line as a comment"
"$INSPECT" html -o x.html s.db 2>>err || mi_why_add "html exited $?"
sed -n 's/.*<p class="note" id="images">\([^<]*\)<.*/\1/p' x.html | grep -q "$LINE" ||
	mi_why_add "html's header without the line"
mi_verdict "the other program said by report, analyse, profile, html and the exports" "$why" report.txt report \
	an.txt analyse fold.err "folded's stderr" err "inspect's stderr"

# echo's trace cut (its last bytes gone): said in the line and the table
why=
if command -v sqlite3 >/dev/null; then
	cp s.db cut.db
	sqlite3 cut.db "UPDATE session_trace SET data = substr(data, 1, length(data) - 64) WHERE image = 1 AND
		seq = (SELECT max(seq) FROM session_trace WHERE image = 1)" 2>>sql.err || mi_why_add "sqlite3 failed"
	"$INSPECT" report cut.db >cut.txt 2>>err || mi_why_add "report exited $?"
	grep -q '^process [0-9]* ran 2 programs; .*; 1 other: image 1 (echo: [0-9]* samples, its trace cut); --image K' cut.txt ||
		mi_why_add "report's line does not say echo's trace was cut"
	"$INSPECT" report --json cut.db >cut.json 2>>err || mi_why_add "report --json exited $?"
	rows cut.json "report --json" 1 echo true false
	mi_verdict "another image's cut trace said" "$why" cut.txt report err "inspect's stderr" sql.err sqlite3
else
	echo "skip  another image's cut trace said: sqlite3 is not installed"
fi

# bad --image: one line, the status, nothing else
why=
# bad EXIT WHAT ARGS...: inspect ARGS exits EXIT with one line and no output
bad() {
	want=$1 what=$2
	shift 2
	rm -f bad.html
	"$INSPECT" "$@" >bad.out 2>bad.err
	rc=$?
	[ $rc = "$want" ] && [ ! -s bad.out ] && [ ! -e bad.html ] && [ "$(wc -l <bad.err)" = 1 ] ||
		mi_why_add "$what: exit $rc (not $want), $(wc -l <bad.err) lines: $(head -n 1 bad.err)"
}
bad 1 "report --image 2" report --image 2 s.db
grep -q 'ran 2 programs: --image 2 is not one of them (0 to 1)' bad.err || mi_why_add "report --image 2: $(cat bad.err)"
bad 1 "html --image 2" html --image 2 -o bad.html s.db
bad 1 "export --image 2" export --format folded --image 2 s.db
bad 2 "report --image -1" report --image -1 s.db
bad 2 "analyse --image x" analyse --image x s.db
bad 2 "html --image x" html --image x -o bad.html s.db
mi_verdict "--image 2 of two images, -1, x: one line" "$why" bad.err stderr

# exact tracing, then a program not built for it
mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q --trace -o t.db -- "$PROG" $SPIN echo done
mi_no_complaint "$MI_TMP/run.err"
"$INSPECT" analyse --json t.db >t.json 2>>err || mi_why_add "analyse exited $?"
grep -q '"name":"spin_before_exec","file":"[^"]*","line":[0-9]*,"calls":1,' t.json ||
	mi_why_add "analyse --json without the one call of spin_before_exec"
mi_verdict "launcher --trace, a traced program that execs echo" "$why" t.json "analyse --json" \
	"$MI_TMP/run.err" stderr err "inspect's stderr"

# a shell's exec chain: sh, then sh, then exec_images (and a child before,
# sh then exec_images)
cat >chain.sh <<SCRIPT
sh -c 'exec "$PROG" 1000' >/dev/null
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
"$INSPECT" report --json c.db >c.json 2>>err || mi_why_add "report --json exited $?"
SHN=$(basename "$(readlink -f "$(command -v sh)")") # dash, bash ...: what the trace names
rows c.json "report --json" 0 "$SHN" false false
rows c.json "report --json" 1 "$SHN" false false
rows c.json "report --json" 2 exec_images false true
n=$(grep -c '"pid": [0-9]*, "image": [0-9]*, "program"' c.json)
[ "$n" = 5 ] || mi_why_add "report --json: $n rows of images, not 5 (the program's 3, the child's sh and exec_images)"
grep -q "^process [0-9]* ran 3 programs; shown: image 2 (exec_images; .*); 2 others: image 0 ($SHN: .*), image 1 ($SHN: " c.txt ||
	mi_why_add "analyse without the line on the shell's programs"
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
