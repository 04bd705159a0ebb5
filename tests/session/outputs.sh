# outputs.sh — the files inspect and meminst write, when the path is taken
# or the write fails:
#   - analyse -o, export -o (every format), html -o and profile --dump
#     refuse a file that holds something (status 2, one line, the file as it
#     was) and replace it with -f; an empty file and /dev/null are written;
#   - past the file size limit (ulimit -f) each says it could not write
#     (status 3, one line) and leaves no cut file, the old one kept with -f
#     (SIGXFSZ killed inspect, status 153, leaving the cut file);
#   - meminst past the limit keeps the program's exit status and says
#     where the run's data is (SIGXFSZ killed the launcher: status 153).
. "$top_srcdir/tests/session/session_lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

"$LAUNCH" -q --mim --trace -o s.db -- "$KNOWN" >/dev/null 2>&1 ||
	{ echo "FAIL  the session could not be made"; exit 1; }

# limited CMD...: CMD with a file size limit of 0, its stderr to err and
# its status to rc (stderr through a pipe: a file would be limited too)
limited() {
	{ (ulimit -f 0; exec "$@" 2>&1 >/dev/null); echo "status $?"; } | cat >err.all
	rc=$(sed -n 's/^status //p' err.all)
	grep -v '^status ' err.all >err
}

# ones LABEL WANT-RC TEXT: the last command's status and its one line
ones() {
	snap_expect "$1: exit status" "$rc" "$2"
	snap_expect "$1: lines on stderr" "$(wc -l <err)" 1
	grep -q -F -- "$3" err || mi_why_add "$1: no \"$3\" on stderr"
}

writers="analyse|export --format callgrind|export --format folded|export --format chrome|export --format pprof|html|profile --dump"
old_ifs=$IFS
IFS='|'
for w in $writers; do
	IFS=$old_ifs
	why=
	# shellcheck disable=SC2086
	set -- $w
	[ "$w" = "profile --dump" ] && o=--dump && shift 2 && set -- profile || o=-o
	echo precious >kept
	"$INSPECT" "$@" "$o" kept s.db >/dev/null 2>err
	rc=$?
	ones "an existing file" 2 "kept exists; give another -o FILE, or -f"
	snap_expect "the existing file" "$(cat kept)" precious
	"$INSPECT" "$@" -f "$o" kept s.db >/dev/null 2>err
	snap_expect "with -f: exit status" $? 0
	echo precious | cmp -s - kept && mi_why_add "-f did not replace the file"
	: >empty
	"$INSPECT" "$@" "$o" empty s.db >/dev/null 2>>err
	snap_expect "an empty file: exit status" $? 0
	[ -s empty ] || mi_why_add "the empty file was not written"
	"$INSPECT" "$@" "$o" /dev/null s.db >/dev/null 2>>err
	snap_expect "/dev/null: exit status" $? 0
	mi_verdict "$w: an existing file refused, replaced with -f" "$why" err stderr

	why=
	rm -f new new.* kept.*
	limited "$INSPECT" "$@" "$o" new s.db
	ones "past ulimit -f" 3 "new: cannot write: File too large"
	ls new new.* >/dev/null 2>&1 && mi_why_add "a cut file was left: $(ls new new.* 2>/dev/null | head -n 1)"
	echo precious >kept
	limited "$INSPECT" "$@" -f "$o" kept s.db
	ones "past ulimit -f with -f" 3 "kept: cannot write: File too large"
	snap_expect "the file -f would have replaced" "$(cat kept)" precious
	ls kept.* >/dev/null 2>&1 && mi_why_add "a new file was left beside it: $(ls kept.* | head -n 1)"
	mi_verdict "$w: past the file size limit, one line and no cut file" "$why" err stderr
	IFS='|'
done
IFS=$old_ifs

why=
# stderr through a pipe, as limited() does: a file would be limited too
{ (ulimit -f 4; exec "$LAUNCH" -q --mim -o big.db -- "$KNOWN" 2>&1 >/dev/null); echo "status $?"; } | cat >err.all
rc=$(sed -n 's/^status //p' err.all)
grep -v '^status ' err.all >err
snap_expect "meminst past ulimit -f: exit status (the program's)" "$rc" 0
grep -q "the run's data is kept in" err || mi_why_add "no word of where the run's data is"
[ -e big.db ] && mi_why_add "a session was written past the limit"
ls big.db.* >/dev/null 2>&1 && mi_why_add "a cut session was left: $(ls big.db.* | head -n 1)"
mi_verdict "meminst past the file size limit: the program's exit status" "$why" err stderr
rm -rf .meminst-parts.*

why=
# a store failing every 10 ms the same way is said once, and its count at exit
{ (ulimit -f 4; MEMINST="mis,snapshot=$MI_TMP/often.db,interval=10ms,interval_content=status" \
	LD_PRELOAD="$MEMINST_LIB" exec /bin/sleep 0.5 2>&1 >/dev/null); echo "status $?"; } | cat >err.all
rc=$(sed -n 's/^status //p' err.all)
grep -v '^status ' err.all >err
snap_expect "stores failing past ulimit -f: exit status (sleep's)" "$rc" 0
n=$(grep -c "often.db: cannot write" err)
[ "$n" = 2 ] || mi_why_add "$n lines of the failure, expected 2 (the first one, the exit's)"
grep -q "often.db: cannot write.* ([0-9]* earlier stores failed the same way)$" err ||
	mi_why_add "the exit's line does not count the failures not said"
mi_verdict "a store failing the same way again and again is said once" "$why" err stderr

mi_finish
