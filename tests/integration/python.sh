# python.sh — Debian's python3 under the preload: an allocation-heavy script
# (dicts, lists, strings, bytes, four threads) with PYTHONMALLOC=malloc so
# that every object goes through malloc, and `python3 -m json.tool` on a
# generated JSON document of a few MB.  Output is compared with an
# uninstrumented run.  /usr/bin/python3 is named in full: a pyenv shim may
# come first in PATH.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
mi_need $PY python3
export PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1

cat >"$MI_TMP/heavy.py" <<'PY'
import collections, hashlib, threading

def work(seed, n):
    d = {}
    for i in range(n):
        d["k%d-%d" % (seed, i)] = [i, str(i) * (i % 7), {"x": i, "y": (i, seed)}]
    keys = sorted(d, key=lambda s: s[::-1])
    digest = hashlib.sha1("".join(keys[:2000]).encode()).hexdigest()
    for k in keys[::2]:
        del d[k]
    return len(d), digest, sum(len(v[1]) for v in d.values())

results = [None] * 4
def run(i):
    results[i] = work(i, 30000)
threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for r in results:
    print(*r)

blobs = [bytes(range(256)) * (i % 40) for i in range(20000)]
print(sum(map(len, blobs)))
words = " ".join("w%d" % (i * 7919 % 5000) for i in range(200000)).split()
print(collections.Counter(words).most_common(3))
s = ""
for i in range(20000):
    s += chr(65 + i % 26)
print(len(s), s[-10:], s.lower().count("q"))
nested = [[j for j in range(i % 100)] for i in range(20000)]
print(sum(len(x) for x in nested))
PY

cat >"$MI_TMP/gen.py" <<'PY'
import json, sys
items = [{"id": i, "name": "item-%d" % i, "tags": ["t%d" % (i % 17), "u%d" % (i % 5)],
          "price": i * 0.25, "nested": {"a": [i, i + 1, None, True], "b": "x" * (i % 30)}}
         for i in range(25000)]
json.dump({"items": items}, sys.stdout)
PY
$PY "$MI_TMP/gen.py" >"$MI_TMP/big.json" || exit 99

heavy() { PYTHONMALLOC=malloc mi_x $PY "$MI_TMP/heavy.py"; }
json_tool() { mi_x $PY -m json.tool --sort-keys "$MI_TMP/big.json"; }

mi_compare python3 heavy
mi_compare "python3 json.tool" json_tool
mi_finish
