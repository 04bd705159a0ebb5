# snap_forkrace.sh — a fork racing with a process's first snapshot store
# (tests/targets/snap_forkrace): the child must not inherit the store lock
# or SQLite's mutexes held by a thread it does not have, and hang for ever
# in its own exit snapshot.  The fork handlers that make fork wait for a
# store were registered by the first store itself, so a fork in that
# instant was not held back (about 1 process in 100 that stores while
# another thread forks left a stuck child).
# glibc runs the prepare handlers without its own lock held, so a handler
# registered while another thread's fork runs them is run neither before
# that fork nor in its child; the program's own prepare handler (here a
# slow one, 2 ms) widens that window: on the old code 26 workers in 40 left
# a stuck child.  The handlers are now registered by the library's
# constructor.  40 workers, each forking (at most 50 times) while its first
# store runs; every child must end, and its exit snapshot be there.
: "${MEMINST_TEST_TIMEOUT:=300}"
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

d=$MI_TMP/race
mkdir -p "$d"
why=
MI_MEMINST="mim,snapshot=$d/c.%p.db"
mi_x "$MI_TARGETS/snap_forkrace" 40 "$d" >"$MI_TMP/out" 2>"$MI_TMP/err"
rc=$?
unset MI_MEMINST
snap_expect "exit status" "$rc" 0
grep -q '^rounds 40 forks [1-9][0-9]* stuck 0$' "$MI_TMP/out" ||
	mi_why_add "$(grep -E '^(stuck|rounds)' "$MI_TMP/out" | head -n 3 | tr '\n' ' ')"
mi_no_complaint "$MI_TMP/err"
forks=$(sed -n 's/^rounds 40 forks \([0-9]*\) .*/\1/p' "$MI_TMP/out")
# every process leaves an exit snapshot: the top one, 40 workers, their children
files=$(ls "$d"/c.*.db 2>/dev/null | wc -l)
snap_expect "exit snapshots" "$files" $((1 + 40 + ${forks:-0}))
mi_verdict "40 workers forking ${forks:-?} times during their first store: no child stuck" "$why" \
	"$MI_TMP/out" stdout "$MI_TMP/err" stderr
mi_finish
