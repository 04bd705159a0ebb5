#!/usr/bin/env python3
"""check_samples.py -- read a meminst trace (include/meminst-trace.h) and
summarise its samples, for the sampling tests until `inspect analyse` shows
them.  Symbolises with the module map of the trace, `readelf -lW` and
`nm` (functions of the executable only, plus "other" for the rest).

usage: check_samples.py TRACE [--exe PATH] [--thread N]
prints, one per line:
  header sample_hz=H sample_clock=C alloc_sample=B flags=F
  samples N frames_mean M threads T weight_ticks W
  time FUNC PERCENT          share of timer samples by innermost function
                             of the executable (weighted by the weight word)
  thread N samples K         timer samples per trace thread
  alloc_samples N
  alloc FUNC BYTES COUNT     estimated bytes and allocations per innermost
                             function of the executable
  counts FUNC N              exact call counts (COUNTS records)
  cost PS                    COUNTS_COST
  resets N                   SAMPLE_RESET records; the samples before the
                             last one are left out of the figures above
"""
import bisect
import collections
import struct
import subprocess
import sys

SAMPLE, ALLOC_SAMPLE, MODULE, PROCESS, COUNTS, RESET, COST = 64, 65, 66, 67, 68, 71, 72
FIXED = [0, 3, 2, 4, 1, 3, 3, 2, 1, 1, 2]


def read_trace(path):
    data = open(path, "rb").read()
    if data[:8] != b"MEMINSTT":
        sys.exit("check_samples: %s: not a meminst trace" % path)
    (version, hsize, pid, ppid, clock, flags, tick_hz, t0, _, _, shz, sclock,
     asample) = struct.unpack_from("<IIIIIIdQQQIIQ", data, 8)
    hdr = dict(version=version, clock=clock, flags=flags, tick_hz=tick_hz,
               sample_hz=shz, sample_clock=sclock, alloc_sample=asample)
    recs = []
    off = hsize
    while off + 32 <= len(data):
        magic, words, thread, stream, _, seq, csum = struct.unpack_from("<IIIHHQQ", data, off)
        if magic != 0x4b4354d1:
            sys.exit("check_samples: bad chunk magic at %d" % off)
        w = struct.unpack_from("<%dQ" % words, data, off + 32)
        off += 32 + 8 * words
        i = 0
        while i < words:
            kind = w[i] & 0xff
            n = FIXED[kind] if kind < len(FIXED) else (w[i + 1] & 0xffffffff)
            if n == 0:
                sys.exit("check_samples: unknown record kind %d" % kind)
            recs.append((thread, stream, kind, w[i:i + n]))
            i += n
    return hdr, recs


class Symbols:
    """Functions of one ELF file, by the run's addresses."""

    def __init__(self, modules, exe):
        self.ranges = []  # (start, end, bias) of exe's segments in the run
        segs = []
        out = subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                segs.append((int(f[1], 16), int(f[2], 16)))  # offset, vaddr
        for start, end, offset, path in modules:
            if path != exe:
                continue
            for soff, svaddr in segs:
                if soff == offset:
                    self.ranges.append((start, end, start - svaddr))
        self.addrs, self.names = [], []
        out = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True,
                             text=True).stdout
        syms = []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTwW":
                syms.append((int(f[0], 16), int(f[1], 16), f[3]))
        syms.sort()
        self.syms = syms
        self.addrs = [s[0] for s in syms]

    def name(self, addr):
        for start, end, bias in self.ranges:
            if start <= addr < end:
                v = addr - bias
                i = bisect.bisect_right(self.addrs, v) - 1
                if i >= 0 and v < self.syms[i][0] + max(self.syms[i][1], 1):
                    return self.syms[i][2]
                return None
        return None


def innermost(sym, frames):
    """The first frame that is a function of the executable (frame 0 is a
    pc, the others return addresses: look up address - 1)."""
    for i, a in enumerate(frames):
        n = sym.name(a if i == 0 else a - 1)
        if n:
            return n
    return "other"


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, exe, only = args[0], None, None
    if "--exe" in args:
        exe = args[args.index("--exe") + 1]
    if "--thread" in args:
        only = int(args[args.index("--thread") + 1])
    hdr, recs = read_trace(path)
    modules = []
    for thread, stream, kind, w in recs:
        if kind == PROCESS and exe is None:
            exe = struct.pack("<%dQ" % (len(w) - 2), *w[2:]).split(b"\0")[0].decode()
        if kind == MODULE:
            plen = w[1] >> 32
            blen = w[5]
            p0 = 6 + (blen + 7) // 8
            path_b = struct.pack("<%dQ" % (len(w) - p0), *w[p0:])[:plen].rstrip(b"\0")
            modules.append((w[2], w[3], w[4], path_b.decode()))
    sym = Symbols(modules, exe)
    print("header sample_hz=%d sample_clock=%d alloc_sample=%d flags=%#x" %
          (hdr["sample_hz"], hdr["sample_clock"], hdr["alloc_sample"], hdr["flags"]))
    time = collections.Counter()
    per_thread = collections.Counter()
    asz = collections.Counter()
    acount = collections.Counter()
    counts = collections.Counter()
    nsamp = nframes = nalloc = weight = 0
    resets = [w[0] >> 8 for _, _, kind, w in recs if kind == RESET]
    since = max(resets) if resets else 0
    for thread, stream, kind, w in recs:
        if kind in (SAMPLE, ALLOC_SAMPLE, COUNTS) and (w[0] >> 8) < since:
            continue
        if kind == SAMPLE and (only is None or thread == only):
            n = w[1] >> 32
            frames = w[3:3 + n]
            nsamp += 1
            nframes += n
            weight += w[2]
            per_thread[thread] += 1
            time[innermost(sym, frames)] += w[2]
        elif kind == ALLOC_SAMPLE:
            n = w[1] >> 32
            nalloc += 1
            f = innermost(sym, w[4:4 + n])
            asz[f] += w[2]
            acount[f] += w[2] / w[3] if w[3] else 0
        elif kind == COUNTS:
            for i in range(w[1] >> 32):
                fn = w[2 + 2 * i]
                counts[sym.name(fn) or hex(fn)] += w[3 + 2 * i]
        elif kind == COST:
            print("cost %d" % w[2])
    print("samples %d frames_mean %.1f threads %d weight_ticks %d" %
          (nsamp, nframes / nsamp if nsamp else 0, len(per_thread), weight))
    for fn, wt in time.most_common():
        print("time %s %.1f" % (fn, 100.0 * wt / weight))
    for t, k in sorted(per_thread.items()):
        print("thread %d samples %d" % (t, k))
    print("alloc_samples %d" % nalloc)
    for fn, b in asz.most_common():
        print("alloc %s %d %d" % (fn, b, acount[fn]))
    for fn, c in counts.most_common():
        print("counts %s %d" % (fn, c))
    print("resets %d" % len(resets))


if __name__ == "__main__":
    main()
