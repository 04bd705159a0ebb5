# progress.sh — the launcher's progress line on a terminal (script(1) gives
# it one): with TERM=xterm the line is drawn and erased (ESC [K) before the
# closing line; with TERM=dumb or no TERM (an editor's shell buffer) no
# escape sequence is written at all, and the closing line is the same.
. "$top_srcdir/tests/session/session_lib.sh"

command -v script >/dev/null 2>&1 || { echo "skip  script(1) is not installed (apt-get install bsdutils)"; exit 77; }
esc=$(printf '\033')
for term in xterm dumb none; do
	rm -f p.db
	if [ $term = none ]; then
		env -u TERM script -qec "$LAUNCH -o p.db -- true" /dev/null >out 2>&1
	else
		TERM=$term script -qec "$LAUNCH -o p.db -- true" /dev/null >out 2>&1
	fi
	rc=$?
	why=
	[ $rc -eq 0 ] || mi_why_add "exit status $rc"
	grep -q "meminst: p.db: 1 process" out || mi_why_add "no closing line"
	if [ $term = xterm ]; then
		grep -q "$esc\\[K" out || mi_why_add "no progress line drawn"
	elif grep -q "$esc" out; then
		mi_why_add "escape sequences written: $(grep "$esc" out | od -c | head -2 | tr -s ' ' | tr '\n' ' ')"
	fi
	mi_verdict "TERM=$term: progress line only where it can be erased" "$why" out output
done
mi_finish
