# print_names.sh — print=types names its sites with meminst-symbolise, the
# helper libmeminst starts at exit (found through $MEMINST_SYMBOLISER here,
# in the build tree): an -O1 -g C++ program whose allocations are inlined
# std:: code (tests/inspect/cxx_sites.cc) gets the user's file:line and the
# inline chain.  The program notices nothing (print_names.c): no SIGCHLD,
# nothing for its own waitpid(-1), the same exit status, from the main
# thread or another, and the helper holds none of its descriptors.  A
# helper that is missing, fails, crashes, answers badly or is late leaves
# the dladdr names and one note, the program's exit status unchanged.
. "$top_srcdir/tests/integration/lib.sh"
command -v cc >/dev/null 2>&1 || { echo "skip  print_names: no C compiler"; exit 77; }
HELPER=$top_builddir/tools/meminst-symbolise
cd "$MI_TMP" || exit 99

why=
cc -g -O1 -pthread "$top_srcdir/tests/integration/print_names.c" -o names 2>err || mi_why_add "cc failed"
kline=$(grep -n 'line of keep_block' "$top_srcdir/tests/integration/print_names.c" | cut -d: -f1)
# a helper that says which descriptors it was given, then names
cat >probe <<EOP
#!/bin/sh
ls -l /proc/\$\$/fd/ | grep -c 'names.log' >"$MI_TMP/probe.out"
exec "$HELPER"
EOP
chmod +x probe

for how in main thread; do
	for mode in mis mim; do
		why=
		: >names.log
		env MEMINST_SYMBOLISER="$MI_TMP/probe" LD_PRELOAD="$MEMINST_LIB" MEMINST="$mode,print=types" \
			./names $how 3>names.log 2>err
		rc=$?
		[ "$rc" = 42 ] || mi_why_add "exit status $rc, expected 42"
		[ "$(cat names.log)" = CR ] || [ "$(cat names.log)" = RC ] ||
			mi_why_add "the program saw '$(cat names.log)' on fd 3, expected one C and one R"
		grep -q "keep_block+0x[0-9a-f]* (names) .*print_names.c:$kline\$" err ||
			mi_why_add "no row of keep_block at print_names.c:$kline"
		[ "$(cat probe.out 2>/dev/null)" = 0 ] || mi_why_add "the helper holds the program's fd 3"
		grep -q 'meminst: print=types' err && mi_why_add "a note"
		mi_verdict "$mode, exit from the $how thread: named, no SIGCHLD, nothing to reap, status 42" \
			"$why" err stderr names.log "fd 3"
	done
done

# C++ at -O1: the keys of build_cache, allocated in std::basic_string code
# inlined through key_of, are named as inspect names them in the same
# run's snapshot: the same name, a line of cxx_sites.cc, the same chain
why=
src=$top_srcdir/tests/inspect/cxx_sites.cc
if command -v g++ >/dev/null 2>&1 && g++ -g -O1 -pthread "$src" -o cxx 2>err; then
	env MEMINST_SYMBOLISER="$HELPER" LD_PRELOAD="$MEMINST_LIB" MEMINST=mis,print=types,snapshot=cxx.db \
		./cxx 2000 >out 2>err || mi_why_add "exit status $?"
	"$top_builddir/inspect/inspect" status --types --json cxx.db >status.json 2>>err ||
		mi_why_add "inspect status exited $?"
	python3 - status.json err <<'PY' || mi_why_add "the keys' row is not named as inspect names it"
import json, sys
keys = [r for r in json.load(open(sys.argv[1]))["types"]
        if r["blocks_current"] == 4000 and "key_of" in (r["inlined"] or "")]
assert len(keys) == 1 and (keys[0]["file"] or "").endswith("cxx_sites.cc"), keys
k = keys[0]
lines = open(sys.argv[2]).read().splitlines()
at = [i for i, l in enumerate(lines) if l.split()[:1] == [str(k["id"])]]
assert len(at) == 1, at
row = lines[at[0]]
assert k["name"] in row, (row, k["name"])
assert row.endswith("%s:%s" % (k["file"], k["line"])), row
assert lines[at[0] + 1] == "        inlined: " + k["inlined"], lines[at[0] + 1]
PY
	mi_verdict "C++ -O1: inlined std:: allocations named as inspect names them, with the chain" "$why" err stderr
else
	echo "skip  C++: no g++"
fi

# GNU sort closes stderr in an atexit handler: the table still has names
why=
seq 1000 | env MEMINST_SYMBOLISER="$HELPER" LD_PRELOAD="$MEMINST_LIB" MEMINST=mis,print=types \
	sort -r >/dev/null 2>err || mi_why_add "sort exited $?"
grep -q ' location$' err || mi_why_add "no location column"
grep -q 'meminst: print=types' err && mi_why_add "a note"
mi_verdict "sort (closes stderr): named" "$why" err stderr

# helpers that do not answer: the dladdr names, one note, status 42
printf '#!/bin/sh\nexit 3\n' >h_fail
printf '#!/bin/sh\nkill -SEGV $$\n' >h_crash
printf '#!/bin/sh\nexec sleep 60\n' >h_slow
printf '#!/bin/sh\ncat >/dev/null; echo nonsense\n' >h_bad
chmod +x h_fail h_crash h_slow h_bad
for h in "absent:no helper at" "h_fail:exited with status 3" "h_crash:killed by signal 11" \
	"h_slow:took longer than 300 ms" "h_bad:gave a malformed answer"; do
	why=
	: >names.log
	env MEMINST_SYMBOLISER="$MI_TMP/${h%%:*}" MEMINST_SYMBOLISER_TIMEOUT_MS=300 LD_PRELOAD="$MEMINST_LIB" \
		MEMINST=mis,print=types ./names 3>names.log 2>err
	rc=$?
	[ "$rc" = 42 ] || mi_why_add "exit status $rc, expected 42"
	[ "$(grep -c "^meminst: print=types: .*${h#*:}" err)" = 1 ] || mi_why_add "no note '${h#*:}'"
	grep -q "^ *[0-9]*  [^ ]* (names) *100 B .* 1 *1 *0 *\$" err || mi_why_add "no dladdr row of keep_block"
	grep -q ' location$' err && mi_why_add "a location column"
	[ "$(cat names.log)" = CR ] || [ "$(cat names.log)" = RC ] ||
		mi_why_add "the program saw '$(cat names.log)' on fd 3"
	mi_verdict "helper ${h%%:*}: dladdr names and a note (${h#*:})" "$why" err stderr
done

# the helper itself: a malformed request is one line and status 2
why=
for req in '' 'hello\n' 'meminst-symbolise 1\nM zz - /x\nE\n' 'meminst-symbolise 1\nT 1 - 99 1\t\tn\nE\n' \
	'meminst-symbolise 1\nT 1 - 1 10\nE\n' 'meminst-symbolise 1\n'; do
	printf "$req" | "$HELPER" >out 2>err
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <err)" = 1 ] && grep -q '^meminst-symbolise: bad request line' err ||
		mi_why_add "request '$req': status $rc, $(wc -l <err) lines"
done
printf 'meminst-symbolise 1\nT 7 - 2 10 20\t\tname\nE\n' | "$HELPER" >out 2>err
[ "$(cat out)" = "$(printf '7\tname\t\t0x20 > 0x10\nE')" ] || mi_why_add "a site in no module: $(cat out)"
mi_verdict "meminst-symbolise: bad requests refused in one line, unknown sites keep their names" "$why" err stderr
mi_finish
