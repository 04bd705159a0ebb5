# snap_fork.sh — exit snapshots of a process and its forked children, for
# each backend: tests/targets/snap_fork under MEMINST=mim,snapshot=f.%p.db
# makes a parent and three children, each leaving known blocks.
#   - one file per process (four in all), named after its pid, mode 0600;
#   - in each, one 'exit' snapshot with that pid (and the parent's pid as
#     ppid for the children), the blocks of snap_fork's class as that
#     process printed them, and consistent (the child's copy of the
#     parent's map and counters agree).
# Then children that end with _exit, under control=on: each child's
# service thread (and CPU-profile thread) started in the fork, which the
# sampler's fork handler then forgot as meminst's: the child's _exit took
# them for threads of the program and stored no exit snapshot.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

# fork_case DIR MEMINST ARG...
fork_case() {
	dir=$1 set=$2
	shift 2
	snap_case "$dir" "$set" mi_x "$MI_TARGETS/snap_fork" "$@"
	mi_no_complaint "$dir.err"
	snap_expect "processes" "$(awk '{ print $1 }' "$dir.out" | tr '\n' ' ')" "child1 child2 child3 parent "
	parent=$(awk '$1 == "parent" { print $2 }' "$dir.out")
	want=$(awk '{ printf "f.%s.db ", $2 }' "$dir.out" | tr ' ' '\n' | sort | tr '\n' ' ')
	snap_expect "files" "$(cd "$dir" && ls | tr '\n' ' ')" "$want"
	while read -r name pid blocks bytes; do
		db=$dir/f.$pid.db
		[ -f "$db" ] || { mi_why_add "no file for $name"; continue; }
		snap_expect "mode of $name's file" "$(snap_mode "$db")" 600
		[ "$name" = parent ] && ppid_want=$(snap_field "$db" 1 ppid) || ppid_want=$parent
		snap_expect "$name's snapshot" "$(snap_sql "$db" "SELECT group_concat(trigger || ' ' || content
			|| ' ' || pid || ' ' || ppid) FROM snapshot")" "exit map $pid $ppid_want"
		snap_expect "$name's blocks" "$(snap_own "$db" 1 snap_fork)" "$blocks $bytes"
		snap_check_consistent "$db" 1
	done <"$dir.out"
}

for b in $MEMINST_BACKENDS; do
	fork_case "$MI_TMP/$b" "mim,backend=$b,snapshot=f.%p.db"
	mi_verdict "fork: one exit snapshot per process, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies
	fork_case "$MI_TMP/$b-ctl" "mim,backend=$b,snapshot=f.%p.db,control=on" _exit
	mi_verdict "fork: children's _exit under control=on, mim/$b" "$why" "$dir.out" stdout "$dir.err" stderr \
		"$MI_TMP/incons" inconsistencies
done
mi_finish
