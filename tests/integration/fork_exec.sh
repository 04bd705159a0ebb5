# fork_exec.sh — tests/targets/fork_exec under the preload: a parent with a
# second thread busy allocating forks 12 children one after another; each
# child frees inherited blocks, allocates, and execs tests/targets/
# exec_child, which starts libmeminst afresh.  Every process must exit 0
# and the output must match an uninstrumented run.
# Each child checks that every status kind adds up to the total: a fork
# landing between the per-kind updates of another thread would break that.
. "$top_srcdir/tests/integration/lib.sh"

fork_exec() {
	mi_x "$MI_TARGETS/fork_exec" "$MI_TARGETS/exec_child"
}

mi_compare fork_exec fork_exec
mi_finish
