# regions.sh — the program's mappings in the "mmap" allocator: current,
# max-since-last and max-ever bytes and regions, and the events, exact
# against what tests/targets/regions did (its own probe checks every step:
# anonymous, file-backed, MAP_STACK as a thread's stack, mremap growth and
# shrinking, munmap of the middle, head and tail of a region, MAP_FIXED
# over a region's middle, a stale region (preloaded alone: unmapped by a raw system call)
# cut by the thread stack glibc maps there, 3,000 MAP_FIXED at random
# over a window (the region table's tree in every shape), calls the
# kernel refuses keeping their errno;
# sbrk and brk; a read resetting max_since_last).  Here, in mis and mim under the
# launcher (sampling on: libunwind's caches, mapped for meminst, must not
# count; snapshots every millisecond) and preloaded alone: stdout as uninstrumented, exit 0, and the
# exit snapshot's mmap row holds the two regions the program kept, the
# largest figures it reached and its calls; text and JSON name it.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

INSPECT=$top_builddir/inspect/inspect
TARGET=$MI_TARGETS/regions
KEPT=$((3 * 1048576 + 4096))
# The largest: 8 MiB anonymous, 4 pages of file, 1 MiB of stack, 5 MiB
# grown (after shrinking) and 6 MiB about to be cut; six regions once
# MAP_FIXED cut the 8 MiB one in three.  Calls: 1+1+1+1 (mmaps), 2
# (mremaps), 1+1 (one to cut, its split), 2 (MAP_FIXED and its split), 3
# (made and unmade), 1 (sbrk), 2 (kept), and preloaded alone (REGIONS_STALE:
# no service thread maps beside it) 3 more (a thread's stack, a stale
# region of at most 12 MiB, and the stack that cuts it); the
# churn's own (the window and
# its MAP_FIXED pieces, at most R at once: the largest count if above 6),
# which the program prints.
"$TARGET" >"$MI_TMP/ref.out" 2>"$MI_TMP/ref.err" || mi_why_add "uninstrumented run failed"
env REGIONS_STALE=1 "$TARGET" >"$MI_TMP/ref-stale.out" 2>"$MI_TMP/ref.err" || mi_why_add "uninstrumented run failed"
CHURN=$(sed -n 's/^churn: \([0-9]*\) regions made, at most \([0-9]*\) at once$/\1 \2/p' "$MI_TMP/ref.out")
CHURN_MADE=${CHURN% *}
CHURN_MOST=${CHURN#* }
[ "$CHURN_MOST" -gt 6 ] || CHURN_MOST=6
EXPECT="$KEPT 2 $((21 * 1048576 - 1048576 + 16384)) $CHURN_MOST $((16 + CHURN_MADE))"

# mmap_row DB: the exit snapshot's mmap row, as the figures above.
mmap_row() {
	"$INSPECT" status --allocators --json "$1" 2>"$MI_TMP/status.err" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
r = [a for a in d["allocators"] if a["name"] == "mmap"]
if len(r) != 1:
    print("no mmap row")
else:
    r = r[0]
    print(r["bytes_current"], r["blocks_current"], r["bytes_max_ever"], r["blocks_max_ever"], r["calls"])'
}

for mode in mis mim; do
	why=
	db=$MI_TMP/launch-$mode.db
	# snapshots every millisecond: the program checks max_since_last
	# exactly between two reads of its own, which the snapshots' reads
	# in between must leave alone (they keep a max_since_last of their own)
	"$top_builddir/session/meminst" --library="$MEMINST_LIB" -q --$mode --interval 1ms \
		-o "$db" -- "$TARGET" \
		>"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
	snap_expect "exit status" "$?" 0
	cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
	mi_no_complaint "$MI_TMP/run.err"
	snap_expect "mmap row (current bytes, regions, max-ever bytes, regions, calls)" "$(mmap_row "$db")" "$EXPECT"
	"$INSPECT" status --allocators "$db" >"$MI_TMP/status.txt" 2>&1
	grep -q '^ *7 *mmap ' "$MI_TMP/status.txt" || grep -q ' mmap ' "$MI_TMP/status.txt" ||
		mi_why_add "status text without the mmap row"
	mi_verdict "regions $mode under the launcher" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/status.txt" status
done

why=
MI_MEMINST="mim,snapshot=$MI_TMP/alone.db"
mi_x env REGIONS_STALE=1 "$TARGET" >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
snap_expect "exit status" "$?" 0
unset MI_MEMINST
cmp -s "$MI_TMP/ref-stale.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
snap_expect "mmap row, preloaded alone" "$(mmap_row "$MI_TMP/alone.db")" "${EXPECT% *} $((19 + CHURN_MADE))"
snap_expect "top's mappings" "$("$INSPECT" top --json "$MI_TMP/alone.db" | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["mappings"][0]
print(m["bytes_current"], m["regions_current"], m["bytes_max_ever"], m["regions_max_ever"])')" \
	"$KEPT 2 $((20 * 1048576 + 16384)) $CHURN_MOST"
mi_verdict "regions mim preloaded" "$why" "$MI_TMP/run.err" stderr

mi_finish
