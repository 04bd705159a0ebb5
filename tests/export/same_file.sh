# same_file.sh — an output that is the input: `inspect export -o S S` (each
# format), `inspect html S -o S`, `inspect analyse S -o S` on a session,
# and the same on a trace file, by the same name and through a symbolic
# link.  Each is refused with one line on stderr and exit status 2, and the
# file is unchanged (they wrote the export over it: a session destroyed by
# a typo).
. "$top_srcdir/tests/session/session_lib.sh"

ss_known s.db --mim --trace=wall
env LD_PRELOAD="$MEMINST_LIB" MEMINST=trace=wall,trace_file=t.trace "$KNOWN" >/dev/null 2>&1
ln -s s.db link.db
sum0=$(cksum <s.db) tsum0=$(cksum <t.trace)
refused() { # LABEL FILE COMMAND...
	label=$1 file=$2
	shift 2
	"$INSPECT" "$@" >cmd.out 2>cmd.err
	rc=$?
	why=
	[ $rc -eq 2 ] || mi_why_add "exit status $rc, expected 2"
	[ "$(wc -l <cmd.err)" -eq 1 ] && grep -q 'is the file being read' cmd.err ||
		mi_why_add "not one line saying so"
	case $file in
	t.trace) [ "$(cksum <t.trace)" = "$tsum0" ] || mi_why_add "the trace was changed" ;;
	*) [ "$(cksum <s.db)" = "$sum0" ] || mi_why_add "the session was changed" ;;
	esac
	mi_verdict "$label: refused, the input unchanged" "$why" cmd.err stderr
}
for f in callgrind folded chrome pprof; do
	refused "export --format $f -o s.db s.db" s.db export --format "$f" -o s.db s.db
done
refused "export through a link: -o link.db s.db" s.db export --format folded -o link.db s.db
refused "html s.db -o s.db" s.db html s.db -o s.db
refused "html s.db -o link.db" s.db html s.db -o link.db
refused "analyse s.db -o s.db" s.db analyse s.db -o s.db
refused "export -o t.trace t.trace" t.trace export --format callgrind -o t.trace t.trace
refused "analyse t.trace -o t.trace" t.trace analyse t.trace -o t.trace
# a new file and standard output still work
"$INSPECT" export --format folded -o new.folded s.db 2>e.err && [ -s new.folded ] &&
	"$INSPECT" export --format folded -o - s.db >stdout.folded 2>>e.err && cmp -s new.folded stdout.folded &&
	mi_ok "export to a new file and to standard output" ||
	mi_fail "export to a new file and to standard output" "no output" e.err stderr
mi_finish
