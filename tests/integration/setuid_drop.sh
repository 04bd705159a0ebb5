#!/bin/sh
# setuid_drop.sh — a program that switches to another user (memcached -u
# nobody, su, a daemon dropping root; tests/targets/drop_user.c) run as
# root keeps its measurements.  After the switch its snapshots could not be
# created in the launcher's private directory ("cannot create: Permission
# denied" at every store, 84 lines for memcached) and the session lacked
# them.  Now the process makes DIR/uid.N for the new user before the
# switch, passable through DIR by that user alone (an ACL entry), and its
# files go there: the session has its exit snapshot, the one of a program
# it executes as that user, the one of a child it forks, the one of a
# process back to root after seteuid(N) (temp); nothing is said.
# The parts directory is never opened to others (no bits for others).
# Without the launcher, a directory the new user cannot write in is said
# once, in one line, not at every store; in a directory it can write
# in, the snapshot file made before the switch is given to it, and the
# exit snapshot is added.  Needs root and a user nobody.
. "$top_srcdir/tests/integration/lib.sh"

TARGET=$MI_TARGETS/drop_user
LAUNCH=$top_builddir/session/meminst
INSPECT=$top_builddir/inspect/inspect
export MEMINST_LIBRARY="$MEMINST_LIB"

if [ "$(id -u)" != 0 ]; then
	echo "skip  $MI_NAME: needs root, to switch to another user"
	exit 77
fi
uid=$(id -u nobody 2>/dev/null) && gid=$(id -g nobody 2>/dev/null) || { echo "skip  $MI_NAME: no user nobody"; exit 77; }
chmod 755 "$MI_TMP"
q() { "$INSPECT" sql "$MI_TMP/s.db" "$1" 2>>"$MI_TMP/sql.err" | tail -n 1 | tr -dc '0-9'; }

for how in keep exec fork temp; do
	st=3
	mi_reference_status $st "drop_user $how" "$TARGET" $how $uid $gid || continue
	for opts in "" "--mim --interval=10ms"; do
		label="launcher ${opts:-(defaults)}, drop_user $how"
		rm -f "$MI_TMP/s.db"
		mi_run_like_reference $MI_TIMEOUT "$LAUNCH" -q -o "$MI_TMP/s.db" $opts -- "$TARGET" $how $uid $gid
		mi_no_complaint "$MI_TMP/run.err"
		n=$(q "SELECT count(*) FROM snapshot WHERE trigger = 'exit'")
		want=1
		[ $how = fork ] && want=2
		[ "$n" = $want ] || mi_why_add "$n exit snapshots, not $want"
		case $opts in *interval*)
			n=$(q "SELECT count(*) FROM snapshot WHERE trigger = 'interval'")
			[ "${n:-0}" -ge 1 ] || mi_why_add "no interval snapshot" ;;
		esac
		ls -a "$MI_TMP" | grep -q meminst-parts && mi_why_add "the parts directory was left"
		mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr "$MI_TMP/sql.err" "inspect sql"
	done
done

# The launcher's directory while the program runs, after the switch: DIR
# gives nothing to others, DIR/uid.N is N's alone
why=
"$LAUNCH" -q -f -o "$MI_TMP/s.db" -- sh -c '"$0" keep $1 $2 >/dev/null
d=$(echo "$MEMINST" | sed "s/.*run_dir=\([^,]*\).*/\1/")
stat -c "%a %U" "$d" "$d"/uid.*' "$TARGET" $uid $gid >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
mi_no_complaint "$MI_TMP/run.err"
[ "$(sed -n 1p "$MI_TMP/run.out")" = "710 root" ] || mi_why_add "the run's directory: $(sed -n 1p "$MI_TMP/run.out")"
[ "$(sed -n 2p "$MI_TMP/run.out")" = "700 nobody" ] || mi_why_add "the user's directory: $(sed -n 2p "$MI_TMP/run.out")"
mi_verdict "launcher, the directories' modes after a switch" "$why" "$MI_TMP/run.out" stdout "$MI_TMP/run.err" stderr

# A hostile user N fills its directory with links to root's files and a
# FIFO: the launcher reads none of them (no link followed, no FIFO waited
# on), changes nothing, and removes the directory.
if command -v setpriv >/dev/null; then
	why=
	cp /etc/passwd "$MI_TMP/passwd.before"
	$MI_TIMEOUT "$LAUNCH" -q --snapshot-at=exit --interval=0 -f -o "$MI_TMP/s.db" -- \
		setpriv --reuid=nobody --regid=$gid --clear-groups sh -c 'd=$(echo "$MEMINST" | sed "s/.*run_dir=\([^,]*\).*/\1/")/uid.$(id -u)
ln -s /etc/passwd "$d/trace.998"; ln -s /etc/passwd "$d/mem.997.db.log"; ln -s /etc/passwd "$d/mem.999.db"
mkfifo "$d/trace.996"; echo planted' >"$MI_TMP/run.out" 2>"$MI_TMP/run.err"
	[ "$(cat "$MI_TMP/run.out")" = planted ] || mi_why_add "stdout: $(head -c 80 "$MI_TMP/run.out")"
	n=$(q "SELECT count(*) FROM session_trace WHERE pid IN (996, 998)")
	[ "$n" = 0 ] || mi_why_add "$n trace pieces read through a link or a FIFO"
	n=$(q "SELECT count(*) FROM session_note WHERE line LIKE 'root:%'")
	[ "$n" = 0 ] || mi_why_add "a note read through a link"
	cmp -s /etc/passwd "$MI_TMP/passwd.before" || mi_why_add "/etc/passwd changed"
	ls -a "$MI_TMP" | grep -q meminst-parts && mi_why_add "the parts directory was left"
	MI_EXPECTED_NOTE='mem.999.db: unable to open database' mi_no_complaint "$MI_TMP/run.err"
	mi_verdict "launcher, a user's directory with links and a FIFO" "$why" "$MI_TMP/run.err" stderr
fi

# the preload alone: a directory nobody cannot write in, and one it can
mkdir -m 700 "$MI_TMP/closed"
mkdir -m 1777 "$MI_TMP/open"
for dir in closed open; do
	rm -f "$MI_TMP/$dir"/*
	MI_MEMINST="mis,snapshot=$MI_TMP/$dir/d.%p.db,snapshot_at=exit+peak"
	mi_reference_status 3 "drop_user keep" "$TARGET" keep $uid $gid || continue
	mi_run_like_reference mi_x "$TARGET" keep $uid $gid
	unset MI_MEMINST
	label="preload, a directory nobody $([ $dir = open ] && echo can || echo cannot) write in"
	n=$(grep -c '^meminst:' "$MI_TMP/run.err")
	if [ $dir = closed ]; then
		[ "$n" = 1 ] || mi_why_add "$n lines from meminst, not 1"
		grep -q "switched to user $uid: it cannot make files in" "$MI_TMP/run.err" || mi_why_add "no line naming the switch"
	else
		[ "$n" = 0 ] || mi_why_add "$n lines from meminst"
		db=$(ls "$MI_TMP/open"/d.*.db 2>/dev/null | head -n 1)
		n=$("$INSPECT" sql "$db" "SELECT count(*) FROM snapshot WHERE trigger = 'exit'" 2>/dev/null | tail -n 1 | tr -dc 0-9)
		[ "$n" = 1 ] || mi_why_add "${n:-no} exit snapshot in ${db:-no file}"
	fi
	mi_verdict "$label" "$why" "$MI_TMP/run.err" stderr
done
mi_finish
