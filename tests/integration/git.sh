# git.sh — Debian's git under the preload, on a scratch repository: init,
# add a few hundred files, commit, change and commit again, log, diff,
# show, and gc (which runs pack-objects with threads and several git
# children, all preloaded through the environment).  Author, committer,
# dates, HOME and configuration are fixed, so commit ids are the same in
# every run; output is compared with an uninstrumented run.
. "$top_srcdir/tests/integration/lib.sh"

GIT=/usr/bin/git
mi_need $GIT git

mkdir -p "$MI_TMP/home" || exit 99
export HOME="$MI_TMP/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
	GIT_AUTHOR_NAME="Meminst Test" GIT_AUTHOR_EMAIL=test@meminst.invalid \
	GIT_COMMITTER_NAME="Meminst Test" GIT_COMMITTER_EMAIL=test@meminst.invalid \
	GIT_AUTHOR_DATE="2024-01-01T00:00:00 +0000" \
	GIT_COMMITTER_DATE="2024-01-01T00:00:00 +0000" \
	LC_ALL=C TZ=UTC GIT_PAGER=cat PAGER=cat
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

# The files of the first commit, written once, by the shell.
mkdir -p "$MI_TMP/files/src/a" "$MI_TMP/files/src/b" || exit 99
i=0
while [ $i -lt 300 ]; do
	d=a
	[ $((i % 2)) -eq 0 ] && d=b
	seq $i $((i + 40)) >"$MI_TMP/files/src/$d/$i.txt"
	i=$((i + 1))
done

session() {
	repo=$MI_TMP/repo
	rm -rf "$repo"
	mi_x $GIT init -q -b main "$repo" || return
	cp -R "$MI_TMP/files/src" "$repo/" || return
	mi_x $GIT -C "$repo" add -A &&
	mi_x $GIT -C "$repo" commit -q -m "first: 300 files" || return
	seq 1000 1200 >>"$repo/src/a/17.txt"
	rm "$repo/src/b/20.txt"
	mi_x $GIT -C "$repo" mv src/a/11.txt src/moved.txt &&
	mi_x $GIT -C "$repo" commit -q -a -m "second: change, delete, move" &&
	mi_x $GIT -C "$repo" log --format='%H %an %s' --stat &&
	mi_x $GIT -C "$repo" diff --stat -M HEAD~1 HEAD &&
	mi_x $GIT -C "$repo" show HEAD:src/moved.txt | tail -n 3 &&
	mi_x $GIT -C "$repo" gc -q &&
	mi_x $GIT -C "$repo" count-objects -v | grep -v -e size -e garbage &&
	mi_x $GIT -C "$repo" fsck --no-progress --strict
}

mi_compare git session
mi_finish
