#!/bin/sh
# tests/session/heaptrack.sh — meminst's answers to heaptrack_print's
# questions against heaptrack's own, on tests/targets/heap_questions
# (events known in advance, see its comment):
#   summary  heaptrack_print's totals (calls to allocation functions,
#            temporary allocations, peak heap, leaked) next to inspect
#            status --total, top --by leaked and sizes of a mis and a mim
#            session, and the totals known in advance;
#   -a -T -p -l  per site: heaptrack_print's sections next to inspect top
#            --by calls|temporary|peak|leaked; a site is matched by its
#            first frame in heap_questions.cc (function:line), or as
#            "libstdc++" (libstdc++'s emergency pool, no frame of ours);
#   -H       heaptrack's exact sizes summed into inspect sizes' log2
#            buckets: the same calls in each;
#   -F       heaptrack_print -F with --flamegraph-cost-type allocations|
#            temporary|leaked|peak next to inspect export --format folded
#            --metric calls|temporary|leaked|peak: the total, and the
#            inclusive cost of each function of heap_questions.cc (frame
#            names normalised: heaptrack writes "f (file.cc)", meminst
#            "f()"; heaptrack's stacks start at main, meminst's at the
#            site's function);
#   -d       heaptrack_print -d OLD NEW next to inspect diff OLD.db NEW.db
#            on runs of heap_questions 1 and 2 (temp_loop, leak_some and
#            peak scaled): per site and total change of calls, temporary,
#            peak and leaked.
# The differences allowed are exactly those meminst(7) documents:
#   - temporary: heaptrack compares an allocation's size and stack, not
#     the block, so one delete[] in keep_many (a block of the size and stack
#     of the one allocated just before) is temporary to it; and it counts
#     the release of libstdc++'s emergency pool, which it frees itself at
#     exit (__gnu_cxx::__freeres), as temporary: meminst counts 2 fewer,
#     one at keep_many, one at libstdc++'s pool;
#   - leaked: that pool (one block of libstdc++) is live
#     at exit to meminst, freed to heaptrack (72704 bytes here);
#   - heaptrack prints bytes with three digits (1.05M): byte figures from
#     its text agree within 0.5%.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/heaptrack heaptrack
mi_need /usr/bin/heaptrack_print heaptrack
mi_need /usr/bin/python3 python3
PROG=$top_builddir/tests/targets/heap_questions

# cmp.py QUESTION FILES...: heaptrack's answer next to meminst's; one line
# per difference not allowed above, exit 1 on any (or on too few sites
# compared: a parse that found nothing must not pass)
cat >cmp.py <<'PY'
import collections, csv, re, sys
HERE = "heap_questions.cc"
SECTIONS = {"MOST CALLS TO ALLOCATION FUNCTIONS": "calls", "PEAK MEMORY CONSUMERS": "peak",
            "MEMORY LEAKS": "leaked", "MOST TEMPORARY ALLOCATIONS": "temporary"}
COLUMN = {"calls": "calls", "temporary": "temporary", "peak": "peak_bytes", "leaked": "leaked_bytes"}
BYTES = ("peak", "leaked")
# heaptrack minus meminst, per question and function (documented above)
ALLOWED = {("temporary", "keep_many"): 1, ("temporary", "libstdc++"): 1}
bad = []

def ht_value(sec, v):  # "1000", "1.05M", "5.00K", "320B"
    if sec not in BYTES:
        return int(v)
    v = v.rstrip("B")
    m = {"K": 1e3, "M": 1e6, "G": 1e9}.get(v[-1:], 1)
    return round(float(v[:-1] if m > 1 else v) * m)

def name(s):  # "worker(void*)+0x1a (x)", "worker (x.cc)" -> "worker"
    return re.sub(r"\(.*", "", s).strip()

def ht_text(path):
    """heaptrack_print's sections: {section: {site: value}} in order, and its summary"""
    out, summary = collections.defaultdict(dict), {}
    sec = entry = None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"(calls to allocation functions|temporary memory allocations|"
                     r"peak heap memory consumption|total memory leaked): (\S+)", line)
        if m:
            k = {"calls": "calls", "temporary": "temporary", "peak": "peak"}.get(m.group(1).split()[0], "leaked")
            summary[k] = ht_value(k, m.group(2))
        if line in SECTIONS:
            sec = SECTIONS[line]
            continue
        if line.startswith("total runtime"):
            sec = None
        if sec is None:
            continue
        if entry is None:
            if line[:1] not in ("", " ") and line.endswith(" from"):
                entry = {"v": ht_value(sec, line.split()[0]), "site": None, "fn": None, "lib": False}
            continue
        s = line.strip()
        if not s:
            site = entry["site"] or ("libstdc++" if entry["lib"] else "other")
            out[sec][site] = out[sec].get(site, 0) + entry["v"]
            entry = None
        elif s.startswith("at "):
            f, _, l = s[3:].rpartition(":")
            if entry["site"] is None and f.endswith(HERE):
                entry["site"] = "%s:%s" % (entry["fn"], l)
        elif s.startswith("in "):
            entry["lib"] |= entry["site"] is None and "libstdc++" in s
        elif not re.match(r"\S+ .* from:$", s):
            entry["fn"] = name(s)
    return out, summary

def mi_site(row):
    if row["file"].endswith(HERE):
        return "%s:%s" % (name(row["name"]), row["line"])
    return "libstdc++" if "libstdc++" in row["name"] else "other"

def compare(what, ht, mi, tolerance, minimum):
    n = 0
    for site in sorted(set(ht) | set(mi)):
        h, m = ht.get(site, 0), mi.get(site, 0)
        if h == 0 and m == 0:
            continue
        n += 1
        allowed = ALLOWED.get((what[0], site.split(":")[0]), 0)
        if what[0] == "leaked" and site == "libstdc++":
            allowed = -m  # the pool: freed to heaptrack
        if abs(h - m - allowed) > (max(5, 0.005 * m) if tolerance else 0):
            bad.append("%s %s: heaptrack %s, meminst %s" % (" ".join(what), site, h, m))
    if n < minimum:
        bad.append("%s: %d sites compared, expected at least %d" % (" ".join(what), n, minimum))
    return n

def rows(path):
    return list(csv.DictReader(open(path)))

q, args = sys.argv[1], sys.argv[2:]
if q == "top":  # SECTION HT_TEXT MI_TOP_CSV: heaptrack_print -a|-T|-p|-l
    sec, (text, _), top = args[0], ht_text(args[1]), rows(args[2])
    mi = collections.Counter()
    for r in top:
        mi[mi_site(r)] += int(r[COLUMN[sec]])
    compare((sec,), text[sec], mi, sec in BYTES, {"calls": 9, "temporary": 6, "peak": 4, "leaked": 3}[sec])
    # the first row: the pool, freed to heaptrack, has no leaked row there
    top = [r for r in top if sec != "leaked" or mi_site(r) != "libstdc++"]
    first = text[sec] and max(text[sec].values())
    if not top or abs(int(top[0][COLUMN[sec]]) - first) > (0.005 * first if sec in BYTES else 0):
        bad.append("%s: meminst's first row %s, heaptrack's largest %s" % (sec, top and top[0][COLUMN[sec]], first))
elif q == "sizes":  # HT_HISTOGRAM MI_SIZES_CSV: heaptrack_print -H
    ht = collections.Counter()
    for line in open(args[0]):
        size, calls = map(int, line.split())
        ht[str(1 << (size.bit_length() - 1)) if size else "0"] += calls
    mi = {r["from_bytes"]: int(r["calls"]) for r in rows(args[1]) if r["name"] == ""}
    compare(("sizes",), ht, mi, False, 10)
elif q == "folded":  # COST HT_FOLDED MI_FOLDED POOL: heaptrack_print -F
    cost, pool = args[0], int(args[3])
    totals = []
    for path in args[1:3]:
        inclusive = collections.Counter()
        for line in open(path):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            for f in {name(f) for f in stack.split(";") if f}:
                inclusive[f] += int(n)
            inclusive["(total)"] += int(n)
        totals.append(inclusive)
    ht, mi = totals
    ours = ("temp_loop", "keep_many", "grow", "leak_some", "strings", "worker", "workers", "peak", "(total)")
    ht = {f: ht[f] for f in ours}
    if cost == "temporary":
        ht["(total)"] -= 2  # keep_many's and libstdc++'s pool's
    if cost == "leaked":
        ht["(total)"] += pool  # libstdc++'s pool, live at exit to meminst
    compare((cost.replace("allocations", "calls"), "flame graph"), ht, {f: mi[f] for f in ours}, False,
            {"allocations": 9, "temporary": 6, "peak": 4, "leaked": 3}[cost])
elif q == "diff":  # HT_DIFF_TEXT MI_SITES_CSV MI_SUMMARY_CSV: heaptrack_print -d
    text, summary = ht_text(args[0])
    sites, total = rows(args[1]), rows(args[2])[0]
    for sec in COLUMN:
        mi = collections.Counter()
        for r in sites:
            mi[mi_site(r)] += int(r["delta_" + COLUMN[sec]])
        compare((sec, "change"), text[sec], mi, sec in BYTES, 1)
        compare((sec, "change in total"), {"": summary.get(sec)}, {"": int(total["delta_" + COLUMN[sec]])},
                sec in BYTES, 1)
print("\n".join(bad) or "agree")
sys.exit(1 if bad else 0)
PY

# heaptrack's human sizes (1.13M, 5.32K: powers of 1000) in bytes
ht_bytes() {
	awk -v v="$1" 'BEGIN { m = 1; u = substr(v, length(v));
		if (u == "K") m = 1e3; else if (u == "M") m = 1e6; else if (u == "G") m = 1e9;
		if (m > 1) v = substr(v, 1, length(v) - 1); printf "%d\n", v * m }'
}

heaptrack -o "$MI_TMP/ht" "$PROG" >heaptrack.log 2>&1 || { mi_fail "heaptrack ran" "exit $?" heaptrack.log; mi_finish; }
ht_file=$(ls "$MI_TMP"/ht.[gz][zs]*)
heaptrack_print -p 1 -a 1 -T 1 -l 1 -n 100 -H ht.hist "$ht_file" >ht.txt 2>/dev/null
for cost in allocations temporary leaked peak; do
	heaptrack_print -p 0 -a 0 -T 0 -F "ht.$cost.folded" --flamegraph-cost-type $cost "$ht_file" >/dev/null 2>&1
done
ht_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\) .*/\1/p' ht.txt)
ht_temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\) .*/\1/p' ht.txt)
ht_peak=$(ht_bytes "$(sed -n 's/^peak heap memory consumption: //p' ht.txt)")
ht_leak=$(ht_bytes "$(sed -n 's/^total memory leaked: //p' ht.txt)")
[ -n "$ht_calls" ] && [ -n "$ht_temp" ] || { mi_fail "heaptrack_print summary" "unread" ht.txt; mi_finish; }

for mode in mis mim; do
	"$LAUNCH" -q "--$mode" -o "$mode.db" -- "$PROG" >out 2>err || mi_fail "$mode: meminst ran" "exit $?" err
	"$INSPECT" status --total --csv "$mode.db" | awk -F, '$2 == "total"' >total.csv
	calls=$(cut -d, -f9 total.csv) temp=$(cut -d, -f12 total.csv) peak=$(cut -d, -f5 total.csv)
	leak=$(cut -d, -f3 total.csv) reallocs=$(cut -d, -f13 total.csv)
	pool=$("$INSPECT" top --by leaked --csv "$mode.db" | awk -F, '/libstdc\+\+/ && $2 == 1 { s += $6 } END { print s + 0 }')
	why=
	[ "$calls" = "$ht_calls" ] || mi_why_add "calls $calls, heaptrack $ht_calls"
	# 1000 + 10 (grow) + 300 + 1000 (workers) + 1 (peak), known in advance
	[ "$temp" = 2311 ] || mi_why_add "temporary $temp, expected 2311"
	[ "$((ht_temp - temp))" = 2 ] || mi_why_add "temporary $temp, heaptrack $ht_temp (2 more expected)"
	[ "$reallocs" = 9 ] || mi_why_add "reallocs $reallocs, expected 9"
	# heaptrack prints three digits: within 1% (peak), 10 bytes (leaked)
	d=$((peak - ht_peak)); [ "${d#-}" -le $((peak / 100)) ] || mi_why_add "peak $peak, heaptrack $ht_peak"
	d=$((leak - pool - ht_leak)); [ "${d#-}" -le 10 ] ||
		mi_why_add "leaked $leak less libstdc++'s pool $pool, heaptrack $ht_leak"
	mi_verdict "$mode: calls, temporary, peak and leaked agree with heaptrack's" "$why" total.csv

	why=
	"$INSPECT" top --by temporary --csv "$mode.db" >top.csv
	grep -q '^[0-9]*,1000,48000,1000,0,0,.*temp_loop' top.csv || mi_why_add "temp_loop's row"
	grep -q '^[0-9]*,5,5000,0,5000,5000,.*leak_some' top.csv || mi_why_add "leak_some's row"
	"$INSPECT" top --by calls --limit 1 --csv "$mode.db" | tail -n 1 | grep -q ',1000,' ||
		mi_why_add "top --by calls"
	"$INSPECT" sizes --csv "$mode.db" | grep -q '^,,32,63,1501,' || mi_why_add "sizes: 1501 of 32-63 bytes"
	"$INSPECT" sizes --by site --csv "$mode.db" | grep -q '^[0-9]*,temp_loop.*,32,63,1000,100' ||
		mi_why_add "sizes --by site: temp_loop"
	mi_verdict "$mode: top --by temporary|calls and sizes name the sites" "$why" top.csv

	why=
	: >cmp.out
	for by in calls temporary peak leaked; do
		"$INSPECT" top --by $by --limit 100 --csv --table top "$mode.db" >top.$by.csv
		/usr/bin/python3 cmp.py top $by ht.txt top.$by.csv >>cmp.out || mi_why_add "top --by $by"
	done
	mi_verdict "$mode: top --by calls|temporary|peak|leaked: heaptrack_print -a|-T|-p|-l's figures per site" "$why" cmp.out cmp.py
	why=
	"$INSPECT" sizes --csv --table sizes "$mode.db" >sizes.csv
	/usr/bin/python3 cmp.py sizes ht.hist sizes.csv >cmp.out || mi_why_add "sizes"
	mi_verdict "$mode: sizes: heaptrack_print -H's histogram in log2 buckets" "$why" cmp.out cmp.py
	why=
	: >cmp.out
	for cost in allocations temporary leaked peak; do
		metric=$cost
		[ $cost = allocations ] && metric=calls
		"$INSPECT" export --format folded --metric $metric "$mode.db" >mi.$cost.folded
		/usr/bin/python3 cmp.py folded $cost ht.$cost.folded mi.$cost.folded "$pool" >>cmp.out || mi_why_add "$metric"
	done
	mi_verdict "$mode: export --format folded --metric: heaptrack_print -F's stacks per function" "$why" cmp.out cmp.py
done

# the diff of two runs: heap_questions 1 and 2, the launcher's default
heaptrack -o "$MI_TMP/ht2" "$PROG" 2 >heaptrack.log 2>&1 || mi_fail "heaptrack ran" "exit $?" heaptrack.log log
heaptrack_print -p 1 -a 1 -T 1 -l 1 -n 100 -d "$ht_file" "$MI_TMP"/ht2.[gz][zs]* >ht.diff 2>/dev/null
"$LAUNCH" -q -o new.db -- "$PROG" 2 >out 2>err || mi_fail "meminst ran" "exit $?" err stderr
"$LAUNCH" -q -o old.db -- "$PROG" >out 2>err || mi_fail "meminst ran" "exit $?" err stderr
"$INSPECT" diff --csv --table sites old.db new.db >diff.sites.csv
"$INSPECT" diff --csv --table summary old.db new.db >diff.summary.csv
why=
/usr/bin/python3 cmp.py diff ht.diff diff.sites.csv diff.summary.csv >cmp.out || mi_why_add "per site or in total"
grep -c . diff.sites.csv | grep -qx 4 || mi_why_add "not 3 sites changed: $(cat diff.sites.csv)"
mi_verdict "diff OLD.db NEW.db: heaptrack_print -d's changes of calls, temporary, peak and leaked" "$why" cmp.out cmp.py

# a session of a process tree: its main process is compared unless
# FILE:N picks a snapshot of another, and the output says which
"$LAUNCH" -q -o tree.db -- sh -c "\"$PROG\"; \"$PROG\" 2; :" >out 2>err || mi_fail "meminst ran" "exit $?" err stderr
child=$("$INSPECT" list --csv tree.db | awk -F, -v p="$PROG" '$3 == "exit" && $15 == p { print $1 }')
why=
"$INSPECT" diff --csv --table sites "tree.db:$child" new.db >tree.sites.csv
"$INSPECT" diff --csv --table summary "tree.db:$child" new.db >tree.summary.csv
/usr/bin/python3 cmp.py diff ht.diff tree.sites.csv tree.summary.csv >cmp.out || mi_why_add "tree.db:$child's changes"
"$INSPECT" diff tree.db new.db >tree.txt
grep -q '^processes in A: *3$' tree.txt || mi_why_add "not 3 processes in A"
grep -q "A holds 3 processes, compared: pid [0-9]*, its main process" tree.txt || mi_why_add "no note on the process compared"
"$INSPECT" diff "tree.db:$child" new.db | grep -q "A holds 3 processes, compared: pid [0-9]*, that of the snapshot given" ||
	mi_why_add "FILE:N: no note on the process compared"
mi_verdict "diff of a process tree's session: says which process, FILE:N picks a child (heaptrack_print -d's changes)" "$why" cmp.out cmp.py tree.txt diff

why=
"$INSPECT" top --by leaked --type 1 mis.db >out 2>err && mi_why_add "a filter with --by leaked accepted"
"$INSPECT" sizes --by nothing mis.db >out 2>>err && mi_why_add "sizes --by nothing accepted"
sqlite3 mis.db 'DROP TABLE status_event' && "$INSPECT" top --by calls mis.db >out 2>>err &&
	mi_why_add "top --by calls without counters accepted"
[ "$(wc -l <err)" = 3 ] || mi_why_add "not one line each: $(cat err)"
mi_verdict "bad input: one line, non-zero exit" "$why" err

mi_finish
