# snap_rss.sh — snapshot_at=rss:LIMIT (meminst(7)): a map snapshot when the
# process's resident set crosses a threshold.  tests/targets/grow holds
# ever more 256 KiB blocks of grow_step, written through, then holds them
# for a while and exits.
#
#   size     snapshot_at=exit+rss:24M, grow to 40 MiB: stdout as without
#            meminst, exit 0; at least one map snapshot whose trigger is
#            rss, every one taken with the resident set at 24 MiB or more
#            (snapshot_rss), the first holding grow_step's blocks (top);
#            and with rss:1G (never reached) no rss snapshot at all.
#   percent  in a memory cgroup (v1) limited to 128 MiB, rss:40% (of the
#            limit: 51.2 MiB) and grow to 80 MiB: the same, at 40 % of
#            the limit or more, and the run not killed.  Skipped, with the
#            reason, where no cgroup can be made (not root, no v1 memory
#            controller, a kernel that refuses).
. "$top_srcdir/tests/integration/lib.sh"

INSPECT=$top_builddir/inspect/inspect
GROW=$MI_TARGETS/grow

# rss_run LABEL THRESHOLD_BYTES SNAPSHOT_AT STEPS [PREFIX...]: grow STEPS
# blocks (5 ms apart, then 2 s held) beside the reference; the checks of
# the rss snapshots against THRESHOLD_BYTES (0: there must be none).
rss_run() {
	label=$1 least=$2 at=$3 steps=$4
	shift 4
	db=$MI_TMP/$label.db
	why=
	"$@" timeout -s KILL 120 "$GROW" "$steps" 5 2000 >"$MI_TMP/ref.out" 2>&1 || mi_why_add "reference run failed"
	"$@" timeout -s KILL 120 env LD_PRELOAD="$MEMINST_LIB" MEMINST="mim,snapshot=$db,snapshot_at=exit+$at" \
		"$GROW" "$steps" 5 2000 >"$MI_TMP/run.out" 2>"$MI_TMP/$label.err"
	rc=$?
	[ $rc = 0 ] || mi_why_add "exit status $rc"
	cmp -s "$MI_TMP/ref.out" "$MI_TMP/run.out" || mi_why_add "stdout differs"
	mi_no_complaint "$MI_TMP/$label.err"
	rows=$("$INSPECT" sql "$db" "SELECT s.id, s.content, r.rss FROM snapshot s JOIN snapshot_rss r \
		ON r.snapshot = s.id WHERE s.trigger = 'rss' ORDER BY s.id" 2>&1)
	if [ "$least" = 0 ]; then
		[ -z "$rows" ] || mi_why_add "rss snapshots below the threshold: $rows"
	elif [ -z "$rows" ]; then
		mi_why_add "no snapshot with the trigger rss"
	else
		echo "$rows" | while IFS='|' read -r id content rss; do
			[ "$content" = map ] || echo "snapshot $id is $content, not map"
			[ "$rss" -ge "$least" ] || echo "snapshot $id taken at a resident set of $rss, below $least"
		done >"$MI_TMP/bad"
		[ -s "$MI_TMP/bad" ] && mi_why_add "$(head -n 3 "$MI_TMP/bad" | tr '\n' ';')"
		first=$(echo "$rows" | head -n 1 | cut -d'|' -f1)
		"$INSPECT" top "$db" --snapshot "$first" >"$MI_TMP/$label.top" 2>&1
		sed -n '/^ *1 /p' "$MI_TMP/$label.top" | grep -q grow_step || mi_why_add "top's first row is not grow_step"
	fi
	mi_verdict "rss $label: $at" "$why" "$MI_TMP/$label.err" stderr "$MI_TMP/$label.top" top
}

# ------------------------------------------------------------------ size --
rss_run size $((24 << 20)) rss:24M 160
rss_run never 0 rss:1G 160

# --------------------------------------------------------------- percent --
LIMIT=$((128 << 20))
. "$top_srcdir/tests/integration/cgroup_lib.sh"
if make_cgroup; then
	rss_run percent $((LIMIT / 100 * 40)) rss:40% 320 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg"
	cg_cleanup
else
	echo "skip  rss percent in a memory cgroup: $skip"
fi
mi_finish
