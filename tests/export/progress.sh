#!/bin/sh
# progress.sh — `inspect html` and `inspect export` show a progress line
# while they read a long trace, on a terminal's stderr only, and erase it:
# under script(1) (a terminal) the line "reading the trace [###…] N%" is
# drawn and ends erased; with stderr not a terminal nothing is written to it;
# the output files are the same either way.  The monotonic clock runs 1000
# times faster (fastclock.c, preloaded), so the bar's one-second delay passes
# on any machine.  Skipped without script(1) or a C compiler.
. "$top_srcdir/tests/integration/lib.sh"

INSPECT=$top_builddir/inspect/inspect
cd "$MI_TMP" || exit 99
CC=${CC:-cc}
if ! command -v script >/dev/null 2>&1 || ! command -v "$CC" >/dev/null 2>&1; then
	echo "skip  progress line: script(1) or a C compiler is missing"
	mi_finish
fi
why=
"$CC" -shared -fPIC -o fastclock.so "$top_srcdir/tests/export/fastclock.c" -ldl 2>cc.err ||
	mi_why_add "cannot build fastclock.so"
"$top_builddir/tests/profile/tracegen" --bench 2000000 big.trace 2>err || mi_why_add "tracegen exited $?"
for cmd in "html -o tty.out big.trace" "export --format folded -o tty.out big.trace"; do
	name=${cmd%% *}
	script -qec "LD_PRELOAD=$MI_TMP/fastclock.so '$INSPECT' $cmd" /dev/null >"$name.tty" 2>&1 ||
		mi_why_add "$name on a terminal exited $?"
	mv tty.out "$name.a"
	LD_PRELOAD=$MI_TMP/fastclock.so "$INSPECT" $(echo "$cmd" | sed 's/tty.out/pipe.out/') >/dev/null 2>"$name.err" ||
		mi_why_add "$name without a terminal exited $?"
	mv pipe.out "$name.b"
	grep -q 'reading the trace \[#*\.*\] *[0-9]*%' "$name.tty" || mi_why_add "$name: no progress line on the terminal"
	# the last thing written is the erasing: a carriage return, blanks, a carriage return
	/usr/bin/python3 -c 'import sys; t = open(sys.argv[1], "rb").read().rstrip(b"\n"); sys.exit(0 if t.endswith(b"\r") and t.rsplit(b"\r", 2)[-2].strip() == b"" else 1)' \
		"$name.tty" || mi_why_add "$name: the progress line is not erased at the end"
	[ -s "$name.err" ] && mi_why_add "$name: stderr not a terminal, yet written to: $(head -c 80 "$name.err")"
	cmp -s "$name.a" "$name.b" || mi_why_add "$name: the output differs with a terminal"
done
mi_verdict "a progress line on a terminal's stderr while reading a trace, erased; none elsewhere" "$why" \
	html.tty "html on a terminal" html.err "html stderr" err stderr cc.err "cc stderr"
mi_finish
