# session.sh — `inspect analyse` and `inspect profile` read the trace a
# session database keeps (meminst --sample), --pid chooses the process.
. "$top_srcdir/tests/sample/sample_lib.sh"
M=$top_builddir/session/meminst
[ -x "$M" ] || { echo "skip  $MI_NAME: no meminst"; exit 77; }

l=session
(cd "$MI_TMP" && MEMINST_LIBRARY=$top_builddir/alloc/.libs/libmeminst.so \
	"$M" --sample=1000 -o s.db -- "$ST_TARGET" split 600) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
rc=$?
why=
[ $rc -eq 0 ] || mi_why_add "meminst: exit status $rc"
"$ST_INSPECT" analyse --json "$MI_TMP/s.db" >"$MI_TMP/$l.json" 2>>"$MI_TMP/$l.err" ||
	mi_why_add "inspect analyse s.db failed"
big=$(st_j $l "round(fn('burn_big').get('cum_percent', 0))")
st_within "${big:-0}" 75 10 || mi_why_add "burn_big has ${big:-no}% of the samples, not 75 +/- 10"
[ "$(st_j $l "j['style']")" = flat ] || mi_why_add "not the flat style by default"
pid=$(st_j $l "j['pid']")
"$ST_INSPECT" analyse --style tree --pid "$pid" "$MI_TMP/s.db" >"$MI_TMP/$l.tree" 2>>"$MI_TMP/$l.err" ||
	mi_why_add "inspect analyse --pid $pid failed"
grep -q burn_small "$MI_TMP/$l.tree" || mi_why_add "no burn_small in the tree"
"$ST_INSPECT" analyse --pid 1 "$MI_TMP/s.db" >/dev/null 2>"$MI_TMP/$l.nopid"
# (it said "no trace of that process in this session (run meminst with
# --trace or --sample)", to a session traced with --sample)
[ $? -eq 1 ] && grep -q 'no process 1 in this session (inspect report lists' "$MI_TMP/$l.nopid" &&
	! grep -q 'run meminst with' "$MI_TMP/$l.nopid" ||
	mi_why_add "--pid of another process: not one line naming it and exit status 1"
"$ST_INSPECT" profile "$MI_TMP/s.db" >"$MI_TMP/$l.prof" 2>>"$MI_TMP/$l.err" ||
	mi_why_add "inspect profile s.db failed"
st_verdict "$l: analyse and profile read the session's trace (burn_big ${big:-?}%)"

# a sampled process with no sample (a shell that ran for no CPU time): one
# line and exit status 1, not an empty fprof profile of a "wall clock" trace
l=nosample
(cd "$MI_TMP" && MEMINST_LIBRARY=$top_builddir/alloc/.libs/libmeminst.so \
	"$M" -q --sample=10 -o n.db -- sh -c ':') >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
why=
for style in "" "--style=tree"; do
	"$ST_INSPECT" analyse $style "$MI_TMP/n.db" >"$MI_TMP/$l.an" 2>"$MI_TMP/$l.an.err"
	rc=$?
	[ $rc -eq 1 ] || mi_why_add "analyse $style: exit status $rc, not 1"
	[ "$(wc -l <"$MI_TMP/$l.an.err")" = 1 ] && grep -q 'no samples of process' "$MI_TMP/$l.an.err" ||
		mi_why_add "analyse $style: not one line 'no samples of process'"
	[ -s "$MI_TMP/$l.an" ] && mi_why_add "analyse $style: something on stdout"
done
"$ST_INSPECT" report "$MI_TMP/n.db" >/dev/null 2>"$MI_TMP/$l.an.err" || mi_why_add "report: exit status $?"
grep -q 'no samples of process' "$MI_TMP/$l.an.err" || mi_why_add "report: no line 'no samples of process'"
st_verdict "$l: a sampled process without samples is said in one line"

# the program's name is the trace's data: its control characters are
# escaped in the headers of every style, never sent to the terminal
l=escape
esc=$(printf '\033')
cp "$ST_TARGET" "$MI_TMP/t${esc}[31mX"
(cd "$MI_TMP" && MEMINST_LIBRARY=$top_builddir/alloc/.libs/libmeminst.so \
	"$M" -q --sample=1000 -o e.db -- "./t${esc}[31mX" split 100) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
why=
for style in flat fprof; do
	"$ST_INSPECT" analyse --style=$style "$MI_TMP/e.db" >"$MI_TMP/$l.an" 2>>"$MI_TMP/$l.err" ||
		mi_why_add "analyse --style=$style failed"
	grep -q "$esc" "$MI_TMP/$l.an" && mi_why_add "--style=$style: an escape character in the output"
	grep -q 't\\x1b\[31mX' "$MI_TMP/$l.an" || mi_why_add "--style=$style: the name not shown escaped"
done
st_verdict "$l: a program name's control characters are escaped"

# A process that execs a program without the library (env -i: no
# LD_PRELOAD; a static binary, a set-user-ID program) after a failed exec:
# its trace is whole, the samples after the failed exec read.  The
# launcher said, with -q too, "the trace of process N is cut ... a write
# failed, the process was killed ...": nothing had ended the trace.
l=exec_bare
(cd "$MI_TMP" && MEMINST_LIBRARY=$top_builddir/alloc/.libs/libmeminst.so \
	"$M" -q --sample=1000 -o x.db -- /usr/bin/python3 -c '
import os, time
try:
    os.execv("/nonexistent/program", ["x"])
except OSError:
    pass
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
os.execve("/usr/bin/env", ["env"], {})') >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err"
rc=$?
why=
[ $rc -eq 0 ] || mi_why_add "meminst: exit status $rc"
[ -s "$MI_TMP/$l.out" ] && mi_why_add "env printed an environment: $(head -c 100 "$MI_TMP/$l.out")"
mi_no_complaint "$MI_TMP/$l.err"
"$ST_INSPECT" analyse --json "$MI_TMP/x.db" >"$MI_TMP/$l.json" 2>>"$MI_TMP/$l.err" ||
	mi_why_add "inspect analyse x.db failed"
n=$(st_j $l "j.get('samples', 0)")
[ "${n:-0}" -ge 30 ] || mi_why_add "${n:-no} samples, not 30 or more (0.3 s at 1000 Hz after the failed exec)"
st_verdict "$l: an exec into a program without the library leaves the trace whole"
mi_finish
