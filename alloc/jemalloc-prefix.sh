#!/bin/sh
# Build a private copy of Debian's jemalloc for libmeminst's backend=jemalloc.
#   $1: libjemalloc_pic.a   $2: output archive
# Every public name (malloc, free, mallocx, …) becomes meminst_je_<name> so the
# copy never interposes anything; the C++ operators are dropped; the
# constructor is removed so jemalloc starts only when backend=jemalloc uses it.
set -eu
pic=$1 out=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-je.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case $pic in /*) ;; *) pic=$(pwd)/$pic ;; esac
(cd "$tmp" && ${AR:-ar} x "$pic")
rm -f "$tmp"/jemalloc_cpp*.o
${LD:-ld} -r -o "$tmp/all.o" "$tmp"/*.o
${NM:-nm} -g --defined-only "$tmp/all.o" |
	awk 'NF == 3 && $3 !~ /^je_/ { print $3 " meminst_je_" $3 }' >"$tmp/names"
${OBJCOPY:-objcopy} --redefine-syms="$tmp/names" \
	--remove-section=.init_array --remove-section=.rela.init_array \
	"$tmp/all.o" "$tmp/je.o"
rm -f "$out"
${AR:-ar} rcs "$out" "$tmp/je.o"
