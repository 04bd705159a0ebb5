#!/bin/sh
# bench/threads-cpu.sh — the CPU a short thread costs under the launcher,
# next to heaptrack (issue 27's target: the launcher's defaults add at most
# twice what heaptrack adds per thread).
#
# The program (compiled here with g++ -O1 -g) starts THREADS threads, 4 at
# a time, each making and freeing 8 small blocks, and joins them.  It runs
# with SMALL and THREADS threads (the difference is the threads' own cost,
# without what a run costs once: the launcher's start and store,
# heaptrack's interpretation).  Configurations, interleaved in rotated
# order for --rounds rounds:
#   bare       the program alone
#   dflt       meminst -o S.db (mis, sample=100 on CPU time, interval 100ms)
#   notime     meminst --no-time -o S.db
#   mim        meminst --mim -o S.db
#   heaptrack  heaptrack -o FILE (records, then interprets)
#   dflt-b     with --library-b PATH: dflt with that libmeminst.so (another
#              build's, to compare)
# Figures: CPU seconds (user+sys of the whole process tree, /usr/bin/time),
# median and min-max at each size; per thread: (median at THREADS - median
# at SMALL) / (THREADS - SMALL), in microseconds, and that less bare's.
#
# usage: bench/threads-cpu.sh [--rounds N] [--threads N] [--library-b PATH] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
threads=1800 rest= lib_b=
while [ $# -gt 0 ]; do # --threads here, the rest for bench_heaptrack_peer
	case $1 in
	--threads) threads=${2:-}; shift 2 || exit 2 ;;
	--library-b) lib_b=${2:-}; shift 2 || exit 2 ;;
	-h | --help) bench_arg threads-cpu.sh "$1" ;;
	*) rest="$rest $1"; shift ;;
	esac
done
set -- $rest
if [ -n "$lib_b" ]; then # absolute: the runs are in a scratch directory
	[ -f "$lib_b" ] || { echo "threads-cpu.sh: $lib_b: no such file" >&2; exit 2; }
	lib_b=$(cd "$(dirname "$lib_b")" && pwd)/$(basename "$lib_b")
fi
case $threads in '' | *[!0-9]* | ? | ??) echo "threads-cpu.sh: --threads needs a number >= 100" >&2; exit 2 ;; esac
small=$((threads / 9))
bench_heaptrack_peer threads-cpu.sh thr "$@" <<'CPP'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *work(void *arg)
{
	char *p[8];
	for (int i = 0; i < 8; i++) {
		p[i] = (char *)malloc(32 + 16 * i);
		memset(p[i], i, 32);
	}
	for (int i = 0; i < 8; i++)
		free(p[i]);
	return arg;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1800;
	pthread_t t[4];
	for (int i = 0; i < n; i += 4) {
		for (int j = 0; j < 4; j++)
			if (pthread_create(&t[j], NULL, work, NULL)) {
				perror("pthread_create");
				return 1;
			}
		for (int j = 0; j < 4; j++)
			pthread_join(t[j], NULL);
	}
	printf("%d\n", n);
	return 0;
}
CPP
run() { # CONFIG@SIZE: prints "CONFIG@SIZE cpu_s"
	cd "$tmp"
	n=${1#*@}
	case $1 in
	bare@*) set -- "$1" ./thr "$n" ;;
	dflt@*) set -- "$1" "$M" -q -f -o s.db -- ./thr "$n" ;;
	notime@*) set -- "$1" "$M" -q -f --no-time -o s.db -- ./thr "$n" ;;
	mim@*) set -- "$1" "$M" -q -f --mim -o s.db -- ./thr "$n" ;;
	heaptrack@*) set -- "$1" heaptrack -o ht ./thr "$n" ;;
	dflt-b@*) set -- "$1" "$M" -q -f --library "$lib_b" -o s.db -- ./thr "$n" ;;
	esac
	bench_cpu threads-cpu.sh "$@"
	rm -f s.db ht.*
}
configs="bare dflt notime mim heaptrack${lib_b:+ dflt-b}"
all=
for c in $configs; do all="$all $c@$small $c@$threads"; done
bench_rotated "$rounds" run $all >"$tmp/runs"
awk -v configs="$configs" -v small="$small" -v big="$threads" "$BENCH_AWK"'
{ cpu[$1] = cpu[$1] " " $2 }
END {
	printf "%-10s %18s %18s %10s %12s\n", "config", "CPU s at " small, "CPU s at " big, "us/thread", "added/thread"
	nc = split(configs, order, " ")
	for (k = 1; k <= nc; k++) {
		c = order[k]
		ns = sorted(cpu[c "@" small], s); nb = sorted(cpu[c "@" big], b)
		per[c] = (median(cpu[c "@" big]) - median(cpu[c "@" small])) / (big - small) * 1e6
		printf "%-10s %6.3f (%.2f-%.2f) %6.3f (%.2f-%.2f) %10.1f %12.1f\n", c,
			median(cpu[c "@" small]), s[1], s[ns], median(cpu[c "@" big]), b[1], b[nb],
			per[c], per[c] - per["bare"]
	}
	m = per["dflt"] - per["bare"]; h = per["heaptrack"] - per["bare"]
	printf "target dflt added CPU a thread <= 2x heaptrack'"'"'s: %s (%.2fx)\n",
		(h > 0 && m <= 2 * h) ? "PASS" : "MISS", (h > 0 ? m / h : 0)
}' "$tmp/runs"
