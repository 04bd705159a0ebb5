# rss.sh — `inspect rss`: the resident set explained, on three programs
# that each hold a known part of it when they store a map snapshot:
#   - tests/targets/rss_parts arena: its own arena allocator, 40 MiB
#     written in a 64 MiB anonymous mapping, beside 2,000 malloc'd blocks;
#   - tests/targets/rss_parts threads: 48 threads with 256 KiB of stack
#     each written, each having made and freed 120 KiB of small blocks
#     (glibc's thread arenas keep them: free memory in their heaps);
#   - python3 (pymalloc on) holding 200,000 small dicts, which live in
#     pymalloc's arenas (anonymous mappings), not in malloc's heap.
# For each: stdout as uninstrumented; the parts add up to the kernel's
# RSS within 2 %; the part the program holds is there (anonymous >= 40
# MiB; stacks >= 48 x 256 KiB; python's anonymous >= 12 MiB, more than
# its live heap blocks); the live heap blocks are the snapshot's bytes
# where they are resident.  The arena program also in mis (a status
# snapshot: the totals placed), and --csv and text give the same parts.
# The other anonymous regions and the thread stacks by the function that
# mapped them (table sites) add up to the parts "anonymous" and "stacks"
# of a map snapshot, and the program's own arenas are one row named by
# that function: arena_open in rss_parts (symbols), pymalloc's
# _PyObject_ArenaMmap (its entry in the unwind tables, python3.11+0xADDR,
# when the binary is stripped, as Debian's is) holding >= 12 MiB in >= 10
# regions; the 48 threads' stacks one row of part stacks named by the
# function that created them (run_threads), 48 regions of kind stack, and
# glibc's thread arenas' heaps are the allocator's (>= 1 MiB free in them).
# Then the mmap families as table region stores them.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

INSPECT=$top_builddir/inspect/inspect
PY=/usr/bin/python3
mi_need $PY python3
export PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1
unset PYTHONMALLOC

cat >"$MI_TMP/dicts.py" <<'PY'
import ctypes, sys
held = [{"i": i} for i in range(200000)]
store = getattr(ctypes.CDLL(None), "meminst_store_memory_data", None)
if store is not None and store(sys.argv[1].encode()) < 0:
    sys.exit(3)
print(len(held), sum(d["i"] for d in held))
PY

# rss_check LABEL DB PART MIN [SITE MIN]: the parts' sum against the
# kernel's RSS and part PART at least MIN bytes; the sites' sums against
# the parts anonymous and stacks (a map snapshot), and the largest site of
# part PART's name matching the regular expression SITE, with at least MIN
# bytes in 10 regions or more (python), 48 (the threads) or in one (the
# arena); "ok" or the reasons.
rss_check() {
	"$INSPECT" rss --json "$2" >"$MI_TMP/rss.json" 2>"$MI_TMP/rss.err" ||
		{ mi_why_add "inspect rss failed: $(head -n 1 "$MI_TMP/rss.err")"; return; }
	res=$($PY - "$MI_TMP/rss.json" "$3" "$4" "${5-}" "${6-0}" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
part, least = sys.argv[2], int(sys.argv[3])
site_re, site_least = sys.argv[4], int(sys.argv[5])
kernel = doc["rss"][0]["kernel_rss"]
parts = {p["part"]: p["bytes"] for p in doc["parts"]}
total = sum(parts.values())
why = []
if abs(total - kernel) > kernel * 0.02:
    why.append("parts add up to %d, kernel RSS %d" % (total, kernel))
if parts[part] < least:
    why.append("%s is %d, below %d" % (part, parts[part], least))
if doc["rss"][0]["mappings_rss"] != total:
    why.append("parts %d, mappings %d" % (total, doc["rss"][0]["mappings_rss"]))
if not doc["over_time"] or doc["over_time"][-1]["kernel_rss"] != kernel:
    why.append("over_time does not end with the snapshot")
for p in ["anonymous", "stacks"]:
    got = sum(x["bytes"] for x in doc["sites"] if x["part"] == p)
    if doc["snapshot"]["content"] == "map" and got != parts[p]:
        why.append("sites of %s add up to %d, the part %d" % (p, got, parts[p]))
sites = [x for x in doc["sites"] if x["part"] == part]
if site_re:
    top = sites[0] if sites else {"function": "(none)", "bytes": 0, "regions": 0}
    if not re.match(site_re, top["function"]) or top["bytes"] < site_least:
        why.append("largest site %s with %d bytes, not %s with %d" % (top["function"], top["bytes"],
                                                                      site_re, site_least))
    if "python" in site_re and top["regions"] < 10:
        why.append("pymalloc's arenas: %d regions" % top["regions"])
    if "run_threads" in site_re and top["regions"] != 48:
        why.append("the threads' stacks: %d regions" % top["regions"])
if part == "stacks" and parts["allocator"] < 1 << 20:
    why.append("allocator (the thread arenas' free memory) %d, below 1 MiB" % parts["allocator"])
print("; ".join(why) or "ok")
PY
)
	[ "$res" = ok ] || mi_why_add "$res"
}

# rss_case LABEL MEMINST PART MIN SITE SITE_MIN COMMAND...: the run
# beside the reference (stdout the same), then rss_check on its database
# $MI_TMP/LABEL.db (SITE "": no site checked).
rss_case() {
	label=$1 mm=$2 part=$3 least=$4 site=$5 site_least=$6
	shift 6
	db=$MI_TMP/$label.db
	"$@" "$MI_TMP/ref-$label.db" >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err" || true
	MI_MEMINST=$mm
	"$@" "$db" >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
	rc=$?
	unset MI_MEMINST
	why=
	snap_expect "exit status" "$rc" 0
	cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
	mi_no_complaint "$MI_TMP/run.err"
	[ -f "$MI_TMP/ref-$label.db" ] && mi_why_add "the uninstrumented run stored a snapshot"
	[ -f "$db" ] && rss_check "$label" "$db" "$part" "$least" "$site" "$site_least" || mi_why_add "no snapshot"
	mi_verdict "rss $label" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/rss.json" "inspect rss --json"
}

arena() { mi_x "$MI_TARGETS/rss_parts" "$1" arena; }
threads() { mi_x "$MI_TARGETS/rss_parts" "$1" threads; }
dicts() { mi_x $PY "$MI_TMP/dicts.py" "$1"; }

rss_case arena-mim mim anonymous $((40 << 20)) '^arena_open \(rss_parts\)$' $((40 << 20)) arena
rss_case arena-mis mis anonymous $((30 << 20)) "" 0 arena
rss_case threads-mim mim stacks $((48 * 256 << 10)) '^run_threads \(rss_parts\)$' $((48 * 256 << 10)) threads
rss_case python-mim mim anonymous $((12 << 20)) \
	'^(_PyObject_ArenaMmap|python3[.0-9]*\+0x[0-9a-f]+) \(python3[.0-9]*\)$' $((12 << 20)) dicts

# The threads' stacks in table region: 48 of kind stack (4), each at
# least the 256 KiB written, from threads other than the main one.
why=
snap_expect "stack regions of the threads (count, >= 256 KiB, not the main thread's)" "$(snap_sql \
	"$MI_TMP/threads-mim.db" "SELECT count(*), sum(end - start >= 262144), sum(r.tid != s.pid) FROM region r
	JOIN snapshot s ON s.id = r.snapshot WHERE r.kind = 4")" "48 48 48"
mi_verdict "rss thread stacks as regions" "$why"

# --no-symbols: the stored names without their offsets, the same bytes.
why=
"$INSPECT" rss --no-symbols --csv "$MI_TMP/arena-mim.db" >"$MI_TMP/nosym.csv" 2>"$MI_TMP/nosym.err" ||
	mi_why_add "inspect rss --no-symbols failed"
grep -q '^anonymous,0x[0-9a-f]* (rss_parts),4194[0-9]*,' "$MI_TMP/nosym.csv" || mi_why_add "no stored name of the arena's site"
mi_verdict "rss sites without symbols" "$why" "$MI_TMP/nosym.csv" csv

# The live heap blocks of a map snapshot are its bytes (resident: the
# blocks were written), and text and CSV carry the same parts.
why=
db=$MI_TMP/arena-mim.db
live=$("$INSPECT" rss --csv "$db" | awk -F, '$1 == "heap_live" { print $3 }')
bytes=$(snap_sql "$db" "SELECT bytes FROM snapshot ORDER BY id DESC LIMIT 1")
snap_expect "live heap blocks (csv) against the snapshot's bytes" "$live" "$bytes"
"$INSPECT" rss "$db" >"$MI_TMP/rss.txt" || mi_why_add "text output failed"
for w in "live heap blocks" "thread stacks" "largest mappings" "over time"; do
	grep -q "$w" "$MI_TMP/rss.txt" || mi_why_add "text without '$w'"
done
mi_verdict "rss text and csv" "$why" "$MI_TMP/rss.txt" text

# The mmap families (table region): rss_parts mmaps maps 8 MiB anonymous,
# a 4 MiB file, 1 MiB MAP_STACK, 1 MiB grown by mremap to 6 MiB and 6 MiB
# with its middle 2 MiB unmapped; munmap and mmap refused by the kernel
# answer as without meminst (the program checks errno and MAP_FAILED).
# Every region the program made is there with its site in rss_parts, and
# nothing more of its own; uninstrumented, the same output.
why=
"$MI_TARGETS/rss_parts" "$MI_TMP/none.db" mmaps >"$MI_TMP/ref.out" 2>&1 || mi_why_add "uninstrumented run failed"
MI_MEMINST=mim
mi_x "$MI_TARGETS/rss_parts" "$MI_TMP/mmaps.db" mmaps >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
snap_expect "exit status" "$?" 0
unset MI_MEMINST
cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
mi_no_complaint "$MI_TMP/run.err"
snap_expect "regions of rss_parts (MiB kind)" "$(snap_sql "$MI_TMP/mmaps.db" "SELECT group_concat(r, ' ') FROM
	(SELECT ((end - start) >> 20) || ':' || kind AS r FROM region WHERE name LIKE '%(rss_parts)'
	ORDER BY end - start, kind)")" "1:4 2:0 2:0 4:1 6:0 8:0"
snap_expect "the two parts of the cut region share a site" "$(snap_sql "$MI_TMP/mmaps.db" "SELECT count(DISTINCT site)
	FROM region WHERE name LIKE '%(rss_parts)' AND end - start = 2097152")" 1
snap_expect "regions of the main thread" "$(snap_sql "$MI_TMP/mmaps.db" "SELECT count(*) FROM region r JOIN snapshot s
	ON s.id = r.snapshot AND s.pid = r.tid WHERE r.name LIKE '%(rss_parts)'")" 6
mi_verdict "rss mmap families" "$why" "$MI_TMP/run.err" stderr

# inspect report and inspect html of a session (the launcher, python's
# dicts): the split of the map snapshot with the highest resident set
# (a peak snapshot: python's arenas are there), its parts adding up to
# the mappings' resident bytes and within 5 % of the kernel's count (a
# peak snapshot's smaps is read while python goes on: the two are further
# apart than at the API's snapshots above), the sites adding up to the part anonymous, pymalloc's
# arenas the largest site; the HTML page has the same parts and sites.
why=
"$top_builddir/session/meminst" -q --mim --library="$MEMINST_LIB" -o "$MI_TMP/session.db" -- \
	$PY "$MI_TMP/dicts.py" "$MI_TMP/api.db" >"$MI_TMP/run.out" 2>"$MI_TMP/run.err" ||
	mi_why_add "meminst exited $?"
"$INSPECT" report --json "$MI_TMP/session.db" >"$MI_TMP/report.json" 2>>"$MI_TMP/run.err" ||
	mi_why_add "inspect report failed"
"$INSPECT" html -o "$MI_TMP/report.html" "$MI_TMP/session.db" 2>>"$MI_TMP/run.err" ||
	mi_why_add "inspect html failed"
res=$($PY - "$MI_TMP/report.json" "$MI_TMP/report.html" "$MI_TMP/session.db" <<'PY'
import json, re, sqlite3, sys
doc = json.load(open(sys.argv[1]))
html = open(sys.argv[2]).read()
db = sqlite3.connect(sys.argv[3])
why = []
if "rss" not in doc:
    print("no rss section in the report")
    sys.exit()
rss = doc["rss"]
rss = rss[0] if isinstance(rss, list) else rss
parts = {p["part"]: p["bytes"] for p in doc["rss_parts"]}
total = sum(parts.values())
if total != rss["mappings_rss"] or abs(total - rss["kernel_rss"]) > rss["kernel_rss"] * 0.05:
    why.append("parts add up to %d, mappings %d, kernel RSS %d" % (total, rss["mappings_rss"], rss["kernel_rss"]))
best = db.execute("SELECT s.id FROM snapshot s JOIN snapshot_rss r ON r.snapshot = s.id "
                  "WHERE s.content = 'map' ORDER BY r.rss DESC, s.id DESC LIMIT 1").fetchone()[0]
if rss["snapshot"] != best:
    why.append("snapshot %d explained, the highest map is %d" % (rss["snapshot"], best))
sites = [x for x in doc.get("rss_sites", []) if x["part"] == "anonymous"]
if sum(x["bytes"] for x in sites) != parts["anonymous"]:
    why.append("sites add up to %d, anonymous %d" % (sum(x["bytes"] for x in sites), parts["anonymous"]))
top = sites[0] if sites else {"function": "(none)", "bytes": 0}
if not re.match(r"^(_PyObject_ArenaMmap|python3[.0-9]*\+0x[0-9a-f]+) \(python3[.0-9]*\)$", top["function"]) \
        or top["bytes"] < 12 << 20:
    why.append("largest site %s with %d bytes" % (top["function"], top["bytes"]))
sec = re.search(r'<section id="rss">(.*?)</section>', html, re.S)
if not sec:
    why.append("no rss section in the HTML page")
else:
    for w in ["Snapshot %d " % rss["snapshot"], "other anonymous regions", top["function"]]:
        if w not in sec.group(1):
            why.append("HTML rss section without %r" % w)
print("; ".join(why) or "ok")
PY
)
[ "$res" = ok ] || mi_why_add "$res"
mi_verdict "rss in report and html" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/report.json" "inspect report --json"

# A file from before the figures: one line, exit 1.
why=
cp "$db" "$MI_TMP/old.db"
sqlite3 "$MI_TMP/old.db" "UPDATE segment SET rss = NULL, pss = NULL, private = NULL, shared = NULL,
	swap = NULL, anon_huge = NULL"
"$INSPECT" rss "$MI_TMP/old.db" >/dev/null 2>"$MI_TMP/old.err"
snap_expect "exit status without figures" "$?" 1
snap_expect "lines on stderr" "$(wc -l <"$MI_TMP/old.err")" 1
mi_verdict "rss without figures" "$why" "$MI_TMP/old.err" stderr

# A file without table snapshot_rss (meminst-snapshot(5): read as no
# kernel figure): the parts, the kernel's RSS unknown, no error.  It
# printed "not a valid snapshot database" twice and went on, exit 0.
why=
cp "$db" "$MI_TMP/norss.db"
sqlite3 "$MI_TMP/norss.db" "DROP TABLE snapshot_rss"
"$INSPECT" rss "$MI_TMP/norss.db" >"$MI_TMP/norss.txt" 2>"$MI_TMP/norss.err"
snap_expect "exit status without snapshot_rss" "$?" 0
snap_expect "lines on stderr" "$(wc -l <"$MI_TMP/norss.err")" 0
grep -q '^ *- ' "$MI_TMP/norss.txt" || mi_why_add "the kernel's RSS is not shown as unknown (-)"
mi_verdict "rss without table snapshot_rss" "$why" "$MI_TMP/norss.err" stderr

mi_finish
