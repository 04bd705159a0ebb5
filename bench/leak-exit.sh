#!/bin/sh
# bench/leak-exit.sh — the cost of mim's exit leak check (issue 27's target:
# a run with the exit check at most 0.5x heaptrack's added CPU on the bench/
# C++ program, same run).
#
# The program is launcher-peers.sh's (g++ -O1 -g): 200k std::string keys of
# 24 characters into a std::map<std::string,int> (a node and a string buffer
# each: 400k blocks).  Run as there ("drop": the map is main's local,
# destroyed before exit, so the exit check finds few blocks) and with the
# map kept ("keep": a global pointer to it, so that the exit check scans
# 400k live blocks, all still reachable).  Configurations, interleaved in
# rotated order for --rounds rounds, each on both programs:
#   bare       the program alone
#   mim        meminst --mim -o S.db (the launcher's default triggers; the
#              exit snapshot carries the leak check, mim's default)
#   exit       meminst --mim --snapshot-at=exit -o S.db (the same, the exit
#              snapshot only)
#   nocheck    MEMINST=mim,site_depth=user,snapshot_at=exit,leak_check=off
#              (preloaded by hand: the launcher has no switch to turn the
#              exit check off), to isolate the check's own cost ...
#   check      ... against the same with leak_check=exit
#   heaptrack  heaptrack -o FILE (records, then interprets)
# Figure: CPU seconds (user+sys of the process tree, /usr/bin/time), median
# and min-max; added/ht = CPU added over bare / heaptrack's added CPU.
#
# usage: bench/leak-exit.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_heaptrack_peer leak-exit.sh cxxmap "$@" <<'CPP'
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
std::map<std::string, int> *kept; /* "keep": reachable from .bss at exit */
int main(int argc, char **argv)
{
	std::map<std::string, int> local, *m = &local;
	if (argc > 1 && !strcmp(argv[1], "keep"))
		m = kept = new std::map<std::string, int>;
	char key[32];
	for (int i = 0; i < 200000; i++) {
		snprintf(key, sizeof key, "key-%019d", i * 7919);
		(*m)[key] = i;
	}
	long sum = 0;
	for (auto &kv : *m)
		sum += kv.second;
	printf("%zu %ld\n", m->size(), sum);
	return 0;
}
CPP
run() { # CONFIG: prints "CONFIG-drop cpu_s" and "CONFIG-keep cpu_s"
	cd "$tmp"
	for how in drop keep; do
		case $1 in
		bare) set -- "$1" ./cxxmap ;;
		mim) set -- "$1" "$M" -q -f --mim -o s.db -- ./cxxmap ;;
		exit) set -- "$1" "$M" -q -f --mim --snapshot-at=exit -o s.db -- ./cxxmap ;;
		nocheck | check)
			opts=mim,site_depth=user,snapshot=s.db,snapshot_at=exit,leak_check=$([ "$1" = check ] && echo exit || echo off)
			set -- "$1" env MEMINST="$opts" LD_PRELOAD="$lib" ./cxxmap ;;
		heaptrack) set -- "$1" heaptrack -o ht ./cxxmap ;;
		esac
		name=$1
		shift
		bench_cpu leak-exit.sh "$name-$how" "$@" "$how"
		rm -f s.db ht.*
		set -- "$name"
	done
}
configs="bare mim exit nocheck check heaptrack"
bench_rotated "$rounds" run $configs >"$tmp/runs"
for how in drop keep; do
	echo "## meminst --mim's exit leak check vs heaptrack: C++ std::map of 200k strings ($how), CPU s (user+sys), $rounds rounds"
	sed -n "s/^\([a-z]*\)-$how /\1 /p" "$tmp/runs" | bench_vs_heaptrack mim "mim (meminst --mim -o S.db, exit check)" $configs
	sed -n "s/^\([a-z]*\)-$how /\1 /p" "$tmp/runs" | awk -v how="$how" "$BENCH_AWK"'
		{ cpu[$1] = cpu[$1] " " $2 }
		END { printf "the check itself (%s): check - nocheck = %.3f s CPU (medians)\n", how, median(cpu["check"]) - median(cpu["nocheck"]) }'
done
