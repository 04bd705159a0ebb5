#!/bin/sh
# fuzz-seeds.sh MKFIXTURE SRCDIR — rebuild the fuzzer's seeds in
# SRCDIR/tools/fuzz-seeds: the test fixtures as small databases (512-byte
# pages keep them a few KB), copies cut at 1, 4 and 6 KiB, and a copy with
# a run of bytes overwritten in the middle; and the fixtures' SQL after
# "SQL:", which fuzz_db runs on a fresh database (see tool_fuzz_db.c).  Run by `make fuzz-inspect-seeds`.
set -eu
mk=$1 src=$2
out=$src/tools/fuzz-seeds
mkdir -p "$out"
"$mk" --page-size 512 "$out/basic.db" "$src/tests/inspect/fixtures/basic.sql"
"$mk" --page-size 512 "$out/escape.db" "$src/tests/inspect/fixtures/escape.sql"
for k in 1 4 6; do
	head -c $((k * 1024)) "$out/basic.db" >"$out/cut-${k}k.db"
done
for f in basic escape odd; do
	{ printf 'SQL:'; cat "$src/tests/inspect/fixtures/$f.sql"; } >"$out/$f.sql-seed"
done
cp "$out/basic.db" "$out/damaged.db"
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' |
	dd of="$out/damaged.db" bs=1 seek=3000 conv=notrunc 2>/dev/null
ls -l "$out"
