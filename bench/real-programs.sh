#!/bin/sh
# bench/real-programs.sh — the launcher's default run next to heaptrack on
# two real programs (issue 26's target: at most 0.5x heaptrack's added
# CPU, same run):
#   perl   perl building a hash of 400k keys whose values are arrays and
#          strings, then sorting the keys and deleting half of them
#          (Perl_safesysmalloc, on the built-in wrapper list, under
#          nearly every allocation)
#   c++    a C++ compile: cc1plus -O2 on a preprocessed source of about
#          40k lines (the standard library's map, string, vector and
#          algorithm and their instantiations; with <regex> and
#          <iostream>, 80k lines and 8 s alone, heaptrack took more than
#          10 minutes).  cc1plus runs directly, not under
#          g++: heaptrack follows no child (its preload library takes
#          itself out of LD_PRELOAD), the launcher follows every one, so
#          `heaptrack g++` would measure the driver alone and `meminst
#          -- g++` the driver, cc1plus and as; one process each is the
#          like-for-like comparison
# Configurations, interleaved in rotated order for --rounds rounds:
#   bare        the program alone
#   dflt        meminst -o FILE, the launcher's default (mis, site_depth=
#               user, the built-in wrapper list, interval=auto, peak and
#               exit snapshots)
#   mis-1       meminst --site-depth=1 --site-skip=none (the default before
#               issue 26)
#   heaptrack   heaptrack -o FILE (records, then interprets, as users run it)
# Figure: CPU seconds (user+sys of the process tree, /usr/bin/time), median
# and min-max; added/ht = CPU added over bare / heaptrack's added CPU.
#
# usage: bench/real-programs.sh [--rounds N] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
# the C++ source: built once as a program (it must compile and run), then
# preprocessed for cc1plus
bench_heaptrack_peer real-programs.sh heavy "$@" <<'CPP'
#include <algorithm>
#include <map>
#include <string>
#include <vector>
template <class K, class V> static size_t fill(std::map<K, V> &m, int n)
{
	for (int i = 0; i < n; i++)
		m[K()] = V();
	return m.size();
}
int main(int argc, char **argv)
{
	std::map<std::string, std::vector<int>> index;
	for (int i = 1; i < argc; i++)
		index[argv[i]].push_back(i);
	std::map<int, std::string> a; std::map<long, double> b;
	std::map<std::string, std::map<int, long>> c;
	size_t n = fill(a, 3) + fill(b, 3) + fill(c, 3) + index.size();
	std::vector<std::string> v(index.size());
	std::transform(index.begin(), index.end(), v.begin(), [](auto &kv) { return kv.first; });
	std::sort(v.begin(), v.end());
	return (int)(n + v.size()) & 1;
}
CPP
command -v perl >/dev/null || { echo "real-programs.sh: perl not installed" >&2; exit 2; }
cc1plus=$(g++ -print-prog-name=cc1plus)
[ -x "$cc1plus" ] || { echo "real-programs.sh: cc1plus not found (g++ -print-prog-name)" >&2; exit 2; }
g++ -E -o "$tmp/heavy.ii" "$tmp/heavy.cpp"
cat >"$tmp/hash.pl" <<'PERL'
my %h;
for my $i (1 .. 400000) {
	$h{"key-$i-" . ($i * 7919 % 100003)} = [$i, "v" x ($i % 64), { n => $i }];
}
my @k = sort keys %h;
delete @h{@k[0 .. $#k / 2]};
print scalar(keys %h), "\n";
PERL

run() { # WORKLOAD CONFIG: prints "WORKLOAD:CONFIG cpu_s"
	cd "$tmp"
	case $1 in
	perl) set -- "$1:$2" perl hash.pl ;;
	c++) set -- "$1:$2" "$cc1plus" -fpreprocessed -quiet -O2 heavy.ii -o heavy.s ;;
	esac
	case ${1#*:} in
	bare) ;;
	dflt) _n=$1; shift; set -- "$_n" "$M" -q -f -o s.db -- "$@" ;;
	mis-1) _n=$1; shift; set -- "$_n" "$M" -q -f --site-depth=1 --site-skip=none -o s.db -- "$@" ;;
	heaptrack) _n=$1; shift; set -- "$_n" heaptrack -o ht "$@" ;;
	esac
	bench_cpu real-programs.sh "$@"
	rm -f s.db ht.* heavy.s
}
configs="bare dflt mis-1 heaptrack"
for wl in perl c++; do
	run_wl() { run "$wl" "$1"; }
	bench_rotated "$rounds" run_wl $configs | sed 's/^[^:]*://' >"$tmp/runs.$wl"
done
echo "## the launcher's default vs heaptrack: perl building a 400k-key hash, CPU s (user+sys), $rounds rounds"
bench_vs_heaptrack dflt "dflt (the launcher's default)" $configs <"$tmp/runs.perl"
echo "## the launcher's default vs heaptrack: cc1plus -O2 of a ~40k-line preprocessed C++ source, CPU s (user+sys), $rounds rounds"
bench_vs_heaptrack dflt "dflt (the launcher's default)" $configs <"$tmp/runs.c++"
