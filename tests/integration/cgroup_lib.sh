# cgroup_lib.sh — a memory cgroup (v1) with a limit for a test, sourced
# after lib.sh with LIMIT (bytes) set:
#     make_cgroup     makes it in $cg (under our own cgroup, else at the
#                     root of the controller), or says why not in $skip
#     cg_cleanup      kills what is left in it and removes it (on EXIT too)
# Root and a v1 memory controller are needed; the kernel may refuse.
cg=
cg_cleanup() {
	[ -n "$cg" ] && [ -d "$cg" ] || return 0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "  | could not remove the cgroup $cg"
}
trap 'cg_cleanup; mi_cleanup' EXIT

# make_cgroup: a v1 memory cgroup with the limit, in $cg; else the reason in $skip
make_cgroup() {
	skip=
	[ "$(id -u)" = 0 ] || { skip="not root"; return 1; }
	own=$(sed -n 's/^[0-9]*:[^:]*\bmemory\b[^:]*://p' /proc/self/cgroup)
	[ -n "$own" ] && [ -d /sys/fs/cgroup/memory ] || { skip="no cgroup v1 memory controller"; return 1; }
	for parent in "/sys/fs/cgroup/memory${own%/}" /sys/fs/cgroup/memory; do
		cg=$parent/meminst-test.$$
		if mkdir "$cg" 2>/dev/null; then
			if echo $LIMIT >"$cg/memory.limit_in_bytes" 2>/dev/null &&
			   [ "$(cat "$cg/memory.limit_in_bytes")" = $LIMIT ]; then
				# no swap to go to instead of the OOM killer
				[ -e "$cg/memory.memsw.limit_in_bytes" ] &&
					echo $LIMIT >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null
				echo 0 >"$cg/memory.swappiness" 2>/dev/null
				return 0
			fi
			rmdir "$cg"
		fi
		cg=
	done
	skip="the kernel refused a memory cgroup with a limit under /sys/fs/cgroup/memory"
	return 1
}
