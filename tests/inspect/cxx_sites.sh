#!/bin/sh
# cxx_sites.sh — allocation sites of an -O1 -g C++ program (cxx_sites.cc)
# built with g++ and with clang++.  Its std::string keys are allocated
# inside std::basic_string code inlined into key_of, itself inlined into
# build_cache: `inspect top --by site` must name the user's line that
# called into std:: code (the string's construction in key_of), not
# new_allocator.h, and the JSON must carry the inline chain from
# build_cache through key_of.  Names have their template arguments
# folded unless --full-names.  With MEMINST=site_depth=user the map's nodes
# and the vector's buffer, allocated in std:: code that is not inlined, are
# attributed to the user's lines too.  status --types shows the same
# location.  A missing compiler is skipped.
. "$top_srcdir/tests/inspect/lib.sh"

: "${MEMINST_LIB:=$top_builddir/alloc/.libs/libmeminst.so}"
src=$top_srcdir/tests/inspect/cxx_sites.cc
line=$(grep -n '// line of the insertion' "$src" | cut -d: -f1)
kline=$(grep -n '// line of the key' "$src" | cut -d: -f1)
vline=$(grep -n '// line of the vector' "$src" | cut -d: -f1)
aline=$(grep -n '// line of grow_a' "$src" | cut -d: -f1)
bline=$(grep -n '// line of grow_b' "$src" | cut -d: -f1)
tline=$(grep -n '// line of the thread' "$src" | cut -d: -f1)

for cxx in g++ clang++; do
	if ! command -v "$cxx" >/dev/null 2>&1; then
		echo "skip  $cxx: not installed"
		continue
	fi
	exe=$IT_TMP/cxx-$cxx db=$IT_DB/cxx-$cxx.db
	if ! "$cxx" -g -O1 -pthread "$src" -o "$exe" 2>"$IT_TMP/cc.err"; then
		it_fail "$cxx builds the program" "$IT_TMP/cc.err"
		continue
	fi
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db" "$exe" 2000 >"$IT_TMP/run.out" 2>"$IT_TMP/run.err"
	"$IT_INSPECT" top --by site --json "$db" >"$IT_TMP/top.json" 2>"$IT_TMP/top.err"
	# The 4000 keys (2000 per thread) are one site: key_of's line.
	if python3 - "$IT_TMP/top.json" "$kline" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["top"]
keys = [r for r in rows if r["blocks"] == 4000 and (r["file"] or "").endswith("cxx_sites.cc")
        and str(r["line"]) == sys.argv[2]]
ok = len(keys) == 1 and keys[0]["name"].startswith("key_of")
ok = ok and "key_of" in (keys[0]["inlined"] or "") and keys[0]["inlined"].startswith("build_cache(int, int) at ")
sys.exit(0 if ok else 1)
PY
	then
		it_ok "$cxx: the keys' site is key_of at cxx_sites.cc:$kline, inlined into build_cache"
	else
		it_fail "$cxx: the keys' site is key_of at cxx_sites.cc:$kline" "$IT_TMP/top.json" \
			"$IT_TMP/top.err" "$IT_TMP/run.err"
	fi
	# status --types names the keys' type as top does: the same name,
	# location (in cxx_sites.cc, not a standard header) and chain
	"$IT_INSPECT" status --types --json "$db" >"$IT_TMP/status.json" 2>"$IT_TMP/status.err"
	"$IT_INSPECT" status --types "$db" >"$IT_TMP/status.txt" 2>>"$IT_TMP/status.err"
	if python3 - "$IT_TMP/status.json" "$IT_TMP/top.json" "$IT_TMP/status.txt" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["types"]
top = [r for r in json.load(open(sys.argv[2]))["top"] if r["blocks"] == 4000 and "key_of" in (r["inlined"] or "")]
keys = [r for r in rows if top and r["id"] == top[0]["id"]]
ok = len(top) == 1 and len(keys) == 1 and (keys[0]["file"] or "").endswith("cxx_sites.cc")
ok = ok and all(keys[0][k] == top[0][k] for k in ("name", "file", "line", "inlined"))
ok = ok and keys[0]["blocks_current"] == 4000
text = open(sys.argv[3]).read().splitlines()
ok = ok and any(l.split()[:1] == [str(keys[0]["id"])] and keys[0]["name"] in l
                and l.endswith("%s:%s" % (keys[0]["file"], keys[0]["line"])) for l in text)
sys.exit(0 if ok else 1)
PY
	then
		it_ok "$cxx: status --types: the keys' type named and located as top has it, in cxx_sites.cc"
	else
		it_fail "$cxx: status --types: the keys' type named and located as top has it" "$IT_TMP/status.json" \
			"$IT_TMP/status.txt" "$IT_TMP/status.err"
	fi
	# site_depth=user: the map's nodes (allocated in std::_Rb_tree code, not
	# inlined) are the insertion line's too, 4000 of them across both
	# threads, and the vector's buffer is the push_back line of main; what
	# pthread_create allocates is the thread's line, not libmeminst's wrapper.
	db=$IT_DB/cxx-user-$cxx.db
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db,site_depth=user" "$exe" 2000 \
		>"$IT_TMP/run.out" 2>"$IT_TMP/run.err"
	"$IT_INSPECT" top --by site --json "$db" >"$IT_TMP/user.json" 2>"$IT_TMP/top.err"
	if python3 - "$IT_TMP/user.json" "$line" "$vline" "$aline" "$bline" "$tline" "$kline" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["top"]
at = lambda r, l: (r["file"] or "").endswith("cxx_sites.cc") and str(r["line"]) == l
nodes = [r for r in rows if r["blocks"] == 4000 and at(r, sys.argv[2]) and "_Rb_tree" in (r["inlined"] or "")]
keys = [r for r in rows if r["blocks"] == 4000 and at(r, sys.argv[7]) and "key_of" in (r["inlined"] or "")]
vec = [r for r in rows if at(r, sys.argv[3]) and r["name"].startswith("main+0x") and "vector" in (r["inlined"] or "")]
# grow_a made 20 vectors, grow_b 10: their last buffers are live
ga = sum(r["blocks"] for r in rows if at(r, sys.argv[4]))
gb = sum(r["blocks"] for r in rows if at(r, sys.argv[5]))
thr = [r for r in rows if at(r, sys.argv[6])]
ours = [r for r in rows if "libmeminst" in r["name"]]
sys.exit(0 if len(nodes) == 1 and len(keys) == 1 and len(vec) == 1 and ga == 20 and gb == 10
         and thr and not ours else 1)
PY
	then
		it_ok "$cxx: site_depth=user: the map's nodes at cxx_sites.cc:$line, the keys at :$kline, the vector at :$vline, grow_a's and grow_b's apart, the thread's at :$tline"
	else
		it_fail "$cxx: site_depth=user: the map's nodes at cxx_sites.cc:$line, the vector at :$vline" \
			"$IT_TMP/user.json" "$IT_TMP/top.err" "$IT_TMP/run.err"
	fi
	# What was never freed: top --live-at-exit (by site), and the session's
	# report and HTML page with their "still live at exit" sections.
	"$IT_INSPECT" top --live-at-exit --csv "$db" >"$IT_TMP/exit.csv" 2>&1
	if grep -q "^id,bytes,share,blocks,name,file,line" "$IT_TMP/exit.csv" &&
	   grep -q ",4000,\"build_cache(int, int)+0x.*cxx_sites.cc\"\?,$line," "$IT_TMP/exit.csv"; then
		it_ok "$cxx: top --live-at-exit: the exit snapshot by site"
	else
		it_fail "$cxx: top --live-at-exit: the exit snapshot by site" "$IT_TMP/exit.csv"
	fi
	sess=$IT_DB/cxx-sess-$cxx.db
	MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" -q --no-time --mim --site-depth=user \
		--snapshot-at=exit -o "$sess" -- "$exe" 300 >/dev/null 2>"$IT_TMP/run.err"
	"$IT_INSPECT" report --json "$sess" >"$IT_TMP/report.json" 2>"$IT_TMP/report.err"
	"$IT_INSPECT" html "$sess" -o "$IT_TMP/page.html" 2>>"$IT_TMP/report.err"
	if python3 - "$IT_TMP/report.json" "$line" <<'PY' && grep -q '<h2>Still live at exit</h2>' "$IT_TMP/page.html"
import json, sys
rows = json.load(open(sys.argv[1]))["live_at_exit"]
nodes = [r for r in rows if r["blocks"] == 600 and (r["file"] or "").endswith("cxx_sites.cc") and str(r["line"]) == sys.argv[2]
	 and "_Rb_tree" in (r["inlined"] or "")]
sys.exit(0 if len(nodes) == 1 else 1)
PY
	then
		it_ok "$cxx: report and html: still live at exit, the map's 600 nodes at cxx_sites.cc:$line"
	else
		it_fail "$cxx: report and html: still live at exit" "$IT_TMP/report.json" "$IT_TMP/report.err" \
			"$IT_TMP/run.err"
	fi
	# site_depth=3: stacks of three frames are stored
	db=$IT_DB/cxx-3-$cxx.db
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db,site_depth=3" "$exe" 200 >/dev/null 2>&1
	depth=$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT max(depth) FROM type_frame").fetchone()[0])' "$db" 2>&1)
	if [ "$depth" = 2 ]; then
		it_ok "$cxx: site_depth=3 stores three frames a type"
	else
		it_fail "$cxx: site_depth=3 stores three frames a type (deepest: $depth)"
	fi
	# Template arguments are folded (std::vector<>::…) unless --full-names.
	"$IT_INSPECT" top --by site --csv "$db" >"$IT_TMP/top.csv" 2>&1
	"$IT_INSPECT" top --by site --csv --full-names "$db" >"$IT_TMP/full.csv" 2>&1
	if grep -q 'std::vector<>::' "$IT_TMP/top.csv" && ! grep -q 'std::allocator<[^>]' "$IT_TMP/top.csv" &&
	   grep -q 'std::vector<long, std::allocator<long> >::' "$IT_TMP/full.csv"; then
		it_ok "$cxx: template arguments folded, kept with --full-names"
	else
		it_fail "$cxx: template arguments folded, kept with --full-names" "$IT_TMP/top.csv" "$IT_TMP/full.csv"
	fi
done
# On a terminal the text fits its width; piped it is never cut.
if command -v script >/dev/null 2>&1; then
	script -qec "stty cols 100; '$IT_INSPECT' top --by site '$IT_DB/cxx-g++.db'" /dev/null 2>&1 |
		tr -d '\r' >"$IT_TMP/tty.txt"
	"$IT_INSPECT" top --by site --full-names "$IT_DB/cxx-g++.db" >"$IT_TMP/pipe.txt" 2>&1
	long=$(python3 -c 'import sys
print(sum(1 for i, l in enumerate(open(sys.argv[1], encoding="utf-8")) if i > 0 and len(l.rstrip("\n")) > 100))' \
		"$IT_TMP/tty.txt")
	if [ -s "$IT_TMP/tty.txt" ] && [ "$long" = 0 ] && grep -q '…' "$IT_TMP/tty.txt" &&
	   ! grep -q '…' "$IT_TMP/pipe.txt" && grep -q 'std::allocator<long> >' "$IT_TMP/pipe.txt"; then
		it_ok "top on a 100-column terminal: every table line fits; piped: names whole"
	else
		it_fail "top on a 100-column terminal: every table line fits ($long longer); piped: names whole" \
			"$IT_TMP/tty.txt" "$IT_TMP/pipe.txt"
	fi
fi

# No exit snapshot: one line, status 1.
db=$IT_DB/noexit.db
env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db" /bin/true >/dev/null 2>&1
"$IT_INSPECT" top --live-at-exit --snapshot 1 "$db" >/dev/null 2>"$IT_TMP/err1"
rc1=$?
"$IT_INSPECT" top --live-at-exit --pid 1 "$db" >/dev/null 2>"$IT_TMP/err2"
rc2=$?
if [ $rc1 = 2 ] && [ $rc2 = 1 ] && grep -q "no exit snapshot with a block map of that process" "$IT_TMP/err2"; then
	it_ok "top --live-at-exit: --snapshot refused, no exit snapshot of that process said"
else
	it_fail "top --live-at-exit: --snapshot refused ($rc1), no exit snapshot said ($rc2)" "$IT_TMP/err1" "$IT_TMP/err2"
fi
it_finish
