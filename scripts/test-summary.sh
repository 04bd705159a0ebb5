#!/bin/sh
# Print the closing line of a test run from Automake's test-suite.log:
#   check: N passed, N failed, N skipped
# (errors and unexpected passes count as failed, expected failures as passed).
set -eu
log=${1:-test-suite.log}
if [ ! -f "$log" ]; then
	echo "check: 0 passed, 1 failed, 0 skipped"
	exit 0
fi
get() { sed -n "s/^# $1: *\([0-9]*\).*/\1/p" "$log" | head -n1; }
pass=$(get PASS) fail=$(get FAIL) skip=$(get SKIP) xfail=$(get XFAIL) xpass=$(get XPASS) err=$(get ERROR)
echo "check: $(( ${pass:-0} + ${xfail:-0} )) passed, $(( ${fail:-0} + ${xpass:-0} + ${err:-0} )) failed, ${skip:-0} skipped"
