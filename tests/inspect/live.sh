#!/bin/sh
# live.sh — inspect on databases libmeminst itself wrote, and on a live
# process through the real control channel (not the fake one of
# control.sh).  It uses the snapshot targets of tests/targets/:
#   - snap_live, preloaded with MEMINST=mim,snapshot=…: the exit snapshot
#     must add up, by class and per allocation site, to the blocks the
#     program says it leaves; its sites (static functions, which dladdr
#     cannot name at capture) must come out with their function names
#     from the executable's symbol table; every command must succeed on
#     the file, with valid JSON, and leave it unchanged;
#   - snap_wait, preloaded with MEMINST=mim,control=on, holding 80 known
#     blocks: `inspect snapshot --pid` twice and `inspect status --pid`,
#     then `inspect diff` of the two snapshots (nothing changed between).
# Skips (77) when the library or the targets do not have snapshots yet.
. "$top_srcdir/tests/inspect/lib.sh"

: "${MEMINST_LIB:=$top_builddir/alloc/.libs/libmeminst.so}"
live=$top_builddir/tests/targets/snap_live
wait_prog=$top_builddir/tests/targets/snap_wait
for p in "$MEMINST_LIB" "$live" "$wait_prog"; do
	if [ ! -e "$p" ]; then
		echo "skip  $p is not built"
		exit 77
	fi
done

# ---- the exit snapshot of snap_live --------------------------------------
(cd "$IT_TMP" && LD_PRELOAD=$MEMINST_LIB MEMINST=mim,snapshot=$IT_DB/exit.db "$live") \
	>"$IT_TMP/live.out" 2>"$IT_TMP/live.err"
if [ ! -s "$IT_DB/exit.db" ]; then
	if grep -q 'not yet supported' "$IT_TMP/live.err"; then
		echo "skip  this libmeminst does not store snapshots yet"
		exit 77
	fi
	it_fail "snap_live stored no exit snapshot" "$IT_TMP/live.err"
	it_finish
fi
before=$(it_sum "$IT_DB/exit.db")

want_blocks=0 want_bytes=0
while read -r word name blocks bytes alloc; do
	[ "$word" = group ] || continue
	want_blocks=$((want_blocks + blocks)) want_bytes=$((want_bytes + bytes))
done <"$IT_TMP/live.out"
it_run sum exit.db --class snap_live --csv --table sum
if [ $IT_RC -eq 0 ] && grep -qx "class snap_live,$want_blocks,$want_bytes,[0-9]*,[0-9]*" "$IT_TMP/out"; then
	it_ok "sum --class snap_live: $want_blocks blocks, $want_bytes bytes, as the program says"
else
	it_fail "sum --class snap_live (wanted $want_blocks blocks, $want_bytes bytes)" "$IT_TMP/out" "$IT_TMP/err"
fi

# Each group's site: name resolved from the executable (not "0x… (snap_live)").
it_run top exit.db --by site --limit 100 --csv --table top
for g in malloc:100:2400 calloc:50:50000 aligned:10:40960 realloc:20:6000; do
	fn=grp_${g%%:*} rest=${g#*:}
	if grep -Eq "^[0-9]+,${rest#*:},[0-9.]+,${rest%%:*},$fn\\+0x[0-9a-f]+ \\(snap_live\\)," "$IT_TMP/out"; then
		it_ok "top --by site: $fn resolved, ${rest%%:*} blocks, ${rest#*:} bytes"
	else
		it_fail "top --by site: no row for $fn with ${rest%%:*} blocks and ${rest#*:} bytes" "$IT_TMP/out"
	fi
done
if grep -Eq ",grp_malloc\\+0x[0-9a-f]+ \\(snap_live\\),.*snap_live\\.c:[0-9]+$" "$IT_TMP/out"; then
	it_ok "top --by site: source lines from the debug information"
else
	echo "skip  source lines: snap_live has no line information (built without -g?)"
fi

fails=0
for args in list holes limits sum descr top diff status types "type 1" "class 1" "allocator 0" header-size; do
	# shellcheck disable=SC2086
	set -- $args
	cmd=$1
	shift
	it_run "$cmd" exit.db "$@" --json
	# diff needs two map snapshots; exit.db has one
	if [ "$cmd" = diff ]; then
		[ $IT_RC -eq 1 ] || { fails=1; it_fail "diff of a one-snapshot file: exit $IT_RC" "$IT_TMP/err"; }
		continue
	fi
	if [ $IT_RC -ne 0 ] || { it_have_python && ! it_valid_json "$IT_TMP/out"; }; then
		fails=1
		it_fail "inspect $cmd $* --json on a libmeminst database (exit $IT_RC)" "$IT_TMP/err" "$IT_TMP/why"
	fi
done
[ $fails -eq 0 ] && it_ok "every command reads the database libmeminst wrote"
if [ "$(it_sum "$IT_DB/exit.db")" = "$before" ]; then
	it_ok "the database is unchanged"
else
	it_fail "the database changed"
fi

# ---- a live process: control=on -------------------------------------------
go=$IT_TMP/go
mkfifo "$IT_TMP/pidpipe" || exit 99
LD_PRELOAD=$MEMINST_LIB MEMINST=mim,control=on "$wait_prog" until "$go" >"$IT_TMP/pidpipe" 2>"$IT_TMP/wait.err" &
read -r word pid <"$IT_TMP/pidpipe"
[ "$word" = pid ] || { it_fail "snap_wait did not start" "$IT_TMP/wait.err"; it_finish; }
stop_wait() { touch "$go"; wait "$pid" 2>/dev/null; }
trap 'stop_wait; it_cleanup' EXIT

it_run snapshot --pid "$pid" -o ctl.db
if [ $IT_RC -eq 0 ] && grep -qx 'snapshot: 1' "$IT_TMP/out"; then
	it_ok "snapshot --pid: the process stored snapshot 1"
else
	it_fail "snapshot --pid (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi
it_run sum ctl.db --class snap_wait --csv --table sum
if [ $IT_RC -eq 0 ] && grep -qx 'class snap_wait,80,77015,[0-9]*,[0-9]*' "$IT_TMP/out"; then
	it_ok "its 80 blocks of 77015 bytes are in the map"
else
	it_fail "sum --class snap_wait of the control snapshot" "$IT_TMP/out" "$IT_TMP/err"
fi
it_run status --pid "$pid" --classes --csv --table classes
if [ $IT_RC -eq 0 ] && grep -q '^[0-9]*,snap_wait,77015,' "$IT_TMP/out"; then
	it_ok "status --pid: class snap_wait holds 77015 bytes"
else
	it_fail "status --pid (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi
it_run snapshot --pid "$pid" -o ctl.db
it_run diff ctl.db --csv --table summary
stop_wait
trap it_cleanup EXIT
if [ $IT_RC -eq 0 ] && grep -q ',true$' "$IT_TMP/out" &&
	awk -F, 'NR == 2 { exit !($3 == $1 && $4 == $2 && $10 == 0 && $8 == 0) }' "$IT_TMP/out"; then
	it_ok "diff of two snapshots of the waiting process: nothing new, nothing freed"
else
	it_fail "diff of the two control snapshots (exit $IT_RC)" "$IT_TMP/out" "$IT_TMP/err"
fi
it_finish
