#!/bin/sh
# bench/peers-time.sh — meminst's trace and sampler next to other time
# profilers: slowdown, peak memory, data written and analysis time.
#
# Tools, each run on the same workloads in one invocation:
#   bare        the plain -O2 build, no tool
#   bare-fi     the -finstrument-functions build, no tool (glibc's empty
#               hooks): what the instrumentation costs by itself
#   mi-trace    MEMINST=trace=wall, events to a file (the -fi build)
#   mi-profile  MEMINST=trace=wall,trace_output=profile (the -fi build)
#   mi-sample   MEMINST=sample=1000,sample_clock=cpu (the plain build)
#   mi-swall    MEMINST=sample=1000,sample_clock=wall (the plain build)
#   perf        perf record -F 1000 -g --no-bpf-event (the plain build;
#               -e cpu-clock when the default event is refused).  Without
#               --no-bpf-event perf 6.1 adds a fixed ~1 s of idle wall
#               time at exit (its BPF side-band thread's poll timeout).
#   gprof       the -pg build, which writes gmon.out itself
#   uftrace     uftrace record on the -fi build
#   uftrace-pg  uftrace record on the -pg build
# A tool that is not installed or not permitted is skipped with a line.
#
# Workloads:
#   calls   bench_trace: 10M calls of one small non-inlined function
#           (plain: bench_trace_bare, -fi: bench_trace, -pg: bench_trace_pg)
#   cpu     bench_cpu 120 (~1 s; a recursive evaluator, ~170M calls in
#           all; bench_cpu, bench_cpu_fi, bench_cpu_pg).  The tracers
#           (mi-trace, mi-profile, uftrace*) run 1/40 of it (3 iterations,
#           ~4M calls, ~170 MB of trace), against a bare run of 1/40.
#   python  /usr/bin/python3 running a CPU-bound script (recursive fib and
#           dict counting, ~1 s): unmodified, so samplers and perf only.
#
# Columns: wall is the median over the repetitions of the whole run's wall
# time (bench/bench_maxrss), ratio = wall / bare wall of the same scale;
# cpu_s the user+system time of all its processes; loop is the program's
# own figure over its loop only, as a ratio to bare's (calls: ns per call of
# the timed loop; cpu: CPU ms of the process; python: wall ms of the loop),
# so that fixed start-up and exit costs are left out; added/call (calls
# only) is (wall - bare wall) / calls and loop+/call the same from the
# timed loop; maxrss the largest process of the run (the tool's own too);
# data the bytes the tool left in its output directory; analysis the wall
# time and peak memory of turning the data into a report (inspect analyse,
# perf report --stdio, gprof, uftrace report), output thrown away.
#
# Goal (printed at the end): meminst's traced-call cost below uftrace's,
# comparing added/call of mi-trace and uftrace on the calls workload.
#
# usage: bench/peers-time.sh [--quick] [--reps N] [--cap SECONDS] [BUILD_DIR]
#   BUILD_DIR   the build tree (default: $top_builddir, else the tree that
#               holds this script's bench_trace)
#   --quick     1 repetition at 1/10 the scale: a smoke run (~30 s)
#   --reps N    repetitions of every run (default 5; the median is shown)
#   --cap S     time limit of one run (default 120 s)
# Environment: TMPDIR: where every tool writes its data (default /dev/shm
# when writable, so that the disk is not what is measured; all tools alike).
set -eu

reps=5
quick=1
cap=120
build=
. "$(dirname "$0")/bench-lib.sh"
bench_peer_options peers-time.sh "$@"

build=$(bench_build_dir peers-time.sh bench/bench_trace "$build")
b=$build/bench
maxrss=$b/bench_maxrss
lib=$build/alloc/.libs/libmeminst.so
inspect=$build/inspect/inspect
python=/usr/bin/python3
bench_need peers-time.sh "$build" "$maxrss" "$lib" "$inspect" "$b/bench_trace" "$b/bench_trace_bare" "$b/bench_cpu" "$b/bench_cpu_fi"
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-peers-time.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
raw=$tmp/raw
: >"$raw"

cat >"$tmp/cpu.py" <<'EOF'
import sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def words(n):
    d = {}
    for i in range(n):
        w = "w%d" % (i * 7919 % 1000)
        d[w] = d.get(w, 0) + 1
    return len(d)
t = time.perf_counter()
acc = 0
for r in range(int(sys.argv[1])):
    acc += fib(20) + words(20000)
print("acc", acc, "loop_ms %.1f" % ((time.perf_counter() - t) * 1e3))
EOF

# ------------------------------------------------------------- tools --
# A line per run: tool workload divisor build prefix (words; @T is the
# per-run data directory, "-" no prefix).  The tracers run the cpu
# workload at 1/40: 75M traced calls per second would write ~3 GB.
tools="bare - plain -
bare-fi - fi -
mi-trace tr fi env LD_PRELOAD=$lib MEMINST=trace=wall,trace_file=@T/meminst.%p.trace
mi-profile tr fi env LD_PRELOAD=$lib MEMINST=trace=wall,trace_output=profile,trace_file=@T/meminst.%p.prof
mi-sample - plain env LD_PRELOAD=$lib MEMINST=sample=1000,sample_clock=cpu,trace_file=@T/meminst.%p.trace
mi-swall - plain env LD_PRELOAD=$lib MEMINST=sample=1000,sample_clock=wall,trace_file=@T/meminst.%p.trace"

# perf_probe ARGS: whether `perf record ARGS` can record `true` here
perf_probe() {
	perf record -q "$@" -F 1000 -g -o "$tmp/probe.data" -- true >/dev/null 2>>"$tmp/probe.err"
}
if ! command -v perf >/dev/null; then
	echo "peers-time.sh: perf not installed: skipped (apt-get install linux-perf)"
else
	# --no-bpf-event: without it, perf's side-band thread (BPF program
	# events, nothing to do with these workloads) holds every exit for up
	# to its 1 s poll timeout, a fixed second that is no profiling cost.
	perf_nobpf=--no-bpf-event
	perf_probe $perf_nobpf || perf_nobpf=
	if perf_probe $perf_nobpf; then
		perf_ev=
	elif perf_probe $perf_nobpf -e cpu-clock; then
		echo "peers-time.sh: perf record: default event refused, using -e cpu-clock"
		perf_ev="-e cpu-clock"
	else
		perf_ev=none
		echo "peers-time.sh: perf record refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): skipped: $(grep -v '^ *$' "$tmp/probe.err" | tail -n 1)"
	fi
	[ "$perf_ev" = none ] || tools="$tools
perf - plain perf record -q $perf_nobpf $perf_ev -F 1000 -g -o @T/perf.data --"
fi
rm -f "$tmp/probe.data" "$tmp/probe.err"
if ! command -v gprof >/dev/null; then
	echo "peers-time.sh: gprof not installed: skipped (apt-get install binutils)"
elif [ ! -x "$b/bench_trace_pg" ] || [ ! -x "$b/bench_cpu_pg" ]; then
	echo "peers-time.sh: $b/bench_*_pg not built: gprof skipped"
else
	tools="$tools
gprof - pg -"
fi
if command -v uftrace >/dev/null; then
	tools="$tools
uftrace tr fi uftrace record --no-pager -d @T/uftrace.data"
	[ -x "$b/bench_trace_pg" ] && tools="$tools
uftrace-pg tr pg uftrace record --no-pager -d @T/uftrace.data"
else
	echo "peers-time.sh: uftrace not installed: skipped (apt-get install uftrace)"
fi
workloads="calls cpu"
if [ -x "$python" ]; then
	workloads="$workloads python"
else
	echo "peers-time.sh: $python not found: python workload skipped"
fi

# applies WORKLOAD TOOL: whether the tool can profile the workload
applies() {
	case $1:$2 in
	python:bare | python:mi-sample | python:mi-swall | python:perf) return 0 ;;
	python:*) return 1 ;;
	esac
	return 0
}

# divisor WORKLOAD CLASS: the scale divisor of a run ("tr": a tracer)
divisor() {
	if [ "$1" = cpu ] && [ "$2" = tr ]; then echo 40; else echo 1; fi
}

# workload_args WORKLOAD BUILD DIVISOR: set wl_cmd (the command line) and
# wl_prog (the program, for gprof) at the base scale divided by DIVISOR
workload_args() {
	_sfx=
	[ "$2" = plain ] || _sfx=_$2
	case $1 in
	calls)
		case $2 in plain) _sfx=_bare ;; fi) _sfx= ;; esac
		wl_prog=$b/bench_trace$_sfx
		wl_cmd="$wl_prog $(awk -v d="$3" -v q="$quick" 'BEGIN { printf "%d", 10000000 / d / q }')" ;;
	cpu)
		wl_prog=$b/bench_cpu$_sfx
		wl_cmd="$wl_prog $(awk -v d="$3" -v q="$quick" 'BEGIN { r = int(120 / d / q + 0.5); print r < 1 ? 1 : r }')" ;;
	python)
		wl_prog=$python
		wl_cmd="$python $tmp/cpu.py $(awk -v d="$3" -v q="$quick" 'BEGIN { r = int(150 / d / q + 0.5); print r < 1 ? 1 : r }')" ;;
	esac
}

# analyse TOOL: time the tool's report over the data in $tmp/run
analyse() {
	rm -f "$tmp/a"
	_f=
	for _g in "$tmp"/run/meminst.*; do [ -e "$_g" ] && _f=$_g && break; done
	case $1 in
	mi-*) [ -n "$_f" ] || return 0; set -- "$inspect" analyse "$_f" ;;
	perf) set -- perf report -i perf.data --stdio ;;
	gprof) set -- gprof "$wl_prog" gmon.out ;;
	uftrace*) set -- uftrace report --no-pager -d uftrace.data ;;
	*) return 0 ;;
	esac
	(cd "$tmp/run" && timeout -k 5 "$cap" "$maxrss" "$tmp/a" "$@" >/dev/null 2>&1) || true
	sed 's/^/an_/; s/ / an_/g' "$tmp/a" 2>/dev/null || true
}

# run_one TOOL CLASS BUILD PREFIX WORKLOAD: one measured run, appended to $raw
run_one() {
	_tool=$1 _build=$3 _pre=$4 _wl=$5
	_div=$(divisor "$_wl" "$2")
	workload_args "$_wl" "$_build" "$_div"
	rm -rf "$tmp/run" && mkdir "$tmp/run"
	# shellcheck disable=SC2046 # the prefix is words on purpose
	set -- $(echo "$_pre" | sed "s|^-\$||; s|@T|$tmp/run|g")
	set -- timeout -k 5 "$cap" env -u LD_PRELOAD -u MEMINST "$@"
	# shellcheck disable=SC2086
	(cd "$tmp/run" && "$maxrss" "$tmp/m" "$@" $wl_cmd >"$tmp/out" 2>&1) || true
	read -r _m <"$tmp/m" || _m="wall_ns=0 cpu_ns=0 maxrss_kb=0 status=1"
	_in=$(sed -n 's/.*ns_per_call \([0-9.]*\).*/\1/p; s/.*cpu_ms=\([0-9.]*\).*/\1/p; s/.*loop_ms \([0-9.]*\).*/\1/p' "$tmp/out" | head -n 1)
	_data=$(du -sb "$tmp/run" | cut -f1)
	_an=
	case $_m in *status=0) _an=$(analyse "$_tool") ;; esac
	echo "tool=$_tool wl=$_wl div=$_div calls=$(echo "$wl_cmd" | awk '{ print $NF }') inner=${_in:-0} data=$_data $_m ${_an:-an_wall_ns=0 an_maxrss_kb=0}" >>"$raw"
	bench_run_status peers-time.sh "$_tool" "$_wl" "$_m" "$tmp/out"
	rm -rf "$tmp/run"
}

# The bare run at every scale a workload uses, then the tools.
runs=$(printf '%s\n' "$tools" | awk '
	$1 == "bare" { print; print "bare tr plain -"; next } { print }')

echo "# peers-time: $reps repetitions, scale 1/$quick, $(date -u '+%Y-%m-%d %H:%M UTC'), nproc $(nproc), data in ${TMPDIR:-/tmp}"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
start=$(date +%s)
r=1
while [ "$r" -le "$reps" ]; do
	for wl in $workloads; do
		printf '%s\n' "$runs" | while read -r tool class bld pre; do
			applies "$wl" "$tool" || continue
			[ "$tool" = bare ] && [ "$class" = tr ] && [ "$(divisor "$wl" tr)" = 1 ] && continue
			run_one "$tool" "$class" "$bld" "$pre" "$wl"
		done
	done
	echo "# repetition $r done ($(( $(date +%s) - start )) s)"
	r=$((r + 1))
done

# ---------------------------------------------------------------- table --
awk "$BENCH_AWK"'
function mb(kb) { return kb / 1024 }
{
	k = run_key()
	wall[k] = wall[k] " " val("wall_ns") / 1e9; cpu[k] = cpu[k] " " val("cpu_ns") / 1e9
	inner[k] = inner[k] " " val("inner"); rss[k] = rss[k] " " val("maxrss_kb"); data[k] = data[k] " " val("data")
	an[k] = an[k] " " val("an_wall_ns") / 1e9; anrss[k] = anrss[k] " " val("an_maxrss_kb"); calls[k] = val("calls")
}
END {
	printf "%-10s %-6s %5s %7s %6s %6s %6s %10s %9s %7s %8s %7s %6s\n", "tool", "wl", "scale", "wall_s", "ratio",
		"cpu_s", "loop", "added/call", "loop+/call", "maxrss", "data_MB", "anal_s", "an_MB"
	for (i = 1; i <= nk; i++) {
		split(keys[i], p, SUBSEP); t = p[1]; w = p[2]; d = p[3]
		bk = "bare" SUBSEP w SUBSEP d
		if (keys[i] in bad) { printf "%-10s %-6s %5s %7s\n", t, w, "/" d, bad[keys[i]]; continue }
		m = median(wall[keys[i]]); mbw = median(wall[bk]); in_ = median(inner[keys[i]]); inb = median(inner[bk])
		add = loopadd = "-"
		if (w == "calls") {
			add = sprintf("%.1f", (m - mbw) * 1e9 / calls[keys[i]]); loopadd = sprintf("%.1f", in_ - inb)
			addv[t] = add; loopv[t] = loopadd; ratv[t] = m / mbw
		}
		a = median(an[keys[i]]); ar = median(anrss[keys[i]])
		printf "%-10s %-6s %5s %7.3f %6.2f %6.2f %6.2f %10s %9s %7.1f %8.3f %7s %6s\n", t, w, "/" d, m, m / mbw,
			median(cpu[keys[i]]), (inb > 0 ? in_ / inb : 0), add, loopadd, mb(median(rss[keys[i]])),
			median(data[keys[i]]) / 1048576, (a > 0 ? sprintf("%.3f", a) : "-"), (ar > 0 ? sprintf("%.1f", mb(ar)) : "-")
	}
	printf "\n"
	if (!("mi-trace" in addv) || !("uftrace" in addv))
		printf "goal: meminst trace added/call below uftrace'"'"'s: not measured (%s)\n", ("uftrace" in addv) ? "no mi-trace figure" : "no uftrace figure"
	else
		printf "goal: meminst trace added/call %s ns vs uftrace %s ns: %s (whole run, %.2fx vs %.2fx bare; timed loop: %s vs %s ns)\n",
			addv["mi-trace"], addv["uftrace"], addv["mi-trace"] + 0 < addv["uftrace"] + 0 ? "met" : "missed",
			ratv["mi-trace"], ratv["uftrace"], loopv["mi-trace"], loopv["uftrace"]
}' "$raw"
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null); total $(( $(date +%s) - start )) s"
