#!/usr/bin/env python3
"""analyse_check.py — the assertions of tests/trace/ on `inspect analyse --json`.

    analyse_check.py check JSON TARGET_OUT CASE CLOCK
        CNT exact for the functions the target printed ("fn NAME ADDR COUNT"),
        per-case rules (threads, suspend, <alloc>), and for every thread
        OWN <= ACC and the sum of OWN ~ the thread's OWN; "from CALLER NAME
        COUNT" lines: NAME called COUNT times by CALLER (all threads).
    analyse_check.py same JSON_A JSON_B
        The two analyses have the same threads, functions and caller->called
        pairs with the same CNT, and the functions the same bytes and blocks
        allocated (an event trace and an in-process profile of runs of the
        same deterministic program).

Prints one line per problem; exit status 1 when there is one.
"""
import json
import sys

SLACK_MS = 0.01  # the JSON's times are rounded to microseconds


def load(path):
    with open(path) as f:
        return json.load(f)


def fn(thread, name):
    for f in thread["functions"]:
        if f["name"] == name:
            return f
    return None


def general(j, why):
    for t in j["threads"]:
        own_sum = 0.0
        for f in t["functions"]:
            own_sum += f["own_ms"]
            if f["own_ms"] > f["acc_ms"] + SLACK_MS:
                why.append("thread %d %s: OWN %.3f > ACC %.3f" % (t["thread"], f["name"], f["own_ms"], f["acc_ms"]))
        if abs(own_sum - t["own_ms"]) > 0.01 * t["own_ms"] + SLACK_MS * len(t["functions"]):
            why.append("thread %d: sum of OWN %.3f, thread OWN %.3f" % (t["thread"], own_sum, t["own_ms"]))
        if t["acc_ms"] and t["own_ms"] > t["acc_ms"] * 1.01 + SLACK_MS:
            why.append("thread %d: OWN %.3f > ACC %.3f" % (t["thread"], t["own_ms"], t["acc_ms"]))


def expected(out):
    """(name, count) the target printed."""
    with open(out) as f:
        return [(w[1], int(w[3])) for w in (line.split() for line in f) if len(w) == 4 and w[0] == "fn"]


def callers_of(j, name):
    """{caller: calls of name by it} over all threads"""
    r = {}
    for t in j["threads"]:
        f = fn(t, name)
        for c in f["callers"] if f else []:
            r[c["name"]] = r.get(c["name"], 0) + c["calls"]
    return r


def check_from(j, out, why):
    with open(out) as f:
        for w in (line.split() for line in f):
            if len(w) == 4 and w[0] == "from":
                got = callers_of(j, w[2]).get(w[1], 0)
                if got != int(w[3]):
                    why.append("%s called %d times by %s, expected %s (callers: %s)" %
                               (w[2], got, w[1], w[3], callers_of(j, w[2])))


def cnt(thread, name):
    f = fn(thread, name)
    return f["calls"] if f else 0


def check(j, out, case, clock, why):
    general(j, why)
    threads = j["threads"]
    if not threads:
        why.append("no thread in the analysis")
        return
    main = threads[0]
    check_from(j, out, why)
    if case in ("longjmp", "siglongjmp"):
        # after() runs after each jump: its time is run's, not the dead deeps'
        d, a = fn(main, "deep"), fn(main, "after")
        if d and a and d["acc_ms"] * 2 > a["acc_ms"]:
            why.append("deep ACC %.3f ms, after ACC %.3f: after's time charged to deep" % (d["acc_ms"], a["acc_ms"]))
    if case == "threads":
        if len(threads) != 5:
            why.append("%d threads, expected 5" % len(threads))
        leafs = sorted(cnt(t, "leaf") for t in threads[1:])
        if leafs != [1000, 2000, 3000, 4000]:
            why.append("leaf per thread: %s" % leafs)
        for t in threads[1:]:
            if cnt(t, "worker") != 1:
                why.append("thread %d: worker CNT %d" % (t["thread"], cnt(t, "worker")))
    elif case != "fork":
        for name, want in expected(out):
            if cnt(main, name) != want:
                why.append("%s CNT %d, expected %d" % (name, cnt(main, name), want))
    if case == "rec":
        f = fn(main, "fib")
        callers = {r["name"]: r["calls"] for r in f["callers"]} if f else {}
        if callers.get("fib") != 8360 or callers.get("run") != 1:
            why.append("fib's callers: %s" % callers)
    if case == "sleep":
        s = fn(main, "suspend")
        if not s or s["calls"] != 3:
            why.append("suspend: %s, expected CNT 3" % (s and s["calls"]))
        elif clock == "wall" and s["acc_ms"] < 55:
            why.append("suspend ACC %.3f ms, expected >= 55 (3 x 20 ms asleep)" % s["acc_ms"])
        elif clock == "cpu" and s["acc_ms"] > 30:
            why.append("suspend ACC %.3f ms of CPU time while asleep" % s["acc_ms"])
        nap = fn(main, "napper")
        if s and nap and s["own_ms"] > SLACK_MS:
            why.append("suspend OWN %.3f, expected 0" % s["own_ms"])
        if clock == "wall" and nap and nap["acc_ms"] < 55:
            why.append("napper ACC %.3f does not hold its sleeps" % nap["acc_ms"])
    if case == "alloc":
        a = fn(main, "<alloc>")
        if not a or a["calls"] < 2000:
            why.append("<alloc> CNT %s, expected >= 2000 (1000 malloc, 1000 free)" % (a and a["calls"]))
        elif abs(a["own_ms"] - a["acc_ms"]) > SLACK_MS:
            # a leaf: ACC is OWN, also when records inside an allocator
            # call came first (a flush's, a <trace-wait>: out of both)
            why.append("<alloc> OWN %.3f != ACC %.3f" % (a["own_ms"], a["acc_ms"]))
        elif not any(r["name"] == "allocator" and r["calls"] >= 2000 for r in a["callers"]):
            why.append("<alloc> not called 2000 times from allocator")


# pseudo functions that come from the machine's timing, not the program:
# a pre-emption under load, the writer thread falling behind
TIMING = ("<preempted>", "<trace-wait>")


def shape(j):
    """{thread index: {function: (cnt, memory)}}, {thread index: {(caller, called): cnt}}"""
    ts = []
    for t in j["threads"]:
        fs = [f for f in t["functions"] if f["name"] not in TIMING]
        fns = {f["name"]: (f["calls"], f["own_bytes"], f["acc_bytes"], f["own_blocks"], f["acc_blocks"])
               for f in fs}
        pairs = {(r["name"], f["name"]): r["calls"] for f in fs for r in f["callers"]}
        ts.append((fns, pairs))
    # the first thread first; the others start in any order: sort them by
    # what they did
    ts[1:] = sorted(ts[1:], key=lambda x: sorted(x[0].items()))
    return dict(enumerate(x[0] for x in ts)), dict(enumerate(x[1] for x in ts))


def same(a, b, why):
    fa, pa = shape(a)
    fb, pb = shape(b)
    if len(fa) != len(fb):
        why.append("%d threads against %d" % (len(fa), len(fb)))
        return
    for i in fa:
        if fa[i] != fb[i]:
            keys = sorted(set(fa[i]) | set(fb[i]))
            why.append("thread %d functions differ: %s" %
                       (i, [(k, fa[i].get(k), fb[i].get(k)) for k in keys if fa[i].get(k) != fb[i].get(k)][:6]))
        if pa[i] != pb[i]:
            keys = sorted(set(pa[i]) | set(pb[i]))
            why.append("thread %d pairs differ: %s" %
                       (i, [(k, pa[i].get(k), pb[i].get(k)) for k in keys if pa[i].get(k) != pb[i].get(k)][:6]))


def main():
    why = []
    if len(sys.argv) == 6 and sys.argv[1] == "check":
        check(load(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], why)
    elif len(sys.argv) == 4 and sys.argv[1] == "same":
        same(load(sys.argv[2]), load(sys.argv[3]), why)
    else:
        print("usage: analyse_check.py check JSON OUT CASE CLOCK | same JSON JSON", file=sys.stderr)
        return 2
    for w in why:
        print(w)
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main())
