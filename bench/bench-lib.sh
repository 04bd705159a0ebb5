# bench/bench-lib.sh — sourced by the bench scripts.
#
# bench_build_dir SCRIPT PROGRAM [GIVEN]: print the build tree to use: GIVEN
# when set, else $top_builddir, else the tree holding this script's PROGRAM
# (bench/PROGRAM relative to the build tree); exit 2 with a message if none.
bench_build_dir() {
	_script=$1 _prog=$2 _given=${3:-}
	# absolute: the scripts run their programs from scratch directories
	if [ -n "$_given" ]; then
		(cd "$_given" 2>/dev/null && pwd) || { echo "$_script: $_given: no such directory" >&2; exit 2; }
	elif [ -n "${top_builddir:-}" ]; then
		(cd "$top_builddir" && pwd)
	elif [ -x "$(cd "$(dirname "$0")" && pwd)/$(basename "$_prog")" ]; then
		dirname "$(cd "$(dirname "$0")" && pwd)"
	else
		echo "$_script: give the build directory (the one with $_prog)" >&2
		exit 2
	fi
}

# The awk functions the scripts' tables share; a script puts them in front
# of its own program: awk "$BENCH_AWK"'{ ... }'.
#   val(key)        the value of a key=value field of the current line
#   sorted(list, a) the space-separated numbers of list into a[1..n], sorted;
#                   returns n
#   median(list)    their median; spread(list): (max - min) / median, in %
BENCH_AWK='
function val(key,   i, kv) {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] }
	return ""
}
function sorted(list, a,   n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n
}
function median(list,   n, a) {
	n = sorted(list, a)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function spread(list,   n, a) {
	n = sorted(list, a)
	return (a[n] - a[1]) / median(list) * 100
}
'
