#!/bin/sh
# bench/launcher-peers.sh — the launcher next to heaptrack on a C++ program
# that holds about 200k small blocks (issue 11's target: `meminst --mim -o
# S.db -- PROG` with the launcher's default triggers at most 0.5x
# heaptrack's CPU on the same program, same run).
#
# The program (compiled here with g++ -O1 -g) fills a std::map<std::string,
# int> with 200k keys of 24 characters (a node and a string buffer each:
# 400k blocks), holds it, then frees it.  Configurations, run interleaved
# in rotated order for --rounds rounds:
#   bare       the program alone
#   mim        meminst --mim -o S.db (default: --sample=100, interval 100ms,
#              snapshot_at=exit+peak+signal)
#   mim-exit   the same with --snapshot-at=exit
#   mim-1      meminst --mim --site-depth=1 --site-skip=none (mim's sites
#              before issue 26 made site_depth=user the launcher's default)
#   dflt       meminst -o S.db, the launcher's default (mis, site_depth=user,
#              the built-in wrapper list)
#   heaptrack  heaptrack -o FILE (records, then interprets, as users run it)
# Figure: CPU seconds (user+sys of the whole process tree, /usr/bin/time),
# median and min-max over the rounds; ratio = added CPU over bare's,
# divided by heaptrack's added CPU.
#
# usage: bench/launcher-peers.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_heaptrack_peer launcher-peers.sh cxxmap "$@" <<'CPP'
#include <cstdio>
#include <map>
#include <string>
int main()
{
	std::map<std::string, int> m;
	char key[32];
	for (int i = 0; i < 200000; i++) {
		snprintf(key, sizeof key, "key-%019d", i * 7919);
		m[key] = i;
	}
	long sum = 0;
	for (auto &kv : m)
		sum += kv.second;
	printf("%zu %ld\n", m.size(), sum);
	return 0;
}
CPP
run() { # CONFIG: prints "CONFIG cpu_s"
	cd "$tmp"
	case $1 in
	bare) set -- "$1" ./cxxmap ;;
	mim) set -- "$1" "$M" -q -f --mim -o s.db -- ./cxxmap ;;
	mim-exit) set -- "$1" "$M" -q -f --mim --snapshot-at=exit -o s.db -- ./cxxmap ;;
	dflt) set -- "$1" "$M" -q -f -o s.db -- ./cxxmap ;;
	mim-1) set -- "$1" "$M" -q -f --mim --site-depth=1 --site-skip=none -o s.db -- ./cxxmap ;;
	heaptrack) set -- "$1" heaptrack -o ht ./cxxmap ;;
	esac
	bench_cpu launcher-peers.sh "$@"
	rm -f s.db ht.*
}
configs="bare mim mim-exit mim-1 dflt heaptrack"
bench_rotated "$rounds" run $configs >"$tmp/runs"
echo "## meminst --mim vs heaptrack: C++ std::map of 200k strings, CPU s (user+sys), $rounds rounds"
bench_vs_heaptrack mim mim $configs <"$tmp/runs"
echo "## the launcher's default (mis, site_depth=user, the built-in wrappers) vs heaptrack"
bench_vs_heaptrack dflt "dflt (meminst -o S.db -- PROG)" $configs <"$tmp/runs"
