#!/bin/sh
# bench/layout-order.sh — writes the list of libmeminst's own functions
# that a session runs into alloc/libmeminst-order.ld (between its "hot
# functions" markers), so that the linker puts them together: the program
# keeps resident each 64 KiB window of libmeminst's code it touches
# (fault-around), and the functions it runs are about half of meminst's
# code, spread over all its objects.
#
# The list is what callgrind sees run in the program's process (not the
# launcher's) of each workload below, under the launcher's default mode
# and under --mim, with sampling and the exit leak check (the defaults):
# bench/launcher_rss.sh's C++ map, a C program whose threads allocate and
# free each other's blocks, `sleep 1` (interval snapshots of an idle
# program) and a shell that forks and executes; and, named below, what
# callgrind cannot see (the waits of contended locks, a vfork child's exec
# path) and every entry point of the program's into meminst.  A function
# not in the list is only placed among the rest of meminst's code (no
# change of behaviour); re-run this after changing what a default session
# runs, and check with bench/launcher_rss.sh and tests/session/store_link.sh.
#
# usage: bench/layout-order.sh [--print] [BUILD_DIR]
#   --print  write the list to stdout instead of into the linker script
set -eu
. "$(dirname "$0")/bench-lib.sh"

print=no
build=
while [ $# -gt 0 ]; do
	case $1 in
	--print) print=yes ;;
	*) bench_arg layout-order.sh "$1" ;;
	esac
	shift
done
build=$(cd "$(bench_build_dir layout-order.sh session/meminst "$build")" && pwd)
bench_need layout-order.sh "$build" "$build/session/meminst" "$build/alloc/.libs/libmeminst.so"
for tool in valgrind callgrind_annotate nm g++; do
	command -v $tool >/dev/null || { echo "layout-order.sh: $tool not installed" >&2; exit 2; }
done
script=$(cd "$(dirname "$0")/../alloc" && pwd)/libmeminst-order.ld
grep -q '^		/\* hot functions: from here' "$script" ||
	{ echo "layout-order.sh: $script has no hot-function markers" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/meminst-bench-order.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

sed -n '/^#include <cstdio>/,/^CPP$/p' "$(dirname "$0")/launcher-peers.sh" | sed '$d' >"$tmp/cxxmap.cpp"
g++ -O1 -g -o "$tmp/cxxmap" "$tmp/cxxmap.cpp"
cat >"$tmp/xthreads.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
enum { N = 20000 };
static void *blocks[N];
static void *fill(void *arg)
{
	for (int i = 0; i < N; i++)
		blocks[i] = strdup(arg);
	return NULL;
}
static void *drop(void *arg)
{
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	return arg;
}
int main(void)
{
	pthread_t t;
	for (int round = 0; round < 4; round++) {
		pthread_create(&t, NULL, fill, "a block of a thread");
		pthread_join(t, NULL);
		pthread_create(&t, NULL, drop, NULL);
		pthread_join(t, NULL);
	}
	return 0;
}
EOF
cc -O1 -g -pthread -o "$tmp/xthreads" "$tmp/xthreads.c"

# run NAME MODE CMD...: callgrind of the program's process under the launcher
run() {
	name=$1 mode=$2
	shift 2
	(cd "$tmp" && PATH="$build/session:$PATH" MEMINST_LIBRARY="$build/alloc/.libs/libmeminst.so" \
		valgrind --tool=callgrind --demangle=no --trace-children=yes --callgrind-out-file="$tmp/cg.$name.%p" \
		"$build/session/meminst" -q -f $mode -o "$tmp/$name.db" -- "$@" >/dev/null 2>"$tmp/$name.err") ||
		{ echo "layout-order.sh: $name failed:" >&2; tail -3 "$tmp/$name.err" >&2; exit 1; }
}
run map-mis "" ./cxxmap
run map-mim --mim ./cxxmap
run threads-mis "" ./xthreads
run threads-mim --mim ./xthreads
run sleep-mis "" sleep 1
run shell-mis "" sh -c 'for i in 1 2 3; do /bin/true; done; sleep 0.2'
run shell-mim --mim sh -c 'for i in 1 2 3; do /bin/true; done; sleep 0.2'

# the functions meminst's own objects define (a clone's name, foo.part.0,
# is its function's)
for o in "$build"/alloc/.libs/*.o "$build"/trace/.libs/*.o; do
	nm "$o" | awk '$2 ~ /^[tTW]$/ { print $3 }'
done | sed 's/\..*//' | sort -u >"$tmp/own"
# the functions run in each program's process (the launcher's own output
# names the launcher in its "cmd:" line)
for f in "$tmp"/cg.*; do
	grep -q '^cmd: .*session/meminst' "$f" && continue
	callgrind_annotate --threshold=100 "$f" 2>/dev/null
done | sed -n 's/^ *[0-9,][0-9,]* ([^)]*)  *[^ ]*:\([A-Za-z_][A-Za-z0-9_.]*\).*/\1/p' |
	sed "s/'[0-9]*\$//" | sort -u >"$tmp/ran"
# callgrind runs one thread at a time: the waits of a thread that finds a
# lock or a list held, which run in any threaded program, never run there
# (found with each function in a 64 KiB window of its own, SUBALIGN, and
# the windows resident at the program's exit_group read from pagemap)
printf '%s\n' alloc_clone_yield alloc_fork_wait alloc_spin_lock_slow core_enter_gated \
	map_wait_capture >>"$tmp/ran"
# what a child of vfork or posix_spawn (CLONE_VM: dash's commands,
# system(3), popen(3)) runs in the program's own memory until its exec:
# callgrind makes vfork a fork and keeps no profile of a child's life
# before its exec
printf '%s\n' sigwrap_exec_begin sigwrap_exec_static trace_end_before_exec trace_flush_running \
	alloc_sqlite_exec_begin alloc_sqlite_exec_end alloc_exit_own_process alloc_program_threads \
	alloc_seccomp_enosys >>"$tmp/ran"
# every entry point of the program's into meminst (a program may call any:
# new[], aligned new, valloc, execvp, sigwait...), not only those the
# workloads call
for o in "$build"/alloc/.libs/*-alloc_hooks.o "$build"/trace/.libs/*-trace_sigwrap.o; do
	nm "$o" | awk '$2 == "T" { print $3 }'
done >>"$tmp/ran"
# the functions, and the cold parts that ran (foo.cold, which gcc puts in
# .text.unlikely.foo: a first-time branch marked unlikely)
sed 's/\..*//' "$tmp/ran" | sort -u | comm -12 "$tmp/own" - >"$tmp/hot"
sed -n 's/\.cold$//p' "$tmp/ran" | sed 's/\..*//' | sort -u | comm -12 "$tmp/own" - >"$tmp/cold"
n=$(wc -l <"$tmp/hot")
[ "$n" -gt 50 ] || { echo "layout-order.sh: only $n functions found run: callgrind's output not read" >&2; exit 1; }
{
	awk '{ printf "\t\t*(.text.%s .text.%s.*)\n", $1, $1 }' "$tmp/hot"
	awk '{ printf "\t\t*(.text.unlikely.%s .text.unlikely.%s.*)\n", $1, $1 }' "$tmp/cold"
} >"$tmp/list"
if [ $print = yes ]; then
	cat "$tmp/list"
	exit 0
fi
awk -v list="$tmp/list" '
	/^\t\t\/\* hot functions: from here/ { print; while ((getline l < list) > 0) print l; skip = 1; next }
	/^\t\t\/\* hot functions: to here/ { skip = 0 }
	!skip { print }' "$script" >"$tmp/script"
cat "$tmp/script" >"$script"
echo "layout-order.sh: $n functions and $(wc -l <"$tmp/cold") cold parts written into $script"
