#!/bin/sh
# tests/fuzz/run.sh — replay one libFuzzer target's regression inputs, then
# fuzz it for a bounded time from its seeds.  Used by `make check-fuzz`.
#
#   run.sh FUZZER SEEDS_DIR REGRESSIONS_DIR SECONDS ARTIFACT_PREFIX [ARGS...]
#
# Every regression input is replayed on its own so that one failure does
# not hide the others.  Fuzzing starts from a scratch copy of the seeds (the
# source tree may be read-only, as under distcheck); a new failing input is
# left at ARTIFACT_PREFIX crash-* (or leak-*, timeout-*, oom-*), to be copied
# into REGRESSIONS_DIR once reported.  SECONDS 0 fuzzes nothing: the seeds
# are run once each after the regressions (tests/fuzz/replay.sh, under
# `make check`).  Exit status 1 if anything failed.
set -u
fuzzer=$1 seeds=$2 regressions=$3 seconds=$4 prefix=$5
shift 5
name=`basename "$fuzzer"`
status=0

replayed=0
for input in "$regressions"/*; do
	[ -f "$input" ] || continue
	replayed=`expr $replayed + 1`
	if ! "$fuzzer" "$@" "$input" >"$prefix$name-replay.log" 2>&1; then
		echo "FAIL: $name: regression input `basename "$input"` still fails:"
		grep -a -m 3 -e '^fuzz_options:' -e 'ERROR:' -e 'SUMMARY:' "$prefix$name-replay.log"
		status=1
	fi
done
echo "$name: replayed $replayed regression input(s)"

if [ "$seconds" = 0 ]; then
	if "$fuzzer" "$@" "$seeds"/* >"$prefix$name-replay.log" 2>&1; then
		echo "$name: replayed `ls "$seeds" | wc -l` seed input(s), nothing fuzzed"
	else
		echo "FAIL: $name: a seed input fails (log: $prefix$name-replay.log):"
		grep -a -m 3 -e '^fuzz_options:' -e 'ERROR:' -e 'SUMMARY:' "$prefix$name-replay.log"
		status=1
	fi
	exit $status
fi

corpus=`mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX"` || exit 1
cp "$seeds"/* "$corpus"/
log="$prefix$name.log"
if "$fuzzer" "$@" -max_total_time="$seconds" -artifact_prefix="$prefix" \
	-print_final_stats=1 "$corpus" >"$log" 2>&1; then
	runs=`grep -a -e '^stat::number_of_executed_units' "$log" | sed 's/.*: *//'`
	cov=`grep -a -o 'cov: [0-9]*' "$log" | tail -n 1`
	echo "$name: fuzzed for ${seconds}s: $runs executions, $cov edges," \
		"corpus `ls "$corpus" | wc -l` inputs, no failure"
else
	echo "FAIL: $name found a failing input (log: $log):"
	grep -a -e '^fuzz_options:' -e 'ERROR:' -e 'SUMMARY:' -e 'Test unit written' "$log" | head -n 5
	echo "  keep it: copy it into $regressions/ and report it"
	status=1
fi
rm -rf "$corpus"
exit $status
