#!/bin/sh
# bench/trace-truth-lua.sh — bench/trace-truth.sh on Lua (a program we did
# not write): builds the interpreter three times from LUA_SRC (github
# lua/lua, or a release's src/: every *.c but onelua.c, ltests.c, luac.c),
# -O2 -g bare, with -finstrument-functions and with -pg, writes a script of
# recursion (fib), table.sort with a Lua comparator, string.format and
# gmatch, string keys and an __index metamethod, and compares the four
# views' own-time shares (bench/RESULTS.md, "Session 25").
#
# usage: bench/trace-truth-lua.sh [--rounds N] [--perf-runs N] BUILD_DIR LUA_SRC
set -eu
rounds=8 perf_runs=6
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) shift; rounds=$1 ;;
	--perf-runs) shift; perf_runs=$1 ;;
	-*) echo "usage: bench/trace-truth-lua.sh [--rounds N] [--perf-runs N] BUILD_DIR LUA_SRC" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 2 ] || { echo "usage: bench/trace-truth-lua.sh [--rounds N] [--perf-runs N] BUILD_DIR LUA_SRC" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd) build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
[ -f "$src/lvm.c" ] || { echo "bench/trace-truth-lua.sh: no lvm.c in $src" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-truth-lua.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
srcs=$(cd "$src" && ls *.c | grep -vx -e onelua.c -e ltests.c -e luac.c)
for v in bare: fi:-finstrument-functions pg:-pg; do
	(cd "$src" && gcc -O2 -g -std=c99 -DLUA_USE_LINUX -fno-stack-protector -fno-common ${v#*:} \
		$srcs -o "$tmp/lua-${v%%:*}" -lm -ldl)
done
cat >"$tmp/bench.lua" <<'LUA'
local N = tonumber(arg and arg[1]) or 1
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local acc = 0
for r = 1, N do
  acc = acc + fib(24)
  local t = {}
  for i = 1, 20000 do t[i] = (i * 7919) % 10007 end
  table.sort(t)
  local parts = {}
  for i = 1, 5000 do parts[#parts+1] = string.format("%d:%s", i, tostring(t[i])) end
  local s = table.concat(parts, ",")
  local cnt = 0
  for w in s:gmatch("%d+") do cnt = cnt + 1 end
  local h = {}
  for i = 1, 20000 do h["k" .. (i % 3000)] = (h["k" .. (i % 3000)] or 0) + i end
  local m = setmetatable({}, {__index = function(_, k) return k * 2 end})
  for i = 1, 10000 do acc = acc + m[i] end
  acc = acc + cnt
end
print(acc)
LUA
cd "$tmp"
sh "$here/trace-truth.sh" --perf-runs "$perf_runs" "$build" ./lua-bare ./lua-fi ./lua-pg bench.lua "$rounds"
