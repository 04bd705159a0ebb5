# fd_reuse.sh — meminst writes only to the descriptors it opened: a
# program that dup2s its data file over 3..1023 (meminst's copy of stderr
# among them) keeps its data file as it wrote it (13 bytes; meminst's
# print= tables were appended to it: 305).  With stderr left alone the
# tables still reach it; with the data file over stderr too, the tables are
# not written, and the line saying so goes to the notes beside the
# snapshot (PATH.log), never into the file.  tests/targets/fd_reuse.c.
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/fd_reuse
for backend in $MEMINST_BACKENDS; do
	for set in "mis,print=types" "mim,print=total+types+classes" \
		"mim,print=types,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+signal,control=on"; do
		for how in keep stderr; do
			label="$(echo "$set" | sed "s|$MI_TMP/||g")/$backend, stderr $how"
			rm -f "$MI_TMP"/s.*
			MI_MEMINST="$set,backend=$backend"
			mi_x "$TARGET" "$MI_TMP/data" $([ $how = stderr ] && echo stderr) >"$MI_TMP/out" 2>"$MI_TMP/err"
			rc=$?
			unset MI_MEMINST
			why=
			[ $rc = 0 ] || mi_why_add "exit status $rc"
			[ "$(cat "$MI_TMP/out")" = done ] || mi_why_add "stdout: $(head -c 80 "$MI_TMP/out")"
			size=$(wc -c <"$MI_TMP/data")
			[ "$size" = 13 ] || mi_why_add "the data file has $size bytes, not 13"
			if [ $how = keep ]; then
				grep -q '^meminst status: types' "$MI_TMP/err" ||
					mi_why_add "the types table did not reach stderr"
			else
				grep -q '^meminst' "$MI_TMP/err" && mi_why_add "meminst wrote on the program's stderr"
				case $set in *snapshot=*)
					grep -q 'print= tables not written' "$MI_TMP"/s.*.db.log 2>/dev/null ||
						mi_why_add "no note beside the snapshot" ;;
				esac
			fi
			mi_verdict "$label" "$why" "$MI_TMP/err" stderr
		done
	done
done
mi_finish
