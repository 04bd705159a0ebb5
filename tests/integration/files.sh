# files.sh — output files in a shared directory: what another user left at
# the name of a snapshot, trace or session file is never written through.
#   - a symbolic link (to an empty file, or dangling) is not followed: the
#     target stays as it was, the link stays, one line names the file;
#   - a FIFO at a snapshot's name is refused at once (no hang);
#   - as root: an empty file of another user is left untouched;
#   - new snapshots, traces and session databases are created 0600 under
#     umask 022; an own empty file still takes a snapshot;
#   - no descriptor left at exit: the cause is named (ulimit -n 16).
# The program's output and exit status are not changed: a sample file that
# cannot be created is said ('sampling is off') and the program runs on (it
# was stopped before main).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/snap_lib.sh"

PY=/usr/bin/python3
mi_need "$PY" python3
D=$MI_TMP/shared
mkdir -p "$D"
cd "$D" || exit 99
umask 022

# run MEMINST [refused]: python3 prints 1 under MEMINST; out, err, $rc.
# A sample file that cannot be created is said and the program runs on
# unsampled, as when a snapshot cannot be stored.
run() {
	MI_MEMINST=$1
	mi_x "$PY" -c 'print(1)' >out 2>err
	rc=$?
	unset MI_MEMINST
	snap_expect "exit status" "$rc" 0
	snap_expect "output" "$(cat out)" 1
	if [ "${2:-}" = refused ] && [ "$kind" = trace ]; then
		grep -q '^meminst: sampling is off$' err || mi_why_add "no line saying sampling is off"
	fi
}

# refused LABEL NAME TEXT SETTING: the run leaves NAME's target as it was
# and says TEXT once on stderr.
refused() {
	n=$(grep -c -F -- "$3" err)
	[ "$n" -eq 1 ] || mi_why_add "$n lines with \"$3\" on stderr"
	mi_verdict "$1" "$why" err stderr
}

kind=snapshot
for kind in snapshot trace; do
	if [ $kind = snapshot ]; then
		setting="mim,snapshot=$D/x"
		word="snapshot $D/x"
	else
		setting="off,sample=100,trace_file=$D/x"
		word="trace file $D/x"
	fi

	why=
	rm -f x victim && : >victim && ln -s victim x
	run "$setting" refused
	[ -L x ] || mi_why_add "the link was replaced"
	[ -s victim ] && mi_why_add "the link's target was written"
	refused "$kind: a symbolic link to an empty file is not followed" x "$word"

	why=
	rm -f x victim && ln -s victim x
	run "$setting" refused
	[ -e victim ] && mi_why_add "the dangling link's target was created"
	[ -L x ] || mi_why_add "the link was replaced"
	mi_verdict "$kind: a dangling symbolic link is not followed" "$why" err stderr

	if [ "$(id -u)" = 0 ]; then
		why=
		rm -f x && : >x && chown 65534 x
		run "$setting" refused
		[ -s x ] && mi_why_add "another user's file was written"
		snap_expect "owner" "$(stat -c %u x)" 65534
		refused "$kind: as root, another user's empty file is left untouched" x "owned by another user"
	fi

	why=
	rm -f x
	run "$setting"
	snap_expect "mode of a new file" "$(stat -c %a x)" 600
	[ -s x ] || mi_why_add "nothing was written"
	[ -s err ] && mi_why_add "messages on stderr"
	mi_verdict "$kind: a new file is 0600 under umask 022" "$why" err stderr
done

why=
rm -f x && mkfifo x
MI_MEMINST="mim,snapshot=$D/x"
timeout 60 env LD_PRELOAD="$MEMINST_LIB" MEMINST="$MI_MEMINST" "$PY" -c 'print(1)' >out 2>err
rc=$?
unset MI_MEMINST
snap_expect "exit status" "$rc" 0
refused "snapshot: a FIFO at the name is refused, not waited on" x "not a regular file"

why=
rm -f x && : >x
run "mim,snapshot=$D/x"
snap_expect "snapshots in an own empty file" "$(snap_sql x 'SELECT count(*) FROM snapshot')" 1
mi_verdict "snapshot: an own empty file is taken" "$why" err stderr

# Descriptors used up by the end (ulimit -n 16): the message names that
# cause (it blamed a missing libsqlite3); with two left the exit snapshot
# is written (meminst's SQLite is linked in: nothing to load).
FDS='import os, sys
fds = []
try:
    while True:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
for i in range(int(sys.argv[1])):
    os.close(fds.pop())
print(1)'
for left in 0 2; do
	why=
	rm -f fd.db
	(ulimit -n 16 && MI_MEMINST="mim,snapshot=$D/fd.db" && mi_x "$PY" -c "$FDS" $left) >out 2>err
	snap_expect "exit status" "$?" 0
	snap_expect "output" "$(cat out)" 1
	if [ $left = 0 ]; then
		grep -q "^meminst: snapshot $D/fd.db: cannot create: Too many open files$" err ||
			mi_why_add "no line naming the cause"
		grep -q 'apt-get' err && mi_why_add "a missing libsqlite3 blamed"
	else
		snap_expect "exit snapshots" "$(snap_sql fd.db 'SELECT count(*) FROM snapshot')" 1
		[ -s err ] && mi_why_add "messages on stderr"
	fi
	mi_verdict "ulimit -n 16, $left descriptors left at exit" "$why" err stderr
done

why=
rm -f s.db
MEMINST_LIBRARY="$MEMINST_LIB" "$top_builddir/session/meminst" -q --no-time -o s.db -- "$PY" -c 'print(1)' \
	>out 2>err
snap_expect "launcher exit status" "$?" 0
snap_expect "mode of the session database" "$(stat -c %a s.db)" 600
mi_verdict "session: the database is 0600 under umask 022" "$why" err stderr
mi_finish
