#!/bin/sh
# live_fn.sh — "still live at exit" names the traced function that
# allocated the blocks (issue 13): tests/session/live_fn, run under
# `meminst --mim --trace=cpu` (mim's <alloc> records carry each block's
# allocation number, the exit snapshot the same number per live block).
# make_block (not traced) is one site reached from keep_a (20 blocks
# kept), keep_b (10 kept) and reuse_c (one block freed before keep_b
# allocates: its address is likely reused, and must not count); a thread
# keeps 5 blocks of in_thread's.  Checked in inspect report (JSON and
# text), inspect html and top --live-at-exit; exact counts.  Without mim (--mis) there is no
# block map and no such column.
. "$top_srcdir/tests/session/session_lib.sh"

PROG=$top_builddir/tests/session/live_fn

why=
"$LAUNCH" -q --mim --trace=cpu -o s.db -- "$PROG" >out 2>err ||
	mi_why_add "meminst exited $?"
"$INSPECT" report --json s.db >r.json 2>>err || mi_why_add "report --json exited $?"
/usr/bin/python3 - r.json <<'PY' >check.out 2>&1 || mi_why_add "$(tail -n 1 check.out)"
import json, sys
rows = json.load(open(sys.argv[1]))["live_at_exit"]
def row(fn, blocks):
    got = [r for r in rows if r["name"].split("+")[0].split(".")[0] == fn and r["blocks"] == blocks]
    assert len(got) == 1, "no row of %d blocks at %s's site: %r" % (blocks, fn, rows)
    return got[0]
r = row("make_block", 30)
assert r["function"] == "keep_a" and r["functions"] == 2, "make_block's site: %r" % r
r = row("in_thread", 5)
assert r["function"] == "in_thread" and r["functions"] == 1, "in_thread's site: %r" % r
PY
mi_verdict "report: live at exit, the function that allocated them (mim, trace=cpu)" "$why" check.out check \
	err stderr

why=
"$INSPECT" report s.db >r.txt 2>err || mi_why_add "text report exited $?"
grep -q "allocated in" r.txt || mi_why_add "no 'allocated in' column"
grep -q "make_block[.a-z0-9]*+0x[0-9a-f]* (live_fn) .* keep_a and 1 more" r.txt || mi_why_add "no 'keep_a and 1 more'"
"$INSPECT" html -o p.html s.db 2>>err || mi_why_add "html exited $?"
grep -q "<th>allocated in</th>" p.html || mi_why_add "html: no 'allocated in' column"
grep -q ">keep_a and 1 more</td>" p.html || mi_why_add "html: no 'keep_a and 1 more'"
mi_verdict "report text and html: allocated in" "$why" r.txt text err stderr

why=
"$INSPECT" top --live-at-exit --csv s.db >top.csv 2>err || mi_why_add "top --live-at-exit exited $?"
grep -q '^[0-9]*,3000,[0-9.]*,30,"*make_block[^,]*,.*,keep_a,2$' top.csv || mi_why_add "top: make_block's row"
grep -q '^[0-9]*,1500,[0-9.]*,5,"*in_thread[^,]*,.*,in_thread,1$' top.csv || mi_why_add "top: in_thread's row"
"$INSPECT" top --live-at-exit --by class --csv s.db >class.csv 2>>err || mi_why_add "top --by class exited $?"
! grep -q 'keep_a' class.csv || mi_why_add "top --by class: functions of classes"
mi_verdict "top --live-at-exit: allocated in" "$why" top.csv csv class.csv class err stderr

why=
"$LAUNCH" -q --mis --trace=cpu -o mis.db -- "$PROG" >out 2>err ||
	mi_why_add "meminst --mis exited $?"
"$INSPECT" report mis.db >m.txt 2>>err || mi_why_add "report exited $?"
grep -q "^still live at exit" m.txt || mi_why_add "no live-at-exit section with mis"
! grep -q "allocated in" m.txt || mi_why_add "an 'allocated in' column without a block map"
mi_verdict "report with mis: no function column" "$why" m.txt text err stderr
mi_finish
