# layout.sh — data flows one way between the folders (README, Layout):
# commands (inspect/, session/) -> analyses (profile/) -> engine/ and the
# reader toolkit (reader/) -> the file formats (include/), and the runtime
# (alloc/, trace/) builds in engine/ and reads include/, never a reader's
# folder.  Each file's #include "..." names are looked up in the folders
# that hold them; a name a folder may not reach fails the test, with the
# file and line.  The runtime's make fragments list no reader's source.
. "$top_srcdir/tests/integration/lib.sh"
cd "$top_srcdir" || exit 99

# FOLDER: the folders its files may include from (besides its own).
allowed() {
	case $1 in
	alloc | trace) echo "alloc trace engine include" ;;
	engine) echo "include" ;;
	reader) echo "include" ;;
	profile) echo "engine reader include" ;;
	inspect) echo "reader include profile/prof_cmds.h" ;; # the command table's entries
	session) echo "reader include" ;;
	esac
}

why=
for dir in alloc trace engine reader profile inspect session; do
	ok=$(allowed $dir)
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $dir/*.c $dir/*.h 2>/dev/null |
		sed 's/^\([^:]*\):\([0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1 \2 \3/' |
		while read -r file line name; do
			base=${name##*/}
			[ "$base" = config.h ] && continue
			# the folders holding a file of that name (a path names one)
			case $name in
			../*/*) homes=$(echo "$name" | cut -d/ -f2) ;;
			*) homes=$(ls -d alloc/"$base" trace/"$base" engine/"$base" reader/"$base" profile/"$base" \
				inspect/"$base" session/"$base" include/"$base" 2>/dev/null | cut -d/ -f1 | sort -u) ;;
			esac
			[ -n "$homes" ] || continue # a test's helper or a system header
			for home in $homes; do
				[ "$home" = "$dir" ] && continue 2
				for a in $ok; do
					[ "$a" = "$home" ] || [ "$a" = "$home/$base" ] && continue 3
				done
			done
			echo "$file:$line includes $name ($homes/): $dir/ may reach only $ok"
		done
done >"$MI_TMP/against"
[ -s "$MI_TMP/against" ] && mi_why_add "$(head -n 5 "$MI_TMP/against")"
mi_verdict "each folder includes only from the folders below it" "$why"

why=
bad=$(sed 's/#.*//' alloc/Makefile.inc trace/Makefile.inc engine/Makefile.inc |
	grep -o '\(reader\|profile\|inspect\|session\)/[a-z_]*\.[ch]' | sort -u | tr '\n' ' ')
[ -n "$bad" ] && mi_why_add "the runtime or the engine builds a reader's file: $bad"
mi_verdict "the runtime and the engine build no reader's source" "$why"
mi_finish
