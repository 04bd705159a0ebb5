#!/bin/sh
# One entry point for the README and CI:
#   scripts/build.sh demo       install dependencies, build, run the demo
#   scripts/build.sh check      install dependencies, build, run every test
#   scripts/build.sh distcheck  … and check the release tarball
# Builds out of tree in _build/ so the source tree stays clean; safe to rerun.
set -eu
what=${1:-demo}
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null
fi
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure -q
jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs" >/dev/null
case $what in
demo)
	make -s demo
	;;
check)
	status=0
	make -j"$jobs" check || status=$?
	# a failing test's own lines (its FAIL reasons), for CI logs that keep only the end
	[ $status = 0 ] || sh ../scripts/test-failures.sh test-suite.log
	sh ../scripts/test-summary.sh test-suite.log
	exit $status
	;;
distcheck)
	make -j"$jobs" distcheck
	;;
*)
	echo "usage: scripts/build.sh demo|check|distcheck" >&2
	exit 2
	;;
esac
