# bench/bench-lib.sh — sourced by the bench scripts.
#
# bench_build_dir SCRIPT PROGRAM [GIVEN]: print the build tree to use: GIVEN
# when set, else $top_builddir, else the tree holding this script's PROGRAM
# (bench/PROGRAM relative to the build tree); exit 2 with a message if none.
bench_build_dir() {
	_script=$1 _prog=$2 _given=${3:-}
	if [ -n "$_given" ]; then
		echo "$_given"
	elif [ -n "${top_builddir:-}" ]; then
		echo "$top_builddir"
	elif [ -x "$(cd "$(dirname "$0")" && pwd)/$(basename "$_prog")" ]; then
		dirname "$(cd "$(dirname "$0")" && pwd)"
	else
		echo "$_script: give the build directory (the one with $_prog)" >&2
		exit 2
	fi
}
