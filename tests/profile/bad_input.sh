#!/bin/sh
# bad_input.sh — every damaged or foreign trace gives one line on stderr
# and a non-zero exit (3, inspect's "unreadable or invalid"), never a
# crash; a trace cut short is read up to the cut with a warning.
. "$top_srcdir/tests/profile/lib.sh"

# 128-byte header, then chunk 1 at byte 128 (32-byte chunk header; records
# from 160), chunk of thread 2 after it.
pt_gen good <<'S'
1 call 0 0x1000
1 call 10 0x2000
1 ret 20 0x2000
1 ret 30 0x1000
1 flush
2 call 0 0x1000
2 ret 50 0x1000
S
it_run profile good.trace
pt_expect "good trace" "$IT_RC" "0"

# pt_bad NAME WANT_RC PATTERN: inspect profile and analyse on NAME: exit
# WANT_RC, exactly one line on stderr, matching PATTERN.
pt_bad() {
	for cmd in profile analyse; do
		it_run $cmd "$1"
		if [ "$IT_RC" = "$2" ] && [ "$(wc -l <"$IT_TMP/err")" = 1 ] && grep -q -e "$3" "$IT_TMP/err" &&
		   ! grep -q -i -e sanitizer -e 'core dumped' "$IT_TMP/err"; then
			it_ok "$cmd $1: $(cat "$IT_TMP/err")"
		else
			echo "  | rc=$IT_RC"
			it_fail "$cmd $1: want exit $2 and '$3'" "$IT_TMP/err"
		fi
	done
}

cd "$IT_DB" || exit 99
pt_bad missing.trace 3 "No such file"
echo "hello, I am text" >text.trace
it_run profile text.trace
pt_expect "profile: not a trace" "$IT_RC $(cat "$IT_TMP/err")" "3 inspect: text.trace: not a meminst trace file"
it_run analyse text.trace
pt_expect "analyse: neither a trace nor a profile" "$IT_RC $(wc -l <"$IT_TMP/err")" "3 1"
: >empty.trace
pt_bad empty.trace 3 "meminst trace"

head -c 64 good.trace >short-header.trace
pt_bad short-header.trace 3 "header cut short"

# version 99 (bytes 8-11)
cp good.trace newer.trace
printf '\143' | dd of=newer.trace bs=1 seek=8 conv=notrunc 2>/dev/null
pt_bad newer.trace 3 "version 99 is newer"

# cut inside the last chunk: thread 2's return (the last 16 bytes) is lost
size=$(wc -c <good.trace)
head -c $((size - 5)) good.trace >cut.trace
it_run analyse --json cut.trace
pt_expect "cut short: one warning, exit 0" "$IT_RC $(cat "$IT_TMP/err")" \
	"0 inspect: cut.trace: trace cut short at byte $((size - 16)); read up to there"
pt_expect "cut short: complete records used" "$(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000')), fig(fn(j, 1, '0x1000'))")" \
	"((1, 0.0, 0.0), (1, 0.0, 0.0))"
head -c $((128 + 20)) good.trace >cut-chunk-header.trace
it_run profile cut-chunk-header.trace
pt_expect "cut inside a chunk header" "$IT_RC $(cat "$IT_TMP/err")" \
	"0 inspect: cut-chunk-header.trace: trace cut short at byte 128; read up to there"

# one flipped byte in the first chunk's records
cp good.trace flipped.trace
printf '\377' | dd of=flipped.trace bs=1 seek=170 conv=notrunc 2>/dev/null
pt_bad flipped.trace 3 "corrupt chunk at byte 128 (checksum mismatch)"
cp good.trace magic.trace
printf '\0' | dd of=magic.trace bs=1 seek=128 conv=notrunc 2>/dev/null
pt_bad magic.trace 3 "corrupt chunk at byte 128 (bad chunk magic)"

pt_gen kind <<'S'
1 call 0 0x1000
1 raw 0x0f
S
pt_bad kind.trace 3 "unknown record kind 15 at byte 184"
# in a version 1 file kind 11 is no one-word call
pt_gen kind1 <<'S'
header version 1
1 call 0 0x1000
1 raw 0x0b
S
pt_bad kind1.trace 3 "unknown record kind 11 at byte 184"

# version 2: CALL_FN 0x1000 at 1 ms, then one-word records: CALL32 of
# 0x2000 2 ms later, RET32 3 ms later, RET32 of 0x1000 1 ms later
pt_gen compact <<'S'
1 raw 0xf42400d 0x1000 0x20001e84800b 0x20002dc6c00c 0x10000f42400c
S
it_run analyse --json compact.trace
pt_expect "version 2 one-word calls" "$IT_RC $(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000')), fig(fn(j, 0, '0x2000'))")" \
	"0 ((1, 6.0, 3.0), (1, 3.0, 3.0))"
# version 3: the same with the call of 0x2000 and its return in one LEAF32
# word (ticks of 1 us: 2 ms to the call, 3 ms to the return)
pt_gen leaf <<'S'
header version 3 hz 1000000
1 raw 0x3e80d 0x1000 0x2000bb87d00e 0x10000003e80c
S
it_run analyse --json leaf.trace
pt_expect "version 3 LEAF32" "$IT_RC $(pt_json "$IT_TMP/out" "fig(fn(j, 0, '0x1000')), fig(fn(j, 0, '0x2000'))")" \
	"0 ((1, 6.0, 3.0), (1, 3.0, 3.0))"
# a SAMPLE whose size runs past the chunk; one whose frame count does not fit
pt_gen past <<'S'
1 raw 0x40 0x64 0
S
pt_bad past.trace 3 "record at byte 160 runs past its chunk"
pt_gen count <<'S'
1 raw 0x40 0x0000100000000004 0 0
S
pt_bad count.trace 3 "counts do not fit"
# a chunk header claiming 2^30 words
cp good.trace huge.trace
printf '\0\0\0\100' | dd of=huge.trace bs=1 seek=132 conv=notrunc 2>/dev/null
pt_bad huge.trace 3 "claims 1073741824 words"
# a bad clock and a bad tick rate in the header
pt_gen clock <<'S'
header clock wall hz 0
1 call 0 0x1000
S
pt_bad clock.trace 3 "bad tick rate"
pt_bad . 3 "not a regular file"
it_finish
