# tables.sh — the address space meminst takes, and tables that grow:
#   - after start-up, mis and mim have taken at most 16 MiB of address space
#     more than off (tests/targets/tables vm prints VmSize), each backend;
#   - programs run instrumented under `ulimit -v 150000` (set in a subshell
#     around each run): sort on 200,000 numbers and 12,000 allocation
#     sites, each mode x backend, with the output of an uninstrumented run
#     under the same limit;
#   - when a chunk of the type tables cannot be mapped (a limit 600 kB above
#     the start), the program still runs to its end with the same output,
#     and meminst says so in exactly one line;
#   - the launcher's interval snapshots of a sort under `ulimit -v 50000`,
#     every 10 ms: "no memory for the interval snapshot" said once, not
#     at each turn (40 lines), and no "out of memory: not an error".
. "$top_srcdir/tests/integration/lib.sh"

tables=$MI_TARGETS/tables
MI_RESERVE_MAX_KB=16384

vm_of() { # MEMINST value: VmSize after start-up, in kB
	env LD_PRELOAD="$MEMINST_LIB" MEMINST="$1" "$tables" vm
}

for b in $MEMINST_BACKENDS; do
	off=$(vm_of "off,backend=$b")
	for m in mis mim; do
		why=
		on=$(vm_of "$m,backend=$b")
		if [ -z "$off" ] || [ -z "$on" ]; then
			mi_why_add "no VmSize (off '$off', $m '$on')"
		elif [ $((on - off)) -gt $MI_RESERVE_MAX_KB ]; then
			mi_why_add "$((on - off)) kB more than off at start (at most $MI_RESERVE_MAX_KB)"
		fi
		mi_verdict "address space at start, $m/$b: $((on - off)) kB over off" "$why"
	done
done

awk 'BEGIN { x = 12345; for (i = 0; i < 200000; i++) { x = (x * 1103515245 + 12345) % 2147483648; print x } }' \
	>"$MI_TMP/numbers"
limited() { # COMMAND...: run through mi_x with 150,000 kB of address space
	(ulimit -v 150000 && mi_x "$@")
}
mi_compare "sort under ulimit -v 150000" limited sort -n "$MI_TMP/numbers"
mi_compare "12000 sites under ulimit -v 150000" limited "$tables" sites

# The type tables cannot grow past their second chunk: one warning, same output.
for m in mis mim; do
	why=
	start=$(vm_of "$m,backend=system")
	(ulimit -v $((start + 600)) &&
		env LD_PRELOAD="$MEMINST_LIB" MEMINST="$m,backend=system" "$tables" sites) \
		>"$MI_TMP/full.out" 2>"$MI_TMP/full.err"
	rc=$?
	[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
	[ "$(cat "$MI_TMP/full.out")" = ok ] || mi_why_add "output differs"
	n=$(grep -c '^meminst: no memory to map the tables of types' "$MI_TMP/full.err")
	[ "$n" -eq 1 ] || mi_why_add "$n lines about the type tables (expected 1)"
	others=$(grep -v '^meminst: no memory to map the tables of types' "$MI_TMP/full.err" | grep -c .)
	[ "$others" -eq 0 ] || mi_why_add "$others other lines on stderr"
	mi_verdict "type tables full, $m/system: one warning, the program runs on" "$why" \
		"$MI_TMP/full.err" stderr
done
# Interval snapshots short of memory: said once.
why=
(ulimit -v 50000 && sort -n "$MI_TMP/numbers") >"$MI_TMP/ref.out" 2>/dev/null
MEMINST_LIBRARY="$MEMINST_LIB" $MI_TIMEOUT "$top_builddir/session/meminst" -q --interval 10ms \
	-o "$MI_TMP/short.db" -- sh -c 'ulimit -v 50000 && exec sort -n "$1"' sh "$MI_TMP/numbers" \
	>"$MI_TMP/short.out" 2>"$MI_TMP/short.err"
rc=$?
[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
cmp -s "$MI_TMP/ref.out" "$MI_TMP/short.out" || mi_why_add "output differs"
n=$(grep -c '^meminst: no memory for the interval snapshot' "$MI_TMP/short.err")
[ "$n" -le 1 ] || mi_why_add "$n lines of no memory for the interval snapshot (at most 1)"
! grep -q 'not an error' "$MI_TMP/short.err" || mi_why_add "SQLite's 'not an error' said as the reason"
mi_verdict "launcher --interval 10ms, sort under ulimit -v 50000: short of memory said once" "$why" \
	"$MI_TMP/short.err" stderr
mi_finish
