#!/bin/sh
# bench/site-insn.sh — instructions per allocation of the site settings
# (issue 26: the launcher's default keys sites by site_depth=user and sees
# through the built-in wrappers; issue 29's target for `user`: at most
# +300 instructions an allocation on the bench/ C++ program).
#
# The program is bench/site-depth.sh's map/vector/string churn (g++ -O1
# -g), R rounds of 5000 keys given on its command line: nearly every allocation comes
# from std:: code in libstdc++ or inlined into main, so site_depth=user
# walks (or finds in its cache) the stack for almost every one.  callgrind
# counts the instructions of runs of 2 and 4 rounds under MEMINST=MODE,...
# (the library preloaded alone, as the launcher does); the slope between
# the two over the allocations between them (malloc calls counted by
# glibc's libmemusage.so) is the cost per allocation, its difference to
# the bare program's slope the added cost.  Settings:
#   bare            no preload
#   mis, mim        site_skip=none: one return address a site, no wrappers
#   mis-skip        the built-in wrapper list (the library's default)
#   mis-user        site_depth=user and the wrapper list (the launcher's
#                   default in mis)
#   mim-user        the same in mim (the launcher's default)
#
# --depths: instead, the cost of site_depth=N a frame (issue 29: <= +60
# instructions an extra frame).  bench_alloc's deep workload makes its
# malloc(64)+free pairs 30 calls below the loop; callgrind counts the pairs
# (--toggle-collect=bench_deep_one, the slope between 2,000 and 10,000
# pairs) under MEMINST=mis,site_depth=N for N = 1, 2, 4, 8 and 16, and
# prints each over bare and what each frame added over the depth before
# costs (the step from 1 to 2 frames is the fixed cost of keying a type by
# a stack at all: the general path and the cache of caller chains).
#
# usage: bench/site-insn.sh [--depths] [BUILD_DIR]
set -eu
. "$(dirname "$0")/bench-lib.sh"
build= depths=
for a in "$@"; do
	case $a in
	--depths) depths=1 ;;
	*) bench_arg site-insn.sh "$a"; build=$a ;;
	esac
done
build=$(bench_build_dir site-insn.sh alloc/.libs/libmeminst.so "$build")
lib=$build/alloc/.libs/libmeminst.so
if [ -n "$depths" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	deep() { # MEMINST|"" PAIRS_SCALE: instructions of the pairs
		rm -f "$tmp/cg.out"
		env -u LD_PRELOAD -u MEMINST ${1:+LD_PRELOAD=$lib MEMINST=$1} valgrind --tool=callgrind \
			--toggle-collect=bench_deep_one --callgrind-out-file="$tmp/cg.out" \
			"$build/bench/bench_alloc" -n "$2" -d 30 deep >/dev/null 2>&1
		awk '/^summary:/ { print $2; exit }' "$tmp/cg.out"
	}
	per() { awk -v a="$(deep "$1" 0.001)" -v b="$(deep "$1" 0.005)" 'BEGIN { printf "%.1f", (b - a) / 8000 }'; }
	bare=$(per "")
	echo "bare          $bare instructions a malloc(64)+free pair, 30 frames below the loop"
	prev= prevn=
	for n in 1 2 4 8 16; do
		p=$(per "mis,backend=system,site_depth=$n")
		awk -v n="$n" -v p="$p" -v b="$bare" -v o="$prev" -v on="$prevn" 'BEGIN {
			printf "site_depth=%-2d %7.1f  +%.1f over bare", n, p, p - b
			if (n == 2) printf "; +%.1f over 1 frame: the fixed cost of a stack", p - o
			else if (n > 2) printf "; +%.1f a frame from %d: <= +60 %s", (p - o) / (n - on), on,
				(p - o) / (n - on) <= 60 ? "PASS" : "MISS"
			printf "\n" }'
		prev=$p prevn=$n
	done
	exit 0
fi
memusage=${MEMUSAGE_SO:-$(ls /usr/lib/*/libmemusage.so 2>/dev/null | head -n 1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# site-depth.sh's program, at 5000 keys a round
sed -n "/^bench_heaptrack_peer/,/^CPP\$/p" "$(dirname "$0")/site-depth.sh" | sed '1d;$d' >"$tmp/churn.cc"
g++ -O1 -g "$tmp/churn.cc" -o "$tmp/churn"

mallocs() { # ROUNDS: malloc calls (libmemusage's count)
	LD_PRELOAD=$memusage "$tmp/churn" "$1" 5000 2>&1 >/dev/null | sed 's/\x1b\[[0-9;]*m//g' |
		awk -F'|' '/^ *malloc\|/ { split($2, f, " "); print f[1] }'
}
insns() { # SETTING ROUNDS: instructions of the whole run
	case $1 in
	bare) env= ;;
	mis) env=mis,site_skip=none ;;
	mim) env=mim,site_skip=none ;;
	mis-skip) env=mis ;;
	mis-user) env=mis,site_depth=user ;;
	mim-user) env=mim,site_depth=user ;;
	esac
	rm -f "$tmp/cg.out"
	if [ -z "$env" ]; then
		env -u LD_PRELOAD -u MEMINST valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
			"$tmp/churn" "$2" 5000 >/dev/null 2>&1
	else
		env LD_PRELOAD="$lib" MEMINST="$env,backend=system" valgrind --tool=callgrind \
			--callgrind-out-file="$tmp/cg.out" "$tmp/churn" "$2" 5000 >/dev/null 2>&1
	fi
	awk '/^summary:|^totals:/ { print $2; exit }' "$tmp/cg.out"
}
a2=$(mallocs 2) a4=$(mallocs 4)
echo "mallocs: $a2 (2 rounds), $a4 (4 rounds)"
bare=
for s in bare mis mim mis-skip mis-user mim-user; do
	i2=$(insns $s 2) i4=$(insns $s 4)
	per=$(awk -v a="$i2" -v b="$i4" -v x="$a2" -v y="$a4" 'BEGIN { printf "%.1f", (b - a) / (y - x) }')
	[ -n "$bare" ] || bare=$per
	printf '%-9s %8s instructions an allocation  (+%s over bare)\n' "$s" "$per" \
		"$(awk -v p="$per" -v b="$bare" 'BEGIN { printf "%.1f", p - b }')"
done
