#!/bin/sh
# bench/shares.sh — issue 28's compensation target on a real program: the
# own-time shares of its 10 largest functions traced (MEMINST=trace=cpu,
# `inspect analyse --json`, compensated and --no-compensate) against perf's
# self shares of the same binary run untraced (`perf record -e cpu-clock`)
# with meminst preloaded but off (MEMINST=off: the same allocator, so the
# same page faults and kernel time in the program's buffers; the hooks
# return at once).
#
# PROGRAM is built with -finstrument-functions (e.g. `gcc -O1 -g
# -fno-inline -finstrument-functions`); it runs in the current directory.
# perf's shares are those of the program's own functions, each sample
# (perf record --call-graph dwarf) counted to the innermost frame in the
# program, as the tracer counts the kernel's and the libraries' time to
# the instrumented function that called them (trace=cpu counts system
# time); samples in the __cyg_profile_* hooks (their cost in an untraced
# run) and samples with no frame in the program are left out.  Functions
# the tracer sees but perf cannot (inlined though instrumented: no symbol
# of their own in the binary) are summed into the caller that calls them
# most, as perf puts their samples in the host: those that perf never saw
# in >= 1000 samples (a function too small for perf to see goes into its
# caller too, at most a few tenths of a point), and the
# functions named
# in --inlined (comma-separated: force-inlined where it matters, though an
# out-of-line copy keeps the symbol).  --keep DIR keeps each run's
# analyses and perf's samples there (comp.N.json, raw.N.json, perf.N.txt).  Each run prints the table
# and the worst |compensated - perf| in points (target: <= 3); with
# --runs N > 1, the same of the N runs' mean shares, and perf's range
# (single runs on a loaded machine differ by a few points).
#
# usage: bench/shares.sh [--runs N] [--freq HZ] [--inlined F,G] [--keep DIR] BUILD_DIR PROGRAM [ARGS...]
set -eu

runs=1 freq=10000 inlined= keep=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) shift; runs=$1 ;;
	--freq) shift; freq=$1 ;;
	--inlined) shift; inlined=$1 ;;
	--keep) shift; keep=$1 ;;
	-*) echo "usage: bench/shares.sh [--runs N] [--freq HZ] [--inlined F,G] [--keep DIR] BUILD_DIR PROGRAM [ARGS...]" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 2 ] || { echo "usage: bench/shares.sh [--runs N] [--freq HZ] [--inlined F,G] [--keep DIR] BUILD_DIR PROGRAM [ARGS...]" >&2; exit 2; }
build=$(cd "$1" && pwd) prog=$2
shift 2
lib=$build/alloc/.libs/libmeminst.so inspect=$build/inspect/inspect
for p in "$lib" "$inspect" "$prog"; do
	[ -e "$p" ] || { echo "bench/shares.sh: $p not found" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "bench/shares.sh: perf not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-shares.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

nm --defined-only "$prog" | awk '$2 ~ /^[tT]$/ {print $3}' |
	grep -vxF -e "$(echo "$inlined" | tr , '\n')" >"$tmp/syms" || true
for r in $(seq "$runs"); do
	perf record -q -e cpu-clock -F "$freq" --call-graph dwarf,8192 -o "$tmp/perf.data" -- \
		env MEMINST=off LD_PRELOAD="$lib" "$prog" "$@" >/dev/null 2>&1
	perf script -i "$tmp/perf.data" -F ip,sym,dso 2>/dev/null >"$tmp/perf.txt"
	rm -f "$tmp/perf.data"
	MEMINST=trace=cpu,trace_file=$tmp/t.trace LD_PRELOAD=$lib "$prog" "$@" >/dev/null 2>&1
	"$inspect" analyse --json "$tmp/t.trace" >"$tmp/comp.json"
	"$inspect" analyse --json --no-compensate "$tmp/t.trace" >"$tmp/raw.json"
	rm -f "$tmp/t.trace"
	if [ -n "$keep" ]; then
		mkdir -p "$keep"
		for f in comp.json raw.json perf.txt; do cp "$tmp/$f" "$keep/${f%.*}.$r.${f##*.}"; done
	fi
	python3 - "$tmp" "$(basename "$prog")" <<'PY'
import json, re, sys
tmp, dso = sys.argv[1], sys.argv[2]
syms = set(open(tmp + "/syms").read().split())
perf = {}
def attribute(frames):  # the innermost frame in the program, not a hook's stub
    for sym, mod in frames:
        if sym.startswith("__cyg_profile"):
            return
        if mod == dso:
            perf[sym] = perf.get(sym, 0) + 1
            return
frames = []
for line in open(tmp + "/perf.txt"):
    m = re.match(r"\s+[0-9a-f]+ (\S+?)(?:\+0x[0-9a-f]+)? \((\S+?)\)$", line.rstrip())
    if m:
        frames.append((m.group(1), m.group(2).rsplit("/", 1)[-1]))
    elif not line.strip() and frames:
        attribute(frames)
        frames = []
if frames:
    attribute(frames)

def hosts(path):
    j = json.load(open(path))
    fns = {f["name"]: f for t in j["threads"] for f in t["functions"]}
    host = {}
    for name in fns:
        h, seen = name, set()
        while h not in syms and h in fns and h not in seen:
            seen.add(h)
            callers = [c for c in fns[h].get("callers", []) if not c["name"].startswith("<")]
            if not callers:
                break
            h = max(callers, key=lambda c: c["calls"])["name"]
        host[name] = h
    return host

def shares(path):
    j = json.load(open(path))
    own = {}
    for t in j["threads"]:
        for f in t["functions"]:
            if not f["name"].startswith("<"):
                h = host.get(f["name"], f["name"])
                own[h] = own.get(h, 0) + f["own_ms"]
    return own, j["tracer_cost"]

# inlined: a function perf never saw in a run of thousands of samples
if sum(perf.values()) >= 1000:
    syms -= {f["name"] for t in json.load(open(tmp + "/comp.json"))["threads"] for f in t["functions"]
             if f["name"] not in perf}
host = hosts(tmp + "/comp.json")
folded = {}
for k, v in perf.items():
    folded[host.get(k, k)] = folded.get(host.get(k, k), 0) + v
perf = folded
comp, cost = shares(tmp + "/comp.json")
raw, _ = shares(tmp + "/raw.json")
def norm(d):
    s = sum(d.values()) or 1
    return {k: 100 * v / s for k, v in d.items()}
perf, comp, raw = norm(perf), norm(comp), norm(raw)
with open(tmp + "/runs.jsonl", "a") as f:
    f.write(json.dumps({"perf": perf, "comp": comp, "raw": raw, "cost": cost}) + "\n")
PY
done
python3 - "$tmp/runs.jsonl" "$(basename "$prog") $*" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]

def table(r, spread):  # the 10 largest, perf's range over the runs when spread
    perf, comp, raw = r["perf"], r["comp"], r["raw"]
    top = sorted(set(perf) | set(comp), key=lambda k: -max(perf.get(k, 0), comp.get(k, 0)))[:10]
    print("%-36s %6s %6s %6s%s" % ("function", "perf", "comp", "raw", "  perf's range" if spread else ""))
    worst = worst_raw = 0
    for k in top:
        p, c, w = perf.get(k, 0), comp.get(k, 0), raw.get(k, 0)
        worst, worst_raw = max(worst, abs(c - p)), max(worst_raw, abs(w - p))
        rng = ("  %.1f-%.1f" % (min(x["perf"].get(k, 0) for x in runs), max(x["perf"].get(k, 0) for x in runs))
               if spread else "")
        print("%-36s %6.1f %6.1f %6.1f%s" % (k[:36], p, c, w, rng))
    return worst, worst_raw

for i, r in enumerate(runs):
    print("## run %d: %s" % (i + 1, sys.argv[2]))
    worst, worst_raw = table(r, False)
    print("worst |comp - perf| %.1f points (raw %.1f); taken off %.1f%% of the profile, event %.1f ns"
          % (worst, worst_raw, r["cost"].get("percent", 0), r["cost"].get("event_ps", 0) / 1000))
if len(runs) > 1:
    print("## the mean of the %d runs' shares" % len(runs))
    mean = {s: {} for s in ("perf", "comp", "raw")}
    for r in runs:
        for s in mean:
            for k, v in r[s].items():
                mean[s][k] = mean[s].get(k, 0) + v / len(runs)
    print("worst |comp - perf| of the means %.1f points (raw %.1f)" % table(mean, True))
PY
