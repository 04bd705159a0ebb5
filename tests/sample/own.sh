# own.sh — meminst's own work is one pseudo function, <meminst>, in every
# display and export of samples (issue 12): a program that allocates a lot
# under mis (the bookkeeping inside malloc) sampled at 1000 Hz shows
# <meminst>, and no function of libmeminst's own code (alloc_*, core_*,
# trace_*, svc_*, thread_main …, or _dl_addr that names sites) in
# `inspect analyse`, in `inspect export --format folded` nor in
# `inspect html`; its interposed names (malloc, free) may show, as the
# program's calls.  meminst's threads (the snapshot service, the wall-clock
# sampler) are not sampled: a program with one thread shows one.
. "$top_srcdir/tests/sample/sample_lib.sh"
M=$top_builddir/session/meminst
OWN_RE='(^|;)(alloc_(core|sys|tags|snap|thread|service|status|map|backend|api|hooks|sqlite)[a-z_]*|core_[a-z_]*|trace_[a-z_]*|svc_[a-z_]*|sample_[a-z_]+|wall_[a-z_]*|snap_[a-z_]*|thread_main|_dl_addr)( |;|$)'

# own_in FILE: the first of meminst's own function names in FILE, if any
own_in() {
	grep -oE "$OWN_RE" "$1" | grep -v 'sample_target' | head -1 # the program's name is not ours
}

l=own-mis
st_run $l "mis,sample=1000" "$ST_TARGET" alloc
rc=$?
why=
[ $rc -eq 0 ] || mi_why_add "exit status $rc"
st_analyse $l --top 0
mm=$(st_j $l "round(fn('<meminst>').get('cum_percent', 0), 1)")
awk -v m="${mm:-0}" 'BEGIN { exit !(m > 0) }' || mi_why_add "no <meminst> in the samples"
bad=$(st_j $l "' '.join(f['name'] for f in j['functions'] if (f['module'] or '').startswith('libmeminst') and f['name'] not in ('malloc', 'free', 'calloc', 'realloc'))")
[ -z "$bad" ] || mi_why_add "libmeminst's own functions shown: $bad"
st_j $l "'\n'.join(f['name'] for f in j['functions'])" >"$MI_TMP/$l.names"
b=$(own_in "$MI_TMP/$l.names")
[ -z "$b" ] || mi_why_add "analyse shows $b"
"$ST_INSPECT" export --format folded "$MI_TMP/$l.trace" >"$MI_TMP/$l.folded" 2>>"$MI_TMP/$l.err" ||
	mi_why_add "export --format folded failed"
grep -q '<meminst>' "$MI_TMP/$l.folded" || mi_why_add "no <meminst> in the folded stacks"
b=$(own_in "$MI_TMP/$l.folded")
[ -z "$b" ] || mi_why_add "the folded stacks show $b"
mi_no_complaint "$MI_TMP/$l.err"
st_verdict "$l: meminst's work is <meminst> ($mm%) in analyse and folded"

if [ -x "$M" ]; then
	l=own-html
	why=
	(cd "$MI_TMP" && MEMINST_LIBRARY=$MEMINST_LIB "$M" -q --sample=1000 -o own.db -- \
		"$ST_TARGET" alloc) >"$MI_TMP/$l.out" 2>"$MI_TMP/$l.err" || mi_why_add "meminst failed"
	"$ST_INSPECT" html -o "$MI_TMP/own.html" "$MI_TMP/own.db" 2>>"$MI_TMP/$l.err" ||
		mi_why_add "inspect html failed"
	tr '",<>' '\n\n\n\n' <"$MI_TMP/own.html" | grep -E '^[a-z_]+$' | sed 's/$/ /' >"$MI_TMP/$l.words"
	b=$(own_in "$MI_TMP/$l.words")
	[ -z "$b" ] || mi_why_add "the HTML shows $b"
	grep -q 'meminst&gt;\|meminst>\|meminst\\u003e' "$MI_TMP/own.html" || mi_why_add "no <meminst> in the HTML"
	st_verdict "$l: inspect html shows <meminst>, none of its functions"
fi

# The snapshot service thread and the wall-clock sampler thread exist;
# only the program's one thread is sampled.
for clock in cpu wall; do
	l=own-threads-$clock
	st_run $l "mis,snapshot=$MI_TMP/snap.%p.db,snapshot_at=signal,sample=1000,sample_clock=$clock" \
		"$ST_TARGET" split 300
	why=
	st_analyse $l
	th=$(st_j $l "len(j['threads'])")
	[ "${th:-0}" -eq 1 ] || mi_why_add "samples of ${th:-0} threads, not the program's 1"
	st_verdict "$l: meminst's threads are not sampled"
done

mi_finish
