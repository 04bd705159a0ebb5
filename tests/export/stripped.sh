#!/bin/sh
# stripped.sh — code without symbols is grouped by function, from the
# unwind tables: tests/export/stripped.c built as a program and a library
# (-O1, so the burn_* functions push registers and have unwind entries of
# several rows), both stripped (strip keeps .eh_frame and .eh_frame_hdr),
# sampled with --sample=1000 and traced (-finstrument-functions, --trace):
#   - in analyse (every sampling style, text and JSON), report, the folded,
#     callgrind, chrome and pprof exports and the html page, every name
#     MODULE+0xN of the two stripped files has N = the start of a function
#     in `nm` of the unstripped build (not the sampled address, nor the
#     start of an unwind row inside the function);
#   - the flat table (JSON) has exactly one row for each of burn_a, burn_b,
#     burn_c, mix (the program), lib_burn_x, lib_burn_y, mix (the library);
#     stripped_lib_run, exported, keeps its name;
#   - the exact trace of the stripped program (--trace --sample) names
#     each function once, by its entry, the same MODULE+0xSTART;
#   - memory (--mim): the stacks of lib_keep's two allocation sites in
#     `top --stacks`, the folded and pprof exports of allocated bytes name
#     the function libstripped.so+0xSTART (one folded line for both sites),
#     never a bare address.
. "$top_srcdir/tests/session/session_lib.sh"
mi_need /usr/bin/python3 python3
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "skip  $MI_NAME: no C compiler"; exit 77; }
command -v strip >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || { echo "skip  $MI_NAME: no strip or nm"; exit 77; }
SRC=$top_srcdir/tests/export/stripped.c

why=
mkdir full
"$CC" -g -O1 -fPIC -shared -DSTRIPPED_LIB -o full/libstripped.so "$SRC" 2>err || mi_why_add "cc (library) exited $?"
"$CC" -g -O1 -o full/prog "$SRC" -Lfull -lstripped '-Wl,-rpath,$ORIGIN' 2>>err || mi_why_add "cc (program) exited $?"
"$CC" -g -O1 -finstrument-functions -o full/progt "$SRC" -Lfull -lstripped '-Wl,-rpath,$ORIGIN' 2>>err ||
	mi_why_add "cc (traced program) exited $?"
for f in libstripped.so prog progt; do
	strip -o "$f" "full/$f" 2>>err || mi_why_add "strip $f exited $?"
	nm "full/$f" >"$f.nm" 2>>err || mi_why_add "nm $f exited $?"
	nm "$f" 2>/dev/null | grep -q ' [tT] ' && mi_why_add "$f still has local symbols after strip"
done
# 15 M rounds: about 0.3 s of CPU, some 300 samples at 1000 Hz
"$LAUNCH" -q --sample=1000 -o sa.db -- ./prog 15000000 >out 2>>err || mi_why_add "meminst --sample exited $?"
"$LAUNCH" -q --trace --sample=1000 -o tr.db -- ./progt 20000 >out 2>>err || mi_why_add "meminst --trace exited $?"
for st in tree callers; do
	"$INSPECT" analyse --style $st --limit 0 sa.db >"sa.$st.txt" 2>>err || mi_why_add "analyse $st exited $?"
	"$INSPECT" analyse --style $st --limit 0 --json sa.db >"sa.$st.json" 2>>err ||
		mi_why_add "analyse $st --json exited $?"
done
ss_outputs sa
ss_outputs tr
"$LAUNCH" -q --mim -o mem.db -- ./prog 1000 >out 2>>err || mi_why_add "meminst --mim exited $?"
"$INSPECT" top --live-at-exit --stacks 10 mem.db >mem.top 2>>err || mi_why_add "top --stacks exited $?"
for ss_fmt in folded pprof; do
	"$INSPECT" export --format $ss_fmt --metric allocated -o mem.$ss_fmt mem.db 2>>err ||
		mi_why_add "export $ss_fmt --metric allocated exited $?"
done
[ -z "$why" ] || { mi_verdict "sessions of the stripped tests/export/stripped.c" "$why" err stderr; mi_finish; }

why=
/usr/bin/python3 - <<'PY' >st.check 2>&1 || mi_why_add "$(tail -n 1 st.check)"
import glob, gzip, json, re
def starts(f):
    """nm of the unstripped build: function name -> address, and the set of starts"""
    names = {}
    for l in open(f + ".nm"):
        p = l.split()
        if len(p) == 3 and p[1] in "tT":
            names[p[2]] = int(p[0], 16)
    return names
mods = {"prog": starts("prog"), "progt": starts("progt"), "libstripped.so": starts("libstripped.so")}
pat = re.compile(r"(?<![\w.])(progt?|libstripped\.so)\+0x([0-9a-f]+)")
def pprof_strings(f):
    """the string table of a pprof profile (field 6 of Profile), one per line"""
    b, i, out = gzip.decompress(open(f, "rb").read()), 0, []
    def varint():
        nonlocal i
        v = s = 0
        while True:
            v |= (b[i] & 0x7f) << s
            s += 7
            i += 1
            if not b[i - 1] & 0x80:
                return v
    while i < len(b):
        key = varint()
        if key & 7 == 0:
            varint()
        elif key & 7 == 2:
            n = varint()
            if key >> 3 == 6:
                out.append(b[i:i + n].decode("utf-8", "replace"))
            i += n
        else:
            i += 8 if key & 7 == 1 else 4
    return "\n".join(out)
def text(f):
    return pprof_strings(f) if f.endswith(".pprof") else open(f, "rb").read().decode("utf-8", "replace")
outs = [f for f in glob.glob("sa.*") + glob.glob("tr.*") + glob.glob("mem.*") if not f.endswith(".db")]
seen = 0
for f in outs:
    for m in pat.finditer(text(f)):
        mod, a = m.group(1), int(m.group(2), 16)
        seen += 1
        assert a in mods[mod].values(), "%s: %s is no function start of %s (nm: %s)" % (
            f, m.group(0), mod, sorted("%s=0x%x" % kv for kv in mods[mod].items()))
assert seen, "no MODULE+0x name in any output"
def want(mod, fn):
    return "%s+0x%x" % (mod, mods[mod][fn])
rows = [r["name"] for r in json.load(open("sa.flat.json"))["functions"]]
for mod, fns in (("prog", ["burn_a", "burn_b", "burn_c", "mix"]), ("libstripped.so", ["lib_burn_x", "lib_burn_y", "mix"])):
    for fn in fns:
        assert rows.count(want(mod, fn)) == 1, "flat: %d rows of %s (%s); rows %s" % (rows.count(want(mod, fn)), want(mod, fn), fn, rows)
assert rows.count("stripped_lib_run") == 1, "flat: stripped_lib_run (exported) not one row: %s" % rows
split = [r for r in rows if pat.match(r)]
assert len(split) == len(set(split)), "flat: a name twice: %s" % rows
for f in ("sa.folded", "sa.callgrind", "sa.chrome", "sa.pprof", "sa.html", "sa.report.txt"):
    for fn in ("burn_a", "burn_b", "burn_c"):
        assert want("prog", fn) in text(f), "%s: %s (%s) missing" % (f, want("prog", fn), fn)
tr = json.load(open("tr.an.json"))
names = [f["name"] for t in tr["threads"] for f in t["functions"]]
for fn in ("burn_a", "burn_b", "burn_c", "mix", "main"):
    assert names.count(want("progt", fn)) == 1, "trace: %s (%s) not one row: %s" % (want("progt", fn), fn, names)
folded = open("tr.folded").read()
assert want("progt", "mix") in folded and want("progt", "burn_c") in folded, "trace folded: %s" % folded[:300]
keep = want("libstripped.so", "lib_keep")
for f in ("mem.top", "mem.pprof"):
    assert keep in text(f), "%s: %s (lib_keep) missing" % (f, keep)
kept = [l for l in open("mem.folded") if keep in l]
assert len(kept) == 1 and kept[0].rsplit(" ", 1)[1].strip() == str(32 * 3100 + 2 * sum(range(32))), \
    "folded: lib_keep's two sites not one line of its bytes: %s" % kept
bare = re.compile(r"(?<![\w+])0x[0-9a-f]{6,}")
for f in ("mem.top", "mem.folded"):
    for l in open(f):
        if "libstripped" in l or "prog" in l:
            assert not bare.search(l), "%s: a bare address: %s" % (f, l)
print("%d names MODULE+0xSTART, all nm's starts; one flat row per function; lib_keep's stacks by entry" % seen)
PY
mi_verdict "stripped code: one function per unwind entry, named MODULE+0xSTART everywhere" "$why" st.check check
mi_finish
