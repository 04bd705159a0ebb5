#!/bin/sh
# bench/trace-truth.sh — does `meminst --trace` tell where a real program's
# time goes?  Own-time shares of its largest functions from four views:
#
#   perf      `perf record -F HZ --call-graph dwarf` of the UNinstrumented
#             build (BARE), each sample counted to its innermost frame in the
#             program (a libc or kernel frame's time to the program's function
#             that called it, as the tracer counts it);
#   perf-fi   the same of the instrumented build (FI) run untraced under
#             MEMINST=off (the hooks return at once): what the instrumented
#             code itself costs, hooks aside;
#   uftrace   `uftrace record --no-libcall` of the -pg build (PG), `uftrace
#             report`'s self times (the kernel's linux:* entries left out);
#   meminst   `meminst --trace` (trace=wall, the launcher's default) of FI,
#             `inspect analyse --json` compensated, and --no-compensate (raw).
#
# Every share is over the program's own functions.  `<alloc>` is given to
# its callers (perf and uftrace count the allocator in the program's
# function that called it); gcc's clones (f.part.0, f.isra.0) are f.
# perf's shares come twice: by symbol ("perf", as perf report shows them)
# and by source function ("perf-src", "fi-src": a function inlined into
# another counted as its own, from perf script's "(inlined)" frames), which
# is what the tracer sees: an instrumented build calls the hooks around
# every inlined copy too.  uftrace's -pg build sees symbols only, so its
# column compares with "perf"; meminst's with "perf-src" (the program as
# built for use) and with "fi-src" (the instrumented program itself, whose
# inlining and code differ: the hooks' calls cost registers and inlining).
# Prints, for the run: a table of the largest functions, the worst
# difference from perf in points, and the elapsed and user time of BARE
# alone against FI traced.  --perf-runs N pools perf's samples of N runs
# (a short run gives perf few samples at 999 Hz).  --keep DIR keeps the raw files, --from DIR analyses them again.
#
# usage: bench/trace-truth.sh [--freq HZ] [--perf-runs N] [--top N] [--keep DIR | --from DIR] BUILD_DIR BARE FI PG [ARGS...]
# e.g.   bench/trace-truth.sh _build ./lua-bare ./lua-fi ./lua-pg bench.lua 8
set -eu

freq=999 top=12 keep= from= perf_runs=1
usage="usage: bench/trace-truth.sh [--freq HZ] [--perf-runs N] [--top N] [--keep DIR | --from DIR] BUILD_DIR BARE FI PG [ARGS...]"
while [ $# -gt 0 ]; do
	case $1 in
	--freq) shift; freq=$1 ;;
	--top) shift; top=$1 ;;
	--perf-runs) shift; perf_runs=$1 ;;
	--keep) shift; keep=$1 ;;
	--from) shift; from=$1 ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
build=$(cd "$1" && pwd) bare=$2 fi=$3 pg=$4
shift 4
lib=$build/alloc/.libs/libmeminst.so inspect=$build/inspect/inspect launcher=$build/session/meminst
for p in "$lib" "$inspect" "$launcher" "$bare" "$fi" "$pg"; do
	[ -e "$p" ] || { echo "bench/trace-truth.sh: $p not found" >&2; exit 1; }
done
for c in perf uftrace python3; do
	command -v $c >/dev/null || { echo "bench/trace-truth.sh: $c not found" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-truth.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tm() { # OUT CMD...: elapsed and user seconds of CMD into OUT
	out=$1; shift
	/usr/bin/time -f "%e %U" -o "$out" "$@" >/dev/null 2>"$tmp/stderr" ||
		{ echo "bench/trace-truth.sh: $* failed:" >&2; cat "$tmp/stderr" >&2; exit 1; }
}

if [ -n "$from" ]; then # analyse the files a --keep kept
	cp "$from"/* "$tmp/"
else
tm "$tmp/time.bare" "$bare" "$@"
for r in $(seq "$perf_runs"); do # samples pooled over the runs
	perf record -q -F "$freq" --call-graph dwarf,8192 -o "$tmp/p.data" -- "$bare" "$@" >/dev/null 2>&1
	perf script -i "$tmp/p.data" -F ip,sym,dso 2>/dev/null >>"$tmp/perf.txt"
	perf record -q -F "$freq" --call-graph dwarf,8192 -o "$tmp/p.data" -- \
		env MEMINST=off LD_PRELOAD="$lib" "$fi" "$@" >/dev/null 2>&1
	perf script -i "$tmp/p.data" -F ip,sym,dso 2>/dev/null >>"$tmp/perf-fi.txt"
	rm -f "$tmp/p.data"
done
tm "$tmp/time.uftrace" uftrace record --no-libcall -d "$tmp/uft" "$pg" "$@"
uftrace report -d "$tmp/uft" --no-pager >"$tmp/uftrace.txt" 2>/dev/null
rm -rf "$tmp/uft"
tm "$tmp/time.fi" env MEMINST=off LD_PRELOAD="$lib" "$fi" "$@"
tm "$tmp/time.meminst" env MEMINST_LIBRARY="$lib" "$launcher" --trace -q -o "$tmp/s.db" -- "$fi" "$@"
"$inspect" analyse --json "$tmp/s.db" >"$tmp/comp.json"
"$inspect" analyse --json --no-compensate "$tmp/s.db" >"$tmp/raw.json"
rm -f "$tmp/s.db"
fi
[ -z "$keep" ] || { mkdir -p "$keep" && cp "$tmp"/*.txt "$tmp"/*.json "$tmp"/time.* "$keep/"; }

python3 - "$tmp" "$(basename "$bare")" "$(basename "$fi")" "$top" <<'PY'
import json, re, sys
tmp, bare_dso, fi_dso, top = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
base = lambda s: s.split(".")[0]

def perf_shares(path, dso):
    """Each sample to its innermost frame in the program (the hooks' stubs
    left out): by symbol, as perf report shows it, and by source function,
    a function the compiler inlined taken as its own (perf script's
    "(inlined)" frames, from the DWARF inline chains)."""
    phys, src, frames = {}, {}, []
    def count():
        inl = None
        for ip, sym, mod in frames:
            if sym.startswith("__cyg_profile"):
                return
            if mod == "inlined":
                inl = inl if inl and inl[0] == ip else (ip, sym)
                continue
            if mod == dso:
                phys[base(sym)] = phys.get(base(sym), 0) + 1
                s = inl[1] if inl and inl[0] == ip else base(sym)
                src[s] = src.get(s, 0) + 1
                return
            inl = None
    for line in open(path):
        m = re.match(r"\s+([0-9a-f]+) (\S+?)(?:\+0x[0-9a-f]+)? \((\S+?)\)$", line.rstrip())
        if m:
            frames.append((m.group(1), m.group(2), m.group(3).rsplit("/", 1)[-1]))
        elif not line.strip() and frames:
            count()
            frames = []
    if frames:
        count()
    return phys, src

def meminst_shares(path):  # by source function; <alloc> to its callers
    j = json.load(open(path))
    own = {}
    for t in j["threads"]:
        for f in t["functions"]:
            if f["name"] == "<alloc>":
                for c in f.get("callers", []):
                    own[c["name"]] = own.get(c["name"], 0) + c["own_ms"]
            elif not f["name"].startswith("<") and f["name"] != "suspend":
                own[f["name"]] = own.get(f["name"], 0) + f["own_ms"]
    return own, j["tracer_cost"]

def uftrace_shares(path):
    unit = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "m": 6e4}
    own, calls = {}, {}
    for line in open(path):
        m = re.match(r"\s*[\d.]+\s+(\w+)\s+([\d.]+)\s+(\w+)\s+(\d+)\s+(\S.*)$", line)
        if m and not m.group(5).startswith("linux:"):
            own[m.group(5)] = own.get(m.group(5), 0) + float(m.group(2)) * unit[m.group(3)]
    return own

def norm(d):
    s = sum(d.values()) or 1
    return {k: 100 * v / s for k, v in d.items()}

perf, perf_src = map(norm, perf_shares(tmp + "/perf.txt", bare_dso))
_, perf_fi = map(norm, perf_shares(tmp + "/perf-fi.txt", fi_dso))
uft_raw = uftrace_shares(tmp + "/uftrace.txt")
uft = {}
for k, v in uft_raw.items():  # -pg builds inline as BARE does; clones by name
    uft[base(k)] = uft.get(base(k), 0) + v
uft = norm(uft)
comp, cost = meminst_shares(tmp + "/comp.json")
raw, _ = meminst_shares(tmp + "/raw.json")
comp, raw = norm(comp), norm(raw)

cols = (("perf", perf), ("perf-src", perf_src), ("fi-src", perf_fi), ("uftrace", uft), ("meminst", comp), ("raw", raw))
rows = sorted(set().union(*(d for _, d in cols)), key=lambda k: -max(d.get(k, 0) for _, d in cols))[:top]
print("%-26s" % "function" + "".join("%9s" % n for n, _ in cols))
for k in rows:
    print("%-26s" % k[:26] + "".join("%9.1f" % d.get(k, 0) for _, d in cols))
def worst(a, b):
    return max((abs(a.get(k, 0) - b.get(k, 0)), k) for k in rows)
for what, a, b in (("meminst - perf-src", comp, perf_src), ("meminst - fi-src", comp, perf_fi),
                   ("raw - fi-src", raw, perf_fi), ("fi-src - perf-src", perf_fi, perf_src),
                   ("uftrace - perf", uft, perf)):
    print("worst |%s|: %.1f points (%s)" % ((what,) + worst(a, b)))
print("tracer cost taken off: %.1f %% of the profile, %d calls, event %.1f ns" % (
    cost.get("percent", 0), cost.get("calls", 0), cost.get("event_ps", 0) / 1000))
t = {n: open(tmp + "/time." + n).read().split() for n in ("bare", "fi", "meminst", "uftrace")}
print("time elapsed/user s: bare %s/%s, instrumented untraced %s/%s, meminst --trace %s/%s, uftrace (-pg) %s/%s" % (
    t["bare"][0], t["bare"][1], t["fi"][0], t["fi"][1], t["meminst"][0], t["meminst"][1], t["uftrace"][0], t["uftrace"][1]))
PY
