#!/bin/sh
# man-check.sh — the manual pages render cleanly and say what the library does.
#
#   1. groff (and man, when installed) format doc/*.[37] with every warning
#      enabled and must print nothing on stderr;
#   2. the program in libmeminst(3)'s EXAMPLES, built by the make rules from
#      the page's own text as doc/man-example, must print what the page
#      shows for it, in mis and mim mode, and refuse to run in off mode;
#   3. the MEMINST error messages that meminst(7) quotes must be the ones the
#      library writes, with exit status 2;
#   4. so must the messages it quotes for snapshot files that are not ours
#      (the example program, run with snapshot=FILE, leaves FILE as it was).
# Run by `make check` (top_builddir and top_srcdir come from
# AM_TESTS_ENVIRONMENT).  Exits 0, 1, or 77 when nothing could be checked.
set -u
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

pages="$top_srcdir/doc/libmeminst.3 $top_srcdir/doc/meminst.7"
example="$top_builddir/doc/man-example"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-check.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
unset MEMINST LD_PRELOAD
fails=0 checks=0

ok() { echo "ok    $1"; checks=$((checks + 1)); }
fail() {
	echo "FAIL  $1"
	[ -s "$tmp/err" ] && sed 's/^/  | /' "$tmp/err"
	fails=$((fails + 1)) checks=$((checks + 1))
}

# ---- 1. rendering --------------------------------------------------------
for page in $pages; do
	name=$(basename "$page")
	if command -v groff >/dev/null 2>&1; then
		groff -man -ww -z "$page" >"$tmp/err" 2>&1
		if [ $? -eq 0 ] && [ ! -s "$tmp/err" ]; then
			ok "groff -man -ww $name"
		else
			fail "groff -man -ww $name"
		fi
	else
		echo "skip  groff -man -ww $name: groff not installed"
	fi
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/err"
		if [ $? -eq 0 ] && [ ! -s "$tmp/err" ]; then
			ok "man --warnings $name"
		else
			fail "man --warnings $name"
		fi
	fi
done

# ---- 2. the example of libmeminst(3) -------------------------------------
# expect_line FILE LINE: FILE has LINE as one whole line.
expect_line() {
	grep -qxF -- "$2" "$1" && return 0
	{ echo "expected the line: $2"; echo "got:"; cat "$1"; } >"$tmp/err"
	return 1
}

run_example() { # mode header-size
	MEMINST=$1 "$example" >"$tmp/out" 2>"$tmp/err"
	status=$?
	if [ $status -ne 0 ]; then
		echo "exit status $status" >>"$tmp/err"
		return 1
	fi
	expect_line "$tmp/out" "backend system, header $2 bytes" || return 1
	expect_line "$tmp/out" "class list: 2000 blocks, 33000 bytes" || return 1
	expect_line "$tmp/out" \
		"meminst status: classes (mode $1, backend system, header $2 bytes)" || return 1
	grep -Eq '^ +[0-9]+  list +32\.2 KiB +32\.2 KiB +32\.2 KiB +2000 +2000 +2000 +2000 +0$' \
		"$tmp/out" && return 0
	{ echo "no row for class list as the page shows it; got:"; cat "$tmp/out"; } >"$tmp/err"
	return 1
}

# The lines checked above are the ones the page shows as the output.
for line in "backend system, header 16 bytes" "class list: 2000 blocks, 33000 bytes" \
	"meminst status: classes (mode mis, backend system, header 16 bytes)"; do
	if grep -qxF -- "$line" "$top_srcdir/doc/libmeminst.3"; then
		ok "libmeminst.3 shows: $line"
	else
		echo "the page no longer shows this line; update this test" >"$tmp/err"
		fail "libmeminst.3 shows: $line"
	fi
done

if [ -x "$example" ]; then
	for m in mis:16 mim:32; do
		if run_example "${m%:*}" "${m#*:}"; then
			ok "libmeminst.3 example, MEMINST=${m%:*}"
		else
			fail "libmeminst.3 example, MEMINST=${m%:*}"
		fi
	done
	"$example" >"$tmp/out" 2>"$tmp/err"
	status=$?
	if [ $status -eq 1 ] && expect_line "$tmp/err" "run with MEMINST=mis or MEMINST=mim"; then
		ok "libmeminst.3 example, MEMINST unset"
	else
		echo "exit status $status" >>"$tmp/err"
		fail "libmeminst.3 example, MEMINST unset"
	fi
else
	echo "skip  libmeminst.3 example: $example was not built"
fi

# ---- 3. the messages meminst(7) quotes ------------------------------------
# refused VALUE FIRST-LINE: MEMINST=VALUE stops the program before main with
# FIRST-LINE and the "not started" line, and exit status 2.
refused() {
	MEMINST=$1 "$example" >"$tmp/out" 2>"$tmp/err"
	status=$?
	printf '%s\n%s\n' "$2" \
		"meminst: the program was not started; fix or unset MEMINST (see meminst(7))" \
		>"$tmp/want"
	if [ $status -eq 2 ] && [ ! -s "$tmp/out" ] && cmp -s "$tmp/want" "$tmp/err"; then
		ok "meminst.7 message for MEMINST=$1"
	else
		{ echo "exit status $status; stderr:"; cat "$tmp/err"; echo "wanted:"; cat "$tmp/want"; } >"$tmp/err2"
		mv "$tmp/err2" "$tmp/err"
		fail "meminst.7 message for MEMINST=$1"
	fi
}

if [ -x "$example" ]; then
	refused 'mis,print=total+bogus' \
		"meminst: bad MEMINST item 'print=total+bogus': expected kinds joined by '+': total, allocators, classes, types, threads"
	refused 'mis,print=class' \
		"meminst: bad MEMINST item 'print=class': expected kinds joined by '+': total, allocators, classes, types, threads"
	refused 'mis,,print=total' "meminst: bad MEMINST value 'mis,,print=total': empty item"
	refused 'mis,sample=0' "meminst: bad MEMINST item 'sample=0': expected a rate in Hz from 1 to 10000"
	refused 'snapshot=app.db' \
		"meminst: MEMINST items snapshot, snapshot_at and interval need mode mis or mim, or control=on (dormant: switched on by inspect start)"
fi

# ---- 4. the snapshot file messages meminst(7) quotes -----------------------
# untouched FILE MESSAGE: the example, run with MEMINST=mis,snapshot=FILE,
# leaves FILE byte for byte and writes "meminst: snapshot FILE: MESSAGE".
# The page shows each message with "path" (and "n") in italics.
untouched() {
	cp "$1" "$tmp/orig"
	MEMINST="mis,snapshot=$1" "$example" >"$tmp/out" 2>"$tmp/err"
	status=$?
	want="meminst: snapshot $1: $2"
	shown=$(printf '%s' "meminst: snapshot \\fIpath\\fP: $2" | sed 's/ 99,/ \\fIn\\fP,/')
	if [ $status -eq 0 ] && cmp -s "$1" "$tmp/orig" && [ "$(cat "$tmp/err")" = "$want" ] &&
		grep -qxF -- "$shown" "$top_srcdir/doc/meminst.7"; then
		ok "meminst.7 message: $2"
	else
		{ echo "exit status $status; stderr:"; cat "$tmp/err"; echo "wanted: $want";
		  echo "and the page to show: $shown"; } >"$tmp/err2"
		mv "$tmp/err2" "$tmp/err"
		fail "meminst.7 message: $2"
	fi
}

if [ -x "$example" ] && command -v sqlite3 >/dev/null 2>&1; then
	printf 'text\n' >"$tmp/text.db"
	untouched "$tmp/text.db" "not an SQLite database; left untouched"
	sqlite3 "$tmp/other.db" "CREATE TABLE t(x); PRAGMA application_id = 7;"
	untouched "$tmp/other.db" "not a meminst snapshot database; left untouched"
	MEMINST="mis,snapshot=$tmp/v99.db" "$example" >/dev/null 2>&1
	sqlite3 "$tmp/v99.db" "PRAGMA user_version = 99"
	writes=$(sed -n 's/^#define MEMINST_SNAPSHOT_VERSION \([0-9]*\).*/\1/p' "$top_srcdir/include/meminst-snapshot.h")
	untouched "$tmp/v99.db" "schema version 99, this libmeminst writes $writes; left untouched"
else
	echo "skip  meminst.7 snapshot messages: no example or no sqlite3"
fi

echo "man-check: $checks checks, $fails failed"
[ $fails -ne 0 ] && exit 1
[ $checks -eq 0 ] && exit 77
exit 0
