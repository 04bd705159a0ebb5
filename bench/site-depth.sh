#!/bin/sh
# bench/site-depth.sh — the cost of MEMINST=site_depth=user (issue 13):
# `meminst --mim --site-depth=user` next to heaptrack on an allocation-heavy
# C++ program (target: at most 0.5x heaptrack's added CPU, same run).
#
# The program (g++ -O1 -g) does 20 rounds of: 20k std::string keys into a
# std::map<std::string,int> (a node in std::_Rb_tree code, a key buffer),
# a copy of every key into a std::vector<std::string> (a buffer in
# std::string code, not inlined), then erases half of the round's keys:
# about 2.6 M allocations, nearly all from system code, so site_depth=user
# walks the stack for almost every one.  Configurations, interleaved in
# rotated order for --rounds rounds:
#   bare        the program alone
#   mim         meminst --mim --snapshot-at=exit (one return address a site)
#   user        meminst --mim --site-depth=user --snapshot-at=exit
#   user-dflt   meminst --mim --site-depth=user (the launcher's default
#               triggers: peak snapshots too)
#   dflt        meminst -o FILE, the launcher's default (issue 26: mis,
#               site_depth=user, the built-in wrapper list)
#   mis-1       meminst --site-depth=1 --site-skip=none (the default
#               before issue 26)
#   heaptrack   heaptrack -o FILE (records, then interprets, as users run it)
# Figure: CPU seconds (user+sys of the process tree, /usr/bin/time), median
# and min-max; added/ht = CPU added over bare / heaptrack's added CPU.  The
# target line is user-dflt's: the issue's command as written.
#
# usage: bench/site-depth.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
bench_heaptrack_peer site-depth.sh churn "$@" <<'CPP'
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
int main(int argc, char **argv) /* [ROUNDS [KEYS]]: 20 rounds of 20000 keys */
{
	std::map<std::string, int> m;
	char key[48];
	long sum = 0;
	int rounds = argc > 1 ? atoi(argv[1]) : 20, keys = argc > 2 ? atoi(argv[2]) : 20000;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < keys; i++) {
			snprintf(key, sizeof key, "key-%019d-%d", i * 7919, r);
			m[key] = i;
		}
		std::vector<std::string> words;
		for (auto &kv : m)
			words.push_back(kv.first);
		sum += (long)words.size();
		for (int i = 0; i < keys; i += 2) {
			snprintf(key, sizeof key, "key-%019d-%d", i * 7919, r);
			m.erase(key);
		}
	}
	printf("%zu %ld\n", m.size(), sum);
	return 0;
}
CPP
run() { # CONFIG: prints "CONFIG cpu_s"
	cd "$tmp"
	case $1 in
	bare) set -- "$1" ./churn ;;
	mim) set -- "$1" "$M" -q -f --mim --site-depth=1 --snapshot-at=exit -o s.db -- ./churn ;;
	user) set -- "$1" "$M" -q -f --mim --site-depth=user --snapshot-at=exit -o s.db -- ./churn ;;
	user-dflt) set -- "$1" "$M" -q -f --mim --site-depth=user -o s.db -- ./churn ;;
	dflt) set -- "$1" "$M" -q -f -o s.db -- ./churn ;;
	mis-1) set -- "$1" "$M" -q -f --site-depth=1 --site-skip=none -o s.db -- ./churn ;;
	heaptrack) set -- "$1" heaptrack -o ht ./churn ;;
	esac
	bench_cpu site-depth.sh "$@"
	rm -f s.db ht.*
}
configs="bare mim user user-dflt dflt mis-1 heaptrack"
bench_rotated "$rounds" run $configs >"$tmp/runs"
echo "## meminst --mim --site-depth=user vs heaptrack: C++ map/vector/string churn, CPU s (user+sys), $rounds rounds"
bench_vs_heaptrack user-dflt "user-dflt (the literal command)" $configs <"$tmp/runs"
echo "## the launcher's default (meminst -o S.db -- PROG: mis, site_depth=user, the built-in wrappers) vs heaptrack"
bench_vs_heaptrack dflt "dflt (the launcher's default)" $configs <"$tmp/runs"
