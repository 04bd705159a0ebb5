# options.sh — a malformed or not yet supported MEMINST stops the program
# before main: exit status 2, nothing from the program on stdout, and one
# line on stderr naming the bad item (plus meminst's "not started" line).
# Checked for /bin/echo and /usr/bin/true under the preload and for a
# program linked with -lmeminst.  Valid values, as a control, let the
# program run normally.
. "$top_srcdir/tests/integration/lib.sh"

OUT=$MI_TMP/opt.out ERR=$MI_TMP/opt.err
ECHO=/bin/echo TRUE=/usr/bin/true LINKED=$MI_TARGETS/api_tags

# run VALUE PROGRAM ARGS...: the program with MEMINST=VALUE (preloaded
# unless it is the linked target).
run() {
	MI_MEMINST=$1
	shift
	if [ "$1" = "$LINKED" ]; then
		mi_xl "$@" >"$OUT" 2>"$ERR"
	else
		mi_x "$@" >"$OUT" 2>"$ERR"
	fi
	rc=$?
	unset MI_MEMINST
}

# refused VALUE EXPECTED-TEXT: every program is stopped with one line
# holding EXPECTED-TEXT.
refused() {
	for prog in "$ECHO" "$TRUE" "$LINKED"; do
		why=
		run "$1" "$prog" program-ran
		[ "$rc" -eq 2 ] || mi_why_add "exit status $rc, expected 2"
		[ ! -s "$OUT" ] || mi_why_add "the program ran"
		n=$(grep -c -F -- "$2" "$ERR")
		[ "$n" -eq 1 ] || mi_why_add "$n lines with \"$2\""
		n=$(grep -c -e 'bad MEMINST' -e 'not yet supported' -e 'need mode' -e 'needs backend' "$ERR")
		[ "$n" -eq 1 ] || mi_why_add "$n error lines"
		! grep -v -q '^meminst: ' "$ERR" || mi_why_add "other text on stderr"
		[ "$(wc -l <"$ERR")" -le 2 ] || mi_why_add "more than two lines on stderr"
		mi_verdict "MEMINST=$1 $(basename "$prog")" "$why" "$OUT" stdout "$ERR" stderr
	done
}

# accepted VALUE: every program runs as if MEMINST were unset.
accepted() {
	for prog in "$ECHO" "$LINKED"; do
		why=
		run "$1" "$prog"
		[ "$rc" -eq 0 ] || mi_why_add "exit status $rc"
		[ -s "$OUT" ] || mi_why_add "no output"
		mi_no_complaint "$ERR"
		mi_verdict "MEMINST=$1 $(basename "$prog") accepted" "$why" "$OUT" stdout "$ERR" stderr
	done
}

refused 'mim,interval=5x' "meminst: bad MEMINST item 'interval=5x': "
refused 'bogus' "meminst: bad MEMINST item 'bogus': "
refused 'MIM' "meminst: bad MEMINST item 'MIM': "
refused 'mim,backend=tcmalloc' "meminst: bad MEMINST item 'backend=tcmalloc': "
refused 'mis,backend=' "meminst: bad MEMINST item 'backend=': "
refused 'mim,print=total+bogus' "meminst: bad MEMINST item 'print=total+bogus': "
refused 'mim,on_error=maybe' "meminst: bad MEMINST item 'on_error=maybe': "
refused 'mim,quiet=perhaps' "meminst: bad MEMINST item 'quiet=perhaps': "
refused 'mim,colour=blue' "meminst: bad MEMINST item 'colour=blue': "
refused 'mim,sample=0' "meminst: bad MEMINST item 'sample=0': "
refused 'mim,,mis' "meminst: bad MEMINST value 'mim,,mis': empty item"
refused 'snapshot=x.db' "meminst: MEMINST items snapshot, snapshot_at and interval need mode mis or mim, or control=on (dormant: switched on by inspect start)"
refused 'off,control=on,backend=jemalloc' "meminst: MEMINST off,control=on (dormant) needs backend=system: blocks made while off must be glibc's to be freed after a switch on"
refused 'mim,snapshot_signal=KILL' "meminst: bad MEMINST item 'snapshot_signal=KILL': "
# numbers checked before they are narrowed: 2^32+11 is not SIGSEGV, 2^32+9 not
# SIGKILL, RTMIN+(2^32-1) not the signal below SIGRTMIN that glibc keeps
refused 'mim,snapshot_signal=4294967307' "meminst: bad MEMINST item 'snapshot_signal=4294967307': "
refused 'mim,snapshot_signal=4294967305' "meminst: bad MEMINST item 'snapshot_signal=4294967305': "
refused 'mim,snapshot_signal=RTMIN+4294967295' "meminst: bad MEMINST item 'snapshot_signal=RTMIN+4294967295': "
refused 'mim,snapshot_signal=33' "meminst: bad MEMINST item 'snapshot_signal=33': "
refused 'mim,peak_growth=none' "meminst: bad MEMINST item 'peak_growth=none': "
refused 'mim,trace=gpu' "meminst: bad MEMINST item 'trace=gpu': "
refused 'trace_threads=some' "meminst: bad MEMINST item 'trace_threads=some': "

accepted ''
accepted 'off'
for b in $MEMINST_BACKENDS; do
	accepted "mim,backend=$b,on_error=report,quiet=off,print=total"
	accepted "mis,backend=$b,control=off"
	accepted "mim,backend=$b,control=on,snapshot_at=none"
done
mi_finish
