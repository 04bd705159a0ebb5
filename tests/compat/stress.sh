# stress.sh — `make check-long`: minutes of stress under the preload, in mis
# and mim with each backend (STRESS_SECONDS, default 30 per case):
#   - 8, 16 and 32 threads, half allocating, half checking and freeing the
#     blocks of the others (the probes check the counters at the end);
#   - fork while 4 threads run allocation storms; every child allocates,
#     stores a snapshot and exits cleanly, and each snapshot adds up;
#   - dlopen/dlclose loops with allocations in between.
# Signals inside malloc, exec of uninstrumented children and out of memory
# are in `make check` already (sig_storm.sh, fork_exec.sh, oom.sh).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

SECS=${STRESS_SECONDS:-30}
ST=$MI_TARGETS/stress
MEMINST_TEST_MODES=mis\ mim

for n in 8 16 32; do
	xt() { mi_x "$ST" xthread "$n" "$SECS"; }
	mi_compare "xthread $n threads ${SECS}s" xt
done

forks() { mi_x "$ST" forks "$((SECS / 2))"; }
mi_compare "fork storm $((SECS / 2))s" forks
rm -f "$MI_TMP"/child.*.db
STRESS_SNAPSHOT="$MI_TMP/child.%p.db" MI_MEMINST=mim forks >/dev/null 2>"$MI_TMP/f.err"
why=
snap_check_files "$MI_TMP"/child.*.db
n=$snap_files
[ "$n" -ge 20 ] || mi_why_add "$n child snapshots, expected at least 20"
mi_verdict "fork storm: $n child snapshots add up" "$why" "$MI_TMP/f.err" stderr

dl() { mi_x "$ST" dlopen 20000; }
mi_compare "dlopen/dlclose 20000" dl
mi_finish
