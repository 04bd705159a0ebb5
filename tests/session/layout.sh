# layout.sh — the rooms of the house (doc/ARCHITECTURE.md):
# - data flows one way between the folders: commands (inspect/, session/)
#   -> analyses and displays (profile/) and the writers for other viewers
#   (export/) -> engine/ and the reader toolkit (reader/) -> the file
#   formats (include/); the runtime (alloc/, trace/) builds in engine/ and
#   reads include/, never a reader's folder; tools/ (the programs that are
#   not commands) build on the reader toolkit (the fuzzer drives inspect's
#   commands).  Each file's #include "..." names are looked up in the
#   folders that hold them; a name a folder may not reach fails the test,
#   with the file and line.  The runtime's make fragments list no reader's
#   source.
# - every file's name carries its room's prefix (a program's main file is
#   named after the program), and every room has its Makefile.inc;
# - no source file is over the ~800-line guide by more than a little
#   unless its head comment says why ("over the guide").
. "$top_srcdir/tests/integration/lib.sh"
cd "$top_srcdir" || exit 99

# FOLDER: the folders its files may include from (besides its own).
allowed() {
	case $1 in
	alloc | trace) echo "alloc trace engine include" ;;
	engine) echo "include" ;;
	reader) echo "include" ;;
	profile) echo "engine reader include" ;;
	export) echo "profile engine reader include" ;;
	inspect) echo "reader include profile/prof_cmds.h export/exp_cmds.h" ;; # the command table's entries
	session) echo "reader include" ;;
	tools) echo "reader include inspect" ;;
	esac
}

# FOLDER: the prefix of its files' names.
prefix() {
	case $1 in
	engine) echo eng_ ;;
	reader) echo rd_ ;;
	profile) echo prof_ ;;
	export) echo exp_ ;;
	inspect) echo insp_ ;;
	session) echo sess_ ;;
	tools) echo tool_ ;;
	*) echo "$1_" ;;
	esac
}
ROOMS="alloc trace engine reader profile export inspect session tools"

why=
for dir in $ROOMS; do
	ok=$(allowed $dir)
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $dir/*.c $dir/*.h 2>/dev/null |
		sed 's/^\([^:]*\):\([0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1 \2 \3/' |
		while read -r file line name; do
			base=${name##*/}
			[ "$base" = config.h ] && continue
			# the folders holding a file of that name (a path names one)
			case $name in
			../*/*) homes=$(echo "$name" | cut -d/ -f2) ;;
			*) homes=$(for r in $ROOMS include; do ls -d "$r/$base" 2>/dev/null; done | cut -d/ -f1 | sort -u) ;;
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
why=
for dir in $ROOMS; do
	[ -f "$dir/Makefile.inc" ] || mi_why_add "$dir/ has no Makefile.inc"
	grep -q "^include $dir/Makefile.inc\$" Makefile.am || mi_why_add "Makefile.am does not include $dir/Makefile.inc"
	p=$(prefix $dir)
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -e "$f" ] || continue
		b=${f##*/}
		case $b in
		"$p"*) ;;
		inspect.c | meminst.c) ;; # the programs' main files
		*) mi_why_add "$f: not named $p* (the prefix of $dir/)" ;;
		esac
		n=$(wc -l <"$f")
		if [ "$n" -gt 850 ] && ! head -n 40 "$f" | grep -q "over the guide"; then
			mi_why_add "$f: $n lines, over the ~800-line guide with no note saying why"
		fi
	done
done
mi_verdict "every file carries its room's prefix, every room has its Makefile.inc, no file is long without a reason" "$why"

# A room not known to this test is a room it does not guard.
why=
for d in */; do
	d=${d%/}
	[ -f "$d/Makefile.inc" ] || continue
	case " $ROOMS doc tests bench examples " in
	*" $d "*) ;;
	*) mi_why_add "$d/ is a room layout.sh does not know" ;;
	esac
done
mi_verdict "layout.sh knows every room" "$why"
mi_finish
