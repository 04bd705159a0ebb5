# fd_numbers.sh — the descriptor numbers a program gets are those it gets
# without meminst, whatever runs beside it: the snapshot service (control
# channel, signal, peak and interval snapshots), the trace file, per-thread
# CPU sampling, wall-clock sampling, and every launcher run.  A program's
# open, dup and pipe return the lowest free number: meminst's descriptors
# took 3 to 5, so a program's first file was 6, not 3 (and a listing of
# /proc/self/fd showed them).  python3 prints its first numbers and its
# descriptors below 100; mis and mim with each backend, and `meminst`.
. "$top_srcdir/tests/integration/lib.sh"

PY=/usr/bin/python3
mi_need "$PY" python3

numbers() {
	mi_x "$PY" -c 'import os, threading
t = threading.Thread(target=lambda: sum(range(100000)))
t.start(); t.join()
print(os.open("/dev/null", os.O_RDONLY), os.dup(0), os.pipe())
print(sorted(int(f) for f in os.listdir("/proc/self/fd") if int(f) < 100))'
}

mi_reference "descriptor numbers" numbers || mi_finish
for backend in $MEMINST_BACKENDS; do
	for set in "mis,control=on" "mim,control=on" \
		"mim,snapshot=$MI_TMP/s.%p.db,snapshot_at=exit+peak+signal,interval=10ms" \
		"mim,alloc_sample=1024,trace_file=$MI_TMP/a.%p.trace" \
		"off,sample=1000,trace_file=$MI_TMP/c.%p.trace" \
		"off,sample=1000,sample_clock=wall,trace_file=$MI_TMP/w.%p.trace"; do
		mi_case "descriptor numbers, $(echo "$set" | sed "s|$MI_TMP/||g")/$backend" \
			"$set,backend=$backend" numbers
	done
done

# Wall-clock sampling reads /proc/self/task/TID/syscall at every tick: the
# read is made by a thread of meminst's with a descriptor table of its own,
# else each open held the lowest free number for a moment, and a program
# opening files in a loop beside it got 4 for 3 (hundreds of times in 300,000
# opens; make distcheck failed on the case above).  The other thread keeps
# running (the sampler looks at running threads) in SHA-256 over 1 MiB,
# without Python's lock: a thread spinning in Python code made each open
# wait for the lock, up to 5 ms (the switch interval) a call, and on a
# busy machine the 300,000 opens took more than the 300 s a run has,
# without meminst too.
churn() {
	mi_x "$PY" -c 'import hashlib, os, threading
stop = False
buf = bytes(1 << 20)
def spin():
    while not stop: hashlib.sha256(buf)
t = threading.Thread(target=spin); t.start()
moved = sum(1 for i in range(300000) if (lambda fd: (os.close(fd), fd != 3)[1])(os.open("/dev/null", os.O_RDONLY)))
stop = True; t.join()
print("moved", moved)'
}
why=
for round in 1 2; do
	got=$(MI_MEMINST="off,sample=1000,sample_clock=wall,trace_file=$MI_TMP/r.%p.trace" churn 2>"$MI_TMP/churn.err")
	[ "$got" = "moved 0" ] || mi_why_add "round $round: '$got' (the first open of 300,000 was not always 3)"
done
mi_verdict "descriptor numbers while wall-clock sampling ticks, 300,000 opens" "$why" "$MI_TMP/churn.err" stderr

# A program that puts files of its own on the numbers of meminst's CPU
# sampling events (high ones: dup2, bash's exec 1000>file), then ends the
# threads they sampled: each thread's event was closed by number as it
# ended, which closed the program's file there (its next write failed with
# EBADF).  The event is closed only while the number is still the event.
taken() {
	mi_x "$PY" -c 'import os, threading
go = threading.Event()
ts = [threading.Thread(target=go.wait) for i in range(4)]
for t in ts: t.start()
ev = [n for n in map(int, os.listdir("/proc/self/fd"))
      if os.path.exists("/proc/self/fd/%d" % n) and os.readlink("/proc/self/fd/%d" % n) == "anon_inode:[perf_event]"]
d = os.environ["MI_TMP"]
for n in ev:
    fd = os.open("%s/taken.%d" % (d, n), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, n, inheritable=False); os.close(fd)
go.set()
for t in ts: t.join()
bad = []
for n in ev:
    try:
        os.write(n, b"mine %d" % n)
        os.close(n)
    except OSError as e: bad.append("%d: %s" % (n, e.strerror))
    if open("%s/taken.%d" % (d, n)).read() != "mine %d" % n: bad.append("%d: not in its file" % n)
print(len(ev), "events", bad)'
}
why=
got=$(MI_TMP=$MI_TMP MI_MEMINST="off,sample=1000,trace_file=$MI_TMP/e.%p.trace" taken 2>"$MI_TMP/taken.err")
case "$got" in
0\ events*) echo "skip  files on the numbers of sampling events: no perf events here (POSIX timers)" ;;
*\ events\ \[\]) mi_verdict "files of the program's on the numbers of sampling events: kept" "" "$MI_TMP/taken.err" stderr ;;
*) mi_verdict "files of the program's on the numbers of sampling events: kept" "'$got'" "$MI_TMP/taken.err" stderr ;;
esac

# The launcher: the snapshot service, the trace and sampling at once.
launched() {
	"$top_builddir/session/meminst" --library="$MEMINST_LIB" -o "$MI_TMP/sess" \
		"$PY" -c 'import os
print(os.open("/dev/null", os.O_RDONLY), os.dup(0), os.pipe())
print(sorted(int(f) for f in os.listdir("/proc/self/fd") if int(f) < 100))' 2>"$MI_TMP/launch.err"
}
plain() {
	"$PY" -c 'import os
print(os.open("/dev/null", os.O_RDONLY), os.dup(0), os.pipe())
print(sorted(int(f) for f in os.listdir("/proc/self/fd") if int(f) < 100))'
}
why=
want=$(plain)
got=$(launched)
[ "$got" = "$want" ] || mi_why_add "meminst: '$got', plain: '$want'"
mi_verdict "descriptor numbers under the launcher" "$why" "$MI_TMP/launch.err" stderr
mi_finish
