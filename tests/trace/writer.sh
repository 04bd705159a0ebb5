#!/bin/sh
# writer.sh — the trace writer thread: a full disk is said at once on one
# line with the path and errno, the program runs on unchanged and the file
# ends with its last complete chunk; a program that closes every descriptor
# and reuses the trace file's number keeps its own file and a whole trace;
# a writer held up (a pipe nobody reads yet) makes the threads wait, and the
# wait is the <trace-wait> pseudo function, outside the program's times.
# Where the file system takes O_DIRECT the writer pads its batches (padding
# chunks both readers skip), also when the disk fills up.
. "$top_srcdir/tests/trace/trace_lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip  writer: python3 is needed"; exit 77; }
T=$MI_TMP

# leaf_cnt JSON: calls of leaf in `inspect analyse --json`
leaf_cnt() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print(sum(f["calls"] for t in j["threads"] for f in t["functions"] if f["name"] == "leaf"))' "$1" 2>&1
}

# disk_full NAME TRACE: the run whose stderr is NAME.err wrote TRACE to a
# disk that filled: one line on stderr, with the path and the errno, and
# the file whole up to its last chunk (read into NAME.chk) for inspect.
disk_full() {
	[ "$(grep -c . "$1.err")" = 1 ] || mi_why_add "not one line on stderr"
	grep -q "cannot write trace file $2: No space left on device (errno 28)" "$1.err" ||
		mi_why_add "no line with the path and errno"
	"$TR_CHECK" "$2" >"$1.chk" 2>>"$1.err" || mi_why_add "trace unreadable"
	grep -q '^truncated' "$1.chk" && mi_why_add "the file ends in a torn chunk"
	"$TR_INSPECT" analyse "$2" >/dev/null 2>>"$1.err" || mi_why_add "inspect analyse failed"
}

# --- disk full: a 1 MiB tmpfs (root only) -------------------------------
mkdir -p "$T/full"
if mount -t tmpfs -o size=1m tmpfs "$T/full" 2>/dev/null; then
	why=
	tr=$T/full/f.trace
	"$TR_TARGET" loop300000 >"$T/ref.out" 2>&1
	MI_MEMINST="trace=wall,trace_file=$tr"
	mi_x "$TR_TARGET" loop300000 >"$T/full.out" 2>"$T/full.err" || mi_why_add "the program failed"
	unset MI_MEMINST
	# the same output but for the address (position-independent code)
	[ "$(awk '{ print $1, $2, $4 }' "$T/ref.out")" = "$(awk '{ print $1, $2, $4 }' "$T/full.out")" ] ||
		mi_why_add "stdout changed"
	disk_full "$T/full" "$tr"
	umount "$T/full"
	mi_verdict "disk full: one line, file whole up to its last chunk" "$why" "$T/full.err" stderr
else
	echo "skip  disk full: cannot mount a tmpfs here (not root)"
fi

# --- the program closes every descriptor ----------------------------------
why=
tr=$T/close.trace
rm -f "$T/own"
MI_MEMINST="trace=wall,trace_file=$tr"
TRACE_TARGET_FILE=$T/own mi_x "$TR_TARGET" closefds >"$T/close.out" 2>"$T/close.err" ||
	mi_why_add "the program failed"
unset MI_MEMINST
[ "$(cat "$T/own" 2>/dev/null)" = data ] || mi_why_add "the program's own file holds more than its data"
"$TR_CHECK" "$tr" >"$T/close.chk" 2>>"$T/close.err" || mi_why_add "trace unreadable"
"$TR_INSPECT" analyse --json "$tr" >"$T/close.json" 2>>"$T/close.err" || mi_why_add "inspect analyse failed"
[ "$(leaf_cnt "$T/close.json")" = 200000 ] || mi_why_add "leaf: $(leaf_cnt "$T/close.json") calls, not 200000"
mi_verdict "closed descriptors: trace whole, program's file untouched" "$why" "$T/close.err" stderr

# --- a writer held up: <trace-wait> ---------------------------------------
# 4M calls of a leaf make ~32 MB of records (a LEAF32 word each); the
# pipe's reader sleeps first, so the 16 MiB of buffers fill and the thread
# waits for the writer.
why=
fifo=$T/pipe.trace
mkfifo "$fifo"
(exec 3<"$fifo"; sleep 4; cat <&3 >"$T/piped.trace") &
reader=$!
MI_MEMINST="trace=wall,trace_file=$fifo"
mi_x "$TR_TARGET" loop4000000 >"$T/pipe.out" 2>"$T/pipe.err" || mi_why_add "the program failed"
unset MI_MEMINST
wait "$reader"
"$TR_CHECK" "$T/piped.trace" >"$T/pipe.chk" 2>>"$T/pipe.err" || mi_why_add "trace unreadable"
grep -q '^suspend 1 8 ' "$T/pipe.chk" || mi_why_add "no SUSPEND(TRACE) record"
"$TR_INSPECT" analyse --json "$T/piped.trace" >"$T/pipe.json" 2>>"$T/pipe.err" || mi_why_add "inspect analyse failed"
[ "$(leaf_cnt "$T/pipe.json")" = 4000000 ] || mi_why_add "leaf: $(leaf_cnt "$T/pipe.json") calls, not 4000000"
python3 - "$T/pipe.json" >>"$T/pipe.err" 2>&1 <<'EOF_PY' || mi_why_add "<trace-wait> not kept out of the program's times"
import json, sys
j = json.load(open(sys.argv[1]))
fs = {f["name"]: f for f in j["threads"][0]["functions"] + j["threads"][0].get("kept_out", [])}
w = fs.get("<trace-wait>")
main = fs.get("main")
if not w or w["calls"] < 1 or w["acc_ms"] <= 0:
    sys.exit("no <trace-wait> time: %r" % (w,))
# the writer was held up for seconds: main's ACC must not hold that
if main["acc_ms"] > j["threads"][0]["acc_ms"] - w["acc_ms"] * 0.5:
    sys.exit("main acc %r holds the wait %r" % (main["acc_ms"], w["acc_ms"]))
EOF_PY
# the folded stacks keep <trace-wait> too: their sum is the profile's OWN
"$TR_INSPECT" export --format folded -o "$T/pipe.folded" "$T/piped.trace" 2>>"$T/pipe.err" ||
	mi_why_add "export failed"
python3 - "$T/pipe.folded" "$T/pipe.json" >>"$T/pipe.err" 2>&1 <<'EOF_PY' || mi_why_add "folded sum is not the profile's OWN"
import json, sys
rows = [l.rstrip("\n").rpartition(" ") for l in open(sys.argv[1])]
tot = json.load(open(sys.argv[2]))["totals"]
own = round((tot["own_ms"] + tot.get("kept_out_ms", 0)) * 1e6)  # the exports keep the pauses as frames
total = sum(int(n) for _, _, n in rows)
assert abs(total - own) <= len(rows), "folded %d, own %d" % (total, own)
assert any(s.endswith("<trace-wait>") for s, _, _ in rows), "no <trace-wait> stack"
EOF_PY
mi_verdict "writer held up: <trace-wait>, outside the program's times" "$why" "$T/pipe.err" stderr

# --- direct writes (O_DIRECT) and where they are refused -------------------
# Where the file system takes O_DIRECT the writer pads its batches to 4 KiB
# (padding chunks, which both readers skip); on tmpfs it writes as before.
# Either way every call is in the trace.
# direct_case NAME DIR PADS: PADS is "some" or "none"
direct_case() {
	why=
	tr=$2/direct.$1.trace
	rm -f "$tr"
	MI_MEMINST="trace=wall,trace_file=$tr"
	mi_x "$TR_TARGET" loop300000 >"$T/d.$1.out" 2>"$T/d.$1.err" || mi_why_add "the program failed"
	unset MI_MEMINST
	[ -s "$T/d.$1.err" ] && mi_why_add "stderr not empty"
	"$TR_CHECK" "$tr" >"$T/d.$1.chk" 2>>"$T/d.$1.err" || mi_why_add "trace unreadable"
	grep -q '^end$' "$T/d.$1.chk" || mi_why_add "no END record"
	pads=$(awk '$1 == "pads" { print $2 }' "$T/d.$1.chk")
	case $3 in
	some) [ "${pads:-0}" -gt 0 ] || mi_why_add "no padding chunk: no direct write" ;;
	none) [ "${pads:-1}" = 0 ] || mi_why_add "$pads padding chunks on a file system without O_DIRECT" ;;
	esac
	"$TR_INSPECT" analyse --json "$tr" >"$T/d.$1.json" 2>>"$T/d.$1.err" || mi_why_add "inspect analyse failed"
	[ "$(leaf_cnt "$T/d.$1.json")" = 300000 ] || mi_why_add "leaf: $(leaf_cnt "$T/d.$1.json") calls, not 300000"
	rm -f "$tr"
	mi_verdict "direct writes: $1 ($pads padding chunks)" "$why" "$T/d.$1.err" stderr
}
# direct_probe DIR: "some" when DIR takes O_DIRECT writes, else "none"
direct_probe() {
	if dd if=/dev/zero of="$1/probe.$$" bs=4096 count=1 oflag=direct 2>/dev/null; then
		echo some
	else
		echo none
	fi
	rm -f "$1/probe.$$"
}
direct_case build-tree "$T" "$(direct_probe "$T")"
shm=$(df -P /dev/shm 2>/dev/null | awk 'NR == 2 { print $1 }')
if [ "$shm" = tmpfs ] && [ -w /dev/shm ]; then # refuses O_DIRECT before Linux 6.6
	direct_case tmpfs /dev/shm "$(direct_probe /dev/shm)"
else
	echo "skip  tmpfs: no writable tmpfs at /dev/shm"
fi

# --- a full disk under direct writes: an 8 MiB ext4 (root, loop device) ----
mkdir -p "$T/ext4"
if command -v mkfs.ext4 >/dev/null 2>&1 && dd if=/dev/zero of="$T/ext4.img" bs=1M count=8 2>/dev/null &&
	mkfs.ext4 -q "$T/ext4.img" 2>/dev/null && mount -o loop "$T/ext4.img" "$T/ext4" 2>/dev/null; then
	why=
	tr=$T/ext4/f.trace
	MI_MEMINST="trace=wall,trace_file=$tr"
	mi_x "$TR_TARGET" loop2000000 >"$T/ext4.out" 2>"$T/ext4.err" || mi_why_add "the program failed"
	unset MI_MEMINST
	disk_full "$T/ext4" "$tr"
	umount "$T/ext4"
	mi_verdict "disk full under direct writes: one line, file whole up to its last chunk" "$why" \
		"$T/ext4.err" stderr
else
	echo "skip  disk full under direct writes: cannot mount an ext4 image here (not root)"
fi
rm -f "$T/ext4.img"
mi_finish
